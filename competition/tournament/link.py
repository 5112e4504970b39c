"""The runner's connections to a referee, over the documented protocol only.

:class:`AdminLink` is one DEALER with role ``admin`` per referee: it creates the tables
(reserved seats, seed, clock, policies), watches them (the public feed, so the runner
never sees a hidden card it could leak), closes them, and tells the runner when the
referee is gone (its process exited, it said ``shutdown``, or it stayed silent for
``liveness`` heartbeats). It pings the referee on every heartbeat and keeps the round
trip times: the referee's own latency, so harness load can be told apart from a slow
bot (GUIDE §6). The session rules (hello, request ids, the liveness deadline, what
``session_taken`` and ``hello_first`` mean) are the protocol core's,
:class:`okgin.protocol.session.Session`; this module only gives them a socket. An admin
link does not resume: a referee that forgot it restarted, and the runner's recovery
decides what then.

:func:`resign_seat` takes a seat over with its reserved token and resigns it: how the
runner makes a bot whose process died, or that hangs with no time control, lose its
game at once instead of after the referee's disconnect grace.

CURVE (protocol.md §13): a remote referee run with ``okgin referee --curve-keys DIR
--allow KEYS`` talks only to clients that know its public key and whose own key it
allows. The runner is such a client like any other: :meth:`CurveClient.from_env` reads
the SDK's variables (``OKGIN_CURVE_SERVER_KEY``, the referee's ``server.key``;
``OKGIN_CURVE_CLIENT_KEY``, the organiser's ``*.key_secret``). An :class:`AdminLink`
keeps its keys (``AdminLink.curve``), and every other socket the runner opens to that
referee is given the same (``resign_seat(..., curve=)``, ``Gateway.attach(..., curve=)``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import zmq
import zmq.asyncio
import zmq.auth

from okgin import env
from okgin.protocol import ProtocolError, decode, encode
from okgin.protocol.session import Due, Kind, RequestId, Session

FEED_TYPES = {"game_start", "event", "hand_end", "game_end", "table_closed", "snapshot"}


class RefereeGone(RuntimeError):
    """The referee stopped answering (process died, shut down, or went silent)."""


class RequestFailed(RuntimeError):
    """The referee answered a request with ``error``."""

    def __init__(self, reply: dict[str, Any]) -> None:
        super().__init__(f"{reply.get('name')}: {reply.get('message')}")
        self.reply = reply
        self.name = str(reply.get("name"))


ENV_SERVER_KEY = "OKGIN_CURVE_SERVER_KEY"  # the SDK's names (clients/sdk/curve.py)
ENV_CLIENT_KEY = "OKGIN_CURVE_CLIENT_KEY"


@dataclass(frozen=True)
class CurveClient:
    """A referee's CURVE public key and the runner's key pair (Z85 bytes)."""

    server_public: bytes
    public: bytes
    secret: bytes

    @classmethod
    def load(cls, server_key: str | os.PathLike[str], client_key: str | os.PathLike[str] | None = None) -> CurveClient:
        """From pyzmq certificate files; ``client_key`` None: a fresh pair (only a referee
        run with ``--allow any`` accepts it)."""
        try:
            server_public, _ = zmq.auth.load_certificate(str(Path(server_key)))
            if client_key is None:
                public, secret = zmq.curve_keypair()
            else:
                public, maybe = zmq.auth.load_certificate(str(Path(client_key)))
                if maybe is None:
                    raise ValueError(f"{client_key} holds no secret key (give the *.key_secret file)")
                secret = maybe
        except OSError as e:
            raise ValueError(f"CURVE key file: {e}") from None
        return cls(server_public, public, secret)

    @classmethod
    def from_env(cls) -> CurveClient | None:
        """From ``OKGIN_CURVE_SERVER_KEY`` / ``OKGIN_CURVE_CLIENT_KEY``; None if unset."""
        server = env.get(ENV_SERVER_KEY)
        return cls.load(server, env.get(ENV_CLIENT_KEY)) if server else None

    def apply(self, sock: zmq.Socket) -> None:
        """Make ``sock`` (before it connects) a CURVE client of the referee."""
        sock.curve_serverkey = self.server_public
        sock.curve_publickey = self.public
        sock.curve_secretkey = self.secret


def _socket(ctx: zmq.asyncio.Context, endpoint: str, curve: CurveClient | None = None) -> zmq.asyncio.Socket:
    s = ctx.socket(zmq.DEALER)
    s.setsockopt(zmq.LINGER, 0)
    s.setsockopt(zmq.SNDHWM, 10000)
    s.setsockopt(zmq.RCVHWM, 10000)
    if curve is not None:
        curve.apply(s)
    try:
        s.connect(endpoint)
    except zmq.ZMQError:
        s.close(linger=0)  # a socket left open would hang the context's term (at exit, or when collected)
        raise
    return s


class AdminLink:
    def __init__(self, ctx: zmq.asyncio.Context, endpoint: str, name: str, admin_key: str | None = None,
                 curve: CurveClient | None = None) -> None:
        self.ctx = ctx
        self.endpoint = endpoint
        self.name = name
        self.admin_key = admin_key
        self.curve = curve  # also for every other socket to this referee (resign_seat, the gateway's relays)
        self.sock: zmq.asyncio.Socket | None = None
        # 1 s beyond liveness x heartbeat: the runner's own loop is busy under load, and
        # its delays must not pass for the referee's silence.
        self.session = Session(name, "admin", admin_key=admin_key or None, grace_s=1.0)
        self._pending: dict[RequestId, asyncio.Future[dict[str, Any]]] = {}
        self._tables: dict[str, Callable[[dict[str, Any]], None]] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self.gone: str | None = None  # why, once the referee is gone
        self.gone_event = asyncio.Event()
        self.rtt_ms: list[float] = []
        self._ping_sent: dict[RequestId, float] = {}
        self._on_gone: list[Callable[[str], None]] = []

    @property
    def heartbeat_s(self) -> float:
        return self.session.heartbeat_s

    @property
    def liveness(self) -> int:
        return self.session.liveness

    # ------------------------------------------------------------- lifecycle
    async def connect(self, timeout: float = 30.0) -> dict[str, Any]:
        self.sock = _socket(self.ctx, self.endpoint, self.curve)
        self._tasks.append(asyncio.ensure_future(self._recv_loop()))
        try:
            welcome = await self._ask(self.session.hello(time.monotonic()), timeout)
        except RefereeGone as e:
            # A CURVE handshake that fails is silent at this level: say what to check.
            hint = (f"is {ENV_SERVER_KEY} that referee's server.key, and the organiser's public key in its --allow?"
                    if self.curve is not None else f"if it runs --curve-keys, set {ENV_SERVER_KEY} (and {ENV_CLIENT_KEY})")
            raise RefereeGone(f"{e} ({hint})") from None
        self._tasks.append(asyncio.ensure_future(self._heartbeat_loop()))
        return welcome

    async def close(self) -> None:
        for t in self._tasks:
            t.cancel()
        for t in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await t
        self._tasks.clear()
        if self.sock is not None:
            with contextlib.suppress(zmq.ZMQError):
                await self.sock.send(encode({"type": "bye"}), flags=zmq.NOBLOCK)
            self.sock.close(linger=0)
            self.sock = None

    def on_gone(self, cb: Callable[[str], None]) -> None:
        self._on_gone.append(cb)

    def mark_gone(self, why: str) -> None:
        if self.gone is not None:
            return
        self.gone = why
        self.gone_event.set()
        for fut in self._pending.values():
            if not fut.done():
                fut.set_exception(RefereeGone(why))
        for cb in list(self._on_gone):
            cb(why)
        for feed in list(self._tables.values()):
            feed({"type": "_referee_gone", "reason": why})

    # -------------------------------------------------------------- messages
    async def request(self, msg: dict[str, Any], timeout: float = 30.0) -> dict[str, Any]:
        """Send ``msg`` with a fresh id; return the reply, or raise RequestFailed/RefereeGone."""
        if self.gone is not None:
            raise RefereeGone(self.gone)
        return await self._ask(self.session.request(msg, time.monotonic()), timeout)

    async def _ask(self, out: dict[str, Any], timeout: float) -> dict[str, Any]:
        """Send a request the session has tagged with its id; await the reply."""
        assert self.sock is not None
        rid: RequestId = out["id"]
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[rid] = fut
        try:
            await self.sock.send(encode(out))
            reply = await asyncio.wait_for(fut, timeout)
        except TimeoutError:
            raise RefereeGone(f"no answer to {out.get('type')} within {timeout:.0f} s") from None
        finally:
            self._pending.pop(rid, None)
            self.session.forget(rid)
        if reply.get("type") == "error":
            raise RequestFailed(reply)
        return reply

    def subscribe(self, table: str, cb: Callable[[dict[str, Any]], None]) -> None:
        self._tables[table] = cb

    def unsubscribe(self, table: str) -> None:
        self._tables.pop(table, None)

    async def _recv_loop(self) -> None:
        assert self.sock is not None
        while True:
            try:
                frame = await self.sock.recv()
            except zmq.ZMQError as e:
                self.mark_gone(f"socket error: {e}")
                return
            try:
                msg = decode(frame, max_bytes=1 << 20, strict=False)
            except ProtocolError:
                continue
            now = time.monotonic()
            got = self.session.receive(msg, now)
            fut = self._pending.get(got.request) if got.request is not None else None
            if fut is not None and not fut.done():
                fut.set_result(msg)
            if self.session.lost is not None or got.kind is Kind.TAKEN:
                # hello_first (or session_taken: nobody else holds an admin link's
                # token): the referee lost this link's session; it restarted. The
                # runner's recovery decides what then: an admin link does not resume.
                self.mark_gone(f"the referee no longer knows this link ({got.error_name}): it restarted")
                return
            if got.kind is Kind.REPLY:
                sent = self._ping_sent.pop(got.request, None) if got.request is not None else None
                if sent is not None:
                    self.rtt_ms.append((now - sent) * 1000.0)
                continue
            kind = msg.get("type")
            if kind == "shutdown":
                self.mark_gone(f"the referee shut down: {msg.get('reason', '')}")
                return
            table = msg.get("table")
            if (
                got.kind is Kind.EVENT
                and kind in FEED_TYPES
                and isinstance(table, str)
                and table in self._tables
                and "id" not in msg
            ):
                self._tables[table](msg)

    async def _heartbeat_loop(self) -> None:
        """Ping on every beat (any traffic is a heartbeat); declare the referee gone when
        the session says it has been silent (``liveness`` beats, and the grace)."""
        assert self.sock is not None
        while True:
            # Ping more often than the heartbeat needs: the round trips measure the
            # referee's own latency under the tournament's load.
            await asyncio.sleep(min(self.heartbeat_s, 0.5))
            now = time.monotonic()
            if self.session.due(now) is Due.SILENT:
                self.mark_gone(f"silent for {self.liveness} heartbeats")
                return
            ping = self.session.request({"type": "ping"}, now)
            self._ping_sent[ping["id"]] = now
            if len(self._ping_sent) > 100:
                oldest = next(iter(self._ping_sent))  # never answered: forget it
                del self._ping_sent[oldest]
                self.session.forget(oldest)
            with contextlib.suppress(zmq.ZMQError):
                await self.sock.send(encode(ping))

    def rtt_summary(self) -> dict[str, float]:
        if not self.rtt_ms:
            return {}
        xs = sorted(self.rtt_ms)
        return {"pings": len(xs), "median_ms": xs[len(xs) // 2], "max_ms": xs[-1]}


async def resign_seat(ctx: zmq.asyncio.Context, endpoint: str, token: str, table: str, timeout: float = 30.0,
                      resign: bool = True, curve: CurveClient | None = None) -> str:
    """Take the seat that ``token`` reserves at ``table`` and resign it.

    Returns what happened in a few words. If the seat was never taken (the bot died
    before connecting) the runner's hello takes it; if other seats are still empty the
    game starts when they fill, and the resignation follows at once. With ``resign``
    false the seat is only held until the game ends: when a second bot of the same game
    dies too, its seat must still be taken for the game to start and the first one's
    resignation to end it.
    """
    session = Session("organiser", "player", token=token)
    sock = _socket(ctx, endpoint, curve)
    deadline = time.monotonic() + timeout
    try:
        hello = session.hello(time.monotonic())
        await sock.send(encode(hello))
        resign_id: RequestId | None = None
        while (now := time.monotonic()) < deadline:
            wake = session.wakeup(now)
            wait = deadline - now if wake is None else min(deadline, wake) - now
            if await sock.poll(max(1, int(wait * 1000))):
                got = session.receive(decode(await sock.recv(), max_bytes=1 << 20, strict=False), time.monotonic())
                msg, kind = got.msg, got.msg.get("type")
                if got.request == hello["id"] and got.is_error:
                    return f"could not take the seat: {msg.get('name')}"
                if got.kind is Kind.TAKEN:
                    return "the seat was taken back by another connection with its token"
                if kind == "game_end" and msg.get("table") == table:
                    return "resigned" if resign_id is not None else "held until the end" if not resign else "the game ended first"
                running = kind in ("game_start", "prompt") or (
                    kind in ("snapshot", "seated") and msg.get("status") == "playing")
                if running and msg.get("table") == table and resign_id is None and resign:
                    out = session.request({"type": "resign", "table": table}, time.monotonic())
                    await sock.send(encode(out))
                    resign_id = out["id"]
                if got.request is not None and got.request == resign_id and got.is_error:
                    if msg.get("name") == "no_game":
                        resign_id = None  # not started yet: wait for game_start
                    else:
                        return f"resign refused: {msg.get('name')}"
            if session.due(time.monotonic()) is Due.HEARTBEAT:  # held for a while: stay alive
                await sock.send(encode(session.heartbeat(time.monotonic())))
        return "timed out"
    finally:
        with contextlib.suppress(zmq.ZMQError):
            await sock.send(encode({"type": "bye"}), flags=zmq.NOBLOCK)
        sock.close(linger=0)
