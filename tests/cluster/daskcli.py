"""``dask scheduler`` / ``dask worker`` processes for the match, TLS and docs tests.

Started with the real ``dask`` command on 127.0.0.1 (``--host 127.0.0.1``, port 0, no
dashboard), as docs/cluster.md tells an organiser to; stopped by PID. Readiness is the
line each prints when it is up (read with a bound), never a sleep. Workers run
``--no-nanny`` so that the PID a test kills is the process that runs the tasks (with a
nanny, kill -9 of the worker would be undone by a restart).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
from collections.abc import Sequence
from pathlib import Path

from bounded import readline

ROOT = Path(__file__).resolve().parents[2]
START_S = 90.0  # a bound for a loaded machine, never asserted on


def env() -> dict[str, str]:
    """This checkout first on the path: workers import okgin and clients from it."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


def wait_line(proc: subprocess.Popen[str], pattern: str, what: str) -> re.Match[str]:
    """The first line of ``proc``'s standard error matching ``pattern`` (dask logs there)."""
    assert proc.stderr is not None
    seen = []
    while True:
        line = readline(proc.stderr, START_S, what)
        if not line:
            raise AssertionError(f"{what} exited before {pattern!r}:\n" + "".join(seen[-30:]))
        seen.append(line)
        m = re.search(pattern, line)
        if m:
            return m


def drain(proc: subprocess.Popen[str]) -> None:
    """Read the rest of ``proc``'s log in a daemon thread (it ends at the pipe's end), so
    a chatty process never blocks on a full pipe nor fails writing to a closed one."""
    stream = proc.stderr
    assert stream is not None
    threading.Thread(target=lambda: [None for _ in stream], daemon=True, name="dask-log-drain").start()


def stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(30)


def scheduler(extra: Sequence[str] = (), scheme: str = "tcp") -> tuple[subprocess.Popen[str], str]:
    """A scheduler on 127.0.0.1 and its address."""
    proc = subprocess.Popen(["dask", "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--protocol", scheme,
                             *extra], cwd=ROOT, env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        address = wait_line(proc, rf"Scheduler at:\s+({scheme}://127\.0\.0\.1:\d+)", "dask scheduler").group(1)
    except BaseException:
        stop(proc)
        raise
    drain(proc)
    return proc, address


def worker(address: str, extra: Sequence[str] = (), cwd: Path = ROOT, name: str | None = None) -> subprocess.Popen[str]:
    """One single-threaded worker process of the scheduler at ``address``, registered."""
    cmd = ["dask", "worker", address, "--host", "127.0.0.1", "--nthreads", "1", "--no-nanny", "--no-dashboard", *extra]
    if name:
        cmd += ["--name", name]
    proc = subprocess.Popen(cmd, cwd=cwd, env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        wait_line(proc, r"Registered to:", "dask worker")
    except BaseException:
        stop(proc)
        raise
    drain(proc)
    return proc
