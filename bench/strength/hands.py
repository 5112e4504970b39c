"""Hand-level analysis: where a bot wins and loses its points against another.

Games to 100 are what count, but a game is about eleven Oklahoma hands, so tuning on
single hands is about ten times cheaper for the same noise, and it shows *why*: each
duplicate deal (the first hand of a seed, played once from each seat) is classified by
who ended it and how (knock, gin, undercut, drawn), with the points.

    python bench/strength/hands.py strong simple --deals 300 --seed 3
    python bench/strength/hands.py "strong:mc_knock=1" simple --deals 300 --rule knock_limit=10

Prints a table; the last line is one JSON object (mean net points per hand for A with
its 95% interval over deals).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import Timed, make_bot

from clients.bot import Bot
from okgin import Game, HandResult, RuleSet
from okgin.launch import add_rule_flag


def play_hand(bots: Sequence[Bot], rules: RuleSet, seed: str) -> HandResult:
    """Play the first hand of ``seed`` and return its result."""
    g = Game(rules, seed)
    for s, b in enumerate(bots):
        inner = getattr(b, "inner", b)
        if hasattr(inner, "peek"):  # the analysis-only oracle: show it the other hand
            inner.peek = (lambda other: lambda: g.hand.hands[other])(1 - s)
        b.on_game_start(s, rules, g.num_seats)
    for s, b in enumerate(bots):
        b.on_hand_start(g.view(s))
    while True:
        seat = g.current_player
        assert seat is not None
        legal = g.legal_actions()
        a = bots[seat].choose(g.view(seat), legal)
        r = g.apply(a, seat=seat)
        if r is not None:
            return r


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench/strength/hands.py")
    ap.add_argument("a", nargs="+", help="one or more bot specs; each is compared with the first on the same deals")
    ap.add_argument("--vs", default="simple", help="the opponent (default simple)")
    ap.add_argument("--deals", type=int, default=300)
    ap.add_argument("--seed", type=int, default=3)
    add_rule_flag(ap)
    args = ap.parse_args(argv)
    rules = RuleSet().with_assignments(args.rule)
    results = []
    base: list[float] = []
    for spec in args.a:
        kinds: Counter[str] = Counter()
        pts: Counter[str] = Counter()
        per_deal = []
        by_limit: dict[int, list[float]] = {}
        times: list[float] = []
        t0 = time.perf_counter()
        for d in range(args.deals):
            s = f"h{args.seed}/{d}"
            net = 0
            for pos in range(2):
                bots = [make_bot(args.vs, f"{s}/{x}") for x in range(2)]
                bots[pos] = Timed(make_bot(spec, f"{s}/{pos}"), times)
                r = play_hand(bots, rules, s)
                if r.outcome == "drawn":
                    key = "drawn"
                else:
                    who = "A" if r.knocker == pos else "B"
                    key = f"{who} {r.outcome}"
                kinds[key] += 1
                sign = 0 if r.winner is None else (1 if r.winner == pos else -1)
                pts[key] += sign * r.points
                net += sign * r.points
            per_deal.append(net / 2)
            by_limit.setdefault(r.knock_limit, []).append(net / 2)
        m, half = _mean_ci(per_deal)
        line = f"{spec} vs {args.vs}: net {m:+.2f} +- {half:.2f} per hand over {len(per_deal)} deals"
        diff = None
        if base:
            dm, dh = _mean_ci([x - y for x, y in zip(per_deal, base, strict=True)])
            diff = (round(dm, 3), round(dh, 3))
            line += f"; vs first {dm:+.2f} +- {dh:.2f}"
        else:
            base = per_deal
        times.sort()
        median, p99 = times[len(times) // 2], times[int(len(times) * 0.99)]
        line += f" ({time.perf_counter() - t0:.0f}s; median {median * 1e3:.1f} ms p99 {p99 * 1e3:.1f} ms)"
        print(line)
        n = len(per_deal)
        print(
            "   " + "  ".join(f"{key}: {kinds[key] / (2 * n):.3f} ({pts[key] / (2 * n):+.2f})" for key in sorted(kinds)),
            flush=True,
        )
        print(
            "   by knock limit: " + "  ".join(f"{lim}: {sum(v) / len(v):+.1f} ({len(v)})" for lim, v in sorted(by_limit.items())),
            flush=True,
        )
        results.append(
            {
                "a": spec,
                "net_per_hand": round(m, 3),
                "ci95": round(half, 3),
                "diff_vs_first": diff,
                "kinds": {k: round(v / (2 * n), 4) for k, v in kinds.items()},
                "points": {k: round(v / (2 * n), 3) for k, v in pts.items()},
            }
        )
    print(json.dumps({"vs": args.vs, "deals": args.deals, "rules": args.rule, "results": results}))
    return 0


def _mean_ci(xs: list[float]) -> tuple[float, float]:
    n = len(xs)
    m = sum(xs) / n
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / max(n - 1, 1))
    return m, 1.96 * sd / math.sqrt(n)


if __name__ == "__main__":
    sys.exit(main())
