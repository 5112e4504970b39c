"""Endgame analysis: games started from late scores, to measure score-aware play.

A full game's result is decided mostly in its last hands, where points beyond the
target are worth nothing and a lead changes what is worth risking. This starts each
duplicate deal with both players already at a random score between ``--low`` and
``--high`` (the same scores in both seatings), plays to the end, and counts the games
the first bot wins; several specs are compared with the first on the same deals.

    python bench/strength/endgame.py strong "strong:equity=0" --deals 300

Prints one line per spec; the last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import make_bot

from clients.bot import Bot
from okgin import Game, RuleSet
from okgin.launch import add_rule_flag


def play_from(bots: Sequence[Bot], rules: RuleSet, seed: str, scores: tuple[int, int]) -> int | None:
    """Play a game whose scores start at ``scores``; return the winner's seat."""
    g = Game(rules, seed)
    g.scores = list(scores)  # analysis only: the engine starts every game at 0-0
    for s, b in enumerate(bots):
        b.on_game_start(s, rules, 2)
    for _ in range(100_000):
        if g.is_over:
            return g.winner
        seat = g.current_player
        assert seat is not None
        g.apply(bots[seat].choose(g.view(seat), g.legal_actions()), seat=seat)
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench/strength/endgame.py")
    ap.add_argument("a", nargs="+")
    ap.add_argument("--vs", default="simple")
    ap.add_argument("--deals", type=int, default=300)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--low", type=int, default=50)
    ap.add_argument("--high", type=int, default=95)
    add_rule_flag(ap)
    args = ap.parse_args(argv)
    rules = RuleSet().with_assignments(args.rule)
    out = []
    base: list[float] = []
    for spec in args.a:
        t0 = time.perf_counter()
        per = []
        for d in range(args.deals):
            s = f"e{args.seed}/{d}"
            r = random.Random(s)
            scores = (r.randint(args.low, args.high), r.randint(args.low, args.high))
            w = 0
            for pos in range(2):
                bots = [make_bot(args.vs, f"{s}/{x}") for x in range(2)]
                bots[pos] = make_bot(spec, f"{s}/{pos}")
                sc = scores if pos == 0 else scores[::-1]
                w += play_from(bots, rules, s, sc) == pos
            per.append(w / 2)
        m = sum(per) / len(per)
        line = f"{spec}: wins {m:.3f}"
        diff = None
        if base:
            ds = [x - y for x, y in zip(per, base, strict=True)]
            dm = sum(ds) / len(ds)
            sd = math.sqrt(sum((x - dm) ** 2 for x in ds) / max(len(ds) - 1, 1))
            diff = (round(dm, 4), round(1.96 * sd / math.sqrt(len(ds)), 4))
            line += f"; vs first {dm:+.3f} +- {diff[1]:.3f}"
        else:
            base = per
        print(line + f" ({time.perf_counter() - t0:.0f}s)", flush=True)
        out.append({"a": spec, "win_rate": round(m, 4), "diff_vs_first": diff})
    print(json.dumps({"deals": args.deals, "low": args.low, "high": args.high, "results": out}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
