"""docs/rules.md §3.6 Drawn hand: a discard that leaves 2 cards in the stock ends the hand with
no score; the same dealer deals again; the stock is never drawn below 2."""

from __future__ import annotations

import pytest
from enginekit import all_52, play

from okgin import Action, RuleSet, game_from_position

ND = "As 2s 3s 4h 5h 6h 9c 9d 9h 2c"  # seat 1 can knock with 2 whenever it likes
DL = "Jc Qc Ks 7s 8s Ts 3d 4d 6d Qd"


def draw_and_throw_until(g, stock_left: int) -> None:
    """Both players draw from the stock and throw the drawn card until ``stock_left``."""
    while g.hand.phase != "over" and len(g.hand.stock) > stock_left:
        if g.hand.phase == "offer":
            play(g, "pass")
            continue
        number = g.hand.number
        play(g, "stock")
        drawn = g.hand.events[-1][2]
        g.apply(Action.discard(drawn))
        if g.hand.number != number:
            return


@pytest.mark.parametrize("dealer", [0, 1])
def test_s3_6_hand_is_drawn_when_a_discard_leaves_two_in_the_stock(dealer):
    g = game_from_position(hands={1: ND, 0: DL}, upcard="Kd", dealer=dealer)
    sizes = []
    while g.hand.number == 0:
        sizes.append(len(g.hand.stock))
        assert all_52(g)
        if g.hand.phase == "offer":
            play(g, "pass")
            continue
        play(g, "stock")
        drawn = g.hand.events[-1][2]
        g.apply(Action.discard(drawn))
    assert min(sizes) == 3  # the last draw took it from 3 to 2; no draw ever started at 2
    r = g.results[0]
    assert r.outcome == "drawn" and r.winner is None and r.points == 0
    assert g.scores == [0, 0] and g.hands_won == [0, 0]
    assert g.hand.dealer == dealer and g.hand.number == 1  # same dealer deals again
    assert len(g.hand.stock) == 31


def test_s3_6_exactly_29_stock_draws_then_the_hand_is_drawn():
    g = game_from_position(hands={1: ND, 0: DL}, upcard="Kd", dealer=0)
    play(g, "pass", "pass")
    draws = 0
    while g.hand.number == 0:
        play(g, "stock")
        draws += 1
        assert len(g.hand.stock) >= 2
        g.apply(Action.discard(g.hand.events[-1][2]))
    assert draws == 29


def test_s3_6_a_knock_on_the_last_draw_still_counts():
    g = game_from_position(hands={1: ND, 0: DL}, upcard="Kd", dealer=0)
    draw_and_throw_until(g, 3)
    assert len(g.hand.stock) == 3 and g.hand.phase == "draw"
    # play on until it is seat 1's turn with 3 cards left
    if g.current_player != 1:
        play(g, "pile")
        g.apply(Action.discard(next(a.card for a in g.legal_actions() if a.kind == "discard")))
    assert g.current_player == 1 and len(g.hand.stock) == 3
    play(g, "stock")
    assert len(g.hand.stock) == 2
    drawn = g.hand.events[-1][2]
    r = g.apply(Action.knock(drawn))  # seat 1 keeps ND: deadwood 2
    assert r is not None and r.outcome == "knock" and r.winner == 1


def test_s3_6_drawing_from_the_pile_does_not_shrink_the_stock():
    g = game_from_position(hands={1: ND, 0: DL}, upcard="Kd", dealer=0)
    draw_and_throw_until(g, 3)
    for _ in range(6):  # both keep taking the discard back: the hand goes on
        top = g.hand.discard_pile[-1]
        play(g, "pile")
        g.apply(Action.discard(next(a.card for a in g.legal_actions() if a.kind == "discard" and a.card != top)))
        assert len(g.hand.stock) == 3 and g.hand.number == 0


def test_s3_6_a_drawn_hand_reveals_nothing():
    g = game_from_position(hands={1: ND, 0: DL}, upcard="Kd", dealer=0)
    draw_and_throw_until(g, 2)
    assert g.hand.number == 1
    for seat in (0, 1, None):
        lr = g.view(seat).last_result.to_wire()
        assert lr["outcome"] == "drawn"
        assert lr["knocker_layout"] is None and lr["defender_layout"] is None and lr["knock_discard"] is None


def test_s3_6_drawn_hand_keeps_the_dealer_in_the_whole_game_loop():
    rules = RuleSet()
    g = game_from_position(rules, hands={1: ND, 0: DL}, upcard="Kd", dealer=1)
    draw_and_throw_until(g, 2)
    assert g.results[-1].outcome == "drawn" and g.results[-1].dealer == 1 and g.hand.dealer == 1
