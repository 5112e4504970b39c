"""TLS on the Dask links (issue 16 part 3): ``okgin cluster certs`` and ``--dask-tls``.

A real ``dask scheduler`` and ``dask worker`` on 127.0.0.1, started with the
certificates ``okgin cluster certs`` wrote; a match over them gives the local run's
figures, and a client that has no certificate, or one the cluster's CA did not sign, is
refused with a sentence (exit status 2), never served.
"""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("distributed")
pytest.importorskip("cryptography")

from bounded import readline

from referee.cluster.certs import dask_cli_args, load_security

ROOT = Path(__file__).resolve().parents[2]
START_S = 90.0  # a bound for a loaded machine, never asserted on
RUN_S = 240.0


def _env() -> dict[str, str]:
    # The workers import okgin and clients from this checkout, installed or not.
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


def _okgin(*args: str, timeout: float = RUN_S) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "okgin", *args], cwd=ROOT, env=_env(), capture_output=True, text=True,
                          timeout=timeout)


def _wait_line(proc: subprocess.Popen[str], pattern: str, what: str) -> re.Match[str]:
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


def _drain(proc: subprocess.Popen[str]) -> None:
    """Read the rest of ``proc``'s log in a daemon thread (it ends at the pipe's end), so
    a chatty process never blocks on a full pipe nor fails writing to a closed one."""
    stream = proc.stderr
    assert stream is not None
    threading.Thread(target=lambda: [None for _ in stream], daemon=True, name="dask-log-drain").start()


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(30)


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("certs") / "cluster"
    out = _okgin("cluster", "certs", str(d), timeout=60)
    assert out.returncode == 0, out.stderr
    return d


@pytest.fixture(scope="module")
def tls_cluster(certs: Path) -> Iterator[str]:
    """A TLS scheduler and one TLS worker on 127.0.0.1; yields the scheduler's address."""
    procs: list[subprocess.Popen[str]] = []
    try:
        sched = subprocess.Popen(
            ["dask", "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--protocol", "tls",
             *dask_cli_args(certs, "scheduler")], cwd=ROOT, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            text=True)
        procs.append(sched)
        address = _wait_line(sched, r"Scheduler at:\s+(tls://127\.0\.0\.1:\d+)", "dask scheduler").group(1)
        worker = subprocess.Popen(
            ["dask", "worker", address, "--host", "127.0.0.1", "--nthreads", "1", "--no-dashboard",
             *dask_cli_args(certs, "worker")], cwd=ROOT, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            text=True)
        procs.append(worker)
        _wait_line(worker, r"Registered to:", "dask worker")
        for p in procs:
            _drain(p)
        yield address
    finally:
        for p in reversed(procs):
            _stop(p)


def _figures(out: str) -> dict[str, object]:
    """A match's JSON without what differs by nature between runs: time and route."""
    data = json.loads(out)
    data.pop("elapsed_s")
    data.pop("via")
    return data


def test_certs_are_written_with_private_keys_closed(certs: Path) -> None:
    names = sorted(p.name for p in certs.iterdir())
    assert names == sorted(["ca.pem", "ca-key.pem", "scheduler.pem", "scheduler-key.pem", "worker.pem", "worker-key.pem",
                            "client.pem", "client-key.pem"])
    for key in certs.glob("*-key.pem"):
        assert stat.S_IMODE(key.stat().st_mode) == 0o600, key
    again = _okgin("cluster", "certs", str(certs), timeout=60)
    assert again.returncode == 2 and "exists" in again.stderr and "--force" in again.stderr
    sec = load_security(certs)
    assert sec.require_encryption and sec.tls_client_cert == str(certs / "client.pem")


def test_load_security_names_what_is_missing(tmp_path: Path) -> None:
    from referee.cluster.certs import CertsError

    with pytest.raises(CertsError, match="no such directory"):
        load_security(tmp_path / "nope")
    (tmp_path / "ca.pem").write_text("x")
    with pytest.raises(CertsError, match=r"client\.pem, client-key\.pem"):
        load_security(tmp_path)


def test_a_match_over_tls_gives_the_local_figures(tls_cluster: str, certs: Path) -> None:
    args = ["match", "simple", "random", "--games", "24", "--seed", "tls", "--json"]
    local = _okgin(*args)
    remote = _okgin(*args, "--dask", tls_cluster, "--dask-tls", str(certs))
    assert local.returncode == 0, local.stderr
    assert remote.returncode == 0, remote.stderr
    assert json.loads(remote.stdout)["via"] == f"dask {tls_cluster}"
    assert json.dumps(_figures(remote.stdout), sort_keys=True) == json.dumps(_figures(local.stdout), sort_keys=True)


def test_a_client_without_the_clusters_certificate_is_refused(tls_cluster: str, tmp_path: Path) -> None:
    base = ["match", "simple", "random", "--games", "2", "--dask-timeout", "5"]
    # No certificates at all: refused before any byte is sent in clear.
    bare = _okgin(*base, "--dask", tls_cluster)
    assert bare.returncode == 2 and "--dask-tls" in bare.stderr, bare.stderr
    # Plain TCP to the TLS port: the scheduler never completes a handshake with it.
    plain = _okgin(*base, "--dask", tls_cluster.replace("tls://", "tcp://"))
    assert plain.returncode == 2 and "cannot" in plain.stderr, plain.stderr
    # A well-formed set from another CA: the scheduler's mutual TLS rejects it.
    other = tmp_path / "other"
    assert _okgin("cluster", "certs", str(other), timeout=60).returncode == 0
    foreign = _okgin(*base, "--dask", tls_cluster, "--dask-tls", str(other))
    assert foreign.returncode == 2 and "cannot" in foreign.stderr, foreign.stderr
    assert '"games"' not in foreign.stdout
