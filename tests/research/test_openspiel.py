"""okgin.openspiel: OpenSpiel's own API checks, resampling, and ISMCTS playing through it.

Sizes are small on purpose (a few random games, ISMCTS with a handful of simulations):
the point is that OpenSpiel's machinery runs the games correctly, not how well it plays
(bench/ismcts.py measures that).
"""

from __future__ import annotations

import random

import pytest

pyspiel = pytest.importorskip("pyspiel")
np = pytest.importorskip("numpy")

import okgin.openspiel as osp  # noqa: E402  (registers the games)
from okgin import Action, Game, RuleSet  # noqa: E402

NAMES = ["oklahoma_gin", "gin_in_the_box"]


def _chance(state, rng: random.Random) -> None:
    outcomes, probs = zip(*state.chance_outcomes(), strict=True)
    assert abs(sum(probs) - 1.0) < 1e-9
    state.apply_action(rng.choice(outcomes))


def _random_to(state, rng: random.Random, stop=lambda s: False):
    while not state.is_terminal() and not stop(state):
        if state.is_chance_node():
            _chance(state, rng)
        else:
            state.apply_action(rng.choice(state.legal_actions()))
    return state


def test_registered() -> None:
    names = pyspiel.registered_names()
    assert "oklahoma_gin" in names and "gin_in_the_box" in names
    assert pyspiel.load_game("oklahoma_gin").num_players() == 2
    assert pyspiel.load_game("gin_in_the_box").num_players() == 3


@pytest.mark.parametrize("name", NAMES)
def test_random_sim_test_hand(name: str) -> None:
    """OpenSpiel's own consistency checks (legal actions, chance, clone, strings,
    tensors, returns) over random hands."""
    game = pyspiel.load_game(name)
    pyspiel.random_sim_test(game, num_sims=4, serialize=True, verbose=False)


def test_seeded_deal_is_okgins() -> None:
    """Parameter seed: one outcome per chance node, the deal of okgin.Game(rules, seed),
    so the same actions give the same game as the engine's, card for card."""
    for name, variant in (("oklahoma_gin", "oklahoma"), ("gin_in_the_box", "box")):
        game = pyspiel.load_game(name, {"seed": 12, "returns": "game", "rules": "target_score=20"})
        ref = Game(RuleSet(variant=variant, target_score=20), seed=12)
        rng = random.Random(1)
        state = game.new_initial_state()
        while not state.is_terminal() and len(ref.results) < 3:
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                assert len(outcomes) == 1 and outcomes[0][1] == 1.0
                state.apply_action(outcomes[0][0])
                continue
            g = state.okgin_game
            assert g.hand.hands == ref.hand.hands and g.hand.stock == ref.hand.stock and g.roles == ref.roles
            assert g.view(0) == ref.view(0)
            legal = state.legal_actions()
            assert legal == [osp.action_id(a) for a in ref.legal_actions()]
            knocks = [a for a in legal if a >= osp.KNOCK_BASE]
            a = knocks[0] if knocks else rng.choice(legal)
            state.apply_action(a)
            ref.apply(osp.id_action(a))
        assert ref.results
    pyspiel.random_sim_test(pyspiel.load_game("oklahoma_gin", {"seed": 3}), num_sims=2, serialize=True, verbose=False)


def test_random_sim_test_whole_game() -> None:
    """The same checks when a game is several hands to target_score (short target)."""
    game = pyspiel.load_game("oklahoma_gin", {"returns": "game", "rules": "target_score=5,knock_limit=10", "max_hands": 8})
    pyspiel.random_sim_test(game, num_sims=1, serialize=True, verbose=False)


@pytest.mark.parametrize("name", NAMES)
def test_returns_are_the_engines_score(name: str) -> None:
    """A hand's returns are the engine's points: winner +points, loser -points."""
    game = pyspiel.load_game(name, {"rules": "knock_limit=10"})
    rng = random.Random(3)
    seen_scored = False
    for _ in range(20):
        state = game.new_initial_state()
        # prefer knocking, so that hands are scored and not drawn
        while not state.is_terminal():
            if state.is_chance_node():
                _chance(state, rng)
                continue
            legal = state.legal_actions()
            knocks = [a for a in legal if a >= osp.KNOCK_BASE]
            assert legal == sorted(legal)
            state.apply_action(knocks[0] if knocks else rng.choice(legal))
        g = state.okgin_game
        r = g.results[-1]
        rets = state.returns()
        assert sum(rets) == 0
        if r.winner is None:
            assert rets == [0.0] * game.num_players()
        else:
            seen_scored = True
            assert rets[r.winner] == r.points
            assert sorted(rets)[0] == -r.points
    assert seen_scored


def test_whole_game_returns() -> None:
    game = pyspiel.load_game("gin_in_the_box", {"returns": "game", "rules": "target_score=1"})
    rng = random.Random(5)
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            _chance(state, rng)
            continue
        legal = state.legal_actions()
        knocks = [a for a in legal if a >= osp.KNOCK_BASE]
        state.apply_action(knocks[0] if knocks else rng.choice(legal))
    g = state.okgin_game
    rets = state.returns()
    if g.is_over:
        assert rets[g.winner] == 1.0 and sorted(rets)[:2] == [-0.5, -0.5]
    else:  # truncated at max_hands
        assert rets == [0.0, 0.0, 0.0]


def test_action_ids_round_trip() -> None:
    for i in range(osp.NUM_ACTIONS):
        assert osp.action_id(osp.id_action(i)) == i
    assert osp.action_id(Action.discard(5)) == osp.DISCARD_BASE + 5
    assert osp.action_id(Action.knock(51)) == osp.KNOCK_BASE + 51


@pytest.mark.parametrize("name", NAMES)
def test_state_follows_the_engine(name: str) -> None:
    """Replaying the OpenSpiel player actions on okgin's engine, with the chance nodes'
    deal, gives the same legal actions at every step."""
    game = pyspiel.load_game(name)
    rng = random.Random(11)
    state = game.new_initial_state()
    while state.is_chance_node():  # the start and the deal
        _chance(state, rng)
    g: Game = state.okgin_game
    assert sum(bin(m).count("1") for m in g.hand.hands) == 20
    for _ in range(40):
        if state.is_terminal():
            break
        if state.is_chance_node():
            _chance(state, rng)
            continue
        legal = state.legal_actions()
        assert legal == [osp.action_id(a) for a in state.okgin_game.legal_actions()]
        state.apply_action(rng.choice(legal))


@pytest.mark.parametrize("name", NAMES)
def test_resample_keeps_the_information_state(name: str) -> None:
    """resample_from_infostate: same information state and observation for the player,
    the opponent's unseen cards redealt (sometimes differently), a legal history."""
    game = pyspiel.load_game(name)
    rng = random.Random(7)
    changed = 0
    for _ in range(6):
        state = game.new_initial_state()
        steps = rng.randrange(25, 60)
        _random_to(state, rng, stop=lambda s, n=steps: len(s.history()) >= n and not s.is_chance_node())
        if state.is_terminal():
            continue
        p = state.current_player()
        for _ in range(3):
            r = state.resample_from_infostate(p, pyspiel.UniformProbabilitySampler(0.0, 1.0))
            assert r.information_state_string(p) == state.information_state_string(p)
            assert r.observation_string(p) == state.observation_string(p)
            assert np.array_equal(r.information_state_tensor(p), state.information_state_tensor(p))
            assert r.legal_actions() == state.legal_actions()
            g, h = state.okgin_game.hand, r.okgin_game.hand
            assert sorted(g.stock + [c for m in g.hands for c in _cards(m)]) == sorted(
                h.stock + [c for m in h.hands for c in _cards(m)]
            )
            changed += g.hands != h.hands
            # the resampled world plays on
            _random_to(r.clone(), rng)
    assert changed > 0


def _cards(mask: int) -> list[int]:
    return [c for c in range(52) if mask >> c & 1]


def test_observation_hides_the_opponent() -> None:
    """The observation tensor of a seat shows its hand and no card of the other's
    that it did not see go through the discard pile."""
    game = pyspiel.load_game("oklahoma_gin")
    rng = random.Random(2)
    state = _random_to(game.new_initial_state(), rng, stop=lambda s: len(s.history()) > 40 and not s.is_chance_node())
    obs = osp.OkginObserver(game, pyspiel.IIGObservationType(perfect_recall=False), None)
    g = state.okgin_game
    for p in (0, 1):
        obs.set_from(state, p)
        mine = set(np.flatnonzero(obs.dict["hand"]))
        assert mine == set(_cards(g.hand.hands[p]))


def test_clone_is_independent() -> None:
    game = pyspiel.load_game("oklahoma_gin")
    rng = random.Random(4)
    state = _random_to(game.new_initial_state(), rng, stop=lambda s: len(s.history()) > 30)
    before = str(state)
    c = state.clone()
    _random_to(c, rng)
    assert str(state) == before
    assert c.history()[: len(state.history())] == state.history()


def test_rules_parameter() -> None:
    game = pyspiel.load_game("oklahoma_gin", {"rules": "knock_limit=10,undercut_bonus=25"})
    assert game.rules == RuleSet.standard_gin()
    assert pyspiel.load_game("oklahoma_gin", {"rules": "knock_limit:10;undercut_bonus:25"}).rules == game.rules
    with pytest.raises(Exception, match="variant"):
        pyspiel.load_game("oklahoma_gin", {"rules": "variant=box"})


CUSTOM_RULES = [
    ("oklahoma_gin", "knock_limit=10,undercut_bonus=25"),
    ("oklahoma_gin", "spade_upcard_doubles=false,big_gin=true,target_score=50,max_hands=9"),
    ("oklahoma_gin", "knock_limit=upcard,ace_upcard_gin_only=true"),
    ("gin_in_the_box", "knock_limit=7,target_score=30"),
]


@pytest.mark.parametrize(("name", "rules"), CUSTOM_RULES)
def test_custom_rules_survive_the_game_string(name: str, rules: str) -> None:
    """With custom rules, the game string loads back as the same game, and serialization
    and pickling keep it: OpenSpiel splits a game string at ``,`` and ``=``, so a raw
    ``rules=knock_limit=10,...`` came back as a parameter named ``rules=knock_limit``."""
    game = pyspiel.load_game(name, {"rules": rules, "returns": "game"})
    assert "=" not in game.get_parameters()["rules"] and "," not in game.get_parameters()["rules"]
    again = pyspiel.load_game(str(game))
    assert again.rules == game.rules and str(again) == str(game)
    state = _random_to(game.new_initial_state(), random.Random(5), stop=lambda s: len(s.history()) > 60)
    g2, s2 = pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(game, state))
    assert g2.rules == game.rules and str(s2) == str(state) and s2.legal_actions() == state.legal_actions()
    pyspiel.random_sim_test(game, num_sims=1, serialize=True, verbose=False)


@pytest.mark.parametrize(("name", "rules"), [*CUSTOM_RULES[1:3], ("gin_in_the_box", "")])
def test_a_pickled_game_and_state_work_in_another_process(name: str, rules: str) -> None:
    """A game and a state pickled here play on in a fresh interpreter, as a multiprocessing
    worker gets them. pybind11's own pickling left the game without its ``rules``."""
    import pickle
    import subprocess
    import sys

    game = pyspiel.load_game(name, {"rules": rules})
    state = _random_to(game.new_initial_state(), random.Random(8), stop=lambda s: len(s.history()) > 70)
    worker = (
        "import pickle, sys\n"
        "import okgin.openspiel\n"
        "game, state = pickle.loads(sys.stdin.buffer.read())\n"
        "fresh = game.new_initial_state()\n"
        "print(repr((str(game), str(state), state.legal_actions(), game.rules.to_dict(), len(str(fresh)) > 0)))\n"
    )
    out = subprocess.run([sys.executable, "-c", worker], input=pickle.dumps((game, state)),
                         capture_output=True, timeout=120, check=True)
    assert out.stdout.decode().strip() == repr((str(game), str(state), state.legal_actions(), game.rules.to_dict(), True))


def _simple_id(state) -> int:
    from clients.bots.simple import simple_choice

    g = state.okgin_game
    return osp.action_id(simple_choice(g.view(state.current_player()), g.legal_actions()))


@pytest.mark.parametrize(
    ("name", "params", "sims"),
    [
        ("oklahoma_gin", {}, 8),
        ("gin_in_the_box", {}, 8),
        # a whole game of several hands (rollouts then run to the end of the game)
        ("oklahoma_gin", {"returns": "game", "rules": "target_score=10,knock_limit=10", "max_hands": 3}, 3),
    ],
)
def test_ismcts_plays_complete_games(name: str, params: dict, sims: int) -> None:
    """OpenSpiel's ISMCTS bot (a few simulations, random rollouts) plays complete games
    through the registered game: search, resampling and clone all work. It plays the
    box's seat in Gin in the Box (seat 0 in Oklahoma Gin); ``simple`` plays the other,
    so that hands end as quickly as real ones."""
    from open_spiel.python.algorithms import ismcts, mcts

    game = pyspiel.load_game(name, params)
    rs = np.random.RandomState(0)
    bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, rs), uct_c=10.0, max_simulations=sims, random_state=rs)
    rng = random.Random(0)
    state = game.new_initial_state()
    searched = 0
    while not state.is_terminal():
        if state.is_chance_node():
            _chance(state, rng)
            continue
        g = state.okgin_game
        ismcts_seat = g.roles[0] if g.roles is not None else 0
        if state.current_player() == ismcts_seat:
            state.apply_action(bot.step(state))
            searched += 1
        else:
            state.apply_action(_simple_id(state))
    assert searched > 0
    assert sum(state.returns()) == pytest.approx(0.0)
    assert state.okgin_game.results


def test_bench_ismcts_runs() -> None:
    """bench/ismcts.py's smallest run prints its table and a JSON line (both evaluators)."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    for rollout in ("random", "simple"):
        proc = subprocess.run(
            [sys.executable, "bench/ismcts.py", "--sims", "2", "--games", "2", "--rollout", rollout],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=240,
        )
        assert proc.returncode == 0, proc.stderr
        out = json.loads(proc.stdout.strip().splitlines()[-1])
        row = out["rows"][0]
        assert row["games"] == 2 and row["wins"] + row["losses"] + row["drawn"] == 2


def test_the_game_limit_rule_ends_a_game_without_a_winner_at_zero() -> None:
    """``max_hands`` in the rules (docs/rules.md §3.7.1): players that never knock end
    at the limit in a draw, whole-game returns all 0 (a game without a winner)."""
    game = pyspiel.load_game("oklahoma_gin", {"returns": "game", "rules": "max_hands=2", "max_hands": 50})
    rng = random.Random(7)
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            _chance(state, rng)
            continue
        legal = [a for a in state.legal_actions() if a < osp.KNOCK_BASE]  # never knock
        state.apply_action(rng.choice(legal))
    g = state.okgin_game
    assert g.is_over and g.termination == "hand_limit" and len(g.results) == 2
    if g.winner is None:
        assert state.returns() == [0.0, 0.0]
    else:
        assert state.returns()[g.winner] == 1.0
