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

The prior is uniform over the unseen cards, and a Metropolis chain (swap one hidden card
for one unseen card, accept by the likelihood ratio) walks the posterior. Its samples
feed the knock decision (:mod:`knocking`) and the card probabilities of
:class:`knowledge.Knowledge`.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from okgin import View
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
    return History(last, discards[:-1] if last is not None else discards, earlier, pickups)


def log_likelihood(hand: int, h: History) -> float:
    """Log-likelihood of the opponent holding ``hand`` (10 cards) given its moves."""
    ll = 0.0
    if h.last_discard is not None:
        excess = deadwood_mask(hand) - dad_value(hand | (1 << h.last_discard))
        ll -= LAST_DISCARD * excess
    for age, c in enumerate(reversed(h.discards)):
        # cards worse than an earlier discard, unmelded: it would have thrown them
        # first, unless it drew them since (one card per turn)
        worse = _unmelded_above(hand, VALUES[c])
        if worse > age + 1:
            ll -= OLDER * (worse - age - 1)
    for c in h.earlier:
        if joins(hand, c):
            ll -= EARLIER
    for c in h.pickups:
        if not joins(hand & ~(1 << c), c):
            ll -= PICKUP
    return ll


def sample_hands(k: Knowledge, h: History, rng: random.Random, n: int, thin: int = 6, burn: int = 60) -> list[int]:
    """``n`` opponent hands (masks, known cards included) from the posterior.

    One Metropolis chain over the hidden cards; ``burn`` steps to forget the uniform
    start, then a sample every ``thin`` steps.
    """
    pool = bits(k.pool)
    hidden = k.opp_hidden
    if hidden <= 0 or len(pool) < hidden:
        return [k.opp_known] * n
    chosen = rng.sample(pool, hidden)
    held = set(chosen)
    outside = [c for c in pool if c not in held]
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


# --------------------------------------------------------------------------------------
# Particle filter: replay the opponent's whole hand.

TAKE_NO_MELD = 0.25
REFUSE_MELD = 0.25
DISCARD_SLOPE = 3


def _discard_lik(hand11: int, x: int) -> float:
    excess = deadwood_mask(hand11 & ~(1 << x)) - dad_value(hand11)
    return math.exp(-DISCARD_SLOPE * excess) if excess > 0 else 1.0


def particle_hands(view: View, k: Knowledge, rng: random.Random, n: int) -> tuple[list[int], list[float]]:
    """Opponent hands and their normalised weights, by replaying the hand's events.

    Each particle deals the opponent ten cards and, turn by turn, gives it the cards it
    could have drawn, weighting the particle by how well each of the opponent's moves
    fits the hand the particle gave it (a discard that kept the least deadwood, a pickup
    that joined a meld, a refusal of a card that joined none). A card the opponent threw
    that the particle never gave it must have been that turn's stock draw.
    """
    opp = opponent_of(view)
    # The opponent's own discards (not cards it had picked up): cards it held from the
    # deal or the stock, so candidates for its deal and draws like the unseen ones.
    stack = [view.upcard]
    picked: set[int] = set()
    own_discards = 0
    for ev in view.events:
        if ev.kind in ("take", "draw_discard"):
            c = stack.pop()
            if ev.seat == opp:
                picked.add(c)
        elif ev.kind == "discard" and ev.card is not None:
            stack.append(ev.card)
            if ev.seat == opp and ev.card not in picked:
                own_discards |= 1 << ev.card
    c0 = k.pool | own_discards
    c0_list = bits(c0)
    if len(c0_list) < 10:
        return [k.opp_known] * n, [1.0 / n] * n
    hands = []
    hist = []
    for _ in range(n):
        m = 0
        for c in rng.sample(c0_list, 10):
            m |= 1 << c
        hands.append(m)
        hist.append(m)
    w = [1.0] * n
    stack = [view.upcard]
    forced = False
    pending = False
    nc = len(c0_list)
    for ev in view.events:
        kind = ev.kind
        mine = ev.seat != opp
        if kind in ("take", "draw_discard"):
            t = stack.pop()
            if not mine:
                bit = 1 << t
                for i in range(n):
                    if w[i] and not joins(hands[i], t):
                        w[i] *= TAKE_NO_MELD
                    hands[i] |= bit
        elif kind == "pass":
            if not mine and stack:
                t = stack[-1]
                for i in range(n):
                    if w[i] and joins(hands[i], t):
                        w[i] *= REFUSE_MELD
            forced = True
        elif kind == "draw_stock":
            if not mine:
                if stack and not forced:
                    t = stack[-1]
                    for i in range(n):
                        if w[i] and joins(hands[i], t):
                            w[i] *= REFUSE_MELD
                pending = True
            forced = False
        elif kind == "discard" and ev.card is not None:
            x = ev.card
            stack.append(x)
            if mine:
                continue
            xb = 1 << x
            for i in range(n):
                if not w[i]:
                    continue
                h = hands[i]
                if pending:
                    free = (c0 & ~hist[i]).bit_count()
                    if h & xb:
                        while True:
                            d = c0_list[rng.randrange(nc)]
                            if not hist[i] >> d & 1:
                                break
                        h |= 1 << d
                        hist[i] |= 1 << d
                    elif c0 & xb and not hist[i] & xb and free:
                        h |= xb
                        hist[i] |= xb
                        w[i] /= free
                    else:
                        w[i] = 0.0
                        continue
                elif not h & xb:
                    w[i] = 0.0
                    continue
                w[i] *= _discard_lik(h, x)
                hands[i] = h & ~xb
            pending = False
            total = sum(w)
            if total <= 0:
                # nothing fits (an opponent far from the model): fall back to a fresh deal
                return particle_fallback(k, rng, n)
            w = [x_ / total for x_ in w]
            ess = 1.0 / sum(x_ * x_ for x_ in w)
            if ess < n / 2:
                hands, hist = _resample(rng, hands, hist, w, n)
                w = [1.0 / n] * n
    total = sum(w)
    if total <= 0:
        return particle_fallback(k, rng, n)
    keep = [i for i in range(n) if w[i] > 0]
    return [hands[i] for i in keep], [w[i] / total for i in keep]


def _resample(rng: random.Random, hands: list[int], hist: list[int], w: list[float], n: int) -> tuple[list[int], list[int]]:
    """Systematic resampling."""
    step = 1.0 / n
    u = rng.random() * step
    out_h, out_s = [], []
    acc = 0.0
    j = 0
    for i in range(n):
        acc += w[i]
        while j < n and u < acc:
            out_h.append(hands[i])
            out_s.append(hist[i])
            u += step
            j += 1
    while len(out_h) < n:
        out_h.append(hands[-1])
        out_s.append(hist[-1])
    return out_h, out_s


def particle_fallback(k: Knowledge, rng: random.Random, n: int) -> tuple[list[int], list[float]]:
    """Uniform hands from the unseen cards (used when no particle fits the moves)."""
    pool = bits(k.pool)
    out = []
    for _ in range(n):
        m = k.opp_known
        for c in rng.sample(pool, min(k.opp_hidden, len(pool))):
            m |= 1 << c
        out.append(m)
    return out, [1.0 / n] * n
