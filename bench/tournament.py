"""Tournament throughput: games per second of one bot against itself, by referee count.

    python bench/tournament.py [--games 40] [--referees 1,2,N] [--concurrency K] [--bot simple]
                               [--command "clients/c/build/okgin-bot --connect {endpoint} --token {token}"]

Runs a real tournament (``okgin tournament`` in this process: local referee processes,
one bot process per seat per game) for each referee count, and prints games per second,
the referee's round-trip latency seen by the runner (its own ping, so harness load can
be told from bot time) and the bots' share of the time by the referee's clock. N
defaults to the number of cores. Figures only, no assertions; the last line is JSON.

What it measures: the whole organiser pipeline per game (create_table, two bot process
launches, the game over ZeroMQ, journal, SQLite commit), not the engine alone
(``bench/engine.py``). On a machine with few cores, bot process start-up and the
referees compete for the same cores, which is what the scaling figure shows.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from referee.tournament.config import parse_config
from referee.tournament.runner import RunOptions, run_tournament
from referee.tournament.store import ResultsStore


def one_run(workdir: Path, refs: int, games: int, concurrency: int, bot: str, command: str | None) -> dict:
    if command:
        words = shlex.split(command)
        if Path(words[0]).exists():  # a path relative to where the bench was started
            words[0] = str(Path(words[0]).resolve())
        spec = {"command": words}
    else:
        spec = {"bot": bot}
    data = {
        "tournament": {"name": f"bench-r{refs}", "seed": "bench", "games_per_pairing": games, "concurrency": concurrency,
                       "referees": refs, "stall_timeout": 60},
        "participant": [{"name": "a", **spec}, {"name": "b", **spec}],
    }
    cfg = parse_config(data, config_dir=workdir)
    db = workdir / f"bench-r{refs}.sqlite"
    t0 = time.perf_counter()
    with open(os.devnull, "w") as devnull:
        old = sys.stdout
        sys.stdout = devnull
        try:
            code = run_tournament(cfg, RunOptions(progress=False, database=str(db), output=str(workdir / f"out-r{refs}")))
        finally:
            sys.stdout = old
    wall = time.perf_counter() - t0
    st = ResultsStore.open_existing(db)
    gs = st.games()
    st.close()
    rtt_max = max((g.clocks.get("referee_rtt_ms", {}).get("max", 0.0) for g in gs), default=0.0)
    rtt_med = sorted(g.clocks.get("referee_rtt_ms", {}).get("median", 0.0) for g in gs)[len(gs) // 2] if gs else 0.0
    think = sum(sum(g.clocks.get("think_ms", [])) for g in gs) / 1000.0
    moves = sum(sum(g.clocks.get("moves", [])) for g in gs)
    return {
        "referees": refs, "concurrency": concurrency, "games": len(gs), "exit": code, "wall_s": round(wall, 2),
        "games_per_s": round(len(gs) / wall, 3), "moves": moves, "moves_per_s": round(moves / wall, 1),
        "bot_think_s": round(think, 2), "referee_rtt_median_ms": round(rtt_med, 2), "referee_rtt_max_ms": round(rtt_max, 2),
        "abnormal": sum(1 for g in gs if g.termination != "normal"),
    }


def main() -> int:
    cores = os.cpu_count() or 1
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", type=int, default=40, help="games per run (a multiple of 2; default 40)")
    p.add_argument("--referees", default=f"1,2,{cores}", help="referee counts to try (default 1,2,cores)")
    p.add_argument("--concurrency", type=int, default=0, help="games at once (default: 2 per referee, at least 2)")
    p.add_argument("--bot", default="simple", help="built-in bot for both seats (default simple)")
    p.add_argument("--command", help="a bot command instead of --bot ({endpoint} and {token} are filled in)")
    args = p.parse_args()
    counts = sorted({int(x) for x in args.referees.split(",") if x.strip()})
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"tournament throughput: {args.command or args.bot} vs itself, {args.games} games per run, {cores} cores, "
          f"load average {load:.1f} at the start")
    rows = []
    with tempfile.TemporaryDirectory(prefix="okgin-bench-") as tmp:
        for refs in counts:
            conc = args.concurrency or max(2, 2 * refs)
            r = one_run(Path(tmp), refs, args.games, conc, args.bot, args.command)
            rows.append(r)
            print(f"  referees {refs} concurrency {conc}: {r['games']} games in {r['wall_s']:.1f} s = "
                  f"{r['games_per_s']:.2f} games/s ({r['moves_per_s']:.0f} moves/s); referee ping median "
                  f"{r['referee_rtt_median_ms']:.1f} ms, max {r['referee_rtt_max_ms']:.1f} ms; bots thought "
                  f"{r['bot_think_s']:.1f} s; abnormal endings {r['abnormal']}", flush=True)
    base = rows[0]["games_per_s"] if rows else 0
    for r in rows:
        r["speedup"] = round(r["games_per_s"] / base, 2) if base else None
    print(json.dumps({"bench": "tournament", "bot": args.command or args.bot, "cores": cores, "load_start": load, "runs": rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
