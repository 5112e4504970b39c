"""Judge `strong`'s knock decisions by what knocking and playing on really brought.

The knock decision is `strong`'s main edge (bench/strength.md, "Ablation"): a Monte
Carlo comparison of knocking now with one more turn each. Whether that comparison is
biased can be measured without playing games. At every position where the bot may
knock (not with gin), ``collect`` keeps

- the bot's own estimate of both choices (:meth:`StrongBot.knock_estimate`),
- what knocking really scores, against the hand the opponent really holds, and
- what playing on really brought: the game is copied, the bot throws its knock card
  (as it does when it plays on) and both bots play the hand out on the real stock.

Both results are mapped through the same game equity the bot maximises (at 0-0, where
these first hands are). ``margins`` then replays the decisions with a margin: knock
only when the estimate of knocking beats playing on by ``m``. Each position counts the
real result of the choice the rule makes, so the mean over positions is an unbiased
estimate of the rule's worth in these positions (one step of policy improvement: the
bot plays on as itself), and rules are compared on the same positions, which only
differ where the decisions do. A margin that measures better is a candidate
(``strong:knock_margin=m``) for the SPRT; nothing here replaces it.

    python3 bench/strength/knockfit.py collect --hands 3000 --seed kf1 --jobs 2 --out /tmp/kf.pkl
    python3 bench/strength/knockfit.py margins /tmp/kf.pkl
"""

from __future__ import annotations

import argparse
import copy
import math
import pickle
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, fields
from multiprocessing import Pool
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from harness import parse_spec

from clients.bots.strong import StrongBot
from clients.bots.strong.knocking import game_equity, score_knock
from okgin import Action, Game, RuleSet, View
from okgin.launch import add_rule_flag

#: Knock limits by group, as the screens split them.
GROUPS = {"1-3": range(0, 4), "4-9": range(4, 10), "10": range(10, 11)}


@dataclass
class Decision:
    """One knock decision: the bot's estimates and both choices' real results (equity)."""

    limit: int
    est_knock: float
    est_play: float
    real_knock: float
    real_play: float
    knock_points: int
    play_points: int
    stock: int
    """Cards left in the stock at the decision."""
    knock_dw: int
    """The deadwood of the knock."""
    knock_hand: int
    """The ten cards the bot would knock with (a mask)."""
    opp_hand: int
    """The opponent's real hand (a mask)."""
    view: View
    """What the player to move sees (for bench/strength/oppfit.py's opponent model)."""


def save(path: str, meta: dict[str, Any], decisions: list[Decision]) -> None:
    """Write decisions as plain fields, so that any script (not only this one run as
    ``__main__``) reads them back with :func:`load`."""
    rows = [{f.name: getattr(d, f.name) for f in fields(Decision)} for d in decisions]
    with open(path, "wb") as f:
        pickle.dump({**meta, "decisions": rows}, f)


def load(path: str) -> tuple[dict[str, Any], list[Decision]]:
    """The collection's settings (rules, bot, seed) and its decisions.

    The file is a pickle (the decisions hold engine views), and unpickling runs code:
    read only files you collected yourself, never one from someone else."""
    with open(path, "rb") as f:
        data = pickle.load(f)
    return data, [Decision(**row) for row in data["decisions"]]


def start_hand(seed: str, rules: RuleSet, params: dict[str, Any] | None = None) -> tuple[Game, list[StrongBot]]:
    """The game of ``seed`` and two strong bots (seeded ``seed/0`` and ``seed/1``, with
    ``params``) seated at it: how every collector, and its tests, start a hand."""
    g = Game(rules, seed)
    bots = [StrongBot(seed=f"{seed}/{s}", **(params or {})) for s in range(2)]
    for s, b in enumerate(bots):
        b.on_game_start(s, rules, 2)
    return g, bots


def decisions(seed: str, rules: RuleSet, spec: str) -> Iterator[tuple[Game, list[StrongBot], int, View, list[Action]]]:
    """Every decision of the first hand of ``seed``, bots of ``spec`` on both seats: the
    game, the bots, the seat to move, its view and its legal actions, each yielded before
    the bot moves (so the game still shows the position); the bot's own move is played
    when the caller asks for the next. How every collector walks a hand."""
    _, params = parse_spec(spec)
    g, bots = start_hand(seed, rules, params)
    while g.current_player is not None:
        seat = g.current_player
        view, legal = g.view(seat), g.legal_actions()
        yield g, bots, seat, view, legal
        if g.apply(bots[seat].choose(view, legal), seat=seat) is not None:
            break


def collect_hand(job: tuple[str, int, RuleSet, str]) -> list[Decision]:
    """The knock decisions of the first hand of ``seed``/``i``, the bot against itself."""
    seed, i, rules, spec = job
    value = game_equity(rules.target_score, rules.target_score)
    out: list[Decision] = []
    for g, bots, seat, view, legal in decisions(f"{seed}/{i}", rules, spec):
        bot = bots[seat]
        knocks = [a for a in legal if a.kind == "knock" and a.card is not None]
        if knocks:
            ev = bot.evaluator(view)
            kc, est = bot.knock_estimate(view, knocks, ev)
            if est is not None:
                rest, opp = g.hand.hands[seat] & ~(1 << kc), g.hand.hands[1 - seat]
                kd = ev.dw(rest)  # of the card the bot knocks with (not always the least deadwood: knock_choices)
                kpts = score_knock(rules, rest, opp, kd)
                ppts = play_out(copy.deepcopy(g), bots, seat, Action("discard", kc))
                real = (value(kpts), value(ppts), kpts, ppts)
                out.append(Decision(view.knock_limit, est.knock, est.play_on, *real, view.stock_size, kd, rest, opp, view))
    return out


def play_out(g: Game, bots: list[StrongBot], seat: int, first: Action) -> int:
    """Points for ``seat`` (negative: the opponent's) of the hand played out from ``first``."""
    r = g.apply(first, seat=seat)
    while r is None:
        s = g.current_player
        assert s is not None
        r = g.apply(bots[s].choose(g.view(s), g.legal_actions()), seat=s)
    if r.winner is None:
        return 0
    return r.points if r.winner == seat else -r.points


def worth(ds: list[Decision], margin: float) -> list[float]:
    """The real result of each decision under the rule "knock when the estimate of
    knocking beats playing on by ``margin``"."""
    return [d.real_knock if d.est_knock - margin >= d.est_play else d.real_play for d in ds]


def paired_gain(rule: list[float], base: list[float]) -> tuple[float, float]:
    """Mean gain of ``rule`` over ``base`` per decision (hundredths of the win chance)
    and its 95% half-interval over decisions (the two are paired: the same decisions)."""
    diff = [100 * (x - y) for x, y in zip(rule, base, strict=True)]
    mean = sum(diff) / len(diff)
    sd = math.sqrt(sum((x - mean) ** 2 for x in diff) / max(len(diff) - 1, 1))
    return mean, 1.96 * sd / math.sqrt(len(diff))


def self_play_options(ap: argparse.ArgumentParser, hands: int, seed: str) -> None:
    """The options of every collector of self-play decisions (this one, drawfit,
    dangerfit, inferfit): how many first hands, their seed, the bot on both sides, the
    worker processes and the rules."""
    ap.add_argument("--hands", type=int, default=hands)
    ap.add_argument("--seed", default=seed)
    ap.add_argument("--bot", default="strong", help="the bot on both sides (strong:key=value,...)")
    ap.add_argument("--jobs", type=int, default=2)
    add_rule_flag(ap)


def collect_parser(sub: Any, help: str, hands: int, seed: str) -> argparse.ArgumentParser:
    """The ``collect`` subcommand's options, the same for every decision collector."""
    c = sub.add_parser("collect", help=help)
    self_play_options(c, hands, seed)
    c.add_argument("--out", required=True)
    return c


def cmd_collect(a: argparse.Namespace, rules: RuleSet) -> int:
    t = time.time()
    jobs = [(a.seed, i, rules, a.bot) for i in range(a.hands)]
    with Pool(a.jobs) as pool:
        found = [d for part in pool.imap(collect_hand, jobs, chunksize=4) for d in part]
    save(a.out, {"rules": rules, "bot": a.bot, "seed": a.seed}, found)
    took = time.time() - t
    print(f"{len(found)} knock decisions from {a.hands} first hands of {a.bot} against itself, {took:.0f} s -> {a.out}")
    return 0


def cmd_margins(a: argparse.Namespace) -> int:
    data, ds = load(a.decisions)
    print(f"{len(ds)} knock decisions ({data['bot']}, seed {data['seed']}); equity x 100 per decision, against margin 0")
    margins = [float(m) for m in a.margins.split(",")]
    cuts = [("limits all", ds)] + [(f"limits {name}", [d for d in ds if d.limit in lim]) for name, lim in GROUPS.items()]
    cuts += [(f"stock >= {a.late_stock}", [d for d in ds if d.stock >= a.late_stock])]
    cuts += [(f"stock < {a.late_stock}", [d for d in ds if d.stock < a.late_stock])]
    for name, sub in cuts:
        if not sub:
            continue
        base = worth(sub, 0.0)
        knocks = sum(1 for d in sub if d.est_knock >= d.est_play)
        real_better = sum(1 for d in sub if d.real_knock >= d.real_play)
        print(f"{name}: {len(sub)} decisions, the bot knocks in {knocks}, knocking was really no worse in {real_better}")
        for m in margins:
            w = worth(sub, m)
            mean, half = paired_gain(w, base)
            changed = sum(1 for x, y in zip(w, base, strict=True) if x != y)
            kn = sum(1 for d in sub if d.est_knock - m >= d.est_play)
            print(f"  margin {m:+.3f}: knocks {kn:5d}, {mean:+.3f} +- {half:.3f} ({changed} decisions differ)")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench/strength/knockfit.py", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    collect_parser(sub, "knock decisions with the real results of knocking and of playing on", 3000, "kf1")
    m = sub.add_parser("margins", help="the worth of knock margins on the collected decisions")
    m.add_argument("decisions")
    m.add_argument("--margins", default="-0.03,-0.02,-0.01,-0.005,0.005,0.01,0.02,0.03")
    m.add_argument("--late-stock", type=int, default=20, help="also cut the decisions at this stock (knock_late_stock)")
    a = ap.parse_args(argv)
    if a.cmd == "collect":
        return cmd_collect(a, RuleSet().with_assignments(a.rule))
    return cmd_margins(a)


if __name__ == "__main__":
    sys.exit(main())
