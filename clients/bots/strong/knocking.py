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
:func:`estimate_rollout` looks further (several turns of holding, played out by the
simple rule); it is the ``rollout_turns`` knob, off in ``strong-v1`` and in ``strong``
because its SPRT failed (bench/strength.md).

Opponent hands are drawn without replacement with probabilities proportional to the
:class:`Knowledge` weights (Efraimidis-Spirakis keys), always containing the cards known
to be in its hand.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
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
    """Points for the knocker (negative: the defender's) of a knock (docs/rules.md §3.5)."""
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


def knock_mean(rules: RuleSet, knock_hand: int, knock_dw: int, opps: list[int], value: Callable[[int], float] = float) -> float:
    """Mean ``value`` of knocking with ``knock_hand`` (10 cards, deadwood ``knock_dw``)
    over the opponent hands ``opps``: what :func:`estimate` calls "knock now", alone, to
    choose between knock cards."""
    return sum(value(score_knock(rules, knock_hand, opp, knock_dw)) for opp in opps) / max(len(opps), 1)


def estimate(
    ev: Evaluator,
    rules: RuleSet,
    rng: random.Random,
    knock_hand: int,
    knock_dw: int,
    play_hand: int,
    opps: list[int],
    value: Callable[[int], float] = float,
) -> KnockEstimate:
    """Compare knocking with ``knock_hand`` (10 cards, deadwood ``knock_dw``) against
    discarding down to ``play_hand`` (10 cards) and playing one more turn each.

    ``value`` maps the points of a hand's result (positive: ours, negative: the
    opponent's, 0: no score) to what the bot maximises: the points themselves, or the
    chance of winning the game (:func:`game_equity`).
    """
    k = ev.k
    limit = k.knock_limit
    thrown = k.hand & ~play_hand  # the card thrown face up when playing on
    thrown_card = thrown.bit_length() - 1 if thrown and not thrown & (thrown - 1) else None
    knock_total = 0.0
    play_total = 0.0
    undercuts = 0
    stock_after_opp = k.stock_size - 1
    nothing = value(0)
    for opp in opps:
        # --- knock now
        pts = score_knock(rules, knock_hand, opp, knock_dw)
        knock_total += value(pts)
        if pts < 0:
            undercuts += 1
        play_total += _play_on(ev, rules, rng, opp, play_hand, thrown_card, limit, stock_after_opp, value, nothing)
    n = max(len(opps), 1)
    return KnockEstimate(knock_total / n, play_total / n, undercuts / n, len(opps))


def _play_on(
    ev: Evaluator,
    rules: RuleSet,
    rng: random.Random,
    opp: int,
    play_hand: int,
    thrown_card: int | None,
    limit: int,
    stock_after_opp: int,
    value: Callable[[int], float],
    nothing: float,
) -> float:
    """One sampled continuation of playing on: the opponent's turn, then ours."""
    stock = bits(ev.k.pool & ~opp)
    if not stock:
        return nothing
    rng.shuffle(stock)
    opp11 = None
    barred = None
    if thrown_card is not None:
        with_thrown = opp | (1 << thrown_card)
        d_thrown, _ = ev.min_after_discard(with_thrown, thrown_card)
        if d_thrown < ev.dw(opp):  # our discard helps it: it takes it
            opp11 = with_thrown
            barred = thrown_card
    if opp11 is None:
        opp11 = opp | (1 << stock.pop())
    odw, ocard = ev.min_after_discard(opp11, barred)
    opp10 = opp11 & ~(1 << ocard)
    if odw <= limit:
        return value(-score_knock(rules, opp10, play_hand, odw))
    if stock_after_opp <= STOCK_FLOOR or not stock:
        return nothing  # the opponent's discard ends the hand drawn
    # --- our next turn: draw and knock with the best ten
    mine11 = play_hand | (1 << stock.pop())
    mdw, mcard = ev.min_after_discard(mine11)
    if mdw > limit:  # only when the play-on hand is not the knock hand: no knock yet
        return nothing
    return value(score_knock(rules, mine11 & ~(1 << mcard), opp10, mdw))


def game_equity(my_need: int, opp_need: int, mult: int = 1) -> Callable[[int], float]:
    """The chance of winning the game after a hand scoring ``pts`` (times ``mult``, the
    spade doubling), two players needing ``my_need`` and ``opp_need`` more points.

    A race to the target is won by whoever needs less, with an uncertainty that grows
    with the points still to score: ``P = Phi(0.2 (b - a) / sqrt(a + b + 10))`` for
    needs ``a`` (ours) and ``b``. The two constants are fitted (maximum likelihood) to
    2000 games of simple against simple, whose win rates the formula reproduces within
    a percent in every decile, under Oklahoma and standard rules alike. Points beyond
    the target are worth nothing, which is what stops a bot one knock from winning the
    game from playing on for gin.
    """

    def value(pts: int) -> float:
        a = my_need - (pts * mult if pts > 0 else 0)
        b = opp_need - (-pts * mult if pts < 0 else 0)
        if a <= 0:
            return 1.0
        if b <= 0:
            return 0.0
        return 0.5 * (1.0 + math.erf(0.2 * (b - a) / math.sqrt(2.0 * (a + b + 10))))

    return value


def estimate_rollout(
    ev: Evaluator,
    rules: RuleSet,
    rng: random.Random,
    knock_hand: int,
    knock_dw: int,
    play_hand: int,
    opps: list[int],
    turns: int,
    value: Callable[[int], float] = float,
    cross: bool = False,
    wary: bool = False,
) -> KnockEstimate:
    """Like :func:`estimate`, but "play on" looks up to ``turns`` of our turns ahead.

    :func:`estimate` values playing on by one turn each and a knock at our next draw.
    That is the worst of the ways to play on: the bot decides again next turn, and may
    hold on for gin, or for the opponent to knock into an undercut. Here each sampled
    opponent hand is played out (:func:`rollout`) with a cheap policy for both sides,
    and the continuation "hold (knocking only on gin) until our ``j``-th turn, then
    knock at the first chance" is scored for every ``j`` from 1 to ``turns`` on the
    same trajectory; "play on" is worth the best of them (common random numbers: the
    samples, their stocks and their trajectories are shared by every ``j`` and by
    "knock now").

    The best of ``turns`` noisy means is biased upwards (the winner's curse), towards
    playing on. With ``cross`` the turn is chosen on one half of the samples and its
    value read on the other half, and the other way round (two-fold cross-validation):
    the estimate is then unbiased for the turn chosen, if a little pessimistic.
    ``wary``: the rollout's opponent never knocks into an undercut (:func:`rollout`).
    """
    knock_total = 0.0
    per_turn = [[0.0] * turns, [0.0] * turns]  # sums over the even and the odd samples
    undercuts = 0
    nothing = value(0)
    for i, opp in enumerate(opps):
        pts = score_knock(rules, knock_hand, opp, knock_dw)
        knock_total += value(pts)
        if pts < 0:
            undercuts += 1
        half = per_turn[i & 1]
        for j, r in enumerate(rollout(ev, rules, rng, opp, play_hand, turns, wary)):
            half[j] += nothing if r is None else value(r)
    n = max(len(opps), 1)
    if turns <= 0:
        play_on = nothing
    elif cross:
        even, odd = per_turn
        pick_even = max(range(turns), key=lambda j: even[j])
        pick_odd = max(range(turns), key=lambda j: odd[j])
        play_on = (odd[pick_even] + even[pick_odd]) / n
    else:
        play_on = max(a + b for a, b in zip(*per_turn, strict=True)) / n
    return KnockEstimate(knock_total / n, play_on, undercuts / n, len(opps))


def rollout(
    ev: Evaluator, rules: RuleSet, rng: random.Random, opp: int, play_hand: int, turns: int, wary: bool = False
) -> list[int | None]:
    """Play a sampled deal on from our discard (we hold ``play_hand``, the opponent
    ``opp``; the stock is the other unseen cards, shuffled), for up to ``turns`` of our
    turns, and return, for each ``j`` in 1..``turns``, the points (ours positive) of the
    policy "knock at the first chance from our ``j``-th turn on, and on gin before",
    or None where the hand ends drawn or is not decided within ``turns``.

    Both sides play the simple rule, which needs no look-ahead and so costs a few
    deadwood look-ups per turn: take the face-up card if it lowers the deadwood left
    after the best discard, else draw from the stock; throw the card leaving the least
    deadwood (the highest of equals). The opponent knocks at its first chance (the
    assumption of :func:`estimate` too). The hand is drawn when a discard leaves
    :data:`STOCK_FLOOR` cards in the stock, as in the engine.

    An opponent that knocks at its first chance hands a bot that holds a low hand free
    undercuts, and the more turns the rollout holds, the more of them; ``strong`` itself
    does not knock into an undercut when it can read it coming. With ``wary`` the
    opponent knocks only when the knock wins (it sees our hand: the pessimistic end,
    against the optimistic one of knocking at the first chance).
    """
    out: list[int | None] = [None] * turns
    stock = bits(ev.k.pool & ~opp)
    rng.shuffle(stock)
    limit = ev.k.knock_limit
    mine = play_hand
    top = (ev.k.hand & ~play_hand).bit_length() - 1  # the card we throw now (-1: none)
    open_from = 0  # out[open_from:] are still undecided
    for turn in range(turns):
        # --- the opponent's turn
        opp, odw, top = _simple_turn(ev, opp, top, stock)
        if top < 0:
            break  # the stock is out: drawn
        if odw <= limit:
            pts = -score_knock(rules, opp, mine, odw)
            if pts < 0 or not wary or odw == 0:
                for j in range(open_from, turns):
                    out[j] = pts
                return out
        if len(stock) <= STOCK_FLOOR:
            return out
        # --- ours
        mine, mdw, top = _simple_turn(ev, mine, top, stock)
        if top < 0:
            break
        if mdw <= limit:
            pts = score_knock(rules, mine, opp, mdw)
            upto = turns if mdw == 0 else turn + 1  # gin: every policy goes down
            for j in range(open_from, upto):
                out[j] = pts
            open_from = upto
            if open_from >= turns:
                return out
        if len(stock) <= STOCK_FLOOR:
            return out
    return out


def _simple_turn(ev: Evaluator, hand: int, top: int, stock: list[int]) -> tuple[int, int, int]:
    """One turn of the rollout policy for ``hand`` (10 cards) facing the face-up ``top``:
    the hand kept (10 cards), its deadwood and the card thrown (-1 if the stock is out)."""
    if top >= 0:
        with_top = hand | (1 << top)
        d, c = ev.min_after_discard(with_top, top)
        if d < ev.dw(hand):
            return with_top & ~(1 << c), d, c
    if not stock:
        return hand, ev.dw(hand), -1
    h11 = hand | (1 << stock.pop())
    d, c = ev.min_after_discard(h11)
    return h11 & ~(1 << c), d, c
