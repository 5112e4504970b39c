"""Fit how strongly `strong` reads the opponent's moves, by what the opponent really held.

:mod:`clients.bots.strong.knowledge` turns the opponent's pick-ups, refusals and
discards into a chance per unseen card that the opponent holds it, through hand-set
multipliers of the related cards' weights. This scores those chances against the
opponent's real hand, for the multipliers raised to powers (``read_view``'s
``strength``; the bot's ``infer_picked``, ``infer_refused``, ``infer_discarded``): 1 is
the hand-set model, 0 ignores that kind of move, 2 doubles its effect in log terms.

First hands of the bot against itself; at every decision of either seat, every unseen
card scores its log loss and Brier score ("the opponent holds it"), and at every
discard decision every throwable card scores the Brier score of
:meth:`Evaluator.danger` ("the opponent holds two cards melding with it", what the bot
charges a discard for). Lower is better; the table is sorted by the card log loss.

    python3 bench/strength/inferfit.py --hands 300 --seed if1 --jobs 2
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import time
from multiprocessing import Pool
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from knockfit import decisions, self_play_options

from clients.bots.strong.evaluation import Evaluator
from clients.bots.strong.knowledge import read_view
from clients.bots.strong.opponent import joins
from clients.bots.strong.tables import bits
from okgin import RuleSet

Strength = tuple[float, float, float]
#: Per strength: card log loss sum, card Brier sum, cards, danger Brier sum, discards.
Sums = list[float]


def score_hand(job: tuple[str, int, RuleSet, str, list[Strength]]) -> list[Sums]:
    """The sums of the first hand of ``seed``/``i`` for every strength in ``grid``."""
    seed, i, rules, spec, grid = job
    sums = [[0.0] * 5 for _ in grid]
    for g, _, seat, view, legal in decisions(f"{seed}/{i}", rules, spec):
        real = g.hand.hands[1 - seat]
        throwable = [a.card for a in legal if a.kind == "discard" and a.card is not None] if view.phase == "discard" else []
        for s, strength in zip(sums, grid, strict=True):
            k = read_view(view, strength)
            hidden = k.pool
            for c in bits(hidden):
                p = min(max(k.p_opp[c], 1e-3), 1 - 1e-3)
                y = real >> c & 1
                s[0] -= math.log(p if y else 1 - p)
                s[1] += (p - y) ** 2
                s[2] += 1
            if throwable:
                ev = Evaluator(k)
                for c in throwable:
                    s[3] += (ev.danger(c) - joins(real, c)) ** 2
                    s[4] += 1
    return sums


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench/strength/inferfit.py", description=__doc__.split("\n\n")[0])
    self_play_options(ap, 300, "if1")
    ap.add_argument("--powers", default="0,0.5,1,1.5,2,3", help="the powers tried for each kind of move (a full grid)")
    ap.add_argument("--top", type=int, default=15, help="rows of the table to print")
    a = ap.parse_args(argv)
    rules = RuleSet().with_assignments(a.rule)
    powers = [float(x) for x in a.powers.split(",")]
    grid: list[Strength] = [tuple(x) for x in itertools.product(powers, repeat=3)]  # type: ignore[misc]
    if (1.0, 1.0, 1.0) not in grid:
        grid.append((1.0, 1.0, 1.0))
    t = time.time()
    jobs = [(a.seed, i, rules, a.bot, grid) for i in range(a.hands)]
    total = [[0.0] * 5 for _ in grid]
    if a.jobs > 1:
        with Pool(a.jobs) as pool:
            parts = list(pool.imap(score_hand, jobs, chunksize=2))
    else:
        parts = [score_hand(j) for j in jobs]
    for part in parts:
        for acc, s in zip(total, part, strict=True):
            for j in range(5):
                acc[j] += s[j]
    rows = sorted(
        (acc[0] / max(acc[2], 1), acc[1] / max(acc[2], 1), acc[3] / max(acc[4], 1), st)
        for acc, st in zip(total, grid, strict=True)
    )
    now = next(r for r in rows if r[3] == (1.0, 1.0, 1.0))
    cards, throws = int(total[0][2]), int(total[0][4])
    print(f"{a.hands} first hands of {a.bot} against itself (seed {a.seed}): {cards} unseen-card chances, "
          f"{throws} discard dangers, {len(grid)} strengths, {time.time() - t:.0f} s")
    print("picked refused discarded | card log loss | card Brier | danger Brier")
    for r in [*rows[: a.top], now]:
        mark = "  <- the bot's" if r[3] == (1.0, 1.0, 1.0) else ""
        print(f"{r[3][0]:6g} {r[3][1]:7g} {r[3][2]:9g} | {r[0]:.5f}       | {r[1]:.5f}    | {r[2]:.5f}{mark}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
