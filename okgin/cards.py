"""Cards (docs/rules.md §1): 52 cards, ace always low, values A=1, 2-10 face, J/Q/K=10.

A card is a plain ``int`` from 0 to 51: ``suit * 13 + rank`` with ranks ``A23456789TJQK``
(0-12) and suits ``cdhs`` (0-3). Plain ints keep the engine fast (a hand is a 52-bit
mask, bit ``card`` set for each card held) and make cards trivially hashable and
ordered. On the wire and in records a card is the two-character string of the poker
convention (``"As"``, ``"Td"``, ``"7h"``); :func:`parse_card` and :func:`card_str`
convert.

>>> parse_card("Td")
22
>>> card_str(22), value(22), rank_of(22), suit_of(22)
('Td', 10, 9, 1)
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = [
    "CARD_VALUES", "FULL_DECK_MASK", "NUM_CARDS", "RANKS", "SUITS", "SUIT_BITS", "SUIT_MASK",
    "SUIT_SYMBOLS", "Card", "card_str", "cards_of", "cards_str", "make_card", "mask_of",
    "parse_card", "parse_cards", "pretty", "rank_of", "rank_value", "sort_key_rank",
    "sort_key_suit", "suit_of", "to_card", "value",
]

Card = int
"""A card index 0..51 (``suit * 13 + rank``)."""

RANKS = "A23456789TJQK"
SUITS = "cdhs"
NUM_CARDS = 52
SUIT_BITS = 13
SUIT_MASK = (1 << SUIT_BITS) - 1
FULL_DECK_MASK = (1 << NUM_CARDS) - 1

#: Display symbols for suits, for humans (the wire always uses ``cdhs``).
SUIT_SYMBOLS = {"c": "♣", "d": "♦", "h": "♥", "s": "♠"}

_RANK_INDEX = {r: i for i, r in enumerate(RANKS)}
_RANK_INDEX.update({"t": 9, "j": 10, "q": 11, "k": 12, "a": 0})
_SUIT_INDEX = {s: i for i, s in enumerate(SUITS)}


def rank_of(card: Card) -> int:
    """Rank index 0 (ace) .. 12 (king)."""
    return card % 13


def suit_of(card: Card) -> int:
    """Suit index 0..3 in the order clubs, diamonds, hearts, spades."""
    return card // 13


def rank_value(rank: int) -> int:
    """Points of a rank index (docs/rules.md §1 "Card value")."""
    return rank + 1 if rank < 10 else 10


def value(card: Card) -> int:
    """Points of a card: A = 1, 2-10 face value, J/Q/K = 10 (docs/rules.md §1)."""
    r = card % 13
    return r + 1 if r < 10 else 10


CARD_VALUES: tuple[int, ...] = tuple(value(c) for c in range(NUM_CARDS))


def make_card(rank: int, suit: int) -> Card:
    """Card from rank index (0=A..12=K) and suit index (0=c..3=s)."""
    if not (0 <= rank < 13 and 0 <= suit < 4):
        raise ValueError(f"no card with rank index {rank} and suit index {suit}")
    return suit * 13 + rank


def card_str(card: Card) -> str:
    """The two-character wire form of a card, e.g. ``"7h"``."""
    if not isinstance(card, int) or not 0 <= card < NUM_CARDS:
        raise ValueError(f"not a card index: {card!r}")
    return RANKS[card % 13] + SUITS[card // 13]


def parse_card(text: str) -> Card:
    """Parse ``"As"``, ``"Td"``, ``"7h"`` (``"10h"`` too, case-insensitive).

    Raises ``ValueError`` naming the bad string, so a client sees exactly which of
    its cards was malformed.
    """
    c = WIRE_INDEX.get(text) if text.__class__ is str else None
    if c is not None:  # the canonical wire form: the common case, one dict look-up
        return c
    if not isinstance(text, str):
        raise ValueError(f"a card must be a string like 'As' or 'Td', got {text!r}")
    t = text.strip()
    if len(t) == 3 and t[:2] == "10":
        t = "T" + t[2]
    if len(t) != 2:
        raise ValueError(f"bad card {text!r}: expected rank A23456789TJQK then suit cdhs, e.g. 'Td'")
    r = _RANK_INDEX.get(t[0].upper() if t[0] not in "tjqka" else t[0])
    s = _SUIT_INDEX.get(t[1].lower())
    if r is None or s is None:
        raise ValueError(f"bad card {text!r}: expected rank A23456789TJQK then suit cdhs, e.g. 'Td'")
    return s * 13 + r


# Also okgin/actions.py's fast path (Action.from_wire); not in __all__: plumbing, not user API.
WIRE_INDEX = {RANKS[c % 13] + SUITS[c // 13]: c for c in range(NUM_CARDS)}


def to_card(obj: Card | str) -> Card:
    """Accept a card index or its string form."""
    if isinstance(obj, str):
        return parse_card(obj)
    if isinstance(obj, int) and not isinstance(obj, bool) and 0 <= obj < NUM_CARDS:
        return obj
    raise ValueError(f"not a card: {obj!r}")


def parse_cards(items: Iterable[Card | str] | str) -> list[Card]:
    """Parse many cards; a single string may hold them separated by spaces or commas."""
    if isinstance(items, str):
        items = [p for p in items.replace(",", " ").split() if p]
    return [to_card(x) for x in items]


def mask_of(cards: Iterable[Card]) -> int:
    """The 52-bit mask of a collection of card indices."""
    m = 0
    for c in cards:
        m |= 1 << c
    return m


# Rank indices present in each 13-bit suit mask (built once, by adding the top bit), and
# per suit the card indices, filled in as masks are met: cards_of() is a hot path.
_RANKS_IN: list[tuple[int, ...]] = [()] * (1 << SUIT_BITS)
for _m in range(1, 1 << SUIT_BITS):
    _top = _m.bit_length() - 1
    _RANKS_IN[_m] = (*_RANKS_IN[_m & ~(1 << _top)], _top)
# Suit 0 needs no table of its own: its card indices are its rank indices, _RANKS_IN.
_SUIT_CARDS: list[list[tuple[int, ...] | None]] = [[None] * (1 << SUIT_BITS) for _ in range(4)]


def _suit_cards(suit: int, m: int) -> tuple[int, ...]:
    cs = _SUIT_CARDS[suit][m] = tuple(r + 13 * suit for r in _RANKS_IN[m])
    return cs


def cards_of(mask: int) -> list[Card]:
    """Card indices of a mask, ascending (clubs A..K, then diamonds, ...)."""
    if mask >> NUM_CARDS or mask < 0:
        raise ValueError(f"not a mask of cards: {mask!r}")
    t = _SUIT_CARDS
    m1 = (mask >> 13) & SUIT_MASK
    m2 = (mask >> 26) & SUIT_MASK
    m3 = mask >> 39
    return [
        *_RANKS_IN[mask & SUIT_MASK],  # suit 0: always built
        *(t[1][m1] or _suit_cards(1, m1)),
        *(t[2][m2] or _suit_cards(2, m2)),
        *(t[3][m3] or _suit_cards(3, m3)),
    ]


def cards_str(cards: Iterable[Card]) -> list[str]:
    """Wire forms of many cards."""
    return [card_str(c) for c in cards]


def pretty(card: Card, ascii_only: bool = False) -> str:
    """Human form with a suit symbol (``"7♥"``) or ASCII letter (``"7H"``); 10 shows as 10."""
    r = RANKS[card % 13]
    r = "10" if r == "T" else r
    s = SUITS[card // 13]
    return r + (s.upper() if ascii_only else SUIT_SYMBOLS[s])


def sort_key_suit(card: Card) -> tuple[int, int]:
    """Sort by suit then rank (the natural index order)."""
    return (card // 13, card % 13)


def sort_key_rank(card: Card) -> tuple[int, int]:
    """Sort by rank then suit."""
    return (card % 13, card // 13)
