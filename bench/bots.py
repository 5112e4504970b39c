"""Bot benchmark: ``simple`` against itself in-process, against OpenSpiel's simple bot.

1. Hands per second of ``simple`` against ``simple``, in-process with Oklahoma rules
   (``clients.local.play_local``, exactly what ``okgin match`` runs: views built for
   every decision, hooks, legality checks), against OpenSpiel's own simple gin rummy bot
   against itself (``pyspiel.make_simple_gin_rummy_bot``) on ``gin_rummy`` with
   ``oklahoma=True``, driven through OpenSpiel's Python API (chance nodes, the deal and
   the stock draws, sampled uniformly). ``ratio`` = ours / OpenSpiel's (target >= 1.5).
   The two run in alternating blocks so that load from other processes falls on both.
2. Microseconds per decision (median and p99) of each built-in bot's ``choose``, timed
   around the call in games against ``simple`` (``strong`` too when it is installed);
   then the same in Gin in the Box (one bot against two ``simple``, every seat in turn,
   so every role: box, captain, and the sitter's ``advise``).

Prints a table, then as its last line one JSON object. Asserts nothing.

    python3 bench/bots.py            # about 40 s on an idle machine
    python3 bench/bots.py --quick    # a quarter of the work, for development
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import time
from typing import Any

import pyspiel

from clients.bot import Bot
from clients.bots import BUILTIN_BOTS, BotNotFound, get_bot
from clients.local import play_local
from okgin import Action, Advice, HandResult, RuleSet, View


class OkginSimple:
    """simple vs simple through play_local; whole games, hands counted as they end."""

    def __init__(self) -> None:
        self.rules = RuleSet()
        self.games = 0
        self.hands_played = 0

    def hands(self, n: int) -> tuple[int, float]:
        """Play whole games until at least ``n`` more hands ended: (hands, seconds)."""
        done = 0
        t0 = time.perf_counter()
        while done < n:
            self.games += 1
            g = play_local([get_bot("simple", 0), get_bot("simple", 1)], self.rules, seed=f"bench/{self.games}")
            done += len(g.results)
        self.hands_played += done
        return done, time.perf_counter() - t0


class OpenSpielSimple:
    """OpenSpiel's simple bot against itself; one episode of gin_rummy is one hand."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.game = pyspiel.load_game("gin_rummy", {"oklahoma": True})
        params = self.game.get_parameters()
        self.bots = [pyspiel.make_simple_gin_rummy_bot(params, p) for p in range(2)]
        self.decisions = 0
        self.hands_played = 0

    def hands(self, n: int) -> tuple[int, float]:
        rng, game, bots = self.rng, self.game, self.bots
        t0 = time.perf_counter()
        for _ in range(n):
            state = game.new_initial_state()
            for b in bots:
                b.restart()
            while not state.is_terminal():
                if state.is_chance_node():
                    outcomes = state.chance_outcomes()
                    state.apply_action(outcomes[rng.randrange(len(outcomes))][0])
                else:
                    state.apply_action(bots[state.current_player()].step(state))
                    self.decisions += 1
        self.hands_played += n
        return n, time.perf_counter() - t0


class Timed(Bot):
    """Wraps a bot; records the wall time of each ``choose`` and ``advise`` in nanoseconds
    (advice is a decision too: the sitter computes it while the captain waits)."""

    def __init__(self, inner: Bot, sink: list[int]) -> None:
        super().__init__()
        self.inner = inner
        self.sink = sink
        self.name = inner.name

    def choose(self, view: View, legal: list[Action]) -> Action:
        t = time.perf_counter_ns()
        a = self.inner.choose(view, legal)
        self.sink.append(time.perf_counter_ns() - t)
        return a

    def advise(self, view: View, captain_legal: list[Action]) -> tuple[Action | None, str] | None:
        t = time.perf_counter_ns()
        a = self.inner.advise(view, captain_legal)
        self.sink.append(time.perf_counter_ns() - t)
        return a

    def on_game_start(self, seat: int, rules: RuleSet, num_seats: int) -> None:
        self.inner.on_game_start(seat, rules, num_seats)

    def on_hand_start(self, view: View) -> None:
        self.inner.on_hand_start(view)

    def on_hand_end(self, result: HandResult, view: View) -> None:
        self.inner.on_hand_end(result, view)

    def on_game_end(self, final: dict[str, Any], view: View) -> None:
        self.inner.on_game_end(final, view)

    def on_advice(self, advice: Advice, view: View) -> None:
        self.inner.on_advice(advice, view)


def decision_times(name: str, max_decisions: int, max_seconds: float, variant: str = "oklahoma") -> list[int] | None:
    """Per-decision ns of ``name`` against simple, in every seat in turn: two-player
    Oklahoma games, or Gin in the Box against two simple bots (every role, advice too)."""
    try:
        get_bot(name, 0)
    except BotNotFound:
        return None
    times: list[int] = []
    t0 = time.perf_counter()
    k = 0
    while len(times) < max_decisions and time.perf_counter() - t0 < max_seconds:
        k += 1
        me = Timed(get_bot(name, k), times)
        n = 3 if variant == "box" else 2
        bots: list[Bot] = [get_bot("simple", f"{k}/{i}") for i in range(n)]
        bots[k % n] = me
        # target 30 keeps games short, so random's long drawn-out games do not dominate.
        play_local(bots, RuleSet(variant=variant, target_score=30), seed=f"lat/{variant}/{name}/{k}")
    return times


def pct(xs: list[int], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))] / 1000


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="a quarter of the work")
    args = p.parse_args(argv)
    scale = 0.25 if args.quick else 1.0
    block = 200
    rounds = max(2, int(12 * scale))
    load = os.getloadavg()
    print(f"okgin bot benchmark ({platform.machine()}, {os.cpu_count()} CPUs, load {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}, "
          f"Python {platform.python_version()}, pyspiel {getattr(pyspiel, '__version__', '?')})")

    ours, theirs = OkginSimple(), OpenSpielSimple(1)
    ours.hands(20)  # warm-up: imports, tables
    theirs.hands(20)
    ours.hands_played = theirs.hands_played = 0
    t_ours = t_theirs = 0.0
    h_ours = h_theirs = 0
    for _ in range(rounds):  # alternating blocks: shared load falls on both alike
        h, t = ours.hands(block)
        h_ours += h
        t_ours += t
        h, t = theirs.hands(block)
        h_theirs += h
        t_theirs += t
    ours_rate = h_ours / t_ours
    theirs_rate = h_theirs / t_theirs
    ratio = ours_rate / theirs_rate
    print()
    print(f"{'simple vs simple, Oklahoma Gin':<44} {'hands':>7} {'seconds':>8} {'hands/s':>8}")
    print(f"{'okgin (play_local, pure Python)':<44} {h_ours:>7} {t_ours:>8.2f} {ours_rate:>8.1f}")
    print(f"{'OpenSpiel (make_simple_gin_rummy_bot, C++)':<44} {h_theirs:>7} {t_theirs:>8.2f} {theirs_rate:>8.1f}")
    print(f"ratio ours / OpenSpiel's = {ratio:.2f} (target >= 1.5)")

    print()
    print(f"{'bot':<8} {'decisions':>9} {'median us':>10} {'p99 us':>9} {'max us':>10}")
    latency: dict[str, dict[str, float]] = {}
    for name in BUILTIN_BOTS:
        budget = 60.0 * scale if name == "strong" else 15.0 * scale
        times = decision_times(name, int(40000 * scale), budget)
        if times is None:
            print(f"{name:<8} {'(not installed)':>9}")
            continue
        med, p99, mx = statistics.median(times) / 1000, pct(times, 0.99), max(times) / 1000
        latency[name] = {"decisions": len(times), "median_us": round(med, 1), "p99_us": round(p99, 1)}
        print(f"{name:<8} {len(times):>9} {med:>10.1f} {p99:>9.1f} {mx:>10.1f}")
    print()
    print("Gin in the Box, one bot against two simple, every role (choose and advise):")
    print(f"{'bot':<8} {'decisions':>9} {'median us':>10} {'p99 us':>9} {'max us':>10}")
    latency_box: dict[str, dict[str, float]] = {}
    for name in BUILTIN_BOTS:
        budget = 40.0 * scale if name == "strong" else 10.0 * scale
        times = decision_times(name, int(40000 * scale), budget, variant="box")
        if times is None:
            continue
        med, p99, mx = statistics.median(times) / 1000, pct(times, 0.99), max(times) / 1000
        latency_box[name] = {"decisions": len(times), "median_us": round(med, 1), "p99_us": round(p99, 1)}
        print(f"{name:<8} {len(times):>9} {med:>10.1f} {p99:>9.1f} {mx:>10.1f}")

    print(json.dumps({
        "simple_hands_per_s": round(ours_rate, 1),
        "openspiel_simple_hands_per_s": round(theirs_rate, 1),
        "ratio": round(ratio, 2),
        "decision_us": latency,
        "decision_us_box": latency_box,
        "load": round(load[0], 1),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
