"""docs/rules.md §3.5 Scoring a hand: gin, knock, undercut (ties included, tie_is_undercut),
the bonuses as options, spade doubling, one scorer per hand."""

from __future__ import annotations

import random

import pytest
from enginekit import knock_position, play_checked, rules_strategy
from hypothesis import given, settings
from hypothesis import strategies as st

from okgin import Game, RuleSet
from okgin.scoring import score_knock

KNOCKER_10 = "As 2s 3s 4h 5h 6h 9c 9d 9h Tc"  # throws the drawn Kh: deadwood 10 (Tc)
KNOCKER_2 = "As 2s 3s 4h 5h 6h 9c 9d 9h 2c"  # deadwood 2
KNOCKER_GIN = "As 2s 3s 4h 5h 6h 9c 9d 9h 7h"  # gin after throwing Kh
DEF_0 = "Jc Qc Kc 7s 8s 9s 3d 4d 5d 6d"
DEF_5 = "Jc Qc Kc 7s 8s 9s 3d 4d 5d 5c"
DEF_10 = "Jc Qc Kc 7s 8s 9s 3d 4d 5d Js"
DEF_78 = "Jc Qc Ks 7s 8s Ts 3d 4d 6d Qd"


def hand(knocker, defender, rules=None, upcard="Kd", **kw):
    g, r = knock_position(knocker, defender, draw="Kh", knock="Kh", upcard=upcard, rules=rules, **kw)
    return g, r


def test_s3_5_knock_scores_the_difference():
    g, r = hand(KNOCKER_2, DEF_78)
    assert (r.outcome, r.winner, r.points) == ("knock", 1, 76)
    assert g.scores == [0, 76] and r.scores_after == (0, 76)


def test_s3_5_undercut_defender_scores_bonus_plus_difference():
    g, r = hand(KNOCKER_10, DEF_5)
    assert (r.knocker_deadwood, r.defender_deadwood) == (10, 5)
    assert (r.outcome, r.winner, r.points) == ("undercut", 0, 10 + 5)
    assert g.scores == [15, 0]


def test_s3_5_undercut_on_a_tie_by_default():
    g, r = hand(KNOCKER_10, DEF_10)
    assert (r.knocker_deadwood, r.defender_deadwood) == (10, 10)
    assert (r.outcome, r.winner, r.points) == ("undercut", 0, 10)
    assert g.scores == [10, 0] and g.hands_won == [1, 0]


def test_s3_5_undercut_bonus_option():
    _, r = hand(KNOCKER_10, DEF_5, rules=RuleSet(undercut_bonus=25))
    assert r.points == 25 + 5


def test_s3_5_tie_is_undercut_off_scores_nothing_and_the_same_dealer_deals_again():
    g, r = hand(KNOCKER_10, DEF_10, rules=RuleSet(tie_is_undercut=False))
    assert (r.outcome, r.winner, r.points) == ("tie", None, 0)
    assert g.scores == [0, 0] and g.hands_won == [0, 0]
    assert g.hand.number == 1 and g.hand.dealer == 0  # seat 0 dealt the tied hand
    # a non-tie with the option off is still an undercut
    _, r = hand(KNOCKER_10, DEF_5, rules=RuleSet(tie_is_undercut=False))
    assert r.outcome == "undercut" and r.points == 15


def test_s3_5_gin_scores_bonus_plus_defender_deadwood():
    g, r = hand(KNOCKER_GIN, DEF_78)
    assert (r.outcome, r.winner, r.points) == ("gin", 1, 25 + 78)
    assert g.scores == [0, 103]


def test_s3_5_gin_against_a_defender_with_no_deadwood():
    g, r = hand(KNOCKER_GIN, DEF_0)
    assert r.defender_deadwood == 0
    assert (r.outcome, r.winner, r.points) == ("gin", 1, 25)
    assert g.scores == [0, 25]  # the defender scores nothing, even with no deadwood


def test_s3_5_gin_bonus_option():
    _, r = hand(KNOCKER_GIN, DEF_0, rules=RuleSet(gin_bonus=20))
    assert r.points == 20


@pytest.mark.parametrize(
    ("knocker", "defender", "outcome", "plain"),
    [
        (KNOCKER_2, DEF_78, "knock", 76),
        (KNOCKER_10, DEF_5, "undercut", 15),
        (KNOCKER_10, DEF_10, "undercut", 10),
        (KNOCKER_GIN, DEF_0, "gin", 25),
        (KNOCKER_GIN, DEF_78, "gin", 103),
    ],
)
def test_s3_5_spade_upcard_doubles_every_point(knocker, defender, outcome, plain):
    g, r = hand(knocker, defender, rules=RuleSet(spade_upcard_doubles=True), upcard="Qs")
    assert r.outcome == outcome and r.doubled and r.points == 2 * plain
    assert sum(g.scores) == 2 * plain


def test_s3_5_spade_doubling_of_a_tie_that_scores_nothing_is_nothing():
    g, r = hand(KNOCKER_10, DEF_10, rules=RuleSet(spade_upcard_doubles=True, tie_is_undercut=False), upcard="Qs")
    assert r.outcome == "tie" and r.points == 0 and g.scores == [0, 0]


def test_s3_5_only_one_player_scores_a_hand():
    for knocker, defender in [(KNOCKER_2, DEF_78), (KNOCKER_10, DEF_5), (KNOCKER_GIN, DEF_0)]:
        g, r = hand(knocker, defender)
        assert [s for s in g.scores if s] == [r.points]
        assert g.scores[r.winner] == r.points and g.hands_won[r.winner] == 1


@pytest.mark.parametrize(
    ("k", "d", "gin", "expect"),
    [
        (3, 9, False, ("knock", True, 6)),
        (9, 3, False, ("undercut", False, 16)),
        (4, 4, False, ("undercut", False, 10)),
        (0, 0, True, ("gin", True, 25)),
        (0, 12, True, ("gin", True, 37)),
    ],
)
def test_s3_5_score_knock_table(k, d, gin, expect):
    assert score_knock(RuleSet(), k, d, gin, False, False) == expect
    doubled = (*expect[:2], expect[2] * 2)
    assert score_knock(RuleSet(), k, d, gin, False, True) == doubled


# ------------------------------------------------------------------ properties


@settings(max_examples=40)
@given(rules_strategy(), st.integers(0, 10**9))
def test_s3_5_property_uniformly_random_play_always_ends_hands_with_valid_results(rules, seed):
    """Uniformly random legal play (both variants, random options): every hand ends (a
    knock or a drawn hand), and each result checks against brute force (docs/rules.md §3.4-3.6)."""
    g = Game(rules, seed)
    finished = play_checked(g, random.Random(seed), 500, knock_bias=0.0)
    assert finished >= 1 or g.is_over


@settings(max_examples=60)
@given(rules_strategy(), st.integers(0, 10**9), st.sampled_from([(1.0, 0.8), (0.3, 0.9)]))
def test_s3_5_property_random_play_that_knocks_whenever_it_can_scores_validly(rules, seed, bias):
    """Uniform random play ends most hands drawn; this variant mostly keeps its least
    deadwood and often knocks as soon as it may, to put many knocks, gins, undercuts and layoffs
    through the same brute-force checks."""
    g = Game(rules, seed)
    finished = play_checked(g, random.Random(seed), 500, knock_bias=bias[0], greedy=bias[1])
    assert finished >= 1 or g.is_over
