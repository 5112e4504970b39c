"""Hosted bots' games per hour (issue 27 item 4): locally, and with two Dask workers.

    python bench/arena_hosted.py [--games 12] [--no-dask] [--hands 3]

Three measurements in one run, each of ``--games`` sandboxed games of the same two bots
(``tests/tournament/protobot.py``, self-contained: its directory carries the engine), on
the same rules and clock:

1. **anchor**: the tournament's own executor (``LocalExecutor``, 2 games at once) plays the
   games directly: no arena, the floor of what a sandboxed game costs on this machine now;
2. **local**: ``okgin arena`` with both bots submitted and validated, its hosted league
   playing rated duplicate deals (``hosted_concurrency = 2``), budget out of the way;
3. **dask**: the same arena with ``--dask`` on a scheduler and two one-thread workers on
   127.0.0.1 (``hosted_concurrency = 2``).

Each prints games per hour and its ratio to the anchor: the anchor moves with the load of a
shared machine, the ratio much less. The clock starts when both bots are active (their
validation games are not counted) and stops when the last game is recorded in the store.
Figures only; the last line is JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from arena.store import Store, state_db_url  # noqa: E402
from competition.tournament.config import parse_config  # noqa: E402
from competition.tournament.executor import RunOptions  # noqa: E402
from competition.tournament.local import LocalExecutor  # noqa: E402
from competition.tournament.schedule import ScheduledGame  # noqa: E402
from okgin.launch import ARENA_PREFIX, endpoint_from_line, okgin_argv  # noqa: E402
from okgin.rng import new_seed  # noqa: E402

PROTOBOT = ROOT / "tests" / "tournament" / "protobot.py"
PY = os.path.realpath(sys.executable)  # the base interpreter: what Dask workers run too
WAIT_S = 1800.0


def bot_dir(base: Path, name: str) -> Path:
    d = base / name
    d.mkdir(parents=True)
    shutil.copy(PROTOBOT, d / "protobot.py")
    shutil.copytree(ROOT / "okgin", d / "okgin", ignore=shutil.ignore_patterns("__pycache__"))
    return d


class Log:
    def __init__(self, path: Path) -> None:
        self.path = path

    def log_event(self, kind: str, detail: str, game: int | None = None) -> None:
        pass


async def anchor(base: Path, games: int, hands: int) -> float:
    """Games per hour of the tournament's executor alone (2 at once)."""
    dirs = [bot_dir(base, n) for n in ("a", "b")]
    parts = [{"name": n, "command": [PY, "protobot.py", "{endpoint}", *extra], "cwd": str(d), "dir": str(d)}
             for n, d, extra in (("a", dirs[0], []), ("b", dirs[1], ["--random", "3"]))]
    cfg = parse_config({"tournament": {"name": "anchor", "concurrency": 2}, "participant": parts,
                        "rules": {"target_score": 100, "max_hands": hands}, "clock": {"move_ms": 5000}}, base)
    run = base / "run"
    run.mkdir(mode=0o700)
    ex = LocalExecutor(cfg, RunOptions(referees=1, progress=False), Log(run / "x"), run)
    await ex.start()
    sem = asyncio.Semaphore(2)

    async def one(i: int) -> None:
        seats = ("a", "b") if i % 2 == 0 else ("b", "a")
        sg = ScheduledGame(i, ("a", "b"), i // 2, i % 2, seats, new_seed())
        async with sem:
            out, _ = await ex.play_attempt(sg, 1)
            assert type(out).__name__ == "GameResult", out

    t0 = time.monotonic()
    try:
        await asyncio.gather(*(one(i) for i in range(games)))
    finally:
        await ex.close()
    return games * 3600 / (time.monotonic() - t0)


@contextlib.contextmanager
def dask_cluster(base: Path) -> Iterator[str]:
    dask = shutil.which("dask") or str(Path(sys.executable).with_name("dask"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    procs: list[subprocess.Popen[bytes]] = []
    slog = base / "scheduler.log"
    try:
        with slog.open("wb") as f:
            procs.append(subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard"],
                                          env=env, stdout=f, stderr=subprocess.STDOUT, start_new_session=True))
        deadline = time.monotonic() + 120
        while not (m := re.search(r"Scheduler at:\s+(tcp://127\.0\.0\.1:\d+)", slog.read_text(errors="replace"))):
            if time.monotonic() > deadline:
                raise RuntimeError("the Dask scheduler did not start")
            time.sleep(0.1)
        address = m.group(1)
        for i in range(2):
            d = base / f"w{i}"
            d.mkdir()
            with (base / f"worker{i}.log").open("wb") as f:
                procs.append(subprocess.Popen([dask, "worker", address, "--host", "127.0.0.1", "--nworkers", "1",
                                               "--nthreads", "1", "--no-dashboard", "--local-directory", str(d)],
                                              env=env, stdout=f, stderr=subprocess.STDOUT, start_new_session=True))
        yield address
    finally:
        for p in reversed(procs):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(30)


def arena_rate(base: Path, games: int, hands: int, dask: str | None) -> float:
    """Games per hour of an arena's hosted league (from both bots active to ``games`` recorded)."""
    state = base / "arena"
    state.mkdir(mode=0o700, parents=True)
    with Store.open(state_db_url(state)) as store:
        for n in ("alpha", "beta"):
            store.add_account(n, "bot")
    for n, extra in (("alpha", ""), ("beta", " --random 3")):
        rc = subprocess.run(okgin_argv("arena", "submit", n, str(bot_dir(base, n)), "--command",
                                       f"{PY} protobot.py {{endpoint}}{extra}", "--state", str(state)),
                            capture_output=True, text=True, timeout=120)
        assert rc.returncode == 0, rc.stderr
    toml = base / "arena.toml"
    toml.write_text(f'hosted_clock = "bench"\nhosted_concurrency = 2\nmatch_every_ms = 100\n'
                    f'[clocks.standard]\nmove_ms = 60000\n[clocks.bench]\nmove_ms = 5000\n'
                    f'[rules]\ntarget_score = 100\nmax_hands = {hands}\n')
    argv = okgin_argv("arena", "--state", str(state), "--shards", "1", "--bind", "tcp://127.0.0.1:0", "--config", str(toml),
                      "--hosted-games-per-hour", "100000", *(["--dask", dask] if dask else []))
    with (base / "arena.stderr").open("w") as err:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, text=True)
    try:
        assert proc.stdout is not None
        if endpoint_from_line(proc.stdout.readline(), ARENA_PREFIX) is None:
            raise RuntimeError((base / "arena.stderr").read_text())
        deadline = time.monotonic() + WAIT_S
        with Store.open(state_db_url(state)) as store:
            while any(s.status != "active" for s in store.submissions()):
                if any(s.status == "failed" for s in store.submissions()) or time.monotonic() > deadline:
                    raise RuntimeError(f"validation: {store.submissions()}\n{(base / 'arena.stderr').read_text()[-2000:]}")
                time.sleep(0.05)
            t0 = time.monotonic()
            before = store.count_hosted_games(0)

            def finished() -> int:
                return sum(1 for h in store.hosted_games() if (g := store.game(h.game_id)) and g.status == "finished")

            while finished() - before < games:
                if time.monotonic() > deadline:
                    raise RuntimeError((base / "arena.stderr").read_text()[-2000:])
                time.sleep(0.05)
            return games * 3600 / (time.monotonic() - t0)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=12, help="games per measurement (even: deals are pairs)")
    ap.add_argument("--hands", type=int, default=3, help="hands per game (max_hands)")
    ap.add_argument("--no-dask", action="store_true")
    args = ap.parse_args()
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="okgin-bench-hosted-") as tmp:
        base = Path(tmp)
        out["anchor"] = asyncio.run(anchor(base / "anchor", args.games, args.hands))
        out["local"] = arena_rate(base / "local", args.games, args.hands, None)
        if not args.no_dask:
            procs = base / "dask-procs"  # the scheduler's and workers' logs and local directories
            procs.mkdir()
            with dask_cluster(procs) as address:
                out["dask"] = arena_rate(base / "dask", args.games, args.hands, address)
    load = os.getloadavg()[0]
    print(f"{args.games} sandboxed games each, {args.hands} hands a game, {os.cpu_count()} cores, load {load:.1f}")
    for k, v in out.items():
        print(f"  {k:<7} {v:8.0f} games/hour   x{v / out['anchor']:.2f} of the anchor")
    print(json.dumps({"games": args.games, "hands": args.hands, "load": round(load, 1),
                      **{k: round(v) for k, v in out.items()}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
