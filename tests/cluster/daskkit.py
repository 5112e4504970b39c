"""Helpers of the cluster tests: the Dask processes, their environment, and TOML configs.

The fixture itself is in ``conftest.py``; this module is imported by it and by the tests
(``tests/cluster`` is on ``sys.path``, it has no package), so both share one definition.

Everything the workers import comes from this checkout (``PYTHONPATH``), installed or not.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
START_S = 120.0  # bounds for a loaded machine, never asserted on
POLL_S = 0.05
WORKER_RESOURCES = ("", "LICENCE=1")  # worker 0 offers nothing, worker 1 a licence
# The `dask` command of this interpreter (beside it when installed there), else the PATH's.
DASK = str(Path(sys.executable).with_name("dask")) if Path(sys.executable).with_name("dask").exists() else shutil.which("dask")


def cluster_env(**extra: str) -> dict[str, str]:
    """The environment of the dask processes and of a runner started as a subprocess."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, **extra}


@dataclass
class DaskWorker:
    proc: subprocess.Popen[bytes]
    directory: Path  # its --local-directory: the worker's files (and the okgin referee's journals) are below
    resources: str


@dataclass
class DaskCluster:
    address: str
    scheduler: subprocess.Popen[bytes]
    workers: list[DaskWorker] = field(default_factory=list)

    def info(self, timeout: float = 30.0) -> dict[str, Any]:
        """The scheduler's view of its workers: address -> {pid, local_directory, resources...}."""
        from distributed import Client

        with Client(self.address, timeout=timeout, set_as_default=False) as c:
            return dict(c.scheduler_info(n_workers=-1)["workers"])

    def wait_for_workers(self, n: int = 2, timeout: float = START_S) -> dict[str, Any]:
        """Poll until ``n`` workers are registered (after a start, or a nanny's restart)."""
        from distributed import Client

        deadline = time.monotonic() + timeout
        with Client(self.address, timeout=timeout, set_as_default=False) as c:
            while True:
                workers = dict(c.scheduler_info(n_workers=-1)["workers"])
                if len(workers) >= n:
                    return workers
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{len(workers)} of {n} Dask workers registered at {self.address} "
                                       f"within {timeout:g} s")
                time.sleep(POLL_S)

    def worker_of(self, path: Path, timeout: float = 30.0) -> tuple[str, int] | None:
        """(address, process id) of the worker whose local directory holds ``path``."""
        from distributed import Client

        with Client(self.address, timeout=timeout, set_as_default=False) as c:
            for addr, w in c.scheduler_info(n_workers=-1)["workers"].items():
                local = Path(str(w.get("local_directory") or ""))
                if local.parts and path.is_relative_to(local):
                    return addr, int(c.run(os.getpid, workers=[addr])[addr])
        return None


def scheduler_address(log: Path, proc: subprocess.Popen[bytes], timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        m = re.search(r"Scheduler at:\s+(tcp://127\.0\.0\.1:\d+)", log.read_text(errors="replace"))
        if m:
            return m.group(1)
        if proc.poll() is not None:
            raise RuntimeError(f"dask scheduler exited with {proc.returncode}: {log.read_text(errors='replace')[-2000:]}")
        time.sleep(POLL_S)
    raise TimeoutError(f"dask scheduler printed no address within {timeout:g} s: {log.read_text(errors='replace')[-2000:]}")


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the process group this fixture started (the nanny, its worker, their
    referee), by the leader's PID; then reap the leader."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(30)


def toml_value(v: Any) -> str:
    """TOML for the values the configs here use (with inline tables: env, resources)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, str | Path):
        return json.dumps(str(v))
    if isinstance(v, list | tuple):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k} = {toml_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(v)


def write_config(path: Path, participants: list[dict[str, Any]], **sections: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    for name, table in sections.items():
        lines += [f"[{name}]", *(f"{k} = {toml_value(v)}" for k, v in table.items()), ""]
    for part in participants:
        lines += ["[[participant]]", *(f"{k} = {toml_value(v)}" for k, v in part.items()), ""]
    path.write_text("\n".join(lines))
    return path


def python_shim(directory: Path, force: bool = False) -> Path | None:
    """A directory that makes this checkout's ``okgin`` and ``clients`` importable inside
    the sandbox, or None when the installation already does (the usual case).

    An editable install made from another tree (this one copied or moved, or another
    checkout installed since) finds the packages only from this tree's root, which the
    sandbox does not show (only the package directories), or finds the other tree's:
    ``python -m okgin bot`` then fails there with "No module named okgin", or runs other
    code. Symbolic links to this tree's packages in a directory of their own, given to the
    built-in bots as ``PYTHONPATH`` and ``dir``, mend that without showing more.
    ``force``: make it even then (a test that must not depend on how the sandbox finds
    the source tree of an editable install).
    """
    probe = subprocess.run([sys.executable, "-c", "import okgin, clients; print(okgin.__file__); print(clients.__file__)"],
                           cwd="/", capture_output=True, text=True, timeout=60,
                           env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    found = [Path(line).resolve().parent for line in probe.stdout.split()] if probe.returncode == 0 else []
    if found == [ROOT / "okgin", ROOT / "clients"] and not force:
        return None  # installed from this very tree
    directory.mkdir(parents=True, exist_ok=True)
    directory.chmod(0o755)  # a bot runs as another uid when the runner is root (.sandbox): it must list this
    for pkg in ("okgin", "clients"):
        link = directory / pkg
        if not link.exists():
            link.symlink_to(ROOT / pkg)
    return directory


def unfinished_journals(root: Path, name: str, seen: set[Path]) -> list[Path]:
    """Journals below ``root`` of tournament ``name``'s games (tables NAME-INDEX-ATTEMPT,
    not its preflight tables) with no end line yet, a game in progress, except ``seen``."""
    from competition.tournament.records import journal_outcome

    table = re.compile(rf"{re.escape(name)}-\d+-\d+")
    out = []
    for path in root.rglob(f"{name}-*-g1-*.jsonl"):
        if path not in seen and table.fullmatch(path.name.split("-g1-")[0]) and journal_outcome(path)[0] is None:
            out.append(path)
    return out


@contextlib.contextmanager
def start_cluster(base: Path, worker_resources: Sequence[str] = ("",)) -> Iterator[DaskCluster]:
    """``dask scheduler`` and one ``dask worker`` per entry of ``worker_resources`` (its
    ``--resources``, "" for none) on 127.0.0.1, each in its own process group, logging
    to files in ``base``; every group is killed by its leader's PID on the way out."""
    started: list[subprocess.Popen[bytes]] = []
    logs: list[Any] = []
    try:
        slog = base / "scheduler.log"
        logs.append(slog.open("wb"))
        sched = subprocess.Popen([str(DASK), "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard"],
                                 cwd=ROOT, env=cluster_env(), stdin=subprocess.DEVNULL, stdout=logs[-1],
                                 stderr=subprocess.STDOUT, start_new_session=True)
        started.append(sched)
        cluster = DaskCluster(scheduler_address(slog, sched, START_S), sched)
        for i, res in enumerate(worker_resources):
            d = base / f"w{i}"
            d.mkdir()
            logs.append((base / f"worker{i}.log").open("wb"))
            argv = [str(DASK), "worker", cluster.address, "--host", "127.0.0.1",
                    "--nworkers", "1", "--nthreads", "1", "--no-dashboard", "--local-directory", str(d)]
            if res:
                argv += ["--resources", res]
            proc = subprocess.Popen(argv, cwd=ROOT, env=cluster_env(), stdin=subprocess.DEVNULL, stdout=logs[-1],
                                    stderr=subprocess.STDOUT, start_new_session=True)
            started.append(proc)
            cluster.workers.append(DaskWorker(proc, d, res))
        cluster.wait_for_workers(len(worker_resources))
        yield cluster
    finally:
        for proc in reversed(started):
            kill_group(proc)
        for f in logs:
            f.close()
