"""The arena under load (issue 26 item 8): many connected bots seeking and playing rated
games through one ``okgin arena`` and its shards. Figures only, never assertions; the
last line is one JSON object.

Setup: a temporary state directory, ``--bots`` bot accounts added through the store (one
scrypt each), and ``okgin arena --shards S`` as a process (games short: target score
``--target`` and at most ``--max-hands`` hands, as the arena's ``[rules]``). The bots are
played by ``--driver c`` (the default: bench/loaddriver in arena mode, built here with make,
one process; ``--procs`` to split) or ``--driver python`` (``--procs`` processes of this file,
4 by default, each running its share of bots on one asyncio loop over raw DEALER sockets).
Both read their bots' keys from a 0600 file, never a command line. Either way: hello with the account and key (``limit_reached``
while the arena's key checks queue up is retried), then for ever: ``seek``, wait for
``game_ready``, a new connection to the shard with the seat token, play the game
(``--think-ms`` before each act; knock when legal, else pass / draw from the stock, else the
first legal action), and seek again once the arena's ``game_over`` came (at most 10 s after
``game_end``: a seek sent at ``game_end`` is refused ``busy`` until the front has filed the game).

Measured over a window of ``--seconds`` after ``--warmup``:

- **games/s**: ``game_end`` messages received by seat 0 of each game, per second;
- **prompt latency**: per act, *act sent -> the referee's ``event`` for that move received
  by the same seat* (events on). The referee sends the table's next prompt in the same
  handler as that event, so this is the time a move takes through the shard as a player
  sees it, without the think time; p50 and p99;
- **matchmaking wait**: *seek sent -> game_ready received*; p50 and p99.

Two scenarios, in the same run: (1) ``--bots`` bots with ``--think-ms`` on ``--shards``
shards; (2) saturation, ``--sat-bots`` bots with no think time, on 1 shard and then on 2
(a new arena each), and the ratio of their games/s (the issue's target: >= 1.7x).

    python bench/arena.py                       # 1,000 bots, 100 ms think, 2 shards; then 1 vs 2 shards
    python bench/arena.py --quick               # 100 bots, short windows
    python bench/arena.py --skip-saturation     # scenario 1 only
    python bench/arena.py --quick --driver python   # the bots played by Python processes instead of bench/loaddriver
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import zmq
import zmq.asyncio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from okgin.launch import ARENA_PREFIX, endpoint_from_line, okgin_argv
from okgin.protocol import decode_from_referee, encode

HEARTBEAT_S = 2.0
GAME_OVER_S = 10.0  # how long a bot waits for the arena's game_over before it seeks again anyway


# ------------------------------------------------------------------ the driver process
def choose(legal: list[dict[str, Any]]) -> dict[str, Any]:
    kinds = {a.get("kind") for a in legal}
    for k in ("big_gin", "knock", "pass", "draw_stock"):
        if k in kinds:
            return next(a for a in legal if a.get("kind") == k)
    return legal[0]


class Stats:
    def __init__(self) -> None:
        self.latency: list[float] = []
        self.waits: list[float] = []
        self.games = 0
        self.errors: dict[str, int] = {}
        self.measuring = False


async def recv(sock: zmq.asyncio.Socket, timeout: float) -> dict[str, Any] | None:
    # poll's result is the socket's ready events (an int, 0 on timeout); pyzmq 27's stub types it as
    # Poller.poll's list of pairs, so compare by truth, not with 0
    if not await sock.poll(int(timeout * 1000)):
        return None
    return decode_from_referee(await sock.recv())


async def one_bot(ctx: zmq.asyncio.Context, arena: str, account: str, key: str, think: float, st: Stats,
                  stop: asyncio.Event) -> None:
    a = ctx.socket(zmq.DEALER)
    a.setsockopt(zmq.LINGER, 0)
    a.connect(arena)
    rid = 0

    def nid() -> int:
        nonlocal rid
        rid += 1
        return rid

    last_a = time.monotonic()
    try:
        while not stop.is_set():  # sign in (the arena's key checks queue: limit_reached)
            await a.send(encode({"type": "hello", "id": nid(), "protocol": 1, "minor": 6, "role": "player", "name": account,
                                 "account": account, "key": key}))
            m = await recv(a, 120)
            if m is not None and m.get("type") == "welcome":
                break
            st.errors[str(m and m.get("name"))] = st.errors.get(str(m and m.get("name")), 0) + 1
            await asyncio.sleep(1.0 + 2.0 * random.random())  # the key checks queue up: back off, spread out
        while not stop.is_set():
            t_seek = time.monotonic()
            await a.send(encode({"type": "seek", "id": nid(), "variant": "oklahoma"}))
            last_a = t_seek
            ready = None
            while ready is None and not stop.is_set():
                m = await recv(a, HEARTBEAT_S)
                if time.monotonic() - last_a > HEARTBEAT_S:
                    await a.send(encode({"type": "heartbeat"}))
                    last_a = time.monotonic()
                if m is None:
                    continue
                if m.get("type") == "game_ready":
                    ready = m
                elif m.get("type") == "error":
                    name = str(m.get("name"))
                    st.errors[name] = st.errors.get(name, 0) + 1
                    if name in ("busy", "rate_limited", "limit_reached"):
                        await asyncio.sleep(0.3)
                        await a.send(encode({"type": "seek", "id": nid(), "variant": "oklahoma"}))
            if ready is None:
                return
            if st.measuring:
                st.waits.append(time.monotonic() - t_seek)
            await play(ctx, ready, account, think, st, stop, a)
            # Seek again once the arena's game_over says the front filed the game (as the SDK
            # does): a seek at game_end is refused busy until then, and such retries only load
            # the front. At most GAME_OVER_S: a lost game_over must not stop the bot.
            deadline = time.monotonic() + GAME_OVER_S
            while not stop.is_set() and time.monotonic() < deadline:
                m = await recv(a, min(HEARTBEAT_S, max(0.01, deadline - time.monotonic())))
                if m is not None and m.get("type") == "game_over":
                    break
    finally:
        a.close(0)


async def play(ctx: zmq.asyncio.Context, ready: dict[str, Any], account: str, think: float, st: Stats, stop: asyncio.Event,
               arena: zmq.asyncio.Socket) -> None:
    s = ctx.socket(zmq.DEALER)
    s.setsockopt(zmq.LINGER, 0)
    s.connect(ready["endpoint"])
    seat = ready["seat"]
    sent: float | None = None
    last = time.monotonic()
    try:
        await s.send(encode({"type": "hello", "id": 1, "protocol": 1, "minor": 6, "role": "player", "name": account,
                             "token": ready["token"]}))
        while not stop.is_set():
            m = await recv(s, HEARTBEAT_S)
            now = time.monotonic()
            if now - last > HEARTBEAT_S:
                await s.send(encode({"type": "heartbeat"}))
                await arena.send(encode({"type": "heartbeat"}))
                last = now
            if m is None:
                continue
            t = m.get("type")
            if t == "prompt":
                if think > 0:
                    await asyncio.sleep(think)
                await s.send(encode({"type": "act", "table": m["table"], "seq": m["seq"], "action": choose(m["legal"])}))
                sent = time.monotonic()
            elif t == "event" and sent is not None and (m.get("move") or {}).get("seat") == seat:
                if st.measuring:
                    st.latency.append(time.monotonic() - sent)
                sent = None
            elif t == "game_end":
                if st.measuring and seat == 0:
                    st.games += 1
                return
            elif t == "error" and m.get("name") not in ("stale_seq",):
                st.errors[str(m.get("name"))] = st.errors.get(str(m.get("name")), 0) + 1
    finally:
        s.close(0)


async def driver(arena: str, accounts: list[tuple[str, str]], think: float, warmup: float, seconds: float) -> dict[str, Any]:
    ctx = zmq.asyncio.Context()
    st = Stats()
    stop = asyncio.Event()
    tasks = [asyncio.create_task(one_bot(ctx, arena, a, k, think, st, stop)) for a, k in accounts]
    print("driver: started", file=sys.stderr, flush=True)
    await asyncio.sleep(warmup)
    st.measuring = True
    t0 = time.monotonic()
    await asyncio.sleep(seconds)
    st.measuring = False
    elapsed = time.monotonic() - t0
    out = {"games": st.games, "seconds": elapsed, "latency": st.latency, "waits": st.waits, "errors": st.errors}
    print(json.dumps(out), flush=True)
    stop.set()
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    ctx.term()
    return out


# ------------------------------------------------------------------ the parent
def make_accounts(state: Path, n: int) -> list[tuple[str, str]]:
    """``n`` bot accounts and their keys; kept in ``keys.json`` (0600) beside the state, so
    ``--state DIR`` reuses them (each new key costs a scrypt: minutes for a thousand)."""
    from arena.store import Store, state_db_url

    state.mkdir(parents=True, exist_ok=True, mode=0o700)
    saved = state.parent / "keys.json"
    keys: dict[str, str] = json.loads(saved.read_text()) if saved.exists() else {}
    store = Store.open(state_db_url(state))
    try:
        for i in range(n):
            name = f"b{i:04d}"
            if name not in keys:
                keys[name] = store.add_account(name, "bot")
    finally:
        store.close()
    fd = os.open(saved, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(keys, f)
    return [(f"b{i:04d}", keys[f"b{i:04d}"]) for i in range(n)]


def start_arena(state: Path, shards: int, args: argparse.Namespace) -> tuple[subprocess.Popen[str], str]:
    cfg = state.parent / f"{state.name}-{shards}.toml"
    # Every bot connects from 127.0.0.1: lift the front's and shards' per-host cap (512 by
    # default), or past 512 bots the arena closes their connections.
    cfg.write_text(f"show_up_ms = 60000\nmax_connections_per_host = {4 * max(args.bots, args.sat_bots) + 64}\n[rules]\n"
                   f"target_score = {args.target}\nmax_hands = {args.max_hands}\n")
    proc = subprocess.Popen(okgin_argv("arena", "--state", str(state), "--shards", str(shards), "--bind",
                                       "tcp://127.0.0.1:0", "--config", str(cfg), "--no-web"),
                            stdout=subprocess.PIPE, stderr=open(state.parent / f"arena-{shards}.stderr", "w"), text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()  # the arena prints its endpoint first (or exits)
    ep = endpoint_from_line(line, ARENA_PREFIX)
    if ep is None:
        proc.kill()
        raise SystemExit(f"okgin arena did not start: {line!r}")
    return proc, ep


def stop_arena(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(120)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(30)


def pct(xs: list[float], q: float) -> float | None:
    if not xs:
        return None
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(q * len(xs)))] * 1000, 1)


def load_referee_bench() -> Any:
    """bench/referee.py as a module, for its :func:`build_loaddriver` (one build recipe)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("okgin_bench_referee", Path(__file__).with_name("referee.py"))
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def process_cpu(pid: int) -> float:
    """User + system CPU seconds of one process so far (``/proc/PID/stat``), 0 once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def process_tree(pid: int) -> dict[int, str]:
    """The arena's processes, pid -> a short name: the front and each shard it started
    (its children, read from ``/proc/PID/task/*/children``)."""
    out = {pid: "front"}
    kids: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            kids += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    for i, k in enumerate(sorted(kids)):
        out[k] = f"shard{i}"
    return out


class WindowCpu:
    """Per process CPU of the arena over the drivers' measuring window: where the two
    cores go at saturation (the front's own work against the shards') is what decides
    whether a second shard can pay. Sampled at the window's start and end: the C driver
    says when its window opens ("loaddriver: measuring" on stderr, once every bot has
    signed in); the Python drivers' window opens after the warmup, timed here."""

    def __init__(self, pid: int, seconds: float) -> None:
        import threading

        self.pid, self.seconds = pid, seconds
        self.first: dict[int, float] = {}
        self.last: dict[int, float] = {}
        self.names: dict[int, str] = {}
        self.lock = threading.Lock()
        self.timers: list[threading.Timer] = []

    def at(self, delay: float, fn: Any) -> None:
        import threading

        t = threading.Timer(delay, fn)
        t.daemon = True
        t.start()
        self.timers.append(t)

    def begin(self) -> None:
        """The window opens now (the first call counts); it closes ``seconds`` later."""
        with self.lock:
            if self.names:
                return
            self.names = process_tree(self.pid)
            self.first = {p: process_cpu(p) for p in self.names}
        self.at(self.seconds, self.end)

    def end(self) -> None:
        self.last = {p: process_cpu(p) for p in self.names}

    def cancel(self) -> None:
        for t in self.timers:
            t.cancel()

    def shares(self) -> dict[str, float]:
        """Each process's share of a core over the window (1.0 = one core busy throughout)."""
        if not self.last:
            return {}
        return {self.names[p]: round((self.last[p] - self.first[p]) / self.seconds, 3) for p in self.names}


def watch_stderr(stream: Any, window: WindowCpu) -> None:
    """Pass a C driver's stderr through, and open the CPU window at its "measuring" line."""
    import threading

    def pump() -> None:
        for line in stream:
            sys.stderr.write(line)
            if line.startswith("loaddriver: measuring"):
                window.begin()

    threading.Thread(target=pump, daemon=True).start()


def write_private(path: Path, text: str) -> Path:
    """The bots' keys go to a 0600 file, never on a command line (``ps`` shows those)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    return path


def driver_argv(args: argparse.Namespace, state: Path, ep: str, part: list[tuple[str, str]], name: str,
                think_ms: int) -> list[str]:
    """One driver process's command line: the C loaddriver in arena mode or this file's
    Python driver, each reading its bots' accounts and keys from a 0600 file."""
    if args.driver == "c":
        bots = write_private(state.parent / f"{name}.bots", "".join(f"{a} {k}\n" for a, k in part))
        return [args.loaddriver, "--endpoint", ep, "--arena-bots", str(bots), "--think-ms", str(think_ms),
                "--warmup", str(args.warmup), "--seconds", str(args.seconds)]
    spec = write_private(state.parent / f"{name}.json", json.dumps(
        {"arena": ep, "accounts": part, "think": think_ms / 1000, "warmup": args.warmup, "seconds": args.seconds}))
    return [sys.executable, __file__, "--driver-spec", str(spec)]


def scenario(state: Path, accounts: list[tuple[str, str]], shards: int, think_ms: int,
             args: argparse.Namespace) -> dict[str, Any]:
    proc, ep = start_arena(state, shards, args)
    window = WindowCpu(proc.pid, args.seconds)
    if args.driver != "c":
        window.at(args.warmup, window.begin)
    try:
        procs = args.procs if args.procs else (1 if args.driver == "c" else 4)
        per = -(-len(accounts) // procs)
        cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        drivers = []
        for i in range(procs):
            part = accounts[i * per:(i + 1) * per]
            if part:
                # a C driver's stderr through a pipe of our own, so communicate() below reads stdout only
                r, w = os.pipe() if args.driver == "c" else (-1, -1)
                d = subprocess.Popen(driver_argv(args, state, ep, part, f"driver-{shards}-{i}", think_ms),
                                     stdout=subprocess.PIPE, stderr=w if w >= 0 else None, text=True)
                drivers.append(d)
                if w >= 0:
                    os.close(w)
                    watch_stderr(os.fdopen(r, encoding="utf-8", errors="replace"), window)
        results = []
        for d in drivers:
            out, _ = d.communicate(timeout=args.warmup + args.seconds + 600)
            if d.returncode != 0 or not out.strip():
                raise SystemExit(f"bench/arena.py: a {args.driver} driver failed (exit status {d.returncode}): see above")
            results.append(json.loads(out.strip().splitlines()[-1]))
        cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)  # the drivers only: the arena is reaped later
        driver_cpu = round(cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime, 2)
    finally:
        window.cancel()
        stop_arena(proc)
    lat = [x for r in results for x in r["latency"]]
    waits = [x for r in results for x in r["waits"]]
    games = sum(r["games"] for r in results)
    seconds = statistics.mean(r["seconds"] for r in results)
    errors: dict[str, int] = {}
    for r in results:
        for k, v in r["errors"].items():
            errors[k] = errors.get(k, 0) + v
    row = {"bots": len(accounts), "shards": shards, "think_ms": think_ms, "games": games,
           "games_per_s": round(games / seconds, 2), "moves": len(lat), "latency_p50_ms": pct(lat, 0.5),
           "latency_p99_ms": pct(lat, 0.99), "wait_p50_ms": pct(waits, 0.5), "wait_p99_ms": pct(waits, 0.99),
           "errors": errors, "driver": args.driver, "driver_procs": len(results), "driver_cpu_s": driver_cpu,
           "arena_cpu": window.shares()}
    cpu = ", ".join(f"{k} {v:.2f}" for k, v in row["arena_cpu"].items())
    per_game = ", ".join(f"{k} {1000 * v / row['games_per_s']:.1f} ms" for k, v in row["arena_cpu"].items()
                         if row["games_per_s"])
    print(f"  {len(accounts)} bots, {shards} shard(s), think {think_ms} ms: {row['games_per_s']} games/s, "
          f"{row['moves']} moves; latency p50 {row['latency_p50_ms']} ms p99 {row['latency_p99_ms']} ms; "
          f"matchmaking wait p50 {row['wait_p50_ms']} ms p99 {row['wait_p99_ms']} ms; errors {errors}; "
          f"{args.driver} driver CPU {driver_cpu} s over warmup + window", flush=True)
    print(f"    arena CPU over the window (cores): {cpu or 'not sampled'}; per game: {per_game or '-'}", flush=True)
    return row


def main() -> None:
    if "--driver-spec" in sys.argv:
        spec = json.loads(Path(sys.argv[sys.argv.index("--driver-spec") + 1]).read_text())
        asyncio.run(driver(spec["arena"], [tuple(a) for a in spec["accounts"]], spec["think"], spec["warmup"],
                           spec["seconds"]))
        return
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bots", type=int, default=1000)
    p.add_argument("--think-ms", type=int, default=100)
    p.add_argument("--shards", type=int, default=2)
    p.add_argument("--sat-bots", type=int, default=200)
    p.add_argument("--driver", choices=("c", "python"), default="c",
                   help="the bots' client: bench/loaddriver in arena mode (C, built with make) or this file's asyncio driver")
    p.add_argument("--procs", type=int, default=0, help="driver processes (default: 1 for c, 4 for python)")
    p.add_argument("--warmup", type=float, default=60.0, help="seconds before measuring (sign-in: one scrypt per bot)")
    p.add_argument("--seconds", type=float, default=30.0)
    p.add_argument("--target", type=int, default=20, help="the games' target score")
    p.add_argument("--max-hands", type=int, default=6)
    p.add_argument("--skip-saturation", action="store_true")
    p.add_argument("--state", metavar="DIR", help="keep the arena's state and the accounts' keys here (reused next time)")
    p.add_argument("--quick", action="store_true", help="100 bots, 40 at saturation, 20 s warmup, 10 s windows")
    args = p.parse_args()
    if args.quick:
        args.bots, args.sat_bots, args.warmup, args.seconds = 100, 40, 20.0, 10.0
    if args.driver == "c":
        args.loaddriver, why = load_referee_bench().build_loaddriver()
        if args.loaddriver is None:
            raise SystemExit(f"bench/arena.py: bench/loaddriver does not build ({why}); --driver python needs no compiler")
    with tempfile.TemporaryDirectory(prefix="okgin-bench-arena-") as tmp:
        state = Path(args.state or tmp) / "arena"
        t = time.monotonic()
        accounts = make_accounts(state, max(args.bots, args.sat_bots))
        print(f"bench/arena.py: {len(accounts)} accounts in {time.monotonic() - t:.0f} s; cpus {os.cpu_count()}; "
              f"driver {args.driver}", flush=True)
        out: dict[str, Any] = {"load": scenario(state, accounts[:args.bots], args.shards, args.think_ms, args)}
        if not args.skip_saturation:
            one = scenario(state, accounts[:args.sat_bots], 1, 0, args)
            two = scenario(state, accounts[:args.sat_bots], 2, 0, args)
            ratio = round(two["games_per_s"] / one["games_per_s"], 2) if one["games_per_s"] else None
            print(f"  saturation: 2 shards / 1 shard = {ratio}x games/s", flush=True)
            out |= {"saturation_1": one, "saturation_2": two, "ratio": ratio}
        print(json.dumps(out))


if __name__ == "__main__":
    main()
