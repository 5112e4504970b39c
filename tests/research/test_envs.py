"""okgin.envs: PettingZoo's API test, Gymnasium's env checker, hidden information, advice.

The hidden-information test is the strongest one here: permuting every card a seat
cannot see (the other hand's unseen cards and the stock) consistently with the history
must leave that seat's observation exactly as it was, bit for bit.
"""

from __future__ import annotations

import random

import pytest

np = pytest.importorskip("numpy")
pytest.importorskip("pettingzoo")
pytest.importorskip("gymnasium")

from gymnasium.utils.env_checker import check_env  # noqa: E402
from pettingzoo.test import api_test  # noqa: E402

from clients.bots import get_bot  # noqa: E402
from clients.envs import make_env  # noqa: E402
from okgin import Action, Game, RuleSet  # noqa: E402
from okgin.cards import cards_of  # noqa: E402
from okgin.envs import NO_ADVICE, OkginAECEnv, SingleAgentEnv, encode_view, env  # noqa: E402
from okgin.hand import Hand  # noqa: E402
from okgin.rng import SeedStream  # noqa: E402

VARIANTS = ["oklahoma", "box"]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("episode", ["hand", "game"])
def test_pettingzoo_api(variant: str, episode: str) -> None:
    api_test(env(variant=variant, episode=episode, rules=None), num_cycles=300)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_pettingzoo_api_without_advice() -> None:
    api_test(env(variant="box", advice=False), num_cycles=300)


def _play_random(e: OkginAECEnv, rng: random.Random, steps: int) -> None:
    for _ in range(steps):
        agent = e.agent_selection
        if e.terminations[agent] or e.truncations[agent]:
            return
        legal = e.legal_actions(agent)
        e.step(rng.choice(legal))


def _replay_with_deck(g: Game, sigma: dict[int, int]) -> Game:
    """The same game, its first hand's hidden cards renamed by ``sigma``: the same
    moves, and the same advice with its cards renamed too (the box never sees advice,
    so a suggested card may be one of the hidden ones)."""
    deck = [sigma.get(c, c) for c in SeedStream(g.seed, "deal/0").shuffle(list(range(52)))]
    g2 = Game(g.rules, seed=g.seed_value)
    h = g2.hand
    g2.hand = Hand(g.rules, g2.seed, 0, h.dealer, h.nondealer, g2.num_seats, deck=deck)
    g2.view_cache = {}
    for entry in g.log:
        if entry[0] == "action":
            g2.apply(entry[2], seat=entry[1])
        elif entry[0] == "advice":
            a = entry[2]
            if a is not None and a.card is not None:
                a = Action(a.kind, sigma.get(a.card, a.card))
            g2.advise(entry[1], a, entry[3])
    return g2


@pytest.mark.parametrize("variant", VARIANTS)
def test_observation_ignores_hidden_cards(variant: str) -> None:
    """Permute the cards a seat cannot see; its observation (and mask) stays the same."""
    rng = random.Random(9)
    checked = 0
    for trial in range(8):
        e = OkginAECEnv(variant=variant)
        e.reset(seed=trial)
        _play_random(e, rng, rng.randrange(5, 70))
        g = e.game
        assert g is not None
        if g.hand_number != 0 or g.hand.phase == "over":
            continue
        for seat, agent in enumerate(e.possible_agents):
            view = g.view(seat)
            owner = view.hand_of
            hidden = set(g.hand.stock)
            for q in (g.hand.dealer, g.hand.nondealer):
                if q != owner:
                    hidden |= set(cards_of(g.hand.hands[q])) - set(view.known_cards[q])
            order = sorted(hidden)
            shuffled = order[:]
            while shuffled == order:
                rng.shuffle(shuffled)
            sigma = dict(zip(order, shuffled, strict=True))
            g2 = _replay_with_deck(g, sigma)
            assert g2.hand.hands != g.hand.hands or g2.hand.stock != g.hand.stock
            before = e.observe(agent)
            e.game = g2
            after = e.observe(agent)
            e.game = g
            assert np.array_equal(before["observation"], after["observation"]), (variant, seat)
            assert np.array_equal(before["action_mask"], after["action_mask"])
            # and the observation does hold the seat's own (or its captain's) cards
            assert set(np.flatnonzero(before["observation"][:52])) == set(view.hand or ())
            checked += 1
    assert checked >= 6


def test_sitter_advice_is_an_action() -> None:
    """In Gin in the Box the sitter acts before each captain decision: advice or 109."""
    e = OkginAECEnv(variant="box")
    e.reset(seed=4)
    g = e.game
    assert g is not None and g.roles is not None
    box, captain, sitter = g.roles
    # the captain has the first upcard offer, so the sitter is asked first
    assert e.agent_selection == e.possible_agents[sitter]
    obs = e.observe(e.agent_selection)
    legal = {int(i) for i in np.flatnonzero(obs["action_mask"])}
    assert legal == {0, 1, NO_ADVICE}  # take, pass, or no advice
    e.step(1)  # advise "pass"
    assert g.advice and g.advice[-1][2] is not None and str(g.advice[-1][2]) == "pass"
    assert e.agent_selection == e.possible_agents[captain]
    cap_obs = e.observe(e.agent_selection)["observation"]
    assert cap_obs[-110 + 1] == 1  # the advice piece shows action 1, pass
    box_obs = e.observe(e.possible_agents[box])["observation"]
    assert box_obs[-110:].sum() == 0  # the box never sees advice
    e.step(0)  # the captain takes anyway: advice never moves the game
    assert g.hand.phase == "discard"


def test_advice_off() -> None:
    e = OkginAECEnv(variant="box", advice=False)
    e.reset(seed=4)
    g = e.game
    assert g is not None and g.roles is not None
    assert e.agent_selection == e.possible_agents[g.roles[1]]


@pytest.mark.parametrize("variant", VARIANTS)
def test_hand_rewards_are_points(variant: str) -> None:
    rng = random.Random(1)
    scored = 0
    for trial in range(6):
        e = OkginAECEnv(variant=variant, rules=RuleSet(variant=variant, knock_limit=10))
        e.reset(seed=trial)
        while not all(e.terminations.values()):
            legal = e.legal_actions()
            knocks = [a for a in legal if 56 <= a < 108]
            e.step(knocks[0] if knocks else rng.choice(legal))
        g = e.game
        assert g is not None
        r = g.results[-1]
        total = {a: e._cumulative_rewards[a] for a in e.agents}
        assert sum(total.values()) == 0
        if r.winner is not None:
            scored += 1
            assert total[e.possible_agents[r.winner]] == r.points
    assert scored


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("bot", ["random", "simple", "strong"])
def test_gymnasium_check_env(variant: str, bot: str) -> None:
    check_env(make_env(bot, variant=variant, seed=1))


@pytest.mark.parametrize("variant", VARIANTS)
def test_gymnasium_episodes_with_masks(variant: str) -> None:
    """Masked random play against simple: whole games, every learner role."""
    e = make_env("simple", variant=variant, episode="game", rules=RuleSet(variant=variant, target_score=40))
    rng = np.random.default_rng(0)
    for seed in range(2):
        obs, info = e.reset(seed=seed)
        total, done, steps = 0.0, False, 0
        while not done:
            assert e.observation_space.contains(obs)
            legal = np.flatnonzero(info["action_mask"])
            assert np.array_equal(e.action_masks(), info["action_mask"].astype(bool))
            obs, reward, term, trunc, info = e.step(int(rng.choice(legal)))
            total += reward
            steps += 1
            done = term or trunc
        g = e.unwrapped.game
        assert "illegal" not in info
        assert steps > 0 and g.results


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_gymnasium_make() -> None:
    import gymnasium

    for env_id in ("okgin/OklahomaGin-v0", "okgin/GinInTheBox-v0"):
        e = gymnasium.make(env_id, opponent="simple")
        check_env(e.unwrapped)
        _, info = e.reset(seed=1)
        assert info["action_mask"].any()


def test_gymnasium_illegal_action_forfeits() -> None:
    e = SingleAgentEnv(get_bot("simple"))
    _, info = e.reset(seed=0)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    _obs, reward, term, _trunc, info = e.step(illegal)
    assert term and info["illegal"] and reward == -1.0
    assert e.game is not None and e.game.termination == "illegal"


@pytest.mark.parametrize("variant", VARIANTS)
def test_gymnasium_one_hand_episode_ends_on_its_own_hand(variant: str) -> None:
    """With episode="hand" the terminal step shows the hand as it ended, not the next
    hand the engine has already dealt, and no action is legal (30 episodes)."""
    e = make_env("simple", variant=variant, episode="hand")
    rng = np.random.default_rng(1)
    for seed in range(30):
        obs, info = e.reset(seed=seed)
        term = trunc = False
        while not (term or trunc):
            obs, _reward, term, trunc, info = e.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        g = e.unwrapped.game
        assert term and not info["action_mask"].any() and not e.action_masks().any()
        ended = g.hand_end_view(e.unwrapped.seat)
        assert ended.hand_number == 0 and ended.phase in ("over", "game_over")
        assert np.array_equal(obs, encode_view(ended))
        if not g.is_over:
            assert not np.array_equal(obs, encode_view(g.view(e.unwrapped.seat)))  # the next hand's


@pytest.mark.parametrize("variant", VARIANTS)
def test_aec_one_hand_episode_ends_on_its_own_hand(variant: str) -> None:
    e = OkginAECEnv(variant=variant, episode="hand")
    rng = random.Random(2)
    for seed in range(10):
        e.reset(seed=seed)
        _play_random(e, rng, 10_000)
        assert all(e.terminations.values())
        g = e.game
        for agent in e.agents:
            seat = e.possible_agents.index(agent)
            got = e.observe(agent)
            assert not got["action_mask"].any()
            assert np.array_equal(got["observation"], encode_view(g.hand_end_view(seat)))
            assert g.hand_end_view(seat).hand_number == 0


def test_aec_render_human_prints_and_returns_none(capsys: pytest.CaptureFixture[str]) -> None:
    e = OkginAECEnv(variant="oklahoma", render_mode="human")
    e.reset(seed=3)
    assert e.render() is None
    assert "hand 0" in capsys.readouterr().out
    a = OkginAECEnv(variant="oklahoma", render_mode="ansi")
    a.reset(seed=3)
    text = a.render()
    assert isinstance(text, str) and "hand 0" in text
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("variant", VARIANTS)
def test_aec_illegal_action_ends_the_game_as_the_gym_env_does(variant: str) -> None:
    """One convention for illegal actions: -1 for the agent that took one, 0 for the
    others, the game over (PettingZoo's TerminateIllegalWrapper, as the Gymnasium env)."""
    import warnings

    e = env(variant=variant)
    e.reset(seed=4)
    agent = e.agent_selection
    illegal = int(np.flatnonzero(e.observe(agent)["action_mask"] == 0)[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the wrapper warns that the move was illegal
        e.step(illegal)
    assert all(e.terminations.values())
    assert e.rewards[agent] == -1 and all(r == 0 for a, r in e.rewards.items() if a != agent)
    raw = OkginAECEnv(variant=variant)
    raw.reset(seed=4)
    from okgin.errors import IllegalAction

    with pytest.raises((IllegalAction, ValueError)):
        raw.step(int(np.flatnonzero(raw.observe(raw.agent_selection)["action_mask"] == 0)[0]))


def test_gymnasium_function_policy_and_reward() -> None:
    """A plain function is a policy; a hand's reward is the learner's points."""
    from clients.bots.simple import simple_choice

    e = SingleAgentEnv(simple_choice, rules=RuleSet(knock_limit=10))
    for seed in range(5):
        e.reset(seed=seed)
        done, total = False, 0.0
        while not done:
            g = e.game
            assert g is not None
            # play the learner as simple too, through the action numbers
            from okgin.envs import action_to_id

            a = simple_choice(g.view(e.seat), g.legal_actions())
            _obs, reward, term, trunc, _info = e.step(action_to_id(a))
            total += reward
            done = term or trunc
        r = e.game.results[-1]
        expected = 0.0 if r.winner is None else (r.points if r.winner == e.seat else -r.points)
        assert total == expected


def test_encode_view_is_the_seats() -> None:
    g = Game(RuleSet(), seed=3)
    for seat in (0, 1):
        v = g.view(seat)
        assert set(np.flatnonzero(encode_view(v)[:52])) == set(v.hand or ())


def test_okgin_research_modules_import_no_clients() -> None:
    """okgin is the pure engine: its research modules load neither clients nor referee."""
    import subprocess
    import sys
    from pathlib import Path

    code = (
        "import sys, okgin.openspiel, okgin.envs\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('clients', 'referee'))\n"
        "assert not bad, bad\n"
    )
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize(("module", "missing"), [("okgin.openspiel", "pyspiel"), ("okgin.envs", "pettingzoo")])
def test_missing_extra_names_it(module: str, missing: str) -> None:
    """Without the optional dependency, the import error says which extra to install."""
    import subprocess
    import sys
    from pathlib import Path

    code = (
        f"import sys\nsys.modules[{missing!r}] = None\n"
        f"try:\n    import {module}\nexcept ImportError as e:\n    print(e)\nelse:\n    raise SystemExit('imported')\n"
    )
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "okgin[research]" in proc.stdout
