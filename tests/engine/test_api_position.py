"""The test/analysis facility ``game_from_position``: positions are validated, and the
engine plays on from them exactly as from a dealt hand."""

from __future__ import annotations

import pytest
from enginekit import all_52, hand_of, play

from okgin import RuleSet, game_from_position, parse_card
from okgin.rng import SeedStream

A = "As 2s 3s 4h 5h 6h 9c 9d 9h 2c"
B = "Jc Qc Ks 7s 8s Ts 3d 4d 6d Qd"


def test_position_sets_hands_upcard_stock_dealer_scores():
    g = game_from_position(hands={1: A, 0: B}, upcard="Kd", stock=["Kh", "2h"], dealer=0, scores=[3, 4], hands_won=[1, 0])
    assert hand_of(g, 1) == sorted(A.split()) and hand_of(g, 0) == sorted(B.split())
    assert g.hand.upcard == parse_card("Kd") and g.hand.stock[-2:] == [parse_card("2h"), parse_card("Kh")]
    assert len(g.hand.stock) == 31 and all_52(g)
    assert g.hand.dealer == 0 and g.current_player == 1 and g.scores == [3, 4] and g.hands_won == [1, 0]
    play(g, "pass", "pass", "stock")
    assert "Kh" in hand_of(g, 1)


def test_position_box_roles_and_sequence_hands():
    g = game_from_position(RuleSet(variant="box"), hands=[B, [], A], upcard="Kd", roles=(0, 2, 1))
    assert g.roles == (0, 2, 1) and g.hand.dealer == 0 and g.current_player == 2
    assert g.role_draws == [] and g.view(1).hand_of == 2


def test_position_then_the_seed_deals_the_next_hands():
    g = game_from_position(hands={1: A, 0: B}, upcard="Kd", stock=["Kh"], dealer=0, seed=9)
    play(g, "pass", "pass", "stock", "knock Kh")
    assert g.hand.number == 1 and g.hand.dealer == 1  # seat 1 won, deals hand 1 from the seed
    deck = SeedStream("9", "deal/1").shuffle(list(range(52)))
    assert sorted(g.full_view().all_hands[0]) == sorted(deck[:10])
    assert g.hand.upcard == deck[20] and all_52(g)


@pytest.mark.parametrize(
    ("kwargs", "msg"),
    [
        ({"hands": {1: A, 0: B.replace("Qd", "As")}}, "placed twice: As"),
        ({"hands": {1: A, 0: B}, "stock": ["Kd"]}, "placed twice: Kd"),
        ({"hands": {1: A, 0: "Jc Qc"}}, "seat 0 must hold 10 cards, not 2"),
        ({"hands": {1: A}}, "seat 0 must hold 10 cards, not 0"),
        ({"hands": {1: A, 0: B, 2: "Ah"}}, "no seat 2"),
        ({"hands": {1: A, 0: B}, "dealer": 2}, "dealer must be seat 0 or 1"),
        ({"hands": {1: A, 0: B}, "roles": (0, 1, 2)}, "roles exist only in Gin in the Box"),
        ({"hands": {1: A, 0: B}, "scores": [1]}, "scores needs 2 numbers"),
        ({"hands": {1: A, 0: "Jc Qc Ks 7s 8s Ts 3d 4d 6d Zz"}}, "'Zz'"),
    ],
)
def test_position_refuses_impossible_positions(kwargs, msg):
    with pytest.raises(ValueError, match=msg):
        game_from_position(upcard="Kd", **kwargs)


@pytest.mark.parametrize(
    ("kwargs", "msg"),
    [
        ({"hands": {0: B, 1: A, 2: "Ah"}}, "sits out this hand"),
        ({"hands": {0: B, 1: A}, "dealer": 0}, "the box deals"),
        ({"hands": {0: B, 1: A}, "roles": (0, 1, 1)}, "roles must be the seats"),
    ],
)
def test_position_refuses_impossible_box_positions(kwargs, msg):
    with pytest.raises(ValueError, match=msg):
        game_from_position(RuleSet(variant="box"), upcard="Kd", **kwargs)
