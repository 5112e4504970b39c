"""Tournaments on Dask: games/s of a C-bot round robin local, on 1 worker and on 2 workers.

    make -C clients/c                       # the C bot, once
    python bench/cluster.py [--games 40] [--slots 2] [--threads 1] [--no-sandbox]

Three runs of the same round robin (two C bots, ``games`` games, the same fixed seed):

- ``local``: ``okgin tournament`` as without ``--dask`` (local referee, local bots),
  ``slots`` games at once;
- ``dask-1``: ``--dask`` against a ``dask scheduler`` and one ``dask worker`` with
  ``--nthreads THREADS`` (default 1, as docs/cluster.md advises), all on 127.0.0.1
  (started here with the ``dask`` command), as many games out as worker threads;
- ``dask-2``: the same with two workers. For each game of a Dask run it takes, from the scheduler's task
stream, the time the task computed on its worker (referee tables, bot processes, the
game: "a game's time"), and, from the runner (its Dask executor is a :class:`TimedDaskExecutor`,
which times ``play_attempt``), the time from submitting the task to having its result in
the runner's loop. **Overhead per game** = runner-side time − worker compute time:
scheduling, the task's arguments out, the result back, deserialising; split into "out"
(submit to the start of compute) and "back" (end of compute to the result in the
runner's loop), both on the one wall clock of this host. **Bytes back
per game**: the pickled ``GameReply`` (the result Dask ships to the runner). Target:
overhead ≤ 5% of a game's time.

On a 2-core machine the three setups share the same cores, so 2 workers cannot be
faster than 1; docs/cluster.md projects the scaling. Figures only, no assertions; the
last line is JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from unittest import mock

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from competition.cluster import tournament as cluster_tournament  # noqa: E402
from competition.cluster.tournament import DaskExecutor  # noqa: E402
from competition.tournament.config import parse_config  # noqa: E402
from competition.tournament.executor import Forfeit, Outcome  # noqa: E402
from competition.tournament.runner import RunOptions, run_tournament  # noqa: E402
from competition.tournament.schedule import ScheduledGame  # noqa: E402
from competition.tournament.store import GameResult, ResultsStore  # noqa: E402

C_BOT = REPO / "clients" / "c" / "build" / "okgin-bot"
START_S = 90.0

# Per-attempt figures of the TimedDaskExecutor: (game key, wall clock at submit, at result, bytes).
TIMINGS: list[tuple[str, float, float, int]] = []


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}


def _line(proc: subprocess.Popen[str], pattern: str, what: str) -> str:
    """The first group of the first stderr line of ``proc`` matching ``pattern``."""
    assert proc.stderr is not None
    deadline = time.monotonic() + START_S
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            raise RuntimeError(f"{what} exited before it was ready")
        m = re.search(pattern, line)
        if m:
            return m.group(1) if m.groups() else line
    raise RuntimeError(f"{what} not ready within {START_S:.0f} s")


class Cluster:
    """``dask scheduler`` + ``workers`` x ``dask worker --nthreads threads`` on 127.0.0.1."""

    def __init__(self, workers: int, threads: int) -> None:
        self.procs: list[subprocess.Popen[str]] = []
        sched = self._start(["dask", "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard"])
        self.address = _line(sched, r"Scheduler at:\s+(tcp://\S+)", "dask scheduler")
        for i in range(workers):
            w = self._start(["dask", "worker", self.address, "--host", "127.0.0.1", "--nthreads", str(threads),
                             "--no-nanny", "--no-dashboard", "--name", f"bench-w{i}"])
            _line(w, r"(Registered to:)", "dask worker")
        for p in self.procs:  # drain the logs so no process blocks on a full pipe
            import threading

            stream = p.stderr
            threading.Thread(target=lambda s=stream: [None for _ in s], daemon=True).start()

    def _start(self, cmd: list[str]) -> subprocess.Popen[str]:
        p = subprocess.Popen(cmd, cwd=REPO, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.procs.append(p)
        return p

    def close(self) -> None:
        for p in reversed(self.procs):  # workers first, then the scheduler; only ours, by PID
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(10)


def _cpu() -> float:
    """CPU seconds of this process (the runner; its referees and bots are children)."""
    import resource

    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def config(workdir: Path, name: str, games: int, slots: int, sandbox: bool) -> Any:
    bot = {"command": [str(C_BOT), "--connect", "{endpoint}"]}  # the token: $OKGIN_TOKEN
    data = {
        "tournament": {"name": name, "games_per_pairing": games, "concurrency": slots, "referees": 1,
                       "stall_timeout": 120, "sandbox": sandbox, "seed": "bench-cluster"},
        "participant": [{"name": "a", **bot}, {"name": "b", **bot}],
    }
    return parse_config(data, config_dir=workdir)


class TimedDaskExecutor(DaskExecutor):
    """The runner's Dask executor, with every game attempt timed on the runner's side and its
    result sized. ``run_tournament --dask`` makes its executor from
    ``competition.cluster.tournament.DaskExecutor``, which :func:`run` replaces with this."""

    async def play_attempt(self, sg: ScheduledGame, attempt: int,
                           forfeit: Forfeit | None = None) -> tuple[GameResult | Outcome, str]:
        t0 = time.time()  # the wall clock: the task stream's start/stop are on it (same host)
        out, where = await super().play_attempt(sg, attempt, forfeit)
        TIMINGS.append((f"okgin-{self.cfg.name}-{sg.key}-a{attempt}-{self.tag}", t0, time.time(),
                        len(pickle.dumps(out, protocol=5)) + len(pickle.dumps(where, protocol=5))))
        return out, where


def run(workdir: Path, setup: str, games: int, slots: int, threads: int, sandbox: bool) -> dict[str, Any]:
    cfg = config(workdir, f"bench-{setup}", games, slots, sandbox)
    db = workdir / f"{setup}.sqlite"
    nworkers = 0 if setup == "local" else int(setup.split("-")[1])
    cluster = None if setup == "local" else Cluster(nworkers, threads)
    stream: list[dict[str, Any]] = []
    try:
        opts = RunOptions(progress=False, database=str(db), output=str(workdir / f"out-{setup}"))
        client = None
        if cluster is not None:
            from distributed import Client

            TIMINGS.clear()
            opts.dask = cluster.address
            # As many games out as worker threads: none waits in a worker's queue, so the
            # submit-to-result time is the compute time plus the Dask path only.
            opts.concurrency = nworkers * threads
            opts.dask_timeout = 60.0
            client = Client(cluster.address, timeout=60, set_as_default=False)
            # The scheduler's task stream, from this client: every task's compute interval.
            client.get_task_stream(start=time.time())  # installs the task-stream plugin before the run
        t0 = time.perf_counter()
        cpu0 = _cpu()
        with open(os.devnull, "w") as devnull, mock.patch.object(cluster_tournament, "DaskExecutor", TimedDaskExecutor):
            old = sys.stdout
            sys.stdout = devnull
            try:
                code = run_tournament(cfg, opts)
            finally:
                sys.stdout = old
        wall = time.perf_counter() - t0
        cpu = _cpu() - cpu0
        if client is not None:
            stream = client.get_task_stream(start=time.time() - wall - 5)
            client.close()
    finally:
        if cluster is not None:
            cluster.close()
    st = ResultsStore.open_existing(db)
    gs = st.games()
    st.close()
    if cluster is not None and gs and not TIMINGS:
        print(f"  {setup}: no game attempt was timed: does run_tournament still make its Dask executor from "
              "competition.cluster.tournament.DaskExecutor?", file=sys.stderr, flush=True)
    row: dict[str, Any] = {"setup": setup, "exit": code, "games": len(gs), "wall_s": round(wall, 2),
                           "games_per_s": round(len(gs) / wall, 3) if wall else 0.0,
                           "abnormal": sum(1 for g in gs if g.termination != "normal"),
                           # the runner's own CPU (this process: store, ratings, Dask client), per game:
                           # what bounds one runner's games/s however many workers it has
                           "runner_cpu_ms_per_game": round(1000 * cpu / len(gs), 1) if gs else None}
    if cluster is not None:
        spans: dict[str, tuple[float, float]] = {}  # key -> (first compute start, last compute stop)
        for t in stream:
            for ss in t.get("startstops", ()):
                if ss.get("action") == "compute":
                    a, b = spans.get(t["key"], (ss["start"], ss["stop"]))
                    spans[t["key"]] = (min(a, ss["start"]), max(b, ss["stop"]))
        # (runner-side seconds, compute seconds, submit -> compute start, compute end -> result, bytes)
        pairs = [(t1 - t0, spans[k][1] - spans[k][0], spans[k][0] - t0, t1 - spans[k][1], n)
                 for k, t0, t1, n in TIMINGS if k in spans]
        if pairs:
            game_s = statistics.median(p[1] for p in pairs)
            over = [max(0.0, p[0] - p[1]) for p in pairs]
            row.update({
                "out_ms_median": round(1000 * statistics.median(p[2] for p in pairs), 2),
                "back_ms_median": round(1000 * statistics.median(p[3] for p in pairs), 2),
                "timed_games": len(pairs),
                "game_ms_median": round(1000 * game_s, 1),
                "overhead_ms_median": round(1000 * statistics.median(over), 2),
                "overhead_ms_mean": round(1000 * statistics.fmean(over), 2),
                "overhead_pct": round(100 * statistics.median(over) / game_s, 2) if game_s else None,
                "bytes_back_median": int(statistics.median(p[4] for p in pairs)),
                "bytes_back_max": max(p[4] for p in pairs),
            })
    return row


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", type=int, default=40, help="games per setup (default 40)")
    p.add_argument("--slots", type=int, default=2, help="games at once in the local setup (default 2)")
    p.add_argument("--threads", type=int, default=1, help="threads per Dask worker process (default 1)")
    p.add_argument("--no-sandbox", action="store_true", help="run the bots unconfined (tournament.sandbox = false)")
    p.add_argument("--setups", default="local,dask-1,dask-2", help="which setups (default local,dask-1,dask-2)")
    args = p.parse_args()
    if not C_BOT.exists():
        print(f"build the C bot first: make -C clients/c ({C_BOT} is missing)")
        return 2
    if not shutil.which("dask"):
        print("the dask command is missing: pip install -e '.[cluster]'")
        return 2
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"cluster bench: C bot vs C bot, {args.games} games per setup, {args.slots} local game slots, "
          f"{args.threads} thread(s) per Dask worker, "
          f"{'bare' if args.no_sandbox else 'sandboxed'}; {os.cpu_count()} cores, load average {load:.1f} at the start")
    rows = []
    with tempfile.TemporaryDirectory(prefix="okgin-bench-cluster-") as tmp:
        for setup in args.setups.split(","):
            r = run(Path(tmp), setup.strip(), args.games, args.slots, args.threads, not args.no_sandbox)
            rows.append(r)
            print(f"  {r['setup']}: {r['games']} games in {r['wall_s']:.1f} s = {r['games_per_s']:.2f} games/s"
                  f" (exit {r['exit']}, abnormal {r['abnormal']})", flush=True)
    head = ["setup", "games/s", "runner CPU ms/game", "game ms (worker)", "overhead ms (median/mean)", "out/back ms",
            "overhead %", "bytes back/game (median/max)"]
    table = [head]
    for r in rows:
        if "overhead_ms_median" in r:
            table.append([r["setup"], f"{r['games_per_s']:.2f}", f"{r['runner_cpu_ms_per_game']:.1f}",
                          f"{r['game_ms_median']:.0f}",
                          f"{r['overhead_ms_median']:.1f} / {r['overhead_ms_mean']:.1f}",
                          f"{r['out_ms_median']:.1f} / {r['back_ms_median']:.1f}", f"{r['overhead_pct']:.2f}",
                          f"{r['bytes_back_median']} / {r['bytes_back_max']}"])
        else:
            table.append([r["setup"], f"{r['games_per_s']:.2f}", f"{r['runner_cpu_ms_per_game']:.1f}", "-", "-", "-", "-", "-"])
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    print()
    for row in table:
        print("  " + "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))))
    worst = max((r.get("overhead_pct") or 0.0 for r in rows), default=0.0)
    print(f"\ntarget: Dask overhead <= 5% of a game's time: {'met' if worst <= 5.0 else 'NOT met'} (worst {worst:.2f}%)")
    print(json.dumps({"bench": "cluster", "games": args.games, "slots": args.slots, "threads": args.threads,
                      "sandbox": not args.no_sandbox,
                      "rows": rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
