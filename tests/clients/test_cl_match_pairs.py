"""``okgin match`` reads duplicate deals as deals: intervals clustered by deal, and the
head-to-head of two bots on deal pairs (the pentanomial of okgin.stats).

Before (issue 24): the win rate's interval was Wilson's over games, as if the two
seatings of a deal were independent trials, and there was no pair statistic at all.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from clients.match import GameSummary, bot_stats, deal_pairs, run_match, wilson
from okgin.stats import Paired, t_quantile


def summary(deal: int, seating: tuple[int, ...], winner: int) -> GameSummary:
    return GameSummary(deal, seating, f"s{deal}", winner, tuple(100 if b == winner else 10 for b in range(2)),
                       "normal", None, (), 10)


def split_deals(n: int) -> list[GameSummary]:
    """``n`` deals, each split: the seat-0 bot wins both seatings (the cards decide)."""
    return [summary(d, s, s[0]) for d in range(n) for s in ((0, 1), (1, 0))]


def test_win_interval_is_clustered_by_deal() -> None:
    games = split_deals(10)
    s = bot_stats(0, "a", games)
    assert s.wins.count == 10 and s.wins.rate == 0.5
    # Every deal scored 1 of 2: no spread between deals; the virtual deal (fair coin, 2
    # games) and CR1 leave se^2 = 10/9 * (0 + 0.25 * 20 / 10) / 20^2, with t(9).
    se = math.sqrt(10 / 9 * 0.5 / 400)
    half = t_quantile(0.975, 9) * se
    assert s.wins.ci == pytest.approx((0.5 - half, 0.5 + half), rel=1e-12)
    assert s.wins.ci != pytest.approx(wilson(10, 20))  # what main printed
    # Deals that all went one way: the spread is between deals, and the interval is wide.
    lopsided = [summary(d, s_, 0 if d % 2 == 0 else 1) for d in range(10) for s_ in ((0, 1), (1, 0))]
    lo, hi = bot_stats(0, "a", lopsided).wins.ci
    assert lo < 0.5 - 2 * half and hi > 0.5 + 2 * half


def test_deal_pairs_are_the_pentanomial() -> None:
    games = [*split_deals(3), summary(3, (0, 1), 0), summary(3, (1, 0), 0), summary(4, (0, 1), 1)]
    p = deal_pairs(games)
    assert p == Paired((0, 0, 3, 0, 1), (3, 0, 5), unpaired=1)  # games of complete pairs: L, D, W


def test_match_prints_pairs_and_the_few_deals_warning() -> None:
    res = run_match(["simple", "random"], games=8, seed=3)
    p = res.paired()
    assert p is not None and p.units == 4 and sum(p.counts) == 4
    text = res.table()
    assert "simple - random on deal pairs (simple's points 0/½/1/1½/2): 4 pairs " in text
    assert "only 4 deals: intervals are rough" in text and "clustered by deal" in text
    data = res.to_json()
    assert data["paired"]["units"] == 4 and data["deals_played"] == 4
    assert data["small_sample_warning"].startswith("only 4 deals")
    assert run_match(["simple", "random", "random"], games=6, seed=3).paired() is None  # box: no pairs


def test_okgin_match_json_has_the_pairs() -> None:
    out = subprocess.run([sys.executable, "-m", "okgin", "match", "simple", "simple", "--games", "4", "--seed", "1",
                          "--json"], capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    # simple is deterministic: every deal splits, and the interval is still not zero-width.
    assert data["paired"]["cells"] == [0, 0, 2, 0, 0]
    assert data["paired"]["elo_diff_low95"] is None or data["paired"]["elo_diff_low95"] < -100


def test_points_interval_is_never_zero_width() -> None:
    """A bot that scored 0 in every game: main printed "0.0 [0.0, 0.0]"."""
    games = split_deals(6)
    zero = [GameSummary(g.deal, g.seating, g.seed, 0, (150, 0), "normal", None, (), 10) for g in games]
    s = bot_stats(1, "b", zero)
    assert s.points_per_game == 0.0 and s.points_ci[0] == 0.0 and s.points_ci[1] > 10
