"""docs/rules.md §3.4 Knocking: after drawing, one card face down, the rest laid out within
the knock limit; the knocker may declare its melds, else the referee's arrangement (least
deadwood, then fewest layoff points for the defender); the defender lays off (not against
gin), chains included, and gets its least deadwood; big gin."""

from __future__ import annotations

from enginekit import assert_illegal, cards, knock_position, names, play

from okgin import Action, RuleSet, game_from_position, mask_of, parse_card, parse_cards
from okgin.layoffs import best_defence, layoff_chains

# Seat 1 knocks: runs 5-6-7h and 2-3-4c, set Jc Jd Js, deadwood 9d; draws Kc, throws it.
KN = "5h 6h 7h Jc Jd Js 2c 3c 4c 9d"


def layoffs(r) -> list[str]:
    return names(c for c, _ in r.defender_layout.layoffs)


def test_s3_4_knock_after_drawing_card_face_down_revealed_in_the_result():
    g, r = knock_position(KN, "4h 8h Qd Qs 6s 8s Ts 3d 6c 7d", draw="Kc", knock="Kc")
    assert r.knocker == 1 and r.defender == 0 and r.knock_discard == parse_card("Kc")
    assert parse_card("Kc") not in g.results[0].knocker_layout.deadwood_cards
    assert sum(len(m) for m in r.knocker_layout.melds) + len(r.knocker_layout.deadwood_cards) == 10
    assert r.knocker_deadwood == 9


def test_s3_4_knock_event_hides_the_card_until_the_result_reveals_it():
    g = game_from_position(hands={1: KN, 0: "4h 8h Qd Qs 6s 8s Ts 3d 6c 7d"}, upcard="Kd", stock=["Kc"], dealer=0)
    play(g, "pass", "pass", "stock")
    hand = g.hand
    r = play(g, "knock Kc")
    assert r is not None
    assert hand.events[-1] == (1, "knock", None)  # the engine's log keeps it face down
    # the game moved on to hand 1; the finished hand's result is public to everyone
    for seat in (0, 1, None):
        v = g.view(seat)
        assert v.last_result.knock_discard == parse_card("Kc")
        assert v.last_result.knocker_layout == r.knocker_layout


def test_s3_4_defender_lays_off_on_both_ends_of_a_run():
    _, r = knock_position(KN, "4h 8h Qd Qs 6s 8s Ts 3d 6c 7d", draw="Kc", knock="Kc")
    assert layoffs(r) == ["4h", "8h"]
    run = next(i for i, m in enumerate(r.knocker_layout.melds) if parse_card("6h") in m)
    assert {i for _, i in r.defender_layout.layoffs} == {run}
    assert r.defender_deadwood == 60 and r.outcome == "knock" and r.points == 51


def test_s3_4_fourth_card_onto_a_set():
    _, r = knock_position(KN, "Jh Qd Qs 6s 8s Ts 3d 6c 7d 2d", draw="Kc", knock="Kc")
    assert layoffs(r) == ["Jh"]
    assert r.defender_deadwood == 62 and r.points == 53


def test_s3_4_chained_layoff_when_the_next_card_needs_the_first():
    # 8h then 9h go onto 5-6-7h; Th stays in the defender's own set Tc Td Th.
    _, r = knock_position(KN, "8h 9h Th Tc Td Qs 6s 3d 6c 2d", draw="Kc", knock="Kc")
    assert [c for c, _ in r.defender_layout.layoffs] == parse_cards("8h 9h")  # in the order laid
    assert r.defender_deadwood == 27


def test_s3_4_chains_go_three_deep_at_either_end():
    # (OpenSpiel stops after the second chained card on one end: we must not.)
    knocker_melds = (tuple(parse_cards("5h 6h 7h")),)
    defender = mask_of(cards("2h 3h 4h 8h 9h Th Kc"))
    chains = layoff_chains(knocker_melds, defender)
    assert sorted(names(ch) for _, ch in chains) == [["2h", "3h", "4h"], ["8h", "9h", "Th"]]
    assert [c for c in chains[0][1]] == parse_cards("4h 3h 2h")  # outward from the run
    d = best_defence(defender, knocker_melds)
    assert d.deadwood == 10 and names(d.arrangement.deadwood_cards) == ["Kc"]
    # with the three-deep chain only one more card is needed to go out
    d = best_defence(mask_of(cards("8h 9h Th Jh Kc")), knocker_melds)
    assert d.deadwood == 10


def test_s3_4_three_deep_chain_scores_in_a_whole_hand():
    # Three or more chained cards are consecutive cards of one suit, so they always form a
    # run of the defender's own too: a long chain never changes the score, only how it is
    # shown (the engine shows fewest layoffs). Here 8h 9h Th Jh go out either way and the
    # defender keeps Qd Qs 6s 3d 2d 6c = 37.
    _, r = knock_position("5h 6h 7h 4c 4d 4s 2c 3c Ac 9d", "8h 9h Th Qd Qs 6s 3d 6c 2d Jh", draw="Kc", knock="Kc")
    assert r.defender_deadwood == 37 and r.points == 37 - 9


def test_s3_4_set_of_four_accepts_nothing_and_chains_stop_at_gaps():
    melds = (tuple(parse_cards("7c 7d 7h 7s")), tuple(parse_cards("4s 5s 6s")))
    assert layoff_chains(melds, mask_of(cards("8s 9s 2s Ah"))) == []


def test_s3_4_no_layoffs_against_gin():
    # Knocker goes gin with 5-6-7h: the defender's 4h and 8h stay as deadwood.
    _, r = knock_position("5h 6h 7h Jc Jd Js 2c 3c 4c 5c", "4h 8h Qd Qs 6s 8s Ts 3d 6c 7d", draw="Kc", knock="Kc")
    assert r.outcome == "gin" and r.defender_layout.layoffs == ()
    assert r.defender_deadwood == 72 and r.points == 25 + 72


def test_s3_4_defender_keeps_own_melds_when_they_save_more_than_layoffs():
    # 8h could go on 5-6-7h, but 8c 8d 8h together save more (24 > 8).
    _, r = knock_position(KN, "8h 8c 8d Qd Qs 6s 3d 6c 2d Ts", draw="Kc", knock="Kc")
    assert r.defender_layout.layoffs == ()
    assert tuple(parse_cards("8c 8d 8h")) in r.defender_layout.arrangement.melds
    assert r.defender_deadwood == 10 + 10 + 6 + 3 + 6 + 2 + 10


# Knocker's 5h sits in the run 4-5-6h or in the set of fives: deadwood 10 either way.
TIE = "4h 5h 6h 5c 5d 9s Ts Js Qs Ks"


def test_s3_4_default_arrangement_leaves_fewest_layoff_points_run_or_set():
    # Defender has 3h: with the run laid out it could lay off 3h, so the referee lays out the set.
    _, r = knock_position(TIE, "3h Jc Qd 2d 7c 8d Ah Tc 2c 9h", draw="Kc", knock="Kc")
    assert r.knocker_deadwood == 10
    assert tuple(parse_cards("5c 5d 5h")) in r.knocker_layout.melds
    assert r.defender_layout.layoffs == () and r.defender_deadwood == 62
    # Defender has 5s: with the set laid out it could lay off 5s, so the referee lays out the run.
    _, r = knock_position(TIE, "5s Jc Qd 2d 7c 8d Ah Tc 2c 9h", draw="Kc", knock="Kc")
    assert tuple(parse_cards("4h 5h 6h")) in r.knocker_layout.melds
    assert r.defender_layout.layoffs == () and r.defender_deadwood == 64


def test_s3_4_declared_arrangement_is_used_even_if_it_helps_the_defender():
    _, r = knock_position(TIE, "3h Jc Qd 2d 7c 8d Ah Tc 2c 9h", draw="Kc", knock="Kc", melds=["4h 5h 6h", "9s Ts Js Qs Ks"])
    assert tuple(parse_cards("4h 5h 6h")) in r.knocker_layout.melds
    assert layoffs(r) == ["3h"] and r.defender_deadwood == 59 and r.points == 49


def test_s3_4_declared_arrangement_with_more_deadwood_within_the_limit_is_accepted():
    # A gin hand declared as A-2-3c only (4c out): a knock with 4, not gin; layoffs allowed.
    gin_hand = "Ac 2c 3c 4c 5h 6h 7h 9c 9d 9h"
    _, r = knock_position(
        gin_hand, "4h 8h Qd Qs 6s 8s Ts 3d 6c 7d", draw="Kc", knock="Kc", melds=["Ac 2c 3c", "5h 6h 7h", "9c 9d 9h"]
    )
    assert r.knocker_deadwood == 4 and r.outcome == "knock"
    assert layoffs(r) == ["4h", "8h"] and r.points == 72 - 12 - 4
    _, r = knock_position(gin_hand, "4h 8h Qd Qs 6s 8s Ts 3d 6c 7d", draw="Kc", knock="Kc")
    assert r.outcome == "gin" and r.points == 25 + 72


def test_s3_4_declared_arrangement_must_be_valid_and_within_the_limit():
    g = game_from_position(hands={1: TIE, 0: "3h Jc Qd 2d 7c 8d Ah Tc 2c 9h"}, upcard="Kd", stock=["Kc"], dealer=0)
    play(g, "pass", "pass", "stock")
    kc = parse_card("Kc")
    assert_illegal(g, Action.knock(kc, [parse_cards("4h 5h 6h"), parse_cards("5c 5d 5h")]), "declared melds refused", "two melds")
    assert_illegal(g, Action.knock(kc, [parse_cards("4h 5h 6h 5c")]), "declared melds refused", "neither a set")
    assert_illegal(g, Action.knock(kc, [parse_cards("Ah 2h 3h")]), "declared melds refused", "not in the hand being laid out")
    assert_illegal(g, Action.knock(kc, [parse_cards("9s Ts Js Qs Ks")]), "deadwood 25", "over the knock limit 10")
    assert_illegal(g, Action.knock(parse_card("5c"), [parse_cards("4h 5h 6h")]), "knocking needs deadwood at most 10")
    # and the valid declaration is accepted afterwards
    r = g.apply(Action.knock(kc, [parse_cards("4h 5h 6h"), parse_cards("9s Ts Js Qs Ks")]))
    assert r is not None and r.knocker_deadwood == 10


def test_s3_4_knocks_are_listed_without_melds_and_only_when_within_the_limit():
    g = game_from_position(hands={1: TIE, 0: "3h Jc Qd 2d 7c 8d Ah Tc 2c 9h"}, upcard="Kd", stock=["Kc"], dealer=0)
    play(g, "pass", "pass", "stock")
    knocks = [a for a in g.legal_actions() if a.kind == "knock"]
    assert all(a.melds is None for a in knocks)
    # only throwing the Kc keeps deadwood 10 (a spade from the run's end would leave Kc too)
    assert names(a.card for a in knocks) == ["Kc"]


BIG = "As 2s 3s 4s 7h 7d 7c Jh Qh Kh"  # + 5s from the stock: 11 cards in melds


def test_s3_4_big_gin_is_off_by_default():
    g = game_from_position(hands={1: BIG, 0: "Jc Qc Ks 7s 8s Ts 3d 4d 6d Qd"}, upcard="9d", stock=["5s"], dealer=0)
    play(g, "pass", "pass", "stock")
    assert Action("big_gin") not in g.legal_actions()
    assert_illegal(g, Action("big_gin"), "big gin is not allowed")
    r = play(g, "knock As")  # an ordinary gin instead
    assert r is not None and r.outcome == "gin"


def test_s3_4_big_gin_scores_the_bonus_without_discarding_and_without_layoffs():
    rules = RuleSet(big_gin=True)
    # the defender's 6s would lay off on As-5s, and Th/9h on J-Q-Kh: not against big gin
    g = game_from_position(rules, hands={1: BIG, 0: "Jc Qc Ks 6s 8s Th 3d 4d 9h Qd"}, upcard="9d", stock=["5s"], dealer=0)
    play(g, "pass", "pass", "stock")
    assert Action("big_gin") in g.legal_actions()
    r = g.apply(Action("big_gin"))
    assert r is not None and r.outcome == "big_gin" and r.winner == 1
    assert r.knock_discard is None and r.knocker_deadwood == 0
    assert sum(len(m) for m in r.knocker_layout.melds) == 11
    assert r.defender_layout.layoffs == ()
    d = 10 + 10 + 10 + 6 + 8 + 10 + 3 + 4 + 9 + 10
    assert r.defender_deadwood == d and r.points == 31 + d


def test_s3_4_big_gin_bonus_option_and_declared_melds():
    rules = RuleSet(big_gin=True, big_gin_bonus=50)
    g = game_from_position(rules, hands={1: BIG, 0: "Jc Qc Ks 6s 8s Th 3d 4d 9h Qd"}, upcard="9d", stock=["5s"], dealer=0)
    play(g, "pass", "pass", "stock")
    assert_illegal(g, Action.big_gin_knock([parse_cards("As 2s 3s 4s 5s"), parse_cards("7h 7d 7c")]), "all 11 cards")
    r = g.apply(Action.big_gin_knock([parse_cards("As 2s 3s 4s 5s"), parse_cards("7h 7d 7c"), parse_cards("Jh Qh Kh")]))
    assert r is not None and r.outcome == "big_gin" and r.points == 50 + r.defender_deadwood


def test_s3_4_big_gin_needs_all_eleven_in_melds():
    rules = RuleSet(big_gin=True)
    g = game_from_position(rules, hands={1: BIG, 0: "Jc Qc Ks 6s 8s Th 3d 4d 9h Qd"}, upcard="9d", stock=["2h"], dealer=0)
    play(g, "pass", "pass", "stock")
    assert Action("big_gin") not in g.legal_actions()
    assert_illegal(g, Action("big_gin"), "all 11 cards")
