"""The least deadwood after one discard, without trying each discard.

The evaluation's inner loop asks one question hundreds of thousands of times per game:
"holding these 11 cards, what is the least deadwood after throwing one?" Asking the
engine for each of the 11 discards costs 11 deadwood searches. This module answers in
about one, by folding the discard into the tables.

Once the sets of an arrangement are fixed, each suit's leftover cards are melded in
runs independently (see :mod:`okgin.melds`), so removing a card ``c`` of suit ``i``
changes only that suit's contribution: the deadwood drops by
``GAIN[s_i] = max over c in s_i of value(c) - (RUN_VALUE[s_i] - RUN_VALUE[s_i - c])``,
a table over the 8192 suit masks. So, over every choice of sets ``C``::

    dad(h) = total(h) - max_C ( setvalue(C) + sum_i RUN_VALUE[r_i] + max_i GAIN[r_i] )

with ``r_i`` the suit masks left after the sets of ``C``. Throwing a card out of a set
of four is covered by the choices that keep the other three as the set. Most hands have
no rank held three times and cost four table look-ups.
"""

from __future__ import annotations

from okgin.cards import SUIT_MASK, rank_value
from okgin.melds import RUN_VALUE, SUIT_VALUE

NO_CARD = -(10**6)


def _build_gain() -> list[int]:
    gain = [NO_CARD] * (1 << 13)
    for s in range(1, 1 << 13):
        best = NO_CARD
        rv = RUN_VALUE[s]
        m = s
        while m:
            low = m & -m
            m ^= low
            r = low.bit_length() - 1
            g = rank_value(r) - (rv - RUN_VALUE[s ^ low])
            if g > best:
                best = g
        gain[s] = best
    return gain


GAIN = _build_gain()

# For a 4-bit pattern of the suits holding a rank: the sets that can be taken out of it
# (4-bit suit masks; 0 = no set).
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


_SET_OPTS_NZ: list[tuple[tuple[int, int], ...]] = [tuple((o, o.bit_count()) for o in opts if o) for opts in _SET_OPTS]
_RANK_VALUES = [rank_value(r) for r in range(13)]


def dad_value(hand: int) -> int:
    """Least deadwood of ``hand`` (11 cards) after its best discard.

    >>> from okgin import mask_of, parse_cards
    >>> # As-2s-3s and the three 7s meld; Kd Qd 9c 2h 5c are 36, less the Kd thrown
    >>> dad_value(mask_of(parse_cards("As 2s 3s 7h 7d 7c Kd Qd 9c 2h 5c")))
    26
    """
    m = SUIT_MASK
    s0 = hand & m
    s1 = (hand >> 13) & m
    s2 = (hand >> 26) & m
    s3 = hand >> 39
    sv = SUIT_VALUE
    rv = RUN_VALUE
    g = GAIN
    total = sv[s0] + sv[s1] + sv[s2] + sv[s3]
    three = (s0 & s1 & (s2 | s3)) | (s2 & s3 & (s0 | s1))
    if not three:
        return total - rv[s0] - rv[s1] - rv[s2] - rv[s3] - max(g[s0], g[s1], g[s2], g[s3])
    if not three & (three - 1):
        # One rank held three or four times (the usual case): try its few sets inline.
        r = three.bit_length() - 1
        bit = three
        nb = ~bit
        best = rv[s0] + rv[s1] + rv[s2] + rv[s3] + max(g[s0], g[s1], g[s2], g[s3])
        pattern = (1 if s0 & bit else 0) | (2 if s1 & bit else 0) | (4 if s2 & bit else 0) | (8 if s3 & bit else 0)
        rvv = _RANK_VALUES[r]
        for opt, n in _SET_OPTS_NZ[pattern]:
            a = s0 & nb if opt & 1 else s0
            b = s1 & nb if opt & 2 else s1
            c = s2 & nb if opt & 4 else s2
            d = s3 & nb if opt & 8 else s3
            v = rvv * n + rv[a] + rv[b] + rv[c] + rv[d] + max(g[a], g[b], g[c], g[d])
            if v > best:
                best = v
        return total - best
    states = [(0, s0, s1, s2, s3)]
    r = 0
    while three:
        if three & 1:
            bit = 1 << r
            pattern = (1 if s0 & bit else 0) | (2 if s1 & bit else 0) | (4 if s2 & bit else 0) | (8 if s3 & bit else 0)
            rvv = rank_value(r)
            new = []
            for val, a, b, c, d in states:
                for opt in _SET_OPTS[pattern]:
                    if opt == 0:
                        new.append((val, a, b, c, d))
                    else:
                        new.append((
                            val + rvv * opt.bit_count(),
                            a & ~bit if opt & 1 else a,
                            b & ~bit if opt & 2 else b,
                            c & ~bit if opt & 4 else c,
                            d & ~bit if opt & 8 else d,
                        ))
            states = new
        three >>= 1
        r += 1
    best = NO_CARD
    for val, a, b, c, d in states:
        v = val + rv[a] + rv[b] + rv[c] + rv[d] + max(g[a], g[b], g[c], g[d])
        if v > best:
            best = v
    return total - best
