"""The arena's web pages: p50 and p99 page times with 1,000 accounts and 100,000 games.

    python3 bench/arena_web.py                       # the issue's sizes: 1,000 accounts, 100,000 games
    python3 bench/arena_web.py --games 20000 --requests 100   # quicker

The database is SQLite in a temporary directory, filled fast: accounts and games are
inserted in bulk (one transaction; the accounts share one dummy key hash, since nobody
signs in), 90% Oklahoma and 10% Box, about 30% of the accounts people and the rest bots;
1,000 of the games carry a real record (the built-in ``simple`` bot against itself, played
in-process, Oklahoma to 100: 100 to 400 moves), the others none (a record is the bulk of a row and only the viewer reads one).
Each game is rated as it is made, in finish order, by the arena's own rating functions
(``arena.ratings.after_game``, what ``Store.finish_game`` calls) and the ratings, the history
and the players' rows are written in bulk too (``Store.rebuild_ratings`` would give the same
numbers, one transaction per game: minutes for 100,000). 50 games are left in play for the
live list.

The web face is served as ``okgin arena`` serves it (uvicorn on a loop of its own, a
thread here; the store read in the web's threads) on 127.0.0.1, and one client asks for each
page in turn over keep-alive HTTP: the home page, a leaderboard page (random page, each
variant), a player page (random account), the live list, a finished game's viewer. Times
are wall-clock, request to last byte. The anchor is ``/about``, a page rendered by the same
framework and template layout that reads nothing, measured in the same run: a page's
ratio to it is what the page adds to the framework's own cost, and holds across machines
better than milliseconds do.

Then **the time from a game's end to its result on the leaderboard** (``--live-games``, the
issue's third figure): a listener holds the page's own stream of server-sent events
(``/live/events``, as an open leaderboard does), and the bench finishes games left in play
one at a time through the arena's own ``Store.finish_game`` (what the front calls when a
shard reports a game's end: ratings, history, one transaction). From that commit it times
(a) the ``change`` event reaching the listener, which is what makes an open page fetch
itself again, and (b) that event plus the refetch of the leaderboard page holding the
winner, read until the winner's row shows the new game count. The web polls the store's
change mark every ``POLL_MS`` (``arena.web.live``), so (a) is bounded by that interval.

Prints tables, then one JSON line. Asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.client
import json
import queue
import random
import re
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.keys import DUMMY_HASH
from arena.ratings import Rating, after_game, game_ranks, initial
from arena.store import GameResult, Store, state_db_url
from arena.web.live import POLL_MS
from arena.web.serve import WebFace
from okgin.rules import RuleSet


def records(n: int) -> list[dict[str, Any]]:
    """``n`` real game records: the built-in ``simple`` bot against itself, Oklahoma to 100
    (about 100 to 400 moves a game), played in-process as ``okgin match`` plays them."""
    from clients.bots import get_bot
    from clients.local import play_local

    return [play_local([get_bot("simple", seed), get_bot("simple", seed + 1000)], RuleSet.from_dict({"variant": "oklahoma"}),
                       seed=seed).to_record() for seed in range(n)]


def fill(store: Store, accounts: int, games: int, with_record: int, seed: int = 1) -> dict[str, Any]:
    """Bulk rows (see the module docstring); returns names and the ids of games with records."""
    rng = random.Random(seed)
    names = [f"{'p' if i % 10 < 3 else 'b'}{i:04d}" for i in range(accounts)]
    recs = records(20)
    with_rec: list[str] = []
    ratings: dict[tuple[str, str], Rating] = {}
    rows, seats, history = [], [], []
    t0 = 1_700_000_000_000
    record_every = max(1, games // max(1, with_record))
    for i in range(games):
        variant = "box" if i % 10 == 9 else "oklahoma"
        players = rng.sample(names, 3 if variant == "box" else 2)
        scores = [rng.randrange(0, 60) for _ in players]
        winner = rng.randrange(len(players))
        scores[winner] = 100 + rng.randrange(40)
        gid = f"g{i:06d}"
        finished = t0 + i * 1000 + 900
        rec = None
        if variant == "oklahoma" and i % record_every == 0 and len(with_rec) < with_record:
            rec = json.dumps(recs[len(with_rec) % len(recs)])
            with_rec.append(gid)
        rows.append((gid, variant, json.dumps(players), json.dumps({"move_ms": 60000}), "s0", f"t{i}", t0 + i * 1000, i + 1,
                     finished, winner, json.dumps(scores), rec))
        before = [ratings.get((p, variant)) or initial(variant) for p in players]
        after = after_game(before, game_ranks(scores, winner, None))
        for s_, (p, b, a) in enumerate(zip(players, before, after, strict=True)):
            ratings[(p, variant)] = a
            seats.append((gid, s_, p.lower(), b.rating, a.rating))
            history.append((p.lower(), variant, a.games, gid, finished, b.rating, a.rating, a.deviation, a.volatility))
    conn = store.conn
    with store.lock:
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany(
            "INSERT INTO accounts (name_key, name, kind, admin, created_ms, key_hash, key_ms, revoked, banned, "
            "cooldown_until_ms, cooldown_reason) VALUES (?, ?, ?, 0, 0, ?, 0, 0, NULL, 0, NULL)",
            [(n.lower(), n, "human" if n[0] == "p" else "bot", DUMMY_HASH) for n in names])
        conn.executemany(
            "INSERT INTO games (id, variant, rated, players, clock, shard, table_name, created_ms, status, finish_seq, "
            "finished_ms, winner, scores, termination, record) VALUES (?, ?, 1, ?, ?, ?, ?, ?, 'finished', ?, ?, ?, ?, "
            "'normal', ?)", rows)
        conn.executemany("INSERT INTO game_players (game_id, seat, name_key, rating_before, rating_after) "
                         "VALUES (?, ?, ?, ?, ?)", seats)
        conn.executemany("INSERT INTO rating_history (name_key, variant, n, game_id, finished_ms, rating_before, rating, "
                         "deviation, volatility) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", history)
        conn.executemany("INSERT INTO ratings (name_key, variant, rating, deviation, volatility, games) "
                         "VALUES (?, ?, ?, ?, ?, ?)",
                         [(p.lower(), v, r.rating, r.deviation, r.volatility, r.games) for (p, v), r in ratings.items()])
        playing = []
        for i in range(50):
            players = rng.sample(names, 2)
            gid = f"live{i:03d}"
            conn.execute("INSERT INTO games (id, variant, rated, players, clock, shard, table_name, created_ms, status) "
                         "VALUES (?, 'oklahoma', 1, ?, ?, 's0', ?, ?, 'playing')",
                         (gid, json.dumps(players), json.dumps({"move_ms": 60000}), f"tl{i}", int(time.time() * 1000)))
            playing.extend((gid, s_, p.lower()) for s_, p in enumerate(players))
        conn.executemany("INSERT INTO game_players (game_id, seat, name_key) VALUES (?, ?, ?)", playing)
        conn.execute("COMMIT")
    return {"names": names, "with_record": with_rec}


class Served:
    def __init__(self, store: Store) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.face = WebFace(store, None, "127.0.0.1:0", "bench arena")
        self.url = asyncio.run_coroutine_threadsafe(self.face.start(), self.loop).result(60)

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.face.stop(), self.loop).result(60)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(30)


def measure(conn: http.client.HTTPConnection, path: str) -> float:
    t = time.perf_counter()
    conn.request("GET", path)
    resp = conn.getresponse()
    body = resp.read()
    took = time.perf_counter() - t
    if resp.status != 200 or not body:
        raise SystemExit(f"{path}: {resp.status}")
    return took


def p99(xs: list[float]) -> float:
    return statistics.quantiles(xs, n=100, method="inclusive")[98] if len(xs) > 1 else xs[0]


class Listener(threading.Thread):
    """Holds ``/live/events`` open on its own connection, as an open leaderboard page does,
    and puts the arrival time of each ``change`` event on :attr:`changes`."""

    def __init__(self, port: int) -> None:
        super().__init__(daemon=True)
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.conn.request("GET", "/live/events")
        self.resp = self.conn.getresponse()
        if self.resp.status != 200:
            raise SystemExit(f"/live/events: {self.resp.status}")
        self.changes: queue.Queue[float] = queue.Queue()

    def run(self) -> None:
        try:
            while line := self.resp.readline():
                if line.startswith(b"event: change"):
                    self.changes.put(time.perf_counter())
        except (OSError, http.client.HTTPException):
            pass  # the face stopped: the stream ends

    def close(self) -> None:
        """End the stream: shut the socket down first, so that :meth:`run` reads its end
        (closing the connection under a blocked read would pull its buffer away)."""
        if self.conn.sock is not None:
            with contextlib.suppress(OSError):
                self.conn.sock.shutdown(socket.SHUT_RDWR)
        self.join(30)
        self.conn.close()


def board_row_games(body: str, name: str) -> int | None:
    """The games column of ``name``'s row on a rendered leaderboard page (None: not on it)."""
    m = re.search(r'data-account="' + re.escape(name) + r'".*?<td class="games">(\d+)</td>', body, re.S)
    return int(m.group(1)) if m else None


def live(store: Store, port: int, games: int) -> dict[str, list[float]]:
    """Finish ``games`` games left in play, one at a time; per game, seconds from the commit
    to (a) the ``change`` event and (b) the leaderboard page showing the winner's new row."""
    playing = [g.id for g in store.games_playing(0, games)]
    if len(playing) < games:
        raise SystemExit(f"only {len(playing)} games in play for --live-games {games}")
    listener = Listener(port)
    listener.start()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    event_s: list[float] = []
    page_s: list[float] = []
    phase = random.Random(3)
    try:
        for gid in playing:
            # A game ends at no particular moment of the web's poll cycle: without this wait each
            # game would end just after the poll that reported the one before, and every figure
            # would be the worst case, a whole interval.
            time.sleep(phase.uniform(0, POLL_MS / 1000))
            while not listener.changes.empty():  # a change of before this game's end
                listener.changes.get_nowait()
            change = store.finish_game(gid, GameResult(0, (100, 20), "normal", int(time.time() * 1000)))
            t0 = time.perf_counter()
            if change is None:
                raise SystemExit(f"{gid} was not in play")
            winner, games_after = change.players[0], change.after[0].games
            try:
                t_event = listener.changes.get(timeout=30)
            except queue.Empty:
                raise SystemExit(f"no change event within 30 s of {gid}'s end") from None
            event_s.append(max(0.0, t_event - t0))
            # the page an onlooker has open: where the winner ranks now (looked up here, and
            # its cost left out of the figure, since a browser already has its page)
            t_rank = time.perf_counter()
            board = store.leaderboard("oklahoma", 0, 100_000)
            rank = next(i for i, (a, _) in enumerate(board) if a.name == winner)
            lookup = time.perf_counter() - t_rank
            path = f"/leaderboard/oklahoma?page={rank // 50 + 1}"
            while True:
                conn.request("GET", path)
                resp = conn.getresponse()
                body = resp.read().decode()
                if resp.status == 200 and board_row_games(body, winner) == games_after:
                    break
                if time.perf_counter() - t0 > 30:
                    raise SystemExit(f"{path} did not show {winner}'s game {games_after} within 30 s")
            page_s.append(time.perf_counter() - lookup - t0)
    finally:
        conn.close()
        listener.close()
    return {"event": event_s, "page": page_s}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--accounts", type=int, default=1000)
    ap.add_argument("--games", type=int, default=100_000)
    ap.add_argument("--records", type=int, default=1000, help="games that carry a full record (the viewer's)")
    ap.add_argument("--requests", type=int, default=300, help="requests per page kind")
    ap.add_argument("--live-games", type=int, default=40,
                    help="games finished to time game end -> leaderboard (at most 50, the games left in play; 0: skip)")
    args = ap.parse_args()
    if not 0 <= args.live_games <= 50:
        ap.error("--live-games must be 0 to 50 (the bench leaves 50 games in play)")
    with tempfile.TemporaryDirectory(prefix="okgin-webbench-") as tmp:
        store = Store.open(state_db_url(tmp))
        t0 = time.perf_counter()
        made = fill(store, args.accounts, args.games, args.records)
        print(f"filled and rated {args.accounts} accounts and {args.games} games in {time.perf_counter() - t0:.1f} s",
              file=sys.stderr)
        served = Served(store)
        port = int(served.url.rsplit(":", 1)[1].strip("/"))
        rng = random.Random(2)
        pages = {
            "about (anchor)": lambda: "/about",
            "home": lambda: "/",
            "leaderboard oklahoma": lambda: f"/leaderboard/oklahoma?page={rng.randint(1, 18)}",
            "leaderboard box": lambda: f"/leaderboard/box?page={rng.randint(1, 18)}",
            "player": lambda: f"/player/{rng.choice(made['names'])}",
            "live": lambda: "/live",
            "game viewer": lambda: f"/game/{rng.choice(made['with_record'])}",
        }
        times: dict[str, list[float]] = {k: [] for k in pages}
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        try:
            for path in pages.values():  # warm up: templates compiled, caches filled
                for _ in range(5):
                    measure(conn, path())
            for _ in range(args.requests):  # interleaved, so a slow moment of the machine hits every page alike
                for k, path in pages.items():
                    times[k].append(measure(conn, path()))
            conn.close()
            ends = live(store, port, args.live_games) if args.live_games else {"event": [], "page": []}
        finally:
            conn.close()
            served.stop()
            store.close()
    anchor = p99(times["about (anchor)"])
    print(f"{'page':<22} {'p50 ms':>8} {'p99 ms':>8} {'p99 / anchor':>13}")
    out: dict[str, Any] = {"accounts": args.accounts, "games": args.games, "requests": args.requests}
    for k, xs in times.items():
        row = {"p50_ms": round(statistics.median(xs) * 1000, 2), "p99_ms": round(p99(xs) * 1000, 2),
               "ratio": round(p99(xs) / anchor, 1)}
        out[k] = row
        print(f"{k:<22} {row['p50_ms']:>8} {row['p99_ms']:>8} {row['ratio']:>13}")
    worst = max((k for k in times if k != "about (anchor)"), key=lambda k: p99(times[k]))
    out["worst"] = worst
    print(f"worst p99: {worst}, {out[worst]['p99_ms']} ms, {out[worst]['ratio']}x the anchor")
    if args.live_games:
        print(f"\ngame end -> leaderboard, {args.live_games} games (the web polls every {POLL_MS} ms)")
        print(f"{'from the commit to':<34} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}")
        for k, label in (("event", "the change event"), ("page", "the leaderboard showing it")):
            xs = ends[k]
            row = {"p50_ms": round(statistics.median(xs) * 1000, 1), "p99_ms": round(p99(xs) * 1000, 1),
                   "max_ms": round(max(xs) * 1000, 1)}
            out[f"game end -> {k}"] = row
            print(f"{label:<34} {row['p50_ms']:>8} {row['p99_ms']:>8} {row['max_ms']:>8}")
        out["live_games"] = args.live_games
        out["poll_ms"] = POLL_MS
    print(json.dumps(out))


if __name__ == "__main__":
    main()
