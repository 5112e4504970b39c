"""``okgin match --dask`` (issue 16 part 2): the local run's figures, from a real cluster.

A ``dask scheduler`` and two ``dask worker`` processes on 127.0.0.1, started with the
``dask`` command (``conftest.py``'s ``dask_cluster``). The same match, local and over
Dask, prints the same JSON and the same table, byte for byte, but for what differs by nature between any two runs (the
elapsed time and the route, ``via``); the game summaries and engine records are equal
one by one. A worker killed with SIGKILL mid-match costs only its chunks, which Dask
plays again elsewhere: the figures still equal the local run's. Bad input (no
scheduler there, a bot a worker cannot load) is a sentence and exit status 2.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("distributed")

import daskcli
from bounded import readline
from daskkit import DaskCluster

from clients.match import run_match
from clients.match_dask import DaskLanes, MatchDaskError, check_workers

RUN_S = 300.0


def okgin(*args: str, cwd: Path = daskcli.ROOT, timeout: float = RUN_S) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "okgin", *args], cwd=cwd, env=daskcli.env(), capture_output=True,
                          text=True, timeout=timeout)


def without_time(out: str) -> str:
    """A match's JSON as printed, less ``elapsed_s`` and ``via`` (kept in key order)."""
    data = json.loads(out)
    data.pop("elapsed_s")
    data.pop("via")
    return json.dumps(data, sort_keys=True)


def table_without_time(out: str) -> list[str]:
    """The table as printed, with the two header cells that hold time and route blanked."""
    lines = out.splitlines()
    lines[0] = lines[0].rsplit(" | ", 1)[0]  # "... | seed S | via"
    lines[1] = re.sub(r" in [0-9.]+ s \([0-9]+ hands/s\)", "", lines[1])
    return lines


@pytest.mark.parametrize("bots", [["simple", "random"], ["random", "simple", "simple"]], ids=["oklahoma", "box"])
def test_the_json_and_the_table_are_the_local_runs(dask_cluster: DaskCluster, bots: list[str]) -> None:
    base = ["match", *bots, "--games", "36", "--seed", "dask-eq"]
    address = dask_cluster.address
    local_json, dask_json = okgin(*base, "--json"), okgin(*base, "--json", "--dask", address)
    local_table, dask_table = okgin(*base), okgin(*base, "--dask", address)
    for r in (local_json, dask_json, local_table, dask_table):
        assert r.returncode == 0, r.stderr
    assert json.loads(dask_json.stdout)["via"] == f"dask {address}"
    assert without_time(dask_json.stdout) == without_time(local_json.stdout)
    assert table_without_time(dask_table.stdout) == table_without_time(local_table.stdout)
    assert dask_table.stdout.splitlines()[0].endswith(f"| dask {address}")


def test_every_game_and_record_equals_the_local_one(dask_cluster: DaskCluster) -> None:
    """In-process, through the same lanes the CLI uses: summaries and full records."""
    from distributed import Client

    with Client(dask_cluster.address, timeout=30, set_as_default=False) as client:
        client.wait_for_workers(2, timeout=60)
        check_workers(client, ["simple", "random"])
        lanes = DaskLanes(client, via="dask")
        assert lanes.width == 2
        seen: list[int] = []
        remote = run_match(["simple", "random"], games=40, seed=11, keep_records=True, lanes=lanes,
                           progress=lambda done, total: seen.append(done))
    local = run_match(["simple", "random"], games=40, seed=11, keep_records=True)
    assert [g.key() for g in remote.games] == [g.key() for g in local.games]
    assert [g.record for g in remote.games] == [g.record for g in local.games]
    assert seen == sorted(seen) and seen[-1] == len(local.games) == 40
    assert len(seen) > 1  # several chunks, so both workers had some


def test_an_unreachable_scheduler_is_a_sentence() -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on (bound, never listening)
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        r = okgin("match", "simple", "random", "--games", "2", "--dask", f"tcp://127.0.0.1:{port}", "--dask-timeout", "3")
    assert r.returncode == 2
    assert f"cannot reach the Dask scheduler at tcp://127.0.0.1:{port}" in r.stderr
    assert "Traceback" not in r.stderr


def test_a_bot_a_worker_cannot_load_is_named(dask_cluster: DaskCluster, tmp_path: Path) -> None:
    """The bot file is beside the runner (its cwd) and not beside the workers (theirs)."""
    (tmp_path / "mine.py").write_text("from clients.bots.simple import SimpleBot\n\n\nclass Mine(SimpleBot):\n    pass\n")
    here = okgin("match", "mine.py:Mine", "random", "--games", "2", cwd=tmp_path)
    assert here.returncode == 0, here.stderr
    r = okgin("match", "mine.py:Mine", "random", "--games", "2", "--dask", dask_cluster.address, cwd=tmp_path)
    assert r.returncode == 2
    assert "cannot load bot 'mine.py:Mine'" in r.stderr and "worker tcp://127.0.0.1:" in r.stderr, r.stderr
    from distributed import Client

    with Client(dask_cluster.address, timeout=30, set_as_default=False) as client, pytest.raises(MatchDaskError, match="no-such"):
        check_workers(client, ["no-such-bot"])


def test_a_worker_killed_mid_match_costs_nothing(dask_cluster: DaskCluster) -> None:
    """SIGKILL of one of the two worker processes after the first results: the same figures."""
    base = ["match", "simple", "random", "--games", "160", "--seed", "kill", "--json"]
    local = okgin(*base)
    assert local.returncode == 0, local.stderr
    proc = subprocess.Popen([sys.executable, "-m", "okgin", *base, "--progress", "--dask", dask_cluster.address],
                            cwd=daskcli.ROOT, env=daskcli.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        # progress is "\r20/160 games" (a line of its own in text mode): the first 20
        # results are in, most of the 16 chunks are not.
        first = ""
        while "/160 games" not in first:
            first = readline(proc.stderr, RUN_S, "okgin match --progress")
            assert first, "okgin match ended without progress"
        # The worker process itself (its nanny restarts it: the fixture's cluster stays whole).
        from distributed import Client

        with Client(dask_cluster.address, timeout=30, set_as_default=False) as c:
            pids = c.run(os.getpid)
        os.kill(pids[sorted(pids)[0]], signal.SIGKILL)
        out, err = proc.communicate(timeout=RUN_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
    assert proc.returncode == 0, err
    assert without_time(out) == without_time(local.stdout)
