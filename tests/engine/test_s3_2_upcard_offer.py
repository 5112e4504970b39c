"""docs/rules.md §3.2 The first turn: the upcard offer, in every branch."""

from __future__ import annotations

import pytest
from enginekit import assert_illegal, hand_of, play

from okgin import DRAW_DISCARD, DRAW_STOCK, PASS, TAKE, Action, RuleSet, game_from_position, parse_card

# Seat 0 deals, so seat 1 (the non-dealer) has the first offer.
ND = "As 2s 3s 4h 5h 6h 9c 9d 9h 2c"
DL = "Jc Qc Ks 7s 8s Ts 3d 4d 6d Qd"


def fresh(**kw):
    return game_from_position(RuleSet(**kw), hands={1: ND, 0: DL}, upcard="5c", stock=["Kh", "8h", "2d"], dealer=0)


def test_s3_2_offer_goes_to_the_non_dealer_first_take_or_pass_only():
    g = fresh()
    assert g.current_player == 1 and g.view(1).phase == "offer"
    assert g.legal_actions() == [TAKE, PASS]
    assert_illegal(g, DRAW_STOCK, "upcard is on offer")
    assert_illegal(g, DRAW_DISCARD, "upcard is on offer")
    assert_illegal(g, Action.discard(parse_card("2c")), "upcard is on offer")
    assert_illegal(g, TAKE, "not seat 0's turn", seat=0)


def test_s3_2_non_dealer_takes_and_completes_the_turn_then_dealer_plays_normally():
    g = fresh()
    play(g, "take")
    assert "5c" in hand_of(g, 1) and g.view(1).phase == "discard" and g.current_player == 1
    assert g.view(0).discard_pile == ()
    # 3.3: the taken upcard may not go straight back
    assert_illegal(g, Action.discard(parse_card("5c")), "taken from the discard pile")
    play(g, "discard 2c")
    assert g.current_player == 0 and g.view(0).phase == "draw"
    assert g.legal_actions() == [DRAW_STOCK, DRAW_DISCARD]
    play(g, "pile")  # the dealer may take the 2c just thrown
    assert "2c" in hand_of(g, 0)


def test_s3_2_non_dealer_passes_dealer_takes_completes_turn_then_non_dealer_plays_normally():
    g = fresh()
    play(g, "pass")
    assert g.current_player == 0 and g.view(0).phase == "offer"
    assert g.legal_actions() == [TAKE, PASS]
    play(g, "take")
    assert "5c" in hand_of(g, 0) and g.current_player == 0
    assert_illegal(g, Action.discard(parse_card("5c")), "may not be thrown back")
    play(g, "discard Qd")
    assert g.current_player == 1 and g.legal_actions() == [DRAW_STOCK, DRAW_DISCARD]
    play(g, "stock")
    assert "Kh" in hand_of(g, 1)


def test_s3_2_both_pass_non_dealer_must_draw_from_the_stock():
    g = fresh()
    play(g, "pass", "pass")
    assert g.current_player == 1 and g.view(1).phase == "draw"
    assert g.legal_actions() == [DRAW_STOCK]
    assert_illegal(g, DRAW_DISCARD, "both players passed", "stock")
    assert_illegal(g, TAKE, "time to draw")
    play(g, "stock")
    assert "Kh" in hand_of(g, 1) and g.view(1).stock_size == 30
    play(g, "discard Kh")
    # play goes on normally: the dealer may draw from either pile
    assert g.current_player == 0 and g.legal_actions() == [DRAW_STOCK, DRAW_DISCARD]
    assert g.view(0).discard_pile == (parse_card("5c"), parse_card("Kh"))


def test_s3_2_both_passed_upcard_stays_under_later_discards():
    g = fresh()
    play(g, "pass", "pass", "stock", "discard Kh", "pile")
    assert "Kh" in hand_of(g, 0) and g.view(0).discard_pile == (parse_card("5c"),)
    play(g, "discard Qd")
    play(g, "stock", "discard 8h")
    play(g, "stock")  # the dealer draws 2d
    assert "2d" in hand_of(g, 0)


@pytest.mark.parametrize("first_passes", [False, True])
def test_s3_2_the_taker_may_knock_at_once(first_passes):
    # The taker (non-dealer, or dealer after a pass) takes 3c and knocks with it.
    nd = "As 2s 3s 4h 5h 6h 9c 9d 9h Kc" if not first_passes else DL
    dl = DL if not first_passes else "As 2s 3s 4h 5h 6h 9c 9d 9h Kc"
    g = game_from_position(hands={1: nd, 0: dl}, upcard="3c", dealer=0)
    taker = 0 if first_passes else 1
    if first_passes:
        play(g, "pass")
    play(g, "take")
    assert Action.knock(parse_card("Kc")) in g.legal_actions()
    r = play(g, "knock Kc")
    assert r is not None and r.knocker == taker and r.knocker_deadwood == 3 and r.knock_limit == 3
    assert r.knock_discard == parse_card("Kc")


def test_s3_2_passes_are_public_events():
    g = fresh()
    play(g, "pass", "pass")
    for seat in (0, 1, None):
        assert [(e.seat, e.kind) for e in g.view(seat).events] == [(1, "pass"), (0, "pass")]
