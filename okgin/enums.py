"""The engine's named states as ``StrEnum``s: hand phases and game terminations.

Why ``StrEnum``: each member *is* its wire string (``Phase.OFFER == "offer"``, the same
hash, ``str()``/f-strings/JSON/msgpack give the plain value), so the wire, the records
and every caller comparing with a literal stay exactly as they were, while code gets a
closed, typo-proof set of names (and mypy sees the choices).

>>> Phase.OFFER == "offer", f"{Termination.TIMEOUT}", Phase("draw") is Phase.DRAW
(True, 'timeout', True)
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["Phase", "Termination", "termination"]


class Phase(StrEnum):
    """A hand's phase (docs/rules.md §3.2-3.4), and ``game_over`` in views."""

    OFFER = "offer"
    """The upcard is on offer (§3.2): take or pass."""
    DRAW = "draw"
    """A turn's draw (§3.3): the stock or the discard pile."""
    DISCARD = "discard"
    """After drawing: discard, knock or big gin (§3.3, §3.4)."""
    OVER = "over"
    """The hand has ended (the engine's hand only; a game deals the next at once)."""
    GAME_OVER = "game_over"
    """A view's phase once the game has ended."""


class Termination(StrEnum):
    """How a game ended (``Game.termination``, the wire's ``game_end``)."""

    NORMAL = "normal"
    """A player reached the target score."""
    TIMEOUT = "timeout"
    ILLEGAL = "illegal"
    DISCONNECT = "disconnect"
    ABANDONED = "abandoned"
    """No winner: the table closed or the referee stopped."""
    RESIGNED = "resigned"
    HAND_LIMIT = "hand_limit"
    """The rule ``max_hands`` ended the game (docs/rules.md §3.7.1): the higher score
    wins; equal top scores, no winner. Nobody is at fault."""


def termination(reason: str) -> Termination | str:
    """``reason`` as a :class:`Termination` when it is one (old journals may hold others)."""
    try:
        return Termination(reason)
    except ValueError:
        return reason
