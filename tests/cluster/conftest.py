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

from collections.abc import Iterator

import pytest
from daskkit import DASK, WORKER_RESOURCES, DaskCluster, start_cluster


@pytest.fixture(scope="module")
def dask_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaskCluster]:
    pytest.importorskip("distributed")
    if DASK is None:
        pytest.skip("the dask command is not installed (pip install 'okgin[cluster]')")
    with start_cluster(tmp_path_factory.mktemp("dask"), WORKER_RESOURCES) as cluster:
        yield cluster
