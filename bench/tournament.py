"""Tournament throughput: games per second of one bot against itself, by referee count.

    python bench/tournament.py [--games 40] [--referees 1,2,N] [--concurrency K] [--bot simple]
                               [--command "clients/c/build/okgin-bot --connect {endpoint}"]
                               [--no-sandbox]
    python bench/tournament.py --sandbox-cost [--starts 50] [--games 40]

Runs a real tournament (``okgin tournament`` in this process: local referee processes,
one bot process per seat per game) for each referee count, and prints games per second,
the referee's round-trip latency seen by the runner (its own ping, so harness load can
be told from bot time) and the bots' share of the time by the referee's clock. N
defaults to the number of cores. Figures only, no assertions; the last line is JSON.

``--sandbox-cost``: what the bubblewrap sandbox (competition/tournament/sandbox.py) costs.
The time from starting a bot process to its ``hello`` arriving (at a bare ROUTER bound
on TCP and ipc, so no referee work is in it), for the C bot and the Python ``simple``
bot, bare and sandboxed, median and p99; then games/s of a C-bot round robin (one
referee) without and with the sandbox. Build the C bot first: ``make -C clients/c``.

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

from competition.tournament.config import parse_config
from competition.tournament.runner import RunOptions, run_tournament
from competition.tournament.store import ResultsStore


def one_run(workdir: Path, refs: int, games: int, concurrency: int, bot: str, command: str | None,
            sandbox: bool = True, tag: str = "") -> dict:
    if command:
        words = shlex.split(command)
        if Path(words[0]).exists():  # a path relative to where the bench was started
            words[0] = str(Path(words[0]).resolve())
        spec: dict[str, str | list[str]] = {"command": words}
    else:
        spec = {"bot": bot}
    data = {
        "tournament": {"name": f"bench-r{refs}{tag}", "games_per_pairing": games, "concurrency": concurrency,
                       "referees": refs, "stall_timeout": 60, "sandbox": sandbox},
        "participant": [{"name": "a", **spec}, {"name": "b", **spec}],
    }
    cfg = parse_config(data, config_dir=workdir)
    db = workdir / f"bench-r{refs}{tag}.sqlite"
    t0 = time.perf_counter()
    with open(os.devnull, "w") as devnull:
        old = sys.stdout
        sys.stdout = devnull
        try:
            code = run_tournament(cfg, RunOptions(progress=False, database=str(db), output=str(workdir / f"out-r{refs}{tag}")))
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


REPO = Path(__file__).resolve().parents[1]
C_BOT = REPO / "clients" / "c" / "build" / "okgin-bot"


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def start_times(kind: str, sandboxed: bool, n: int) -> list[float]:
    """Seconds from starting a bot process to its hello at a bare ROUTER (n samples)."""
    import subprocess

    import zmq

    from competition.tournament.sandbox import SOCKET_PATH, Limits, Sandbox, default_dirs
    from okgin.launch import bot_argv

    ctx = zmq.Context()
    out: list[float] = []
    with tempfile.TemporaryDirectory(prefix="okgin-start-") as tmp:
        sock_path = Path(tmp) / "r.sock"
        router = ctx.socket(zmq.ROUTER)
        router.setsockopt(zmq.LINGER, 0)
        router.bind("tcp://127.0.0.1:0")
        tcp = router.getsockopt_string(zmq.LAST_ENDPOINT)
        router.bind(f"ipc://{sock_path}")
        os.chmod(sock_path, 0o666)
        sb = Sandbox([])
        try:
            for _ in range(n):
                ep = f"ipc://{SOCKET_PATH}" if sandboxed else tcp
                if kind == "c":
                    argv = [str(C_BOT), "--connect", ep, "--token", "t", "--name", "b"]
                else:
                    argv = bot_argv("simple", ep, token="t", name="b", quiet=True)
                pre = None
                fds: tuple[int, ...] = ()
                if sandboxed:
                    vis = default_dirs(argv, REPO, kind != "c")
                    w = sb.wrap(argv, visible=vis, cwd=REPO, env={}, socket=sock_path, limits=Limits())
                    argv, pre, fds = w.argv, w.preexec, w.fds
                t0 = time.perf_counter()
                proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, preexec_fn=pre, pass_fds=fds)
                for fd in fds:
                    os.close(fd)
                try:
                    if router.poll(30000):
                        router.recv_multipart()
                        out.append(time.perf_counter() - t0)
                finally:
                    proc.kill()
                    proc.wait(10)
                while router.poll(50):  # whatever the killed bot still sent
                    router.recv_multipart()
        finally:
            router.close(0)
            ctx.term()
    return out


def sandbox_cost(starts: int, games: int) -> int:
    if not C_BOT.exists():
        print(f"build the C bot first: make -C clients/c ({C_BOT} is missing)")
        return 2
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"sandbox cost: {starts} starts per row, {games}-game C-bot round robin; {os.cpu_count()} cores, "
          f"load average {load:.1f} at the start")
    result: dict = {"bench": "tournament-sandbox", "starts": {}, "round_robin": {}}
    for kind in ("c", "python"):
        for sandboxed in (False, True):
            xs = start_times(kind, sandboxed, starts)
            key = f"{kind}-{'sandbox' if sandboxed else 'bare'}"
            result["starts"][key] = {"n": len(xs), "median_ms": round(1000 * _pct(xs, 0.5), 1),
                                     "p99_ms": round(1000 * _pct(xs, 0.99), 1)}
            r = result["starts"][key]
            print(f"  start to hello, {kind} bot, {'sandboxed' if sandboxed else 'bare'}: median {r['median_ms']:.1f} ms, "
                  f"p99 {r['p99_ms']:.1f} ms ({r['n']} starts)", flush=True)
    command = f"{C_BOT} --connect {{endpoint}}"  # the token: $OKGIN_TOKEN
    with tempfile.TemporaryDirectory(prefix="okgin-bench-") as tmp:
        for sandboxed in (False, True):
            r = one_run(Path(tmp), 1, games, 2, "simple", command, sandbox=sandboxed, tag="-sb" if sandboxed else "-bare")
            result["round_robin"]["sandbox" if sandboxed else "bare"] = r
            print(f"  C-bot round robin, {'sandboxed' if sandboxed else 'bare'}: {r['games']} games in {r['wall_s']:.1f} s = "
                  f"{r['games_per_s']:.2f} games/s; abnormal endings {r['abnormal']}", flush=True)
    print(json.dumps(result))
    return 0


def main() -> int:
    cores = os.cpu_count() or 1
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", type=int, default=40, help="games per run (a multiple of 2; default 40)")
    p.add_argument("--referees", default=f"1,2,{cores}", help="referee counts to try (default 1,2,cores)")
    p.add_argument("--concurrency", type=int, default=0, help="games at once (default: 2 per referee, at least 2)")
    p.add_argument("--bot", default="simple", help="built-in bot for both seats (default simple)")
    p.add_argument("--command", help="a bot command instead of --bot ({endpoint} filled in; the token is in $OKGIN_TOKEN)")
    p.add_argument("--no-sandbox", action="store_true", help="run the bots unconfined (tournament.sandbox = false)")
    p.add_argument("--sandbox-cost", action="store_true",
                   help="measure the sandbox: bot start to hello, and games/s, with and without")
    p.add_argument("--starts", type=int, default=50, help="bot starts per row for --sandbox-cost (default 50)")
    args = p.parse_args()
    if args.sandbox_cost:
        return sandbox_cost(args.starts, args.games)
    counts = sorted({int(x) for x in args.referees.split(",") if x.strip()})
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"tournament throughput: {args.command or args.bot} vs itself, {args.games} games per run, {cores} cores, "
        f"load average {load:.1f} at the start"
    )
    rows = []
    with tempfile.TemporaryDirectory(prefix="okgin-bench-") as tmp:
        for refs in counts:
            conc = args.concurrency or max(2, 2 * refs)
            r = one_run(Path(tmp), refs, args.games, conc, args.bot, args.command, sandbox=not args.no_sandbox)
            rows.append(r)
            print(
                f"  referees {refs} concurrency {conc}: {r['games']} games in {r['wall_s']:.1f} s = "
                f"{r['games_per_s']:.2f} games/s ({r['moves_per_s']:.0f} moves/s); referee ping median "
                f"{r['referee_rtt_median_ms']:.1f} ms, max {r['referee_rtt_max_ms']:.1f} ms; bots thought "
                f"{r['bot_think_s']:.1f} s; abnormal endings {r['abnormal']}",
                flush=True,
            )
    base = rows[0]["games_per_s"] if rows else 0
    for r in rows:
        r["speedup"] = round(r["games_per_s"] / base, 2) if base else None
    print(json.dumps({"bench": "tournament", "bot": args.command or args.bot, "cores": cores, "load_start": load, "runs": rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
