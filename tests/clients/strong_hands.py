"""Playing one hand of bots in-process, for the strong bot's tests.

Why a module: several tests play a first hand move by move (to compare two settings'
moves, to score a hand, or to stop at a position worth asking about), and each had its
own copy of the loop. This is that loop once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from clients.bot import Bot
from okgin import Game, HandResult, RuleSet


def play_first_hand(
    bots: Sequence[Bot], rules: RuleSet, seed: str, stop: Callable[[Game, int], bool] | None = None
) -> tuple[Game, list[str], HandResult | None]:
    """Seat ``bots`` at the game of ``seed`` and play its first hand.

    Returns the game, the moves made (``"seat:action"``) and the hand's result; when
    ``stop(game, moves made so far)`` says so before a move, the game is returned there,
    with no result."""
    g = Game(rules, seed)
    for s, b in enumerate(bots):
        b.on_game_start(s, rules, g.num_seats)
    moves: list[str] = []
    while True:
        seat = g.current_player
        assert seat is not None
        if stop is not None and stop(g, len(moves)):
            return g, moves, None
        a = bots[seat].choose(g.view(seat), g.legal_actions())
        moves.append(f"{seat}:{a}")
        r = g.apply(a, seat=seat)
        if r is not None:
            return g, moves, r
