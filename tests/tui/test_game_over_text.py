"""The game-over dialog's sentences for a game the game limit ended (docs/rules.md §3.7.1):
a draw at equal scores is said to be one, and a win at the limit says why it ended."""

from __future__ import annotations

from clients.tui.model import TableState
from clients.tui.screens.game_over import TERMINATION_TEXT, headline


def test_a_draw_at_the_game_limit_is_called_a_draw() -> None:
    st = TableState(names=("a", "b"), final={"scores": [0, 0], "winner": None, "termination": "hand_limit"})
    assert "draw" in headline(st)
    assert headline(TableState(final={"scores": [0, 0], "winner": None, "termination": "abandoned"})) == \
        "The game ended with no winner."


def test_a_win_at_the_game_limit_names_the_winner_and_the_limit() -> None:
    st = TableState(names=("a", "b"), final={"scores": [12, 30], "winner": 1, "termination": "hand_limit"})
    assert headline(st) == "b wins 30 to 12!"
    assert "max_hands" in TERMINATION_TEXT["hand_limit"]
