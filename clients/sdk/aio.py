"""The asyncio client: the SDK's one implementation of a protocol connection.

The session rules (hello and token, request ids, heartbeat and liveness deadlines, which
errors mean "resume" and which mean "stop") are the sans-IO core's,
:class:`okgin.protocol.session.Session`; this module gives them a ZeroMQ socket on an
event loop and the SDK's typed messages. The blocking :class:`~clients.sdk.client.Client`
is this same client run on a private event loop thread, not a second copy.

- everything the referee says that is not the reply to an awaited request arrives as a
  typed message from ``await client.next()`` or ``async for msg in client``: prompts,
  moves, hand and game ends, advice, snapshots, errors for fire-and-forget requests, and
  the SDK's own :class:`~clients.sdk.messages.Disconnected` /
  :class:`~clients.sdk.messages.Reconnected` so the screen can say "reconnecting...";
- requests are coroutines that return the typed reply or raise ``RefereeError``;
- ``act`` does not wait: its success is the ``MoveEvent`` that follows, a refusal arrives
  as an ``ErrorMessage`` and then a re-prompt. Every other request waits for its reply,
  ``advise`` included: its ``ok`` is all the sitter will hear, and a refusal
  (``stale_seq`` after the captain moved) is raised where the advice was given;
- after ``liveness × heartbeat_ms`` of silence, or at once on ``hello_first`` (the
  referee forgot this connection), it resumes with the token on a new socket; on
  ``session_taken`` (another connection resumed the session) it stops for good and every
  call raises :class:`~clients.sdk.errors.SessionTaken`.

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
keep the deadlines.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

import zmq
import zmq.asyncio

from okgin import Action
from okgin.endpoint import is_ipv6
from okgin.protocol import decode, encode
from okgin.protocol.session import Due, Incoming, Kind, RequestId, Session

from . import requests as rq
from .curve import CurveKeys
from .errors import ConnectionLost, RefereeError, SDKError, SessionTaken, Timeout
from .messages import (
    Disconnected,
    ErrorMessage,
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

__all__ = ["BYE_LINGER_MS", "DEFAULT_ENDPOINT", "DEFAULT_NAME", "HWM", "MAX_FRAME", "AsyncClient"]

DEFAULT_ENDPOINT = "tcp://127.0.0.1:7117"
DEFAULT_NAME = "python-sdk"  # what the referee shows for a client that gives no name
BYE_LINGER_MS = 200  # how long a closed socket may still try to deliver its bye
# Queue depth both ways: a full-feed spectator or a burst of events must not hit
# ZeroMQ's default of 1000, past which the referee's ROUTER drops messages.
HWM = 10000
MAX_FRAME = 1 << 24


class _FromSession:
    """A client attribute that is its session core's field of the same name."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.field = name

    def __get__(self, obj: AsyncClient | None, owner: type | None = None) -> Any:
        return self if obj is None else getattr(obj.session, self.field)

    def __set__(self, obj: AsyncClient, value: Any) -> None:
        setattr(obj.session, self.field, value)


class AsyncClient:
    """An asyncio protocol client. See the module docstring.

    >>> c = AsyncClient("tcp://127.0.0.1:7117", name="me")   # nothing is sent until connect()
    >>> c.token is None, c.name
    (True, 'me')
    """

    def __init__(
        self,
        endpoint: str = DEFAULT_ENDPOINT,
        name: str = DEFAULT_NAME,
        role: str = "player",
        *,
        token: str | None = None,
        admin_key: str | None = None,
        context: zmq.asyncio.Context | zmq.Context | None = None,
        reconnect: bool = True,
        reconnect_timeout: float = 60.0,
        reply_timeout: float = 30.0,
        events: bool = True,
        curve: CurveKeys | None = None,
        account: str | None = None,
        key: str | None = None,
    ) -> None:
        self.endpoint = endpoint
        # CURVE mode (protocol.md §13): given, or from OKGIN_CURVE_SERVER_KEY/_CLIENT_KEY
        self.curve = curve if curve is not None else CurveKeys.from_env()
        # account/key (1.6): an arena's account and API key (clients.sdk.arena.ArenaClient)
        self.session = Session(name, role, token=token, admin_key=admin_key, events=events, account=account, key=key)
        self.auto_reconnect = reconnect
        self.reconnect_timeout = reconnect_timeout
        self.reply_timeout = reply_timeout
        self.welcome: Welcome | None = None
        if isinstance(context, zmq.Context) and not isinstance(context, zmq.asyncio.Context):
            context = zmq.asyncio.Context(context)  # a shadow: same sockets' home, asyncio API
        self._ctx: zmq.asyncio.Context | None = context
        self._sock: zmq.asyncio.Socket | None = None
        self._waiters: dict[RequestId, asyncio.Future[Message]] = {}
        self._queue: asyncio.Queue[Message | _Fatal] | None = None
        self._reader: asyncio.Task[None] | None = None
        self._keeper: asyncio.Task[None] | None = None
        self._poke: asyncio.Event | None = None  # wakes the keeper: a resume is due now
        self._fatal: ConnectionLost | None = None
        self._reconnecting = False
        self._closed = False

    # ------------------------------------------------------------ session state
    # The session's own fields, read (and set) through: one place holds them, the core.
    name = _FromSession()
    role = _FromSession()
    token = _FromSession()  # set it to resume another process's session (or a reserved seat)
    admin_key = _FromSession()
    account = _FromSession()  # 1.6: the arena account this session authenticates as
    events = _FromSession()
    heartbeat_s = _FromSession()  # the welcome's heartbeat_ms, in seconds
    liveness = _FromSession()

    @property
    def reconnects(self) -> int:
        """Sessions resumed by this client (on demand or after silence or hello_first)."""
        return self.session.resumes

    @property
    def taken(self) -> SessionTaken | None:
        """Set once the referee said ``session_taken``: this client is done."""
        return self._fatal if isinstance(self._fatal, SessionTaken) else None

    @property
    def connected(self) -> bool:
        return self._sock is not None and not self._reconnecting

    def forget_session(self) -> None:
        """Drop the token and welcome (not the socket): the next :meth:`connect` starts a
        new session. For a session the referee no longer holds (``bad_token``)."""
        self.session.restart()
        self.welcome = None

    # ------------------------------------------------------------------ session
    async def connect(self, timeout: float = 10.0) -> Welcome:
        """Open the socket on the running loop, say ``hello``, start the housekeeping."""
        if self._ctx is None:
            self._ctx = zmq.asyncio.Context.instance()
        if self._queue is None or self._fatal is not None:
            self._queue = asyncio.Queue()  # what an ended session left unread is stale
        self._poke = asyncio.Event()
        self._closed = False
        self._fatal = None
        await self._close_socket()
        self._open()
        w = await self._hello(timeout)
        if self._keeper is None or self._keeper.done():
            self._keeper = asyncio.create_task(self._keep(), name="okgin-sdk-keeper")
        return w

    async def reconnect(self, timeout: float | None = None) -> Welcome:
        """Resume the session with its token on a new socket, waiting up to ``timeout``
        (default ``reconnect_timeout``).

        One new DEALER (a new routing id, protocol.md §10) and one ``hello``: ZeroMQ
        keeps it queued and delivers it as soon as the referee is reachable again.
        (Retrying with fresh sockets would leave answers to the abandoned hellos, and the
        prompts re-sent after them, travelling to sockets nobody reads.) ``bad_token`` —
        the referee no longer holds the session — is final, and so is ``session_taken``
        (raised again here: make a new client with the token to take the session back
        knowingly)."""
        if self._fatal is not None:
            raise self._fatal
        if self.token is None:
            raise SDKError("cannot resume: no session token yet (connect first)")
        self._reconnecting = True
        try:
            await self._close_socket()
            self._open()
            try:
                return await self._hello(self.reconnect_timeout if timeout is None else timeout)
            except Timeout:
                raise ConnectionLost(f"the referee at {self.endpoint} did not answer a resume within the time allowed") from None
            except RefereeError as e:
                if e.name == "bad_token":
                    raise ConnectionLost(f"the referee no longer holds this session: {e.message}") from None
                raise
        finally:
            self._reconnecting = False

    async def close(self, bye: bool = True) -> None:
        """Say ``bye`` (seats are then held for their grace period), stop the tasks, close.

        The ``bye`` gets a short linger: closed with LINGER=0 it would often be dropped
        unsent, and a tournament gateway waits for it after its ``shutdown``."""
        self._closed = True
        keeper, self._keeper = self._keeper, None
        if keeper is not None and keeper is not asyncio.current_task():
            keeper.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await keeper
        linger = 0
        if bye and self._sock is not None and self.welcome is not None and self._fatal is None:
            with contextlib.suppress(zmq.ZMQError):
                await self._sock.send(encode({"type": "bye"}), zmq.NOBLOCK)
                linger = BYE_LINGER_MS
        await self._close_socket(linger)

    async def drop_connection(self) -> None:
        """Close the socket without a word, as a crash or a network cut would (for tests
        and for programs that want to move to another connection)."""
        await self._close_socket()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # --------------------------------------------------------------------- I/O
    async def send(self, msg: dict[str, Any]) -> None:
        """Send one message as it is (no reply awaited)."""
        if self._fatal is not None and isinstance(self._fatal, SessionTaken):
            raise self._fatal
        if self._sock is None:
            raise SDKError("not connected")
        await self._sock.send(encode(msg))
        self.session.sent(time.monotonic())

    async def next(self, timeout: float | None = None) -> Message | None:
        """The next unclaimed message (heartbeats swallowed), or None after ``timeout``
        seconds. Messages that came before the session ended are delivered first; then
        :class:`ConnectionLost` (or :class:`SessionTaken`) is raised."""
        if self._queue is None:
            raise SDKError("not connected")
        if self._fatal is not None and self._queue.empty():
            raise self._fatal
        try:
            if timeout is None:
                msg = await self._queue.get()
            else:
                msg = await asyncio.wait_for(self._queue.get(), max(0.0, timeout))
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
        """Send ``msg`` with a fresh ``id`` and return the reply carrying that id.

        Raises :class:`RefereeError` if the reply is an ``error``, :class:`Timeout` if
        none comes in ``timeout`` seconds (default ``reply_timeout``)."""
        if self._fatal is not None and isinstance(self._fatal, SessionTaken):
            raise self._fatal
        return await self._ask(self.session.request(msg, time.monotonic()), self.reply_timeout if timeout is None else timeout)

    # ------------------------------------------------------------ requests
    async def join(self, table: str, seat: int | None = None, variant: str | None = None, rules: rq.Rules = None,
                   any_rules: bool = False, clock: dict[str, Any] | None = None,
                   policies: dict[str, Any] | None = None) -> Seated:
        """See :func:`clients.sdk.requests.join` (``any_rules``: sit whatever the table's
        rules; ``clock``, ``policies``: a table this join creates, protocol 1.6)."""
        return _typed(await self.request(rq.join(table, seat, variant, rules, any_rules, clock, policies)), Seated)

    async def queue(self, variant: str = "oklahoma", rules: rq.Rules = None) -> Queued:
        """The quick-match queue of ``variant`` (``seated`` and ``game_start`` follow)."""
        return _typed(await self.request(rq.queue(variant, rules)), Queued)

    async def act(self, table: str, seq: int, action: Action | dict[str, Any]) -> None:
        """Answer a prompt. Success shows as the ``event`` that follows; a refusal comes
        back later as an :class:`ErrorMessage` (then a re-prompt)."""
        await self.send(self.session.tag(rq.act(table, seq, action), time.monotonic()))

    async def answer(self, prompt: Prompt, action: Action) -> None:
        await self.act(prompt.table, prompt.seq, action)

    async def advise(
        self, table: str, seq: int, action: Action | None = None, text: str | None = None, wait: bool = True
    ) -> None:
        """Advise the captain (sitter only); waits for the ``ok`` and raises
        ``RefereeError`` (e.g. ``stale_seq``: the captain already moved) if refused.
        ``wait=False`` sends it without waiting: the ``ok``/``error`` then arrive as
        messages (what a bot runner does: it never blocks on advice)."""
        msg = rq.advise(table, seq, action, text)
        if wait:
            await self.request(msg)
        else:
            await self.send(self.session.tag(msg, time.monotonic()))

    async def leave(self, table: str | None = None) -> None:
        await self.request(rq.simple("leave", table=table))

    async def resign(self, table: str) -> None:
        await self.request(rq.simple("resign", table=table))

    async def rematch(self, table: str) -> None:
        await self.request(rq.simple("rematch", table=table))

    async def watch(self, table: str, full: bool = False, broadcast_token: str | None = None) -> Snapshot:
        """``full``: the table's full feed (1.4: with its ``broadcast_token``, or as admin)."""
        return _typed(
            await self.request(rq.simple("watch", table=table, full=full or None, broadcast_token=broadcast_token)), Snapshot
        )

    async def unwatch(self, table: str) -> None:
        await self.request(rq.simple("unwatch", table=table))

    async def sync(self, table: str) -> Snapshot:
        return _typed(await self.request(rq.simple("sync", table=table)), Snapshot)

    async def list_tables(self, max_pages: int = 50, **filters: Any) -> list[dict[str, Any]]:
        """Every table (``filters``: variant, status, open), page by page (protocol 1.4; a
        1.3 referee answers everything in one page)."""
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
        """Round trip to the referee, in seconds."""
        t = time.perf_counter()
        await self.request(rq.simple("ping"))
        return time.perf_counter() - t

    async def create_table(self, **kw: Any) -> TableCreated:
        """Admin: create a table (see :func:`clients.sdk.requests.create_table` for fields)."""
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
        sock.setsockopt(zmq.RCVHWM, HWM)
        sock.setsockopt(zmq.SNDHWM, HWM)
        try:
            sock.connect(self.endpoint)
        except zmq.ZMQError:
            sock.close(linger=0)  # an open socket would hang the context's term
            raise
        self._sock = sock
        self._reader = asyncio.create_task(self._read(sock), name="okgin-sdk-reader")

    async def _close_socket(self, linger: int = 0) -> None:
        reader, self._reader = self._reader, None
        if reader is not None and reader is not asyncio.current_task():
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await reader
        if self._sock is not None:
            self._sock.close(linger=linger)
            self._sock = None

    async def _hello(self, timeout: float) -> Welcome:
        reply = await self._ask(self.session.hello(time.monotonic()), timeout)
        return _typed(reply, Welcome)

    async def _ask(self, out: dict[str, Any], timeout: float) -> Message:
        """Send a request the session has tagged; await the reply with its id."""
        rid: RequestId = out["id"]
        fut: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        self._waiters[rid] = fut
        try:
            await self.send(out)
            try:
                reply = await asyncio.wait_for(fut, timeout)
            except TimeoutError:
                raise Timeout(f"no reply to {out.get('type')!r} (id {rid}) from {self.endpoint} within {timeout:.1f} s") from None
        finally:
            self._waiters.pop(rid, None)
            self.session.forget(rid)
        if isinstance(reply, ErrorMessage):
            raise reply.exception()
        return reply

    async def _read(self, sock: zmq.asyncio.Socket) -> None:
        while True:
            try:
                frame = await sock.recv()
            except asyncio.CancelledError:
                return
            except zmq.ZMQError as e:  # the context was terminated under us, say
                self._end(ConnectionLost(f"the socket to {self.endpoint} failed: {e}"))
                return
            try:
                raw = decode(frame, max_bytes=MAX_FRAME, strict=False)
            except Exception as e:  # a malformed frame is reported, never fatal to the reader
                self._deliver(ErrorMessage("error", code=0, name="malformed_message", message=str(e), request=None, table=None))
                continue
            self._on_message(self.session.receive(raw, time.monotonic()))
            if self._fatal is not None:
                return

    def _on_message(self, got: Incoming) -> None:
        """Route one classified message: to the request awaiting it, else to the stream."""
        if got.kind is Kind.HEARTBEAT:
            return
        if got.kind is Kind.TAKEN:
            self._end(SessionTaken(str(got.msg.get("message", ""))))
            return
        if got.kind is Kind.LOST:
            if self._poke is not None:
                self._poke.set()  # the keeper resumes at once
            return
        try:
            m = parse_message(got.msg)
        except Exception as e:  # a referee bug: reported in the stream (or to the waiter)
            m = ErrorMessage("error", id=got.request, code=0, name="malformed_message", message=str(e), request=None, table=None)
        if got.kind is Kind.WELCOME:
            assert isinstance(m, Welcome)
            self.welcome = m
            if m.resumed:
                # In the stream exactly where the session resumed: before the
                # snapshots and re-sent prompts that follow the welcome.
                self._deliver(Reconnected("reconnected", welcome=m))
        if got.kind is Kind.REPLY and got.msg.get("name") == "hello_first" and self._poke is not None:
            self._poke.set()
        fut = self._waiters.get(got.request) if got.request is not None else None
        if fut is not None and not fut.done():
            fut.set_result(m)
        elif got.kind is not Kind.WELCOME:
            self._deliver(m)

    def _deliver(self, m: Message) -> None:
        if self._queue is not None:
            self._queue.put_nowait(m)

    def _end(self, err: ConnectionLost) -> None:
        """The session is over for this client: fail the waiting requests, end the
        stream after what it holds, stop the housekeeping (no heartbeats, no resume)."""
        if self._fatal is not None:
            return
        self._fatal = err
        for fut in self._waiters.values():
            if not fut.done():
                fut.set_exception(err)
        if self._queue is not None:
            self._queue.put_nowait(_Fatal(err))
        if self._poke is not None:
            self._poke.set()
        if self._sock is not None and isinstance(err, SessionTaken):
            self._sock.close(linger=0)  # another connection has the session: nothing more to say
            self._sock = None

    async def _keep(self) -> None:
        """Heartbeats out; after ``liveness`` beats of silence, or at once after
        ``hello_first``, resume with the token (the session says when)."""
        assert self._poke is not None
        while not self._closed and self._fatal is None:
            now = time.monotonic()
            wake = self.session.wakeup(now)
            # Nothing is due while a hello is out, or with no socket (dropped, and not
            # yet reconnected by the program): look again soon.
            idle = wake is None or self._reconnecting or self._sock is None
            wait = 0.25 if idle or wake is None else max(0.0, wake - now)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._poke.wait(), wait)
            self._poke.clear()
            if self._closed or self._fatal is not None or self._sock is None or self._reconnecting:
                continue
            now = time.monotonic()
            due = self.session.due(now)
            if due is Due.HEARTBEAT:
                with contextlib.suppress(zmq.ZMQError, SDKError):
                    await self.send(self.session.heartbeat(now))
            elif due is Due.SILENT or due is Due.RESUME:
                why = (
                    self.session.lost
                    if due is Due.RESUME
                    else f"no message from the referee for {self.session.silent_for(now):.1f} s"
                )
                if not self.auto_reconnect:
                    self._end(ConnectionLost(f"the referee at {self.endpoint}: {why}"))
                    return
                self._deliver(Disconnected("disconnected", reason=str(why)))
                try:
                    await self.reconnect()  # the reader queues Reconnected at the welcome
                except (ConnectionLost, RefereeError, zmq.ZMQError) as e:
                    self._end(e if isinstance(e, ConnectionLost) else ConnectionLost(str(e)))
                    return


class _Fatal:
    """Internal: carries a fatal connection error through the queue to ``next()``."""

    def __init__(self, error: ConnectionLost) -> None:
        self.error = error


def _typed(m: Message, cls: type) -> Any:
    if not isinstance(m, cls):
        raise SDKError(f"expected {cls.__name__}, the referee answered {m.type!r}")
    return m
