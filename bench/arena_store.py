"""The arena's store: what a key check, a finished game and a leaderboard cost, on each database.

    python3 bench/arena_store.py                                  # SQLite in a temporary directory
    python3 bench/arena_store.py --db postgresql://okgin@/bench?host=/tmp/pg   # and/or PostgreSQL (an empty database)

For each database URL: ``check_key`` (one scrypt, the same for a right and a wrong key), as
CPU time; ``finish_game`` of rated Oklahoma games among 50 accounts (the game's row, two
ratings, two history rows and two players' rows in one transaction, committed; SQLite with
``synchronous=FULL`` in WAL mode); ``leaderboard`` (50 rows); ``rebuild_ratings`` per game.
Wall-clock medians of several rounds; prints a table, then one JSON line. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.store import GameResult, NewGame, Store, state_db_url


def bench(url: str, games: int, rounds: int) -> dict[str, float]:
    store = Store.open(url)
    rng = random.Random(1)
    names = [f"b{i}" for i in range(50)]
    first_key = ""
    for n in names:
        k = store.add_account(n, "bot", created_ms=0)
        first_key = first_key or k
    t = time.process_time()
    for i in range(10):
        store.check_key("b0", first_key if i % 2 else "okga_wrong")
    check_cpu = (time.process_time() - t) / 10
    finish: list[float] = []
    gid = 0
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(games):
            gid += 1
            a, b = rng.sample(names, 2)
            store.new_game(NewGame(f"g{gid}", "oklahoma", True, (a, b), {}, "s", f"t{gid}", gid))
            record = {"moves": list(range(200))}
            store.finish_game(f"g{gid}", GameResult(rng.randrange(2), (100, 40), "normal", gid, None, record))
        finish.append((time.perf_counter() - t0) / games)
    board: list[float] = []
    for _ in range(20):
        t0 = time.perf_counter()
        store.leaderboard("oklahoma", 0, 50)
        board.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    rebuilt = store.rebuild_ratings()
    rebuild = (time.perf_counter() - t0) / max(rebuilt, 1)
    store.close()
    return {"check_key_cpu_ms": check_cpu * 1e3, "seat_and_finish_ms": statistics.median(finish) * 1e3,
            "leaderboard_ms": statistics.median(board) * 1e3, "rebuild_ms_per_game": rebuild * 1e3, "games": float(gid)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", action="append", default=[], help="a database URL (an empty database); repeatable")
    ap.add_argument("--games", type=int, default=100, help="games per round")
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    out = {}
    with tempfile.TemporaryDirectory() as d:
        urls = [state_db_url(d), *a.db]
        for url in urls:
            kind = url.split(":", 1)[0]
            out[kind] = bench(url, a.games, a.rounds)
    print(f"arena store ({os.cpu_count()} CPUs, load {' '.join(f'{x:.1f}' for x in os.getloadavg())})")
    cols = ["check_key_cpu_ms", "seat_and_finish_ms", "leaderboard_ms", "rebuild_ms_per_game"]
    print(f"{'database':12s}" + "".join(f"{c:>22s}" for c in cols))
    for kind, r in out.items():
        print(f"{kind:12s}" + "".join(f"{r[c]:22.2f}" for c in cols))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
