"""The asyncio client, for programs that live on an event loop (the Textual TUI).

The same protocol work as the blocking :class:`~clients.sdk.client.Client` (hello and
token, heartbeats, resume after silence, typed messages, errors as
:class:`~clients.sdk.errors.RefereeError`), shaped for a user interface:

- everything the referee says that is not the reply to an awaited request arrives as a
  typed message from ``await client.next()`` or ``async for msg in client``: prompts,
  moves, hand and game ends, advice, snapshots, errors for fire-and-forget requests, and
  the SDK's own :class:`~clients.sdk.messages.Disconnected` /
  :class:`~clients.sdk.messages.Reconnected` so the screen can say "reconnecting...";
- requests are coroutines that return the typed reply or raise ``RefereeError``;
- ``act`` does not wait (success shows as the next ``MoveEvent``; a refusal arrives as
  an ``ErrorMessage`` and then a re-prompt), ``advise`` waits for its ``ok``.

A human player's loop, in short::

    client = AsyncClient("tcp://127.0.0.1:7117", name="ann")
    await client.connect()                 # inside the app's worker: the socket is made here
    await client.join("friday")            # or: await client.queue("oklahoma")
    async for msg in client:
        match msg:
            case Prompt():        show(msg.view, msg.legal); later: await client.act(msg.table, msg.seq, action)
            case AdvisePrompt():  later: await client.advise(msg.table, msg.seq, action, "take it")
            case AdviceReceived() | MoveEvent() | HandEnd() | GameEnd() | Snapshot(): update(msg)
            case Disconnected() | Reconnected(): show_connection(msg)

The socket is created in :meth:`connect`, on the running loop (Textual's guide: create
it inside the worker that uses it), and two small tasks on the same loop read it and
keep the heartbeats.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import AsyncIterator
from typing import Any

import zmq
import zmq.asyncio

from okgin import Action
from okgin.endpoint import is_ipv6
from okgin.protocol import decode, encode

from . import requests as rq
from .client import DEFAULT_ENDPOINT
from .curve import CurveKeys
from .errors import ConnectionLost, RefereeError, SDKError, SessionTaken, Timeout
from .messages import (
    Disconnected,
    ErrorMessage,
    Heartbeat,
    Message,
    Prompt,
    Queued,
    Reconnected,
    Seated,
    Snapshot,
    TableCreated,
    Tables,
    Welcome,
    parse_message,
)


class AsyncClient:
    """An asyncio protocol client. See the module docstring."""

    def __init__(
        self,
        endpoint: str = DEFAULT_ENDPOINT,
        name: str = "python",
        role: str = "player",
        *,
        token: str | None = None,
        admin_key: str | None = None,
        context: zmq.asyncio.Context | None = None,
        reconnect: bool = True,
        reconnect_timeout: float = 60.0,
        reply_timeout: float = 30.0,
        events: bool = True,
        curve: CurveKeys | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.events = events
        # CURVE mode (protocol.md §13): given, or from OKGIN_CURVE_SERVER_KEY/_CLIENT_KEY
        self.curve = curve if curve is not None else CurveKeys.from_env()
        self.name = name
        self.role = role
        self.token = token
        self.admin_key = admin_key
        self.auto_reconnect = reconnect
        self.reconnect_timeout = reconnect_timeout
        self.reply_timeout = reply_timeout
        self.welcome: Welcome | None = None
        self.heartbeat_s = 5.0
        self.liveness = 3
        self.reconnects = 0
        self._ctx = context
        self._sock: zmq.asyncio.Socket | None = None
        self._ids = itertools.count(1)
        self._waiters: dict[Any, asyncio.Future[Message]] = {}
        self._queue: asyncio.Queue[Message | _Fatal] | None = None
        self._reader: asyncio.Task[None] | None = None
        self._keeper: asyncio.Task[None] | None = None
        self._fatal: BaseException | None = None
        self._reconnecting = False
        self._restarted = False  # hello_first after welcome: the referee restarted (1.2)
        self._closed = False
        self._last_sent = 0.0
        self._last_recv = 0.0

    # ------------------------------------------------------------------ session
    async def connect(self, timeout: float = 10.0) -> Welcome:
        """Open the socket on the running loop, say ``hello``, start the housekeeping."""
        if self._ctx is None:
            self._ctx = zmq.asyncio.Context.instance()
        self._queue = asyncio.Queue()
        self._closed = False
        self._open()
        w = await self._hello(timeout)
        self._keeper = asyncio.create_task(self._keep(), name="okgin-sdk-heartbeat")
        return w

    async def reconnect(self, timeout: float | None = None) -> Welcome:
        """Resume the session with its token on a new socket, waiting up to ``timeout``
        (one hello, kept queued by ZeroMQ until the referee is reachable: see
        :meth:`clients.sdk.client.Client.reconnect`)."""
        if isinstance(self._fatal, SessionTaken):
            raise self._fatal  # final: another connection has the session (see Client.reconnect)
        if self.token is None:
            raise SDKError("cannot resume: no session token yet (connect first)")
        self._reconnecting = True
        try:
            await self._close_socket()
            self._open()
            try:
                w = await self._hello(self.reconnect_timeout if timeout is None else timeout)
            except Timeout:
                raise ConnectionLost(f"the referee at {self.endpoint} did not answer a resume in time") from None
            except RefereeError as e:
                if e.name == "bad_token":
                    raise ConnectionLost(f"the referee no longer holds this session: {e.message}") from None
                raise
            self.reconnects += 1
            return w
        finally:
            self._reconnecting = False

    async def close(self, bye: bool = True) -> None:
        """Say ``bye`` (seats are held for their grace period), stop the tasks, close."""
        self._closed = True
        if self._keeper is not None:
            self._keeper.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._keeper
            self._keeper = None
        if bye and self._sock is not None and self.welcome is not None:
            with contextlib.suppress(zmq.ZMQError):
                await self._sock.send(encode({"type": "bye"}), zmq.NOBLOCK)
        await self._close_socket()

    async def drop_connection(self) -> None:
        """Close the socket without a word (a simulated crash, for tests)."""
        await self._close_socket()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def connected(self) -> bool:
        return self._sock is not None and not self._reconnecting

    # --------------------------------------------------------------------- I/O
    async def send(self, msg: dict[str, Any]) -> None:
        if isinstance(self._fatal, SessionTaken):
            raise self._fatal
        if self._sock is None:
            raise SDKError("not connected")
        await self._sock.send(encode(msg))
        self._last_sent = time.monotonic()

    async def next(self, timeout: float | None = None) -> Message | None:
        """The next unclaimed message, or None after ``timeout`` seconds.

        Raises :class:`ConnectionLost` once the session cannot be resumed.
        """
        if self._queue is None:
            raise SDKError("not connected")
        if self._fatal is not None and self._queue.empty():
            raise self._fatal
        try:
            if timeout is None:
                msg = await self._queue.get()
            else:
                msg = await asyncio.wait_for(self._queue.get(), timeout)
        except TimeoutError:
            return None
        if isinstance(msg, _Fatal):
            raise msg.error
        return msg

    def __aiter__(self) -> AsyncIterator[Message]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Message]:
        while not self._closed:
            msg = await self.next()
            if msg is not None:
                yield msg

    async def request(self, msg: dict[str, Any], timeout: float | None = None) -> Message:
        """Send with a fresh ``id``; return the reply or raise :class:`RefereeError`."""
        rid = next(self._ids)
        fut: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        self._waiters[rid] = fut
        try:
            await self.send({**msg, "id": rid})
            try:
                reply = await asyncio.wait_for(fut, self.reply_timeout if timeout is None else timeout)
            except TimeoutError:
                raise Timeout(f"no reply to {msg.get('type')!r} (id {rid})") from None
        finally:
            self._waiters.pop(rid, None)
        if isinstance(reply, ErrorMessage):
            raise reply.exception()
        return reply

    # ------------------------------------------------------------ requests
    async def join(self, table: str, seat: int | None = None, variant: str | None = None, rules: rq.Rules = None,
                   any_rules: bool = False) -> Seated:
        """See :func:`clients.sdk.requests.join` (``any_rules``: sit whatever the table's rules)."""
        return _typed(await self.request(rq.join(table, seat, variant, rules, any_rules)), Seated)

    async def queue(self, variant: str = "oklahoma", rules: rq.Rules = None) -> Queued:
        return _typed(await self.request(rq.queue(variant, rules)), Queued)

    async def act(self, table: str, seq: int, action: Action | dict[str, Any]) -> None:
        """Answer a prompt; the result comes as a ``MoveEvent`` or an ``ErrorMessage``."""
        await self.send({**rq.act(table, seq, action), "id": next(self._ids)})

    async def answer(self, prompt: Prompt, action: Action) -> None:
        await self.act(prompt.table, prompt.seq, action)

    async def advise(self, table: str, seq: int, action: Action | None = None, text: str | None = None) -> None:
        """Sitter: advise the captain; raises ``RefereeError`` (e.g. ``stale_seq``) if refused."""
        await self.request(rq.advise(table, seq, action, text))

    async def leave(self, table: str | None = None) -> None:
        await self.request(rq.simple("leave", table=table))

    async def resign(self, table: str) -> None:
        await self.request(rq.simple("resign", table=table))

    async def rematch(self, table: str) -> None:
        await self.request(rq.simple("rematch", table=table))

    async def watch(self, table: str, full: bool = False, broadcast_token: str | None = None) -> Snapshot:
        """``full``: the table's full feed (1.4: with its ``broadcast_token``, or as admin)."""
        return _typed(await self.request(rq.simple("watch", table=table, full=full or None, broadcast_token=broadcast_token)), Snapshot)

    async def unwatch(self, table: str) -> None:
        await self.request(rq.simple("unwatch", table=table))

    async def sync(self, table: str) -> Snapshot:
        return _typed(await self.request(rq.simple("sync", table=table)), Snapshot)

    async def list_tables(self, max_pages: int = 50, **filters: Any) -> list[dict[str, Any]]:
        """Every table (``filters``: variant, status, open), page by page (see Client.list_tables)."""
        out: list[dict[str, Any]] = []
        cursor = None
        for _ in range(max_pages):
            page = _typed(await self.request(rq.simple("list_tables", cursor=cursor, **filters)), Tables)
            out.extend(page.tables)
            cursor = page.next
            if cursor is None:
                break
        return out

    async def ping(self) -> float:
        t = time.perf_counter()
        await self.request(rq.simple("ping"))
        return time.perf_counter() - t

    async def create_table(self, **kw: Any) -> TableCreated:
        return _typed(await self.request(rq.create_table(**kw)), TableCreated)

    async def close_table(self, table: str) -> None:
        await self.request(rq.simple("close_table", table=table))

    # ------------------------------------------------------------ internals
    def _open(self) -> None:
        assert self._ctx is not None
        sock = self._ctx.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        if is_ipv6(self.endpoint):
            sock.setsockopt(zmq.IPV6, 1)  # ZeroMQ refuses a [v6] address without it
        if self.curve is not None:
            self.curve.apply(sock)
        sock.connect(self.endpoint)
        self._sock = sock
        self._last_recv = self._last_sent = time.monotonic()
        self._reader = asyncio.create_task(self._read(sock), name="okgin-sdk-reader")

    async def _close_socket(self) -> None:
        reader, self._reader = self._reader, None
        if reader is not None and reader is not asyncio.current_task():
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await reader
        if self._sock is not None:
            self._sock.close(linger=0)
            self._sock = None

    async def _hello(self, timeout: float) -> Welcome:
        reply = await self.request(rq.hello(self.name, self.role, self.token, self.admin_key, self.events), timeout)
        w = _typed(reply, Welcome)
        self.welcome = w
        self.token = w.token
        self.heartbeat_s = max(0.01, w.heartbeat_ms / 1000)
        self.liveness = max(1, w.liveness)
        return w

    async def _read(self, sock: zmq.asyncio.Socket) -> None:
        assert self._queue is not None
        while True:
            try:
                frame = await sock.recv()
            except (asyncio.CancelledError, zmq.ZMQError):
                return
            self._last_recv = time.monotonic()
            try:
                m = parse_message(decode(frame, max_bytes=1 << 24, strict=False))
            except Exception as e:  # a malformed frame is reported, never fatal to the reader
                self._queue.put_nowait(ErrorMessage("error", code=0, name="malformed_message", message=str(e), request=None, table=None))
                continue
            if isinstance(m, Heartbeat):
                continue
            if isinstance(m, ErrorMessage) and m.name == "session_taken":
                # Another connection resumed the session (protocol 1.4): never resume
                # (the newer one would resume back, for ever). Fail every waiting
                # request, end next(), stop the heartbeats; this reader stops too.
                self._fatal = err = SessionTaken(m.message)
                for fut in self._waiters.values():
                    if not fut.done():
                        fut.set_exception(err)
                self._queue.put_nowait(_Fatal(err))
                return
            if isinstance(m, ErrorMessage) and m.name == "hello_first" and self.welcome is not None and not self._reconnecting:
                # Protocol 1.2 §10.1: the referee no longer knows this connection (it
                # restarted, or the network dropped and ZeroMQ reconnected underneath);
                # its answers are traffic, so silence would never be noticed: resume
                # with the token at once.
                self._restarted = True
                if m.id is None or m.id not in self._waiters:
                    continue
            if isinstance(m, Welcome) and m.resumed:
                # Queued before the snapshots and re-sent prompts that follow it.
                self._queue.put_nowait(Reconnected("reconnected", welcome=m))
            fut = self._waiters.get(m.id) if m.id is not None else None
            if fut is not None and not fut.done():
                fut.set_result(m)
            else:
                self._queue.put_nowait(m)

    async def _keep(self) -> None:
        """Heartbeats out; after ``liveness`` beats of silence, resume with the token."""
        assert self._queue is not None
        while not self._closed:
            await asyncio.sleep(max(0.005, min(0.25, self.heartbeat_s / 4)))
            now = time.monotonic()
            if self._fatal is not None:
                return  # session_taken: no heartbeats, no resume
            if self._sock is None or self._reconnecting:
                continue
            silent = now - self._last_recv > self.heartbeat_s * self.liveness
            if silent or self._restarted:
                why = "the referee no longer knows this connection (hello_first): it restarted, or the network dropped" if self._restarted else f"no message from the referee for {now - self._last_recv:.1f} s"
                self._restarted = False
                if not self.auto_reconnect:
                    self._queue.put_nowait(_Fatal(ConnectionLost(f"the referee at {self.endpoint}: {why}")))
                    return
                self._queue.put_nowait(Disconnected("disconnected", reason=why))
                try:
                    await self.reconnect()  # the reader queues Reconnected at the welcome
                except (ConnectionLost, RefereeError) as e:
                    self._fatal = e if isinstance(e, ConnectionLost) else ConnectionLost(str(e))
                    self._queue.put_nowait(_Fatal(self._fatal))
                    return
            elif now - self._last_sent >= self.heartbeat_s:
                with contextlib.suppress(zmq.ZMQError, SDKError):
                    await self.send({"type": "heartbeat"})


class _Fatal:
    """Internal: carries a fatal connection error through the queue to ``next()``."""

    def __init__(self, error: BaseException) -> None:
        self.error = error


def _typed(m: Message, cls: type) -> Any:
    if not isinstance(m, cls):
        raise SDKError(f"expected {cls.__name__}, the referee answered {m.type!r}")
    return m
