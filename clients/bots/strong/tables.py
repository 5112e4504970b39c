"""Card-relation tables built once at import, so the hot loops are bit operations.

Every question the strong bot asks about a single card ("which cards could meld with
it?", "which pairs of cards make a run of three with it?") has a fixed answer per card;
answering it from a 52-entry table costs one list index instead of a loop over ranks
and suits, and the evaluation asks these questions thousands of times per decision.
"""

from __future__ import annotations

from okgin.cards import CARD_VALUES, SUIT_MASK

FULL = (1 << 52) - 1

#: The three other cards of the same rank.
RANK_MATES: list[int] = []
#: The pairs of cards (as two-bit masks) that complete a run of three with the card:
#: (c-2, c-1), (c-1, c+1), (c+1, c+2), those that exist in the suit.
RUN_PAIRS: list[tuple[tuple[int, int], ...]] = []
#: Same suit, one rank away (the strongest run connectors).
SUIT_ADJ: list[int] = []
#: Same suit, two ranks away (gapped connectors).
SUIT_GAP: list[int] = []
#: Every card that can share a meld of three with the card and one more card.
NEAR: list[int] = []

for _c in range(52):
    _r, _s = _c % 13, _c // 13
    RANK_MATES.append(sum(1 << (s * 13 + _r) for s in range(4) if s != _s))
    _pairs = []
    for _a, _b in ((-2, -1), (-1, 1), (1, 2)):
        if 0 <= _r + _a <= 12 and 0 <= _r + _b <= 12:
            _pairs.append((_c + _a, _c + _b))
    RUN_PAIRS.append(tuple(_pairs))
    SUIT_ADJ.append(sum(1 << (_c + d) for d in (-1, 1) if 0 <= _r + d <= 12))
    SUIT_GAP.append(sum(1 << (_c + d) for d in (-2, 2) if 0 <= _r + d <= 12))
    NEAR.append(RANK_MATES[_c] | SUIT_ADJ[_c] | SUIT_GAP[_c])

VALUES = CARD_VALUES


def near_mask(hand: int) -> int:
    """Every card that shares a rank with a card of ``hand``, or lies within two ranks of
    one in its suit: the only cards whose arrival can change the hand's melds.

    A card outside this mask cannot form a meld with any card held, so drawing it and
    throwing it back is always at least as good as keeping it; the evaluation skips it.
    """
    m = SUIT_MASK
    s0 = hand & m
    s1 = (hand >> 13) & m
    s2 = (hand >> 26) & m
    s3 = hand >> 39
    ranks = s0 | s1 | s2 | s3
    out = 0
    for i, s in enumerate((s0, s1, s2, s3)):
        spread = ((s << 1) | (s << 2) | (s >> 1) | (s >> 2)) & m
        out |= (spread | ranks) << (13 * i)
    return out & ~hand & FULL


def popcount(x: int) -> int:
    """Number of cards in a mask."""
    return x.bit_count()


def bits(mask: int) -> list[int]:
    """Card indices of a mask, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out
