"""What one seat cannot see, and redealing it (as OpenSpiel's ``ResampleFromInfostate``).

A seat's information (docs/rules.md §5) fixes its own hand (the captain's, for the Box
sitter), the discard pile, and the cards *known* to be in each other hand: those taken
from the discard pile and not thrown since. Every other card is *hidden*: it is in the
stock or in one of the other hands' unknown slots, and nothing the seat saw tells them
apart. Search over imperfect information (ISMCTS, determinised Monte Carlo) needs worlds
drawn from that set; this module is the one place where they are drawn:

- :func:`hidden_of_view` reads the hidden cards and slots from a :class:`View` (what a bot
  has), :func:`hidden_of_game` from the full state (what the engine has); both give the
  same :class:`Hidden` for the same seat and state.
- :func:`deal_hidden` deals them uniformly at random to the slots and the stock.
- :meth:`okgin.game.Game.resample` applies such a deal to a copy of the game.

Uniform is exact for a seat that assumes nothing of the other's strategy (the prior of
ISMCTS); a bot that models its opponent (``clients/bots/strong/opponent.py``) starts
from this deal and reweighs it.

>>> from okgin import Game, RuleSet
>>> import random
>>> g = Game(RuleSet(), seed=3)
>>> h = hidden_of_game(g, 0)
>>> len(h.cards), h.slots, h.stock
(41, (0, 10), 31)
>>> hidden_of_view(g.view(0)) == h
True
>>> g.resample(0, random.Random(1)).view(0) == g.view(0)
True
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .actions import Action
from .cards import FULL_DECK_MASK, Card, cards_of

if TYPE_CHECKING:
    from .game import Game
    from .hand import Hand
    from .views import View

__all__ = [
    "Hidden", "deal_hidden", "hidden_of_game", "hidden_of_view", "known_masks", "owner_of",
    "resample",
]


@dataclass(frozen=True)
class Hidden:
    """The cards one viewer cannot place, and the places they may be in."""

    cards: tuple[Card, ...]
    """Every hidden card, ascending."""
    slots: tuple[int, ...]
    """Per seat: how many of its cards are hidden (0 for the viewer's own hand)."""
    stock: int
    """Cards in the stock (all hidden): ``len(cards) == sum(slots) + stock``."""
    known: tuple[int, ...]
    """Per seat: the mask of its cards the viewer does know (the whole hand it sees;
    for the others, the cards taken from the discard pile and not thrown since)."""


def owner_of(game: Game, seat: int | None) -> int | None:
    """Whose hand ``seat`` sees: its own, the captain's for the Box sitter, None for a spectator."""
    if seat is None:
        return None
    if game.roles is not None and seat == game.roles[2]:
        return game.roles[1]
    return seat


def known_masks(hand: Hand) -> list[int]:
    """Per seat: cards taken from the discard pile this hand and not discarded since.

    The same rule as the views' ``known_cards`` (okgin.views._filtered_events), read
    from the full event log.
    """
    known = [0] * len(hand.hands)
    for s, kind, card in hand.events:
        if kind == "take" or kind == "draw_discard":
            assert card is not None
            known[s] |= 1 << card
        elif kind == "discard":
            assert card is not None
            known[s] &= ~(1 << card)
    return known


def hidden_of_game(game: Game, seat: int | None) -> Hidden:
    """The hidden cards of the current hand from ``seat``'s point of view (None: a spectator)."""
    h = game.hand
    owner = owner_of(game, seat)
    known = known_masks(h)
    pool = 0
    slots = []
    seen = []
    for s, m in enumerate(h.hands):
        if s == owner:
            slots.append(0)
            seen.append(m)
            continue
        k = m & known[s]
        pool |= m & ~k
        slots.append((m & ~k).bit_count())
        seen.append(k)
    for c in h.stock:
        pool |= 1 << c
    return Hidden(tuple(cards_of(pool)), tuple(slots), len(h.stock), tuple(seen))


def hidden_of_view(view: View) -> Hidden:
    """The hidden cards as a viewer works them out from its :class:`View`.

    Everything not in the hand it sees, the discard pile or the known cards of the others
    is hidden; each other hand has as many hidden slots as cards beyond its known ones.
    """
    owner = view.hand_of
    seen_all = 0
    for c in view.discard_pile:
        seen_all |= 1 << c
    known = []
    slots = []
    for s in range(view.num_seats):
        m = 0
        if s == owner:
            assert view.hand is not None
            for c in view.hand:
                m |= 1 << c
            slots.append(0)
        else:
            for c in view.known_cards[s]:
                m |= 1 << c
            slots.append(view.hand_sizes[s] - len(view.known_cards[s]))
        known.append(m)
        seen_all |= m
    cards = tuple(cards_of(FULL_DECK_MASK & ~seen_all))
    if len(cards) != sum(slots) + view.stock_size:
        raise ValueError("this view has no hidden cards to deal (is the hand over?)")
    return Hidden(cards, tuple(slots), view.stock_size, tuple(known))


def deal_hidden(hidden: Hidden, rng: random.Random) -> tuple[list[list[Card]], list[Card]]:
    """Deal the hidden cards uniformly: per seat the cards for its hidden slots, and the
    stock (bottom first, the top last, as :attr:`okgin.hand.Hand.stock`).

    One shuffle of :attr:`Hidden.cards`, cut in seat order then the stock: the single
    implementation of the draw, used by :meth:`Game.resample` and by bots that hold only
    a view, so both draw the same world from the same generator state.
    """
    drawn = rng.sample(hidden.cards, len(hidden.cards))
    per_seat: list[list[Card]] = []
    i = 0
    for n in hidden.slots:
        per_seat.append(drawn[i : i + n])
        i += n
    return per_seat, drawn[i:]


def resample(game: Game, seat: int | None, rng: random.Random) -> Game:
    """A copy of ``game`` with the hidden cards of ``seat`` redealt (see :meth:`Game.resample`)."""
    g = game.copy()
    if game.over:
        return g
    h = g.hand
    hidden = hidden_of_game(game, seat)
    if not hidden.cards:
        return g
    per_seat, stock = deal_hidden(hidden, rng)
    # The deal as a renaming of the hidden cards (old -> new): applied to the hands, the
    # stock and the log of this hand, it gives a history that plays the same public moves
    # with the same legality (a hidden card was never shown, so no public move names it).
    rename: dict[Card, Card] = {}
    for s, new in enumerate(per_seat):
        if new:
            old = cards_of(h.hands[s] & ~hidden.known[s])
            rename.update(zip(old, new, strict=True))
            m = hidden.known[s]
            for c in new:
                m |= 1 << c
            h.hands[s] = m
    rename.update(zip(h.stock, stock, strict=True))
    h.stock = stock
    h.events = [(s, k, rename.get(c, c) if c is not None else None) for s, k, c in h.events]
    h.legal_cache = None
    # Advice of this hand may name the captain's hidden cards (the box never sees it).
    number = h.number
    g.advice = [(n, s, _renamed(a, rename) if n == number else a, t) for n, s, a, t in g.advice]
    g.resampled = True
    return g


def _renamed(action: Action | None, rename: dict[Card, Card]) -> Action | None:
    """``action`` with the cards it names renamed (a suggested knock may declare melds)."""
    if action is None or (action.card is None and action.melds is None):
        return action
    card = None if action.card is None else rename.get(action.card, action.card)
    melds = None if action.melds is None else [[rename.get(c, c) for c in m] for m in action.melds]
    return Action(action.kind, card, None if melds is None else tuple(tuple(m) for m in melds))
