"""Fit the opponent model's likelihood weights to what opponents really held.

`strong`'s knock decisions are its main edge (bench/strength.md, "Ablation"), and they
are only as good as the opponent hands they are judged against: the Metropolis chain of
:mod:`clients.bots.strong.opponent`, whose likelihood weighs the opponent's moves by six
hand-set weights (``opp_last``, ``opp_earlier``, ``opp_pickup``, ``opp_older``,
``opp_tight``, ``opp_no_knock``). Nothing about those weights needs games to judge:
at a knock decision the model predicts what knocking now would score, and the hand the
opponent really held says what it did score. So:

The positions are those of ``bench/strength/knockfit.py collect`` (every position of
the bot against itself where a knock short of gin is legal, with the opponent's real
hand), so one collection serves both scripts:

- ``score`` says, for each setting, how far the model's prediction of the knock's points
  (the mean over the 48 hands the bot itself samples, with the same random numbers for
  every setting) is from the points the knock would really have scored: the mean squared
  error, its paired difference from the first setting with a 95% interval over
  positions, the mean bias (a model that thinks opponents hold worse hands than they do
  knocks into undercuts) and the Brier score of the undercut;
- ``fit`` searches the weights coordinate by coordinate (each halved and doubled in
  turn, kept when it lowers the error on the even positions), then reports the result
  on the odd positions, which the search never saw.

The squared error is minimised by the true expected points given what the bot can see,
so a setting with a lower error on held-out positions predicts knocks better. Whether
that wins games is for the SPRT (bench/sprt.py) to say.

    python3 bench/strength/knockfit.py collect --hands 3000 --seed kf1 --jobs 2 --out /tmp/kf.pkl
    python3 bench/strength/oppfit.py score /tmp/kf.pkl "" "opp_no_knock=3" --jobs 2
    python3 bench/strength/oppfit.py fit /tmp/kf.pkl --jobs 2
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from multiprocessing import Pool
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import knockfit
from harness import parse_spec
from knockfit import Decision

from clients.bots.strong import StrongBot
from clients.bots.strong.knocking import score_knock
from clients.bots.strong.knowledge import read_view
from okgin import RuleSet

#: The weights ``fit`` searches, with V1's values.
WEIGHTS = ("opp_last", "opp_earlier", "opp_pickup", "opp_older", "opp_tight", "opp_no_knock")
SAMPLES = 48


# ------------------------------------------------------------------ scoring
_POS: list[Decision] = []
_RULES = RuleSet()


def _init(path: str) -> None:
    global _POS, _RULES
    data, _POS = knockfit.load(path)
    _RULES = data["rules"]


def _predict(job: tuple[dict[str, float], list[int]]) -> list[tuple[float, float, float, float]]:
    """For each position index: (predicted points, real points, predicted undercut
    chance, real undercut 0/1)."""
    params, idx = job
    bot = StrongBot(seed="oppfit", **params)
    bot.on_game_start(0, _RULES, 2)
    out = []
    for j in idx:
        p = _POS[j]
        k = read_view(p.view)
        opps = bot.opponent_hands(k, p.view, random.Random(f"oppfit/{j}"), SAMPLES)
        pts = [score_knock(_RULES, p.knock_hand, o, p.knock_dw) for o in opps]
        real = p.knock_points  # score_knock against the opponent's real hand
        out.append((sum(pts) / len(pts), float(real), sum(1 for x in pts if x < 0) / len(pts), float(real < 0)))
    return out


def predict(pool: Any, params: dict[str, float], idx: list[int], chunks: int) -> list[tuple[float, float, float, float]]:
    parts = [idx[i::chunks] for i in range(chunks)]
    got = pool.map(_predict, [(params, part) for part in parts])
    by: dict[int, tuple[float, float, float, float]] = {}
    for part, res in zip(parts, got, strict=True):
        by.update(zip(part, res, strict=True))
    return [by[j] for j in idx]


def summary(rows: list[tuple[float, float, float, float]], base: list[tuple[float, float, float, float]] | None) -> str:
    n = len(rows)
    se = [(p - r) ** 2 for p, r, _, _ in rows]
    mse = sum(se) / n
    bias = sum(p - r for p, r, _, _ in rows) / n
    brier = sum((q - u) ** 2 for _, _, q, u in rows) / n
    text = f"mse {mse:8.2f}  bias {bias:+6.2f}  undercut brier {brier:.4f}"
    if base is not None:
        d = [a - (pb - rb) ** 2 for a, (pb, rb, _, _) in zip(se, base, strict=True)]
        m = sum(d) / n
        sd = math.sqrt(sum((x - m) ** 2 for x in d) / max(n - 1, 1))
        text += f"  vs first {m:+7.2f} +- {1.96 * sd / math.sqrt(n):.2f}"
    return text


def mse_of(rows: list[tuple[float, float, float, float]]) -> float:
    return sum((p - r) ** 2 for p, r, _, _ in rows) / len(rows)


# ------------------------------------------------------------------ commands
def _settings(spec: str) -> dict[str, float]:
    return parse_spec(f"strong:{spec}")[1] if spec else {}


def cmd_score(a: argparse.Namespace) -> int:
    n = len(knockfit.load(a.positions)[1])
    idx = list(range(n))
    with Pool(a.jobs, initializer=_init, initargs=(a.positions,)) as pool:
        base = None
        for spec in a.settings:
            t = time.time()
            rows = predict(pool, _settings(spec), idx, a.jobs * 4)
            took = time.time() - t
            print(f"{spec or '(the bot as it is)':45s} {summary(rows, base)}  ({n} positions, {took:.0f} s)", flush=True)
            base = base or rows
    return 0


def cmd_fit(a: argparse.Namespace) -> int:
    n = len(knockfit.load(a.positions)[1])
    train, test = list(range(0, n, 2)), list(range(1, n, 2))
    v1 = StrongBot().params
    cur = {w: float(getattr(v1, w)) for w in WEIGHTS}
    with Pool(a.jobs, initializer=_init, initargs=(a.positions,)) as pool:
        best = mse_of(predict(pool, cur, train, a.jobs * 4))
        print(f"start {cur}: train mse {best:.2f} ({len(train)} positions)", flush=True)
        for rnd in range(a.rounds):
            moved = False
            for w in WEIGHTS:
                for factor in (0.5, 2.0):
                    trial = {**cur, w: cur[w] * factor}
                    m = mse_of(predict(pool, trial, train, a.jobs * 4))
                    print(f"  round {rnd + 1}: {w} {cur[w]:g} -> {trial[w]:g}: train mse {m:.2f}", flush=True)
                    if m < best - a.min_gain:
                        cur, best, moved = trial, m, True
                        break
            if not moved:
                break
        spec = ",".join(f"{w}={cur[w]:g}" for w in WEIGHTS)
        print(f"fitted: {spec} (train mse {best:.2f})")
        base = predict(pool, {}, test, a.jobs * 4)
        rows = predict(pool, cur, test, a.jobs * 4)
        print(f"held out ({len(test)} positions), V1's weights: {summary(base, None)}")
        print(f"held out, fitted weights:        {summary(rows, base)}")
        print(f"candidate: strong:{spec}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench/strength/oppfit.py", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("score", help="the model's error for each setting, on the same positions")
    s.add_argument("positions")
    s.add_argument("settings", nargs="+", help='key=value,... of the opponent model ("" for the bot as it is)')
    s.add_argument("--jobs", type=int, default=2)
    f = sub.add_parser("fit", help="coordinate search of the weights on the even positions, checked on the odd")
    f.add_argument("positions")
    f.add_argument("--rounds", type=int, default=3)
    f.add_argument("--min-gain", type=float, default=0.05, help="least fall of the train error to keep a move")
    f.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args(argv)
    if a.cmd == "score":
        return cmd_score(a)
    return cmd_fit(a)


if __name__ == "__main__":
    sys.exit(main())
