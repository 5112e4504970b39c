"""docs/rules.md §5 Information: own hand, the public table, stock draws seen by the drawer
(and its sitting partner) only, nothing of the other hand or the stock until a knock lays
both hands out; a drawn hand reveals nothing; spectators see only public information
unless the table is opened with full visibility."""

from __future__ import annotations

import random

import pytest
from enginekit import check_views, play, random_action, rules_strategy
from hypothesis import given, settings
from hypothesis import strategies as st

from okgin import Game, RuleSet, View, game_from_position, parse_card, parse_cards

ND = "As 2s 3s 4h 5h 6h 9c 9d 9h 2c"  # seat 1
DL = "Jc Qc Ks 7s 8s Ts 3d 4d 6d Qd"  # seat 0


def fresh():
    return game_from_position(hands={1: ND, 0: DL}, upcard="5c", stock=["Kh", "8h", "2d"], dealer=0)


def test_s5_a_seat_sees_its_own_hand_and_not_the_other():
    g = fresh()
    assert sorted(g.view(1).hand) == sorted(parse_cards(ND)) and g.view(1).hand_of == 1
    assert sorted(g.view(0).hand) == sorted(parse_cards(DL)) and g.view(0).hand_of == 0
    for seat in (0, 1, None):
        v = g.view(seat)
        assert v.all_hands is None and v.stock is None
        assert "all_hands" not in v.to_wire() and "stock" not in v.to_wire()


def test_s5_public_table_for_everyone():
    g = fresh()
    play(g, "pass", "pass", "stock", "discard 2c")
    for seat in (0, 1, None):
        v = g.view(seat)
        assert v.upcard == parse_card("5c") and v.knock_limit == 5
        assert v.discard_pile == tuple(parse_cards("5c 2c")) and v.top_discard == parse_card("2c")
        assert v.stock_size == 30 and v.hand_sizes == (10, 10)
        assert v.scores == (0, 0) and v.roles == ("dealer", "nondealer") and v.to_act == 0


def test_s5_stock_draw_seen_only_by_the_drawer():
    g = fresh()
    play(g, "pass", "pass", "stock")
    assert g.view(1).events[-1].card == parse_card("Kh")
    assert g.view(0).events[-1].card is None and g.view(None).events[-1].card is None
    assert g.view(0).events[-1].kind == "draw_stock"  # that a draw happened is public
    assert g.full_view().events[-1].card == parse_card("Kh")


def test_s5_cards_taken_from_the_pile_are_public_until_thrown():
    g = fresh()
    play(g, "take")
    for seat in (0, 1, None):
        assert g.view(seat).known_cards == ((), (parse_card("5c"),))
        assert g.view(seat).events[-1].card == parse_card("5c")
    play(g, "discard 2c", "pile", "discard Qd")
    for seat in (0, 1, None):
        assert g.view(seat).known_cards == ((parse_card("2c"),), (parse_card("5c"),))
    play(g, "stock", "discard 5c")  # seat 1 throws the 5c it took: no longer known in its hand
    for seat in (0, 1, None):
        assert g.view(seat).known_cards == ((parse_card("2c"),), ())


def test_s5_a_knock_lays_both_hands_out_with_the_face_down_card():
    g = fresh()
    play(g, "pass", "pass", "stock")
    r = play(g, "knock Kh")
    assert r is not None
    for seat in (0, 1, None):
        lr = g.view(seat).last_result
        assert lr.knock_discard == parse_card("Kh")
        shown_k = {c for m in lr.knocker_layout.melds for c in m} | set(lr.knocker_layout.deadwood_cards)
        d = lr.defender_layout
        shown_d = {c for m in d.arrangement.melds for c in m} | set(d.arrangement.deadwood_cards) | {c for c, _ in d.layoffs}
        assert shown_k == set(parse_cards(ND)) and shown_d == set(parse_cards(DL))
    # and the next hand's cards are private again
    assert g.view(0).hand != g.view(1).hand and g.view(None).hand is None


def test_s5_spectators_see_no_hand():
    g = fresh()
    v = g.view(None)
    assert v.seat is None and v.hand is None and v.hand_of is None


def test_s5_full_visibility_feed_sees_everything():
    g = fresh()
    v = g.full_view()
    assert sorted(v.all_hands[1]) == sorted(parse_cards(ND)) and sorted(v.all_hands[0]) == sorted(parse_cards(DL))
    assert v.stock[-1] == parse_card("Kh") and len(v.stock) == 31
    assert View.from_wire(v.to_wire()) == v


def test_s5_box_advice_is_private_to_the_team():
    g = Game(RuleSet(variant="box"), 5)
    box, captain, sitter = g.roles
    g.advise(sitter, None, "pass")
    assert g.view(captain).advice and g.view(sitter).advice
    assert not g.view(box).advice and not g.view(None).advice
    assert "pass" not in str(g.view(box).to_wire()["advice"])


def test_s5_views_round_trip_through_the_wire():
    g = fresh()
    play(g, "take", "discard 2c", "stock")
    for seat in (0, 1, None):
        v = g.view(seat)
        assert View.from_wire(v.to_wire()) == v


@pytest.mark.parametrize("bad", [2, -1, 3])
def test_s5_no_view_for_a_seat_that_does_not_exist(bad):
    with pytest.raises(ValueError, match="no seat"):
        fresh().view(bad)


# ------------------------------------------------------------------ properties


@settings(max_examples=30)
@given(rules_strategy(), st.integers(0, 10**9), st.sampled_from([0.0, 0.3]))
def test_s5_property_no_view_ever_holds_a_hidden_card(rules, seed, knock_bias):
    """After every action of random play, every seat's and the spectator's view holds only
    its own hand (the captain's for the sitter), public cards and its own stock draws."""
    g = Game(rules, seed)
    rng = random.Random(seed)
    check_views(g)
    for _ in range(200):
        if g.is_over:
            break
        if g.roles is not None and g.current_player == g.roles[1] and rng.random() < 0.3:
            g.advise(g.roles[2], rng.choice([None, *g.legal_actions()]), "advice")
        g.apply(random_action(g, rng, knock_bias, greedy=0.5))
        check_views(g)


# ------------------------------------------------------------ the view of an ended hand
def _play_to_hand_end(g: Game, rng: random.Random) -> Game:
    """Play at random up to (not including) the action that ends the current hand; return
    a copy of the game just before that action, and apply it to ``g``."""
    number = g.hand_number
    while True:
        before = g.copy()
        seat = g.current_player
        assert seat is not None
        if g.apply(rng.choice(g.legal_actions()), seat=seat) is not None or g.hand_number != number:
            return before


@pytest.mark.parametrize("variant", ["oklahoma", "box"])
@settings(max_examples=40)
@given(seed=st.integers(0, 10**9), hands=st.integers(1, 3))
def test_hand_end_view_is_the_hand_as_it_ended(variant: str, seed: int, hands: int) -> None:
    """``Game.hand_end_view`` (for environments whose episode is one hand) shows each seat
    exactly what ``view`` shows when that same hand ends the game: the oracle is a copy
    of the game taken before the hand's last action, whose rules make that hand the last."""
    rng = random.Random(seed)
    g = Game(RuleSet(variant=variant, target_score=100000), seed=seed)
    assert all(g.hand_end_view(s) is None for s in range(g.num_seats))
    for _ in range(hands):
        before = _play_to_hand_end(g, rng)
        if g.is_over:
            break
        last = before.copy()
        last.rules = before.rules.with_options(target_score=1, max_hands=len(before.results) + 1)
        last.apply(g.log[-1][2], seat=g.log[-1][1])
        assert last.is_over and g.hand_number == last.hand_number + 1
        for s in [*range(g.num_seats), None]:
            got, want = g.hand_end_view(s), last.view(s)
            assert got is not None
            assert got.phase == "over" and want.phase == "game_over"
            same = ("seat", "hand_number", "to_act", "dealer", "nondealer", "roles", "hand", "hand_of", "upcard",
                    "knock_limit", "doubled", "discard_pile", "stock_size", "hand_sizes", "known_cards", "taken_card",
                    "events", "scores", "hands_won", "last_result", "advice", "role_draws")
            for name in same:
                assert getattr(got, name) == getattr(want, name), name
        # The current view is the new hand's, untouched by the ended one.
        assert g.view(0).hand_number == g.hand_number and g.view(0).phase != "over"
