"""The levels of ``okgin play --bot``: each loads by name, plays legal whole games, is
what its docstring says it is, and the help lists them weakest first with their figures."""

from __future__ import annotations

import pytest

from clients.bots import BUILTIN_BOTS, LEVELS, get_bot
from clients.bots.eaai_simple import EaaiSimpleBot
from clients.bots.simple import SimpleBot
from clients.bots.strong import CURRENT, V1, StrongBot
from clients.local import play_local
from okgin import Game, RuleSet


def test_every_level_is_a_builtin_and_plays_legally() -> None:
    names = [name for name, _, _ in LEVELS]
    assert names == ["beginner", "casual", "club", "expert", "master"]
    for i, name in enumerate(names):
        assert name in BUILTIN_BOTS
        bot = get_bot(name, seed=i)
        assert bot.name == name
        # play_local raises on an illegal move; a short game against simple, both seats
        g = play_local([bot, SimpleBot()] if i % 2 else [SimpleBot(), bot], RuleSet(target_score=10), f"levels/{i}")
        assert g.is_over and g.termination == "normal"


def test_levels_are_the_bots_they_claim() -> None:
    assert isinstance(get_bot("beginner"), EaaiSimpleBot)
    assert isinstance(get_bot("casual"), SimpleBot)
    club, expert, master = (get_bot(n, seed=1) for n in ("club", "expert", "master"))
    assert isinstance(club, StrongBot) and not (club.params.mc_knock or club.params.inference or club.params.danger_weight)
    assert club.params.lookahead and club.params.value_draws
    assert isinstance(expert, StrongBot) and expert.params == V1
    assert isinstance(master, StrongBot) and master.params == CURRENT


@pytest.mark.parametrize("name", ["club", "expert", "master"])
def test_no_level_throws_away_a_gin_or_a_meld(name: str) -> None:
    """No deliberate blunders in the most obvious spot: from positions of real games, a
    level holding gin after its draw always goes gin."""
    from okgin.melds import deadwood_mask

    checked = 0
    for seed in range(3):
        g = Game(RuleSet(), f"blunder/{seed}")
        bots = [get_bot(name, seed=s) for s in range(2)]
        while not g.is_over and not g.results:
            seat = g.current_player
            assert seat is not None
            view, legal = g.view(seat), g.legal_actions()
            a = bots[seat].choose(view, legal)
            if view.phase == "discard" and a.card is not None:
                hand = sum(1 << c for c in view.hand or ())
                best = min(deadwood_mask(hand & ~(1 << x.card)) for x in legal if x.card is not None)
                if best == 0:
                    assert a.kind in ("knock", "big_gin") and deadwood_mask(hand & ~(1 << a.card)) == 0, "threw away gin"
                checked += 1
            g.apply(a, seat=seat)
    assert checked > 10


def test_play_help_lists_the_levels(capsys: pytest.CaptureFixture[str]) -> None:
    from clients.tui.play_cli import build_parser

    text = build_parser().format_help()
    for name, what, elo in LEVELS:
        assert name in text and what in text and elo in text
    assert text.index("beginner") < text.index("casual") < text.index("club") < text.index("expert") < text.index("master")
