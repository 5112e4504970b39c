"""Engine benchmark: okgin (pure Python) against OpenSpiel's C++ gin_rummy, in one run.

1. Uniformly random legal play, from a fresh shuffled deal to the end of the hand, hands
   per second: okgin with Oklahoma rules (``Game(RuleSet())``; each hand after a game's
   first is dealt fresh by the game itself) against OpenSpiel's ``gin_rummy`` with
   ``oklahoma=True`` (chance nodes, i.e. the deal and the stock draws, sampled uniformly
   as OpenSpiel's own random simulations do). Both drive the engine through its public
   Python API: ``legal_actions()`` then ``apply``.
2. Copy plus playout, the unit of tree search: from a set of states at the start of a
   hand (fresh deals), copy one (okgin ``Game.copy()``, OpenSpiel ``state.clone()``) and
   play it out at random to the end of the hand; playouts per second.
3. ``okgin.deadwood(cards)`` microseconds per call on random 11-card hands (card lists,
   the public API) against ``GinRummyUtils(13, 4, 10).min_deadwood`` on the same hands.

Prints a table, then as its last line one JSON object. Asserts nothing.

    python3 bench/engine.py            # about 35 s on an idle machine
    python3 bench/engine.py --quick    # a quarter of the work, for development
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time

import pyspiel

from okgin import Game, RuleSet, deadwood, deadwood_mask


class OkginPlay:
    """Random play through okgin's public API; hands are counted as they end."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.rules = RuleSet()
        self.seed = seed
        self.games = 0
        self.game = self._new_game()
        self.actions = 0

    def _new_game(self) -> Game:
        self.games += 1
        return Game(self.rules, seed=f"{self.seed}/{self.games}")

    def hands(self, n: int) -> float:
        """Play until ``n`` more hands have ended; returns the seconds taken."""
        rng, done = self.rng, 0
        t0 = time.perf_counter()
        while done < n:
            g = self.game
            if g.is_over:
                g = self.game = self._new_game()
            if g.apply(rng.choice(g.legal_actions())) is not None:
                done += 1
            self.actions += 1
        return time.perf_counter() - t0


class OpenSpielPlay:
    """Random play of OpenSpiel's gin_rummy (oklahoma=True); chance outcomes uniform."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.game = pyspiel.load_game("gin_rummy", {"oklahoma": True})
        self.actions = 0

    def hands(self, n: int) -> float:
        rng, game = self.rng, self.game
        t0 = time.perf_counter()
        for _ in range(n):
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    outcomes = state.chance_outcomes()  # the deal and the stock draws
                    state.apply_action(outcomes[rng.randrange(len(outcomes))][0])
                else:
                    state.apply_action(rng.choice(state.legal_actions()))
                    self.actions += 1
        return time.perf_counter() - t0


class OkginCopyPlayout:
    """``Game.copy()`` of one of a few root states, then random play to the hand's end."""

    def __init__(self, seed: int, roots: int = 16) -> None:
        self.rng = random.Random(seed)
        self.roots = [Game(RuleSet(), seed=f"{seed}/copy/{i}") for i in range(roots)]
        self.actions = 0

    def playouts(self, n: int) -> float:
        rng, roots = self.rng, self.roots
        t0 = time.perf_counter()
        for i in range(n):
            g = roots[i % len(roots)].copy()
            while g.apply(rng.choice(g.legal_actions())) is None:
                self.actions += 1
            self.actions += 1
        return time.perf_counter() - t0


class OpenSpielClonePlayout:
    """``state.clone()`` of one of a few dealt root states, then random play to the end."""

    def __init__(self, seed: int, roots: int = 16) -> None:
        self.rng = random.Random(seed)
        game = pyspiel.load_game("gin_rummy", {"oklahoma": True})
        self.roots = []
        for _ in range(roots):
            state = game.new_initial_state()
            while state.is_chance_node():  # the deal
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[self.rng.randrange(len(outcomes))][0])
            self.roots.append(state)
        self.actions = 0

    def playouts(self, n: int) -> float:
        rng, roots = self.rng, self.roots
        t0 = time.perf_counter()
        for i in range(n):
            state = roots[i % len(roots)].clone()
            while not state.is_terminal():
                if state.is_chance_node():
                    outcomes = state.chance_outcomes()
                    state.apply_action(outcomes[rng.randrange(len(outcomes))][0])
                else:
                    state.apply_action(rng.choice(state.legal_actions()))
                    self.actions += 1
        return time.perf_counter() - t0


def to_openspiel(card: int) -> int:
    """okgin suits c d h s -> OpenSpiel's s c d h (see tests/engine/test_s2_openspiel_differential.py)."""
    return ((card // 13 + 1) % 4) * 13 + card % 13


def per_call_us(pairs, rounds: int) -> list[float]:
    """Best time per call of each ``(fn, items)``, the functions interleaved round by round
    so that load from other processes falls on all of them alike."""
    best = [float("inf")] * len(pairs)
    for _ in range(rounds):
        for i, (fn, items) in enumerate(pairs):
            t0 = time.perf_counter()
            for x in items:
                fn(x)
            best[i] = min(best[i], (time.perf_counter() - t0) / len(items) * 1e6)
    return best


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="bench/engine.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--hands", type=int, default=4000, help="hands of random play per engine (default 4000)")
    p.add_argument("--deadwood-hands", type=int, default=20000, help="random 11-card hands for deadwood (default 20000)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--quick", action="store_true", help="a quarter of the default work")
    a = p.parse_args(argv)
    n_hands = a.hands // 4 if a.quick else a.hands
    n_dw = a.deadwood_hands // 4 if a.quick else a.deadwood_hands

    # Both engines play in alternating blocks (the machine may be shared: load then falls
    # on both alike); after a warm-up block each, the totals give hands per second.
    ok, osp = OkginPlay(a.seed), OpenSpielPlay(a.seed)
    ok.hands(20)
    osp.hands(20)
    ok.actions = osp.actions = 0
    blocks = 10
    ok_t = os_t = 0.0
    for _ in range(blocks):
        ok_t += ok.hands(n_hands // blocks)
        os_t += osp.hands(n_hands // blocks)
    ok_n = os_n = blocks * (n_hands // blocks)
    ok_actions, os_actions = ok.actions, osp.actions
    okgin_hps = ok_n / ok_t
    openspiel_hps = os_n / os_t

    # Copy (clone) plus a random playout to the end of the hand, the same alternation.
    okc, osc = OkginCopyPlayout(a.seed), OpenSpielClonePlayout(a.seed)
    okc.playouts(20)
    osc.playouts(20)
    okc_t = osc_t = 0.0
    for _ in range(blocks):
        okc_t += okc.playouts(n_hands // blocks)
        osc_t += osc.playouts(n_hands // blocks)
    okgin_cps = ok_n / okc_t
    openspiel_cps = os_n / osc_t

    rng = random.Random(a.seed)
    hands = [rng.sample(range(52), 11) for _ in range(n_dw)]
    masks = [sum(1 << c for c in h) for h in hands]
    os_hands = [[to_openspiel(c) for c in h] for h in hands]
    utils = pyspiel.gin_rummy.GinRummyUtils(13, 4, 10)
    dw_us, dw_mask_us, os_dw_us = per_call_us([(deadwood, hands), (deadwood_mask, masks), (utils.min_deadwood, os_hands)], 7)

    rows = [
        ("random play, Oklahoma: okgin", f"{okgin_hps:,.0f} hands/s", f"{ok_actions / ok_n:.0f} moves/hand, {ok_n} hands"),
        (
            "random play, Oklahoma: OpenSpiel gin_rummy",
            f"{openspiel_hps:,.0f} hands/s",
            f"{os_actions / os_n:.0f} moves/hand (+ chance), {os_n} hands",
        ),
        ("  ratio okgin / OpenSpiel", f"{okgin_hps / openspiel_hps:.2f}x", "target >= 10 (issue 19; was >= 2)"),
        (
            "copy() + random playout: okgin",
            f"{okgin_cps:,.0f} /s",
            f"Game.copy() of a dealt hand, played to its end; {ok_n} playouts",
        ),
        (
            "clone() + random playout: OpenSpiel",
            f"{openspiel_cps:,.0f} /s",
            f"state.clone() of a dealt hand, played to its end; {os_n} playouts",
        ),
        ("  ratio okgin / OpenSpiel", f"{okgin_cps / openspiel_cps:.2f}x", "target > 1"),
        ("deadwood(cards), 11 cards: okgin", f"{dw_us:.2f} us/call", f"{n_dw} hands, best of 7 interleaved rounds"),
        ("deadwood_mask(mask), 11 cards: okgin", f"{dw_mask_us:.2f} us/call", "the internal form (a 52-bit mask)"),
        ("min_deadwood, 11 cards: OpenSpiel", f"{os_dw_us:.2f} us/call", "target: okgin <= 2x this"),
    ]
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"okgin engine benchmark  (Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs, load "
        f"{load}, pyspiel {getattr(pyspiel, '__version__', '?')})"
    )
    for name, fig, note in rows:
        print(f"  {name.ljust(w0)}  {fig.rjust(w1)}   {note}")
    summary = {
        "okgin_hands_per_s": round(okgin_hps, 1),
        "openspiel_hands_per_s": round(openspiel_hps, 1),
        "ratio": round(okgin_hps / openspiel_hps, 2),
        "okgin_copy_playouts_per_s": round(okgin_cps, 1),
        "openspiel_clone_playouts_per_s": round(openspiel_cps, 1),
        "copy_playout_ratio": round(okgin_cps / openspiel_cps, 2),
        "deadwood_us": round(dw_us, 3),
        "openspiel_deadwood_us": round(os_dw_us, 3),
    }
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
