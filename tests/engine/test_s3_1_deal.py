"""docs/rules.md §3.1 Deal: first dealer from the seed, winner deals next, 10 cards each, the
upcard, 31 in the stock; the knock limit from the upcard; ace_upcard_gin_only,
spade_upcard_doubles and a fixed knock_limit."""

from __future__ import annotations

import pytest
from enginekit import all_52, assert_illegal, hand_of, knock_position, play

from okgin import Action, Game, RuleSet, card_str, game_from_position, parse_card
from okgin.rng import SeedStream

KNOCKER = "As 2s 3s 4h 5h 6h 9c 9d 9h 2c"  # deadwood 2 after throwing the drawn card
DEFENDER = "Jc Qc Ks 7s 8s Ts 3d 4d 6d Qd"  # nothing melds, nothing to lay off: 78


def test_s3_1_deal_ten_each_upcard_then_stock_of_31():
    for seed in range(20):
        g = Game(RuleSet(), seed)
        v = g.full_view()
        assert [len(h) for h in v.all_hands] == [10, 10]
        assert v.discard_pile == (v.upcard,)
        assert v.stock_size == 31 and len(v.stock) == 31
        assert all_52(g)


def test_s3_1_deal_order_is_fixed_by_the_seeded_shuffle():
    # docs/rules.md §6.3: non-dealer gets deck[0:10], dealer deck[10:20], upcard
    # deck[20], the stock's top is deck[21] (the deck is SeedStream(seed, "deal/N")).
    g = Game(RuleSet(), "abc")
    deck = SeedStream("abc", "deal/0").shuffle(list(range(52)))
    h = g.hand
    assert set(hand_of(g, h.nondealer)) == {card_str(c) for c in deck[:10]}
    assert set(hand_of(g, h.dealer)) == {card_str(c) for c in deck[10:20]}
    assert h.upcard == deck[20]
    assert h.stock[-1] == deck[21] and h.stock[0] == deck[51]


def test_s3_1_first_dealer_is_random_from_the_seed():
    dealers = {Game(RuleSet(), s).hand.dealer for s in range(40)}
    assert dealers == {0, 1}
    for s in range(10):
        assert Game(RuleSet(), s).hand.dealer == Game(RuleSet(), s).hand.dealer


def test_s3_1_non_dealer_acts_first():
    for s in range(10):
        g = Game(RuleSet(), s)
        assert g.current_player == g.hand.nondealer == 1 - g.hand.dealer


@pytest.mark.parametrize(
    ("knocker_hand", "draw", "knock", "winner_is_knocker"),
    [
        ("As 2s 3s 4h 5h 6h 9c 9d 9h 2c", "Kh", "Kh", True),  # knocks with 2 against 78
        ("As 2s 3s 4h 5h 6h 9c 9d 9h Tc", "Kh", "Kh", False),  # 10 against the defender's 0: undercut
    ],
)
def test_s3_1_the_winner_of_a_hand_deals_the_next(knocker_hand, draw, knock, winner_is_knocker):
    defender = "Jc Qc Kc 7s 8s 9s 3d 4d 5d 6d" if not winner_is_knocker else DEFENDER
    g, r = knock_position(knocker_hand, defender, draw=draw, knock=knock)
    assert (r.winner == r.knocker) is winner_is_knocker
    assert g.hand.number == 1 and g.hand.dealer == r.winner
    assert g.current_player == 1 - r.winner


@pytest.mark.parametrize(("rank", "limit"), list(zip("A23456789TJQK", [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10], strict=True)))
def test_s3_1_knock_limit_is_the_upcard_value(rank, limit):
    g = game_from_position(hands={0: "2c 3c 4c 5c 6c 7c 8c 9c Tc Jc", 1: "2h 3h 4h 5h 6h 7h 8h 9h Th Jh"}, upcard=rank + "d")
    assert g.hand.knock_limit == limit
    assert g.view(0).knock_limit == g.view(1).knock_limit == g.view(None).knock_limit == limit


def test_s3_1_knock_limit_stays_visible_after_the_upcard_is_taken_and_is_enforced():
    # upcard 7d: limit 7 all hand long.
    g = game_from_position(hands={1: "As 2s 3s 4h 5h 6h 9c 9d 9h 8c", 0: DEFENDER}, upcard="7d", stock=["8d"])
    play(g, "take")
    assert g.view(0).knock_limit == g.view(1).knock_limit == 7
    assert g.view(0).upcard == parse_card("7d") and g.view(0).discard_pile == ()
    # 8c thrown face down leaves the taken 7d: deadwood 7 <= 7, so the knock is legal.
    assert Action.knock(parse_card("8c")) in g.legal_actions()
    play(g, "discard 8c")
    play(g, "stock", "discard 8d")  # the dealer draws 8d and throws it
    assert g.view(1).knock_limit == 7


def test_s3_1_knock_over_the_upcard_limit_is_refused():
    # upcard 7d, the knocker would keep 8 points.
    g = game_from_position(hands={1: "As 2s 3s 4h 5h 6h 9c 9d 9h 8c", 0: DEFENDER}, upcard="7d", stock=["8d"])
    play(g, "pass", "pass", "stock")
    assert_illegal(g, Action.knock(parse_card("8c")), "deadwood at most 7", "leaves 8")
    assert all(a.kind != "knock" for a in g.legal_actions())


def test_s3_1_ace_upcard_limit_is_one():
    _g, r = knock_position("2s 3s 4s 4h 5h 6h 9c 9d 9h Ac", DEFENDER, draw="Kh", knock="Kh", upcard="Ad")
    assert r.knock_limit == 1 and r.outcome == "knock" and r.knocker_deadwood == 1


def test_s3_1_ace_upcard_gin_only_refuses_a_knock_with_deadwood():
    rules = RuleSet(ace_upcard_gin_only=True)
    g = game_from_position(rules, hands={1: "2s 3s 4s 4h 5h 6h 9c 9d 9h Ac", 0: DEFENDER}, upcard="Ad", stock=["Kh"])
    assert g.hand.knock_limit == 0
    play(g, "pass", "pass", "stock")
    assert_illegal(g, Action.knock(parse_card("Kh")), "gin")


def test_s3_1_ace_upcard_gin_only_still_allows_gin():
    rules = RuleSet(ace_upcard_gin_only=True)
    _g, r = knock_position("2s 3s 4s 4h 5h 6h 9c 9d 9h 5s", DEFENDER, draw="Kh", knock="Kh", upcard="Ad", rules=rules)
    assert r.outcome == "gin" and r.knock_limit == 0


def test_s3_1_ace_upcard_gin_only_does_nothing_for_other_upcards():
    g = game_from_position(
        RuleSet(ace_upcard_gin_only=True), hands={1: "2s 3s 4s 4h 5h 6h 9c 9d 9h 5s", 0: DEFENDER}, upcard="2d"
    )
    assert g.hand.knock_limit == 2


@pytest.mark.parametrize(
    ("upcard", "option", "doubled"),
    [("7s", True, True), ("7s", False, False), ("7d", True, False), ("7c", True, False), ("7h", True, False)],
)
def test_s3_1_spade_upcard_doubles_every_point(upcard, option, doubled):
    rules = RuleSet(spade_upcard_doubles=option)
    defender = DEFENDER.replace("7s", "7d") if upcard == "7s" else DEFENDER
    g, r = knock_position(KNOCKER, defender, draw="Kh", knock="Kh", upcard=upcard, rules=rules)
    plain = r.defender_deadwood - r.knocker_deadwood
    assert r.outcome == "knock" and r.doubled is doubled
    assert r.points == (2 * plain if doubled else plain)
    assert g.scores[r.winner] == r.points
    assert g.view(0).last_result.doubled is doubled


def test_s3_1_spade_doubling_is_visible_from_the_deal():
    g = game_from_position(RuleSet(spade_upcard_doubles=True), hands={1: KNOCKER, 0: DEFENDER.replace("7s", "7d")}, upcard="7s")
    assert g.view(0).doubled and g.view(None).doubled


@pytest.mark.parametrize("fixed", [0, 1, 5, 10])
def test_s3_1_fixed_knock_limit_ignores_the_upcard(fixed):
    g = game_from_position(RuleSet(knock_limit=fixed), hands={1: KNOCKER, 0: DEFENDER}, upcard="3c")
    assert g.hand.knock_limit == fixed


def test_s3_1_standard_gin_is_knock_at_ten_undercut_25():
    rules = RuleSet.standard_gin()
    assert rules.knock_limit == 10 and rules.undercut_bonus == 25
    g = game_from_position(rules, hands={1: KNOCKER, 0: DEFENDER}, upcard="Ad")
    assert g.hand.knock_limit == 10


def test_s3_1_knock_limit_zero_means_gin_only():
    g = game_from_position(RuleSet(knock_limit=0), hands={1: KNOCKER, 0: DEFENDER}, upcard="Td", stock=["Kh"])
    play(g, "pass", "pass", "stock")
    assert_illegal(g, Action.knock(parse_card("Kh")), "gin")
