"""The blocking client: the asyncio client, driven synchronously.

Not a second implementation of the protocol. A :class:`Client` owns an
:class:`~clients.sdk.aio.AsyncClient` and a private event loop on a thread of its own,
and each of its methods runs the coroutine of the same name there and waits for the
result (as python-chess's ``SimpleEngine`` wraps its asyncio engine, or jupyter_client
generates its blocking client). So the two clients send the same bytes, keep the same
deadlines, resume the same way and raise the same errors, by construction: see
:mod:`clients.sdk.aio` for what a client does (hello and token, heartbeats, resume
after silence or ``hello_first``, stop on ``session_taken``).

What the loop thread gives a blocking program: heartbeats and the liveness watch run
whatever the caller does, so a bot that thinks for a long time is never taken for dead
and nobody has to "pump" the socket; and one client may be called from several threads
(the calls are serialized on its loop). The thread and its loop start at
:meth:`Client.connect` and end at :meth:`Client.close`.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import threading
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, ParamSpec, TypeVar

from .aio import BYE_LINGER_MS, DEFAULT_ENDPOINT, DEFAULT_NAME, AsyncClient

__all__ = ["BYE_LINGER_MS", "DEFAULT_ENDPOINT", "DEFAULT_NAME", "Client"]

P = ParamSpec("P")
T = TypeVar("T")

# What a program may set on a client between calls (read: everything AsyncClient has).
_WRITABLE = frozenset({"token", "auto_reconnect", "reconnect_timeout", "reply_timeout", "curve", "endpoint"})


def _blocking(fn: Callable[Concatenate[AsyncClient, P], Coroutine[Any, Any, T]]) -> Callable[Concatenate[Client, P], T]:
    """The blocking form of one of AsyncClient's coroutine methods (same name, same
    arguments, same docstring): run it on the client's loop and wait for its result."""

    @functools.wraps(fn)
    def call(self: Client, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return self._run(fn(self._aio, *args, **kwargs))

    return call


class Client:
    """A blocking protocol client; takes the same arguments as :class:`AsyncClient`
    (``context`` may be a plain ``zmq.Context``). See the module docstring.

    >>> c = Client("tcp://127.0.0.1:7117", name="me")   # nothing is sent until connect()
    >>> c.token is None, c.name
    (True, 'me')
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        object.__setattr__(self, "_aio", AsyncClient(*args, **kwargs))
        object.__setattr__(self, "_loop", None)
        object.__setattr__(self, "_thread", None)
        object.__setattr__(self, "_lock", threading.Lock())

    _aio: AsyncClient
    _loop: asyncio.AbstractEventLoop | None
    _thread: threading.Thread | None
    _lock: threading.Lock

    # ------------------------------------------------------------------ the loop
    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        fut = asyncio.run_coroutine_threadsafe(coro, self._start())
        try:
            return fut.result()
        except BaseException:
            fut.cancel()  # an interrupted caller (Ctrl-C) leaves nothing running behind it
            raise

    def _start(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            loop = self._loop
            if loop is None or self._thread is None or not self._thread.is_alive():
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="okgin-sdk-loop", daemon=True)
                thread.start()
                object.__setattr__(self, "_loop", loop)
                object.__setattr__(self, "_thread", thread)
            return loop

    def _stop(self) -> None:
        with self._lock:
            loop, thread = self._loop, self._thread
            object.__setattr__(self, "_loop", None)
            object.__setattr__(self, "_thread", None)
        if loop is None or thread is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10.0)
        if not thread.is_alive():
            loop.close()

    # ------------------------------------------------------------ the async client's
    def __getattr__(self, name: str) -> Any:
        """The asyncio client's state (``token``, ``welcome``, ``reconnects``,
        ``heartbeat_s``, ``connected``, ``endpoint``...), read through."""
        if name.startswith("_"):
            raise AttributeError(name)
        value = getattr(self._aio, name)
        if inspect.iscoroutinefunction(value):
            raise AttributeError(f"Client has no blocking {name!r}")
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in _WRITABLE:
            raise AttributeError(f"Client.{name} cannot be set")
        setattr(self._aio, name, value)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self, bye: bool = True) -> None:
        """Say ``bye`` (seats are then held for their grace period), close the socket and
        end the client's loop thread (a later :meth:`connect` starts them again)."""
        if self._loop is not None:
            try:
                self._run(self._aio.close(bye))
            finally:
                self._stop()

    def pump(self, timeout: float = 0.0) -> None:
        """Nothing to do: the housekeeping runs on the client's own thread. Kept for
        programs written for a client that had to be pumped; raises
        :class:`~clients.sdk.errors.SessionTaken` once another connection took the
        session, as every other call does."""
        if self._aio.taken is not None:
            raise self._aio.taken

    # ------------------------------------------------------------ the same methods
    connect = _blocking(AsyncClient.connect)
    reconnect = _blocking(AsyncClient.reconnect)
    drop_connection = _blocking(AsyncClient.drop_connection)
    send = _blocking(AsyncClient.send)
    recv = _blocking(AsyncClient.next)  # the blocking name: the next message, or None after timeout
    request = _blocking(AsyncClient.request)
    join = _blocking(AsyncClient.join)
    queue = _blocking(AsyncClient.queue)
    act = _blocking(AsyncClient.act)
    answer = _blocking(AsyncClient.answer)
    advise = _blocking(AsyncClient.advise)
    leave = _blocking(AsyncClient.leave)
    resign = _blocking(AsyncClient.resign)
    rematch = _blocking(AsyncClient.rematch)
    watch = _blocking(AsyncClient.watch)
    unwatch = _blocking(AsyncClient.unwatch)
    sync = _blocking(AsyncClient.sync)
    list_tables = _blocking(AsyncClient.list_tables)
    ping = _blocking(AsyncClient.ping)
    create_table = _blocking(AsyncClient.create_table)
    close_table = _blocking(AsyncClient.close_table)
