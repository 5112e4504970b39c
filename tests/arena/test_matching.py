"""arena/matching.py: pure matchmaking and challenges, by property and by example."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.matching import (
    GAP_EVERY_MS,
    GAP_MAX,
    GAP_START,
    GAP_STEP,
    SEATS,
    ChallengeBook,
    Seek,
    acceptable,
    gap,
    pair,
)
from okgin.protocol import ProtocolError

NOW = 10_000_000

seek_st = st.builds(
    Seek,
    id=st.text("abcdef0123", min_size=1, max_size=6),
    account=st.sampled_from([f"a{i}" for i in range(12)]),
    variant=st.sampled_from(["oklahoma", "box"]),
    clock=st.sampled_from(["standard", "blitz"]),
    rated=st.booleans(),
    rating=st.integers(600, 2400).map(float),
    since_ms=st.integers(NOW - 200_000, NOW),
)
seeks_st = st.lists(seek_st, max_size=40, unique_by=lambda s: s.id)


@settings(max_examples=300, deadline=None)
@given(seeks_st)
def test_every_pairing_is_legal(seeks: list[Seek]) -> None:
    out = pair(seeks, NOW)
    seen_accounts: set[str] = set()
    seen_ids: set[str] = set()
    for p in out:
        assert len(p.seeks) == SEATS[p.variant]
        assert len({s.bucket for s in p.seeks}) == 1, "same variant, clock and rated only"
        assert len(set(p.accounts)) == len(p.accounts), "an account never plays itself"
        assert acceptable(p.seeks, NOW), "within the gap of the longest wait"
        assert not seen_accounts & set(p.accounts), "one game at a time"
        seen_accounts |= set(p.accounts)
        ids = {s.id for s in p.seeks}
        assert not ids & seen_ids
        seen_ids |= ids


@settings(max_examples=200, deadline=None)
@given(seeks_st, st.randoms(use_true_random=False))
def test_the_order_seeks_come_in_does_not_matter(seeks: list[Seek], rnd: random.Random) -> None:
    shuffled = list(seeks)
    rnd.shuffle(shuffled)
    assert pair(seeks, NOW) == pair(shuffled, NOW)


@settings(max_examples=300, deadline=None)
@given(seeks_st)
def test_no_two_player_pairing_is_left_undone(seeks: list[Seek]) -> None:
    """After pairing, no two Oklahoma seeks of free accounts could still be paired."""
    out = pair(seeks, NOW)
    busy = {a for p in out for a in p.accounts}
    free = [s for s in seeks if s.variant == "oklahoma" and s.account not in busy]
    for i, a in enumerate(free):
        for b in free[i + 1:]:
            if a.bucket == b.bucket and a.account != b.account:
                assert not acceptable((a, b), NOW), (a, b)


def test_the_gap_widens_with_waiting_up_to_its_maximum() -> None:
    assert gap(0) == GAP_START
    assert gap(GAP_EVERY_MS - 1) == GAP_START
    assert gap(GAP_EVERY_MS) == GAP_START + GAP_STEP
    assert gap(10**9) == GAP_MAX
    assert gap(1000, every_ms=1000) == GAP_START + GAP_STEP  # an arena's widen_every_ms
    assert gap(999, every_ms=1000) == GAP_START
    a = Seek("1", "ann", "oklahoma", "standard", True, 1500.0, NOW)
    b = Seek("2", "bob", "oklahoma", "standard", True, 1800.0, NOW)
    assert pair([a, b], NOW) == []
    # 300 apart: acceptable once the older has waited 40 s (100 + 4 x 50)
    waited = (300 - GAP_START) // GAP_STEP * GAP_EVERY_MS
    assert pair([a, b], NOW + waited - 1) == []
    (p,) = pair([a, b], NOW + waited)
    assert p.accounts == ("ann", "bob")


def test_the_nearest_rating_is_chosen_and_buckets_never_mix() -> None:
    s = [
        Seek("1", "ann", "oklahoma", "standard", True, 1500.0, NOW - 5),
        Seek("2", "bob", "oklahoma", "standard", True, 1580.0, NOW - 4),
        Seek("3", "cat", "oklahoma", "standard", True, 1510.0, NOW - 3),
        Seek("4", "dan", "oklahoma", "standard", False, 1500.0, NOW - 2),
        Seek("5", "eve", "oklahoma", "blitz", True, 1500.0, NOW - 1),
    ]
    (p,) = pair(s, NOW)
    assert p.accounts == ("ann", "cat")


def test_the_box_is_seated_in_threes_with_the_smallest_span() -> None:
    s = [
        Seek("1", "ann", "box", "standard", True, 1500.0, NOW - 9),
        Seek("2", "bob", "box", "standard", True, 1560.0, NOW - 8),
        Seek("3", "cat", "box", "standard", True, 1450.0, NOW - 7),
        Seek("4", "dan", "box", "standard", True, 1520.0, NOW - 6),
    ]
    (p,) = pair(s, NOW)
    assert sorted(p.accounts) == ["ann", "bob", "dan"]  # span 60, not 70 (cat) or 110
    assert pair(s[:2], NOW) == []  # two are not a Box


def test_one_account_with_two_seeks_gets_one_game() -> None:
    s = [
        Seek("1", "ann", "oklahoma", "standard", True, 1500.0, NOW - 3),
        Seek("2", "ann", "oklahoma", "blitz", True, 1500.0, NOW - 2),
        Seek("3", "bob", "oklahoma", "standard", True, 1500.0, NOW - 1),
        Seek("4", "cat", "oklahoma", "blitz", True, 1500.0, NOW),
    ]
    out = pair(s, NOW)
    assert [p.accounts for p in out] == [("ann", "bob")]


def test_challenges_accept_decline_cancel_expire() -> None:
    book = ChallengeBook(ttl_ms=1000)
    c = book.make("c1", "ann", ["bob"], "oklahoma", "standard", True, 0)
    with pytest.raises(ProtocolError) as e:
        book.accept("c1", "ann")
    assert e.value.name == "no_such_challenge"
    assert book.accept("c1", "bob") is c and "c1" not in book.open
    box = book.make("c2", "ann", ["bob", "cat"], "box", "standard", False, 0)
    assert book.accept("c2", "bob") is None
    assert book.accept("c2", "cat") is box and box.accounts == ("ann", "bob", "cat")
    book.make("c3", "ann", ["bob"], "oklahoma", "standard", True, 0)
    assert book.decline("c3", "bob").id == "c3"
    with pytest.raises(ProtocolError):
        book.decline("c3", "bob")
    book.make("c4", "ann", ["bob"], "oklahoma", "standard", True, 0)
    with pytest.raises(ProtocolError):
        book.cancel("c4", "bob")  # only its maker cancels it
    assert book.cancel("c4", "ann").id == "c4"
    book.make("c5", "ann", ["bob"], "oklahoma", "standard", True, 0)
    assert book.expire(999) == []
    assert [x.id for x in book.expire(1000)] == ["c5"]
    for bad in (["bob", "cat"], ["ann"], []):
        with pytest.raises(ProtocolError) as e:
            book.make("c6", "ann", bad, "oklahoma", "standard", True, 0)
        assert e.value.name == "bad_message"
    book.make("c7", "ann", ["bob"], "oklahoma", "standard", True, 0)
    book.make("c8", "cat", ["ann"], "oklahoma", "standard", True, 0)
    assert [x.id for x in book.drop("ann")] == ["c7", "c8"] and not book.open


def reference_pair(seeks: list[Seek], now_ms: int) -> list[tuple[str, ...]]:
    """The rule of arena/matching.py written the slow, obvious way (every candidate of the
    bucket sorted for every seek): pair() must choose exactly as it does. pair() finds the
    nearest seeks through a rating-sorted bucket instead (1,000 open seeks in one bucket:
    122 -> 10 ms per pass for Oklahoma, 405 -> 45 ms for the Box, measured on this machine)."""
    from itertools import combinations

    from arena.matching import MAX_CANDIDATES

    order = sorted(seeks, key=lambda s: (s.since_ms, s.id))
    used: set[str] = set()
    out = []
    for s in order:
        if s.account in used:
            continue
        cands = sorted((c for c in order if c.bucket == s.bucket and c.account not in used and c.account != s.account),
                       key=lambda c: (abs(c.rating - s.rating), c.since_ms, c.id))
        need = SEATS[s.variant] - 1
        if need == 1:
            chosen = next(((c,) for c in cands if acceptable((s, c), now_ms)), None)
        else:
            near: list[Seek] = []
            for c in cands:
                if all(c.account != x.account for x in near):
                    near.append(c)
                if len(near) >= MAX_CANDIDATES:
                    break
            best = None
            for combo in combinations(near, need):
                if acceptable((s, *combo), now_ms):
                    span = max(x.rating for x in (s, *combo)) - min(x.rating for x in (s, *combo))
                    if best is None or span < best[0]:
                        best = (span, combo)
            chosen = best[1] if best else None
        if chosen is None:
            continue
        used.update([s.account, *(c.account for c in chosen)])
        out.append(tuple(x.id for x in (s, *chosen)))
    return out


@settings(max_examples=300, deadline=None)
@given(seeks_st)
def test_pair_chooses_exactly_as_the_obvious_rule(seeks: list[Seek]) -> None:
    assert [tuple(s.id for s in p.seeks) for p in pair(seeks, NOW)] == reference_pair(seeks, NOW)
