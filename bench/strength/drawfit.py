"""Judge `strong`'s draw decisions by what taking and drawing really brought.

The same question as bench/strength/knockfit.py asks of the knock, asked of the draw:
does the bot take a face-up card (the upcard offer, or the discard pile's top) too
often or too rarely? It takes when the card's value beats the stock's, both in the
evaluator's units (expected deadwood utility after the discard: :meth:`Evaluator.take_value`,
:meth:`Evaluator.stock_value`), by ``take_margin`` (0 in `strong`). Taking shows the
opponent a card and drawing does not, which the evaluator does not count; a margin
measures whether it should.

``collect`` plays first hands of the bot against itself; at every draw decision whose
two estimates are within ``--close`` of each other (a margin in this range could
change it) it keeps both estimates and the real result of both choices: the one the
bot made is the hand as it really ended, the other is played out from a copy of the
game on the real stock (both bots as themselves), both mapped through the game equity
at 0-0. ``margins`` replays the decisions with "take when the card beats the stock by
more than ``m``" (negative: take more often).

    python3 bench/strength/drawfit.py collect --hands 2000 --seed df1 --jobs 2 --out /tmp/df.pkl
    python3 bench/strength/drawfit.py margins /tmp/df.pkl
"""

from __future__ import annotations

import argparse
import copy
import pickle
import sys
import time
from dataclasses import dataclass, fields
from multiprocessing import Pool
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from harness import parse_spec
from knockfit import GROUPS, collect_parser, paired_gain, play_out, start_hand

from clients.bots.strong.knocking import game_equity
from okgin import DRAW_DISCARD, DRAW_STOCK, PASS, TAKE, RuleSet


@dataclass
class Draw:
    """One draw decision: the evaluator's scores (lower is better) and both choices'
    real results (equity; points for the player to move)."""

    limit: int
    stock: int
    offer: bool
    """The upcard offer (the alternative is to pass), else the discard pile's top (the
    alternative is the stock)."""
    est_take: float
    est_stock: float
    real_take: float
    real_other: float
    took: bool


def collect_hand(job: tuple[str, int, RuleSet, str, float]) -> list[Draw]:
    """The close draw decisions of the first hand of ``seed``/``i``, the bot against itself."""
    seed, i, rules, spec, close = job
    _, params = parse_spec(spec)
    g, bots = start_hand(f"{seed}/{i}", rules, params)
    value = game_equity(rules.target_score, rules.target_score)
    pending: list[tuple[int, dict[str, float | int | bool], float]] = []  # seat, fields, the other choice's result
    while True:
        seat = g.current_player
        assert seat is not None
        legal = g.legal_actions()
        view = g.view(seat)
        a = bots[seat].choose(view, legal)
        offer = TAKE in legal and PASS in legal
        if offer or (DRAW_DISCARD in legal and DRAW_STOCK in legal):
            ev = bots[seat].evaluator(view)
            card = view.upcard if offer else ev.k.top
            assert card is not None
            take, _ = ev.take_value(ev.k.hand, card)
            stock = ev.stock_value(ev.k.hand)
            if abs(take - stock) <= close:
                took = a in (TAKE, DRAW_DISCARD)
                other = (PASS if offer else DRAW_STOCK) if took else (TAKE if offer else DRAW_DISCARD)
                pts = play_out(copy.deepcopy(g), bots, seat, other)
                f = {
                    "limit": view.knock_limit,
                    "stock": view.stock_size,
                    "offer": offer,
                    "est_take": take,
                    "est_stock": stock,
                    "took": took,
                }
                pending.append((seat, f, value(pts)))
        r = g.apply(a, seat=seat)
        if r is not None:
            break
    out = []
    for seat, f, other_result in pending:
        pts = 0 if r.winner is None else (r.points if r.winner == seat else -r.points)
        mine = value(pts)
        real_take, real_other = (mine, other_result) if f["took"] else (other_result, mine)
        out.append(Draw(real_take=real_take, real_other=real_other, **f))  # type: ignore[arg-type]
    return out


def worth(ds: list[Draw], margin: float) -> list[float]:
    """The real result of each decision under "take when the card beats the stock by more than ``margin``"."""
    return [d.real_take if d.est_take < d.est_stock - margin else d.real_other for d in ds]


def cmd_collect(a: argparse.Namespace, rules: RuleSet) -> int:
    t = time.time()
    jobs = [(a.seed, i, rules, a.bot, a.close) for i in range(a.hands)]
    with Pool(a.jobs) as pool:
        found = [d for part in pool.imap(collect_hand, jobs, chunksize=4) for d in part]
    rows = [{f.name: getattr(d, f.name) for f in fields(Draw)} for d in found]
    with open(a.out, "wb") as fh:
        pickle.dump({"rules": rules, "bot": a.bot, "seed": a.seed, "close": a.close, "draws": rows}, fh)
    took = time.time() - t
    print(f"{len(found)} close draw decisions from {a.hands} first hands of {a.bot} against itself, {took:.0f} s -> {a.out}")
    return 0


def cmd_margins(a: argparse.Namespace) -> int:
    # a pickle, as knockfit.load's: read only files you collected yourself
    with open(a.draws, "rb") as fh:
        data = pickle.load(fh)
    ds = [Draw(**row) for row in data["draws"]]
    head = f"{len(ds)} draw decisions ({data['bot']}, seed {data['seed']}, within {data['close']})"
    print(f"{head}; equity x 100 per decision, against 0")
    margins = [float(m) for m in a.margins.split(",")]
    cuts = [("all", ds), ("upcard offers", [d for d in ds if d.offer]), ("discard pile", [d for d in ds if not d.offer])]
    cuts += [(f"limits {name}", [d for d in ds if d.limit in lim]) for name, lim in GROUPS.items()]
    for name, sub in cuts:
        if not sub:
            continue
        base = worth(sub, 0.0)
        print(f"{name}: {len(sub)} decisions, the bot takes in {sum(1 for d in sub if d.took)}")
        for m in margins:
            mean, half = paired_gain(worth(sub, m), base)
            takes = sum(1 for d in sub if d.est_take < d.est_stock - m)
            print(f"  margin {m:+.2f}: takes {takes:5d}, {mean:+.3f} +- {half:.3f}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench/strength/drawfit.py", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = collect_parser(sub, "close draw decisions with the real results of taking and of not taking", 2000, "df1")
    c.add_argument("--close", type=float, default=2.0, help="keep decisions whose two scores are at most this far apart")
    m = sub.add_parser("margins", help="the worth of take margins on the collected decisions")
    m.add_argument("draws")
    m.add_argument("--margins", default="-1.5,-1,-0.5,-0.25,0.25,0.5,1,1.5")
    a = ap.parse_args(argv)
    if a.cmd == "collect":
        return cmd_collect(a, RuleSet().with_assignments(a.rule))
    return cmd_margins(a)


if __name__ == "__main__":
    sys.exit(main())
