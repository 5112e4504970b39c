"""Strength harness for the strong bot: duplicate-deal matches with bot parameters.

``okgin match`` is the project's match runner; this harness exists for the ablation,
which needs what ``okgin match`` does not offer: a bot built with parameter overrides
(``strong:mc_knock=0,danger_weight=0``), per-role hand figures of the 3-player game,
and per-decision timings. Deals are duplicated the way ``okgin match`` does it: every
seed is played once per seating (2 seatings for 2 players; 3 for the box game, the
tested bot in each seat against two copies of the other), so luck of the deal cancels.

Usage::

    python bench/strength/harness.py strong simple --games 400 --seed 1
    python bench/strength/harness.py "strong:mc_knock=0" simple --rule knock_limit=10 --rule undercut_bonus=25
    python bench/strength/harness.py strong simple --variant box --games 300

Prints a table; the last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections import defaultdict
from typing import Any

from clients.bot import Bot
from clients.bots import get_bot
from okgin import Action, Advice, Game, HandResult, RuleSet, View
from okgin.launch import add_rule_flag

Z = 1.959964


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``name:key=value,key=value`` -> (name, params). Values: ints, floats, 0/1 bools."""
    name, _, rest = spec.partition(":")
    params: dict[str, Any] = {}
    if name == "oracle" and not rest:
        return name, {}
    if rest and "=" in rest:
        for item in rest.split(","):
            key, _, raw = item.partition("=")
            val: Any
            if raw.lower() in ("true", "false"):
                val = raw.lower() == "true"
            else:
                try:
                    val = int(raw)
                except ValueError:
                    val = float(raw)
            params[key.strip()] = val
    elif rest:
        return spec, {}
    return name, params


def make_bot(spec: str, seed: str) -> Bot:
    name, params = parse_spec(spec)
    if params or name == "oracle":
        from clients.bots.strong import StrongBot

        cls: type[StrongBot] = StrongBot
        if name == "oracle":
            from oracle import OracleKnockBot

            cls = OracleKnockBot
        elif name == "peek":
            from oracle import PeekBot

            cls = PeekBot
        elif name != "strong":
            raise SystemExit("parameters are only supported for the strong bot")
        bot: Bot = cls(seed=seed, **{k: (bool(v) if k in _BOOLS else v) for k, v in params.items()})
        bot.name = spec
        return bot
    return get_bot(name, seed=seed)


_BOOLS = {
    "lookahead", "inference", "value_draws", "mc_knock", "hazard", "equity", "keep_knock_hand", "rollout_cv", "rollout_wary",
    "learned", "gin_equity",
}


class Timed(Bot):
    """Wraps a bot and records how long each ``choose``/``advise`` call took."""

    def __init__(self, inner: Bot, times: list[float]) -> None:
        self.inner = inner
        self.times = times
        self.name = inner.name

    def choose(self, view: View, legal: list[Action]) -> Action:
        t = time.perf_counter()
        a = self.inner.choose(view, legal)
        self.times.append(time.perf_counter() - t)
        return a

    def advise(self, view: View, captain_legal: list[Action]) -> tuple[Action | None, str] | None:
        return self.inner.advise(view, captain_legal)

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


def play(bots: list[Bot], rules: RuleSet, seed: str) -> Game:
    from clients.local import play_local

    return play_local(bots, rules, seed)


def interval(wins: float, n: int) -> tuple[float, float, float]:
    """Rate and its 95% Wilson interval."""
    if n == 0:
        return 0.0, 0.0, 0.0
    p = wins / n
    d = 1 + Z * Z / n
    centre = (p + Z * Z / (2 * n)) / d
    half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / d
    return p, centre - half, centre + half


def run(a: str, b: str, games: int, seed: int, rules: RuleSet, progress: bool = True) -> dict[str, Any]:
    seats = rules.num_players
    times: list[float] = []
    wins = 0
    n = 0
    pair_scores: list[float] = []
    pts_for = 0
    pts_against = 0
    hands = 0
    role_hands: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])  # played, won, pts for, pts against
    outcomes: dict[str, int] = defaultdict(int)
    deals = max(1, games // seats)
    t0 = time.perf_counter()
    for d in range(deals):
        s = f"{seed}/{d}"
        deal_score = 0.0
        for pos in range(seats):
            bots: list[Bot] = []
            for seat in range(seats):
                if seat == pos:
                    bots.append(Timed(make_bot(a, f"{s}/{seat}"), times))
                else:
                    bots.append(make_bot(b, f"{s}/{seat}"))
            g = play(bots, rules, s)
            n += 1
            won = g.winner == pos
            wins += won
            deal_score += won
            pts_for += g.scores[pos]
            pts_against += sum(g.scores[x] for x in range(seats) if x != pos)
            roles_seen = _roles_per_hand(rules, g)
            for r, roles in zip(g.results, roles_seen, strict=True):
                hands += 1
                role = roles[pos]
                rh = role_hands[role]
                rh[0] += 1
                if r.winner == pos:
                    rh[1] += 1
                    rh[2] += r.points
                elif r.winner is not None and role != "sitter":
                    rh[3] += r.points
                if r.knocker == pos or r.outcome == "drawn":
                    outcomes[f"{r.outcome}"] += 1
        pair_scores.append(deal_score / seats)
        if progress and (d + 1) % max(1, deals // 10) == 0:
            p = wins / n
            print(f"  {n} games: {p:.3f}  ({time.perf_counter() - t0:.0f}s)", file=sys.stderr)
    p, lo, hi = interval(wins, n)
    # interval over duplicate deals (the honest one: the two seatings of a deal are correlated)
    m = sum(pair_scores) / len(pair_scores)
    var = sum((x - m) ** 2 for x in pair_scores) / max(len(pair_scores) - 1, 1)
    half = Z * math.sqrt(var / len(pair_scores))
    times.sort()
    out = {
        "a": a,
        "b": b,
        "variant": rules.variant,
        "rules": {k: v for k, v in rules.to_dict().items() if v != RuleSet(variant=rules.variant).to_dict()[k]},
        "games": n,
        "wins": wins,
        "win_rate": round(p, 4),
        "wilson95": [round(lo, 4), round(hi, 4)],
        "dup95": [round(m - half, 4), round(m + half, 4)],
        "points_for_per_game": round(pts_for / n, 2),
        "points_against_per_game": round(pts_against / n, 2),
        "hands": hands,
        "roles": {r: {"hands": v[0], "won": v[1], "won_rate": round(v[1] / max(v[0], 1), 4),
                      "points_for": v[2], "points_against": v[3],
                      "net_per_hand": round((v[2] - v[3]) / max(v[0], 1), 3)} for r, v in sorted(role_hands.items())},
        "a_knock_outcomes": dict(outcomes),
        "decisions": len(times),
        "median_ms": round(times[len(times) // 2] * 1000, 3) if times else None,
        "p99_ms": round(times[int(len(times) * 0.99)] * 1000, 3) if times else None,
        "max_ms": round(times[-1] * 1000, 3) if times else None,
        "seconds": round(time.perf_counter() - t0, 1),
    }
    return out


def _roles_per_hand(rules: RuleSet, g: Game) -> list[list[str]]:
    """The role of every seat in each hand of a finished game, rebuilt from the results."""
    from okgin.roles import draw_roles, rotate

    out = []
    if rules.variant == "box":
        roles, _ = draw_roles(g.seed)
        for r in g.results:
            names = [""] * 3
            for name, s in zip(("box", "captain", "sitter"), roles, strict=True):
                names[s] = name
            out.append(names)
            box_won = None if r.winner is None else r.winner == roles[0]
            roles = rotate(roles, box_won)
    else:
        for r in g.results:
            out.append(["dealer" if s == r.dealer else "nondealer" for s in range(2)])
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench/strength/harness.py")
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--games", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--variant", default="oklahoma")
    add_rule_flag(ap)
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    rules = RuleSet(variant=args.variant).with_assignments(args.rule)
    res = run(args.a, args.b, args.games, args.seed, rules, progress=not args.quiet)
    print(f"{res['a']} vs {res['b']} ({res['variant']} {res['rules']}): {res['wins']}/{res['games']} = {res['win_rate']:.3f} "
          f"wilson {res['wilson95']} dup {res['dup95']}; pts {res['points_for_per_game']}/{res['points_against_per_game']}; "
          f"median {res['median_ms']} ms p99 {res['p99_ms']} ms")
    for r, v in res["roles"].items():
        print(f"  {r:9s} hands {v['hands']:5d} won {v['won_rate']:.3f} net/hand {v['net_per_hand']:+.2f}")
    print(json.dumps(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
