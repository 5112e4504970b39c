"""clients.bots.ismcts: OpenSpiel's ISMCTS as an okgin bot (issue 29 item 2).

The bot is given a View, not OpenSpiel's history, and rebuilds a state its seat cannot
tell from the real one (state_from_view). Checked at every decision of 12 hands of random
play: the rebuilt state's information state string (what ISMCTS keys its tree on) and
legal actions equal the real state's. Then the bot's own decisions are legal."""

from __future__ import annotations

import random

import pytest

pyspiel = pytest.importorskip("pyspiel")

import okgin.openspiel  # noqa: E402  (registers the games)
from clients.bots.ismcts import IsmctsBot, state_from_view  # noqa: E402
from okgin import RuleSet  # noqa: E402


def test_a_state_rebuilt_from_a_view_is_the_same_information_state() -> None:
    game = pyspiel.load_game("oklahoma_gin", {"returns": "hand"})
    rng = random.Random(3)
    checked = 0
    for _ in range(12):
        s = game.new_initial_state()
        while not s.is_terminal():
            if s.is_chance_node():
                outs = s.chance_outcomes()
                s.apply_action(outs[rng.randrange(len(outs))][0])
                continue
            p = s.current_player()
            rebuilt = state_from_view(game, s.okgin_game.view(p), rng)
            assert rebuilt.information_state_string(p) == s.information_state_string(p)
            assert rebuilt.legal_actions() == s.legal_actions()
            checked += 1
            s.apply_action(rng.choice(s.legal_actions()))
    assert checked > 500


def test_the_bot_chooses_legal_moves_by_search() -> None:
    bot = IsmctsBot(seed=1)
    bot.simulations = 5
    bot.on_game_start(0, RuleSet(), 2)
    game = pyspiel.load_game("oklahoma_gin", {"returns": "hand"})
    rng = random.Random(7)
    s = game.new_initial_state()
    moves = 0
    while not s.is_terminal() and moves < 30:
        if s.is_chance_node():
            outs = s.chance_outcomes()
            s.apply_action(outs[rng.randrange(len(outs))][0])
            continue
        g = s.okgin_game
        legal = g.legal_actions()
        a = bot.choose(g.view(g.current_player), legal) if g.current_player == 0 else rng.choice(legal)
        assert a in legal
        s.apply_action(okgin.openspiel.action_id(a))
        moves += 1
    with pytest.raises(ValueError, match="Oklahoma Gin only"):
        bot.on_game_start(0, RuleSet(variant="box"), 3)
