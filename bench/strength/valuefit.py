"""Fit the strong bot's learned utility: what ending a draw with ``d`` deadwood is worth.

``strong-v1`` judges a hand by the deadwood it expects after the next draw, each outcome
counted at its deadwood: a linear utility, in which reaching gin is worth one point more
than keeping one deadwood and crossing the knock limit is worth nothing special. What a
hand is really worth at that moment is what it goes on to score. This script measures
that on self-play and writes it as a table the bot can use (``strong:learned=1``):

``play``  plays first hands of ``--bot`` against itself (both seats recorded, duplicate
          deals, the knock limits spread evenly) and records, at every discard decision
          (the player holds 11 cards, after its draw), the knock limit ``L``, the stock's
          size ``s`` and ``d``, the least deadwood after the best discard; and, once the
          hand is over, the points it brought that player (won +, lost -, drawn 0).
``fit``   turns the records into ``V[rules][L][s-bucket][d]``: the mean points per
          cell, made non-increasing in ``d`` (weighted pool-adjacent-violators), cells
          with few records shrunk towards their neighbours, smoothed, and writes
          ``clients/bots/strong/valuetable.json`` (read by ``learned.py``).

    python3 bench/strength/valuefit.py play --hands 8000 --seed vf1 --jobs 2 --out /tmp/vf-ok.npz
    python3 bench/strength/valuefit.py play --hands 3000 --seed vf1 --jobs 2 --out /tmp/vf-std.npz \\
        --rule knock_limit=10 --rule undercut_bonus=25
    python3 bench/strength/valuefit.py fit oklahoma=/tmp/vf-ok.npz standard=/tmp/vf-std.npz

Why hands at 0-0 and not games: the table is in points of a hand; what those points are
worth for the game is the knock decision's business (``equity``), not the evaluator's.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from hands import play_hand
from harness import make_bot

from clients.bot import Bot
from clients.bots.strong.fastdw import dad_value
from okgin import Action, Game, RuleSet, View
from okgin.launch import add_rule_flag

#: Stock sizes are grouped: early (the stock still deep), middle, late.
STOCK_EDGES = (22, 14)
MAX_D = 100
#: The rules that change what a hand's end is worth (a table is kept per setting of them).
RULE_FIELDS = ("variant", "gin_bonus", "big_gin_bonus", "undercut_bonus", "tie_is_undercut", "spade_upcard_doubles")


def stock_bucket(s: int) -> int:
    """0 for a stock of more than 22 cards, 1 for 15-22, 2 for 14 or fewer."""
    return 0 if s > STOCK_EDGES[0] else (1 if s > STOCK_EDGES[1] else 2)


class Recorder(Bot):
    """Passes every call to ``inner`` and notes (L, s, d) at each of its discard decisions."""

    def __init__(self, inner: Bot) -> None:
        super().__init__(None)
        self.inner = inner
        self.rows: list[tuple[int, int, int]] = []

    def on_game_start(self, seat: int, rules: RuleSet, num_seats: int) -> None:
        self.inner.on_game_start(seat, rules, num_seats)

    def on_hand_start(self, view: View) -> None:
        self.inner.on_hand_start(view)

    def choose(self, view: View, legal: list[Action]) -> Action:
        if view.phase == "discard" and view.hand is not None and len(view.hand) == 11:
            m = 0
            for c in view.hand:
                m |= 1 << c
            self.rows.append((view.knock_limit, view.stock_size, dad_value(m)))
        return self.inner.choose(view, legal)


def _play_one(args: tuple[str, str, RuleSet]) -> list[tuple[int, int, int, int]]:
    spec, seed, rules = args
    out: list[tuple[int, int, int, int]] = []
    for pos in range(2):
        bots = [Recorder(make_bot(spec, f"{seed}/{x}/{pos}")) for x in range(2)]
        r = play_hand(bots, rules, seed)
        for s, b in enumerate(bots):
            pts = 0 if r.winner is None else (r.points if r.winner == s else -r.points)
            out.extend((L, st, d, pts) for L, st, d in b.rows)
    return out


def _seeds(rules: RuleSet, prefix: str, n: int) -> list[str]:
    """``n`` seeds whose first hands cycle through the knock limits present in ``rules``."""
    limits = sorted({Game(rules, f"{prefix}/probe{i}").hand.knock_limit for i in range(200)})
    want = {L: 0 for L in limits}
    seeds: list[str] = []
    i = 0
    per = -(-n // len(limits))
    while len(seeds) < n:
        s = f"{prefix}/{i}"
        i += 1
        L = Game(rules, s).hand.knock_limit
        if want[L] < per:
            want[L] += 1
            seeds.append(s)
    return seeds


def cmd_play(a: argparse.Namespace) -> int:
    rules = RuleSet().with_assignments(a.rule)
    seeds = _seeds(rules, a.seed, a.hands)
    t0 = time.time()
    rows: list[tuple[int, int, int, int]] = []
    with mp.get_context("fork").Pool(a.jobs) as pool:
        for i, part in enumerate(pool.imap(_play_one, [(a.bot, s, rules) for s in seeds], chunksize=4)):
            rows.extend(part)
            if (i + 1) % 500 == 0:
                print(f"{i + 1}/{len(seeds)} deals, {len(rows)} records, {time.time() - t0:.0f} s", flush=True)
    arr = np.array(rows, dtype=np.int16)
    np.savez_compressed(a.out, rows=arr, bot=a.bot, seed=a.seed, rules=np.array(a.rule or [], dtype=str))
    print(f"{len(seeds)} deals (x2 seatings), {len(arr)} records -> {a.out}, {time.time() - t0:.0f} s")
    return 0


def pava_decreasing(y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Weighted least-squares non-increasing fit (pool adjacent violators)."""
    vals: list[float] = []
    wts: list[float] = []
    lens: list[int] = []
    for yi, wi in zip(y.tolist(), w.tolist(), strict=True):
        vals.append(yi)
        wts.append(wi)
        lens.append(1)
        while len(vals) > 1 and vals[-2] < vals[-1]:
            v2, w2, l2 = vals.pop(), wts.pop(), lens.pop()
            v1, w1, l1 = vals.pop(), wts.pop(), lens.pop()
            wt = w1 + w2
            vals.append((v1 * w1 + v2 * w2) / wt if wt > 0 else (v1 + v2) / 2)
            wts.append(wt)
            lens.append(l1 + l2)
    return np.repeat(np.array(vals), lens)


def fit_table(rows: np.ndarray, limits: list[int], prior: float = 30.0) -> dict[int, list[list[float]]]:
    """``V[L][bucket][d]`` for d in 0..MAX_D from records (L, s, d, points)."""
    L_all, s_all, d_all, p_all = (rows[:, i].astype(np.int64) for i in range(4))
    b_all = np.where(s_all > STOCK_EDGES[0], 0, np.where(s_all > STOCK_EDGES[1], 1, 2))
    table: dict[int, list[list[float]]] = {}
    for L in limits:
        per_bucket = []
        for b in range(3):
            sel = (L_all == L) & (b_all == b)
            d = np.minimum(d_all[sel], MAX_D)
            p = p_all[sel].astype(float)
            n = np.bincount(d, minlength=MAX_D + 1).astype(float)
            tot = np.bincount(d, weights=p, minlength=MAX_D + 1)
            # shrink thin cells towards a running mean of their neighbours (a prior worth
            # ``prior`` records), then force non-increasing in d
            mean_all = tot.sum() / max(n.sum(), 1.0)
            kernel = np.ones(7)
            nb_n = np.convolve(n, kernel, mode="same")
            nb_t = np.convolve(tot, kernel, mode="same")
            nb_mean = np.where(nb_n > 0, nb_t / np.maximum(nb_n, 1e-9), mean_all)
            est = (tot + prior * nb_mean) / (n + prior)
            v = pava_decreasing(est, n + prior)
            # PAVA leaves steps where the records are few; a moving average of 5 over
            # d >= 1 (edges repeated, so it stays non-increasing) takes them off. Gin
            # (d = 0) is kept apart: it ends the hand at once, a real step.
            tail = np.concatenate([np.repeat(v[1], 2), v[1:], np.repeat(v[-1], 2)])
            v[1:] = np.convolve(tail, np.ones(5) / 5, mode="valid")
            per_bucket.append([round(float(x), 2) for x in v])
        table[L] = per_bucket
    return table


def cmd_fit(a: argparse.Namespace) -> int:
    tables: dict[str, dict[int, list[list[float]]]] = {}
    fitted_rules: dict[str, dict[str, object]] = {}
    meta = []
    for item in a.data:
        name, _, path = item.partition("=")
        z = np.load(path)
        rows = z["rows"]
        limits = sorted(set(rows[:, 0].tolist()))
        tables[name] = fit_table(rows, limits)
        rules = RuleSet().with_assignments([str(x) for x in z["rules"]])
        fitted_rules[name] = {f: getattr(rules, f) for f in RULE_FIELDS}
        meta.append(f"{name}: {len(rows)} records of {z['bot']} self-play, seed {z['seed']}, rules {list(z['rules'])}")
        for L in limits:
            for b in range(3):
                v = tables[name][L][b]
                print(f"{name} L={L:2d} b{b}: " + " ".join(f"{x:+.1f}" for x in v[:26]))
    out = Path(a.out)
    doc = {
        "format": 1,
        "about": "generated by bench/strength/valuefit.py fit; read by clients/bots/strong/learned.py",
        "stock_edges": list(STOCK_EDGES),
        "fitted_on": meta,
        "rules": fitted_rules,
        # JSON keys are strings: the knock limit as text
        "tables": {name: {str(L): rows for L, rows in t.items()} for name, t in tables.items()},
    }
    out.write_text(json.dumps(doc, separators=(",", ":")) + "\n")
    print(f"wrote {out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench/strength/valuefit.py", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("play", help="record self-play (L, s, d, points)")
    p.add_argument("--bot", default="strong-v1")
    p.add_argument("--hands", type=int, default=4000, help="deals (each played from both seats)")
    p.add_argument("--seed", default="vf")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--out", required=True)
    add_rule_flag(p)
    f = sub.add_parser("fit", help="fit tables from records and write the module")
    f.add_argument("data", nargs="+", help="NAME=records.npz (NAME: oklahoma, standard)")
    f.add_argument(
        "--out",
        help="where to write the tables (default: the bot's own valuetable.json)",
        default=str(Path(__file__).resolve().parents[2] / "clients/bots/strong/valuetable.json"),
    )
    a = ap.parse_args(argv)
    return cmd_play(a) if a.cmd == "play" else cmd_fit(a)


if __name__ == "__main__":
    sys.exit(main())
