"""Does a busy sandbox slow its opponent? The opponent's move times beside a bot that
keeps N children spinning, with the sandbox's CPU share at ``cpus`` (issue 24 item 4).

    python bench/sandbox_share.py [--games 4] [--children 12] [--cpus 1,2]

Plays ``simple`` against ``simple`` (the quiet baseline), then ``simple`` against
``tests/tournament/hog_bot.py busy N`` (the simple bot, with N spinning children from its
first move on) once per ``cpus`` value, each a real sandboxed tournament (one game at a
time, target 100). Prints, for the ``simple`` seat: moves, mean and slowest move (the
referee's journal clock), and which mechanism enforced the limits. ``cpus`` equal to the
machine's cores is "no share limit" there. Figures only, no assertions; the last line is
JSON. Needs a cgroup (root; v1 or v2) for the share to exist at all.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from competition.tournament.config import parse_config
from competition.tournament.runner import RunOptions, run_tournament
from competition.tournament.store import ResultsStore

REPO = Path(__file__).resolve().parents[1]
HOG = REPO / "tests" / "tournament" / "hog_bot.py"


def run(name: str, opponent: dict, games: int, cpus: int, tmp: Path) -> dict:
    data = {
        "tournament": {"name": name, "games_per_pairing": games, "concurrency": 1},
        "rules": {"target_score": 100},
        "limits": {"cpus": cpus, "cpu_s": 3600},
        "participant": [{"name": "simple", "bot": "simple"}, {"name": "other", **opponent}],
    }
    cfg = parse_config(data, tmp)
    db = tmp / f"{name}.sqlite"
    run_tournament(cfg, RunOptions(database=str(db), output=str(tmp / "out"), progress=False))
    st = ResultsStore.open_existing(db)
    moves = think = 0
    slowest = 0
    for g in st.games():
        seat = list(g.seats).index("simple")
        c = g.clocks
        moves += c["moves"][seat]
        think += c["think_ms"][seat]
        slowest = max(slowest, c["max_move_ms"][seat])
    out = {"run": name, "cpus": cpus, "games": len(st.games()), "moves": moves,
           "mean_ms": round(think / max(moves, 1), 1), "slowest_ms": slowest, "limits_by": st.get_meta("limits_by")}
    st.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=4)
    ap.add_argument("--children", type=int, default=12)
    ap.add_argument("--cpus", default=f"1,{os.cpu_count() or 2}")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        os.chmod(tmp, 0o755)
        rows.append(run("quiet", {"bot": "simple"}, args.games, 1, tmp))
        hog = {"command": [sys.executable, str(HOG), "{endpoint}", "busy", str(args.children)]}
        for cpus in (int(c) for c in args.cpus.split(",")):
            rows.append(run(f"busy{args.children}-cpus{cpus}", hog, args.games, cpus, tmp))
    print(f"{'run':<20} {'cpus':>4} {'games':>5} {'moves':>6} {'mean ms':>8} {'slowest ms':>10}  limits")
    for r in rows:
        print(f"{r['run']:<20} {r['cpus']:>4} {r['games']:>5} {r['moves']:>6} {r['mean_ms']:>8} {r['slowest_ms']:>10}  "
              f"{r['limits_by']}")
    print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
