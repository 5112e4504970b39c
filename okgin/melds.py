"""Melds and deadwood (docs/rules.md §2): sets, runs, minimum deadwood, best arrangement.

Why this is fast in pure Python: a hand is a 52-bit mask, four 13-bit suit masks. Once
the *sets* of an arrangement are fixed, the best use of the remaining cards in runs is
independent per suit, and within one suit it is unique: every maximal block of 3 or more
consecutive ranks is melded whole (melding a card never raises deadwood, because every
card is worth at least 1). So two 8192-entry tables, built once at import, give a
suit's total value and its best run value, and the only search left is over the sets:
at most three ranks of an 11-card hand can hold 3 or more cards, each with at most six
choices (no set, one of four sets of three, the set of four). Most hands have no such
rank at all and cost four table look-ups.

>>> deadwood("As 2s 3s 7h 7d 7c Kd Qd 9c 2h".split())
31
>>> best_melds("As 2s 3s 7h 7d 7c Kd Qd 9c 2h".split()).deadwood
31
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise

from .cards import (
    CARD_VALUES,
    SUIT_BITS,
    SUIT_MASK,
    Card,
    card_str,
    cards_of,
    mask_of,
    rank_of,
    rank_value,
    suit_of,
    to_card,
)

__all__ = [
    "RUN_MEMBERS", "RUN_VALUE", "SUIT_DEADWOOD", "SUIT_VALUE", "Arrangement", "Meld", "best_melds",
    "deadwood", "deadwood_after_discard_mask", "deadwood_mask", "hand_value_mask", "is_meld",
    "is_run", "is_set", "min_arrangements_mask", "validate_arrangement",
]

Meld = tuple[Card, ...]
"""A meld: its cards in ascending index order."""


def _build_tables() -> tuple[list[int], list[int], list[int]]:
    """Per 13-bit suit mask: total value, value of its runs, and which cards are in runs."""
    suit_value = [0] * (1 << SUIT_BITS)
    run_value = [0] * (1 << SUIT_BITS)
    run_members = [0] * (1 << SUIT_BITS)
    for m in range(1 << SUIT_BITS):
        total = 0
        runs = 0
        members = 0
        block_len = 0
        block_val = 0
        for r in range(SUIT_BITS + 1):
            if r < SUIT_BITS and m >> r & 1:
                v = rank_value(r)
                total += v
                block_len += 1
                block_val += v
            else:
                if block_len >= 3:
                    runs += block_val
                    members |= ((1 << block_len) - 1) << (r - block_len)
                block_len = 0
                block_val = 0
        suit_value[m] = total
        run_value[m] = runs
        run_members[m] = members
    return suit_value, run_value, run_members


SUIT_VALUE, RUN_VALUE, RUN_MEMBERS = _build_tables()
#: Deadwood of one suit when no card of it is in a set: its value minus its runs.
SUIT_DEADWOOD = [v - r for v, r in zip(SUIT_VALUE, RUN_VALUE, strict=True)]

# For each 4-bit pattern of suits holding a rank: the ways to take a set out of them,
# as 4-bit suit masks (0 = no set). Sets of three then the set of four.
_SET_OPTIONS: list[tuple[int, ...]] = []
for _p in range(16):
    _suits = [s for s in range(4) if _p >> s & 1]
    _opts = [0]
    if len(_suits) >= 3:
        for _drop in ([None] if len(_suits) == 3 else _suits):
            _opts.append(sum(1 << s for s in _suits if s != _drop))
        if len(_suits) == 4:
            _opts.append(15)
    _SET_OPTIONS.append(tuple(_opts))


def _three_of_a_rank(s0: int, s1: int, s2: int, s3: int) -> int:
    """13-bit mask of the ranks present in at least three suits."""
    return (s0 & s1 & (s2 | s3)) | (s2 & s3 & (s0 | s1))


def _set_combos(
    s: tuple[int, int, int, int], ranks3: int
) -> list[tuple[int, tuple[int, int, int, int], tuple[tuple[int, int], ...]]]:
    """Every choice of sets: (set value, per-suit removal masks, ((rank, suitmask), ...))."""
    combos: list[tuple[int, tuple[int, int, int, int], tuple[tuple[int, int], ...]]] = [(0, (0, 0, 0, 0), ())]
    r = 0
    while ranks3:
        if ranks3 & 1:
            bit = 1 << r
            pattern = (s[0] & bit and 1) | (s[1] & bit and 2) | (s[2] & bit and 4) | (s[3] & bit and 8)
            rv = rank_value(r)
            new = []
            for val, rem, chosen in combos:
                for opt in _SET_OPTIONS[pattern]:
                    if opt == 0:
                        new.append((val, rem, chosen))
                        continue
                    n = bin(opt).count("1")
                    new.append(
                        (
                            val + n * rv,
                            (
                                rem[0] | (bit if opt & 1 else 0),
                                rem[1] | (bit if opt & 2 else 0),
                                rem[2] | (bit if opt & 4 else 0),
                                rem[3] | (bit if opt & 8 else 0),
                            ),
                            (*chosen, (r, opt)),
                        )
                    )
            combos = new
        ranks3 >>= 1
        r += 1
    return combos


# For each 4-bit pattern of suits holding a rank: its set options as (cards in the set,
# then 0/1 per suit: is that suit's card in the set), "no set" first.
_SET_CHOICES: list[tuple[tuple[int, int, int, int, int], ...]] = [
    tuple((o.bit_count(), o & 1, o >> 1 & 1, o >> 2 & 1, o >> 3 & 1) for o in opts) for opts in _SET_OPTIONS
]


def deadwood_mask(hand: int) -> int:
    """Minimum deadwood of the cards in a 52-bit mask (any number of cards).

    Sets are the only choice to search (module docstring). Ranks held three or four
    times whose cards sit in no run of their suit are melded as a set outright: a set
    costs nothing there. Only the remaining "contested" ranks (a card wanted by both a
    set and a run: one random 11-card hand in eighteen) are branched on.
    """
    s0 = hand & SUIT_MASK
    s1 = (hand >> 13) & SUIT_MASK
    s2 = (hand >> 26) & SUIT_MASK
    s3 = hand >> 39
    three = (s0 & s1 & (s2 | s3)) | (s2 & s3 & (s0 | s1))
    dw = SUIT_DEADWOOD
    if not three:
        return dw[s0] + dw[s1] + dw[s2] + dw[s3]
    rm = RUN_MEMBERS
    contested = three & (rm[s0] | rm[s1] | rm[s2] | rm[s3])
    if three != contested:  # meld the uncontested sets whole: drop their cards
        keep = ~(three & ~contested)
        s0 &= keep
        s1 &= keep
        s2 &= keep
        s3 &= keep
    if not contested:
        return dw[s0] + dw[s1] + dw[s2] + dw[s3]
    total = SUIT_VALUE[s0] + SUIT_VALUE[s1] + SUIT_VALUE[s2] + SUIT_VALUE[s3]
    rv = RUN_VALUE
    if not contested & (contested - 1):  # one contested rank: try each of its set choices
        r = contested.bit_length() - 1
        b = contested
        pattern = (s0 >> r & 1) | (s1 >> r & 1) << 1 | (s2 >> r & 1) << 2 | (s3 >> r & 1) << 3
        value = rank_value(r)
        best = 0
        for n, c0, c1, c2, c3 in _SET_CHOICES[pattern]:
            melded = n * value + rv[s0 & ~(b * c0)] + rv[s1 & ~(b * c1)] + rv[s2 & ~(b * c2)] + rv[s3 & ~(b * c3)]
            if melded > best:
                best = melded
        return total - best
    best = 0
    for setval, rem, _ in _set_combos((s0, s1, s2, s3), contested):
        melded = setval + rv[s0 & ~rem[0]] + rv[s1 & ~rem[1]] + rv[s2 & ~rem[2]] + rv[s3 & ~rem[3]]
        if melded > best:
            best = melded
    return total - best


def hand_value_mask(hand: int) -> int:
    """Total points of all cards in a mask."""
    sv = SUIT_VALUE
    return sv[hand & SUIT_MASK] + sv[(hand >> 13) & SUIT_MASK] + sv[(hand >> 26) & SUIT_MASK] + sv[hand >> 39]


def deadwood(cards: Iterable[Card | str]) -> int:
    """Minimum deadwood count of a hand of 0 to 11 cards (docs/rules.md §2 "Deadwood").

    Cards may be indices or strings. Duplicates are an error: they cannot happen with
    one deck, so they signal a caller's bug.

    >>> deadwood(["5h", "6h", "7h", "Kc"])
    10
    """
    if cards.__class__ is not list and cards.__class__ is not tuple:
        cards = list(cards)  # any iterable, read once
    try:  # the fast path: known indices or wire strings, no repeats, no bools
        m = sum(map(_BIT.__getitem__, cards))
    except (KeyError, TypeError):
        m = -1
    if m < 0 or m.bit_count() != len(cards) or (m & 3 and any(x.__class__ is bool for x in cards)):
        m = _checked_mask(cards)  # raises ValueError saying what is wrong
    return deadwood_mask(m)


def deadwood_after_discard_mask(hand: int) -> tuple[int, list[Card]]:
    """For 11 cards: the least deadwood left after one discard, and every card achieving it."""
    base = deadwood_mask(hand)
    best = 10**9
    best_cards: list[Card] = []
    for c in cards_of(hand):
        # deadwood(h - c) >= deadwood(h) - value(c): skip cards that cannot beat `best`.
        if base - CARD_VALUES[c] > best:
            continue
        d = deadwood_mask(hand & ~(1 << c))
        if d < best:
            best, best_cards = d, [c]
        elif d == best:
            best_cards.append(c)
    return best, best_cards


_BIT: dict[Card | str, int] = {c: 1 << c for c in range(52)}
_BIT.update({card_str(c): 1 << c for c in range(52)})


def _checked_mask(cards: Iterable[Card | str]) -> int:
    """The mask of cards given as indices or strings; duplicates and non-cards refused.

    Fast path: one dict look-up per card (indices and canonical strings); the sum of the
    bits has one bit per card exactly when no card repeats (a repeat carries).
    """
    if not isinstance(cards, list | tuple):
        cards = list(cards)
    try:
        bits = [_BIT[x] for x in cards]
    except (KeyError, TypeError):
        bits = [1 << to_card(x) for x in cards]  # raises ValueError naming the bad card
    m = sum(bits)
    if m & 3 and any(x.__class__ is bool for x in cards):  # True == 1 finds a dict key
        raise ValueError("a card is an index 0-51 or a string like 'As', not a bool")
    if m.bit_count() != len(bits):
        raise ValueError("a hand may not hold the same card twice")
    return m


@dataclass(frozen=True)
class Arrangement:
    """A way to lay out a hand: melds, the unmelded cards and their total."""

    melds: tuple[Meld, ...]
    deadwood_cards: tuple[Card, ...]
    deadwood: int

    def to_wire(self) -> dict:
        return {
            "melds": [[card_str(c) for c in m] for m in self.melds],
            "deadwood_cards": [card_str(c) for c in self.deadwood_cards],
            "deadwood": self.deadwood,
        }


def _runs_of_suit(suit: int, m: int) -> list[Meld]:
    """Maximal blocks of 3+ consecutive ranks in a 13-bit suit mask, as melds."""
    out: list[Meld] = []
    r = 0
    while r < SUIT_BITS:
        if m >> r & 1:
            start = r
            while r < SUIT_BITS and m >> r & 1:
                r += 1
            if r - start >= 3:
                out.append(tuple(suit * 13 + k for k in range(start, r)))
        else:
            r += 1
    return out


def _arrangement(hand: int, rem: tuple[int, int, int, int], chosen: tuple[tuple[int, int], ...]) -> Arrangement:
    melds: list[Meld] = []
    for rank, opt in chosen:
        melds.append(tuple(s * 13 + rank for s in range(4) if opt >> s & 1))
    for s in range(4):
        melds.extend(_runs_of_suit(s, ((hand >> (13 * s)) & SUIT_MASK) & ~rem[s]))
    melded = 0
    for m in melds:
        melded |= mask_of(m)
    dead = cards_of(hand & ~melded)
    melds.sort()
    return Arrangement(tuple(melds), tuple(dead), sum(CARD_VALUES[c] for c in dead))


def min_arrangements_mask(hand: int) -> list[Arrangement]:
    """Every arrangement of least deadwood, long runs kept whole.

    Arrangements that differ only in how a run of six or more is cut are not listed
    separately: the cut changes neither the deadwood nor what may be laid off.
    """
    s = (hand & SUIT_MASK, (hand >> 13) & SUIT_MASK, (hand >> 26) & SUIT_MASK, hand >> 39)
    three = _three_of_a_rank(*s)
    rv = RUN_VALUE
    scored = []
    best = -1
    for setval, rem, chosen in _set_combos(s, three):
        melded = setval + rv[s[0] & ~rem[0]] + rv[s[1] & ~rem[1]] + rv[s[2] & ~rem[2]] + rv[s[3] & ~rem[3]]
        scored.append((melded, rem, chosen))
        best = max(best, melded)
    return [_arrangement(hand, rem, chosen) for melded, rem, chosen in scored if melded == best]


def best_melds(cards: Iterable[Card | str]) -> Arrangement:
    """An arrangement of least deadwood (docs/rules.md §2); deterministic among equals.

    >>> a = best_melds("4h 5h 6h 7h 7s 7c Kd".split())
    >>> a.deadwood, [[card_str(c) for c in m] for m in a.melds], a.deadwood_cards
    (10, [['7c', '7h', '7s'], ['4h', '5h', '6h']], (25,))
    """
    return min_arrangements_mask(_checked_mask(cards))[0]


def is_set(meld: Sequence[Card]) -> bool:
    """3 or 4 cards of one rank (docs/rules.md §2 "Set")."""
    return 3 <= len(meld) <= 4 and len({rank_of(c) for c in meld}) == 1 and len(set(meld)) == len(meld)


def is_run(meld: Sequence[Card]) -> bool:
    """3+ consecutive cards of one suit, ace low only (docs/rules.md §2 "Run")."""
    if len(meld) < 3 or len({suit_of(c) for c in meld}) != 1:
        return False
    ranks = sorted(rank_of(c) for c in meld)
    return all(b == a + 1 for a, b in pairwise(ranks))


def is_meld(meld: Sequence[Card]) -> bool:
    """A valid set or run."""
    return is_set(meld) or is_run(meld)


def validate_arrangement(hand: int, melds: Sequence[Sequence[Card]]) -> Arrangement:
    """Check a declared arrangement of the cards in ``hand``; raise ``ValueError`` saying why.

    Each meld must be a valid set or run of cards from the hand, and no card may be in
    two melds (docs/rules.md §2 "A card may belong to at most one meld").
    """
    used = 0
    out: list[Meld] = []
    for m in melds:
        cards = tuple(sorted(m))
        names = " ".join(card_str(c) for c in cards)
        if not is_meld(cards):
            raise ValueError(f"[{names}] is neither a set (3-4 of a rank) nor a run (3+ in suit)")
        mm = mask_of(cards)
        if mm & ~hand:
            missing = " ".join(card_str(c) for c in cards_of(mm & ~hand))
            raise ValueError(f"meld [{names}] uses {missing}, not in the hand being laid out")
        if mm & used:
            dup = " ".join(card_str(c) for c in cards_of(mm & used))
            raise ValueError(f"{dup} is in two melds; a card may belong to at most one meld")
        used |= mm
        out.append(cards)
    dead = cards_of(hand & ~used)
    out.sort()
    return Arrangement(tuple(out), tuple(dead), sum(CARD_VALUES[c] for c in dead))
