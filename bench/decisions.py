"""Decision time of one bot on one core: median and p99 over a fixed number of decisions.

    python3 bench/decisions.py strong --decisions 5000
    python3 bench/decisions.py strong-v1 --decisions 5000 --variant box

The bot plays whole games against ``--vs`` (default ``eaai-simple``), in every seat in
turn (and every role of Gin in the Box, the sitter's advice included: the captain waits
for it), until it has made ``--decisions`` decisions that had a choice (a decision with
one legal action is answered without thinking and would flatter the median). The
process is pinned to one CPU (``os.sched_setaffinity``), since the target is "one core".

Each decision is timed twice: **CPU time** of this thread (``time.thread_time_ns``),
which is what the decision costs on a core of its own and does not grow when other
processes share the machine, and **wall time** (``perf_counter_ns``), which does. On a
quiet machine the two agree; under load read the CPU figures. Printed per phase
(upcard offer, draw, discard or knock) and overall, then one JSON line. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from clients.bot import Bot
from clients.bots import get_bot
from clients.local import play_local
from okgin import Action, RuleSet, View

T = TypeVar("T")


class Clocked(Bot):
    """Wraps a bot; records (phase, cpu ns, wall ns) of each decision that had a choice."""

    def __init__(self, inner: Bot, sink: list[tuple[str, int, int]]) -> None:
        super().__init__()
        self.inner, self.sink, self.name = inner, sink, inner.name

    def _timed(self, view: View, legal: list[Action], call: Callable[[], T]) -> T:
        c, w = time.thread_time_ns(), time.perf_counter_ns()
        out = call()
        if len(legal) > 1:
            self.sink.append((view.phase, time.thread_time_ns() - c, time.perf_counter_ns() - w))
        return out

    def choose(self, view: View, legal: list[Action]) -> Action:
        return self._timed(view, legal, lambda: self.inner.choose(view, legal))

    def advise(self, view: View, captain_legal: list[Action]) -> tuple[Action | None, str] | None:
        return self._timed(view, captain_legal, lambda: self.inner.advise(view, captain_legal))

    def on_game_start(self, seat: int, rules: RuleSet, num_seats: int) -> None:
        self.inner.on_game_start(seat, rules, num_seats)


def quantile(xs: list[int], q: float) -> float:
    """The ``q`` quantile (nearest rank) in milliseconds.

    >>> quantile([1_000_000, 2_000_000, 3_000_000, 4_000_000], 0.5)
    3.0
    """
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))] / 1e6


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench/decisions.py", description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("bot", nargs="?", default="strong")
    ap.add_argument("--vs", default="eaai-simple")
    ap.add_argument("--decisions", type=int, default=5000)
    ap.add_argument("--variant", choices=["oklahoma", "box"], default="oklahoma")
    ap.add_argument("--seed", default="decisions")
    args = ap.parse_args(argv)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    rows: list[tuple[str, int, int]] = []
    n = 3 if args.variant == "box" else 2
    k = 0
    t0 = time.perf_counter()
    while len(rows) < args.decisions:
        bots: list[Bot] = [get_bot(args.vs, f"{args.seed}/{k}/{i}") for i in range(n)]
        bots[k % n] = Clocked(get_bot(args.bot, f"{args.seed}/{k}"), rows)
        play_local(bots, RuleSet(variant=args.variant), seed=f"{args.seed}/{args.variant}/{k}")
        k += 1
    rows = rows[: args.decisions]
    load = os.getloadavg()
    print(f"{args.bot} vs {args.vs}, {args.variant}: {len(rows)} decisions in {k} games, {time.perf_counter() - t0:.0f} s; "
          f"one CPU, {platform.machine()}, Python {platform.python_version()}, load {load[0]:.1f}")
    print(f"{'phase':<10} {'decisions':>9} {'cpu median':>11} {'cpu p99':>9} {'cpu max':>9} {'wall median':>12} {'wall p99':>9}")
    out: dict[str, dict[str, float]] = {}
    for phase in ("offer", "draw", "discard", "all"):
        sel = [r for r in rows if phase == "all" or r[0] == phase]
        if not sel:
            continue
        cpu, wall = [r[1] for r in sel], [r[2] for r in sel]
        fig = {"decisions": len(sel), "cpu_median_ms": round(statistics.median(cpu) / 1e6, 2),
               "cpu_p99_ms": round(quantile(cpu, 0.99), 2), "cpu_max_ms": round(max(cpu) / 1e6, 2),
               "wall_median_ms": round(statistics.median(wall) / 1e6, 2), "wall_p99_ms": round(quantile(wall, 0.99), 2)}
        out[phase] = fig
        print(f"{phase:<10} {len(sel):>9} {fig['cpu_median_ms']:>9.2f}ms {fig['cpu_p99_ms']:>7.1f}ms {fig['cpu_max_ms']:>7.1f}ms "
              f"{fig['wall_median_ms']:>10.2f}ms {fig['wall_p99_ms']:>7.1f}ms")
    print(json.dumps({"bot": args.bot, "vs": args.vs, "variant": args.variant, "load": round(load[0], 1), "phases": out}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
