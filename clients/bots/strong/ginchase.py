"""Judging hands by how far they are from gin when the knock limit is low.

With an Oklahoma knock limit of 1 to 3 (an ace, two or three turned up) a hand ends
almost only by gin or a knock on one or two stray aces, so what matters is how many
cards are still *unmelded*, not their points: a hand with three melds and a king (10
deadwood) is one card from gin, one with two melds and four low cards (8 deadwood) is
four cards away. ``strong-v1`` minimised expected deadwood points at every limit, and
lost most where the limit was lowest (bench/strength.md's ablation: hands with an ace
upcard).

So below a limit the evaluation counts each unmelded card as ``weight`` plus its
points: ``score = weight * unmelded cards + deadwood points`` of the arrangement that
minimises that score. The arithmetic is okgin's own (sets chosen explicitly, runs per
suit from a table over the 8192 suit masks; :mod:`okgin.melds`), with every card's value
raised by ``weight``, which keeps runs additive: a run is still worth melding whole.
"""

from __future__ import annotations

from functools import cache

from okgin.cards import SUIT_MASK, rank_value

from .evaluation import Evaluator
from .knowledge import Knowledge
from .tables import bits, near_mask

#: Entries kept in each memo of a :class:`Weighted` (shared by every decision of the
#: process) before it is emptied: about 20 MB at most.
MEMO = 200_000

# For a 4-bit pattern of the suits holding a rank: the sets that can be taken out of it.
_SET_OPTS: list[tuple[int, ...]] = []
for _p in range(16):
    _suits = [s for s in range(4) if _p >> s & 1]
    _o = [0]
    if len(_suits) == 3:
        _o.append(_p)
    elif len(_suits) == 4:
        _o.extend(_p & ~(1 << s) for s in range(4))
        _o.append(15)
    _SET_OPTS.append(tuple(_o))


class Weighted:
    """Least ``weight * unmelded + points`` of a hand, and of 11 cards after a discard."""

    def __init__(self, weight: int) -> None:
        w = [weight + rank_value(r) for r in range(13)]
        self.w = w
        sv = [0] * (1 << 13)
        rv = [0] * (1 << 13)
        for m in range(1 << 13):
            total = runs = block = n = 0
            for r in range(14):
                if r < 13 and m >> r & 1:
                    total += w[r]
                    block += w[r]
                    n += 1
                else:
                    if n >= 3:
                        runs += block
                    block = n = 0
            sv[m], rv[m] = total, runs
        gain = [-(10**6)] * (1 << 13)
        for s in range(1, 1 << 13):
            best = -(10**6)
            m = s
            while m:
                low = m & -m
                m ^= low
                g = w[low.bit_length() - 1] - (rv[s] - rv[s ^ low])
                if g > best:
                    best = g
            gain[s] = best
        self.sv, self.rv, self.gain = sv, rv, gain
        self._dw: dict[int, int] = {}
        self._dad: dict[int, int] = {}

    def _best(self, hand: int, discard: bool) -> int:
        m = SUIT_MASK
        s0, s1, s2, s3 = hand & m, (hand >> 13) & m, (hand >> 26) & m, hand >> 39
        sv, rv, g, w = self.sv, self.rv, self.gain, self.w
        total = sv[s0] + sv[s1] + sv[s2] + sv[s3]
        three = (s0 & s1 & (s2 | s3)) | (s2 & s3 & (s0 | s1))
        if not three:  # no rank held three times (most hands): runs only
            return total - rv[s0] - rv[s1] - rv[s2] - rv[s3] - (max(g[s0], g[s1], g[s2], g[s3]) if discard else 0)
        states = [(0, s0, s1, s2, s3)]
        r = 0
        while three:
            if three & 1:
                bit = 1 << r
                pattern = (1 if s0 & bit else 0) | (2 if s1 & bit else 0) | (4 if s2 & bit else 0) | (8 if s3 & bit else 0)
                new = []
                for val, a, b, c, d in states:
                    for opt in _SET_OPTS[pattern]:
                        if opt == 0:
                            new.append((val, a, b, c, d))
                        else:
                            new.append(
                                (
                                    val + w[r] * opt.bit_count(),
                                    a & ~bit if opt & 1 else a,
                                    b & ~bit if opt & 2 else b,
                                    c & ~bit if opt & 4 else c,
                                    d & ~bit if opt & 8 else d,
                                )
                            )
                states = new
            three >>= 1
            r += 1
        best = -(10**6)
        for val, a, b, c, d in states:
            v = val + rv[a] + rv[b] + rv[c] + rv[d]
            if discard:
                v += max(g[a], g[b], g[c], g[d])
            if v > best:
                best = v
        return total - best

    def dw(self, hand: int) -> int:
        """The weighted deadwood of ``hand`` (memoised, the memo bounded)."""
        d = self._dw.get(hand)
        if d is None:
            if len(self._dw) > MEMO:
                self._dw.clear()
            d = self._dw[hand] = self._best(hand, False)
        return d

    def dad(self, hand11: int) -> int:
        """The least weighted deadwood of 11 cards after one discard (memoised, bounded)."""
        d = self._dad.get(hand11)
        if d is None:
            if len(self._dad) > MEMO:
                self._dad.clear()
            d = self._dad[hand11] = self._best(hand11, True)
        return d


@cache
def weighted(weight: int) -> Weighted:
    """The tables for one weight, built once per process (about 0.1 s)."""
    return Weighted(weight)


class GinChaseEvaluator(Evaluator):
    """An :class:`Evaluator` whose hands are judged by weighted deadwood (module doc);
    everything the rules decide (knocks, what the opponent scores) stays in real points."""

    def __init__(
        self, k: Knowledge, *, weight: int, knock_bonus: float = 0.0, gin_bonus: float = 0.0, danger_weight: float = 0.0
    ) -> None:
        super().__init__(k, knock_bonus=knock_bonus, gin_bonus=gin_bonus, danger_weight=danger_weight)
        self.weighted = weighted(weight)

    def expected(self, hand10: int) -> float:
        e = self.expected_memo.get(hand10)
        if e is not None:
            return e
        k = self.k
        wt = self.weighted
        base = float(wt.dw(hand10))
        total = mass = 0.0
        p_draw = k.p_draw
        m = near_mask(hand10) & k.pool
        while m:
            low = m & -m
            m ^= low
            p = p_draw[low.bit_length() - 1]
            if p <= 0.0:
                continue
            u = wt.dad(hand10 | low)
            if u < base:
                total += p * u
                mass += p
        e = total + (1.0 - mass) * base
        self.expected_memo[hand10] = e
        return e

    def _candidates(self, hand11: int, margin: int = 5) -> list[int]:
        wt = self.weighted
        dws = [(wt.dw(hand11 & ~(1 << c)), c) for c in bits(hand11)]
        lo = min(d for d, _ in dws)
        return [c for d, c in dws if d <= lo + margin + wt.w[0] - 1]
