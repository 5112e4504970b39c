"""What the bot knows about the hidden cards, rebuilt from the view at every decision.

Why rebuild instead of tracking with hooks: the :class:`okgin.View` carries the whole
hand's public history (``events``), so everything is a pure function of the view. The
bot then plays the same in-process and over the network, after a reconnect, and as the
sitter (who sees the captain's view), with no state to drift.

The model of the opponent's hand is a weight per unseen card, the relative chance that
the opponent holds it. Every unseen card starts equal; the opponent's moves then shift
the weights the way a rational player's moves would:

- it **picked up** a card (upcard or discard): it very likely holds cards that meld with
  it, so that card's rank mates and suit neighbours gain weight;
- it **refused** a card (passed the upcard, or drew from the stock over a discard): it
  likely holds no two cards that would meld with it, so those lose weight;
- it **discarded** a card: it is unlikely to hold cards that meld with it (players
  throw deadwood), so those lose weight too.

From the weights come ``p_opp[c]``, the probability that the opponent holds ``c``
(scaled so they sum to the number of its unknown cards), and ``p_draw[c]``, the
probability that ``c`` is the next card of the stock (the unseen cards the opponent
does not hold, spread evenly over the stock).
"""

from __future__ import annotations

from dataclasses import dataclass

from okgin import View

from .tables import FULL, RANK_MATES, SUIT_ADJ, SUIT_GAP, bits, popcount

# Weight multipliers for the cards related to a card the opponent acted on: (rank
# mates, suit neighbours one away, suit neighbours two away).
PICKED = (2.6, 2.6, 1.6)
REFUSED = (0.55, 0.6, 0.85)
DISCARDED = (0.5, 0.55, 0.8)


@dataclass
class Knowledge:
    """The bot's picture of one decision point (all cards as 52-bit masks)."""

    hand: int
    """The hand the decision is about (own, or the captain's for the sitter)."""
    pool: int
    """Unseen cards: in the stock or hidden in the opponent's hand."""
    opp_known: int
    """Cards known to be in the opponent's hand (taken from the discard pile)."""
    opp_hidden: int
    """How many of the opponent's cards are not known."""
    stock_size: int
    p_opp: list[float]
    """Per card: probability the opponent holds it (1 for known cards, 0 for seen ones)."""
    p_draw: list[float]
    """Per card: probability it is the next card of the stock."""
    weights: list[float]
    """The unnormalised opponent weights over the pool (for sampling hands)."""
    opp_discards: int
    """Cards the opponent threw this hand."""
    opp_refused: int
    """Cards the opponent declined to pick up this hand."""
    knock_limit: int
    top: int | None
    """Top card of the discard pile, if any."""


def _related(card: int) -> tuple[int, int, int]:
    return RANK_MATES[card], SUIT_ADJ[card], SUIT_GAP[card]


def _scale(weights: list[float], pool: int, card: int, factors: tuple[float, float, float]) -> None:
    for mask, f in zip(_related(card), factors, strict=True):
        for c in bits(mask & pool):
            weights[c] *= f


def opponent_of(view: View) -> int:
    """The seat playing the hand against the hand shown in ``view``."""
    me = view.hand_of
    return view.dealer if me == view.nondealer else view.nondealer


def read_view(view: View, strength: tuple[float, float, float] = (1.0, 1.0, 1.0)) -> Knowledge:
    """Build the :class:`Knowledge` for the hand shown in ``view``.

    ``strength`` raises the multipliers of a pick-up, a refusal and a discard
    (:data:`PICKED`, :data:`REFUSED`, :data:`DISCARDED`) to these powers: 1 is the
    hand-set model, 0 ignores that kind of move (bench/strength/inferfit.py fits them)."""
    assert view.hand is not None and view.hand_of is not None, "the view must show a hand"
    hand = 0
    for c in view.hand:
        hand |= 1 << c
    opp = opponent_of(view)
    pile = 0
    for c in view.discard_pile:
        pile |= 1 << c
    opp_known = 0
    for c in view.known_cards[opp]:
        opp_known |= 1 << c
    pool = FULL & ~hand & ~pile & ~opp_known
    opp_hidden = view.hand_sizes[opp] - popcount(opp_known)

    weights = [0.0] * 52
    for c in bits(pool):
        weights[c] = 1.0
    picked, refuse, discarded = PICKED, REFUSED, DISCARDED
    if strength != (1.0, 1.0, 1.0):
        picked, refuse, discarded = (
            (a ** e, b ** e, c ** e) for (a, b, c), e in zip((PICKED, REFUSED, DISCARDED), strength, strict=True)
        )

    # Replay the hand's public history to see what the opponent took, refused, threw.
    stack = [view.upcard]
    forced = False  # the non-dealer's first draw after both passed is not a refusal
    discards = 0
    refused = 0
    for ev in view.events:
        kind = ev.kind
        if kind in ("take", "draw_discard"):
            card = stack.pop()
            if ev.seat == opp:
                _scale(weights, pool, card, picked)
        elif kind == "pass":
            if ev.seat == opp and stack:
                refused |= 1 << stack[-1]
                _scale(weights, pool, stack[-1], refuse)
            forced = True
        elif kind == "draw_stock":
            if ev.seat == opp and stack and not forced:
                refused |= 1 << stack[-1]
                _scale(weights, pool, stack[-1], refuse)
            forced = False
        elif kind == "discard" and ev.card is not None:
            stack.append(ev.card)
            if ev.seat == opp:
                discards |= 1 << ev.card
                _scale(weights, pool, ev.card, discarded)

    p_opp = [0.0] * 52
    p_draw = [0.0] * 52
    pool_cards = bits(pool)
    if pool_cards:
        total = sum(weights[c] for c in pool_cards)
        k = opp_hidden / total if total > 0 else 0.0
        # Cap at 0.95 (no inference is certain) and hand the excess to the others.
        capped: dict[int, float] = {}
        for _ in range(4):
            over = [c for c in pool_cards if c not in capped and weights[c] * k > 0.95]
            if not over:
                break
            for c in over:
                capped[c] = 0.95
            rest = [c for c in pool_cards if c not in capped]
            rest_total = sum(weights[c] for c in rest)
            k = (opp_hidden - 0.95 * len(capped)) / rest_total if rest_total > 0 else 0.0
        stock = max(view.stock_size, 1)
        for c in pool_cards:
            p = capped.get(c, weights[c] * k)
            p = min(max(p, 0.0), 1.0)
            p_opp[c] = p
            p_draw[c] = (1.0 - p) / stock
    for c in bits(opp_known):
        p_opp[c] = 1.0
    return Knowledge(
        hand=hand,
        pool=pool,
        opp_known=opp_known,
        opp_hidden=opp_hidden,
        stock_size=view.stock_size,
        p_opp=p_opp,
        p_draw=p_draw,
        weights=weights,
        opp_discards=discards,
        opp_refused=refused,
        knock_limit=view.knock_limit,
        top=view.discard_pile[-1] if view.discard_pile else None,
    )
