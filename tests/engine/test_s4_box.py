"""docs/rules.md §4 Gin in the Box: roles drawn by cards (ties redrawn), the box deals every
hand against the captain, the sitter advises, knock limit 10, individual scores, rotation
after each hand (box won / box lost / drawn), game to target_score."""

from __future__ import annotations

import random

import pytest
from enginekit import assert_illegal, hand_of, play, random_play, snapshot

from okgin import DRAW_STOCK, PASS, TAKE, Action, Game, IllegalAction, RuleSet, canonical_json, game_from_position, parse_card
from okgin.roles import draw_roles

BOX = RuleSet(variant="box")
CAPT_2 = "As 2s 3s 4h 5h 6h 9c 9d 9h 2c"  # knocks with 2 after drawing and throwing Kh
OTHER_78 = "Jc Qc Ks 7s 8s Ts 3d 4d 6d Qd"
CAPT_10 = "As 2s 3s 4h 5h 6h 9c 9d 9h Tc"
OTHER_5 = "Jc Qc Kc 7s 8s 9s 3d 4d 5d 5c"
OTHER_10 = "Jc Qc Kc 7s 8s 9s 3d 4d 5d Js"


def box_hand(knocker_cards, other_cards, roles=(0, 1, 2), knocker="captain", rules=BOX, **kw):
    """Box and captain play one hand; ``knocker`` (box or captain) draws Kh and knocks with it."""
    box, captain, _ = roles
    k_seat, o_seat = (captain, box) if knocker == "captain" else (box, captain)
    g = game_from_position(
        rules,
        hands={k_seat: knocker_cards, o_seat: other_cards},
        upcard="2h",
        stock=["Qh", "Kh"] if knocker == "box" else ["Kh"],
        roles=roles,
        **kw,
    )
    play(g, "pass", "pass")  # captain then box pass the upcard
    if knocker == "box":
        play(g, "stock", "discard Qh")  # the captain draws Qh and throws it
    play(g, "stock")
    return g, g.apply(Action.knock(parse_card("Kh")))


def _expected_order(rounds):
    """Recompute (box, captain, sitter) from the recorded draws: king high, ace low, ties
    redrawn among the tied players only."""
    it = iter(rounds)

    def order(seats):
        if len(seats) == 1:
            return seats
        rnd = dict(next(it))
        assert set(rnd) == set(seats), "a redraw must be among the tied players only"
        by_rank = {}
        for s, c in rnd.items():
            by_rank.setdefault(c % 13, []).append(s)
        out = []
        for r in sorted(by_rank, reverse=True):
            out += order(sorted(by_rank[r]))
        return out

    result = order([0, 1, 2])
    assert next(it, None) is None, "no draw may be left over"
    return tuple(result)


def test_s4_roles_are_drawn_by_cards_king_high_ace_low():
    for seed in range(200):
        g = Game(BOX, seed)
        rounds = [list(map(tuple, r)) for r in g.role_draws]
        assert g.roles == _expected_order(rounds)
        assert sorted(g.roles) == [0, 1, 2]
        first = dict(rounds[0])
        assert set(first) == {0, 1, 2} and len(set(first.values())) == 3  # three different cards


def test_s4_role_draw_ties_are_redrawn_among_the_tied():
    two_way = three_way = None
    for seed in range(6000):
        roles, rounds = draw_roles(str(seed))
        ranks = [c % 13 for _, c in rounds[0]]
        if len(set(ranks)) == 2 and two_way is None:
            two_way = seed
        if len(set(ranks)) == 1 and three_way is None:
            three_way = seed
        if two_way is not None and three_way is not None:
            break
    assert two_way is not None and three_way is not None
    for seed in (two_way, three_way):
        roles, rounds = draw_roles(str(seed))
        assert len(rounds) >= 2
        tied = {s for s, c in rounds[0] if [x % 13 for _, x in rounds[0]].count(c % 13) > 1}
        assert {s for s, _ in rounds[1]} == tied
        assert roles == _expected_order(rounds)
    g = Game(BOX, two_way)
    assert len(g.view(0).role_draws) >= 2  # the draws are public


def test_s4_box_deals_captain_has_the_first_offer_sitter_gets_no_cards():
    for seed in range(20):
        g = Game(BOX, seed)
        box, captain, sitter = g.roles
        assert g.hand.dealer == box and g.hand.nondealer == captain
        assert g.current_player == captain and g.legal_actions() == [TAKE, PASS]
        v = g.view(sitter)
        assert v.hand_sizes[sitter] == 0 and v.hand_sizes[box] == v.hand_sizes[captain] == 10
        assert [g.role_of(s) for s in (box, captain, sitter)] == ["box", "captain", "sitter"]
        assert v.roles[box] == "box" and v.roles[sitter] == "sitter"


def test_s4_the_sitter_never_acts():
    g = Game(BOX, 1)
    sitter = g.roles[2]
    assert_illegal(g, PASS, "sitter does not play", seat=sitter)


@pytest.mark.parametrize("upcard", ["Ah", "3h", "Kd"])
def test_s4_knock_limit_is_always_ten(upcard):
    g = game_from_position(BOX, hands={1: CAPT_2, 0: OTHER_78}, upcard=upcard, roles=(0, 1, 2))
    assert g.hand.knock_limit == 10


def test_s4_knock_limit_upcard_option_applies_the_oklahoma_limit():
    g = game_from_position(
        RuleSet(variant="box", knock_limit="upcard"), hands={1: CAPT_2, 0: OTHER_78}, upcard="3h", roles=(0, 1, 2)
    )
    assert g.hand.knock_limit == 3


def test_s4_box_won_box_stays_captain_and_sitter_swap():
    g, r = box_hand(CAPT_10, OTHER_5)  # captain 1 knocks with 10, the box (0) undercuts
    assert r.winner == 0 and r.outcome == "undercut"
    assert g.roles == (0, 2, 1) and g.hand.dealer == 0 and g.hand.nondealer == 2
    assert g.scores == [15, 0, 0]


def test_s4_box_wins_by_its_own_knock():
    g, r = box_hand(CAPT_2, OTHER_78, roles=(2, 0, 1), knocker="box")
    assert r.winner == 2 and r.knocker == 2
    assert g.roles == (2, 1, 0) and g.scores == [0, 0, 76]


def test_s4_box_lost_box_sits_out_captain_into_the_box_sitter_captains():
    g, r = box_hand(CAPT_2, OTHER_78, roles=(0, 1, 2))  # the captain wins
    assert r.winner == 1
    assert g.roles == (1, 2, 0)
    assert g.hand.dealer == 1 and g.hand.nondealer == 2 and g.current_player == 2
    assert g.scores == [0, 76, 0]
    assert g.view(0).hand_sizes == (0, 10, 10) and g.view(0).hand_of == 2


def test_s4_drawn_hand_roles_unchanged_box_deals_again():
    g = game_from_position(BOX, hands={1: CAPT_2, 0: OTHER_78}, upcard="Kd", roles=(0, 1, 2))
    play(g, "pass", "pass")
    while g.hand.number == 0:
        play(g, "stock")
        g.apply(Action.discard(g.hand.events[-1][2]))
    assert g.results[-1].outcome == "drawn"
    assert g.roles == (0, 1, 2) and g.hand.dealer == 0 and g.scores == [0, 0, 0]


def test_s4_unscored_tie_leaves_roles_unchanged():
    g, r = box_hand(CAPT_10, OTHER_10, rules=RuleSet(variant="box", tie_is_undercut=False))
    assert r.outcome == "tie" and g.roles == (0, 1, 2) and g.hand.dealer == 0


def test_s4_tie_is_an_undercut_by_default_in_the_box_too():
    g, r = box_hand(CAPT_10, OTHER_10)
    assert r.outcome == "undercut" and r.winner == 0 and g.roles == (0, 2, 1)


def test_s4_individual_scores_and_game_end_when_anyone_reaches_the_target():
    g, r = box_hand(CAPT_2, OTHER_78, roles=(0, 2, 1), scores=[50, 60, 30])
    assert r.winner == 2 and g.is_over and g.winner == 2 and g.scores == [50, 60, 106]
    assert g.final_scores()["winner"] == 2


def test_s4_spade_doubling_applies_in_the_box():
    g = game_from_position(
        RuleSet(variant="box", spade_upcard_doubles=True),
        hands={1: CAPT_2, 0: OTHER_78.replace("Ks", "Kd")},
        upcard="Ks",
        stock=["Kh"],
        roles=(0, 1, 2),
    )
    play(g, "pass", "pass", "stock")
    r = g.apply(Action.knock(parse_card("Kh")))
    assert r.doubled and r.points == 2 * 76


def test_s4_classic_bonuses_three_players_shutout_needs_both_others_at_zero():
    rules = RuleSet(variant="box", classic_bonuses=True)
    g, _ = box_hand(CAPT_2, OTHER_78, roles=(0, 1, 2), rules=rules, scores=[0, 30, 0], hands_won=[0, 1, 0])
    f = g.final_scores()
    assert f["shutout"] is True and f["classic_totals"] == [0, 2 * (106 + 100 + 50), 0]
    g, _ = box_hand(CAPT_2, OTHER_78, roles=(0, 1, 2), rules=rules, scores=[0, 30, 12], hands_won=[0, 1, 1])
    f = g.final_scores()
    assert f["shutout"] is False and f["classic_totals"] == [0, 106 + 100 + 50, 12 + 25]


# ------------------------------------------------------------------ advice


def _core(g):
    """The game without its advice: what advice must never change."""
    h = g.hand
    return canonical_json(
        {
            "legal": [a.to_wire() for a in g.legal_actions()],
            "current": g.current_player,
            "phase": h.phase,
            "hands": list(h.hands),
            "stock": list(h.stock),
            "pile": list(h.discard_pile),
            "scores": g.scores,
            "roles": list(g.roles),
            "box_view": g.view(g.roles[0]).to_wire(),
            "spectator": g.view(None).to_wire(),
            "actions": [e[2].to_wire() for e in g.log if e[0] == "action"],
        }
    )


def test_s4_advice_is_recorded_shown_to_captain_and_sitter_only_and_never_moves_the_game():
    g = Game(BOX, 11)
    box, captain, sitter = g.roles
    before = _core(g)
    g.advise(sitter, TAKE, "take it, it fits your run")
    g.advise(sitter, None, "or not")
    assert _core(g) == before
    for seat in (captain, sitter):
        adv = g.view(seat).advice
        assert [(a.seat, a.action, a.text) for a in adv] == [
            (sitter, TAKE, "take it, it fits your run"),
            (sitter, None, "or not"),
        ]
    assert g.view(box).advice == () and g.view(None).advice == ()
    assert g.full_view().advice != ()
    # the captain decides: it passes against the advice
    g.apply(PASS, seat=captain)
    rec = g.to_record()
    assert next(e for e in rec["entries"] if "advice" in e) == {
        "seat": sitter,
        "advice": {"kind": "take"},
        "text": "take it, it fits your run",
    }
    assert canonical_json(Game.from_record(rec).to_record()) == canonical_json(rec)


def test_s4_advice_shows_for_the_current_hand_only():
    g, _ = box_hand(CAPT_2, OTHER_78)
    assert g.view(g.roles[1]).advice == ()


def test_s4_advice_must_be_legal_for_the_captain_at_that_moment():
    g = Game(BOX, 11)
    _box, captain, sitter = g.roles
    before = snapshot(g)
    with pytest.raises(IllegalAction, match="not legal for the captain"):
        g.advise(sitter, DRAW_STOCK, "")
    assert snapshot(g) == before
    g.apply(PASS)  # captain passes: now the box is to act
    before = snapshot(g)
    with pytest.raises(IllegalAction, match="captain's turn"):
        g.advise(sitter, TAKE)
    assert snapshot(g) == before
    g.advise(sitter, None, "text alone is fine while the box thinks")
    assert g.view(captain).advice[-1].text == "text alone is fine while the box thinks"


@pytest.mark.parametrize(
    ("who", "action", "text", "msg"),
    [
        ("box", None, "hi", "only the player sitting out"),
        ("captain", None, "hi", "only the player sitting out"),
        ("sitter", None, "", "needs a suggested action, a text, or both"),
        ("sitter", None, "x" * 281, "at most 280"),
        ("sitter", None, "bell\x07", "control characters"),
    ],
)
def test_s4_bad_advice_is_refused_and_changes_nothing(who, action, text, msg):
    g = Game(BOX, 11)
    seat = dict(zip(("box", "captain", "sitter"), g.roles, strict=True))[who]
    before = snapshot(g)
    with pytest.raises(IllegalAction, match=msg):
        g.advise(seat, action, text)
    assert snapshot(g) == before


def test_s4_advice_only_in_the_box_game():
    g = Game(RuleSet(), 1)
    with pytest.raises(IllegalAction, match="only in Gin in the Box"):
        g.advise(0, None, "hello")


def test_s4_the_sitter_sees_the_captains_hand_and_draws_never_the_boxs():
    g = game_from_position(BOX, hands={1: CAPT_2, 0: OTHER_78}, upcard="Kd", stock=["Kh", "Qh"], roles=(0, 1, 2))
    v = g.view(2)
    assert v.hand_of == 1 and sorted(v.hand) == sorted(parse_card(c) for c in hand_of(g, 1))
    play(g, "pass", "pass", "stock")  # the captain draws Kh
    assert g.view(2).events[-1].card == parse_card("Kh")
    play(g, "discard Kh", "stock")  # the box draws Qh
    assert g.view(2).events[-1].card is None and g.view(1).events[-1].card is None
    assert g.view(0).events[-1].card == parse_card("Qh")


def test_s4_random_box_games_end_with_a_winner_and_valid_rotation():
    rng = random.Random(3)
    for seed in range(4):
        g = random_play(Game(RuleSet(variant="box", target_score=40), seed), rng)
        assert g.winner is not None and g.scores[g.winner] >= 40
        for r in g.results:
            assert r.winner is None or r.winner in (r.dealer, r.knocker, r.defender)
