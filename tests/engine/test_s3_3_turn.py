"""docs/rules.md §3.3 A normal turn: draw (stock or discard pile), then discard or knock; a
card taken from the discard pile may not be thrown back the same turn
(allow_discard_of_taken_card); a player is never obliged to knock."""

from __future__ import annotations

from enginekit import assert_illegal, hand_of, play

from okgin import Action, RuleSet, game_from_position, parse_card

ND = "As 2s 3s 4h 5h 6h 9c 9d 9h 2c"  # seat 1, non-dealer
DL = "Jc Qc Ks 7s 8s Ts 3d 4d 6d Qd"  # seat 0, dealer
GIN = "Ac 2c 3c 4c 5d 6d 7d 8d 9d Td"  # gin in ten cards
OTHER = "Js 2h Ks 7s 9s 3h 4s Qh 8c Jh"  # nothing melds, shares no card with GIN


def after_offer(**kw):
    """Both passed; seat 1 drew Kh and threw it; seat 0 to draw."""
    g = game_from_position(RuleSet(**kw), hands={1: ND, 0: DL}, upcard="5c", stock=["Kh", "8h", "2d", "Jh"], dealer=0)
    play(g, "pass", "pass", "stock", "discard Kh")
    return g


def test_s3_3_draw_from_the_stock_takes_its_top_card():
    g = after_offer()
    size = g.view(0).stock_size
    play(g, "stock")
    assert "8h" in hand_of(g, 0) and g.view(0).stock_size == size - 1
    assert g.view(0).phase == "discard" and len(g.view(0).hand) == 11


def test_s3_3_draw_from_the_discard_pile_takes_its_top_card():
    g = after_offer()
    play(g, "pile")
    assert "Kh" in hand_of(g, 0) and g.view(0).discard_pile == (parse_card("5c"),)
    assert g.view(0).taken_card == parse_card("Kh") and g.view(1).taken_card == parse_card("Kh")


def test_s3_3_then_discard_face_up_and_the_other_player_draws():
    g = after_offer()
    play(g, "stock", "discard 8h")
    assert g.view(1).discard_pile[-1] == parse_card("8h") and g.current_player == 1
    assert g.view(1).phase == "draw"


def test_s3_3_no_discard_before_drawing():
    g = after_offer()
    assert_illegal(g, Action.discard(parse_card("Qd")), "time to draw")
    assert_illegal(g, Action.knock(parse_card("Qd")), "time to draw")


def test_s3_3_no_second_draw():
    g = after_offer()
    play(g, "stock")
    assert_illegal(g, Action("draw_stock"), "you have drawn")
    assert_illegal(g, Action("draw_discard"), "you have drawn")


def test_s3_3_only_cards_in_hand_can_be_discarded():
    g = after_offer()
    play(g, "stock")
    assert_illegal(g, Action.discard(parse_card("Ah")), "Ah is not in your hand")


def test_s3_3_taken_card_may_not_be_thrown_back_by_default():
    g = after_offer()
    play(g, "pile")
    assert Action.discard(parse_card("Kh")) not in g.legal_actions()
    assert_illegal(g, Action.discard(parse_card("Kh")), "Kh was taken from the discard pile this turn", "may not be thrown back")
    play(g, "discard Qd")  # any other card is fine
    # next turn the rule no longer applies to Kh
    play(g, "stock", "discard 8h", "stock")
    assert Action.discard(parse_card("Kh")) in g.legal_actions()
    play(g, "discard Kh")


def test_s3_3_taken_card_rule_covers_the_knocks_face_down_discard():
    # docs/rules.md §3.3: the knock's face-down discard is a discard, so not the taken card.
    # Seat 0 holds gin in 10 cards and takes Kh from the pile: it may not knock throwing Kh.
    g = game_from_position(hands={1: OTHER, 0: GIN}, upcard="Tc", stock=["Kh"], dealer=0)
    play(g, "pass", "pass", "stock", "discard Kh", "pile")
    assert Action.knock(parse_card("Kh")) not in g.legal_actions()
    assert_illegal(g, Action.knock(parse_card("Kh")), "may not be thrown back")
    # throwing the Td (the run 5-9d stays) leaves Kh: 10 <= 10
    r = play(g, "knock Td")
    assert r is not None and r.knocker_deadwood == 10


def test_s3_3_allow_discard_of_taken_card_lets_it_go_back():
    g = after_offer(allow_discard_of_taken_card=True)
    play(g, "pile")
    assert Action.discard(parse_card("Kh")) in g.legal_actions()
    play(g, "discard Kh")
    assert g.view(1).discard_pile[-1] == parse_card("Kh")


def test_s3_3_allow_discard_of_taken_card_also_for_the_upcard_and_the_knock():
    g = game_from_position(RuleSet(allow_discard_of_taken_card=True), hands={1: GIN, 0: OTHER}, upcard="Kh", dealer=0)
    play(g, "take")
    assert Action.discard(parse_card("Kh")) in g.legal_actions()
    r = play(g, "knock Kh")
    assert r is not None and r.outcome == "gin"


def test_s3_3_never_obliged_to_knock():
    # Seat 1 could go gin by throwing the drawn Kh, and may still just discard.
    g = game_from_position(hands={1: GIN, 0: OTHER}, upcard="5c", stock=["Kh"], dealer=0)
    play(g, "pass", "pass", "stock")
    legal = g.legal_actions()
    assert Action.knock(parse_card("Kh")) in legal and Action.discard(parse_card("Kh")) in legal
    assert play(g, "discard Kh") is None and g.current_player == 0


def test_s3_3_legal_actions_in_the_discard_phase():
    g = after_offer()
    play(g, "pile")
    kinds = {(a.kind, a.card) for a in g.legal_actions()}
    hand = [parse_card(c) for c in hand_of(g, 0)]
    assert {("discard", c) for c in hand if c != parse_card("Kh")} <= kinds
    assert all(k in ("discard", "knock") for k, _ in kinds)
