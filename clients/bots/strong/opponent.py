"""Sampling the opponent's hidden cards from what its moves reveal (Markov chain Monte Carlo).

Why not simply deal the unseen cards at random: the opponent has been *choosing* which
cards to keep all hand. A random ten from the unseen cards has about 50 deadwood; the
opponent's real hand after a few turns has far less, because every card it threw was
its worst at the time. A knock judged against random hands is judged against a much
weaker hand than the one on the table, and undercuts follow.

So the hidden cards are drawn from the posterior given the opponent's public moves,
with a likelihood that scores how well each move fits a hand:

- its **last discard** ``x`` came out of its present hand plus ``x``: the more deadwood
  that discard left compared to its best discard, the less likely the hand
  (``exp(-LAST_DISCARD * excess)``); this alone says "every unmelded card it holds is
  no worse than ``x``", the strongest clue there is;
- its **earlier discards** and the cards it **refused** (passed, or drew the stock over)
  should not meld with two cards it holds now (each such card costs ``exp(-EARLIER)``;
  soft, since it may have drawn the partners later);
- each card it **picked up** and still holds should meld, or nearly, with the rest
  (``exp(-PICKUP)`` otherwise).

The prior is uniform over the unseen cards (the chain starts from the engine's own
uniform deal of them, :func:`okgin.infostate.deal_hidden`), and a Metropolis chain (swap one hidden card
for one unseen card, accept by the likelihood ratio) walks the posterior. Its samples
feed the knock decision (:mod:`knocking`) and the card probabilities of
:class:`knowledge.Knowledge`.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from okgin import View
from okgin.infostate import deal_hidden, hidden_of_view
from okgin.melds import deadwood_mask, min_arrangements_mask

from .fastdw import dad_value
from .knowledge import Knowledge, opponent_of
from .tables import RANK_MATES, RUN_PAIRS, VALUES, bits

LAST_DISCARD = 3.0
EARLIER = 1.0
PICKUP = 1.0
OLDER = 3.0


def _unmelded_above(hand: int, v: int) -> int:
    """How many cards of value above ``v`` lie outside the melds of the best arrangement."""
    arr = min_arrangements_mask(hand)[0]
    return sum(1 for c in arr.deadwood_cards if VALUES[c] > v)


def joins(hand: int, card: int) -> bool:
    """Would ``card`` make a meld of three with two cards of ``hand``?"""
    if (RANK_MATES[card] & hand).bit_count() >= 2:
        return True
    for a, b in RUN_PAIRS[card]:
        if hand >> a & 1 and hand >> b & 1:
            return True
    return False


@dataclass
class History:
    """The opponent's moves this hand, as the likelihood needs them."""

    last_discard: int | None
    """Its most recent move was this discard (so its hand + this card was its choice)."""
    discards: list[int]
    """All its discards this hand except the last, oldest first."""
    earlier: list[int]
    """Earlier discards and refused cards: they should not meld with its hand."""
    pickups: list[int]
    """Cards it took from the discard pile and still holds."""
    limit: int = 10
    """The knock limit: having discarded instead of knocking, its hand is likely above it."""
    tight: float = 0.02
    """Per turn it has played, how strongly hands of less deadwood are preferred."""
    no_knock: float = 1.5
    """Penalty for a hand it could have knocked with but did not."""
    last_w: float = LAST_DISCARD
    """Weight of its last discard's excess deadwood (:data:`LAST_DISCARD`)."""
    earlier_w: float = EARLIER
    """Penalty per earlier discard or refused card that melds with the hand (:data:`EARLIER`)."""
    pickup_w: float = PICKUP
    """Penalty per picked-up card that no longer melds (:data:`PICKUP`)."""
    older_w: float = OLDER
    """Penalty per card worse than an older discard still unmelded (:data:`OLDER`)."""


def history_of(view: View) -> History:
    """Read the opponent's moves from the view's events."""
    opp = opponent_of(view)
    known = set(view.known_cards[opp])
    stack = [view.upcard]
    forced = False
    earlier: list[int] = []
    last: int | None = None
    pickups: list[int] = []
    for ev in view.events:
        kind = ev.kind
        if ev.seat == opp and kind != "discard" and last is not None:
            earlier.append(last)
            last = None
        if kind in ("take", "draw_discard"):
            card = stack.pop()
            if ev.seat == opp and card in known:
                pickups.append(card)
        elif kind == "pass":
            if ev.seat == opp and stack:
                earlier.append(stack[-1])
            forced = True
        elif kind == "draw_stock":
            if ev.seat == opp and stack and not forced:
                earlier.append(stack[-1])
            forced = False
        elif kind == "discard" and ev.card is not None:
            stack.append(ev.card)
            if ev.seat == opp:
                if last is not None:
                    earlier.append(last)
                last = ev.card
    discards = [e.card for e in view.events if e.seat == opp and e.kind == 'discard' and e.card is not None]
    return History(last, discards[:-1] if last is not None else discards, earlier, pickups, view.knock_limit)


def log_likelihood(hand: int, h: History) -> float:
    """Log-likelihood of the opponent holding ``hand`` (10 cards) given its moves."""
    ll = 0.0
    if h.last_discard is not None:
        dw = deadwood_mask(hand)
        excess = dw - dad_value(hand | (1 << h.last_discard))
        ll -= h.last_w * excess
        ll -= h.tight * min(len(h.discards) + 1, 8) * dw
        if dw <= h.limit:
            ll -= h.no_knock
    for age, c in enumerate(reversed(h.discards)):
        # cards worse than an earlier discard, unmelded: it would have thrown them
        # first, unless it drew them since (one card per turn)
        worse = _unmelded_above(hand, VALUES[c])
        if worse > age + 1:
            ll -= h.older_w * (worse - age - 1)
    for c in h.earlier:
        if joins(hand, c):
            ll -= h.earlier_w
    for c in h.pickups:
        if not joins(hand & ~(1 << c), c):
            ll -= h.pickup_w
    return ll


def sample_hands(view: View, k: Knowledge, h: History, rng: random.Random, n: int, thin: int = 6, burn: int = 60) -> list[int]:
    """``n`` opponent hands (masks, known cards included) from the posterior.

    One Metropolis chain over the hidden cards; ``burn`` steps to forget the start, then
    a sample every ``thin`` steps. The start is the engine's uniform deal of the cards
    this seat cannot see (:func:`okgin.infostate.deal_hidden`, what ``Game.resample``
    deals too): the opponent's hidden slots, and the rest (the stock) to swap with.
    """
    pool = bits(k.pool)
    hidden = k.opp_hidden
    if hidden <= 0 or len(pool) < hidden:
        return [k.opp_known] * n
    per_seat, outside = deal_hidden(hidden_of_view(view), rng)
    chosen = per_seat[opponent_of(view)]
    hand = k.opp_known
    for c in chosen:
        hand |= 1 << c
    ll = log_likelihood(hand, h)
    out: list[int] = []
    steps = burn + n * thin
    if not outside:
        return [hand] * n
    for step in range(steps):
        i = rng.randrange(hidden)
        j = rng.randrange(len(outside))
        a, b = chosen[i], outside[j]
        new = (hand & ~(1 << a)) | (1 << b)
        ll_new = log_likelihood(new, h)
        if ll_new >= ll or rng.random() < math.exp(ll_new - ll):
            chosen[i], outside[j] = b, a
            hand, ll = new, ll_new
        if step >= burn and (step - burn) % thin == thin - 1:
            out.append(hand)
    return out
