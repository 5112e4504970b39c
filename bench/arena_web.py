"""The arena's web pages: p50 and p99 page times with 1,000 accounts and 100,000 games.

    python3 bench/arena_web.py                       # the issue's sizes: 1,000 accounts, 100,000 games
    python3 bench/arena_web.py --games 20000 --requests 100   # quicker
    python3 bench/arena_web.py --games 2000 --accounts 200 --records 20 --requests 10 --live-games 10   # small

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
better than milliseconds do. Prints a table, then one JSON line. Asserts nothing.

Then, with the pages still served, the time from a game's end to its result on the pages
(``--live-games N``, default 40; 0 skips it). A second connection to the database plays the
arena front's part, as ``okgin arena`` gives its web a connection of its own: it seats a
rated Oklahoma game between two accounts of the leaderboard's first page
(``Store.new_game``), waits for the stream to tell of that, waits a random fraction of the
poll interval (so the finish falls at any phase of the poller, as a real one does), and
finishes it (``Store.finish_game``, what the front calls in its worker thread). From the
moment ``finish_game`` returns (committed), it times (a) the ``change`` event on
``/live/events``, the stream the leaderboards and the live list listen to, and (b) the
moment ``/leaderboard/oklahoma`` and ``/player/WINNER``, fetched again as the page's script
does on that event (both at once, on connections of their own; again until they show it),
show the winner's new rating and games count. What bounds (a) is the web's poll of
``Store.change_mark`` every ``--poll-ms`` (``web_poll_ms``, default 1000 ms:
``arena.web.live.POLL_MS``); (b) adds one page's time.
"""

from __future__ import annotations

import argparse
import asyncio
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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.keys import DUMMY_HASH
from arena.ratings import Rating, after_game, game_ranks, initial
from arena.store import GameResult, NewGame, Store, state_db_url
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
        playing: list[tuple[str, int, str]] = []
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
    def __init__(self, store: Store, poll_ms: int = POLL_MS) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.face = WebFace(store, None, "127.0.0.1:0", "bench arena", poll_ms=poll_ms)
        self.url = asyncio.run_coroutine_threadsafe(self.face.start(), self.loop).result(60)

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.face.stop(), self.loop).result(60)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(30)


class Stream:
    """``/live/events`` read in a thread: the arrival time of each ``change`` event, queued."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        self.sock.sendall(b"GET /live/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
        self.changes: queue.Queue[float] = queue.Queue()
        self.opened = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()
        if not self.opened.wait(60):
            raise SystemExit("the event stream did not open")

    def run(self) -> None:
        buf = b""
        try:
            while True:
                chunk = self.sock.recv(65536)
                if not chunk:
                    return
                now = time.perf_counter()
                buf += chunk
                if b"okgin arena live" in buf:
                    self.opened.set()
                while b"event: change" in buf:
                    buf = buf[buf.index(b"event: change") + 13:]
                    self.changes.put(now)
                buf = buf[-64:]
        except OSError:
            return

    def next_change(self) -> float:
        try:
            return self.changes.get(timeout=60)
        except queue.Empty:
            raise SystemExit("no change event within 60 s") from None

    def close(self) -> None:
        self.sock.close()
        self.thread.join(10)


def shows(body: str, name: str, rating: int, games: int, page: str) -> bool:
    """Whether a fetched page shows ``name`` at ``rating`` after ``games`` Oklahoma games."""
    if page == "board":
        row = re.search(rf'<tr class="row-\w+" data-account="{re.escape(name)}">(.*?)</tr>', body, re.S)
        if row is None:
            return False
        return f'<td class="games">{games}</td>' in row.group(1) and re.search(rf">{rating}(<|$)", row.group(1), re.M) is not None
    card = body[body.index("Oklahoma Gin</h2>"):][:600] if "Oklahoma Gin</h2>" in body else ""
    return f">{rating}<" in card and f"· {games} rated game" in card


def fetch_until(port: int, path: str, name: str, rating: int, games: int, page: str) -> tuple[float, int]:
    """Fetch ``path`` until it shows the new rating (bounded): when the showing body arrived,
    and how many fetches it took (1: the first fetch after the event already showed it)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        for tries in range(1, 201):
            conn.request("GET", path)
            resp = conn.getresponse()
            body = resp.read().decode("utf-8")
            now = time.perf_counter()
            if resp.status == 200 and shows(body, name, rating, games, page):
                return now, tries
        raise SystemExit(f"{path} never showed {name}'s new rating")
    finally:
        conn.close()


def live_games(url: str, port: int, web: Served, n: int, poll_ms: int, seed: int = 3) -> dict[str, list[float]]:
    """``n`` games finished as the front finishes them (see the module docstring): per game,
    seconds from the commit to the change event, to the leaderboard and to the player page
    showing the winner's new rating."""
    rng = random.Random(seed)
    writer = Store.open(url)  # the arena's own connection; the web reads through its own
    stream = Stream(port)
    out: dict[str, list[float]] = {"commit -> change event": [], "commit -> leaderboard shows": [],
                                   "commit -> player page shows": [], "fetches needed": []}
    pool = ThreadPoolExecutor(max_workers=2)
    try:
        for _ in range(6000):  # the poller's first read is its starting point, not a change
            if web.face.web.hub.mark is not None:
                break
            time.sleep(0.01)
        for i in range(n):
            top = writer.leaderboard("oklahoma", 0, 40)
            a, b = rng.sample([acct.name for acct, _ in top], 2)  # the winner only rises: it stays on page 1
            gid = f"late{i:04d}"
            now = int(time.time() * 1000)
            writer.new_game(NewGame(gid, "oklahoma", True, (a, b), {"move_ms": 60000}, "s0", f"t-{gid}", now))
            stream.next_change()  # the seating's own change
            time.sleep(rng.random() * poll_ms / 1000)  # the finish at any phase of the poll
            change = writer.finish_game(gid, GameResult(0, (100 + rng.randrange(40), rng.randrange(60)), "normal",
                                                        int(time.time() * 1000)))
            t0 = time.perf_counter()
            assert change is not None and change.rated
            after = change.after[0]
            told = stream.next_change()
            board = pool.submit(fetch_until, port, "/leaderboard/oklahoma", a, round(after.rating), after.games, "board")
            player = pool.submit(fetch_until, port, f"/player/{a}", a, round(after.rating), after.games, "player")
            out["commit -> change event"].append(told - t0)
            (t_board, n_board), (t_player, n_player) = board.result(120), player.result(120)
            out["commit -> leaderboard shows"].append(t_board - t0)
            out["commit -> player page shows"].append(t_player - t0)
            out["fetches needed"].append(max(n_board, n_player))
    finally:
        pool.shutdown()
        stream.close()
        writer.close()
    return out


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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--accounts", type=int, default=1000)
    ap.add_argument("--games", type=int, default=100_000)
    ap.add_argument("--records", type=int, default=1000, help="games that carry a full record (the viewer's)")
    ap.add_argument("--requests", type=int, default=300, help="requests per page kind")
    ap.add_argument("--live-games", type=int, default=40,
                    help="games finished while the pages are served, timed to the pages (0: none)")
    ap.add_argument("--poll-ms", type=int, default=POLL_MS, help="the web's poll of the store (web_poll_ms)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="okgin-webbench-") as tmp:
        store = Store.open(state_db_url(tmp))
        t0 = time.perf_counter()
        made = fill(store, args.accounts, args.games, args.records)
        print(f"filled and rated {args.accounts} accounts and {args.games} games in {time.perf_counter() - t0:.1f} s",
              file=sys.stderr)
        served = Served(store, args.poll_ms)
        port = int(served.url.rsplit(":", 1)[1].strip("/"))
        live: dict[str, list[float]] = {}
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
            if args.live_games > 0:
                live = live_games(state_db_url(tmp), port, served, args.live_games, args.poll_ms)
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
    if live:
        print(f"\n{args.live_games} games finished while served (web poll {args.poll_ms} ms), from the finish's commit:")
        print(f"{'until':<30} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}")
        out["finish_to_page"] = {"games": args.live_games, "poll_ms": args.poll_ms}
        needed = live.pop("fetches needed")
        out["finish_to_page"]["most_fetches_needed"] = max(needed)
        for k, xs in live.items():
            row = {"p50_ms": round(statistics.median(xs) * 1000, 1), "p99_ms": round(p99(xs) * 1000, 1),
                   "max_ms": round(max(xs) * 1000, 1)}
            out["finish_to_page"][k] = row
            print(f"{k:<30} {row['p50_ms']:>8} {row['p99_ms']:>8} {row['max_ms']:>8}")
        print(f"fetches of a page until it showed the result, at most: {max(needed)} (1: the first after the event)")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
