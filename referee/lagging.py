"""Bounded feeds: a watcher that does not read is cut off, not queued for (protocol.md §11).

The referee never blocks on a peer and never queues without bound: ZeroMQ holds at most
``hwm`` messages per connection and the referee drops what does not fit (protocol.md
§10). That bounds memory, but a watcher that stopped reading (a frozen viewer, a buggy
bot watching 64 tables) would still cost a failed send for every feed message, forever.

So: when ``limit`` messages in a row could not be delivered to a session, its watches
are dropped: the referee stops feeding it. Its seats are untouched (a player that does
not read its prompts meets its own clock). The next time the session sends anything,
it is told with one ``lagging`` error naming the tables, and may ``watch`` them again
(a fresh snapshot, then the feed).

"In a row" is judged without any work on the hot path: a drop continues the streak only
if nothing was delivered to the session since the previous drop (``Session.last_sent``,
which the referee updates on every delivery, is older than that drop).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from okgin.protocol import ProtocolError, encode

from .sessions import Session

if TYPE_CHECKING:
    from .sending import Connections


class LagGuard:
    """Drop streaks per session and the watchers cut off. See the module docstring."""

    __slots__ = ("evicted", "lagging", "limit", "streaks", "unwatch_all", "wire")

    def __init__(self, wire: Connections, unwatch_all: Callable[[Session], None], limit: int) -> None:
        self.wire = wire  # a clock and a raw send (referee.sending.Sender)
        #: the lobby's: stop feeding a session at every table it watches
        self.unwatch_all = unwatch_all
        self.limit = limit
        self.streaks: dict[Session, list[float]] = {}  # session -> [drops in a row, time of the last]
        self.lagging: dict[Session, tuple[int, list[str]]] = {}  # cut off, not yet told
        self.evicted = 0

    def on_drop(self, sess: Session) -> None:
        """A message to ``sess`` could not be queued (its queue is full)."""
        now = self.wire.now()
        st = self.streaks.get(sess)
        if st is None or sess.last_sent > st[1]:
            if len(self.streaks) > 10000:
                self._sweep(now)
            st = self.streaks[sess] = [0.0, now]
        st[0] += 1
        st[1] = now
        if st[0] >= self.limit and sess.watches:
            del self.streaks[sess]
            names = sorted(sess.watches)
            self.unwatch_all(sess)
            prev = self.lagging.get(sess)
            self.lagging[sess] = (int(st[0]), sorted({*names, *(prev[1] if prev else [])}))
            self.evicted += 1

    def on_message(self, sess: Session) -> None:
        """``sess`` sent something: if it was cut off, tell it (once the message fits)."""
        info = self.lagging.pop(sess, None)
        if info is None or sess.rid is None:
            return
        drops, names = info
        err = ProtocolError(
            "lagging",
            f"{drops} messages in a row could not be delivered to you (you do not read fast enough), "
            f"so you no longer watch {', '.join(names)}; watch again for a fresh snapshot",
        )
        if not self.wire.raw_send(sess.rid, encode(err.to_wire())):
            self.lagging[sess] = info  # still full: tell it next time

    def _sweep(self, now: float) -> None:
        for s, st in list(self.streaks.items()):
            if now - st[1] > 60 or s.rid is None:
                del self.streaks[s]
