"""docs/rules.md §1 Cards: one 52-card deck, ace always low, values A=1, 2-10 face, J/Q/K=10."""

from __future__ import annotations

import random

import pytest
from enginekit import play_checked, rules_strategy
from hypothesis import given, settings
from hypothesis import strategies as st

from okgin import Game, card_str, cards_of, mask_of, parse_card, parse_cards, pretty, value
from okgin.cards import RANKS, SUITS, make_card, rank_of, suit_of, to_card


def test_s1_one_deck_of_52_distinct_cards_in_the_wire_form():
    names = [card_str(c) for c in range(52)]
    assert len(set(names)) == 52
    assert {n[0] for n in names} == set("A23456789TJQK")
    assert {n[1] for n in names} == set("cdhs")
    for c in range(52):
        assert parse_card(card_str(c)) == c
        assert make_card(rank_of(c), suit_of(c)) == c


@pytest.mark.parametrize(("rank", "points"), list(zip(RANKS, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10], strict=True)))
def test_s1_card_values(rank, points):
    for suit in SUITS:
        assert value(parse_card(rank + suit)) == points


def test_s1_ace_is_low_rank_zero_and_king_is_the_top():
    assert rank_of(parse_card("As")) == 0
    assert rank_of(parse_card("Ks")) == 12
    assert value(parse_card("Ah")) == 1


@pytest.mark.parametrize(
    ("text", "card"), [("As", "As"), ("td", "Td"), ("10h", "Th"), (" 7c ", "7c"), ("kS", "Ks"), ("jd", "Jd")]
)
def test_s1_parse_accepts_the_usual_spellings(text, card):
    assert card_str(parse_card(text)) == card


@pytest.mark.parametrize("bad", ["", "A", "Ass", "1s", "Zs", "Ax", "11h", "0s", "??"])
def test_s1_bad_card_string_raises_valueerror_naming_it(bad):
    with pytest.raises(ValueError) as e:
        parse_card(bad)
    assert repr(bad) in str(e.value)


@pytest.mark.parametrize("bad", [None, 5, 2.0, ["As"]])
def test_s1_parse_card_rejects_non_strings(bad):
    with pytest.raises(ValueError, match="string"):
        parse_card(bad)


@pytest.mark.parametrize("bad", [-1, 52, True, 3.0, "Xx"])
def test_s1_to_card_rejects_what_is_not_a_card(bad):
    with pytest.raises(ValueError):
        to_card(bad)


def test_s1_card_str_rejects_indices_outside_the_deck():
    for bad in (-1, 52, "As"):
        with pytest.raises(ValueError):
            card_str(bad)


def test_s1_parse_cards_takes_lists_and_strings():
    assert parse_cards("As, 2s 3s") == parse_cards(["As", "2s", "3s"]) == [39, 40, 41]
    assert parse_cards([0, "Kc"]) == [0, 12]


def test_s1_masks_round_trip():
    cs = parse_cards("As Td 7h 2c Kc")
    m = mask_of(cs)
    assert m.bit_count() == 5
    assert cards_of(m) == sorted(cs)
    assert cards_of(0) == []
    assert cards_of((1 << 52) - 1) == list(range(52))


def test_s1_pretty_forms_for_humans():
    assert pretty(parse_card("Th")) == "10♥"
    assert pretty(parse_card("Th"), ascii_only=True) == "10H"
    assert pretty(parse_card("As"), ascii_only=True) == "AS"


# ------------------------------------------------------------------ properties


@settings(max_examples=60)
@given(rules_strategy(), st.integers(0, 10**9), st.sampled_from([0.0, 0.3, 1.0]))
def test_s1_property_all_52_cards_always_accounted_for(rules, seed, knock_bias):
    """One deck: after every action each card is in exactly one place (a hand, the stock,
    the discard pile or the knocker's face-down discard), and hands hold 10 cards (11
    while discarding), the sitter none."""
    play_checked(Game(rules, seed), random.Random(seed), 400, knock_bias, results=False)
