"""Hand evaluation: how good a hand is once the unseen cards are taken into account.

The simple baseline judges a hand by its deadwood now. The strong bot judges it by the
deadwood it *expects after the next draw*: for every card that might come off the
stock (weighted by :attr:`Knowledge.p_draw`), the least deadwood reachable by keeping
it and throwing the worst card, or throwing it straight back. Two hands with equal
deadwood differ a lot here: one with live pairs and connectors (whose completing cards
are still unseen) improves on many draws, one whose completers are already discarded
or held by the opponent cannot.

Only cards near the hand (:func:`tables.near_mask`) can change its melds, so a draw is
evaluated for those few cards only; every other draw leaves the deadwood as it is.
Deadwood values are memoised per decision, because the same 10- and 11-card hands come
up again and again across candidate discards.

The deadwood is mapped through a utility before averaging, which can make crossing the
knock limit and reaching gin count for more than their points (``knock_bonus``,
``gin_bonus``): with an Oklahoma limit of 2, going from 14 to 9 deadwood buys little,
from 3 to 2 the right to knock. ``strong-v1`` sets both bonuses to 0, a utility equal to
the deadwood; a utility fitted on self-play can be given instead (``utility``, from
:mod:`learned`). What other settings measured is in bench/strength.md (issue 30).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from okgin.melds import deadwood_mask

from .fastdw import dad_value
from .knowledge import Knowledge
from .opponent import joins
from .tables import RANK_MATES, RUN_PAIRS, VALUES, bits, near_mask


class Evaluator:
    """Evaluation of hands for one decision (holds the memo tables for that decision)."""

    def __init__(
        self,
        k: Knowledge,
        *,
        knock_bonus: float = 0.0,
        gin_bonus: float = 0.0,
        danger_weight: float = 0.0,
        utility: Sequence[float] | None = None,
    ) -> None:
        self.k = k
        self.danger_weight = danger_weight
        #: Chance the opponent knocks before our next draw: the hand we keep is then the
        #: hand we are caught with, so its deadwood now counts with this weight.
        self.hazard = 0.0
        limit = k.knock_limit
        # utility of ending a draw with deadwood d (lower is better); ``utility`` is a
        # learned one (:mod:`learned`), in deadwood points, for d = 0..119
        self.util: Sequence[float] = (
            utility
            if utility is not None
            else [
                float(d) - (knock_bonus if 0 < d <= limit else 0.0) - (gin_bonus + knock_bonus if d == 0 else 0.0)
                for d in range(120)
            ]
        )
        self._dw: dict[int, int] = {}
        # expected(hand10), memoised; public because a subclass with another judgement of
        # hands (ginchase.GinChaseEvaluator) fills the same cache
        self.expected_memo: dict[int, float] = {}
        self._dad: dict[int, int] = {}

        self._danger: dict[int, float] = {}
        #: Plausible opponent hands (masks), made on first need: when set, a discard's
        #: threat is what it is worth to those hands (:meth:`threat`), not the chance
        #: that two of its mates are held. A callable because sampling costs more than
        #: most decisions that never ask.
        self.opp_hands: Callable[[], list[int]] | None = None
        #: Weight of the opponent's expected gain from a discard (utility points).
        self.gain_weight = 0.0
        #: Count a sampled hand's gain in points (else 1 for every hand the card melds with:
        #: the chance it melds, as :meth:`danger` has it, but with the cards kept together).
        self.gain_by_points = True
        self._hands: list[int] | None = None
        #: When set, a discard's threat is this times :meth:`danger_points` (no sampling).
        self.points_weight = 0.0
        self._threat: dict[int, float] = {}

    # --------------------------------------------------------------- deadwood
    def dw(self, hand: int) -> int:
        """Least deadwood of a hand (memoised)."""
        d = self._dw.get(hand)
        if d is None:
            d = deadwood_mask(hand)
            self._dw[hand] = d
        return d

    def min_after_discard(self, hand11: int, barred: int | None = None) -> tuple[int, int]:
        """Least deadwood after one discard from 11 cards, and the highest-valued card
        achieving it (``barred`` may not be thrown)."""
        base = self.dw(hand11)
        best = 10**9
        best_card = -1
        for c in bits(hand11):
            if c == barred:
                continue
            v = VALUES[c]
            if base - v > best:
                continue
            d = self.dw(hand11 & ~(1 << c))
            if d < best or (d == best and v > VALUES[best_card]):
                best, best_card = d, c
        return best, best_card

    # ------------------------------------------------------------ expectation
    def expected(self, hand10: int) -> float:
        """Expected utility of the deadwood after one more draw from the stock."""
        e = self.expected_memo.get(hand10)
        if e is not None:
            return e
        e = self.expected_memo[hand10] = self.expected_from(hand10, self.k.pool)
        return e

    def expected_from(self, hand10: int, pool: int) -> float:
        """:meth:`expected` with the stock's cards among ``pool`` (another hand's draws:
        the opponent's, whose own cards cannot come off the stock)."""
        k = self.k
        util = self.util
        base = util[self.dw(hand10)]
        total = 0.0
        mass = 0.0
        p_draw = k.p_draw
        dad = self._dad
        m = near_mask(hand10) & pool
        while m:
            low = m & -m
            m ^= low
            p = p_draw[low.bit_length() - 1]
            if p <= 0.0:
                continue
            h11 = hand10 | low
            d = dad.get(h11)
            if d is None:
                d = dad[h11] = dad_value(h11)
            u = util[d]
            if u < base:
                total += p * u
                mass += p
        return total + (1.0 - mass) * base

    # ------------------------------------------------------------------ safety
    def danger(self, card: int) -> float:
        """Probability that the opponent holds two cards that meld with ``card``.

        Seen cards count 0, known opponent cards 1, the rest :attr:`Knowledge.p_opp`,
        taken as independent (a fair approximation for so few cards).
        """
        d = self._danger.get(card)
        if d is not None:
            return d
        p = self.k.p_opp
        mates = [p[c] for c in bits(RANK_MATES[card])]
        # P(at least two of the three rank mates)
        a, b, c = [*mates, 0.0, 0.0, 0.0][:3]
        p_set = a * b + a * c + b * c - 2 * a * b * c
        miss = 1.0 - p_set
        for x, y in RUN_PAIRS[card]:
            miss *= 1.0 - p[x] * p[y]
        d = 1.0 - miss
        self._danger[card] = d
        return d

    def danger_points(self, card: int) -> float:
        """The points of the opponent's cards that ``card`` would meld, expected: over every
        pair of cards that make a meld of three with it, the chance the opponent holds both
        (:attr:`Knowledge.p_opp`, independent) times their points.

        Why: :meth:`danger` counts a card that completes two kings like one that completes
        two aces; with the opponent's real hand, weighing what a card gains it wins far
        more than the bare chance (bench/strength.md). Pairs overlap (a card may meld
        two ways), so this is an expectation of points, not a probability."""
        p = self.k.p_opp
        mates = bits(RANK_MATES[card])
        total = 0.0
        for i, a in enumerate(mates):
            for b in mates[i + 1 :]:
                total += p[a] * p[b] * (VALUES[a] + VALUES[b])
        for a, b in RUN_PAIRS[card]:
            total += p[a] * p[b] * (VALUES[a] + VALUES[b])
        return total

    def threat(self, card: int) -> float:
        """What throwing ``card`` costs us through the opponent, in utility points.

        By default (``strong``) ``danger_weight`` times :meth:`danger`, the chance it melds
        with two cards the opponent holds. The candidates of issue 30, each off unless
        set: with :attr:`points_weight`, that times :meth:`danger_points`; with
        :attr:`opp_hands`, ``gain_weight`` times, over the sampled hands, the opponent's
        gain from taking it (its utility after the best discard against what a draw from
        the stock is expected to bring it, :meth:`expected_from`; no gain counts 0, since
        it would not take the card), or with :attr:`gain_by_points` off the share of the
        hands it melds with. Why: the marginal chance treats a card that turns a
        40-deadwood hand into a 35 like one that lets a 12 knock or go gin. With the
        opponent's real hand the gain wins far more than the chance; with the bot's
        guesses of that hand it measured no better (bench/strength.md).
        """
        if self.points_weight:
            return self.points_weight * self.danger_points(card)
        if self.opp_hands is None:
            return self.danger_weight * self.danger(card) if self.danger_weight else 0.0
        t = self._threat.get(card)
        if t is not None:
            return t
        if self._hands is None:
            self._hands = self.opp_hands()
        util = self.util
        pool = self.k.pool
        bit = 1 << card
        total = 0.0
        n = 0
        for h in self._hands:
            if h & bit:
                continue
            n += 1
            if not joins(h, card):
                continue
            if self.gain_by_points:
                g = self.expected_from(h, pool & ~h) - util[dad_value(h | bit)]
                if g > 0:
                    total += g
            else:
                total += 1.0
        t = self.gain_weight * total / n if n else 0.0
        self._threat[card] = t
        return t

    # ----------------------------------------------------------------- choices
    def discard_score(self, hand11: int, card: int) -> float:
        """Score of throwing ``card`` from 11 cards: lower is better."""
        rest = hand11 & ~(1 << card)
        s = self.expected(rest)
        if self.hazard:
            s = (1.0 - self.hazard) * s + self.hazard * self.dw(rest)
        return s + self.threat(card)

    def best_discard(self, hand11: int, barred: int | None, candidates: list[int] | None = None) -> tuple[float, int]:
        """The discard of least score (ties: the higher card goes, then the lower index)."""
        best = (float("inf"), -1)
        for c in candidates if candidates is not None else bits(hand11):
            if c == barred:
                continue
            s = self.discard_score(hand11, c)
            if s < best[0] - 1e-9 or (abs(s - best[0]) <= 1e-9 and VALUES[c] > VALUES[best[1]]):
                best = (s, c)
        return best

    def best_discard_deep(self, hand11: int, barred: int | None, candidates: list[int], top: int) -> int:
        """The discard by two draws of lookahead, among the ``top`` best by one draw.

        One draw of lookahead sees a card that completes a meld; it does not see a card
        that makes a pair which the draw after could complete. Scoring the few
        discards worth considering by :meth:`stock_value` (this draw, then the next)
        does, at a tenth of the cost of scoring all of them.
        """
        scored = sorted((self.discard_score(hand11, c), -VALUES[c], c) for c in candidates if c != barred)
        best = (float("inf"), 0, -1)
        for _, neg_v, c in scored[:top]:
            s = self.stock_value(hand11 & ~(1 << c)) + self.threat(c)
            if (s, neg_v) < best[:2]:
                best = (s, neg_v, c)
        return best[2]

    def stock_value(self, hand10: int) -> float:
        """Expected score of drawing from the stock, then discarding well (two draws deep:
        this draw's card and the next one)."""
        k = self.k
        stay = self.expected(hand10)
        total = 0.0
        mass = 0.0
        for c in bits(near_mask(hand10) & k.pool):
            p = k.p_draw[c]
            if p <= 0.0:
                continue
            h11 = hand10 | (1 << c)
            s, _ = self.best_discard(h11, None, self._candidates(h11))
            total += p * min(s, stay + self.threat(c))
            mass += p
        return total + (1.0 - mass) * stay

    def take_value(self, hand10: int, card: int) -> tuple[float, int]:
        """Score of taking ``card`` from the discard pile (it may not go straight back)."""
        h11 = hand10 | (1 << card)
        return self.best_discard(h11, card, self._candidates(h11))

    def _candidates(self, hand11: int, margin: int = 5) -> list[int]:
        """Discards worth scoring: those within ``margin`` of the least deadwood left
        (throwing a card that breaks a meld is never close, so it is not evaluated)."""
        dws = [(self.dw(hand11 & ~(1 << c)), c) for c in bits(hand11)]
        lo = min(d for d, _ in dws)
        return [c for d, c in dws if d <= lo + margin]


class DeadwoodEvaluator(Evaluator):
    """An :class:`Evaluator` with no lookahead: a hand is worth its deadwood now.

    The strong bot's ``lookahead=False`` ablation (a baseline to measure the lookahead
    against); a subclass, so the default path pays nothing for the option.
    """

    def expected(self, hand10: int) -> float:
        return self.dw(hand10)
