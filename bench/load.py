"""Load benchmark (issue 9 §5): many concurrent tables against one referee, then spread
over several; and the latency of honest tables while one connection floods the referee.

Figures only, never assertions; the last line is one JSON object.

Each scenario starts ``R`` referee processes (``python -m okgin referee``, journals on as
in production, default rate limit), creates ``--tables`` reserved tables with fixed seeds
spread evenly over them (games to 10,000 points: no game ends during a run), and starts
``--procs`` client processes, each playing both seats of its share of the tables over raw
DEALER sockets (one per seat: ``2 x tables`` clients), with zero think time and the
deterministic "knock if allowed, else pass / draw / throw the highest card" choice.

- **decisions/s**: acts sent by all clients during the measured window, per second;
- **latency**: per decision, *act sent -> that table's next prompt received* (client
  clocks; CLOCK_MONOTONIC is shared by all processes), p50 and p99 over the window;
- **referee RSS**: each referee's peak resident set (``VmHWM``), and its CPU share
  (user + system time over the window, from ``/proc``).

``--flood``: one referee, the tables above, measured three times: alone; with one extra
process flooding a single connection with ``ping`` frames as fast as it can (the
referee's default rate limit applies); and the same flood against a referee started
with ``--rate-limit 0``. The issue's criterion: the flood raises the honest tables' p99
by at most 2x.

``--attack [NAME]`` (issue 14): one fresh referee per case (default limits, journals
on) hosting 50 reserved honest tables with a clock (``move_ms`` 2000 + ``grace_ms`` 1000,
timeout policy forfeit), played as above; a baseline without attack first and last, and
in between each attack of bench/attacks.py (``all``, the default, or one by name) in its
own process during the measured window. Per case: the honest p50/p99 (an act still
unanswered ``--tail`` s after the window counts as that long), honest games lost on time
(``game_end`` with termination ``timeout``, plus tables whose act has waited longer than
the move's limit + grace when the clients stop reading: the referee has not got to it
yet, and it will be late when it does), the referee's RSS growth (VmRSS/VmHWM before any
client connects vs. the highest during and after), and the three targets: p99 <= 2x the
higher baseline p99, no game lost on time, RSS growth <= 100 MB.

    python bench/load.py                          # 500 tables, 4 client processes, 1 and 2 referees
    python bench/load.py --referees 1,2,4 --seconds 20
    python bench/load.py --flood --tables 100
    python bench/load.py --quick                  # 100 tables, 2 processes, 5 s windows
    python bench/load.py --attack --quick         # every attack, 7 s windows (~3 min)
    python bench/load.py --attack list-flood      # one attack (15 s window), between two baselines
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# The repository's root: bench.attacks (--attack) is imported from it, as is okgin.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import msgpack
import zmq

from okgin.launch import LOOPBACK_ANY_PORT, endpoint_from_line, okgin_argv

ADMIN_KEY = "load-bench"
RANKS = "A23456789TJQK"


# ------------------------------------------------------------------------- clients
def choose(legal: list[dict[str, Any]]) -> dict[str, Any]:
    best = None
    for a in legal:
        k = a["kind"]
        if k == "knock" or k == "big_gin":
            return a
        if k == "pass" or k == "draw_stock":
            return a
        if k == "discard":
            r = RANKS.index(a["card"][0])
            v = (min(r + 1, 10), a["card"])
            if best is None or v > best[0]:
                best = (v, a)
    return best[1] if best else legal[0]


def worker(spec_path: str) -> int:
    """One client process: both seats of each of its tables (see the module docstring)."""
    spec = json.loads(Path(spec_path).read_text())
    t_from, t_to = spec["measure_from"], spec["measure_to"]
    # --attack: keep reading until run_to (a prompt held up by an attack still counts for
    # an act sent in the window), and an act still unanswered then counts as run_to - t0
    run_to, censor = spec.get("run_to", t_to), spec.get("censor", False)
    ctx = zmq.Context()
    packb, unpackb = msgpack.Packer(use_bin_type=True).pack, msgpack.unpackb
    socks: list[zmq.Socket] = []
    table_of: dict[zmq.Socket, str] = {}
    for t in spec["tables"]:
        for tok in t["tokens"]:
            s = ctx.socket(zmq.DEALER)
            s.setsockopt(zmq.LINGER, 0)
            s.connect(t["endpoint"])
            s.send(packb({"type": "hello", "protocol": 1, "role": "player", "name": "load", "token": tok}))
            socks.append(s)
            table_of[s] = t["table"]
    poller = zmq.Poller()
    for s in socks:
        poller.register(s, zmq.POLLIN)
    sent_at: dict[str, float] = {}
    lat: list[float] = []
    decisions = 0
    errors = 0
    ends: dict[str, list[Any]] = {}  # table -> [termination of its game_end, when (s after t_from)]
    last_beat = time.monotonic()
    beat = packb({"type": "heartbeat"})
    while True:
        now = time.monotonic()
        if now >= run_to:
            break
        if now - last_beat > 2.0:
            last_beat = now
            for s in socks:
                try:
                    s.send(beat, zmq.NOBLOCK)
                except zmq.Again:
                    pass
        for s, _ in poller.poll(200):
            while True:
                try:
                    frame = s.recv(zmq.NOBLOCK)
                except zmq.Again:
                    break
                m = unpackb(frame, raw=False)
                typ = m["type"]
                if typ == "prompt":
                    now = time.monotonic()
                    table = m["table"]
                    t0 = sent_at.pop(table, None)
                    if t0 is not None and t_from <= t0 < t_to and now < run_to:
                        lat.append(now - t0)
                    s.send(packb({"type": "act", "table": table, "seq": m["seq"], "action": choose(m["legal"])}))
                    sent_at[table] = time.monotonic()
                    if t_from <= now < t_to:
                        decisions += 1
                elif typ == "error":
                    errors += 1
                elif typ == "game_end":
                    # a game lost on time: the act waited until this game_end to learn it
                    t0 = sent_at.pop(m["table"], None)
                    now = time.monotonic()
                    if t0 is not None and t_from <= t0 < t_to and m.get("termination") == "timeout":
                        lat.append(now - t0)
                    ends[m["table"]] = [m.get("termination", "?"), round(now - t_from, 3)]
    unanswered = [run_to - t0 for t0 in sent_at.values() if t_from <= t0 < t_to]
    if censor:
        lat += unanswered
    # an act unanswered for longer than the move's limit + grace: the referee has not got to
    # it yet, and when it does the table's clock has run out (lost on time, not yet told)
    limit = spec.get("limit_s")
    overdue = sorted(table for table, t0 in sent_at.items() if limit is not None and run_to - t0 > limit)
    print(json.dumps({"decisions": decisions, "lat": lat, "errors": errors, "unanswered": len(unanswered), "ends": ends,
                      "overdue": overdue}), flush=True)
    for s in socks:
        s.close(0)
    ctx.term()
    return 0


def flooder(endpoint: str, until: float, what: str, conns: int) -> int:
    """``conns`` connections sending ``what`` as fast as they can until ``until``.

    It keeps every connection's queue full, yet runs at the lowest priority and naps when
    the queues are full: an attacker elsewhere on the network loads the referee, not the
    referee's CPU. (Spinning at full priority on this 2-core machine, it halved everyone's
    throughput by eating a core, whatever the referee did.)"""
    os.nice(19)
    ctx = zmq.Context()
    socks = []
    for _ in range(conns):
        s = ctx.socket(zmq.DEALER)
        s.setsockopt(zmq.LINGER, 0)
        s.setsockopt(zmq.SNDHWM, 100000)
        s.connect(endpoint)
        s.send(msgpack.packb({"type": "hello", "protocol": 1, "role": "player", "name": "flood"}))
        socks.append(s)
    ping = msgpack.packb({"type": what})
    sent = received = 0
    while time.monotonic() < until:
        full = 0
        for s in socks:
            for _ in range(200):
                try:
                    s.send(ping, zmq.NOBLOCK)
                    sent += 1
                except zmq.Again:
                    full += 1
                    break
            while True:
                try:
                    s.recv(zmq.NOBLOCK)
                    received += 1
                except zmq.Again:
                    break
        if full == len(socks):
            time.sleep(0.001)
    print(json.dumps({"sent": sent, "received": received}), flush=True)
    for s in socks:
        s.close(0)
    ctx.term()
    return 0


# ------------------------------------------------------------------------- referees
class Referee:
    def __init__(self, workdir: Path, label: str, extra: list[str], journal: bool, limits: bool = True) -> None:
        """``limits``: raise --max-tables/--max-sessions to 20,000 and lift the per-host
        connection cap (every client here is on one host; False: the referee's defaults)."""
        args = [*okgin_argv("referee"), "--bind", LOOPBACK_ANY_PORT, "--admin-key", ADMIN_KEY,
                *(["--max-tables", "20000", "--max-sessions", "20000", "--max-connections-per-host", "0"] if limits else []),
                *extra]
        args += ["--journal-dir", str(workdir / f"journals-{label}")] if journal else ["--no-journal"]
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert self.proc.stdout is not None
        endpoint = endpoint_from_line(self.proc.stdout.readline())
        if endpoint is None:
            raise RuntimeError("the referee did not start")
        self.endpoint = endpoint

    def cpu_s(self) -> float:
        f = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")

    def _status_mb(self, field: str) -> float:
        try:
            for ln in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                if ln.startswith(field):
                    return int(ln.split()[1]) / 1024
        except OSError:  # the referee has exited
            pass
        return 0.0

    def peak_rss_mb(self) -> float:
        return self._status_mb("VmHWM:")

    def rss_mb(self) -> float:
        return self._status_mb("VmRSS:")

    def stop(self, timeout: float = 60) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def create_tables(
    refs: list[Referee], n: int, clock: dict[str, int] | None = None, policies: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context.instance()
    out: list[dict[str, Any]] = []
    admins = []
    for r in refs:
        a = ctx.socket(zmq.DEALER)
        a.setsockopt(zmq.LINGER, 0)
        a.connect(r.endpoint)
        a.send(msgpack.packb({"type": "hello", "protocol": 1, "role": "admin", "name": "bench", "admin_key": ADMIN_KEY, "id": 0}))
        assert a.poll(30000) and msgpack.unpackb(a.recv())["type"] == "welcome"
        admins.append(a)
    for i in range(n):
        a, r = admins[i % len(refs)], refs[i % len(refs)]
        req = {"type": "create_table", "id": i, "table": f"L{i}", "seed": i, "reserved": True, "rules": {"target_score": 10000}}
        if clock:
            req["clock"] = clock
        if policies:
            req["policies"] = policies
        a.send(msgpack.packb(req))
    poller = zmq.Poller()
    for a in admins:
        poller.register(a, zmq.POLLIN)
    while len(out) < n:
        ready = dict(poller.poll(30000))
        if not ready:
            raise RuntimeError(f"only {len(out)} of {n} tables were created")
        for a in ready:
            m = msgpack.unpackb(a.recv())
            if m["type"] == "table_created":
                i = m["id"]
                out.append({"table": m["table"], "tokens": m["seat_tokens"], "endpoint": refs[i % len(refs)].endpoint})
            elif m["type"] == "error":
                raise RuntimeError(f"create_table refused: {m}")
    for a in admins:
        a.close(0)
    return sorted(out, key=lambda t: int(t["table"][1:]))


def pct(xs: list[float], p: float) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))] * 1000


def start_workers(
    workdir: Path,
    specs: list[dict[str, Any]],
    procs: int,
    warmup: float,
    seconds: float,
    tail: float | None = None,
    start: float | None = None,
) -> tuple[list[subprocess.Popen[str]], float, float]:
    """The client processes, each with its share of the tables; returns them and the
    measured window (t_from, t_to): from ``start`` (default: when the clients should have
    connected) + ``warmup``. ``tail``: the clients read on that long after the window,
    and an act of the window still unanswered then counts (see worker)."""
    if start is None:
        start = time.monotonic() + 2.0 + len(specs) / 250  # time for the clients to connect
    t_from, t_to = start + warmup, start + warmup + seconds
    extra = (
        {}
        if tail is None
        else {"run_to": t_to + tail, "censor": True, "limit_s": (HONEST_CLOCK["move_ms"] + HONEST_CLOCK["grace_ms"]) / 1000}
    )
    workers = []
    for k in range(procs):
        path = workdir / f"spec-{k}.json"
        path.write_text(json.dumps({"tables": specs[k::procs], "measure_from": t_from, "measure_to": t_to, **extra}))
        workers.append(subprocess.Popen([sys.executable, __file__, "--worker", str(path)], stdout=subprocess.PIPE, text=True))
    return workers, t_from, t_to


def scenario(
    workdir: Path,
    n_refs: int,
    tables: int,
    procs: int,
    warmup: float,
    seconds: float,
    journal: bool,
    flood: bool = False,
    ref_extra: list[str] | None = None,
    flood_what: str = "ping",
    flood_conns: int = 1,
) -> dict[str, Any]:
    refs = [Referee(workdir, f"{n_refs}r{k}-{time.monotonic_ns()}", ref_extra or [], journal) for k in range(n_refs)]
    workers: list[subprocess.Popen[str]] = []
    flood_proc = None
    try:
        specs = create_tables(refs, tables)
        workers, t_from, t_to = start_workers(workdir, specs, procs, warmup, seconds)
        if flood:
            flood_proc = subprocess.Popen(
                [
                    sys.executable,
                    __file__,
                    "--flooder",
                    refs[0].endpoint,
                    "--until",
                    str(t_to),
                    "--what",
                    flood_what,
                    "--flood-conns",
                    str(flood_conns),
                ],
                stdout=subprocess.PIPE,
                text=True,
            )
        time.sleep(max(0.0, t_from - time.monotonic()))
        cpu0 = [r.cpu_s() for r in refs]
        time.sleep(max(0.0, t_to - time.monotonic()))
        cpu1 = [r.cpu_s() for r in refs]
        results = [json.loads(w.communicate(timeout=600)[0].strip().splitlines()[-1]) for w in workers]
        flood_out = json.loads(flood_proc.communicate(timeout=120)[0].strip().splitlines()[-1]) if flood_proc else None
        lat = [x for r in results for x in r["lat"]]
        dec = sum(r["decisions"] for r in results)
        return {
            "referees": n_refs,
            "tables": tables,
            "clients": 2 * tables,
            "client_procs": procs,
            "decisions_per_s": round(dec / seconds, 1),
            "p50_ms": round(pct(lat, 0.5), 2),
            "p99_ms": round(pct(lat, 0.99), 2),
            "mean_ms": round(statistics.fmean(lat) * 1000, 2) if lat else None,
            "errors": sum(r["errors"] for r in results),
            "referee_peak_rss_mb": [round(r.peak_rss_mb(), 1) for r in refs],
            "referee_cpu_pct": [round(100 * (b - a) / seconds, 1) for a, b in zip(cpu0, cpu1, strict=True)],
            "flood": flood_out,
        }
    finally:
        for w in workers:
            if w.poll() is None:
                w.kill()
        if flood_proc is not None and flood_proc.poll() is None:
            flood_proc.kill()
        for r in refs:
            r.stop()


# ------------------------------------------------------------------------- attacks
ATTACK_NAMES = ["cheap-frames", "big-frames", "illegal-flood", "list-flood", "table-squat", "advice-flood", "idle-sessions"]
HONEST_CLOCK = {"move_ms": 2000, "grace_ms": 1000}  # --attack: the honest tables are clocked
HONEST_POLICIES = {"timeout": "forfeit"}
TARGET_RATIO, TARGET_RSS_MB = 2.0, 100.0


def attacker(name: str, endpoint: str, start: float, until: float, quick: bool, nice: int) -> int:
    """One attack of bench/attacks.py, in its own process; its figures as the last line."""
    from bench import attacks

    if nice:
        os.nice(nice)  # before the context: libzmq's I/O thread inherits it
    ctx = zmq.Context()
    began = time.monotonic() - start  # < 0: ready before the window, as it should be
    try:
        out = attacks.ATTACKS[name](ctx, endpoint, ADMIN_KEY, start, until, quick)
    except Exception as e:  # an attack that breaks still lets the honest figures be reported
        out = {"attack_failed": f"{type(e).__name__}: {e}"}
    ctx.destroy(0)
    t = os.times()
    out["attacker_cpu_s"], out["attacker_ready_s"] = round(t.user + t.system, 2), round(began, 2)
    print(json.dumps(out), flush=True)
    return 0


def attack_scenario(
    workdir: Path,
    attack: str | None,
    tables: int,
    procs: int,
    warmup: float,
    seconds: float,
    tail: float,
    journal: bool,
    quick: bool,
    nice: int,
) -> dict[str, Any]:
    """One fresh referee (default limits), ``tables`` clocked honest tables played as in
    :func:`scenario`, and ``attack`` (None: the baseline) from the start of the measured
    window to its end. The honest clients read on for ``tail`` s after it."""
    ref = Referee(workdir, f"atk-{attack or 'none'}-{time.monotonic_ns()}", [], journal, limits=False)
    workers: list[subprocess.Popen[str]] = []
    atk = None
    try:
        # The window is fixed first and the attacker started at once, before the tables and
        # the clients: a Python process can take seconds to start on this loaded machine.
        start = time.monotonic() + 3.0 + tables / 250
        t_from, t_to = start + warmup, start + warmup + seconds
        if attack is not None:
            atk = subprocess.Popen(
                [
                    sys.executable,
                    __file__,
                    "--attacker",
                    attack,
                    "--attack-endpoint",
                    ref.endpoint,
                    "--start",
                    str(t_from),
                    "--until",
                    str(t_to),
                    "--attack-nice",
                    str(nice),
                    *(["--quick"] if quick else []),
                ],
                stdout=subprocess.PIPE,
                text=True,
            )
        specs = create_tables([ref], tables, HONEST_CLOCK, HONEST_POLICIES)
        # "before": the honest tables exist, no client has connected yet, nor the attacker
        # unless it starts faster than they are made (the baseline's growth is what
        # 2 x tables clients and their games add)
        rss0, hwm0 = ref.rss_mb(), ref.peak_rss_mb()
        workers, t_from, t_to = start_workers(workdir, specs, procs, warmup, seconds, tail, start)
        run_to = t_to + tail
        rss_max, cpu0, cpu1 = rss0, None, None
        while (now := time.monotonic()) < run_to:
            rss_max = max(rss_max, ref.rss_mb())
            if cpu0 is None and now >= t_from:
                cpu0 = ref.cpu_s()
            if cpu1 is None and now >= t_to:
                cpu1 = ref.cpu_s()
            time.sleep(0.1)
        hwm1 = ref.peak_rss_mb()
        alive = ref.proc.poll() is None
        results = [json.loads(w.communicate(timeout=120)[0].strip().splitlines()[-1]) for w in workers]
        atk_out = None
        if atk is not None:
            try:
                lines = atk.communicate(timeout=60)[0].strip().splitlines()
                atk_out = json.loads(lines[-1]) if lines else {"attack_failed": "no output"}
            except subprocess.TimeoutExpired:
                atk.kill()
                atk_out = {"attack_failed": "still running 60 s after its window: killed"}
        lat = [x for r in results for x in r["lat"]]
        ends: dict[str, list[Any]] = {}
        for r in results:
            ends.update(r["ends"])
        lost = sorted(at for why, at in ends.values() if why == "timeout")
        overdue = sum(len(r["overdue"]) for r in results)
        growth = max(rss_max - rss0, hwm1 - hwm0)
        return {
            "attack": attack or "none",
            "decisions_per_s": round(sum(r["decisions"] for r in results) / seconds, 1),
            "p50_ms": round(pct(lat, 0.5), 2),
            "p99_ms": round(pct(lat, 0.99), 2),
            "unanswered": sum(r["unanswered"] for r in results),
            # games lost on time from the window's start on (before it: the warm-up, no attack yet
            # except list-flood's table creation: a sign of the machine's load, reported apart)
            "lost_on_time": sum(1 for at in lost if at >= 0) + overdue,
            "lost_told": sum(1 for at in lost if at >= 0),
            "lost_overdue": overdue,
            "lost_in_warmup": sum(1 for at in lost if at < 0),
            "first_loss_s": lost[0] if lost else None,
            "other_game_ends": {k: v for k, v in ends.items() if v[0] != "timeout"},
            "rss_before_mb": round(rss0, 1),
            "rss_max_mb": round(rss_max, 1),
            "hwm_mb": round(hwm1, 1),
            "rss_growth_mb": round(growth, 1),
            "referee_cpu_pct": round(100 * ((cpu1 or ref.cpu_s()) - (cpu0 or 0.0)) / seconds, 1),
            "referee_alive": alive,
            "attacker": atk_out,
        }
    finally:
        for w in workers:
            if w.poll() is None:
                w.kill()
        if atk is not None and atk.poll() is None:
            atk.kill()
        ref.stop(3)  # a referee buried under an attack's backlog need not stop gracefully


def run_attacks(work: Path, names: list[str], args: argparse.Namespace, load: tuple[float, float, float]) -> dict[str, Any]:
    print(
        f"  honest: {args.tables} tables (clock move_ms {HONEST_CLOCK['move_ms']} + grace {HONEST_CLOCK['grace_ms']}, "
        f"timeout forfeit), {args.procs} client processes; window {args.seconds:g} s (+{args.tail:g} s tail) after "
        f"{args.warmup:g} s warm-up; each case on a fresh referee (default limits)",
        flush=True,
    )
    rows = []
    # the baseline twice, first and last: the shared machine's load drifts over minutes,
    # and the no-attack figure is the higher of the two (a lucky quiet baseline must not
    # make an attack look worse than it is)
    for k, name in enumerate([None, *names, None]):
        t_case = time.monotonic()
        r = attack_scenario(
            work,
            name,
            args.tables,
            args.procs,
            args.warmup,
            args.seconds,
            args.tail,
            not args.no_journal,
            args.quick,
            args.attack_nice,
        )
        if k:
            r["attack"] = r["attack"] if name else "none-after"
        r["case_s"] = round(time.monotonic() - t_case, 1)
        rows.append(r)
        print(
            f"  {r['attack']:14s} {r['decisions_per_s']:7.0f} decisions/s  p50 {r['p50_ms']:8.2f} ms  p99 {r['p99_ms']:8.2f} ms"
            f"  lost on time {r['lost_on_time']} (told {r['lost_told']}, overdue {r['lost_overdue']}; warm-up "
            f"{r['lost_in_warmup']})  RSS {r['rss_before_mb']:.0f} -> {max(r['rss_max_mb'], r['hwm_mb']):.0f} MB"
            f"  CPU {r['referee_cpu_pct']:.0f}%{'' if r['referee_alive'] else '  REFEREE EXITED'}  ({r['case_s']:.0f} s)",
            flush=True,
        )
        if r["attacker"] is not None:
            print(f"    attacker: {json.dumps(r['attacker'])}", flush=True)
    base = max(rows[0]["p99_ms"], rows[-1]["p99_ms"])
    print(
        f"\n  | attack | honest p50 | honest p99 | no-attack p99 | ratio | lost on time | referee RSS before -> peak (growth) "
        f"| p99 <= {TARGET_RATIO:g}x | 0 lost | RSS <= {TARGET_RSS_MB:g} MB |"
    )
    print("  |---|---|---|---|---|---|---|---|---|---|")
    out = {}
    for r in rows:
        ratio = r["p99_ms"] / base if base == base and base > 0 else float("nan")
        met = {"p99": ratio <= TARGET_RATIO, "time": r["lost_on_time"] == 0, "rss": r["rss_growth_mb"] <= TARGET_RSS_MB}
        r["ratio"], r["met"] = round(ratio, 2), met
        peak = max(r["rss_max_mb"], r["hwm_mb"])
        print(
            f"  | {r['attack']} | {r['p50_ms']:.1f} ms | {r['p99_ms']:.1f} ms | {base:.1f} ms | x{ratio:.2f} | "
            f"{r['lost_on_time']} of {args.tables} "
            f"| {r['rss_before_mb']:.0f} -> {peak:.0f} MB (+{r['rss_growth_mb']:.0f}) | "
            + " | ".join("yes" if met[k] else "**no**" for k in ("p99", "time", "rss"))
            + " |"
        )
        out[r["attack"]] = {
            k: r[k]
            for k in (
                "decisions_per_s",
                "p50_ms",
                "p99_ms",
                "ratio",
                "unanswered",
                "lost_on_time",
                "lost_told",
                "lost_overdue",
                "lost_in_warmup",
                "first_loss_s",
                "rss_before_mb",
                "rss_growth_mb",
                "hwm_mb",
                "referee_cpu_pct",
                "met",
                "attacker",
            )
        }
    return {
        "bench": "load-attack",
        "tables": args.tables,
        "clock": HONEST_CLOCK,
        "seconds": args.seconds,
        "tail": args.tail,
        "p99_no_attack_ms": base,
        "p99_baselines_ms": [rows[0]["p99_ms"], rows[-1]["p99_ms"]],
        "cases": out,
        "load": round(load[0], 1),
        "load_after": round(os.getloadavg()[0], 1),
    }


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tables", type=int, help="honest tables (default 500; --attack: 50)")
    p.add_argument("--procs", type=int, help="client processes (default 4; --attack: 2)")
    p.add_argument("--referees", default="1,2", help="referee counts to compare (comma list)")
    p.add_argument("--seconds", type=float, help="measured window per scenario (default 15; --quick: 5, --attack --quick: 8)")
    p.add_argument("--warmup", type=float, help="default 3 s (--quick: 2)")
    p.add_argument(
        "--attack",
        nargs="?",
        const="all",
        choices=["all", *ATTACK_NAMES],
        help="the attacks against clocked honest tables, after a baseline (no name: all)",
    )
    p.add_argument(
        "--tail", type=float, help="with --attack: the clients read on this long after the window (default 5; --quick: 4)"
    )
    p.add_argument(
        "--attack-nice",
        type=int,
        default=0,
        help="with --attack: the attacker's nice value (default 0: the attacks are paced and bounded, and a niced "
        "attacker on this loaded machine waits for the CPU instead of attacking)",
    )
    p.add_argument("--no-journal", action="store_true")
    p.add_argument("--flood", action="store_true", help="the flood comparison instead (one referee)")
    p.add_argument("--quick", action="store_true", help="100 tables, 2 processes, 5 s windows")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--flooder", help=argparse.SUPPRESS)
    p.add_argument("--attacker", help=argparse.SUPPRESS)
    p.add_argument("--attack-endpoint", help=argparse.SUPPRESS)
    p.add_argument("--start", type=float, help=argparse.SUPPRESS)
    p.add_argument("--until", type=float, help=argparse.SUPPRESS)
    p.add_argument("--flood-conns", type=int, default=1, help="with --flood: flooding connections (one process)")
    p.add_argument("--rounds", type=int, default=3, help="with --flood: interleaved rounds of the three cases (medians reported)")
    p.add_argument(
        "--what",
        default="ping",
        help="with --flood: the message flooded: ping (cheapest) or list_tables (the dearest a player may send)",
    )
    args = p.parse_args(argv)
    if args.worker:
        return worker(args.worker)
    if args.flooder:
        return flooder(args.flooder, args.until, args.what, args.flood_conns)
    if args.attacker:
        return attacker(args.attacker, args.attack_endpoint, args.start, args.until, args.quick, args.attack_nice)
    atk = args.attack is not None
    if args.quick:
        args.tables = min(args.tables or 100, 100) if not atk else args.tables or 50
        args.procs, args.seconds = args.procs or 2, args.seconds or (7.0 if atk else 5.0)
        args.warmup, args.tail = (
            args.warmup if args.warmup is not None else (1.5 if atk else 2.0),
            args.tail if args.tail is not None else 3.0,
        )
    args.tables, args.procs = args.tables or (50 if atk else 500), args.procs or (2 if atk else 4)
    args.seconds, args.warmup = args.seconds or 15.0, args.warmup if args.warmup is not None else 3.0
    args.tail = args.tail if args.tail is not None else 5.0
    load = os.getloadavg()
    print(
        f"okgin load benchmark ({os.cpu_count()} CPUs, load {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}, journals "
        f"{'off' if args.no_journal else 'on'}): {args.tables} tables = {2 * args.tables} clients in {args.procs} processes",
        flush=True,
    )
    rows = []
    with tempfile.TemporaryDirectory(prefix="okgin-load-") as tmp:
        work = Path(tmp)
        if atk:
            summary = run_attacks(work, ATTACK_NAMES if args.attack == "all" else [args.attack], args, load)
        elif args.flood:
            # The three cases in interleaved rounds: the machine's load drifts, so a case
            # run once, minutes after another, says more about the drift than the flood.
            plan = [
                ("alone", False, []),
                ("flood, rate limit on", True, []),
                ("flood, --rate-limit 0", True, ["--rate-limit", "0"]),
            ]
            by: dict[str, list[dict[str, Any]]] = {label: [] for label, _, _ in plan}
            for rnd in range(args.rounds):
                for label, flood, extra in plan:
                    r = scenario(
                        work,
                        1,
                        args.tables,
                        args.procs,
                        args.warmup,
                        args.seconds,
                        not args.no_journal,
                        flood,
                        extra,
                        args.what,
                        args.flood_conns,
                    )
                    by[label].append(r)
                    print(
                        f"  round {rnd + 1} {label:24s} {r['decisions_per_s']:8.0f} decisions/s  p50 {r['p50_ms']:7.2f} ms"
                        f"  p99 {r['p99_ms']:8.2f} ms  referee CPU {r['referee_cpu_pct'][0]:5.1f}%  flood {r['flood']}",
                        flush=True,
                    )

            def med(label: str, key: str) -> float:
                return round(statistics.median(r[key] for r in by[label]), 2)

            base = med("alone", "p99_ms")
            for label, _, _ in plan:
                print(
                    f"  median {label:24s} {med(label, 'decisions_per_s'):8.0f} decisions/s  p50 {med(label, 'p50_ms'):7.2f} ms"
                    f"  p99 {med(label, 'p99_ms'):8.2f} ms  (x{med(label, 'p99_ms') / base:.2f})",
                    flush=True,
                )
            lim = by["flood, rate limit on"]
            summary = {
                "bench": "load-flood",
                "flooded": args.what,
                "flood_conns": args.flood_conns,
                "tables": args.tables,
                "rounds": args.rounds,
                "p99_alone_ms": base,
                "p99_flood_ms": med("flood, rate limit on", "p99_ms"),
                "p99_flood_nolimit_ms": med("flood, --rate-limit 0", "p99_ms"),
                "ratio_limited": round(med("flood, rate limit on", "p99_ms") / base, 2),
                "ratio_unlimited": round(med("flood, --rate-limit 0", "p99_ms") / base, 2),
                "flood_sent": sum(r["flood"]["sent"] for r in lim),
                "flood_answered": sum(r["flood"]["received"] for r in lim),
                "load": round(load[0], 1),
            }
        else:
            for n in [int(x) for x in args.referees.split(",")]:
                r = scenario(work, n, args.tables, args.procs, args.warmup, args.seconds, not args.no_journal)
                rows.append(r)
                print(
                    f"  {n} referee(s): {r['decisions_per_s']:8.0f} decisions/s  p50 {r['p50_ms']:7.2f} ms  p99 "
                    f"{r['p99_ms']:8.2f} ms"
                    f"  peak RSS {r['referee_peak_rss_mb']} MB  CPU {r['referee_cpu_pct']} %  errors {r['errors']}",
                    flush=True,
                )
            summary = {
                "bench": "load",
                "tables": args.tables,
                "clients": 2 * args.tables,
                "client_procs": args.procs,
                "journal": not args.no_journal,
                "load": round(load[0], 1),
                "by_referees": {
                    str(r["referees"]): {
                        k: r[k] for k in ("decisions_per_s", "p50_ms", "p99_ms", "referee_peak_rss_mb", "referee_cpu_pct")
                    }
                    for r in rows
                },
            }
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
