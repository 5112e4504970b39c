"""docs/rules.md §3.7 Winning the game: hands until a cumulative score reaches target_score;
classic_bonuses (game bonus, box bonus per hand won, shutout doubling) reported beside the
plain scores. Also the engine's forfeit and abandon endings (docs/rules.md §7)."""

from __future__ import annotations

import random

import pytest
from enginekit import assert_illegal, knock_position, random_play

from okgin import PASS, TAKE, Game, IllegalAction, RuleSet

KNOCKER_2 = "As 2s 3s 4h 5h 6h 9c 9d 9h 2c"  # seat 1 knocks with 2 after drawing Kh
DEF_78 = "Jc Qc Ks 7s 8s Ts 3d 4d 6d Qd"  # seat 0: 78, so seat 1 scores 76
KNOCKER_10 = "As 2s 3s 4h 5h 6h 9c 9d 9h Tc"
DEF_5 = "Jc Qc Kc 7s 8s 9s 3d 4d 5d 5c"  # seat 0 undercuts seat 1's 10: 15


def finish(knocker=KNOCKER_2, defender=DEF_78, rules=None, **kw):
    return knock_position(knocker, defender, draw="Kh", knock="Kh", rules=rules, **kw)


def test_s3_7_game_goes_on_below_the_target():
    g, r = finish()
    assert r.points == 76 and not g.is_over and g.winner is None and g.hand.number == 1


@pytest.mark.parametrize("before", [24, 30, 99])
def test_s3_7_reaching_the_target_wins_the_game(before):
    g, _ = finish(scores=[0, before])
    assert g.scores == [0, before + 76] and g.is_over and g.winner == 1
    assert g.termination == "normal" and g.current_player is None and g.legal_actions() == []
    assert g.hand.number == 0  # no further hand is dealt
    for seat in (0, 1, None):
        v = g.view(seat)
        assert v.phase == "game_over" and v.winner == 1 and v.to_act is None
    assert g.final_scores()["winner"] == 1
    with pytest.raises(IllegalAction, match="game is over"):
        g.apply(PASS)


def test_s3_7_exactly_the_target_is_enough():
    g, _ = finish(scores=[0, 24])
    assert g.scores[1] == 100 and g.is_over


def test_s3_7_the_defender_can_win_the_game_by_undercut():
    g, r = finish(KNOCKER_10, DEF_5, scores=[90, 0])
    assert r.outcome == "undercut" and g.is_over and g.winner == 0 and g.scores == [105, 0]


def test_s3_7_target_score_option():
    g, _ = finish(rules=RuleSet(target_score=50))
    assert g.is_over and g.winner == 1
    g, _ = finish(rules=RuleSet(target_score=200), scores=[0, 100])
    assert not g.is_over


def test_s3_7_classic_bonuses_off_by_default():
    g, _ = finish(scores=[0, 30])
    assert "classic_totals" not in g.final_scores()


def test_s3_7_classic_bonuses_game_and_box_bonus():
    g, _ = finish(rules=RuleSet(classic_bonuses=True), scores=[20, 30], hands_won=[1, 2])
    f = g.final_scores()
    assert f["scores"] == [20, 106] and f["hands_won"] == [1, 3]
    assert f["shutout"] is False
    assert f["classic_totals"] == [20 + 25 * 1, 106 + 100 + 25 * 3]


def test_s3_7_classic_bonuses_shutout_doubles_all_the_winners_points():
    # docs/rules.md §3.7: "all of the winner's points" = plain score and both bonuses.
    g, _ = finish(rules=RuleSet(classic_bonuses=True), scores=[0, 30], hands_won=[0, 2])
    f = g.final_scores()
    assert f["shutout"] is True
    assert f["classic_totals"] == [0, 2 * (106 + 100 + 25 * 3)]


def test_s3_7_classic_bonuses_only_at_game_end():
    g, _ = finish(rules=RuleSet(classic_bonuses=True))
    assert not g.is_over and "classic_totals" not in g.final_scores()


def test_s3_7_dealer_rule_and_score_bookkeeping_over_whole_random_games():
    rng = random.Random(7)
    for seed in range(6):
        g = random_play(Game(RuleSet(target_score=30), seed), rng)
        assert g.winner is not None and g.scores[g.winner] >= 30
        running = [0, 0]
        for prev, nxt in zip(g.results, g.results[1:], strict=False):
            assert nxt.dealer == (prev.dealer if prev.winner is None else prev.winner)
        for r in g.results:
            if r.winner is not None:
                running[r.winner] += r.points
            assert list(r.scores_after) == running
        assert running == g.scores


def test_s3_7_resign_two_players_the_other_wins():
    g = Game(RuleSet(), 3)
    g.resign(0, "timeout")
    assert g.is_over and g.winner == 1 and g.termination == "timeout"
    assert g.final_scores()["termination"] == "timeout"
    assert_illegal_after_over(g)


def assert_illegal_after_over(g):
    for call in (lambda: g.apply(TAKE), lambda: g.resign(0), lambda: g.abandon()):
        with pytest.raises(IllegalAction, match="game is over"):
            call()


def test_s3_7_resign_three_players_best_other_score_wins_lower_seat_on_ties():
    g = Game(RuleSet(variant="box"), 3)
    g.scores = [10, 40, 40]
    g.resign(0, "disconnect")
    assert g.winner == 1
    g = Game(RuleSet(variant="box"), 3)
    g.scores = [50, 40, 10]
    g.resign(0, "illegal")
    assert g.winner == 1


def test_s3_7_resign_and_abandon_validate_their_input():
    g = Game(RuleSet(), 3)
    with pytest.raises(ValueError, match="termination reason"):
        g.resign(0, "bored")
    with pytest.raises(ValueError, match="termination reason"):
        g.resign(0, "normal")
    with pytest.raises(IllegalAction, match="no seat 5"):
        g.resign(5)
    assert not g.is_over
    g.abandon()
    assert g.is_over and g.winner is None and g.termination == "abandoned"
    assert_illegal_after_over(g)


def test_s3_7_illegal_move_after_the_end_leaves_the_record_alone():
    g, _ = finish(scores=[0, 30])
    assert_illegal(g, TAKE, "game is over")
