"""``eaai-simple``: the EAAI gin rummy challenge's SimpleGinRummyPlayer, from its published description.

The EAAI 2021 undergraduate research challenge (Neller and Presser) shipped a baseline,
``SimpleGinRummyPlayer``, that every published agent measured itself against. Its
documented policy, restated for okgin's two variants:

- **face-up card** (the upcard offer, and the top of the discard pile at a draw): take it
  only if it would be part of a meld with the cards held (a set of its rank, or a run
  through it); otherwise pass / draw from the stock;
- **discard**: among the discards that leave the least deadwood, one *at random*
  (never the card just taken face up, and never a discard that repeats a draw/discard
  pair it has already played this hand: the challenge's guard against two players
  passing the same cards back and forth for ever);
- **knock**: as soon as the deadwood after that discard is within the knock limit
  (gin when it is 0; big gin when the rules offer it, since that is a knock at the
  first chance too).

How it differs from okgin's own ``simple`` (:mod:`clients.bots.simple`): ``simple``
breaks ties between equal-deadwood discards by throwing the highest card, which is
already a small improvement on the challenge's random choice, and it has no
draw/discard-pair guard. Measuring against this bot is measuring against the published
baseline, so strengths can be compared with the challenge's papers (which report
their agents' win rates against SimpleGinRummyPlayer).

Deterministic for a seed, and a pure function of the view: the random tie-break draws
from a generator seeded by the bot's seed and the decision's place in the game (hand
number, moves so far), and the pairs already played are read from the view's own
events, so a reconnect or a fresh instance plays the same move.
"""

from __future__ import annotations

import random

from okgin import DRAW_DISCARD, DRAW_STOCK, PASS, TAKE, Action, View
from okgin.melds import deadwood_mask

from ..bot import Bot
from .simple import joins_meld


def played_pairs(view: View) -> set[frozenset[int]]:
    """The {drawn, discarded} pairs the hand shown in ``view`` has played this hand.

    A pair is the card drawn on a turn (from the stock or face up) and the card thrown
    at the end of it; one card when it threw what it drew.
    """
    me = view.hand_of
    pairs: set[frozenset[int]] = set()
    drawn: int | None = None
    for e in view.events:
        if e.seat != me:
            continue
        if e.kind in ("take", "draw_discard", "draw_stock"):
            drawn = e.card
        elif e.kind == "discard" and e.card is not None:
            if drawn is not None:
                pairs.add(frozenset((drawn, e.card)))
            drawn = None
    return pairs


def just_drawn(view: View) -> int | None:
    """The card drawn on this turn by the hand shown in ``view`` (None if unknown)."""
    me = view.hand_of
    for e in reversed(view.events):
        if e.seat == me:
            return e.card if e.kind in ("take", "draw_discard", "draw_stock") else None
    return None


def least_deadwood_discards(hand: int, cards: list[int]) -> tuple[int, list[int]]:
    """The least deadwood after throwing one of ``cards`` from the 11-card ``hand``, and
    every card of ``cards`` that achieves it (ascending)."""
    best = 10**9
    ties: list[int] = []
    for c in cards:
        d = deadwood_mask(hand & ~(1 << c))
        if d < best:
            best, ties = d, [c]
        elif d == best:
            ties.append(c)
    return best, ties


class EaaiSimpleBot(Bot):
    """The EAAI challenge's baseline: meld-joining draws, random least-deadwood discards,
    knocks at the first chance."""

    name = "eaai-simple"

    def __init__(self, seed: int | str | None = None) -> None:
        super().__init__(seed)
        self._salt = self.rng.getrandbits(64)

    def choose(self, view: View, legal: list[Action]) -> Action:
        return self.decide(view, legal)

    def advise(self, view: View, captain_legal: list[Action]) -> tuple[Action | None, str] | None:
        action = self.decide(view, captain_legal)
        return action, f"I would {action}"

    def decide(self, view: View, legal: list[Action]) -> Action:
        """The move for the hand shown in ``view`` (own, or the captain's as sitter)."""
        if len(legal) == 1:
            return legal[0]
        assert view.hand is not None, "eaai-simple needs a view with a hand"
        hand = 0
        for c in view.hand:
            hand |= 1 << c
        if view.phase == "offer":
            return TAKE if joins_meld(hand, view.upcard) else PASS
        if view.phase == "draw":
            if DRAW_DISCARD in legal and view.discard_pile and joins_meld(hand, view.discard_pile[-1]):
                return DRAW_DISCARD
            return DRAW_STOCK
        for a in legal:
            if a.kind == "big_gin":
                return a
        allowed = [a.card for a in legal if a.kind == "discard" and a.card is not None]
        drawn = just_drawn(view)
        if drawn is not None:
            pairs = played_pairs(view)
            fresh = [c for c in allowed if frozenset((drawn, c)) not in pairs]
            allowed = fresh or allowed  # every discard repeats a pair: the guard gives way
        dw, ties = least_deadwood_discards(hand, allowed)
        rng = random.Random(f"{self._salt}/{view.hand_number}/{len(view.events)}")
        card = ties[rng.randrange(len(ties))]
        knock = Action("knock", card)
        if dw <= view.knock_limit and knock in legal:
            return knock
        return Action("discard", card)
