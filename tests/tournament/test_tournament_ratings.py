"""Ratings and SPRT against values worked out by hand, and general properties."""

from __future__ import annotations

import doctest
import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from competition.tournament import ratings as ratings_mod
from competition.tournament import schedule as schedule_mod
from competition.tournament import sprt as sprt_mod
from competition.tournament.ratings import PairResult, RatingError, expected, finish_ranks, finish_scores, game_pairs, rate
from competition.tournament.sprt import Sprt


@pytest.mark.parametrize("module", [ratings_mod, sprt_mod, schedule_mod])
def test_docstring_examples(module: object) -> None:
    failures, tried = doctest.testmod(module)  # type: ignore[arg-type]
    assert tried > 0 and failures == 0


def test_two_players_by_hand() -> None:
    # A won 3 of 4. Maximum likelihood: p = 3/4, so r_A - r_B = 400 log10(p / (1 - p)) = 400 log10 3.
    t = rate(["A", "B"], [PairResult("A", "B", 3, 4)], prior_draws=0)
    d = 400 * math.log10(3)
    assert t.rating["A"] == pytest.approx(d / 2, abs=1e-6) and t.rating["B"] == pytest.approx(-d / 2, abs=1e-6)
    # Fisher information of d: N p (1 - p) (ln 10 / 400)^2 = 4 * 3/16 * c^2 -> se(d) = 400 / (ln 10 * sqrt(0.75)).
    se_d = 400 / (math.log(10) * math.sqrt(0.75))
    assert se_d == pytest.approx(200.5920, abs=1e-3)
    assert t.diff_se("A", "B") == pytest.approx(se_d, rel=1e-9)
    assert t.se["A"] == pytest.approx(se_d / 2, rel=1e-9)  # each rating relative to the mean
    assert t.error95("A") == pytest.approx(1.959964 * se_d / 2, rel=1e-6)
    # LOS = Phi(d / se(d)) = Phi(0.95144) = 0.82931
    assert t.los("A", "B") == pytest.approx(0.82931, abs=1e-5)
    assert t.los("B", "A") == pytest.approx(1 - 0.82931, abs=1e-5)


def test_prior_adds_virtual_draws() -> None:
    # 4-0 with one virtual draw is 4.5-0.5: d = 400 log10 9 = 381.70.
    t = rate(["A", "B"], [PairResult("A", "B", 4, 4)], prior_draws=1)
    assert t.rating["A"] - t.rating["B"] == pytest.approx(400 * math.log10(9), abs=1e-6)
    assert t.games == {"A": 4.0, "B": 4.0}  # virtual games are not counted as played
    with pytest.raises(RatingError, match="A lost no point"):
        rate(["A", "B"], [PairResult("A", "B", 4, 4)], prior_draws=0)


def test_chain_and_anchor_by_hand() -> None:
    # A-B 3-1 and B-C 3-1, A and C never met: each link is 400 log10 3, errors add in quadrature.
    res = [PairResult("A", "B", 3, 4), PairResult("B", "C", 3, 4)]
    d = 400 * math.log10(3)
    se_d = 400 / (math.log(10) * math.sqrt(0.75))
    t = rate(["A", "B", "C"], res, prior_draws=0, anchor="C", anchor_rating=1000)
    assert [t.rating[x] for x in "ABC"] == pytest.approx([1000 + 2 * d, 1000 + d, 1000])
    assert t.se["C"] == 0
    assert t.se["B"] == pytest.approx(se_d)
    assert t.se["A"] == pytest.approx(math.sqrt(2) * se_d)
    # LOS between A and C, who never met, comes from the same covariance: Phi(2d / (sqrt2 se_d)).
    assert t.los("A", "C") == pytest.approx(0.5 * (1 + math.erf(2 * d / (math.sqrt(2) * se_d) / math.sqrt(2))))


def test_disconnected_groups_are_reported() -> None:
    t = rate(["A", "B", "C", "D"], [PairResult("A", "B", 1, 2), PairResult("C", "D", 2, 3)], prior_draws=0)
    assert not t.comparable and sorted(map(sorted, t.groups)) == [["A", "B"], ["C", "D"]]
    assert t.los("A", "C") == 0.5
    lone = rate(["A", "B", "X"], [PairResult("A", "B", 1, 2)])
    assert math.isinf(lone.se["X"])


def test_three_player_games_are_finishing_orders_not_pairs() -> None:
    # The winner first; the others by score; equal scores share a place.
    assert finish_ranks(["a", "b", "c"], [40, 101, 40], winner="b") == [2, 1, 2]
    assert finish_scores(["a", "b", "c"], [40, 101, 40], winner="b") == [0.25, 1.0, 0.25]
    # A forfeiting seat is last, whatever its score.
    assert finish_ranks(["a", "b", "c"], [90, 30, 10], winner="b", culprit="a") == [3, 1, 2]
    # Nobody won (abandoned): a draw, everyone first.
    assert finish_ranks(["a", "b", "c"], [0, 0, 0], None) == [1, 1, 1]
    assert {p.score for p in game_pairs(["a", "b"], [0, 0], None)} == {0.5}
    # Games of three are rated by BoxDuplicate, never split into Bradley-Terry pairs.
    with pytest.raises(ValueError, match="BoxDuplicate"):
        game_pairs(["a", "b", "c"], [40, 101, 40], winner="b")


@settings(max_examples=40)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 1)), min_size=1, max_size=40),
       st.floats(0.5, 3))
def test_fit_matches_actual_scores(games: list[tuple[int, int, int]], prior: float) -> None:
    """At the maximum-likelihood fit each player's expected score equals its actual score
    (prior included): the defining property of the Bradley-Terry estimate."""
    names = ["p0", "p1", "p2", "p3"]
    res = [PairResult(names[a], names[b], float(w), 1.0) for a, b, w in games if a != b]
    if not res:
        return
    t = rate(names, res, prior_draws=prior)
    met = {(r.a, r.b) for r in res} | {(r.b, r.a) for r in res}
    for n in names:
        actual = sum(r.score for r in res if r.a == n) + sum(r.games - r.score for r in res if r.b == n)
        actual += prior / 2 * sum(1 for (x, _) in met if x == n)
        exp = sum(r.games * expected(t.rating[r.a] - t.rating[r.b]) for r in res if r.a == n)
        exp += sum(r.games * expected(t.rating[r.b] - t.rating[r.a]) for r in res if r.b == n)
        exp += prior * sum(expected(t.rating[n] - t.rating[o]) for (x, o) in met if x == n)
        assert exp == pytest.approx(actual, abs=1e-6)
    assert sum(t.rating.values()) == pytest.approx(0, abs=1e-6) or not t.comparable


# ------------------------------------------------------------------------------- SPRT
def test_sprt_llr_by_hand() -> None:
    # One game per unit (duplicate = false), no draws: the GSPRT is Wald's Bernoulli test, up
    # to the 1e-3 of a game every empty cell (here the draws) holds, as in fishtest and fastchess.
    t = Sprt(elo0=0, elo1=20, alpha=0.05, beta=0.05)
    s0, s1 = 0.5, 1 / (1 + 10 ** (-20 / 400))
    assert s1 == pytest.approx(0.528751, abs=1e-6)
    # 10 wins, 4 losses (cells: losses, draws, wins): 10 ln(s1/s0) + 4 ln((1-s1)/(1-s0))
    assert t.llr((4, 0, 10)) == pytest.approx(10 * math.log(s1 / s0) + 4 * math.log((1 - s1) / (1 - s0)), rel=1e-4)
    assert t.upper == pytest.approx(math.log(19)) and t.lower == pytest.approx(-math.log(19))
    # Decisive streaks: each win adds about ln(s1/s0) = 0.055880 (the empty loss cell holds
    # 1e-3 of a game, fishtest's regularisation), so 53 straight wins cross ln 19 = 2.944.
    assert t.decide((0, 0, 52)) is None and t.decide((0, 0, 53)) == "H1"
    assert t.decide((53, 0, 0)) == "H0"
    # Pairs: a pair won twice moves the LLR less than two independent wins would.
    assert 0 < t.llr((0, 0, 0, 0, 1)) < t.llr((0, 0, 2))


def run_sprt(p_win: float, test: Sprt, rng: random.Random, limit: int = 20000) -> tuple[str | None, int]:
    """Independent games (one per unit): counts are (losses, draws, wins)."""
    counts = [0, 0, 0]
    for n in range(1, limit + 1):
        counts[2 if rng.random() < p_win else 0] += 1
        d = test.decide(counts)
        if d:
            return d, n
    return None, limit


def test_sprt_stops_on_a_clear_difference() -> None:
    test = Sprt(elo0=0, elo1=50)
    rng = random.Random(7)
    outcomes = [run_sprt(expected(300), test, rng) for _ in range(50)]  # candidate 300 Elo stronger
    assert all(d == "H1" for d, _ in outcomes)
    assert max(n for _, n in outcomes) < 200


def test_sprt_does_not_accept_a_difference_that_is_not_there() -> None:
    test = Sprt(elo0=0, elo1=50, alpha=0.05, beta=0.05)
    rng = random.Random(11)
    outcomes = [run_sprt(0.5, test, rng) for _ in range(200)]  # equal strength: H0 is true
    h1 = sum(1 for d, _ in outcomes if d == "H1")
    assert all(d is not None for d, _ in outcomes)  # it does stop...
    assert h1 <= 20  # ...for H0, but for a false-positive rate near alpha (5% of 200 = 10 expected)


def test_sprt_rejects_bad_bounds() -> None:
    with pytest.raises(ValueError):
        Sprt(elo0=10, elo1=10)
    with pytest.raises(ValueError):
        Sprt(elo0=0, elo1=10, alpha=0)
