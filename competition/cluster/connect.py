"""Reaching a Dask cluster: one function, one handle, one error.

Both ``okgin tournament --dask`` and ``okgin match --dask`` need the same thing: a
``distributed.Client`` for an address the organiser typed, or a throw-away
``LocalCluster`` for ``--dask local``. Writing that once here keeps the two commands'
messages alike ("cannot reach the Dask scheduler at X within N s") and keeps every
``import distributed`` inside this package, so ``okgin`` without the ``cluster`` extra
still runs everything else.

Two flavours of the same thing: :func:`open_client` gives a synchronous ``Client``
(``okgin match --dask``, which waits for its chunks from a plain thread), and
:func:`open_async_client` an asynchronous one on the caller's running event loop
(``okgin tournament --dask``: the runner is asyncio, and a synchronous client would cost
two thread hand-offs per game, one on the way out and one on the way back, each waiting
for a time slice on a loaded host).

A ``LocalCluster`` is bound to 127.0.0.1 with no dashboard: ``--dask local`` is for
one machine, and opening a port on every interface (Dask's default) would be a
surprise for a command that never asked for the network.
"""

from __future__ import annotations

import logging
import os
from types import TracebackType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # distributed is an optional extra; imported when a client is opened
    from distributed import Client, LocalCluster
    from distributed.security import Security

LOCAL = "local"
DEFAULT_SCHEME = "tcp://"


class ClusterError(Exception):
    """A cluster that cannot be used as asked: the message says what and where."""


def normalise_address(address: str, security: Security | None = None) -> str:
    """``HOST:PORT`` gets a scheme (``tls://`` when certificates were given, since a
    TLS scheduler refuses ``tcp://``); an address with a scheme is kept as typed."""
    address = address.strip()
    if "://" in address:
        return address
    return ("tls://" if security is not None and getattr(security, "require_encryption", False) else DEFAULT_SCHEME) + address


class _Handle:
    """What both handles hold: a connected ``Client``, the scheduler's address and, for
    ``--dask local``, the ``LocalCluster`` the handle started (and so must close)."""

    def __init__(self, client: Client, address: str, cluster: LocalCluster | None = None) -> None:
        self.client = client
        self.address = address
        self.cluster = cluster
        self._closed = False

    @property
    def is_local(self) -> bool:
        """Whether this handle started its own ``LocalCluster``."""
        return self.cluster is not None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.address!r}{', local' if self.is_local else ''})"


class ClusterHandle(_Handle):
    """A connected synchronous ``Client`` and, for ``--dask local``, the cluster it started.

    ``close`` ends both (the client first, so no task is resubmitted to a cluster that
    is going away); it is idempotent, and the handle is a context manager.
    """

    def close(self) -> None:
        """Close the client, then the local cluster if this handle started one."""
        if self._closed:
            return
        self._closed = True
        try:
            self.client.close(timeout=10)
        except Exception:  # a scheduler already gone: nothing left to close politely
            pass
        if self.cluster is not None:
            try:
                self.cluster.close(timeout=10)
            except Exception:
                pass

    def __enter__(self) -> ClusterHandle:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


def _import_distributed() -> Any:
    try:
        import distributed
    except ModuleNotFoundError as e:
        raise ClusterError("Dask is not installed: pip install 'okgin[cluster]' (dask[distributed])") from e
    return distributed


def _start_local_cluster(distributed: Any, n: int, security: Security | None) -> LocalCluster:
    """The ``--dask local`` cluster: ``n`` single-threaded worker processes on loopback.

    No dashboard; the scheduler's small HTTP server (health, metrics) that Dask starts
    anyway goes to a free loopback port, not 8787 (taken by another cluster?).
    """
    kwargs: dict[str, Any] = {}
    if security is not None:
        kwargs["security"] = security
        if getattr(security, "require_encryption", False):
            kwargs["protocol"] = "tls://"
    try:
        return distributed.LocalCluster(host="127.0.0.1", n_workers=n, processes=True, threads_per_worker=1,
                                        dashboard_address=None, silence_logs=logging.ERROR,
                                        scheduler_kwargs={"dashboard_address": "127.0.0.1:0"}, **kwargs)
    except Exception as e:
        raise ClusterError(f"could not start a local Dask cluster ({n} workers): {e}") from e


def _local_workers(workers: int | None) -> int:
    return workers if workers is not None else max(1, os.cpu_count() or 1)


def _connect_error(where: str, security: Security | None, timeout: float, e: Exception) -> ClusterError:
    """The organiser's error for a scheduler that could not be connected to: unreachable
    (with the timeout), or refused (with a hint when TLS is on one side only)."""
    if isinstance(e, OSError | TimeoutError):
        return ClusterError(f"cannot reach the Dask scheduler at {where} within {timeout:g} s "
                            f"(is `dask scheduler` running there, and is the address right?): {e}")
    hint = ""
    if where.startswith("tls://") and security is None:
        hint = " (a tls:// scheduler needs the cluster's certificates: --dask-tls DIR, made by okgin cluster certs DIR)"
    elif security is not None and not where.startswith("tls://"):
        hint = " (with --dask-tls the scheduler's address is tls://HOST:PORT)"
    return ClusterError(f"cannot connect to the Dask scheduler at {where}: {type(e).__name__}: {e}{hint}")


def _too_few_workers(where: str, have: int, workers: int, timeout: float) -> ClusterError:
    return ClusterError(f"the Dask scheduler at {where} has {have} worker(s); {workers} did not join "
                        f"within {timeout:g} s")


def open_client(address: str, *, security: Security | None = None, timeout: float = 10.0,
                workers: int | None = None) -> ClusterHandle:
    """A handle on the cluster at ``address``, or on a new ``LocalCluster`` for ``"local"``.

    ``workers``: for ``"local"``, how many single-threaded worker processes to start
    (default: one per CPU); for a remote scheduler, wait up to ``timeout`` for at least
    that many workers to join (default: do not wait — a tournament can start with the
    workers that are there, and tasks queue until one arrives).

    Raises :class:`ClusterError` naming the address and the timeout when the scheduler
    cannot be reached, or when fewer than ``workers`` workers joined in time.
    """
    distributed = _import_distributed()
    if address.strip() == LOCAL:
        n = _local_workers(workers)
        cluster = _start_local_cluster(distributed, n, security)
        try:
            client = distributed.Client(cluster, timeout=timeout, security=security, set_as_default=False)
        except Exception as e:
            cluster.close()
            raise ClusterError(f"could not connect to the local Dask cluster at {cluster.scheduler_address}: {e}") from e
        return ClusterHandle(client, cluster.scheduler_address, cluster)

    where = normalise_address(address, security)
    try:
        client = distributed.Client(where, timeout=timeout, security=security, set_as_default=False)
    except Exception as e:  # unreachable, a bad address, a TLS mismatch: the organiser's input
        raise _connect_error(where, security, timeout, e) from e
    handle = ClusterHandle(client, where)
    if workers:
        try:
            client.wait_for_workers(workers, timeout=timeout)
        except Exception as e:
            have = len(client.scheduler_info().get("workers", {}))
            handle.close()
            raise _too_few_workers(where, have, workers, timeout) from e
    return handle


class AsyncClusterHandle(_Handle):
    """An asynchronous ``Client`` on the caller's event loop and, for ``--dask local``,
    the (synchronous) ``LocalCluster`` it started. ``await aclose()`` ends both."""

    async def aclose(self) -> None:
        """Close the client, then the local cluster if this handle started one (in a
        thread: a ``LocalCluster`` runs its own loop and its close blocks)."""
        if self._closed:
            return
        self._closed = True
        import asyncio

        try:
            await asyncio.wait_for(self.client.close(timeout=10), 15)
        except Exception:  # a scheduler already gone: nothing left to close politely
            pass
        if self.cluster is not None:
            try:
                await asyncio.to_thread(self.cluster.close, timeout=10)
            except Exception:
                pass


async def open_async_client(address: str, *, security: Security | None = None, timeout: float = 10.0,
                            workers: int | None = None) -> AsyncClusterHandle:
    """:func:`open_client` with an asynchronous ``Client`` on the running event loop.

    For ``"local"`` the ``LocalCluster`` is started as :func:`open_client` starts it (in a
    thread; it keeps its scheduler on its own loop, off the caller's), and the
    asynchronous client connects to its address. Same errors as :func:`open_client`.
    """
    import asyncio

    distributed = _import_distributed()
    cluster = None
    if address.strip() == LOCAL:
        n = _local_workers(workers)
        cluster = await asyncio.to_thread(_start_local_cluster, distributed, n, security)
        where = str(cluster.scheduler_address)
    else:
        where = normalise_address(address, security)
    try:
        client = await distributed.Client(where, asynchronous=True, timeout=timeout, security=security,
                                          set_as_default=False)
    except Exception as e:
        if cluster is not None:
            await asyncio.to_thread(cluster.close)
            raise ClusterError(f"could not connect to the local Dask cluster at {where}: {e}") from e
        raise _connect_error(where, security, timeout, e) from e
    handle = AsyncClusterHandle(client, where, cluster)
    if workers and cluster is None:
        try:
            await client.wait_for_workers(workers, timeout=timeout)
        except Exception as e:
            try:
                info = await client.scheduler.identity(n_workers=-1)
                have = len(info.get("workers", {}))
            except Exception:
                have = 0
            await handle.aclose()
            raise _too_few_workers(where, have, workers, timeout) from e
    return handle
