"""How well does `strong` know which of its discards the opponent can meld?

Peeking at the opponent's hand for its discard safety alone (`oracle:threat_samples=1`)
wins far more than any setting of the bot does, so the question is how far the bot's
own guess of "does this card meld with two cards the opponent holds" is from the
truth, and whether the opponent model's sampled hands guess better than the card
marginals the bot uses now.

First hands of the bot against itself (Oklahoma rules unless ``--rule`` says otherwise);
at every discard decision, for every card of the hand that may be thrown, three
predictions of "the opponent holds two cards melding with it" are kept beside the truth
(:func:`opponent.joins` on the opponent's real hand):

- ``marginal``: :meth:`Evaluator.danger`, the chance from each unseen card's own
  probability, the cards taken as independent (what `strong` charges for);
- ``sampled``: the share of ``--samples`` hands of the opponent model
  (:meth:`StrongBot.opponent_hands`, the hands its knock decision trusts) with which the
  card melds;
- ``weighted``: the same share over hands dealt from the unseen cards by their
  marginal weights (:func:`knocking.sample_opponent`, the ``opp_model=0`` hands): the
  marginals of ``marginal`` with the hand's ten cards dealt together;
- ``blind``: :meth:`Evaluator.danger` with every unseen card alike (``strong:inference=0``),
  what knowing nothing of the opponent's moves gives.

It prints each one's Brier score (lower is better), its log loss, and a calibration
table, overall and by stock left. With ``--peek K`` every predictor is shown K of the
opponent's hidden cards first (:func:`oracle.peek_view`, what ``peek:cards=K`` plays
on), so the Brier scores can be set beside what that knowledge wins in games.

    python3 bench/strength/dangerfit.py --hands 500 --seed dg1 --jobs 2
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from multiprocessing import Pool
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from harness import parse_spec
from knockfit import decisions, self_play_options
from oracle import peek_view

from clients.bots.strong import StrongBot
from clients.bots.strong.knocking import sample_opponent
from clients.bots.strong.opponent import joins
from okgin import RuleSet

#: The predictors, in the order of each row's fields after the truth.
PREDICTORS = ("marginal", "sampled", "weighted", "blind")
#: Stock groups (inclusive bounds) the figures are cut by.
STOCK_GROUPS = ((25, 40), (15, 24), (0, 14))

Row = tuple[int, int, float, float, float, float]  # stock left, truth, then one per predictor


def collect_hand(job: tuple[str, int, RuleSet, str, int, tuple[int, int] | None, int]) -> list[Row]:
    """The rows of the first hand of ``seed``/``i``, the bot against itself (``chain``:
    the sampled predictor's Markov chain thinning and burn-in, None for the bot's own;
    ``peek``: how many of the opponent's hidden cards the predictors are shown)."""
    seed, i, rules, spec, samples, chain, peek = job
    _, params = parse_spec(spec)
    blind = StrongBot(seed=0, inference=False)
    # the sampled predictor's chain: the playing bot's, or the same bot's with another chain
    judge = None if chain is None else StrongBot(seed=0, **{**params, "opp_thin": chain[0], "opp_burn": chain[1]})
    rng = random.Random(f"{seed}/{i}/dangerfit")
    out: list[Row] = []
    seen: dict[int, frozenset[int]] = {0: frozenset(), 1: frozenset()}  # per seat, with --peek
    for g, bots, seat, view, legal in decisions(f"{seed}/{i}", rules, spec):
        bot = bots[seat]
        throwable = [a.card for a in legal if a.kind == "discard" and a.card is not None]
        if throwable and view.phase == "discard":
            real = g.hand.hands[1 - seat]
            if peek:
                view, seen[seat] = peek_view(view, real, peek, f"{seed}/{i}/{seat}", seen[seat])
            ev = bot.evaluator(view)
            ev_blind = blind.evaluator(view)
            k = ev.k
            sampled = (bot if judge is None else judge).opponent_hands(k, view, rng, samples)
            weighted = sample_opponent(k, rng, samples)
            for c in throwable:
                out.append((
                    view.stock_size,
                    int(joins(real, c)),
                    ev.danger(c),
                    _share(sampled, c),
                    _share(weighted, c),
                    ev_blind.danger(c),
                ))
    return out


def _share(hands: list[int], card: int) -> float:
    """The share of ``hands`` (not holding ``card``) with which ``card`` melds."""
    bit = 1 << card
    pool = [h for h in hands if not h & bit]
    return sum(joins(h, card) for h in pool) / len(pool) if pool else 0.0


def scores(rows: list[Row]) -> list[tuple[float, float, float]]:
    """Brier score, log loss and mean prediction of each predictor over ``rows``."""
    out = []
    for j in range(len(PREDICTORS)):
        brier = loss = mean = 0.0
        for r in rows:
            p, y = r[2 + j], r[1]
            brier += (p - y) ** 2
            q = min(max(p, 1e-3), 1 - 1e-3)
            loss -= math.log(q if y else 1 - q)
            mean += p
        n = max(len(rows), 1)
        out.append((brier / n, loss / n, mean / n))
    return out


def calibration(rows: list[Row], j: int, edges: tuple[float, ...] = (0.02, 0.05, 0.1, 0.2, 0.35, 0.5, 1.0)) -> list[str]:
    """Predicted against observed rate of predictor ``j``, by bins of prediction."""
    lines = []
    lo = -1.0
    for hi in edges:
        cell = [r for r in rows if lo < r[2 + j] <= hi]
        if cell:
            pred = sum(r[2 + j] for r in cell) / len(cell)
            seen = sum(r[1] for r in cell) / len(cell)
            lines.append(f"    ({max(lo, 0):.2f}, {hi:.2f}]: {len(cell):6d} cards, predicted {pred:.3f}, melds {seen:.3f}")
        lo = hi
    return lines


def report(rows: list[Row]) -> list[str]:
    lines = []
    base = sum(r[1] for r in rows) / max(len(rows), 1)
    cuts = [("all", rows)] + [(f"stock {a}-{b}", [r for r in rows if a <= r[0] <= b]) for a, b in STOCK_GROUPS]
    for name, part in cuts:
        if not part:
            continue
        lines.append(f"{name}: {len(part)} cards, {100 * sum(r[1] for r in part) / len(part):.1f}% meld")
        for pred, (brier, loss, mean) in zip(PREDICTORS, scores(part), strict=True):
            lines.append(f"  {pred:9s} Brier {brier:.4f}  log loss {loss:.4f}  mean prediction {mean:.3f}")
    lines.append(f"calibration (all cards; {100 * base:.1f}% meld):")
    for j, pred in enumerate(PREDICTORS):
        lines.append(f"  {pred}:")
        lines.extend(calibration(rows, j))
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench/strength/dangerfit.py", description=__doc__.split("\n\n")[0])
    self_play_options(ap, 500, "dg1")
    ap.add_argument("--samples", type=int, default=24, help="opponent hands per decision for the sampled predictors")
    ap.add_argument("--chain", default=None, metavar="THIN,BURN",
                    help="the sampled predictor's chain (steps between samples, steps before the first; "
                         "default: the bot's own)")
    ap.add_argument("--peek", type=int, default=0, metavar="K",
                    help="show the predictors K of the opponent's hidden cards (default 0: none)")
    a = ap.parse_args(argv)
    if not 0 <= a.peek <= 10:
        ap.error("--peek takes 0 to 10 cards")
    rules = RuleSet().with_assignments(a.rule)
    t = time.time()
    chain = tuple(int(x) for x in a.chain.split(",")) if a.chain else None
    if chain is not None and len(chain) != 2:
        ap.error("--chain takes THIN,BURN")
    jobs = [(a.seed, i, rules, a.bot, a.samples, chain, a.peek) for i in range(a.hands)]
    if a.jobs > 1:
        with Pool(a.jobs) as pool:
            rows = [r for part in pool.imap(collect_hand, jobs, chunksize=4) for r in part]
    else:
        rows = [r for job in jobs for r in collect_hand(job)]
    print(f"{len(rows)} throwable cards at the discard decisions of {a.hands} first hands of {a.bot} "
          f"against itself (seed {a.seed}, {a.samples} samples, chain {a.chain or 'as the bot'}, {a.peek} cards peeked), "
          f"{time.time() - t:.0f} s")
    print("\n".join(report(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
