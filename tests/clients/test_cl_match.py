"""The in-process match runner and ``okgin match``."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from clients.bots.simple import SimpleBot
from clients.match import game_seed, plan, run_match, seatings, wilson


def okgin(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "okgin", *args], capture_output=True, text=True, timeout=240)


def test_plan_is_whole_duplicate_deals() -> None:
    assert plan(2, 5) == (3, [(0, (0, 1)), (0, (1, 0)), (1, (0, 1)), (1, (1, 0)), (2, (0, 1)), (2, (1, 0))])
    deals, order = plan(3, 7)
    assert deals == 2 and len(order) == 12 and sorted(order[:6]) == [(0, s) for s in seatings(3)]


def test_duplicate_deals_give_each_bot_each_seat() -> None:
    res = run_match(["simple", "random"], games=6, seed=4, keep_records=True)
    by_deal: dict[int, list] = {}
    for g in res.games:
        by_deal.setdefault(g.deal, []).append(g)
    for d, gs in by_deal.items():
        assert sorted(g.seating for g in gs) == [(0, 1), (1, 0)]
        assert {g.seed for g in gs} == {game_seed(4, d)}
        # Same deal: the first hand's cards are the same, whoever sits where.
        assert gs[0].record["results"][0]["upcard"] == gs[1].record["results"][0]["upcard"]  # type: ignore[index]


def test_simple_against_itself_is_exactly_even_on_duplicate_deals() -> None:
    """simple is deterministic: with seats swapped each deal is won once by each copy."""
    res = run_match(["simple", "simple"], games=20, seed=1)
    a, b = res.stats()
    assert a.wins.count == b.wins.count == 10 and a.points == b.points
    assert res.bots == ["simple", "simple#2"]


def test_same_seed_same_results_any_jobs() -> None:
    one = run_match(["random", "simple", "simple"], games=12, seed="j")
    two = run_match(["random", "simple", "simple"], games=12, seed="j", jobs=2)
    other = run_match(["random", "simple", "simple"], games=12, seed="k")
    assert [g.key() for g in one.games] == [g.key() for g in two.games]
    assert [g.key() for g in one.games] != [g.key() for g in other.games]


def test_factories_are_accepted() -> None:
    def mine(seed: str) -> SimpleBot:
        return SimpleBot(seed)

    res = run_match([mine, "random"], games=2)
    assert res.bots == ["mine", "random"] and res.stats()[0].wins.count == 2


def test_stats_add_up() -> None:
    res = run_match(["simple", "random"], games=10, seed=3)
    s = res.stats()
    assert sum(x.wins.count for x in s) == len(res.games)
    for x in s:
        assert x.hands_played == res.hands  # two players: every hand
        assert x.knock.count >= x.gin.count
        assert x.wins.ci[0] <= x.wins.rate <= x.wins.ci[1]
    hands_won = sum(x.hands_won.count for x in s)
    drawn = s[0].drawn.count
    assert hands_won + drawn == res.hands  # tie_is_undercut: every hand has a winner unless drawn


def test_wilson_bounds() -> None:
    assert wilson(0, 0) == (0.0, 1.0)
    lo, hi = wilson(0, 10)
    assert lo == 0.0 and 0.2 < hi < 0.35
    lo, hi = wilson(10, 10)
    assert hi == 1.0 and 0.65 < lo < 0.8


def test_okgin_match_simple_beats_random_almost_always() -> None:
    """The issue's 'done when': ``okgin match simple random --games 200``."""
    r = okgin("match", "simple", "random", "--games", "200")
    assert r.returncode == 0, r.stderr
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("simple "))
    won, total = (int(x) for x in line.split()[1].split("/"))
    assert total == 200 and won >= 190
    j = json.loads(okgin("match", "simple", "random", "--games", "200", "--json").stdout)
    assert j["stats"][0]["wins"]["count"] == won and j["games"] == 200 and j["via"] == "in-process"


def test_okgin_match_rules_and_variant() -> None:
    j = json.loads(okgin("match", "simple", "simple", "simple", "--games", "6", "--rule", "target_score=30", "--json").stdout)
    assert j["variant"] == "box" and j["rules"]["target_score"] == 30 and j["seatings"] == 6
    j = json.loads(
        okgin(
            "match", "simple", "random", "--games", "2", "--rule", "knock_limit=10", "--rule", "undercut_bonus=25", "--json"
        ).stdout
    )
    assert j["rules"]["knock_limit"] == 10 and j["rules"]["undercut_bonus"] == 25


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["simple"], "give two bots"),
        (["simple", "random", "--variant", "box"], "box is played by 3 bots"),
        (["simple", "random", "--rule", "knock_limit=11"], "knock_limit must be"),
        (["simple", "random", "--rule", "bogus=1"], "unknown rule option"),
        (["simple", "nobody"], "unknown bot 'nobody'"),
        (["simple", "random", "--games", "0"], "--games must be at least 1"),
    ],
)
def test_okgin_match_bad_input(args: list[str], message: str) -> None:
    r = okgin("match", *args)
    assert r.returncode == 2 and message in r.stderr
