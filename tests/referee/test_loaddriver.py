"""bench/loaddriver, the compiled client side of bench/referee.py's figure (d), against a
real referee on loopback TCP.

The driver's figures are only trustworthy if it really plays: every mode must get
through hands and games (hello accepted, named tables joined and filled, every prompt
answered with a legal action, rematches accepted) and end with a well-formed JSON line.
Its error paths (bad arguments, a referee ``error``) must end the run with a non-zero
status and a sentence on stderr, since the bench reports whatever the driver prints.
Correctness only: nothing here asserts on how fast anything was.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from refharness import Client, RefereeThread

ROOT = Path(__file__).resolve().parents[2]
DRIVER_DIR = ROOT / "bench" / "loaddriver"
KEYS = {"decisions", "decisions_per_s", "hands_per_s", "games", "p50_ms", "p99_ms", "mean_us", "median_us",
        "driver_cpu_s"}
pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def driver() -> Path:
    """Build the driver as bench/referee.py does; skip only when the toolchain is absent."""
    missing = [tool for tool in ("make", "cc", "pkg-config") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} missing: cannot build bench/loaddriver")
    if subprocess.run(["pkg-config", "--exists", "libzmq", "msgpack"]).returncode != 0:
        pytest.skip("pkg-config finds no libzmq or msgpack (apt: libzmq3-dev libmsgpack-dev): cannot build bench/loaddriver")
    proc = subprocess.run(["make", "-C", str(DRIVER_DIR), "-s"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"bench/loaddriver does not build:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    return DRIVER_DIR / "build" / "loaddriver"


def run(driver: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(driver), *args], capture_output=True, text=True, timeout=120)


def check_output(proc: subprocess.CompletedProcess[str], seconds: float) -> dict[str, Any]:
    """Exit 0, "ready" then "measuring" on stderr (bench/referee.py reads the referee's CPU
    on the latter), exactly one JSON line on stdout carrying drive()'s keys."""
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines() == ["loaddriver: ready", "loaddriver: measuring"], proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 1, proc.stdout
    out: dict[str, Any] = json.loads(lines[0])
    assert KEYS <= out.keys()
    assert isinstance(out["decisions"], int) and isinstance(out["games"], int)
    assert out["decisions_per_s"] == pytest.approx(out["decisions"] / seconds, abs=1e-3)
    assert out["driver_cpu_s"] >= 0
    if out["decisions"]:
        assert 0 < out["p50_ms"] <= out["p99_ms"]  # a sorted list's order, not a timing target
        assert out["median_us"] > 0 and out["mean_us"] > 0
    return out


def table_games(referee: RefereeThread) -> dict[str, int]:
    """Games started per table b{i}, read on the referee's own loop."""
    return referee.call(lambda: {name: t.game_no for name, t in referee.ref.tables.items() if name.startswith("b")})


@pytest.mark.parametrize("mode", ["events", "lean", "batched"])
def test_each_mode_plays_hands_and_games(driver: Path, referee: RefereeThread, mode: str) -> None:
    out = check_output(run(driver, "--endpoint", referee.endpoint, "--tables", "5", "--seconds", "2",
                           "--warmup", "0.3", "--mode", mode), 2.0)
    assert out["decisions"] > 0
    assert out["hands_per_s"] > 0
    assert out["mode"] == mode and out["tables"] == 5
    games = table_games(referee)
    assert sorted(games) == [f"b{i}" for i in range(5)]  # named tables b0..b4, each joined by both clients
    assert all(g >= 1 for g in games.values())  # every table filled and started
    assert sum(games.values()) >= out["games"]  # each game_end counted by the driver was a referee game


def test_paced_mode_answers_after_its_think_time(driver: Path, referee: RefereeThread) -> None:
    out = check_output(run(driver, "--endpoint", referee.endpoint, "--tables", "3", "--seconds", "1.5",
                           "--warmup", "0.2", "--think-ms", "5"), 1.5)
    assert out["decisions"] > 0
    assert out["think_ms"] == 5


def test_referee_error_ends_the_run(driver: Path, referee: RefereeThread,
                                   make_client: Callable[..., Client]) -> None:
    """b0 is already full when the driver joins it: the referee's table_full error is the
    driver's failure, never a silently smaller load."""
    for i in range(2):
        c = make_client(referee.endpoint)
        c.hello(f"squatter-{i}")
        c.request({"type": "join", "id": c.next_id(), "table": "b0"}, "seated")
    proc = run(driver, "--endpoint", referee.endpoint, "--tables", "2", "--seconds", "1")
    assert proc.returncode == 1
    assert "table_full" in proc.stderr
    assert proc.stdout == ""


@pytest.mark.parametrize("args, says", [
    (["--endpoint", "tcp://10.0.0.1:7117"], "loopback endpoints only"),
    (["--endpoint", "tcp://127.0.0.1:7117", "--mode", "loud"], "--mode must be"),
    (["--endpoint", "tcp://127.0.0.1:7117", "--tables", "0"], "--tables must be"),
    (["--endpoint", "tcp://127.0.0.1:7117", "--seconds", "soon"], "--seconds must be"),
    (["--tables", "5"], "usage"),
])
def test_bad_arguments_are_refused(driver: Path, args: list[str], says: str) -> None:
    proc = run(driver, *args)
    assert proc.returncode == 2
    assert says in proc.stderr
    assert proc.stdout == ""
