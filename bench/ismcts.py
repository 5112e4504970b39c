"""OpenSpiel's ISMCTS through ``okgin.openspiel`` against okgin's ``simple`` bot.

Each game is one hand of Oklahoma Gin (``oklahoma_gin``, default rules, returns per
hand): ISMCTS (``open_spiel.python.algorithms.ismcts``, UCT, max-visit final policy,
unlimited world samples through :meth:`okgin.openspiel.OkginState.resample_from_infostate`)
with N simulations per decision plays one seat, ``simple`` (``clients.bots.simple``,
given the okgin View of its seat) the other. ISMCTS takes seat 0 in even games and 1 in
odd ones; the chance nodes (first dealer, deal, stock draws) are sampled from a seeded
stream, so a run is reproducible.

The evaluator is OpenSpiel's ``RandomRolloutEvaluator`` (one uniformly random playout
to the end of the hand); ``--rollout simple`` plays the playout with ``simple`` for
both seats instead (the same ISMCTS, a better evaluator).

Prints a table: per N, games played, ISMCTS wins-losses-drawn hands, the win rate over
decided hands with a Wilson 95% interval, mean points per hand with a 95% normal
interval, and seconds per ISMCTS decision; then one JSON line. Asserts nothing.

    python3 bench/ismcts.py --sims 5,20,80 --games 60,40,16
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts, mcts  # type: ignore[import-untyped]

import okgin.openspiel as osp
from clients.bots.simple import simple_choice


def simple_id(state) -> int:
    """``simple``'s move in an OpenSpiel state, from the okgin View of the seat to act."""
    g = state.okgin_game
    seat = state.current_player()
    return osp.action_id(simple_choice(g.view(seat), g.legal_actions()))


class SimpleRolloutEvaluator(mcts.Evaluator):
    """A playout with ``simple`` at every seat (chance sampled): ISMCTS's value estimate."""

    def __init__(self, rng: np.random.RandomState) -> None:
        self._rng = rng

    def evaluate(self, state):
        s = state.clone()
        while not s.is_terminal():
            if s.is_chance_node():
                outcomes = s.chance_outcomes()
                s.apply_action(outcomes[self._rng.randint(len(outcomes))][0])
            else:
                s.apply_action(simple_id(s))
        return np.array(s.returns())

    def prior(self, state):
        legal = state.legal_actions(state.current_player())
        return [(a, 1.0 / len(legal)) for a in legal]


def wilson(wins: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return (0.0, 1.0)
    p = wins / n
    d = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / d
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, centre - half), min(1.0, centre + half))


def play(sims: int, games: int, seed: int, rollout: str, uct_c: float) -> dict:
    game = pyspiel.load_game("oklahoma_gin")
    rs = np.random.RandomState(seed)
    evaluator = SimpleRolloutEvaluator(rs) if rollout == "simple" else mcts.RandomRolloutEvaluator(1, rs)
    bot = ismcts.ISMCTSBot(game, evaluator, uct_c=uct_c, max_simulations=sims, random_state=rs)
    chance = random.Random(seed)
    wins = losses = drawn = 0
    points: list[float] = []
    decisions = 0
    think = 0.0
    for i in range(games):
        me = i % 2
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[chance.randrange(len(outcomes))][0])
            elif state.current_player() == me:
                t = time.perf_counter()
                a = bot.step(state)
                think += time.perf_counter() - t
                decisions += 1
                state.apply_action(a)
            else:
                state.apply_action(simple_id(state))
        r = state.returns()[me]
        points.append(r)
        if r > 0:
            wins += 1
        elif r < 0:
            losses += 1
        else:
            drawn += 1
    decided = wins + losses
    lo, hi = wilson(wins, decided)
    mean = statistics.fmean(points)
    half = 1.96 * statistics.stdev(points) / math.sqrt(len(points)) if len(points) > 1 else float("nan")
    return {
        "sims": sims,
        "rollout": rollout,
        "games": games,
        "wins": wins,
        "losses": losses,
        "drawn": drawn,
        "win_rate": wins / decided if decided else None,
        "win_rate_ci95": [round(lo, 3), round(hi, 3)],
        "mean_points": round(mean, 2),
        "mean_points_ci95": round(half, 2),
        "s_per_decision": round(think / max(decisions, 1), 4),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sims", default="5,20,80", help="ISMCTS simulations per decision, comma-separated")
    ap.add_argument("--games", default="60,40,16", help="games (hands) per N, comma-separated, one per --sims or one for all")
    ap.add_argument("--rollout", choices=("random", "simple"), default="random")
    ap.add_argument("--uct-c", type=float, default=10.0, help="UCT exploration constant (returns are hand points)")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    sims = [int(x) for x in a.sims.split(",")]
    games = [int(x) for x in a.games.split(",")]
    if len(games) == 1:
        games *= len(sims)
    if len(games) != len(sims):
        ap.error("--games needs one value, or one per --sims value")
    rows = []
    print(f"ISMCTS ({a.rollout} rollouts, uct_c {a.uct_c}) vs simple, oklahoma_gin, one hand per game; "
          f"python {platform.python_version()}")
    print(f"{'N':>5} {'games':>6} {'W-L-D':>10} {'win rate [95% CI]':>22} {'points/hand':>14} {'s/decision':>11}")
    for n, g in zip(sims, games, strict=True):
        row = play(n, g, a.seed, a.rollout, a.uct_c)
        rows.append(row)
        wr = (
            "-"
            if row["win_rate"] is None
            else f"{row['win_rate']:.2f} [{row['win_rate_ci95'][0]:.2f}, {row['win_rate_ci95'][1]:.2f}]"
        )
        print(
            f"{n:>5} {g:>6} {row['wins']:>3}-{row['losses']}-{row['drawn']:<4} {wr:>22} "
            f"{row['mean_points']:>+7.1f} ±{row['mean_points_ci95']:<5.1f} {row['s_per_decision']:>10.3f}",
            flush=True,
        )
    print(json.dumps({"bench": "ismcts", "rollout": a.rollout, "uct_c": a.uct_c, "seed": a.seed, "rows": rows}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
