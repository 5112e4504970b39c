"""Knock timing by Monte Carlo sampling of the opponent's hand.

Knocking as soon as the rules allow (the simple baseline) throws points away twice: it
gets undercut when the opponent's hand is already tight, and it knocks for a few points
when one more draw had a fair chance of gin (25 points more). Whether to knock now is a
comparison of two expectations over the hidden cards, and both are estimated on the
same sampled deals (common random numbers, so their difference is much less noisy than
either):

**knock now**: for each sampled opponent hand, the referee's own scoring: the default
arrangement of the knocker's melds, the defender's best layoffs (from the engine), then
the points won or lost (undercut).

**play on**: the bot throws its best discard instead; the opponent draws (the discard if
it joins a meld for it, else a card from the sampled stock) and knocks if it can, which
is scored the same way from the other side; otherwise the bot draws a sampled card and
then knocks with the best 10 of its 11 (gin when the draw completes it). The lookahead
stops there: one turn each. Where the stock runs out first, the hand is drawn (0).

Opponent hands are drawn without replacement with probabilities proportional to the
:class:`Knowledge` weights (Efraimidis-Spirakis keys), always containing the cards known
to be in its hand.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from okgin import RuleSet
from okgin.layoffs import knocker_default_arrangement

from .evaluation import Evaluator
from .knowledge import Knowledge
from .tables import bits

STOCK_FLOOR = 2


@dataclass
class KnockEstimate:
    """Mean points (from the bot's side) of knocking now and of playing on one turn."""

    knock: float
    play_on: float
    undercut_rate: float
    samples: int


def sample_opponent(k: Knowledge, rng: random.Random, n: int) -> list[int]:
    """``n`` opponent hands (masks) drawn from the weighted model of :mod:`knowledge`."""
    pool = bits(k.pool)
    w = k.p_opp
    hidden = k.opp_hidden
    out = []
    for _ in range(n):
        keyed = []
        for c in pool:
            p = w[c]
            if p > 0.0:
                keyed.append((rng.random() ** (1.0 / p), c))
        keyed.sort(reverse=True)
        m = k.opp_known
        for _, c in keyed[:hidden]:
            m |= 1 << c
        out.append(m)
    return out


def _knock_points(rules: RuleSet, knocker_dw: int, defender_dw: int) -> int:
    """Points for the knocker (negative: the defender's) of a knock (RULES.md §3.5)."""
    if knocker_dw == 0:
        return rules.gin_bonus + defender_dw
    if knocker_dw < defender_dw:
        return defender_dw - knocker_dw
    if knocker_dw == defender_dw and not rules.tie_is_undercut:
        return 0
    return -(rules.undercut_bonus + knocker_dw - defender_dw)


def score_knock(rules: RuleSet, knocker: int, defender: int, knocker_dw: int) -> int:
    """Points for the knocker when ``knocker`` (10 cards) knocks against ``defender``."""
    _, defence = knocker_default_arrangement(knocker, defender)
    return _knock_points(rules, knocker_dw, defence.deadwood)


def estimate(
    ev: Evaluator,
    rules: RuleSet,
    rng: random.Random,
    knock_hand: int,
    knock_dw: int,
    play_hand: int,
    opps: list[int],
) -> KnockEstimate:
    """Compare knocking with ``knock_hand`` (10 cards, deadwood ``knock_dw``) against
    discarding down to ``play_hand`` (10 cards) and playing one more turn each."""
    k = ev.k
    limit = k.knock_limit
    thrown = k.hand & ~play_hand  # the card thrown face up when playing on
    thrown_card = thrown.bit_length() - 1 if thrown and not thrown & (thrown - 1) else None
    knock_total = 0.0
    play_total = 0.0
    undercuts = 0
    stock_after_opp = k.stock_size - 1
    for opp in opps:
        # --- knock now
        pts = score_knock(rules, knock_hand, opp, knock_dw)
        knock_total += pts
        if pts < 0:
            undercuts += 1
        # --- play on: the opponent's turn
        stock = bits(k.pool & ~opp)
        if not stock:
            continue
        rng.shuffle(stock)
        opp11 = None
        if thrown_card is not None:
            with_thrown = opp | (1 << thrown_card)
            d_thrown, _ = ev.min_after_discard(with_thrown, thrown_card)
            if d_thrown < ev.dw(opp):
                opp11 = with_thrown
                barred = thrown_card
        if opp11 is None:
            opp11 = opp | (1 << stock.pop())
            barred = None
        odw, ocard = ev.min_after_discard(opp11, barred)
        opp10 = opp11 & ~(1 << ocard)
        if odw <= limit:
            pts_o = score_knock(rules, opp10, play_hand, odw)
            play_total -= pts_o
            continue
        if stock_after_opp <= STOCK_FLOOR or not stock:
            continue  # the opponent's discard ends the hand drawn
        # --- our next turn: draw and knock with the best ten
        mine11 = play_hand | (1 << stock.pop())
        mdw, mcard = ev.min_after_discard(mine11)
        if mdw > limit:  # only when the play-on hand is not the knock hand: no knock yet
            continue
        play_total += score_knock(rules, mine11 & ~(1 << mcard), opp10, mdw)
    n = max(len(opps), 1)
    return KnockEstimate(knock_total / n, play_total / n, undercuts / n, len(opps))
