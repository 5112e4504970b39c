"""A TCP proxy between the bot under test and the referee that sees every message.

The bot is given the proxy's endpoint; each connection it opens is relayed to the
referee, and every message frame both ways goes through the :class:`FrameHandler`,
which records it and may replace it (the kit's illegal-move probe), drop it, or hold it
for a while (the opponents connect through the proxy too, so that a captain's move can
wait for the advice of a sitter under test). A
connection can also be *silenced*: from then on nothing is relayed either way and the
bytes are thrown away, which to both ends looks exactly like a network that died without
closing the socket — the case protocol.md §10 asks clients to detect with heartbeats and
repair by reconnecting with their token.

Bytes that are not ZMTP are relayed unchanged (and reported), so a broken client fails
on the protocol's terms, not the proxy's.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Protocol

from . import zmtp

C2R = "bot->referee"
R2C = "referee->bot"


@dataclass(eq=False)
class Connection:
    """One TCP connection from the bot, relayed to the referee."""

    id: int
    opened: float
    silenced: bool = False
    closed: bool = False
    not_zmtp: str | None = None
    _writers: list[asyncio.StreamWriter] = field(default_factory=list)

    def close(self) -> None:
        """Close both sides (the bot then sees its TCP connection reset)."""
        self.closed = True
        for w in self._writers:
            with contextlib.suppress(Exception):
                w.close()


class FrameHandler(Protocol):
    def on_open(self, conn: Connection) -> None: ...

    def on_frame(self, conn: Connection, direction: str, body: bytes, more: bool) -> list[bytes] | Awaitable[list[bytes]]:
        """Record one frame; return the frame bodies to relay instead ([] drops it), or
        an awaitable of them to hold this direction of the connection until it is done."""
        ...

    def on_close(self, conn: Connection) -> None: ...


class Proxy:
    """Listens on 127.0.0.1 (port chosen by the system) and relays to ``upstream``."""

    def __init__(self, upstream_host: str, upstream_port: int, handler: FrameHandler) -> None:
        self.upstream = (upstream_host, upstream_port)
        self.handler = handler
        self._ids = itertools.count(1)
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.connections: list[Connection] = []

    async def start(self) -> str:
        """Bind, then return the real endpoint (``tcp://127.0.0.1:PORT``)."""
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        return f"tcp://127.0.0.1:{port}"

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for conn in self.connections:
            conn.close()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        conn = Connection(next(self._ids), time.monotonic())
        self.connections.append(conn)
        try:
            try:
                up_reader, up_writer = await asyncio.open_connection(*self.upstream)
            except OSError:
                writer.close()
                return
            conn._writers = [writer, up_writer]
            self.handler.on_open(conn)
            c2r, r2c = zmtp.pair(C2R, R2C)
            pumps = [
                asyncio.create_task(self._pump(conn, reader, up_writer, c2r)),
                asyncio.create_task(self._pump(conn, up_reader, writer, r2c)),
            ]
            # When either side ends, the whole connection ends (as TCP would for the bot).
            _, pending = await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
            conn.close()
            for p in pending:
                p.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await p
        finally:
            conn.close()
            self.handler.on_close(conn)
            self._tasks.discard(task)

    async def _pump(
        self, conn: Connection, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, parser: zmtp.Direction
    ) -> None:
        with contextlib.suppress(ConnectionError, OSError):
            while data := await reader.read(65536):
                if conn.not_zmtp is not None:
                    items: list[bytes | zmtp.Frame] = [data]
                else:
                    try:
                        items = parser.feed(data)
                    except zmtp.ZmtpError as e:
                        conn.not_zmtp = str(e)
                        items = [bytes(parser.buf)]
                        parser.buf.clear()
                for item in items:
                    if isinstance(item, zmtp.Frame):
                        bodies = self.handler.on_frame(conn, parser.name, item.body, item.more)
                        if not isinstance(bodies, list):
                            await writer.drain()
                            bodies = await bodies
                        out = [zmtp.encode_frame(b, item.more) for b in bodies]
                    else:
                        out = [item]
                    if not conn.silenced:
                        for chunk in out:
                            writer.write(chunk)
                if not conn.silenced:
                    await writer.drain()
