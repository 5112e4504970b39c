"""How often a candidate's knock decisions differ from the baseline's, on the same positions.

A screen says whether a change of knock timing gains; this says whether it acts at all,
and which way (more or fewer knocks). Two copies of the baseline play the first hand of
each seed; at every turn where a knock is legal both the baseline and the candidate are
asked (the game goes on with the baseline's move), and the knocks, the disagreements
and each bot's CPU time per knock decision are counted.

    python3 bench/strength/flips.py "strong:rollout_turns=4" --vs strong-v1 --hands 40
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from harness import make_bot

from okgin import Game, RuleSet
from okgin.launch import add_rule_flag


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench/strength/flips.py")
    ap.add_argument("spec", help="candidate bot spec (strong:key=value,...)")
    ap.add_argument("--vs", default="strong-v1")
    ap.add_argument("--hands", type=int, default=40)
    ap.add_argument("--seed", default="flip")
    add_rule_flag(ap)
    a = ap.parse_args(argv)
    rules = RuleSet().with_assignments(a.rule)
    base, cand = make_bot(a.vs, "1"), make_bot(a.spec, "1")
    for b in (base, cand):
        b.on_game_start(0, rules, 2)
    n = flips = k_base = k_cand = 0
    t_base = t_cand = 0.0
    for i in range(a.hands):
        g = Game(rules, f"{a.seed}/{i}")
        players = [make_bot(a.vs, f"{i}/{s}") for s in range(2)]
        for s, p in enumerate(players):
            p.on_game_start(s, rules, 2)
        while g.current_player is not None:
            seat = g.current_player
            legal = g.legal_actions()
            view = g.view(seat)
            if any(x.kind == "knock" for x in legal):
                t = time.process_time()
                x1 = base.choose(view, legal)
                t_base += time.process_time() - t
                t = time.process_time()
                x2 = cand.choose(view, legal)
                t_cand += time.process_time() - t
                n += 1
                k_base += x1.kind == "knock"
                k_cand += x2.kind == "knock"
                flips += x1.kind != x2.kind
            if g.apply(players[seat].choose(view, legal)) is not None:
                break
    per = max(n, 1)
    print(
        f"{a.spec} vs {a.vs}: {n} knock decisions in {a.hands} first hands; knocks {k_cand} against {k_base}, "
        f"{flips} decisions differ; CPU per knock decision {1000 * t_cand / per:.1f} ms against {1000 * t_base / per:.1f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
