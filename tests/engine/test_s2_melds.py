"""docs/rules.md §2 Melds, deadwood: sets, runs (ace low), one meld per card, least deadwood."""

from __future__ import annotations

import pytest
from enginekit import brute_deadwood, cards, names, plain_is_meld
from hypothesis import given, settings
from hypothesis import strategies as st

from okgin import best_melds, deadwood, is_meld, is_run, is_set, mask_of
from okgin.cards import CARD_VALUES
from okgin.melds import deadwood_after_discard_mask, min_arrangements_mask, validate_arrangement


@pytest.mark.parametrize("meld", ["7c 7d 7h", "7c 7d 7h 7s", "Kc Kd Ks", "Ac Ah As"])
def test_s2_set_is_three_or_four_of_a_rank(meld):
    assert is_set(cards(meld)) and is_meld(cards(meld))


@pytest.mark.parametrize("not_set", ["7c 7d", "7c 7d 8h", "7c", ""])
def test_s2_not_a_set(not_set):
    assert not is_set(cards(not_set))


@pytest.mark.parametrize("run", ["As 2s 3s", "5h 6h 7h 8h", "Jd Qd Kd", "Ac 2c 3c 4c 5c 6c 7c 8c 9c Tc Jc Qc Kc", "3h 5h 4h"])
def test_s2_run_is_three_or_more_consecutive_of_a_suit(run):
    assert is_run(cards(run)) and is_meld(cards(run))


@pytest.mark.parametrize(
    ("not_run", "why"),
    [
        ("Qs Ks As", "ace is low: Q-K-A is not a run"),
        ("Ks As 2s", "K-A-2 is not a run"),
        ("5h 6h 8h", "gap"),
        ("5h 6h 7d", "two suits"),
        ("5h 6h", "too short"),
    ],
)
def test_s2_not_a_run(not_run, why):
    assert not is_run(cards(not_run)), why
    assert not is_meld(cards(not_run))


def test_s2_ace_low_in_deadwood():
    assert deadwood(cards("As 2s 3s")) == 0
    assert deadwood(cards("Qs Ks As")) == 21
    assert deadwood(cards("Ks As 2s")) == 13


def test_s2_a_card_belongs_to_at_most_one_meld():
    # 9h would complete both the run 7-8-9h and the set of nines: only one may have it.
    hand = cards("7h 8h 9h 9c 9d")
    assert deadwood(hand) == 15  # set 9c 9d 9h, 7h 8h left over (run + set would be 0)
    with pytest.raises(ValueError, match="two melds"):
        validate_arrangement(mask_of(hand), [cards("7h 8h 9h"), cards("9c 9d 9h")])


@pytest.mark.parametrize(
    ("hand", "dw"),
    [
        ("", 0),
        ("Kd", 10),
        ("As 2s 3s 7h 7d 7c Kd Qd 9c 2h", 31),
        ("As 2s 3s 4s 5s 6s 7s 8s 9s Ts", 0),  # gin in one run
        ("Ac Ad Ah As 2c 2d 2h 3c 3d 3h", 0),  # gin in sets
        ("4h 5h 6h 7h 7s 7c Kd", 10),  # 7h goes to the set: 4-5-6h + 7c 7h 7s
        ("4h 5h 6h 7h 8h 8c 8d 8s 3d", 3),  # 8h: run 4-8h and set 8c 8d 8s
        ("5h 6h 7h 7c 7d 5c 5d", 6),  # run 5-6-7h leaves 5c 5d 7c 7d = 24; the two sets leave 6h
        ("Ac 2c 3c 4c 5c 6c 7c 8c 9c Tc Jc", 0),  # 11 cards
        ("Kc Kd Kh Ks Qc Qd Qh Qs Jc Jd Jh", 0),
        ("2c 4d 6h 8s Tc Qd Kh 3s 5c 7d 9h", 74),  # nothing melds: every card counts
    ],
)
def test_s2_deadwood_is_the_least_over_all_arrangements(hand, dw):
    assert deadwood(cards(hand)) == dw
    a = best_melds(cards(hand))
    assert a.deadwood == dw
    # the arrangement is real: valid melds, disjoint, covering the hand with the deadwood
    v = validate_arrangement(mask_of(cards(hand)), a.melds)
    assert v.deadwood == dw and set(v.deadwood_cards) == set(a.deadwood_cards)


def test_s2_gin_is_deadwood_zero_with_ten_cards():
    hand = cards("As 2s 3s 4s 7h 7d 7c Kd Kh Ks")
    assert len(hand) == 10 and deadwood(hand) == 0


def test_s2_deadwood_accepts_strings_and_rejects_duplicates_and_bad_cards():
    assert deadwood(["5h", "6h", "7h", "Kc"]) == 10
    with pytest.raises(ValueError, match="twice"):
        deadwood(["5h", "5h"])
    with pytest.raises(ValueError, match="'5x'"):
        deadwood(["5x"])
    with pytest.raises(ValueError):
        deadwood([52])
    with pytest.raises(ValueError, match="bool"):
        deadwood([True, 5, 6])
    assert deadwood(c for c in cards("5h 6h 7h Kc")) == 10  # any iterable
    assert deadwood(("5h", 5 + 26, "7h")) == 0  # indices and strings mixed (31 = 6h)


def test_s2_eleven_cards_while_deciding_what_to_throw():
    hand = mask_of(cards("As 2s 3s 4s 7h 7d 7c Kd Kh Ks Qc"))
    dw, best = deadwood_after_discard_mask(hand)
    assert dw == 0 and names(best) == ["Qc"]
    dw, best = deadwood_after_discard_mask(mask_of(cards("As 2s 3s 4s 7h 7d 7c Kd Kh Qs 9c")))
    assert dw == 29 and names(best) == ["Kd", "Kh", "Qs"]


def test_s2_all_least_arrangements_are_listed():
    # 5h can sit in the run 4-5-6h or in the set of fives: deadwood 10 both ways.
    arrs = min_arrangements_mask(mask_of(cards("4h 5h 6h 5c 5d 9s Ts Js Qs Ks")))
    assert {a.deadwood for a in arrs} == {10}
    assert {tuple(names(a.deadwood_cards)) for a in arrs} == {("5c", "5d"), ("4h", "6h")}


@pytest.mark.parametrize(
    ("melds", "msg"),
    [
        ([["7h", "8h", "Th"]], "neither a set"),
        ([["7h", "8h", "9h", "9c"]], "neither a set"),
        ([["Ah", "2h", "3h"]], "not in the hand"),
        ([["7h", "8h", "9h"], ["9c", "9d", "9h"]], "two melds"),
    ],
)
def test_s2_validate_arrangement_says_why(melds, msg):
    hand = mask_of(cards("7h 8h 9h 9c 9d Kd"))
    with pytest.raises(ValueError, match=msg):
        validate_arrangement(hand, [cards(" ".join(m)) for m in melds])


def test_s2_validate_arrangement_counts_the_rest_as_deadwood():
    a = validate_arrangement(mask_of(cards("7h 8h 9h 9c 9d Kd")), [cards("7h 8h 9h")])
    assert a.deadwood == 28 and names(a.deadwood_cards) == ["9c", "9d", "Kd"]


# ------------------------------------------------------------------ properties

any_hand = st.lists(st.integers(0, 51), unique=True, max_size=11)
# Hands drawn from 3 suits x 5 ranks are dense in sets, runs and overlaps between them.
dense_hand = st.lists(
    st.sampled_from([s * 13 + r for s in (0, 2, 3) for r in (0, 1, 2, 3, 4, 9, 10, 11, 12)]), unique=True, max_size=11
)


@settings(max_examples=400)
@given(st.one_of(any_hand, dense_hand))
def test_s2_property_deadwood_equals_brute_force(hand):
    dw = deadwood(hand)
    assert dw == brute_deadwood(hand)
    a = best_melds(hand)
    assert a.deadwood == dw
    assert all(plain_is_meld(m) for m in a.melds)
    laid = [c for m in a.melds for c in m] + list(a.deadwood_cards)
    assert sorted(laid) == sorted(hand)  # every card once: in one meld or in the deadwood
    assert sum(CARD_VALUES[c] for c in a.deadwood_cards) == dw


@settings(max_examples=150)
@given(st.one_of(st.lists(st.integers(0, 51), unique=True, min_size=11, max_size=11), dense_hand.filter(lambda h: len(h) == 11)))
def test_s2_property_eleven_cards_least_deadwood_after_a_discard(hand):
    dw, best = deadwood_after_discard_mask(mask_of(hand))
    each = {c: brute_deadwood([x for x in hand if x != c]) for c in hand}
    assert dw == min(each.values())
    assert sorted(best) == sorted(c for c, v in each.items() if v == dw)


@settings(max_examples=150)
@given(st.one_of(any_hand, dense_hand))
def test_s2_property_every_least_arrangement_is_valid_and_least(hand):
    arrs = min_arrangements_mask(mask_of(hand))
    assert arrs
    for a in arrs:
        v = validate_arrangement(mask_of(hand), a.melds)
        assert v.deadwood == a.deadwood == deadwood(hand)
