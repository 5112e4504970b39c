"""``simple``: the baseline of gin rummy AI competitions, for both variants and every role.

The rules it follows are the well-known "simple player" of the EAAI gin rummy
competitions (also OpenSpiel's simple bot), stated as the issue states them:

- **draw**: take the upcard or the top discard only if it *joins a meld* with cards
  already held (two more of its rank, or two suit neighbours making three in a row);
  otherwise pass the upcard / draw from the stock;
- **discard**: among the cards whose discard leaves the least deadwood, throw the one
  of highest value, never the card just taken from the discard pile;
- **knock**: as soon as the rules allow, with the discard that leaves the least
  deadwood (so gin whenever gin is possible; big gin when the rules offer it).

Ties are broken by a fixed order (value, then rank, then suit, highest first), so the
bot is deterministic: it ignores its seed, and a game between two ``simple`` bots is a
pure function of the deal. As captain it ignores advice; as sitter it advises the
move it would make itself in the captain's place.

Speed matters: this is the opponent of every benchmark and strength test. The bot works
on 52-bit hand masks with the engine's table-driven :func:`okgin.melds.deadwood_mask`,
and skips any discard whose lower bound (deadwood before minus the card's value)
cannot beat the best found so far.
"""

from __future__ import annotations

from okgin import DRAW_DISCARD, DRAW_STOCK, PASS, TAKE, Action, View
from okgin.cards import CARD_VALUES, Card
from okgin.melds import deadwood_mask

from ..bot import Bot


def joins_meld(hand: int, card: Card) -> bool:
    """Would ``card`` form a set or a run with cards of the 52-bit ``hand``?

    >>> from okgin import mask_of, parse_cards
    >>> joins_meld(mask_of(parse_cards("5h 6h Kc")), parse_cards("7h")[0])
    True
    >>> joins_meld(mask_of(parse_cards("5h 7c Kc")), parse_cards("7h")[0])
    False
    """
    rank, suit = card % 13, card // 13
    same_rank = 0
    for s in range(4):
        if s != suit and hand >> (s * 13 + rank) & 1:
            same_rank += 1
    if same_rank >= 2:
        return True
    row = (hand >> (suit * 13)) & 0x1FFF
    below1 = rank >= 1 and row >> (rank - 1) & 1
    below2 = rank >= 2 and row >> (rank - 2) & 1
    above1 = rank <= 11 and row >> (rank + 1) & 1
    above2 = rank <= 10 and row >> (rank + 2) & 1
    return bool((below1 and (below2 or above1)) or (above1 and above2))


def _order(card: Card) -> tuple[int, int, int]:
    """Discard preference among equals: highest value, then rank, then suit."""
    return (CARD_VALUES[card], card % 13, card // 13)


def best_discards(hand: int, barred: Card | None) -> tuple[int, Card]:
    """The least deadwood after one discard from 11 cards (never ``barred``), and the
    card to throw for it (highest value among the cards that achieve it)."""
    base = deadwood_mask(hand)
    best_dw = 10**9
    best_card = -1
    m = hand
    while m:
        low = m & -m
        m ^= low
        c = low.bit_length() - 1
        if c == barred:
            continue
        # deadwood(hand - c) >= base - value(c): a card that cannot tie the best is skipped.
        if base - CARD_VALUES[c] > best_dw:
            continue
        d = deadwood_mask(hand ^ low)
        if d < best_dw or (d == best_dw and _order(c) > _order(best_card)):
            best_dw, best_card = d, c
    return best_dw, best_card


def simple_choice(view: View, legal: list[Action]) -> Action:
    """The simple player's move for the hand shown in ``view`` (own or, for a sitter,
    the captain's), given the legal actions of the seat to act."""
    assert view.hand is not None, "simple_choice needs a view with a hand"
    hand = 0
    for c in view.hand:
        hand |= 1 << c
    phase = view.phase
    if phase == "offer":
        return TAKE if joins_meld(hand, view.upcard) else PASS
    if phase == "draw":
        if len(legal) > 1 and view.discard_pile and joins_meld(hand, view.discard_pile[-1]):
            return DRAW_DISCARD
        return DRAW_STOCK
    # Discard phase: knock as soon as the rules allow, else the best plain discard.
    big = None
    knocks = False
    for a in legal:
        if a.kind == "big_gin":
            big = a
        elif a.kind == "knock":
            knocks = True
    if big is not None:
        return big
    dw, card = best_discards(hand, view.taken_card)
    if knocks and dw <= view.knock_limit:
        return Action("knock", card)
    return Action("discard", card)


class SimpleBot(Bot):
    """The competition baseline: meld-joining draws, least-deadwood discards, early knocks."""

    name = "simple"

    def choose(self, view: View, legal: list[Action]) -> Action:
        return simple_choice(view, legal)

    def advise(self, view: View, captain_legal: list[Action]) -> tuple[Action | None, str] | None:
        action = simple_choice(view, captain_legal)
        return action, f"I would {action}"
