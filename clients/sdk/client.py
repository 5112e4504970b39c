"""The blocking client: one DEALER socket, a session token, heartbeats, resume.

For bots and scripts (the asyncio twin for user interfaces is :mod:`clients.sdk.aio`).
Single-threaded by design: ZeroMQ sockets are not thread-safe, so one thread owns the
socket and does all I/O; :mod:`clients.sdk.runner` runs a bot's thinking in a worker
thread precisely so that this thread can keep the heartbeats going meanwhile.

What it does for you (protocol.md §4.1, §10):

- ``connect()`` sends ``hello`` and keeps the ``token`` of the ``welcome`` for the whole
  session (or uses the token you give: a reserved seat, or a session to resume);
- sends ``heartbeat`` whenever it has sent nothing for ``heartbeat_ms``, and reads the
  referee's; after ``liveness × heartbeat_ms`` of silence it drops the socket, opens a
  new one and resumes with the token (``reconnect()`` does the same on demand); the
  referee then re-sends snapshots and the pending prompt;
- ``request()`` waits for the reply carrying its ``id`` and raises
  :class:`~clients.sdk.errors.RefereeError` (code, name, sentence) on ``error``, while
  every other message that arrives meanwhile is kept, in order, for ``recv()``;
- never resumes after ``session_taken`` (protocol 1.4: another connection resumed the
  session with its token): every call then raises :class:`~clients.sdk.errors.SessionTaken`,
  so two processes sharing a token cannot take the seat from each other in a loop.
"""

from __future__ import annotations

import itertools
import time
from collections import deque
from typing import Any

import zmq

from okgin import Action
from okgin.endpoint import is_ipv6
from okgin.protocol import decode, encode

from . import requests as rq
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

DEFAULT_ENDPOINT = "tcp://127.0.0.1:7117"
BYE_LINGER_MS = 200  # how long a closed socket may still try to deliver its bye


class Client:
    """A blocking protocol client. See the module docstring.

    >>> c = Client("tcp://127.0.0.1:7117", name="me")   # nothing is sent until connect()
    >>> c.token is None
    True
    """

    def __init__(
        self,
        endpoint: str = DEFAULT_ENDPOINT,
        name: str = "python-bot",
        role: str = "player",
        *,
        token: str | None = None,
        admin_key: str | None = None,
        context: zmq.Context | None = None,
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
        self._ctx = context or zmq.Context.instance()
        self._sock: zmq.Socket | None = None
        self._poller = zmq.Poller()
        self._inbox: deque[Message] = deque()
        self._ids = itertools.count(1)
        self._last_sent = 0.0
        self._last_recv = 0.0
        self._unknown_to_referee = False  # got hello_first after welcome: the referee restarted
        self.taken: SessionTaken | None = None  # got session_taken: this client is done

    # ------------------------------------------------------------------ session
    def connect(self, timeout: float = 10.0) -> Welcome:
        """Open the socket and say ``hello``; returns the ``welcome`` (token kept)."""
        self._open()
        return self._hello(timeout)

    def reconnect(self, timeout: float | None = None) -> Welcome:
        """Drop the socket and resume the session with its token on a new one.

        One new DEALER (a new routing id, protocol.md §10) and one ``hello``, then wait
        up to ``timeout`` (default ``reconnect_timeout``): ZeroMQ keeps the hello queued
        and delivers it as soon as the referee is reachable again. (Retrying with fresh
        sockets would leave answers to the abandoned hellos, and the prompts re-sent
        after them, travelling to sockets nobody reads.) ``bad_token`` — the referee no
        longer holds the session — is final, and so is ``session_taken`` (raised again
        here: make a new client with the token to take the session back knowingly).
        """
        if self.taken is not None:
            raise self.taken
        if self.token is None:
            raise SDKError("cannot resume: no session token yet (connect first)")
        self._close_socket()
        self._open()
        try:
            w = self._hello(self.reconnect_timeout if timeout is None else timeout)
        except Timeout:
            raise ConnectionLost(f"the referee at {self.endpoint} did not answer a resume within the time allowed") from None
        except RefereeError as e:
            if e.name == "bad_token":
                raise ConnectionLost(f"the referee no longer holds this session: {e.message}") from None
            raise
        self.reconnects += 1
        return w

    def close(self, bye: bool = True) -> None:
        """Say ``bye`` (seats are then held for their grace period) and close the socket.

        The ``bye`` gets a short linger: closed with LINGER=0 it would often be dropped
        unsent, and a tournament gateway waits for it after its ``shutdown``."""
        if self._sock is not None and bye and self.welcome is not None:
            try:
                self._sock.send(encode({"type": "bye"}), zmq.NOBLOCK)
            except zmq.ZMQError:
                pass
            else:
                self._sock.close(linger=BYE_LINGER_MS)
                self._sock = None
        self._close_socket()

    def drop_connection(self) -> None:
        """Close the socket without a word, as a crash or a network cut would (for tests
        and for programs that want to move to another connection)."""
        self._close_socket()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def connected(self) -> bool:
        return self._sock is not None

    # --------------------------------------------------------------------- I/O
    def send(self, msg: dict[str, Any]) -> None:
        """Send one message as it is (no reply awaited)."""
        if self.taken is not None:
            raise self.taken
        if self._sock is None:
            raise SDKError("not connected")
        self._sock.send(encode(msg))
        self._last_sent = time.monotonic()

    def recv(self, timeout: float | None = None) -> Message | None:
        """The next message (heartbeats swallowed), or None after ``timeout`` seconds.

        While waiting it sends heartbeats and, if the referee falls silent, resumes the
        session (yielding :class:`Disconnected` then :class:`Reconnected`).
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._inbox:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return None
            self._pump(left)
        return self._inbox.popleft()

    def pump(self, timeout: float = 0.0) -> None:
        """Do the socket's housekeeping for up to ``timeout`` seconds: read what has
        arrived into the inbox, send a heartbeat if one is due, resume if silent."""
        self._pump(timeout)

    def request(self, msg: dict[str, Any], timeout: float | None = None) -> Message:
        """Send ``msg`` with a fresh ``id`` and return the reply carrying that id.

        Raises :class:`RefereeError` if the reply is an ``error``, :class:`Timeout` if
        none comes in ``timeout`` seconds (default ``reply_timeout``).
        """
        rid = next(self._ids)
        self.send({**msg, "id": rid})
        deadline = time.monotonic() + (self.reply_timeout if timeout is None else timeout)
        while True:
            for i, m in enumerate(self._inbox):
                if m.id == rid and not isinstance(m, Disconnected | Reconnected):
                    del self._inbox[i]
                    if isinstance(m, ErrorMessage):
                        raise m.exception()
                    return m
            left = deadline - time.monotonic()
            if left <= 0:
                raise Timeout(f"no reply to {msg.get('type')!r} (id {rid}) within {timeout or self.reply_timeout:.1f} s")
            self._pump(left)

    # ------------------------------------------------------------ requests
    def join(self, table: str, seat: int | None = None, variant: str | None = None, rules: rq.Rules = None,
             any_rules: bool = False) -> Seated:
        """See :func:`clients.sdk.requests.join` (``any_rules``: sit whatever the table's rules)."""
        return self._typed(self.request(rq.join(table, seat, variant, rules, any_rules)), Seated)

    def queue(self, variant: str = "oklahoma", rules: rq.Rules = None) -> Queued:
        return self._typed(self.request(rq.queue(variant, rules)), Queued)

    def act(self, table: str, seq: int, action: Action | dict[str, Any]) -> None:
        """Answer a prompt. Success shows as the ``event`` that follows; a refusal comes
        back later as an :class:`ErrorMessage` from :meth:`recv` (then a re-prompt)."""
        self.send({**rq.act(table, seq, action), "id": next(self._ids)})

    def answer(self, prompt: Prompt, action: Action) -> None:
        self.act(prompt.table, prompt.seq, action)

    def advise(self, table: str, seq: int, action: Action | None = None, text: str | None = None, wait: bool = False) -> None:
        """Advise the captain (sitter only). ``wait``: block for the ``ok`` and raise on
        ``error``; otherwise the ``ok``/``error`` arrive later through :meth:`recv`."""
        msg = rq.advise(table, seq, action, text)
        if wait:
            self.request(msg)
        else:
            self.send({**msg, "id": next(self._ids)})

    def leave(self, table: str | None = None) -> None:
        self.request(rq.simple("leave", table=table))

    def resign(self, table: str) -> None:
        self.request(rq.simple("resign", table=table))

    def rematch(self, table: str) -> None:
        self.request(rq.simple("rematch", table=table))

    def watch(self, table: str, full: bool = False, broadcast_token: str | None = None) -> Snapshot:
        """``full``: the table's full feed (1.4: with its ``broadcast_token``, or as admin)."""
        return self._typed(self.request(rq.simple("watch", table=table, full=full or None, broadcast_token=broadcast_token)), Snapshot)

    def unwatch(self, table: str) -> None:
        self.request(rq.simple("unwatch", table=table))

    def sync(self, table: str) -> Snapshot:
        return self._typed(self.request(rq.simple("sync", table=table)), Snapshot)

    def list_tables(self, max_pages: int = 50, **filters: Any) -> list[dict[str, Any]]:
        """Every table (``filters``: variant, status, open), page by page (protocol 1.4; a
        1.3 referee answers everything in one page)."""
        out: list[dict[str, Any]] = []
        cursor = None
        for _ in range(max_pages):
            page = self._typed(self.request(rq.simple("list_tables", cursor=cursor, **filters)), Tables)
            out.extend(page.tables)
            cursor = page.next
            if cursor is None:
                break
        return out

    def ping(self) -> float:
        """Round trip to the referee, in seconds."""
        t = time.perf_counter()
        self.request(rq.simple("ping"))
        return time.perf_counter() - t

    def create_table(self, **kw: Any) -> TableCreated:
        """Admin: create a table (see :func:`clients.sdk.requests.create_table` for fields)."""
        return self._typed(self.request(rq.create_table(**kw)), TableCreated)

    def close_table(self, table: str) -> None:
        self.request(rq.simple("close_table", table=table))

    # ------------------------------------------------------------ internals
    @staticmethod
    def _typed(m: Message, cls: type) -> Any:
        if not isinstance(m, cls):
            raise SDKError(f"expected {cls.__name__}, the referee answered {m.type!r}")
        return m

    def _open(self) -> None:
        sock = self._ctx.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        if is_ipv6(self.endpoint):
            sock.setsockopt(zmq.IPV6, 1)  # ZeroMQ refuses a [v6] address without it
        if self.curve is not None:
            self.curve.apply(sock)
        sock.setsockopt(zmq.RCVHWM, 10000)
        sock.setsockopt(zmq.SNDHWM, 10000)
        sock.connect(self.endpoint)
        self._sock = sock
        self._poller = zmq.Poller()
        self._poller.register(sock, zmq.POLLIN)
        now = time.monotonic()
        self._last_recv = self._last_sent = now

    def _close_socket(self) -> None:
        if self._sock is not None:
            self._sock.close(linger=0)
            self._sock = None

    def _hello(self, timeout: float) -> Welcome:
        rid = next(self._ids)
        self.send({**rq.hello(self.name, self.role, self.token, self.admin_key, self.events), "id": rid})
        deadline = time.monotonic() + timeout
        while True:
            for i, m in enumerate(self._inbox):
                if m.id == rid:
                    del self._inbox[i]
                    if isinstance(m, ErrorMessage):
                        raise m.exception()
                    w = self._typed(m, Welcome)
                    if w.resumed:
                        # In the stream exactly where the session resumed: before the
                        # snapshots and re-sent prompts that follow the welcome.
                        self._inbox.insert(i, Reconnected("reconnected", welcome=w))
                    self.welcome = w
                    self.token = w.token
                    self.heartbeat_s = max(0.01, w.heartbeat_ms / 1000)
                    self.liveness = max(1, w.liveness)
                    return w
            left = deadline - time.monotonic()
            if left <= 0:
                raise Timeout(f"no welcome from {self.endpoint} within {timeout:.1f} s")
            self._pump(left, handshake=True)

    def _pump(self, timeout: float | None, handshake: bool = False) -> None:
        """Wait up to ``timeout`` for traffic; returns once something arrived or a
        housekeeping deadline (heartbeat, liveness) passed. During a handshake no
        heartbeat is sent (the referee would answer it with ``hello_first``)."""
        if self.taken is not None:
            raise self.taken
        if self._sock is None:
            raise SDKError("not connected")
        now = time.monotonic()
        beat_due = self._last_sent + self.heartbeat_s
        dead_at = self._last_recv + self.heartbeat_s * self.liveness
        wait = min(beat_due, dead_at) - now
        if timeout is not None:
            wait = min(wait, timeout)
        events = dict(self._poller.poll(max(0, int(wait * 1000) + 1)))
        if self._sock in events:
            self._drain()
            if self.taken is not None:
                self._close_socket()  # another connection has the session: nothing more to say
                raise self.taken
        now = time.monotonic()
        if not handshake and self.welcome is not None and now - self._last_sent >= self.heartbeat_s:
            self.send({"type": "heartbeat"})
        if not handshake and self.welcome is not None and now - self._last_recv > self.heartbeat_s * self.liveness:
            if not self.auto_reconnect:
                raise ConnectionLost(f"the referee at {self.endpoint} has been silent for {now - self._last_recv:.1f} s")
            silent = now - self._last_recv
            self._inbox.append(Disconnected("disconnected", reason=f"no message from the referee for {silent:.1f} s"))
            self.reconnect()
        elif not handshake and self._unknown_to_referee:
            # The referee answered hello_first: it no longer knows this connection (it was
            # restarted, e.g. with --recover after a crash, or the network dropped and
            # ZeroMQ reconnected underneath, which the referee sees as a new peer). Its
            # answers are traffic, so silence would never be noticed: resume at once.
            self._unknown_to_referee = False
            if not self.auto_reconnect:
                raise ConnectionLost(f"the referee at {self.endpoint} no longer knows this connection (it restarted, or the network dropped)")
            self._inbox.append(Disconnected("disconnected", reason="the referee no longer knows this connection (hello_first): it restarted, or the network dropped"))
            self.reconnect()

    def _drain(self) -> None:
        assert self._sock is not None
        while True:
            try:
                frame = self._sock.recv(zmq.NOBLOCK)
            except zmq.Again:
                return
            self._last_recv = time.monotonic()
            m = parse_message(decode(frame, max_bytes=1 << 24, strict=False))
            if isinstance(m, Heartbeat):
                continue
            if isinstance(m, ErrorMessage) and m.name == "session_taken":
                # Not hello_first: resuming now would take the seat back from the newer
                # connection, which would do the same (protocol.md §10.1). Stop.
                self.taken = SessionTaken(m.message)
                return
            if isinstance(m, ErrorMessage) and m.name == "hello_first" and self.welcome is not None:
                self._unknown_to_referee = True
                if m.id is None:
                    continue  # the answer to a heartbeat or an act: nobody waits for it
            self._inbox.append(m)
