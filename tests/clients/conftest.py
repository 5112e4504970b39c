"""Fixtures for the client tests: real referee subprocesses on 127.0.0.1:0.

The clients may not import the referee (the brief's dependency rule), so the tests start
it the way every launcher does: ``python -m okgin referee --bind tcp://127.0.0.1:0``,
reading the endpoint it prints, and stop it by its PID.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from clients.match_referee import RefereeProcess


@pytest.fixture
def start_referee(tmp_path: Path) -> Iterator[Callable[..., RefereeProcess]]:
    started: list[RefereeProcess] = []

    def start(*args: str) -> RefereeProcess:
        d = tmp_path / f"ref{len(started)}"
        d.mkdir()
        r = RefereeProcess(d, args)
        started.append(r)
        return r

    yield start
    for r in started:
        r.stop()


@pytest.fixture
def referee(start_referee: Callable[..., RefereeProcess]) -> RefereeProcess:
    """A referee with the default heartbeats (5 s, 3 beats): a loaded machine never
    makes a silent-but-alive peer look dead."""
    return start_referee()


@pytest.fixture
def fast_referee(start_referee: Callable[..., RefereeProcess]) -> RefereeProcess:
    """A referee with fast heartbeats (150 ms, 3 beats), for the tests of silence: a
    peer is declared gone after 0.45 s. Under heavy load this may also cause spurious
    resumes, which the SDK handles, so tests using it assert at-least, not exactly."""
    return start_referee("--heartbeat-ms", "150", "--liveness", "3")


@pytest.fixture
def spawn_bot() -> Iterator[Callable[..., subprocess.Popen[str]]]:
    """Start ``okgin bot ...`` processes; any still running at the end are stopped by PID."""
    procs: list[subprocess.Popen[str]] = []

    def spawn(*args: str) -> subprocess.Popen[str]:
        p = subprocess.Popen(
            [sys.executable, "-m", "okgin", "bot", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        procs.append(p)
        return p

    yield spawn
    for p in procs:
        if p.poll() is None:
            p.terminate()
            p.wait(10)
        for f in (p.stdout, p.stderr):
            if f is not None:
                f.close()
