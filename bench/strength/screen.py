"""Screen candidate settings against a baseline on first hands with chosen knock limits.

A change that only acts at some knock limits (say, the simple draw rule below 4) plays
exactly like the baseline everywhere else, so hands at other limits only add noise and
cost: this screen deals seeds ``SEED/0, SEED/1, ...`` and keeps those whose first hand
has a knock limit in ``--limits``, plays each once from each seat (duplicate), and
prints the candidate's mean net points per hand with its 95% interval. A screen, not a
verdict: a candidate that looks good here still needs its SPRT (``bench/sprt.py``).

    python3 bench/strength/screen.py "strong:value_draws_from=4" --vs strong-v1 --deals 100 --limits 0,1,2,3 --seed low2
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from hands import play_hand
from harness import make_bot

from okgin import Game, RuleSet
from okgin.launch import add_rule_flag


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench/strength/screen.py")
    ap.add_argument("specs", nargs="+", help="candidate bot specs (strong:key=value,...)")
    ap.add_argument("--vs", default="strong-v1")
    ap.add_argument("--deals", type=int, default=100)
    ap.add_argument("--limits", default="0,1,2,3", help="knock limits of the first hand to keep (default 0,1,2,3)")
    ap.add_argument("--seed", default="scr")
    add_rule_flag(ap)
    a = ap.parse_args(argv)
    rules = RuleSet().with_assignments(a.rule)
    lims = {int(x) for x in a.limits.split(",")}
    seeds: list[str] = []
    i = 0
    while len(seeds) < a.deals:
        s = f"{a.seed}/{i}"
        i += 1
        if Game(rules, s).hand.knock_limit in lims:
            seeds.append(s)
    for spec in a.specs:
        t0 = time.process_time()
        nets = []
        for s in seeds:
            net = 0
            for pos in range(2):
                bots = [make_bot(a.vs, f"{s}/{x}") for x in range(2)]
                bots[pos] = make_bot(spec, f"{s}/{pos}")
                r = play_hand(bots, rules, s)
                sign = 0 if r.winner is None else (1 if r.winner == pos else -1)
                net += sign * r.points
            nets.append(net / 2)
        n = len(nets)
        m = sum(nets) / n
        sd = math.sqrt(sum((x - m) ** 2 for x in nets) / (n - 1))
        print(f"{spec} vs {a.vs} limits {a.limits}: {m:+.2f} +- {1.96 * sd / math.sqrt(n):.2f} per hand "
              f"({n} deals, {time.process_time() - t0:.0f} cpu s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
