"""Engine benchmark: okgin (pure Python) against OpenSpiel's C++ gin_rummy, in one run.

1. Uniformly random legal play, from a fresh shuffled deal to the end of the hand, hands
   per second: okgin with Oklahoma rules (``Game(RuleSet())``; each hand after a game's
   first is dealt fresh by the game itself) against OpenSpiel's ``gin_rummy`` with
   ``oklahoma=True`` (chance nodes, i.e. the deal and the stock draws, sampled uniformly
   as OpenSpiel's own random simulations do). Both drive the engine through its public
   Python API: ``legal_actions()`` then ``apply``.
2. ``okgin.deadwood(cards)`` microseconds per call on random 11-card hands (card lists,
   the public API) against ``GinRummyUtils(13, 4, 10).min_deadwood`` on the same hands.

Prints a table, then as its last line one JSON object. Asserts nothing.

    python3 bench/engine.py            # about 20 s
    python3 bench/engine.py --quick    # about 4 s, for development
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import sys
import time

import pyspiel

from okgin import Game, RuleSet, deadwood, deadwood_mask


def okgin_hands(n_hands: int, seed: int) -> tuple[int, float, int]:
    """Random play until ``n_hands`` hands have ended; returns (hands, seconds, actions)."""
    rng = random.Random(seed)
    rules = RuleSet()
    hands = actions = 0
    game_no = 0
    t0 = time.perf_counter()
    while hands < n_hands:
        g = Game(rules, seed=f"{seed}/{game_no}")
        game_no += 1
        while not g.is_over and hands < n_hands:
            if g.apply(rng.choice(g.legal_actions())) is not None:
                hands += 1
            actions += 1
    return hands, time.perf_counter() - t0, actions


def openspiel_hands(n_hands: int, seed: int) -> tuple[int, float, int]:
    rng = random.Random(seed)
    game = pyspiel.load_game("gin_rummy", {"oklahoma": True})
    actions = 0
    t0 = time.perf_counter()
    for _ in range(n_hands):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()  # uniform: the deal and stock draws
                state.apply_action(outcomes[rng.randrange(len(outcomes))][0])
            else:
                state.apply_action(rng.choice(state.legal_actions()))
                actions += 1
    return n_hands, time.perf_counter() - t0, actions


def to_openspiel(card: int) -> int:
    """okgin suits c d h s -> OpenSpiel's s c d h (see tests/engine/test_s2_openspiel_differential.py)."""
    return ((card // 13 + 1) % 4) * 13 + card % 13


def per_call_us(fn, items, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):  # best of several passes: the least disturbed by other load
        t0 = time.perf_counter()
        for x in items:
            fn(x)
        best = min(best, time.perf_counter() - t0)
    return best / len(items) * 1e6


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="bench/engine.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--hands", type=int, default=4000, help="hands of random play per engine (default 4000)")
    p.add_argument("--deadwood-hands", type=int, default=20000, help="random 11-card hands for deadwood (default 20000)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--quick", action="store_true", help="a quarter of the default work")
    a = p.parse_args(argv)
    n_hands = a.hands // 4 if a.quick else a.hands
    n_dw = a.deadwood_hands // 4 if a.quick else a.deadwood_hands

    # warm up both (imports, tables, caches)
    okgin_hands(20, a.seed + 1)
    openspiel_hands(20, a.seed + 1)

    ok_n, ok_t, ok_actions = okgin_hands(n_hands, a.seed)
    os_n, os_t, os_actions = openspiel_hands(n_hands, a.seed)
    okgin_hps = ok_n / ok_t
    openspiel_hps = os_n / os_t

    rng = random.Random(a.seed)
    hands = [rng.sample(range(52), 11) for _ in range(n_dw)]
    masks = [sum(1 << c for c in h) for h in hands]
    os_hands = [[to_openspiel(c) for c in h] for h in hands]
    utils = pyspiel.gin_rummy.GinRummyUtils(13, 4, 10)
    dw_us = per_call_us(deadwood, hands, 3)
    dw_mask_us = per_call_us(deadwood_mask, masks, 3)
    os_dw_us = per_call_us(utils.min_deadwood, os_hands, 3)

    rows = [
        ("random play, Oklahoma: okgin", f"{okgin_hps:,.0f} hands/s", f"{ok_actions / ok_n:.0f} moves/hand, {ok_n} hands"),
        ("random play, Oklahoma: OpenSpiel gin_rummy", f"{openspiel_hps:,.0f} hands/s", f"{os_actions / os_n:.0f} moves/hand (+ chance), {os_n} hands"),
        ("  ratio okgin / OpenSpiel", f"{okgin_hps / openspiel_hps:.2f}x", "target >= 2"),
        ("deadwood(cards), 11 cards: okgin", f"{dw_us:.2f} us/call", f"{n_dw} hands, best of 3"),
        ("deadwood_mask(mask), 11 cards: okgin", f"{dw_mask_us:.2f} us/call", "the internal form (a 52-bit mask)"),
        ("min_deadwood, 11 cards: OpenSpiel", f"{os_dw_us:.2f} us/call", "target: okgin <= 2x this"),
    ]
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    print(f"okgin engine benchmark  (Python {platform.python_version()}, {platform.machine()}, pyspiel {getattr(pyspiel, '__version__', '?')})")
    for name, fig, note in rows:
        print(f"  {name.ljust(w0)}  {fig.rjust(w1)}   {note}")
    summary = {
        "okgin_hands_per_s": round(okgin_hps, 1),
        "openspiel_hands_per_s": round(openspiel_hps, 1),
        "ratio": round(okgin_hps / openspiel_hps, 2),
        "deadwood_us": round(dw_us, 3),
        "openspiel_deadwood_us": round(os_dw_us, 3),
    }
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
