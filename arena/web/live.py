"""Live updates for the web's leaderboards and live-games list: server-sent events, bounded.

One poller per web face reads :meth:`arena.store.Store.change_mark` (three indexed reads)
every ``poll_ms``, while at least one page listens; when the mark moves, every listening
page gets one ``change`` event and fetches its own page again (the script swaps the parts
marked ``data-live``), so the server renders every row one way and the stream carries no
data of its own. Why poll rather than have the arena call in: the web reads the database
the arena writes, in or out of the arena's process, and a game finished by another front
(PostgreSQL) moves the same mark.

Bounded: at most ``max_clients`` streams at once (more get 503 with ``Retry-After``); a
comment line every ``heartbeat_ms`` so that proxies and the browser keep the stream and
a dead client is noticed at the next write; :meth:`LiveHub.close` ends every stream (the
arena's shutdown), so uvicorn never waits on one.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

__all__ = ["HEARTBEAT_MS", "MAX_CLIENTS", "POLL_MS", "Full", "LiveHub"]

log = logging.getLogger("arena.web")

MAX_CLIENTS = 100
HEARTBEAT_MS = 15_000
POLL_MS = 1000


class Full(Exception):
    """Every stream is taken: the caller answers 503."""


class LiveHub:
    """The change mark, who listens, and the poller (see the module docstring)."""

    def __init__(self, read_mark: Callable[[], Awaitable[Any]], poll_ms: int = POLL_MS, heartbeat_ms: int = HEARTBEAT_MS,
                 max_clients: int = MAX_CLIENTS) -> None:
        self.read_mark = read_mark
        self.poll_ms = poll_ms
        self.heartbeat_ms = heartbeat_ms
        self.max_clients = max_clients
        self.clients = 0
        self.version = 0
        self.mark: Any = None
        self.changed = asyncio.Condition()
        self.listening = asyncio.Event()
        self.closed = False
        self.task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.task = asyncio.get_running_loop().create_task(self.poll())

    async def close(self) -> None:
        """End every stream and the poller (idempotent)."""
        self.closed = True
        async with self.changed:
            self.changed.notify_all()
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task
            self.task = None

    async def poll(self) -> None:
        while not self.closed:
            await self.listening.wait()
            try:
                mark = await self.read_mark()
            except Exception:  # the database is busy or gone for a moment: try again next time
                log.warning("arena web: the live poller could not read the store", exc_info=True)
                mark = self.mark
            if mark != self.mark:
                first = self.mark is None
                self.mark = mark
                if not first:
                    self.version += 1
                    async with self.changed:
                        self.changed.notify_all()
            await asyncio.sleep(self.poll_ms / 1000)

    def join(self) -> None:
        """A stream starts; :class:`Full` when ``max_clients`` are open."""
        if self.closed or self.clients >= self.max_clients:
            raise Full()
        self.clients += 1
        self.listening.set()

    def leave(self) -> None:
        self.clients -= 1
        if self.clients <= 0:
            self.clients = 0
            self.listening.clear()

    async def wait_past(self, seen: int) -> None:
        """Until the version moves past ``seen``, the hub closes, or a heartbeat is due."""
        async with self.changed:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait_for(lambda: self.closed or self.version != seen),
                                       self.heartbeat_ms / 1000)

    async def stream(self) -> AsyncIterator[bytes]:
        """One client's events, after :meth:`join`: ``retry``, then a ``change`` per move of the
        mark and a comment per heartbeat, until the hub closes or the client goes."""
        try:
            yield b"retry: 5000\n: okgin arena live\n\n"
            seen = self.version
            while not self.closed:
                await self.wait_past(seen)
                if self.closed:
                    break
                if self.version != seen:
                    seen = self.version
                    yield f"event: change\ndata: {json.dumps({'version': seen})}\n\n".encode()
                else:
                    yield b": heartbeat\n\n"
        finally:
            self.leave()
