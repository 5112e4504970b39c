"""The schedule: deterministic, complete, duplicate deals in every seating."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from competition.tournament.config import parse_config
from competition.tournament.schedule import Schedule
from okgin.schedule import deal_seed, secret_from_seed

CUP = secret_from_seed("cup")


def seed(k: int) -> str:
    return deal_seed(CUP, k)


def config(fmt: str = "round_robin", n: int = 3, games: int = 2, **t: object):
    parts = [{"name": f"p{i}", "bot": "random"} for i in range(n)]
    tour = {"seed": "cup", "format": fmt, "games_per_pairing": games, **t}
    extra = {}
    if fmt == "sprt":
        extra["sprt"] = {"candidate": "p1", "baseline": "p0", "max_games": games}
        del tour["games_per_pairing"]
    return parse_config({"tournament": tour, "participant": parts, **extra})


def test_round_robin_every_pair_every_seating_same_deals() -> None:
    s = Schedule(secret=CUP, cfg=config(n=4, games=4))
    games = list(s)
    assert len(s) == len(games) == 6 * 4
    per_pair = Counter(g.pairing for g in games)
    assert set(per_pair) == set(itertools.combinations([f"p{i}" for i in range(4)], 2))
    assert set(per_pair.values()) == {4}
    # Each deal is played by every pairing, in both seatings, with one seed.
    for deal in (0, 1):
        dg = [g for g in games if g.deal == deal]
        assert {g.seed for g in dg} == {seed(deal)}
        for pair in per_pair:
            seatings = sorted(g.seats for g in dg if g.pairing == pair)
            assert seatings == sorted([pair, pair[::-1]])
    assert [g.index for g in games] == list(range(len(games)))
    assert len({g.key for g in games}) == len(games)


def test_gauntlet_only_meets_the_champion() -> None:
    s = Schedule(secret=CUP, cfg=config("gauntlet", n=4, games=2, champion="p2"))
    assert {g.pairing for g in s} == {("p2", "p0"), ("p2", "p1"), ("p2", "p3")}


def test_box_every_triple_every_seating() -> None:
    s = Schedule(secret=CUP, cfg=config("box", n=4, games=6))
    games = list(s)
    assert len(games) == 4 * 6
    for triple in itertools.combinations([f"p{i}" for i in range(4)], 3):
        seatings = {g.seats for g in games if g.pairing == triple}
        assert seatings == set(itertools.permutations(triple))
        assert {g.seed for g in games if g.pairing == triple} == {seed(0)}


def test_no_duplicate_gives_each_game_its_own_deal_and_rotates_seats() -> None:
    s = Schedule(secret=CUP, cfg=config(n=2, games=3, duplicate=False))
    assert [(g.seats, g.seed) for g in s] == [(("p0", "p1"), seed(0)), (("p1", "p0"), seed(1)), (("p0", "p1"), seed(2))]


def test_sprt_schedule_is_lazy_and_long() -> None:
    s = Schedule(secret=CUP, cfg=config("sprt", n=2, games=1_000_001))
    assert len(s) == 1_000_002  # rounded up to whole deals
    last = s[len(s) - 1]
    assert last.pairing == ("p1", "p0") and last.seats == ("p0", "p1") and last.deal == 500_000
    with pytest.raises(IndexError):
        s[len(s)]


@given(st.integers(2, 6), st.sampled_from([2, 4, 6]), st.text(min_size=1, max_size=8))
def test_same_config_same_schedule(n: int, games: int, seed: str) -> None:
    """A resumed run must play exactly the games of an uninterrupted one."""
    parts = [{"name": f"p{i}", "bot": "random"} for i in range(n)]
    data = {"tournament": {"seed": seed, "games_per_pairing": games}, "participant": parts}
    a, b = (list(Schedule(c, c.fixed_secret)) for c in (parse_config(data), parse_config(data)))
    assert a == b
    assert len(a) == n * (n - 1) // 2 * games
