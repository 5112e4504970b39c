"""Per-state caches of the wire forms the referee sends: views and legal actions.

Why: after one move the same state is shown to several recipients (the next seat's
``event`` and ``prompt`` carry the same view; public spectators share one). Building a
view is the referee's main cost per decision, so each (state, seat) is built once.
:meth:`touch` drops the cache whenever the state changes (a move, advice, game end).
"""

from __future__ import annotations

from typing import Any

from okgin import Game


class ViewCache:
    """Wire views (``View.to_wire()``) and legal actions of one game, per state."""

    __slots__ = ("_legal", "_w", "game")

    def __init__(self) -> None:
        self.game: Game | None = None
        self._w: dict[int | None, dict[str, Any]] = {}
        self._legal: list[dict[str, Any]] | None = None

    def reset(self, game: Game) -> None:
        self.game = game
        self.touch()

    def touch(self) -> None:
        self._w = {}
        self._legal = None

    def wire(self, seat: int | None) -> dict[str, Any]:
        w = self._w.get(seat)
        if w is None:
            assert self.game is not None
            w = self._w[seat] = self.game.view(seat).to_wire()
        return w

    def legal(self) -> list[dict[str, Any]]:
        if self._legal is None:
            assert self.game is not None
            self._legal = [a.to_wire() for a in self.game.legal_actions()]
        return self._legal
