"""Matchmaking, pure: open seeks and the time in, pairings out; challenges and their answers.

No clock, no I/O, no randomness: the front (:mod:`arena.desk`) passes ``now_ms`` and applies
what comes out, so the rules below are tested on their own (``tests/arena/test_matching.py``,
property tests) and a pairing is reproducible from its inputs.

**Seeks** (protocol.md §19). Seeks are paired only with seeks of the same variant, clock
preset and ``rated``, of other accounts. A group (two for Oklahoma Gin, three for Gin in the
Box) is acceptable when its ratings span at most :func:`gap` of the longest wait among its
seeks: :data:`GAP_START` points at once, :data:`GAP_STEP` more for every
:data:`GAP_EVERY_MS` waited, at most :data:`GAP_MAX`. Why widen: two players far apart get a
lopsided game, but a player nobody is near should not wait for ever. Order: the oldest seek
first (ties by id); it takes the acceptable partner nearest in rating (ties: the oldest, then
the lowest id), or for the Box the acceptable pair of partners with the smallest span. An
account is in at most one pairing per call (one game at a time); its other seeks stay open
for the front to withdraw.

**Challenges**: :class:`ChallengeBook` holds open challenges; a challenge starts a game when
every named account has accepted, and closes on a decline, a cancel by its maker, or at
:data:`CHALLENGE_TTL_MS`.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import combinations

from okgin.protocol import ProtocolError

__all__ = [
    "CHALLENGE_TTL_MS", "GAP_EVERY_MS", "GAP_MAX", "GAP_START", "GAP_STEP", "MAX_CANDIDATES", "SEATS", "Challenge",
    "ChallengeBook", "Pairing", "Seek", "acceptable", "gap", "pair",
]

GAP_START = 100
GAP_STEP = 50
GAP_EVERY_MS = 10_000
GAP_MAX = 800
SEATS = {"oklahoma": 2, "box": 3}
#: The Box: partners are looked for among this many nearest seeks (bounded work per seek).
MAX_CANDIDATES = 8
CHALLENGE_TTL_MS = 60_000


def gap(waited_ms: int, every_ms: int = GAP_EVERY_MS) -> int:
    """The widest rating span acceptable after waiting ``waited_ms``: GAP_START, widened
    by GAP_STEP every ``every_ms`` (an arena's ``widen_every_ms``: a small arena, where
    few accounts seek at once, widens faster so that its players are not left waiting)."""
    return min(GAP_MAX, GAP_START + GAP_STEP * (max(0, waited_ms) // max(1, every_ms)))


@dataclass(frozen=True)
class Seek:
    """An open seek: its id, the account and its rating now, what it asks for, and when."""

    id: str
    account: str
    variant: str
    clock: str
    rated: bool
    rating: float
    since_ms: int

    @property
    def bucket(self) -> tuple[str, str, bool]:
        return (self.variant, self.clock, self.rated)


@dataclass(frozen=True)
class Pairing:
    """Seeks to seat together, in the order found (the oldest first); the front decides seats."""

    seeks: tuple[Seek, ...]

    @property
    def accounts(self) -> tuple[str, ...]:
        return tuple(s.account for s in self.seeks)

    @property
    def variant(self) -> str:
        return self.seeks[0].variant

    @property
    def clock(self) -> str:
        return self.seeks[0].clock

    @property
    def rated(self) -> bool:
        return self.seeks[0].rated


def acceptable(group: Iterable[Seek], now_ms: int, every_ms: int = GAP_EVERY_MS) -> bool:
    """Whether ``group``'s ratings span at most the gap of its longest wait."""
    g = list(group)
    span = max(s.rating for s in g) - min(s.rating for s in g)
    return span <= gap(now_ms - min(s.since_ms for s in g), every_ms)


class _Bucket:
    """One bucket's open seeks sorted by (rating, since, id), so that the seeks nearest a
    rating come out in order without sorting the bucket for every seek (a bucket of 1,000
    seeks cost 120 ms per pairing pass that way, and the Box's 400 ms: bench figures in
    tests/arena/test_matching.py's docstring)."""

    def __init__(self, seeks: list[Seek]) -> None:
        self.items = sorted(seeks, key=_key)
        self.keys = [_key(x) for x in self.items]
        self.oldest = min((x.since_ms for x in seeks), default=0)

    def remove(self, seek: Seek) -> None:
        i = bisect_left(self.keys, _key(seek))
        if i < len(self.items) and self.items[i] is seek:
            del self.items[i]
            del self.keys[i]

    def nearest(self, s: Seek, bound: float) -> Iterator[Seek]:
        """The bucket's seeks by distance from ``s``'s rating (ties: the oldest, then the
        lowest id), up to ``bound`` points away; ``s`` itself included."""
        items, r = self.items, s.rating
        n = len(items)
        pos = {"L": bisect_left(self.keys, (r,)) - 1, "R": bisect_left(self.keys, (r,))}

        def run_left(rating: float) -> Iterator[Seek]:
            while pos["L"] >= 0 and items[pos["L"]].rating == rating:
                yield items[pos["L"]]
                pos["L"] -= 1

        def run_right(rating: float) -> Iterator[Seek]:
            while pos["R"] < n and items[pos["R"]].rating == rating:
                yield items[pos["R"]]
                pos["R"] += 1

        while True:
            dl = r - items[pos["L"]].rating if pos["L"] >= 0 else float("inf")
            dr = items[pos["R"]].rating - r if pos["R"] < n else float("inf")
            d = min(dl, dr)
            if d > bound:
                return
            runs: list[Iterator[Seek]] = []
            if dr == d:
                runs.append(run_right(r + d))
            if dl == d:
                # walked downwards a run is newest first: take it whole (one rating's seeks), oldest first
                runs.append(iter(list(run_left(r - d))[::-1]))
            yield from heapq.merge(*runs, key=lambda c: (c.since_ms, c.id))


def _key(s: Seek) -> tuple[float, int, str]:
    return (s.rating, s.since_ms, s.id)


def pair(seeks: Iterable[Seek], now_ms: int, every_ms: int = GAP_EVERY_MS) -> list[Pairing]:
    """The pairings to make now (see the module docstring). The same seeks give the same
    pairings in whatever order they are passed. Work per seek is bounded by the seeks
    within reach of its rating (the widest gap any seek of its bucket may have now)."""
    order = sorted(seeks, key=lambda s: (s.since_ms, s.id))
    grouped: dict[tuple[str, str, bool], list[Seek]] = {}
    by_account: dict[str, list[Seek]] = {}
    for s in order:
        grouped.setdefault(s.bucket, []).append(s)
        by_account.setdefault(s.account, []).append(s)
    buckets = {k: _Bucket(v) for k, v in grouped.items()}
    used: set[str] = set()  # accounts paired in this call
    out: list[tuple[int, Pairing]] = []
    for s in order:  # the oldest seek first, whatever its bucket
        if s.account in used:
            continue
        bucket = buckets[s.bucket]
        need = SEATS.get(s.variant, 2) - 1
        bound = gap(now_ms - min(bucket.oldest, s.since_ms), every_ms)
        cands = (c for c in bucket.nearest(s, bound) if c.account != s.account)
        chosen: tuple[Seek, ...] | None = None
        if need == 1:
            chosen = next(((c,) for c in cands if acceptable((s, c), now_ms, every_ms)), None)
        else:
            near: list[Seek] = []
            for c in cands:
                if all(c.account != x.account for x in near):
                    near.append(c)
                if len(near) >= MAX_CANDIDATES:
                    break
            best: tuple[float, tuple[Seek, ...]] | None = None
            for combo in combinations(near, need):
                if not acceptable((s, *combo), now_ms, every_ms):
                    continue
                rs = [s.rating, *(c.rating for c in combo)]
                span = max(rs) - min(rs)
                if best is None or span < best[0]:  # combinations() keeps the nearer first on ties
                    best = (span, combo)
            chosen = best[1] if best is not None else None
        if chosen is None:
            continue
        for acct in [s.account, *(c.account for c in chosen)]:
            used.add(acct)
            for x in by_account[acct]:
                buckets[x.bucket].remove(x)
        out.append((s.since_ms, Pairing((s, *chosen))))
    out.sort(key=lambda p: (p[0], p[1].seeks[0].id))
    return [p for _, p in out]


@dataclass
class Challenge:
    """An open challenge: who asked whom, for what, until when, and who has accepted."""

    id: str
    by: str
    to: tuple[str, ...]
    variant: str
    clock: str
    rated: bool
    created_ms: int
    expires_ms: int
    accepted: set[str] = field(default_factory=set)

    @property
    def accounts(self) -> tuple[str, ...]:
        """Everyone involved, the challenger first (the seating order of a game it makes)."""
        return (self.by, *self.to)


class ChallengeBook:
    """Open challenges by id. Refusals are :class:`okgin.protocol.ProtocolError`, the
    front's answer as it is."""

    def __init__(self, ttl_ms: int = CHALLENGE_TTL_MS) -> None:
        self.ttl_ms = ttl_ms
        self.open: dict[str, Challenge] = {}

    def make(self, cid: str, by: str, to: Iterable[str], variant: str, clock: str, rated: bool, now_ms: int) -> Challenge:
        named = tuple(to)
        if len(named) != SEATS[variant] - 1:
            raise ProtocolError("bad_message", f"challenge: {variant} needs {SEATS[variant] - 1} account(s) in 'to', "
                                               f"got {len(named)}")
        if by in named or len(set(named)) != len(named):
            raise ProtocolError("bad_message", "challenge: 'to' names each account once, and not yourself")
        c = Challenge(cid, by, named, variant, clock, rated, now_ms, now_ms + self.ttl_ms)
        self.open[cid] = c
        return c

    def get(self, cid: str, account: str) -> Challenge:
        c = self.open.get(cid)
        if c is None or account not in c.accounts:
            raise ProtocolError("no_such_challenge", f"no open challenge {cid!r} involves you")
        return c

    def accept(self, cid: str, account: str) -> Challenge | None:
        """``account`` accepts; the challenge (closed) when everyone named has, else None."""
        c = self.get(cid, account)
        if account not in c.to:
            raise ProtocolError("no_such_challenge", f"challenge {cid!r} is yours: cancel it, it is not offered to you")
        c.accepted.add(account)
        if c.accepted >= set(c.to):
            del self.open[cid]
            return c
        return None

    def decline(self, cid: str, account: str) -> Challenge:
        c = self.get(cid, account)
        if account not in c.to:
            raise ProtocolError("no_such_challenge", f"challenge {cid!r} is yours: cancel it, it is not offered to you")
        del self.open[cid]
        return c

    def cancel(self, cid: str, account: str) -> Challenge:
        c = self.open.get(cid)
        if c is None or c.by != account:
            raise ProtocolError("no_such_challenge", f"you have no open challenge {cid!r}")
        del self.open[cid]
        return c

    def expire(self, now_ms: int) -> list[Challenge]:
        """Remove and return the challenges whose time is up, oldest first."""
        gone = sorted((c for c in self.open.values() if c.expires_ms <= now_ms), key=lambda c: (c.expires_ms, c.id))
        for c in gone:
            del self.open[c.id]
        return gone

    def involving(self, account: str) -> list[Challenge]:
        return sorted((c for c in self.open.values() if account in c.accounts), key=lambda c: (c.created_ms, c.id))

    def made_by(self, account: str) -> list[Challenge]:
        return [c for c in self.involving(account) if c.by == account]

    def drop(self, account: str) -> list[Challenge]:
        """Remove and return every challenge involving ``account`` (it left, or went into a game)."""
        gone = self.involving(account)
        for c in gone:
            del self.open[c.id]
        return gone
