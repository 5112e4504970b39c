"""Referee benchmark (issue 3): figures only, never assertions; last line one JSON object.

(a) floor      a bare pyzmq DEALER/ROUTER msgpack round trip between two processes: the
               client sends an act-sized map, the server answers with a real prompt-sized
               map (both sides pack and unpack), in microseconds.
(b) decision   microseconds per decision through a real referee process with two minimal
               scripted clients (prompt -> act -> next prompt), and overhead_ratio = b / a.
(c) hands/s    hands per second through the referee with two random bots.
(d) load       200 concurrent tables (400 clients, zero think time, all in one client
               process) on one referee: decisions per second, p50/p99 decision latency
               (act sent -> the table's next prompt received), the referee's peak RSS,
               and the bench driver's own CPU share (is the driver the bottleneck?).
               Beside it, a paced variant (--think-ms, default 100: each client answers
               that long after its prompt; the think time is not in the latency).
               The clients are driven by the compiled bench/loaddriver (built here with
               make; --driver c; it speaks ZMTP itself from one thread, so no libzmq
               I/O thread of its own competes with the referee's) because the Python driver below (--driver python, the
               fallback when it cannot be built) costs ~0.8 of a core for 400 clients,
               which on 2 cores starves the referee it is measuring.

(b) and (d) run in three event modes: every seat gets each event; hello events=false
(protocol 1.1, prompts only); hello batch_events=true (protocol 1.3, each seat's events
ride in its next prompt).

The referee runs as ``python -m okgin referee --bind tcp://127.0.0.1:0`` in its own
process, journals on (as in production) unless --no-journal. Targets (issue 3):
overhead_ratio <= 1.5; 200 tables at p99 <= 20 ms. Use --quick while developing.

    python bench/referee.py [--quick] [--tables 200] [--seconds 10] [--no-journal] [--think-ms 100]
                            [--driver c|python]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import msgpack
import zmq

# This file is bench/referee.py: run as a script, its directory comes first on sys.path
# and would shadow the ``referee`` package. Drop it (the package is installed).
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]


def _sample_prompt() -> dict[str, Any]:
    """A real prompt as the referee sends it: the engine's view after a few moves."""
    from okgin import Game, RuleSet

    g = Game(RuleSet(), 871)
    for a in ("pass", "pass", "draw_stock"):
        g.apply(next(x for x in g.legal_actions() if x.kind == a))
    return {
        "type": "prompt", "table": "q1", "game": 1, "seq": 4, "seat": g.current_player,
        "legal": [a.to_wire() for a in g.legal_actions()], "view": g.view(g.current_player).to_wire(),
        "clock": {"remaining_ms": None, "move_ms": 0, "bank_ms": None, "increment_ms": 0, "grace_ms": 1000},
    }


# ------------------------------------------------------------------------- (a) floor
def _echo_server(endpoint_q: Any, stop_after: int) -> None:
    ctx = zmq.Context()
    s = ctx.socket(zmq.ROUTER)
    s.setsockopt(zmq.LINGER, 0)
    port = s.bind_to_random_port("tcp://127.0.0.1")
    endpoint_q.put(f"tcp://127.0.0.1:{port}")
    reply = _sample_prompt()
    cpu0 = time.process_time()
    for _ in range(stop_after):
        rid, frame = s.recv_multipart()
        msg = msgpack.unpackb(frame, raw=False)
        reply["seq"] = msg.get("seq", 0) + 1
        s.send_multipart([rid, msgpack.packb(reply, use_bin_type=True)])
    endpoint_q.put(time.process_time() - cpu0)
    s.close(0)
    ctx.term()


def bench_floor(n: int) -> dict[str, float]:
    q: Any = mp.get_context("spawn").Queue()
    warm = 500
    p = mp.get_context("spawn").Process(target=_echo_server, args=(q, n + warm))
    p.start()
    endpoint = q.get(timeout=30)
    ctx = zmq.Context()
    d = ctx.socket(zmq.DEALER)
    d.setsockopt(zmq.LINGER, 0)
    d.connect(endpoint)
    act = {"type": "act", "table": "q1", "seq": 0, "action": {"kind": "discard", "card": "Jc"}}
    times = []
    for i in range(n + warm):
        act["seq"] = i
        t0 = time.perf_counter()
        d.send(msgpack.packb(act, use_bin_type=True))
        msgpack.unpackb(d.recv(), raw=False)
        if i >= warm:
            times.append(time.perf_counter() - t0)
    server_cpu = q.get(timeout=30)
    d.close(0)
    ctx.term()
    p.join(30)
    return {"floor_us_median": statistics.median(times) * 1e6, "floor_us_mean": statistics.fmean(times) * 1e6,
            "floor_server_cpu_us": server_cpu / (n + warm) * 1e6}


# ------------------------------------------------------------------------- the referee
class RefereeProc:
    def __init__(self, journal: bool, extra: list[str] | None = None) -> None:
        self.tmp = tempfile.TemporaryDirectory(prefix="okgin-bench-")
        # The per-host connection cap (512, referee.connguard) is lifted: (d) runs 400
        # clients per mode from this one host, back to back, and a mode's clients may
        # connect before the referee has seen the last mode's go (4 were cut once).
        from okgin.launch import LOOPBACK_ANY_PORT, endpoint_from_line, okgin_argv

        args = [*okgin_argv("referee"), "--bind", LOOPBACK_ANY_PORT, "--heartbeat-ms", "5000", "--max-connections-per-host", "0"]
        args += ["--journal-dir", self.tmp.name] if journal else ["--no-journal"]
        self.proc = subprocess.Popen([*args, *(extra or [])], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        endpoint = endpoint_from_line(self.proc.stdout.readline())
        assert endpoint is not None, "the referee did not start"
        self.endpoint = endpoint

    def peak_rss_kb(self) -> int:
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
        return -1

    def cpu_seconds(self) -> float:
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.tmp.cleanup()


def minimal_choice(legal: list[dict[str, Any]]) -> dict[str, Any]:
    """Knock when allowed, else pass/draw from the stock, else the first discard."""
    for a in legal:
        if a["kind"] in ("knock", "big_gin"):
            return a
    for a in legal:
        if a["kind"] in ("pass", "draw_stock"):
            return a
    return legal[0]


class Table:
    """Two (or three) raw DEALER clients seated at one table, driven without think time."""

    def __init__(self, ctx: zmq.Context, endpoint: str, name: str, choose: Any, events: bool = True, batch: bool = False) -> None:
        self.name = name
        self.choose = choose
        self.socks = []
        for i in range(2):
            s = ctx.socket(zmq.DEALER)
            s.setsockopt(zmq.LINGER, 0)
            s.connect(endpoint)
            hello = {"type": "hello", "protocol": 1, "minor": 3 if batch else 1, "role": "player", "name": f"{name}-{i}",
                     "events": events}
            if batch:
                hello["batch_events"] = True  # protocol 1.3: events ride in the next prompt
            s.send(msgpack.packb(hello))
            self.socks.append(s)
        for s in self.socks:
            msgpack.unpackb(s.recv())  # welcome
        for s in self.socks:
            s.send(msgpack.packb({"type": "join", "table": name}))
        self.sent_at: float | None = None
        self.latencies: list[float] = []
        self.decisions = 0
        self.hands = 0
        self.games = 0


def drive(
    tables: list[Table], seconds: float, warmup: float = 0.5, think: float = 0.0, on_measure: Callable[[], None] | None = None
) -> dict[str, Any]:
    """Answer every prompt at once (or ``think`` seconds later); measure act -> the same
    table's next prompt (the act's send time, so think time is never counted).

    ``on_measure`` is called once when the warmup ends, so that the caller's CPU readings
    cover the same window as the decisions they are divided by. The Python fallback of
    (d): bench/loaddriver (C) plays the same clients at a fraction of this one's CPU.

    One epoll over the sockets' ZeroMQ file descriptors (not zmq_poll, which walks every
    socket on every call: with 400 sockets the harness, not the referee, would be
    measured). ZeroMQ's descriptor is edge-triggered, so each ready socket is drained
    until EAGAIN, and drained again right after each send on it.
    """
    import select

    ep = select.epoll()
    by_fd: dict[int, tuple[zmq.Socket, Table]] = {}
    for t in tables:
        for s in t.socks:
            fd = s.getsockopt(zmq.FD)
            by_fd[fd] = (s, t)
            ep.register(fd, select.EPOLLIN)
    start = time.perf_counter()
    measure_from = start + warmup
    end = measure_from + seconds
    unpack = msgpack.unpackb
    pack = msgpack.packb
    pending = list(by_fd.values())  # drain everything once at the start
    due: list[tuple[float, int, zmq.Socket, Table, bytes]] = []  # paced acts: (send at, tiebreak, ...)
    import heapq

    def send_act(s: zmq.Socket, t: Table, data: bytes) -> None:
        t.sent_at = time.perf_counter()
        s.send(data)

    def drain(s: zmq.Socket, t: Table) -> None:
        while True:
            try:
                frame = s.recv(zmq.NOBLOCK)
            except zmq.Again:
                return
            m = unpack(frame, raw=False)
            ty = m["type"]
            if ty == "prompt":
                now = time.perf_counter()
                if t.sent_at is not None and now >= measure_from:
                    t.latencies.append(now - t.sent_at)
                    t.decisions += 1
                a = t.choose(m["legal"])
                data = pack({"type": "act", "table": m["table"], "seq": m["seq"], "action": a})
                if think > 0:
                    t.sent_at = None
                    heapq.heappush(due, (now + think, id(s), s, t, data))
                else:
                    send_act(s, t, data)
            elif ty == "hand_end":
                if time.perf_counter() >= measure_from and s is t.socks[0]:
                    t.hands += 1
            elif ty == "game_end":
                t.sent_at = None
                if s is t.socks[0]:
                    t.games += 1
                s.send(pack({"type": "rematch", "table": m["table"]}))

    measuring = False
    while time.perf_counter() < end:
        if not measuring and time.perf_counter() >= measure_from:
            measuring = True
            if on_measure is not None:
                on_measure()
        for s, t in pending:
            drain(s, t)
        now = time.perf_counter()
        while due and due[0][0] <= now:
            _, _, s, t, data = heapq.heappop(due)
            send_act(s, t, data)
            drain(s, t)  # a send may consume the descriptor's edge
        timeout = 0.2 if not due else max(0.0, min(0.2, due[0][0] - time.perf_counter()))
        if not measuring:
            timeout = max(0.0, min(timeout, measure_from - time.perf_counter()))
        pending = [by_fd[fd] for fd, _ in ep.poll(timeout)]
    ep.close()
    lat = sorted(x for t in tables for x in t.latencies)
    decisions = sum(t.decisions for t in tables)
    return {
        "decisions": decisions,
        "decisions_per_s": decisions / seconds,
        "hands_per_s": sum(t.hands for t in tables) / seconds,
        "games": sum(t.games for t in tables),
        "p50_ms": lat[len(lat) // 2] * 1e3 if lat else None,
        "p99_ms": lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1e3 if lat else None,
        "mean_us": statistics.fmean(lat) * 1e6 if lat else None,
        "median_us": statistics.median(lat) * 1e6 if lat else None,
    }


def run_tables(
    n_tables: int, seconds: float, journal: bool, choose: Any, events: bool = True, batch: bool = False, think: float = 0.0
) -> dict[str, Any]:
    ref = RefereeProc(journal)
    ctx = zmq.Context()
    try:
        tables = [Table(ctx, ref.endpoint, f"b{i}", choose, events, batch) for i in range(n_tables)]
        cpu0: list[float] = []

        def on_measure() -> None:  # CPU from the end of the warmup, like the decisions
            cpu0[:] = [ref.cpu_seconds(), time.process_time()]

        out = drive(tables, seconds, think=think, on_measure=on_measure)
        out["referee_cpu_s"] = ref.cpu_seconds() - cpu0[0]
        out["driver_cpu_s"] = time.process_time() - cpu0[1]  # this process: the 2 x n_tables clients
        out["referee_peak_rss_mb"] = ref.peak_rss_kb() / 1024
        for t in tables:
            for s in t.socks:
                s.close(0)
        return out
    finally:
        ctx.term()
        ref.stop()


LOADDRIVER_DIR = os.path.join(_HERE, "loaddriver")
LOADDRIVER_BIN = os.path.join(LOADDRIVER_DIR, "build", "loaddriver")


def build_loaddriver() -> tuple[str | None, str]:
    """Build the compiled (d) driver once (make is incremental); (path, "") or (None, why).

    Failure is not fatal: without a C compiler or the libzmq/msgpack-c headers the bench
    still runs, on the Python driver, and says so."""
    try:
        proc = subprocess.run(["make", "-C", LOADDRIVER_DIR, "-s"], capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"make could not run: {e}"
    if proc.returncode != 0 or not os.access(LOADDRIVER_BIN, os.X_OK):
        lines = (proc.stderr or proc.stdout).strip().splitlines()
        return None, f"make failed: {lines[-1] if lines else f'exit status {proc.returncode}'}"
    return LOADDRIVER_BIN, ""


def run_tables_c(
    binary: str, n_tables: int, seconds: float, journal: bool, mode: str, think: float = 0.0, warmup: float = 0.5
) -> dict[str, Any]:
    """(d) with the compiled driver in its own process: the same clients as :class:`Table`
    and :func:`drive` (same hello, join, minimal choice, rematch, counters, percentiles).

    The referee's CPU is read between the driver's "measuring" line (the warmup is over)
    and its JSON line (printed before it closes its sockets): the same window as the
    decisions counted, as in :func:`run_tables`, and neither the set-up nor the 400
    disconnections are charged to them. ``driver_cpu_s`` is the driver's own getrusage
    over that window (all its threads: with ``--transport zmq`` libzmq's I/O thread too;
    the default ``zmtp`` transport speaks ZMTP itself from its one thread). The driver
    also reports p90, p99.9 and the maximum, printed beside p50/p99."""
    ref = RefereeProc(journal)
    args = [
        binary,
        "--endpoint",
        ref.endpoint,
        "--tables",
        str(n_tables),
        "--seconds",
        str(seconds),
        "--warmup",
        str(warmup),
        "--mode",
        mode,
        "--think-ms",
        str(think * 1000),
    ]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stderr is not None
        first = proc.stderr.readline()
        if first.startswith("loaddriver: ready"):
            first = proc.stderr.readline()
        cpu0 = ref.cpu_seconds()
        line = proc.stdout.readline() if first.startswith("loaddriver: measuring") else ""
        referee_cpu = ref.cpu_seconds() - cpu0
        _, rest_err = proc.communicate(timeout=60)
        if proc.returncode != 0 or not line.strip():
            why = (first + rest_err).strip() or f"exit status {proc.returncode}"
            raise RuntimeError(f"loaddriver failed ({' '.join(args)}): {why}")
        out: dict[str, Any] = json.loads(line)
        out["referee_cpu_s"] = referee_cpu
        out["referee_peak_rss_mb"] = ref.peak_rss_kb() / 1024
        return out
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        ref.stop()


def bench_logic(decisions: int, journal: bool, events: bool) -> float:
    """(e) The referee's own work per decision without sockets: decode and check the act,
    apply it, build and pack every frame (events to both seats unless ``events`` is off,
    the next prompt), journal it. Microseconds per decision."""
    import asyncio

    from okgin import RuleSet
    from okgin.protocol import decode, encode, validate
    from referee.config import Clock, Policies, RefereeConfig
    from referee.sessions import Session
    from referee.table import PLAYING
    from referee.table import Table as RefTable
    from referee.tablehost import Host

    loop = asyncio.new_event_loop()
    with tempfile.TemporaryDirectory(prefix="okgin-bench-") as d:
        # a real Host whose sends go nowhere (the sockets are what (b) measures)
        host = Host(
            RefereeConfig(journal_dir=d if journal else None), "bench", time.monotonic, encode,
            lambda sess, msg: None, lambda sess, data: None, lambda: None,
        )
        host.loop = loop
        t = RefTable(host, "t", "admin", RuleSet(), Clock(), Policies(), seed=1)
        seats = [Session(f"k{i}", f"p{i}", "player", rid=b"x", events=events) for i in range(2)]
        for i, s in enumerate(seats):
            t.sit(s, i)
        t.start_game()
        n = 0
        t0 = time.perf_counter()
        while n < decisions:
            if t.status != PLAYING:
                t.start_game()
            p = t.pending
            assert p is not None
            frame = encode({"type": "act", "table": "t", "seq": p.seq, "action": minimal_choice(t.views.legal())})
            m = decode(frame)
            validate(m)
            t.on_act(seats[p.seat], p.seat, m, None)
            n += 1
        dt = time.perf_counter() - t0
        if t.journal is not None:
            t.journal.close()
    loop.close()
    return dt / n * 1e6


# (b) and (d) run in each event mode: name, hello.events, hello.batch_events, label
MODES: tuple[tuple[str, bool, bool, str], ...] = (
    ("events", True, False, "every seat gets each event"),
    ("lean", False, False, "hello events=false: prompts only (protocol 1.1)"),
    ("batched", True, True, "hello batch_events=true: each seat's events ride in its next prompt (protocol 1.3)"),
)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="bench/referee.py", description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="short runs while developing")
    p.add_argument("--tables", type=int, default=200)
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--no-journal", action="store_true")
    p.add_argument(
        "--think-ms",
        type=float,
        default=100.0,
        help="think time of the paced variant of (d), reported beside the zero-think figures (0: skip it)",
    )
    p.add_argument(
        "--driver",
        choices=("c", "python"),
        default=None,
        help="the clients of (d): the compiled bench/loaddriver (default when it builds) or the Python drive()",
    )
    args = p.parse_args(argv)
    secs = 2.0 if args.quick else args.seconds
    journal = not args.no_journal
    load_before = os.getloadavg()
    print(f"# machine: {os.cpu_count()} cpus, load average before {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}")
    print(
        f"# journals {'on' if journal else 'off'}; python {sys.version.split()[0]}, pyzmq {zmq.__version__}, libzmq "
        f"{zmq.zmq_version()}"
    )
    loaddriver: str | None = None
    if args.driver != "python":
        loaddriver, why = build_loaddriver()
        if loaddriver is None and args.driver == "c":
            print(f"bench/referee.py: --driver c, but bench/loaddriver does not build: {why}", file=sys.stderr)
            return 1
        if loaddriver is None:
            print(f"# bench/loaddriver does not build ({why}): (d) uses the Python driver")
    driver = "c" if loaddriver else "python"
    print(f"# (d) driver: {'bench/loaddriver (C)' if loaddriver else 'drive() in this process (Python)'}")

    # (a) and (b) alternate in rounds so that the shared machine's load falls on both
    # alike; each figure is the median over the rounds of each round's median.
    rounds = 1 if args.quick else 3
    floors: list[dict[str, float]] = []
    ones: dict[str, list[dict[str, Any]]] = {mode: [] for mode, *_ in MODES}
    for _ in range(rounds):
        floors.append(bench_floor(2000 if args.quick else 5000))
        for mode, events, batch, _ in MODES:
            ones[mode].append(run_tables(1, secs / rounds if not args.quick else secs, journal, minimal_choice, events, batch))
    floor = {k: statistics.median(f[k] for f in floors) for k in floors[0]}
    print(
        f"(a) floor: bare DEALER/ROUTER msgpack round trip  median {floor['floor_us_median']:.1f} us  mean "
        f"{floor['floor_us_mean']:.1f} us"
        f"  (echo server CPU {floor['floor_server_cpu_us']:.0f} us per round trip)  [rounds: "
        + ", ".join(f"{f['floor_us_median']:.0f}" for f in floors)
        + "]"
    )

    res: dict[str, Any] = {}
    for mode, _, _, label in MODES:
        runs = ones[mode]
        b = statistics.median(r["median_us"] for r in runs)
        mean = statistics.median(r["mean_us"] for r in runs)
        ratio = b / floor["floor_us_median"]
        cpu_us = statistics.median(r["referee_cpu_s"] / max(1, r["decisions"]) * 1e6 for r in runs)
        dps = statistics.median(r["decisions_per_s"] for r in runs)
        print(f"(b) decision through the referee, 1 table, 2 scripted clients, {label}:")
        print(
            f"    median {b:.1f} us  mean {mean:.1f} us  ({dps:.0f} decisions/s)"
            f"  overhead_ratio {ratio:.2f} [target <= 1.5]  referee CPU {cpu_us:.0f} us per decision  [rounds: "
            + ", ".join(f"{r['median_us']:.0f}" for r in runs)
            + "]"
        )
        res[mode] = {"decision_us": round(b, 1), "overhead_ratio": round(ratio, 3), "referee_cpu_us_per_decision": round(cpu_us)}

    rng = random.Random(7)
    hands = run_tables(1, secs, journal, lambda legal: rng.choice(legal))
    print(
        f"(c) hands per second, two random bots, one table: {hands['hands_per_s']:.1f}  ({hands['decisions_per_s']:.0f} "
        "decisions/s)"
    )

    load_secs = secs * (1 if args.quick else 1.5)
    loads = [(mode, events, batch, 0.0) for mode, events, batch, _ in MODES]
    if args.think_ms > 0:  # beside the zero-think figures, never instead of them
        loads.append(("paced", True, False, args.think_ms / 1000))
    for mode, events, batch, think in loads:
        if loaddriver:
            wire_mode = "batched" if batch else ("events" if events else "lean")
            load = run_tables_c(loaddriver, args.tables, load_secs, journal, wire_mode, think)
        else:
            load = run_tables(args.tables, load_secs, journal, minimal_choice, events, batch, think)
        load_cpu_us = load["referee_cpu_s"] / max(1, load["decisions"]) * 1e6
        what = f"{mode}, think {think * 1000:.0f} ms, events on" if think else f"{mode}, zero think"
        print(
            f"(d) {args.tables} tables / {2 * args.tables} clients ({what}, {driver} driver): {load['decisions_per_s']:.0f} "
            "decisions/s"
            f"  p50 {load['p50_ms']:.2f} ms  p99 {load['p99_ms']:.2f} ms [target <= 20]"
            f"  referee peak RSS {load['referee_peak_rss_mb']:.1f} MB"
            f"  referee CPU {load['referee_cpu_s'] / load_secs:.0%} of one core, {load_cpu_us:.0f} us per decision"
            f"  ({driver} driver{'/' + load['transport'] if 'transport' in load else ''} CPU "
            f"{load['driver_cpu_s'] / load_secs:.0%})"
        )
        if load.get("p90_ms") is not None:
            print(f"    tail: p90 {load['p90_ms']:.2f} ms  p99.9 {load['p999_ms']:.2f} ms  max {load['max_ms']:.2f} ms")
        res.setdefault(mode, {}).update(
            {
                "load_decisions_per_s": round(load["decisions_per_s"]),
                "load_p50_ms": round(load["p50_ms"], 2),
                "load_p99_ms": round(load["p99_ms"], 2),
                "referee_peak_rss_mb": round(load["referee_peak_rss_mb"], 1),
                "load_referee_cpu_us_per_decision": round(load_cpu_us),
                "load_driver_cpu_share": round(load["driver_cpu_s"] / load_secs, 2),
            }
        )
        for k in ("p90_ms", "p999_ms", "max_ms"):
            if load.get(k) is not None:
                res[mode]["load_" + k] = round(load[k], 2)
        if think:
            res[mode]["think_ms"] = args.think_ms
    n_logic = 3000 if args.quick else 10000
    logic = {  # best of 3: the least disturbed run of a CPU-bound loop
        "journal_events": min(bench_logic(n_logic, True, True) for _ in range(3)),
        "journal_lean": min(bench_logic(n_logic, True, False) for _ in range(3)),
        "nojournal_events": min(bench_logic(n_logic, False, True) for _ in range(3)),
    }
    print(
        f"(e) referee logic alone, no sockets (decode+check, apply, frames, journal), best of 3: {logic['journal_events']:.0f} "
        "us per decision"
        f"  (events off: {logic['journal_lean']:.0f} us; journal off: {logic['nojournal_events']:.0f} us)"
    )
    load_after = os.getloadavg()
    print(f"# load average after {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}")
    result = {
        "bench": "referee",
        "journal": journal,
        "floor_us": round(floor["floor_us_median"], 1),
        "floor_server_cpu_us": round(floor["floor_server_cpu_us"]),
        "decision_us": res["events"]["decision_us"],
        "overhead_ratio": res["events"]["overhead_ratio"],
        "overhead_ratio_lean": res["lean"]["overhead_ratio"],
        "overhead_ratio_batched": res["batched"]["overhead_ratio"],
        "hands_per_s": round(hands["hands_per_s"], 1),
        "tables": args.tables,
        "driver": driver,
        "load_decisions_per_s": res["events"]["load_decisions_per_s"],
        "load_p50_ms": res["events"]["load_p50_ms"],
        "load_p99_ms": res["events"]["load_p99_ms"],
        "referee_peak_rss_mb": res["events"]["referee_peak_rss_mb"],
        "modes": res,
        "logic_us_per_decision": {k: round(v, 1) for k, v in logic.items()},
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in load_after],
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
