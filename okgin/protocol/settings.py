"""A table's time control and policies (protocol.md §7, §8): the one type for each.

The referee lays a request's partial map over its defaults (:meth:`Clock.merge`,
:meth:`Policies.merge`) and the tournament builds them from its TOML file; both use
these types, so a setting means the same everywhere and is checked the same way. They
live in ``okgin.protocol`` because they are part of the protocol (``create_table``'s
``clock`` and ``policies``) and the tournament package may import ``okgin`` only.

Why frozen dataclasses with ``merge``: every value a client sends must be checked before
any table exists (bad input changes nothing, protocol.md §3).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, fields, replace
from typing import Any, TypeVar

from .errors import ProtocolError

__all__ = [
    "AWAY_CLOCKS", "ILLEGAL_POLICIES", "MAX_ADVICE_WINDOW_MS", "MAX_MS", "PEOPLE_CLOCK", "PEOPLE_POLICIES",
    "TIMEOUT_POLICIES", "Clock", "Policies",
]

S = TypeVar("S", "Clock", "Policies")
MAX_MS = 7 * 24 * 3600 * 1000  # a week: any larger time setting is a mistake


def _ms(name: str, v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= MAX_MS:
        raise ProtocolError("bad_message", f"{name} must be a whole number of milliseconds from 0 to {MAX_MS}, got {v!r}")
    return v


def _merged(settings: S, partial: dict[str, Any] | None, what: str, check: Callable[[str, Any], Any]) -> S:
    """``settings`` with ``partial`` laid over it: unknown keys refused, each value checked."""
    if not partial:
        return settings
    known = {f.name for f in fields(settings)}
    bad = sorted(set(partial) - known)
    if bad:
        raise ProtocolError(
            "bad_message", f"unknown {what} setting(s) {', '.join(map(str, bad))}; known: {', '.join(sorted(known))}"
        )
    return replace(settings, **{k: check(k, v) for k, v in partial.items()})


@dataclass(frozen=True)
class Clock:
    """A table's time control (protocol.md §7). ``move_ms``/``bank_ms`` 0 = off."""

    move_ms: int = 0
    bank_ms: int = 0
    increment_ms: int = 0
    grace_ms: int = 1000

    @property
    def limited(self) -> bool:
        return self.move_ms > 0 or self.bank_ms > 0

    def to_wire(self) -> dict[str, int]:
        return asdict(self)

    def merge(self, partial: dict[str, Any] | None) -> Clock:
        """These settings with a client's partial map laid over them (validated)."""
        return _merged(self, partial, "clock", lambda k, v: _ms(f"clock.{k}", v))


TIMEOUT_POLICIES = ("forfeit", "default_move")
ILLEGAL_POLICIES = ("forfeit", "reprompt")
#: What the clock of a disconnected seat to act does (protocol.md §8, 1.6): ``run`` on
#: (a competition's choice: a bot's connection is its own business), or ``pause`` until
#: it is back (people's tables: a lost connection must not cost the game on time).
AWAY_CLOCKS = ("run", "pause")
#: The longest advice window a table may have (protocol.md §8, 1.6): two minutes.
MAX_ADVICE_WINDOW_MS = 120_000


@dataclass(frozen=True)
class Policies:
    """What happens on a timeout, an illegal move, a lost connection (protocol.md §8)."""

    timeout: str = "forfeit"
    illegal: str = "reprompt"
    illegal_limit: int = 3
    disconnect_grace_ms: int = 30000
    away_clock: str = "run"  # 1.6
    advice_window_ms: int = 0  # 1.6: Gin in the Box, how long a captain's prompt waits for a person's advice

    def __post_init__(self) -> None:
        if self.timeout not in TIMEOUT_POLICIES:
            raise ProtocolError("bad_message", f"policies.timeout must be 'forfeit' or 'default_move', got {self.timeout!r}")
        if self.illegal not in ILLEGAL_POLICIES:
            raise ProtocolError("bad_message", f"policies.illegal must be 'reprompt' or 'forfeit', got {self.illegal!r}")
        if isinstance(self.illegal_limit, bool) or not isinstance(self.illegal_limit, int) or not 1 <= self.illegal_limit <= 1000:
            raise ProtocolError(
                "bad_message", f"policies.illegal_limit must be a whole number from 1 to 1000, got {self.illegal_limit!r}"
            )
        _ms("policies.disconnect_grace_ms", self.disconnect_grace_ms)
        if self.away_clock not in AWAY_CLOCKS:
            raise ProtocolError("bad_message", f"policies.away_clock must be 'run' or 'pause', got {self.away_clock!r}")
        w = self.advice_window_ms
        if isinstance(w, bool) or not isinstance(w, int) or not 0 <= w <= MAX_ADVICE_WINDOW_MS:
            raise ProtocolError(
                "bad_message", f"policies.advice_window_ms must be a whole number from 0 to {MAX_ADVICE_WINDOW_MS}, got {w!r}"
            )

    def to_wire(self) -> dict[str, Any]:
        """The wire map; ``away_clock`` only when it is ``pause`` (1.6: absent means ``run``,
        so a table of 1.5's behaviour is described as a 1.5 referee described it)."""
        d = asdict(self)
        if self.away_clock == "run":
            del d["away_clock"]
        if not self.advice_window_ms:  # 1.6: sent only when on
            del d["advice_window_ms"]
        return d

    def merge(self, partial: dict[str, Any] | None) -> Policies:
        """These policies with a client's partial map laid over them (checked by ``__post_init__``)."""
        return _merged(self, partial, "policy", lambda k, v: v)


#: The time control of a table a person creates to play people (``okgin tui`` sends it
#: with the ``join`` that creates a table; protocol.md §5.8, docs/rules.md §7.1): no limit
#: per move, a bank of 10 minutes a game and 5 s more after each move. Why a bank and not
#: today's 60 s a move: a person may think long over one hard discard and fast over the
#: rest, and should lose on time only after being slow all game, warned as the bank runs low.
PEOPLE_CLOCK = Clock(move_ms=0, bank_ms=600_000, increment_ms=5_000, grace_ms=1000)
#: The policies that go with it: a seat whose connection drops has its clock stopped while
#: it is away (the grace, 30 s, is then all that can end its game).
PEOPLE_POLICIES = Policies(away_clock="pause")
