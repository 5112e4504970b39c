"""A real Dask cluster on 127.0.0.1 for the cluster tests: the ``dask`` CLI, as an organiser runs it.

``dask_cluster`` (one per test module) starts ``dask scheduler --host 127.0.0.1 --port 0``
and two ``dask worker --host 127.0.0.1 --nworkers 1 --nthreads 1`` processes (each with a
nanny, as ``dask worker`` runs by default, so a worker killed by a test is restarted),
each in its own process group and ``--local-directory``; it waits for them by polling
``Client.scheduler_info`` with a deadline, and at teardown kills each process group it
started by its PID. The second worker offers ``LICENCE=1`` (``--resources``), so that a
participant restricted to it can be seen to play there only.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
from daskkit import DASK, ROOT, START_S, WORKER_RESOURCES, DaskCluster, DaskWorker, cluster_env, kill_group, scheduler_address


@pytest.fixture(scope="module")
def dask_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaskCluster]:
    pytest.importorskip("distributed")
    if DASK is None:
        pytest.skip("the dask command is not installed (pip install 'okgin[cluster]')")
    base = tmp_path_factory.mktemp("dask")
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
        for i, res in enumerate(WORKER_RESOURCES):
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
        cluster.wait_for_workers(len(WORKER_RESOURCES))
        yield cluster
    finally:
        for proc in reversed(started):
            kill_group(proc)
        for f in logs:
            f.close()
