"""The referee's clock, and the time the referee itself could not serve (protocol.md §7).

Issue 28: a player sat behind "Connection lost" for 28 s while the referee was
unreachable, came back with 4 s left and lost on time. Time a seat could not use
because the *referee* was not running must be charged to nobody. What the referee can
measure of its own outage:

- a **restart** (crash recovery, :mod:`referee.recovery`): the move in progress starts
  again when its seat is back;
- a **stall**: the process was stopped (SIGSTOP, a suspended machine or container), or
  its event loop did not run (overload, a long pause): nothing read the clock for far
  longer than the lifecycle tick allows. That is this module.

:class:`StallMeter` is the referee's ``now``. Every part reads the time through it, and
the tick reads it at least every ``expected_s``; so when two readings in a row lie more
than :attr:`StallMeter.limit` apart, the loop did not run in between. The first reading
after such a gap, whoever makes it (the transport about to read a late ``act``, a move
timer firing late, the tick), calls ``on_stall(lost_s)`` *before it returns the time*:
the referee moves every running move's clock, every grace timer and every session's
liveness on by ``lost_s`` (:meth:`referee.server.Referee.credit_stall`), so that no
decision is ever taken on a clock that ran while the referee was away. Crediting only
moves timestamps on; it sends nothing, so it is safe wherever the time is read.

Why not a clock that simply leaves stalls out: the loop's timers (``call_at``) run on
the real monotonic clock, and every deadline would need converting; moving the few
timestamps that decide a game, once per stall, is simpler and costs nothing between
stalls (one subtraction and one comparison per reading).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

__all__ = ["STALL_MIN_S", "StallMeter"]

log = logging.getLogger("okgin.referee")

#: No gap shorter than this is taken for a stall, however fast the tick.
STALL_MIN_S = 2.0


class StallMeter:
    """``now()`` for the referee, which notices when the loop did not run (see the module
    docstring). ``expected_s``: the longest gap between two readings while the loop runs
    (the lifecycle tick's period)."""

    __slots__ = ("clock", "count", "expected", "last", "limit", "on_stall", "total")

    def __init__(
        self, expected_s: float, on_stall: Callable[[float], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.clock = clock
        self.expected = expected_s
        #: a gap longer than this between two readings is a stall
        self.limit = max(STALL_MIN_S, 3 * expected_s)
        self.on_stall = on_stall
        self.last = clock()
        #: stalls seen, and the seconds credited for them (operators: the log says each)
        self.count = 0
        self.total = 0.0

    def now(self) -> float:
        t = self.clock()
        gap = t - self.last
        self.last = t
        if gap > self.limit:
            # The tick was due ``expected`` after the last reading: what lies beyond is lost.
            lost = gap - self.expected
            self.count += 1
            self.total += lost
            log.warning("the referee did not run for %.1f s (stopped or overloaded): every running clock "
                        "and grace is moved on by %.1f s, charged to nobody", gap, lost)
            if self.on_stall is not None:
                self.on_stall(lost)
        return t

    def restart(self) -> None:
        """Readings start again now (the referee starts serving: the time it took to get
        here is not a stall of a running loop)."""
        self.last = self.clock()
