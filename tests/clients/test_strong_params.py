"""The strong bot's parameters added for issue 30: each does what it says, and with its
default (off) the bot is exactly ``strong-v1``."""

from __future__ import annotations

import random

import pytest
from strong_hands import play_first_hand

from clients.bots.simple import joins_meld
from clients.bots.strong import V1, Params, StrongBot, StrongV1Bot
from clients.bots.strong.fastdw import dad_value
from clients.bots.strong.ginchase import Weighted
from clients.bots.strong.opponent import joins
from clients.bots.strong.tables import VALUES
from okgin import PASS, TAKE, Game, RuleSet, mask_of, parse_cards
from okgin.melds import deadwood_mask


def test_v1_is_the_default_params_and_its_own_bot() -> None:
    assert Params() == V1
    assert StrongV1Bot(seed=1).params == V1 and StrongV1Bot(seed=1).name == "strong-v1"


def test_weighted_deadwood_at_weight_zero_is_deadwood() -> None:
    w = Weighted(0)
    rng = random.Random(5)
    for _ in range(500):
        cs = rng.sample(range(52), 11)
        h = sum(1 << c for c in cs)
        assert w.dad(h) == dad_value(h)
        assert w.dw(h & ~(1 << cs[0])) == deadwood_mask(h & ~(1 << cs[0]))


def test_weighted_deadwood_counts_unmelded_cards() -> None:
    w = Weighted(5)
    # one king from gin: 5 + 10; four low cards from gin: 4 * 5 + 8
    assert w.dw(mask_of(parse_cards("As 2s 3s 7h 7d 7c 9d Td Jd Kc"))) == 15
    assert w.dw(mask_of(parse_cards("As 2s 3s 7h 7d 7c 2h 2c 3d Ac"))) == 28


def test_value_draws_from_uses_the_simple_rule_below_the_limit() -> None:
    """Below ``value_draws_from`` the bot takes a face-up card exactly when it joins a meld."""
    seen = 0
    for seed in range(200):
        g = Game(RuleSet(), f"vdf/{seed}")
        if g.hand.knock_limit >= 4:
            continue
        seat = g.current_player
        assert seat is not None
        v = g.view(seat)
        a = StrongBot(seed=0, value_draws_from=4).choose(v, g.legal_actions())
        assert a == (TAKE if joins_meld(mask_of(v.hand or ()), v.upcard) else PASS)
        seen += 1
        if seen >= 8:
            break
    assert seen >= 8


# ---------------------------------------------------------------- rollout_turns


def _knock_position(seed: str, rules: RuleSet) -> Game | None:
    """A game played by ``simple`` up to the first discard where a (non-gin) knock is legal."""
    from clients.bots.simple import simple_choice

    g = Game(rules, seed)
    for _ in range(200):
        seat = g.current_player
        if seat is None:
            return None
        legal = g.legal_actions()
        if any(a.kind == "knock" for a in legal):
            return g
        g.apply(simple_choice(g.view(seat), legal))
    return None


def _engine_rollout(g: Game, rules: RuleSet, kc: int, stock: list[int], knock_turn: int, wary: bool = False) -> int | None:
    """Play the rollout's policy in the engine itself, from the knock decision in ``g``
    (we throw ``kc`` and hold): the simple rule for both sides, the opponent knocking at
    its first chance, we at our first chance from our ``knock_turn``-th turn on (0-based)
    and on gin; with ``wary`` the opponent knocks only if the engine says the knock wins.
    Returns our points (None: drawn or past the last turn looked at)."""
    from okgin import DRAW_DISCARD, DRAW_STOCK, Action

    g = g.copy()
    me = g.current_player
    assert me is not None
    g.hand.stock = list(stock)
    g.apply(Action("discard", kc))
    turn = {me: 0, 1 - me: 0}
    for _ in range(100):
        seat = g.current_player
        if seat is None:
            return None
        hand = g.hand.hands[seat]
        top = g.hand.discard_pile[-1]
        with_top = hand | (1 << top)
        best = min((deadwood_mask(with_top & ~(1 << c)), -VALUES[c], c) for c in range(52) if with_top >> c & 1 and c != top)
        r = g.apply(DRAW_DISCARD if best[0] < deadwood_mask(hand) else DRAW_STOCK)
        if r is not None:
            break
        h11 = g.hand.hands[seat]
        d, _, c = min((deadwood_mask(h11 & ~(1 << x)), -VALUES[x], x) for x in range(52) if h11 >> x & 1 and x != g.hand.taken)
        knock = d <= g.hand.knock_limit and (seat != me or d == 0 or turn[me] >= knock_turn)
        if knock and wary and seat != me and d > 0:
            trial = g.copy().apply(Action("knock", c))
            knock = trial is not None and trial.winner == seat
        r = g.apply(Action("knock" if knock else "discard", c))
        turn[seat] += 1
        if r is not None:
            break
    else:
        raise AssertionError("the engine's hand did not end")
    if r.winner is None:
        return None
    pts = r.points // (2 if r.doubled else 1)
    return pts if r.winner == me else -pts


def test_rollout_scores_agree_with_the_engine() -> None:
    """The rollout's points for every "knock from turn j" policy are the engine's own
    result of playing that policy on the same deal (same opponent hand, same stock order)."""
    from clients.bots.strong.evaluation import Evaluator
    from clients.bots.strong.knocking import rollout
    from clients.bots.strong.knowledge import read_view
    from clients.bots.strong.tables import bits

    turns = 4
    checked = 0
    for rules in (RuleSet(), RuleSet().with_assignments(["knock_limit=10", "undercut_bonus=25"])):
        for seed in range(40):
            g = _knock_position(f"roll/{seed}", rules)
            if g is None:
                continue
            me = g.current_player
            assert me is not None
            k = read_view(g.view(me))
            ev = Evaluator(k)
            knocks = [a.card for a in g.legal_actions() if a.kind == "knock" and a.card is not None]
            kc = min((ev.dw(k.hand & ~(1 << c)), -VALUES[c], c) for c in knocks)[2]
            opp = g.hand.hands[1 - me]
            stock = bits(k.pool & ~opp)
            assert sorted(stock) == sorted(g.hand.stock)
            random.Random(seed).shuffle(stock)
            for wary in (False, True):
                got = rollout(ev, rules, random.Random(seed), opp, k.hand & ~(1 << kc), turns, wary)
                assert len(got) == turns
                for j in range(turns):
                    engine = _engine_rollout(g, rules, kc, stock, j, wary)
                    if got[j] is not None:
                        assert got[j] == engine, (seed, j, wary, got, engine)
                        checked += 1
    assert checked >= 80, checked


def test_rollout_knock_decisions_are_legal_and_deterministic() -> None:
    """With ``rollout_turns`` the knock decision is still a pure function of the seed and
    the view; v1 does not roll out."""
    assert V1.rollout_turns == 0
    seen = 0
    for seed in range(30):
        g = _knock_position(f"rdet/{seed}", RuleSet())
        if g is None:
            continue
        seat = g.current_player
        assert seat is not None
        v, legal = g.view(seat), g.legal_actions()
        a = StrongBot(seed=3, rollout_turns=3).choose(v, legal)
        assert a in legal
        assert StrongBot(seed=3, rollout_turns=3).choose(v, legal) == a
        seen += 1
    assert seen >= 10


def test_gin_weight_is_one_at_the_start_and_nothing_when_a_knock_wins_the_game() -> None:
    from dataclasses import replace

    from clients.bots.strong.bot import gin_weight

    rules = RuleSet()
    view = Game(rules, "gw").view(0)
    me = view.hand_of
    assert me is not None

    def at(mine: int, theirs: int) -> float:
        scores = [0, 0]
        scores[me], scores[1 - me] = mine, theirs
        return gin_weight(replace(view, scores=tuple(scores)), rules)

    assert at(0, 0) == 1.0
    assert at(95, 0) == 0.0  # any knock wins: gin's extra points are worth nothing
    assert at(0, 95) < 0.5  # only ending the hand first matters
    for mine in range(0, 100, 7):
        for theirs in range(0, 100, 7):
            assert 0.0 <= at(mine, theirs) <= 2.0


def test_gin_equity_changes_only_the_gin_bonus() -> None:
    """At 0-0 the weight is 1: the bot with gin_equity plays the first hand of a game
    exactly like the one without."""
    rules = RuleSet()
    for i in range(3):
        moves = []
        for on in (True, False):
            bots = [StrongBot(seed="a", gin_bonus=25.0, gin_equity=on), StrongBot(seed="b")]
            moves.append(play_first_hand(bots, rules, f"ge/{i}")[1])
        assert moves[0] == moves[1]


def _discard_view(seed: str, turns: int) -> tuple[Game, int]:
    """A 2-player game played ``turns`` moves by two strong bots, stopped at a discard."""

    def at_discard(g: Game, n: int) -> bool:
        seat = g.current_player
        return n >= turns and seat is not None and g.view(seat).phase == "discard"

    g, _, r = play_first_hand([StrongBot(seed=1), StrongBot(seed=2)], RuleSet(), seed, at_discard)
    assert r is None, "the hand ended before the discard looked for"
    seat = g.current_player
    assert seat is not None
    return g, seat


def test_threat_off_is_the_danger_penalty() -> None:
    """With ``threat_samples`` 0 (v1, strong) a discard's threat is danger_weight times danger."""
    g, seat = _discard_view("th0", 8)
    ev = StrongBot(seed=1).evaluator(g.view(seat))
    assert ev.opp_hands is None
    for c in range(52):
        if ev.k.hand >> c & 1:
            assert ev.threat(c) == ev.danger_weight * ev.danger(c)


def test_threat_is_the_sampled_opponents_gain_over_a_stock_draw() -> None:
    """With sampled opponent hands, a card that melds with none of them threatens nothing;
    one that completes a set in every hand costs what it gains them, weighed."""
    g, seat = _discard_view("th1", 8)
    view = g.view(seat)
    ev = StrongBot(seed=1, threat_samples=8, threat_weight=0.5).evaluator(view)
    assert ev.opp_hands is not None and ev.gain_weight == 0.5
    hand = ev.k.hand
    # one opponent hand, given: two unseen rank mates of a card we hold, and filler
    unseen = [c for c in range(52) if ev.k.pool >> c & 1]
    target = next(c for c in range(52) if hand >> c & 1 and sum(1 for m in unseen if m % 13 == c % 13) >= 2)
    mates = [m for m in unseen if m % 13 == target % 13][:2]
    filler = [c for c in unseen if c not in mates and c % 13 != target % 13][:8]
    sole = sum(1 << c for c in mates + filler)
    ev.opp_hands = lambda: [sole]
    assert ev.threat(target) > 0.0
    for c in range(52):
        if not hand >> c & 1:
            continue
        t = ev.threat(c)
        assert t >= 0.0
        if not joins(sole, c):
            assert t == 0.0
        else:
            gain = ev.expected_from(sole, ev.k.pool & ~sole) - ev.util[dad_value(sole | 1 << c)]
            assert t == 0.5 * max(gain, 0.0)


def test_threat_samples_change_discards_and_stay_deterministic() -> None:
    """The sampled threat is a function of the view and the seed, and it moves discards."""
    differs = 0
    for i in range(6):
        g, seat = _discard_view(f"th2/{i}", 6 + i)
        view, legal = g.view(seat), g.legal_actions()
        a = StrongBot(seed=3, threat_samples=24, threat_weight=0.6).choose(view, legal)
        assert a == StrongBot(seed=3, threat_samples=24, threat_weight=0.6).choose(view, legal)
        assert a in legal
        differs += a != StrongBot(seed=3).choose(view, legal)
    assert differs > 0


def test_knock_choices_picks_the_knock_worth_most_over_the_sampled_hands() -> None:
    """Among the least-deadwood knock cards, ``knock_choices`` knocks with the one whose
    mean value over the sampled opponent hands is highest; 1 is the least deadwood."""
    from clients.bots.strong.bot import knock_card
    from clients.bots.strong.knocking import knock_mean

    rules = RuleSet()
    seen = 0
    for i in range(40):
        g = Game(rules, f"kc/{i}")
        bots = [StrongBot(seed="a"), StrongBot(seed="b")]
        for s, b in enumerate(bots):
            b.on_game_start(s, rules, 2)
        while g.current_player is not None:
            seat = g.current_player
            view, legal = g.view(seat), g.legal_actions()
            knocks = [a for a in legal if a.kind == "knock"]
            if len(knocks) >= 2:
                one = StrongBot(seed="a")
                ev = one.evaluator(view)
                kd1, kc1 = knock_card(ev, knocks)
                if kd1 > 0:
                    assert one.knock_estimate(view, knocks, ev)[0] == kc1
                    many = StrongBot(seed="a", knock_choices=len(knocks))
                    ev_m = many.evaluator(view)
                    kc, _ = many.knock_estimate(view, knocks, ev_m)
                    assert any(a.card == kc for a in knocks)
                    opps = many.opponent_hands(ev_m.k, view, random.Random(0), 16)
                    chosen = many.best_knock(ev_m, knocks, opps, float)
                    rests = {a.card: ev_m.k.hand & ~(1 << a.card) for a in knocks if a.card is not None}
                    worth = {c: knock_mean(rules, rest, ev_m.dw(rest), opps) for c, rest in rests.items()}
                    assert worth[chosen[1]] == max(worth.values())
                    seen += 1
            if g.apply(bots[seat].choose(view, legal), seat=seat) is not None:
                break
        if seen >= 5:
            break
    assert seen >= 5


def test_danger_points_weigh_each_melding_pair_by_its_points() -> None:
    """With only the two other kings possible for the opponent (each at 1/2), a king
    melds them with chance 1/4 and would save their 20 points: 5 expected points."""
    g, seat = _discard_view("dp", 4)
    ev = StrongBot(seed=1, threat_kind=2, threat_weight=0.2).evaluator(g.view(seat))
    assert ev.points_weight == 0.2
    king = 12  # the king of the first suit
    mates = [king + 13 * s for s in (1, 2)]
    for c in range(52):
        ev.k.p_opp[c] = 0.5 if c in mates else 0.0
    assert ev.danger_points(king) == pytest.approx(0.25 * 20)
    assert ev.threat(king) == pytest.approx(0.2 * 0.25 * 20)
    assert ev.danger_points(0) == 0.0  # an ace with no possible mates


def test_threat_kind_1_is_the_share_of_sampled_hands_the_card_melds_with() -> None:
    g, seat = _discard_view("tk1", 8)
    ev = StrongBot(seed=1, threat_samples=8, threat_kind=1, threat_weight=2.0).evaluator(g.view(seat))
    assert ev.opp_hands is not None and not ev.gain_by_points
    hands = ev.opp_hands()
    ev.opp_hands = lambda: hands  # the threat judges these very hands
    for c in range(52):
        if ev.k.hand >> c & 1:
            free = [h for h in hands if not h >> c & 1]
            assert ev.threat(c) == pytest.approx(2.0 * sum(joins(h, c) for h in free) / len(free))


def test_threat_model_0_deals_the_hands_by_the_marginals() -> None:
    """The threat's hands come from knocking.sample_opponent: hold no card we can see,
    and are the same for the same seed and view."""
    g, seat = _discard_view("tm0", 8)
    view = g.view(seat)
    evs = [StrongBot(seed=5, threat_samples=16, threat_model=0).evaluator(view) for _ in range(2)]
    hands = [ev.opp_hands() for ev in evs if ev.opp_hands is not None]
    assert len(hands) == 2 and hands[0] == hands[1] and len(hands[0]) == 16
    k = evs[0].k
    for h in hands[0]:
        assert h & k.hand == 0 and (h & ~k.pool) == k.opp_known


def test_the_opponent_chain_is_a_parameter() -> None:
    """opp_thin and opp_burn are the chain of opponent.sample_hands: v1's are its defaults,
    and another chain gives other hands from the same random numbers."""
    g, seat = _discard_view("chain", 10)
    view = g.view(seat)
    hands = []
    for params in ({}, {"opp_thin": 6, "opp_burn": 60}, {"opp_thin": 20, "opp_burn": 300}):
        bot = StrongBot(seed=1, **params)
        hands.append(bot.opponent_hands(bot.evaluator(view).k, view, random.Random(7), 12))
    assert hands[0] == hands[1] and hands[0] != hands[2] and len(hands[2]) == 12
