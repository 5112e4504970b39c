"""``StrongBot``: the built-in strong player of both variants, every role.

Each decision is a pure function of the view, the rules and the bot's seed:

- **draw** (upcard offer and normal draws): take the visible card when the hand it leaves
  (after the best discard) is expected to be better after one more draw than the hand
  drawing from the stock would be, two draws deep (:meth:`Evaluator.stock_value`);
- **discard**: the card whose loss leaves the best expected hand after the next draw,
  plus a penalty for the chance that the opponent melds it (:meth:`Evaluator.danger`);
- **knock**: gin always; otherwise Monte Carlo over the opponent's possible hands,
  comparing the points of knocking now with one more turn each (:mod:`knocking`).

The sitter of Gin in the Box advises the move it would make in the captain's place;
as captain it decides for itself (the advice is recorded, never needed).

Randomness (only the Monte Carlo sampling) comes from a generator seeded by the bot's
own seeded ``rng`` and the decision's place in the game (hand number, number of moves),
so a decision does not depend on what the bot computed earlier: the same seed and the
same view give the same move in-process, over the network and after a reconnect.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from typing import Any

from okgin import DRAW_DISCARD, DRAW_STOCK, PASS, TAKE, Action, RuleSet, View

from ...bot import Bot
from . import learned
from .evaluation import DeadwoodEvaluator, Evaluator
from .fastdw import dad_value
from .ginchase import GinChaseEvaluator
from .knocking import KnockEstimate, estimate, estimate_rollout, game_equity, knock_mean, sample_opponent
from .knowledge import Knowledge, read_view
from .opponent import history_of, sample_hands
from .tables import VALUES, bits


@dataclass(frozen=True)
class Params:
    """The bot's knobs. The defaults are ``strong-v1``'s settings (:data:`V1`, the bot of
    before issue 30, whose figures and ablation are in bench/strength.md); a technique
    added since is off by default here and switched on in :data:`CURRENT`, so that v1
    stays exactly what it was and every change can be tested against it (SPRT)."""

    #: Judge hands by expected deadwood after a draw (else by deadwood now).
    lookahead: bool = True
    #: Utility bonus (in deadwood points) for ending a draw able to knock, and for gin.
    knock_bonus: float = 0.0
    gin_bonus: float = 0.0
    #: Penalty (deadwood points) times the chance the opponent melds a discard.
    danger_weight: float = 2.5
    #: Weigh the opponent's pick-ups, refusals and discards (else every unseen card alike).
    inference: bool = True
    #: Draw decisions by value (else the simple rule: take only a card joining a meld).
    value_draws: bool = True
    #: Knock by Monte Carlo comparison (else as soon as the rules allow).
    mc_knock: bool = True
    mc_samples: int = 48
    #: Opponent hands for the knock decision: 0 = card weights only, 1 = Markov chain
    #: over hands that fit its discards (:mod:`opponent`).
    opp_model: int = 1
    #: Preference per opponent turn for tighter hands, and the penalty for a hand it
    #: could have knocked with (see :class:`opponent.History`).
    opp_tight: float = 0.02
    opp_no_knock: float = 1.5
    #: The other weights of the opponent model's likelihood (:mod:`opponent`): its last
    #: discard's excess deadwood, earlier discards and refusals that meld with the hand,
    #: picked-up cards that no longer meld, cards worse than an older discard.
    opp_last: float = 3.0
    opp_earlier: float = 1.0
    opp_pickup: float = 1.0
    opp_older: float = 3.0
    #: The opponent model's Markov chain: steps between two samples, and before the first
    #: (:func:`opponent.sample_hands`; bench/strength/dangerfit.py found samples 6 steps
    #: apart strongly correlated).
    opp_thin: int = 6
    opp_burn: int = 60
    #: Weigh the deadwood kept by the chance the opponent knocks before our next draw.
    hazard: bool = False
    hazard_samples: int = 24
    #: Knock to win the game, not points: value a hand's result by the chance of winning
    #: the game after it (2 players; :func:`knocking.game_equity`).
    equity: bool = True
    #: Rerank this many best discards by two draws of lookahead (0: one draw only).
    deep_discards: int = 3
    #: Playing on instead of knocking: keep the knocking hand (throw the knock card), as
    #: the Monte Carlo comparison assumed (else the usual best discard).
    keep_knock_hand: bool = True
    #: Take/keep margin: taking a discard shows the opponent a card, so it must win by this much.
    take_margin: float = 0.0
    #: Knock only when the Monte Carlo estimate of knocking beats playing on by this much
    #: (in the estimate's units: the game-winning chance with ``equity``, else points).
    knock_margin: float = 0.0
    #: The margin instead when fewer than ``knock_late_stock`` cards are left in the stock
    #: (bench/strength/knockfit.py found the best margin differs early and late in a hand
    #: in standard rules).
    knock_margin_late: float = 0.0
    knock_late_stock: int = 20
    # ---- since v1 (issue 30); each is off here and set in CURRENT once it passed an SPRT
    #: At knock limits up to ``chase_limit``, judge hands by ``chase_weight`` per unmelded
    #: card plus its points (:mod:`ginchase`): how far from gin, not how many points.
    chase_limit: int = -1
    chase_weight: int = 0
    #: Below this knock limit, draw by the simple rule (take a card only if it joins a meld).
    value_draws_from: int = 0
    #: Below this knock limit, judge hands by their deadwood now (no lookahead).
    lookahead_from: int = 0
    #: Knock decisions: value playing on by rolling each sampled deal out over up to
    #: this many of our turns (:func:`knocking.estimate_rollout`: hold, then knock at
    #: the best of those turns) instead of one turn each (0: :func:`knocking.estimate`).
    rollout_turns: int = 0
    #: Choose that turn on half of the samples and value it on the other half (two-fold
    #: cross-validation; else the best turn on all samples, biased towards playing on).
    rollout_cv: bool = False
    #: The rollout's opponent knocks only when the knock wins (else at its first chance).
    rollout_wary: bool = False
    #: Judge hands by the learned utility of :mod:`learned` (what strong-v1's hands went
    #: on to score from each deadwood, per knock limit) instead of their deadwood.
    learned: bool = False
    #: The learned utility's hand points per deadwood point (:func:`learned.utility`).
    learned_scale: float = 0.5
    #: Weigh the gin bonus by what gin's extra points are worth for the game now
    #: (:func:`gin_weight`; 2 players): nothing when a plain knock already wins it.
    gin_equity: bool = False
    #: Knock with the best of this many knock cards (the least deadwood first) by the Monte
    #: Carlo value of the knock over the sampled opponent hands, instead of the least
    #: deadwood: a card more kept may leave melds the opponent can lay off on (1: off).
    knock_choices: int = 1
    #: Powers of the card-weight multipliers of :mod:`knowledge` for the opponent's
    #: pick-ups, refusals and discards (1: the hand-set model; :func:`knowledge.read_view`).
    infer_picked: float = 1.0
    infer_refused: float = 1.0
    infer_discarded: float = 1.0
    #: Judge a discard's threat by the opponent's expected gain from it over this many
    #: sampled opponent hands (:meth:`Evaluator.threat`; 2 players), weighed by
    #: ``threat_weight``, instead of ``danger_weight`` times the chance it melds (0: off).
    threat_samples: int = 0
    threat_weight: float = 0.3
    #: The threat's measure on each sampled hand: 0 its gain in points, 1 whether the card
    #: melds with two of its cards (then ``threat_weight`` plays ``danger_weight``'s part);
    #: 2: no sampled hands, ``threat_weight`` times :meth:`Evaluator.danger_points`.
    threat_kind: int = 0
    #: The threat's hands: 1 the opponent model's (as ``opp_model`` 1), 0 hands dealt by the
    #: unseen cards' marginal weights (:func:`knocking.sample_opponent`).
    threat_model: int = 1


#: ``strong-v1``: the strong bot as it was before issue 30 (bench/strength.md).
V1 = Params()

#: Today's ``strong``: each setting that differs from :data:`V1` passed an SPRT against
#: the version before it (bench/strength.md, "SPRT runs"): the gin bonus of 25 (SPRT
#: elo0 0, elo1 20: H1 after 322 games).
CURRENT = replace(V1, gin_bonus=25.0)


class StrongBot(Bot):
    """Expected-value draws and discards, discard safety, Monte Carlo knock timing."""

    name = "strong"
    #: The settings a bot of this class starts from; keyword parameters override them.
    defaults: Params = CURRENT

    def __init__(self, seed: int | str | None = None, **params: Any) -> None:
        super().__init__(seed)
        known = {f.name for f in fields(Params)}
        bad = sorted(set(params) - known)
        if bad:
            raise ValueError(f"unknown StrongBot parameter(s) {', '.join(bad)}; known: {', '.join(sorted(known))}")
        self.params = replace(self.defaults, **params)
        self._salt = self.rng.getrandbits(64)
        self.rules = RuleSet()

    # ------------------------------------------------------------- interface
    def on_game_start(self, seat: int, rules: RuleSet, num_seats: int) -> None:
        self.rules = rules

    def choose(self, view: View, legal: list[Action]) -> Action:
        return self.decide(view, legal)

    def advise(self, view: View, captain_legal: list[Action]) -> tuple[Action | None, str] | None:
        action = self.decide(view, captain_legal)
        return action, f"I would {action}"

    # -------------------------------------------------------------- decisions
    def decide(self, view: View, legal: list[Action]) -> Action:
        """The move for the hand shown in ``view`` (own, or the captain's for the sitter)."""
        if len(legal) == 1:
            return legal[0]
        ev = self.evaluator(view)
        p = self.params
        k = ev.k
        hand = k.hand
        if p.hazard and view.phase != "offer" and k.opp_hidden > 0:
            ev.hazard = self._hazard(k, view)
        if view.phase == "offer":
            return TAKE if self._take(ev, hand, view.upcard) else PASS
        if view.phase == "draw":
            if DRAW_DISCARD in legal and k.top is not None and not _cycling(view, k.top) and self._take(ev, hand, k.top):
                return DRAW_DISCARD
            return DRAW_STOCK
        return self._discard_or_knock(view, legal, ev)

    def evaluator(self, view: View) -> Evaluator:
        """The judge of hands for a decision in ``view``, with the bot's settings."""
        p = self.params
        k = read_view(view, (p.infer_picked, p.infer_refused, p.infer_discarded)) if p.inference else _uninformed(view)
        ev: Evaluator
        if p.chase_weight > 0 and view.knock_limit <= p.chase_limit:
            ev = GinChaseEvaluator(k, weight=p.chase_weight, danger_weight=p.danger_weight)
        else:
            evaluator = Evaluator if p.lookahead and view.knock_limit >= p.lookahead_from else DeadwoodEvaluator
            utility = (
                learned.utility(self.rules, view.knock_limit, view.stock_size, p.learned_scale)
                if p.learned and view.num_seats == 2
                else None
            )
            gin_bonus = p.gin_bonus
            if p.gin_equity and gin_bonus and view.num_seats == 2:
                gin_bonus *= gin_weight(view, self.rules)
            ev = evaluator(k, knock_bonus=p.knock_bonus, gin_bonus=gin_bonus, danger_weight=p.danger_weight, utility=utility)
        if p.threat_kind == 2:
            ev.points_weight = p.threat_weight
        elif p.threat_samples > 0 and view.num_seats == 2 and k.opp_hidden > 0:
            rng = random.Random(f"{self._salt}/{view.hand_number}/{len(view.events)}/threat")
            if p.threat_model == 1:
                ev.opp_hands = lambda: self.opponent_hands(k, view, rng, p.threat_samples)
            else:
                ev.opp_hands = lambda: sample_opponent(k, rng, p.threat_samples)
            ev.gain_weight = p.threat_weight
            ev.gain_by_points = p.threat_kind == 0
        return ev

    def _take(self, ev: Evaluator, hand: int, card: int) -> bool:
        p = self.params
        if not p.value_draws or ev.k.knock_limit < p.value_draws_from:
            from ..simple import joins_meld

            return joins_meld(hand, card)
        take, _ = ev.take_value(hand, card)
        stock = ev.stock_value(hand)
        return take < stock - p.take_margin

    def _discard_or_knock(self, view: View, legal: list[Action], ev: Evaluator) -> Action:
        p = self.params
        hand = ev.k.hand
        barred = view.taken_card
        knocks = []
        for a in legal:
            if a.kind == "big_gin":
                return a
            if a.kind == "knock":
                knocks.append(a)
        discards = [a.card for a in legal if a.kind == "discard" and a.card is not None]
        if p.deep_discards > 1:
            best = ev.best_discard_deep(hand, barred, discards, p.deep_discards)
        else:
            _, best = ev.best_discard(hand, barred, discards)
        if knocks:
            kc, est = self.knock_estimate(view, knocks, ev)
            margin = p.knock_margin if view.stock_size >= p.knock_late_stock else p.knock_margin_late
            if est is None or est.knock - margin >= est.play_on:
                return Action("knock", kc)
            if p.keep_knock_hand:
                return Action("discard", kc)
        return Action("discard", best)

    def result_value(self, view: View) -> Callable[[int], float]:
        """What the bot maximises over a hand's result in points (positive: ours): the
        points, or with ``equity`` (2 players) the chance of winning the game after them."""
        if self.params.equity and view.num_seats == 2:
            me = view.hand_of
            assert me is not None
            return game_equity(
                view.target_score - view.scores[me], view.target_score - view.scores[1 - me], 2 if view.doubled else 1
            )
        return float

    def knock_estimate(self, view: View, knocks: list[Action], ev: Evaluator) -> tuple[int, KnockEstimate | None]:
        """The card to knock with (the knock leaving the least deadwood, the highest card
        thrown among equals) and the Monte Carlo comparison of knocking with it against
        playing on, None when there is nothing to weigh (gin, or ``mc_knock`` off).
        Public so that bench/strength/knockfit.py judges the very estimate the bot acts on."""
        p = self.params
        hand = ev.k.hand
        kd, kc = knock_card(ev, knocks)
        if kd == 0 or not p.mc_knock:
            return kc, None
        rng = random.Random(f"{self._salt}/{view.hand_number}/{len(view.events)}")
        opps = self.opponent_hands(ev.k, view, rng, p.mc_samples)
        value = self.result_value(view)
        if p.knock_choices > 1:
            kd, kc = self.best_knock(ev, knocks, opps, value)
        kh = hand & ~(1 << kc)
        if p.rollout_turns > 0:
            turns, cv, wary = p.rollout_turns, p.rollout_cv, p.rollout_wary
            return kc, estimate_rollout(ev, self.rules, rng, kh, kd, kh, opps, turns, value, cv, wary)
        return kc, estimate(ev, self.rules, rng, kh, kd, kh, opps, value)

    def best_knock(self, ev: Evaluator, knocks: list[Action], opps: list[int], value: Callable[[int], float]) -> tuple[int, int]:
        """The deadwood and card of the knock worth most over ``opps``, among the
        ``knock_choices`` knocks of least deadwood (ties: the earlier, as :func:`knock_card`)."""
        hand = ev.k.hand
        ranked = sorted((ev.dw(hand & ~(1 << a.card)), -VALUES[a.card], a.card) for a in knocks if a.card is not None)
        best = (float("-inf"), 0, -1)
        for kd, _, kc in ranked[: self.params.knock_choices]:
            v = knock_mean(self.rules, hand & ~(1 << kc), kd, opps, value)
            if v > best[0] + 1e-12:
                best = (v, kd, kc)
        return best[1], best[2]

    def _hazard(self, k: Knowledge, view: View) -> float:
        """Estimated chance that the opponent can knock on its next turn (drawing from
        the stock), over opponent hands sampled from its moves."""
        rng = random.Random(f"{self._salt}/{view.hand_number}/{len(view.events)}/hz")
        hands = self.opponent_hands(k, view, rng, self.params.hazard_samples)
        limit = k.knock_limit
        hits = 0
        tries = 0
        for h in hands:
            stock = bits(k.pool & ~h)
            if not stock:
                continue
            for _ in range(2):
                tries += 1
                if dad_value(h | (1 << stock[rng.randrange(len(stock))])) <= limit:
                    hits += 1
        return hits / tries if tries else 0.0

    def opponent_hands(self, k: Knowledge, view: View, rng: random.Random, n: int) -> list[int]:
        """``n`` plausible opponent hands (masks) for the Monte Carlo knock decision."""
        if self.params.opp_model == 1:
            h = history_of(view)
            p = self.params
            h.tight, h.no_knock = p.opp_tight, p.opp_no_knock
            h.last_w, h.earlier_w, h.pickup_w, h.older_w = p.opp_last, p.opp_earlier, p.opp_pickup, p.opp_older
            return sample_hands(view, k, h, rng, n, thin=p.opp_thin, burn=p.opp_burn)
        return sample_opponent(k, rng, n)


class StrongV1Bot(StrongBot):
    """``strong-v1``: the strong bot of before issue 30, the yardstick of its successors."""

    name = "strong-v1"
    defaults = V1


#: The points of a typical knock, against which gin's extra points are weighed.
TYPICAL_KNOCK = 10


def gin_weight(view: View, rules: RuleSet) -> float:
    """What gin's extra points (the rules' gin bonus over a typical knock) are worth for
    the game now, relative to what they are worth at 0-0, between 0 and 2.

    Why: the utility's gin bonus makes the bot steer towards gin, at some cost in
    deadwood and safety. At 0-0 the 25 extra points are worth that. When a plain knock
    already wins the game, or the opponent is so close that only ending the hand first
    matters, they are worth almost nothing, and chasing gin only risks the game.
    """
    me = view.hand_of
    if me is None:
        return 1.0
    mult = 2 if view.doubled else 1
    target = view.target_score
    now = game_equity(target - view.scores[me], target - view.scores[1 - me], mult)
    ref = game_equity(target, target, 1)
    k, g = TYPICAL_KNOCK, rules.gin_bonus
    base = ref(k + g) - ref(k)
    if base <= 0:
        return 1.0
    return max(0.0, min(2.0, (now(k + g) - now(k)) / base))


def knock_card(ev: Evaluator, knocks: list[Action]) -> tuple[int, int]:
    """The deadwood left and the card thrown of the knock leaving the least deadwood
    (the highest card thrown among equals: the same deadwood, fewer points to give)."""
    hand = ev.k.hand
    kd, _, kc = min((ev.dw(hand & ~(1 << a.card)), -VALUES[a.card], a.card) for a in knocks if a.card is not None)
    return kd, kc


def _cycling(view: View, card: int) -> bool:
    """Has this hand already taken ``card`` from the discard pile twice?

    Two players who each take the other's discard can pass the same cards back and
    forth for ever: the stock never shrinks, so the hand never ends (docs/rules.md §3.6.2:
    the traditional rules have no limit on it; two ``simple`` bots do it). A third pickup of the same card is refused,
    which guarantees that a hand with this bot in it ends.
    """
    me = view.hand_of
    n = sum(1 for e in view.events if e.seat == me and e.kind in ("take", "draw_discard") and e.card == card)
    return n >= 2


def _uninformed(view: View) -> Knowledge:
    """Knowledge with every unseen card alike (the ablation of opponent inference)."""
    k = read_view(view)
    n = k.opp_hidden
    pool = [c for c in range(52) if k.pool >> c & 1]
    for c in pool:
        k.weights[c] = 1.0
        k.p_opp[c] = n / len(pool) if pool else 0.0
        k.p_draw[c] = (1.0 - k.p_opp[c]) / max(k.stock_size, 1)
    return k
