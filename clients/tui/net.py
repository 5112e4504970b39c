"""The TUI's network backend: a protocol client (protocol.md) living in the app's worker.

The ZeroMQ DEALER socket is created inside the app's async worker, on the app's own
event loop (``zmq.asyncio``), never in a thread: every protocol message is reduced to a
new :class:`TableState` on the same loop that draws it, so there are no locks and no
torn states. Moves are sent from key handlers on that same loop.

Failures, as the player sees them:
- the referee does not answer ``hello`` (not running, wrong address): the banner says
  so and the client retries with a growing delay until the player quits;
- the connection goes silent (``liveness`` heartbeats missed) or the referee vanishes:
  "connection lost" banner, then a new socket and ``hello`` with the saved token; the
  referee resumes the session (snapshot + the pending prompt) and the game goes on;
- the referee refuses a request: its sentence (``error.message``) is shown where the
  player looks (above the hand).
"""

from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import zmq
import zmq.asyncio

from okgin import Action
from okgin.protocol import PROTOCOL_MAJOR, PROTOCOL_MINOR, decode, encode

from .backend import Backend
from .messages import ConnectionChanged
from .model import CONNECTED, CONNECTING, LOST, OFFLINE
from .reducer import reduce

if TYPE_CHECKING:
    from .app import OkginApp

HELLO_TIMEOUT_S = 3.0
MAX_RETRY_S = 10.0


class RefereeRefused(Exception):
    """The referee answered a request with ``error``: ``str(e)`` is its sentence."""

    def __init__(self, msg: dict[str, Any]) -> None:
        super().__init__(str(msg.get("message") or msg.get("name") or "refused"))
        self.name = str(msg.get("name", ""))
        self.code = msg.get("code")


@dataclass(frozen=True)
class Seating:
    """What to do once connected: how this client gets to a table.

    ``mode``: ``quick`` (quick-match queue), ``join`` (a named table, created on first
    join), ``create`` (an admin creates ``table`` with a clock and rules, then we join
    it), ``watch`` (spectate), ``token`` (a reserved seat: the token in ``hello`` seats
    us at once; used by ``okgin play``).
    """

    mode: str = "quick"
    variant: str = "oklahoma"
    rules: dict[str, Any] = field(default_factory=dict)
    table: str | None = None
    seat: int | None = None
    clock: dict[str, int] | None = None
    admin_key: str | None = None
    full: bool = False


class Link:
    """One DEALER connection: send and receive protocol maps. Create inside the worker."""

    def __init__(self, endpoint: str) -> None:
        self.ctx = zmq.asyncio.Context()
        self.sock = self.ctx.socket(zmq.DEALER)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.setsockopt(zmq.MAXMSGSIZE, 1 << 20)
        if "[" in endpoint or "::" in endpoint:
            self.sock.setsockopt(zmq.IPV6, 1)
        self.sock.connect(endpoint)
        self.last_sent = time.monotonic()
        self.last_heard = time.monotonic()

    async def send(self, msg: dict[str, Any]) -> None:
        await self.sock.send(encode(msg))
        self.last_sent = time.monotonic()

    async def recv(self, timeout: float) -> dict[str, Any] | None:
        """The next message, or None after ``timeout`` seconds of silence."""
        if await self.sock.poll(int(timeout * 1000)) == 0:
            return None
        frame = await self.sock.recv()
        self.last_heard = time.monotonic()
        return decode(frame)

    def close(self) -> None:
        self.sock.close(0)
        self.ctx.term()


async def request(endpoint: str, hello: dict[str, Any], msg: dict[str, Any] | None, timeout: float = HELLO_TIMEOUT_S) -> dict[str, Any]:
    """One short exchange on its own connection: ``hello``, then ``msg``, return its reply
    (``welcome`` when ``msg`` is None). Raises :class:`RefereeRefused` or ``TimeoutError``."""
    link = Link(endpoint)
    try:
        await link.send({"type": "hello", "id": 1, "protocol": PROTOCOL_MAJOR, "minor": PROTOCOL_MINOR, **hello})
        welcome = await _reply(link, 1, timeout)
        if msg is None:
            return welcome
        await link.send({**msg, "id": 2})
        reply = await _reply(link, 2, timeout)
        await link.send({"type": "bye"})
        return reply
    finally:
        link.close()


async def _reply(link: Link, rqid: int, timeout: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("no answer")
        m = await link.recv(left)
        if m is None:
            raise TimeoutError("no answer")
        if m.get("id") == rqid:
            if m.get("type") == "error":
                raise RefereeRefused(m)
            return m


async def list_tables(endpoint: str, name: str = "okgin-tui") -> list[dict[str, Any]]:
    """The referee's tables (for the lobby), over a short spectator connection."""
    reply = await request(endpoint, {"role": "spectator", "name": name}, {"type": "list_tables"})
    return list(reply.get("tables") or [])


class NetworkBackend(Backend):
    """Plays (or watches) at one table of a referee over the network."""

    description = "referee over the network"

    def __init__(self, endpoint: str, name: str, seating: Seating, token: str | None = None, retry: bool = True) -> None:
        self.endpoint = endpoint
        self.name = name[:40] or "player"
        self.seating = seating
        self.token = token  # the session's identity once welcomed (or a reserved seat's)
        self.retry = retry
        self.link: Link | None = None
        self.table: str | None = seating.table
        self.heartbeat_s = 5.0
        self.liveness = 3
        self._ids = itertools.count(100)
        self._closing = False
        self.seated = False
        self.app: OkginApp | None = None

    # ------------------------------------------------------------------ worker
    async def run(self, app: OkginApp) -> None:
        """Connect, sit down, then feed every message to the app until closed.

        Reconnects with the token whenever the referee falls silent or goes away.
        """
        self.app = app
        delay = 0.5
        first = True
        while not self._closing:
            app.post_message(ConnectionChanged(CONNECTING if first else LOST, f"Connecting to {self.endpoint}…"))
            try:
                await self._connect(app, first_time=first and not self.seated)
            except RefereeRefused as e:
                app.post_message(ConnectionChanged(OFFLINE, f"The referee refused: {e}"))
                app.state = replace(app.state, error=str(e), notice=f"The referee refused: {e}")
                if e.name in ("bad_token", "version_mismatch", "auth_failed"):
                    return
                await asyncio.sleep(min(delay, MAX_RETRY_S))
                delay *= 2
                continue
            except TimeoutError:
                self._drop_link()
                wait = min(delay, MAX_RETRY_S)
                app.post_message(ConnectionChanged(
                    CONNECTING if first else LOST,
                    f"No referee answers at {self.endpoint}. Is it running? Retrying in {wait:.0f} s (q quits).",
                ))
                if not self.retry:
                    return
                await asyncio.sleep(wait)
                delay *= 2
                continue
            first = False
            delay = 0.5
            app.post_message(ConnectionChanged(CONNECTED, ""))
            lost = await self._pump(app)
            self._drop_link()
            if not lost or self._closing:
                return
            app.post_message(ConnectionChanged(LOST, "Connection lost: reconnecting with your token…"))

    async def _connect(self, app: OkginApp, first_time: bool) -> None:
        self.link = Link(self.endpoint)
        hello: dict[str, Any] = {
            "type": "hello", "id": 1, "protocol": PROTOCOL_MAJOR, "minor": PROTOCOL_MINOR,
            "role": "spectator" if self.seating.mode == "watch" else "player", "name": self.name,
        }
        if self.token:
            hello["token"] = self.token
        await self.link.send(hello)
        welcome = await _reply(self.link, 1, HELLO_TIMEOUT_S)
        self.token = welcome.get("token", self.token)
        self.heartbeat_s = max(int(welcome.get("heartbeat_ms", 5000)), 100) / 1000
        self.liveness = max(int(welcome.get("liveness", 3)), 1)
        app.state = replace(app.state, endpoint=self.endpoint)
        if welcome.get("resumed"):
            return  # the referee re-sends the snapshot and any pending prompt
        if self.seating.mode == "watch":
            if not self.table:
                raise RefereeRefused({"message": "name the table to watch (--table)"})
            await self.link.send({"type": "watch", "id": 2, "table": self.table, "full": self.seating.full})
            return
        if self.seating.mode == "token" or not first_time:
            return
        s = self.seating
        if s.mode == "create":
            hello_admin: dict[str, Any] = {"role": "admin", "name": self.name}
            if s.admin_key:
                hello_admin["admin_key"] = s.admin_key
            create: dict[str, Any] = {"type": "create_table", "variant": s.variant, "rules": s.rules}
            if s.table:
                create["table"] = s.table
            if s.clock:
                create["clock"] = s.clock
            made = await request(self.endpoint, hello_admin, create)
            self.table = made["table"]
        if s.mode == "quick":
            await self.link.send({"type": "queue", "id": 2, "variant": s.variant, "rules": s.rules})
        else:
            join: dict[str, Any] = {"type": "join", "id": 2, "table": self.table}
            if s.mode == "join":
                join["variant"] = s.variant
                if s.rules:
                    join["rules"] = s.rules
            if s.seat is not None:
                join["seat"] = s.seat
            await self.link.send(join)

    async def _pump(self, app: OkginApp) -> bool:
        """Receive until closed (False) or the referee falls silent / shuts down (True)."""
        link = self.link
        assert link is not None
        while not self._closing:
            now = time.monotonic()
            if now - link.last_heard > self.heartbeat_s * self.liveness:
                return True
            try:
                if now - link.last_sent >= self.heartbeat_s:
                    await link.send({"type": "heartbeat"})
                msg = await link.recv(self.heartbeat_s / 2)
            except zmq.ZMQError:
                return not self._closing  # the socket is gone: reconnect
            except Exception as e:  # a frame we cannot read: say so, keep going
                app.state = replace(app.state, error=f"unreadable message from the referee: {e}")
                continue
            if msg is None:
                continue
            if msg.get("type") == "error" and msg.get("name") == "hello_first":
                # The transport reconnected underneath (ZeroMQ does that by itself after
                # a network blip) and the referee sees a stranger: resume with the token.
                return True
            self._on_message(app, msg)
            if msg.get("type") == "shutdown":
                return False
        return False

    def _on_message(self, app: OkginApp, msg: dict[str, Any]) -> None:
        t = msg.get("type")
        if t in ("seated", "game_start") and msg.get("table"):
            self.table = msg["table"]
            self.seated = True
        if t == "snapshot" and msg.get("table"):
            self.table = msg["table"]
        state, effects = reduce(app.state, msg, time.monotonic())
        app.state = state
        for m in effects:
            app.post_message(m)

    def _drop_link(self) -> None:
        if self.link is not None:
            self.link.close()
            self.link = None

    # ------------------------------------------------------------------ requests
    async def _send(self, msg: dict[str, Any]) -> None:
        if self.link is None:
            raise RuntimeError("not connected to the referee right now: reconnecting…")
        await self.link.send({**msg, "id": next(self._ids)})

    async def act(self, action: Action, seq: int | None) -> None:
        await self._send({"type": "act", "table": self.table, "seq": seq, "action": action.to_wire()})

    async def advise(self, action: Action | None, text: str) -> None:
        seq = self.app.state.extra.get("advice_seq") if self.app is not None else None
        if seq is None:
            raise RuntimeError("your captain is not to act now: advice waits for its turn")
        msg: dict[str, Any] = {"type": "advise", "table": self.table, "seq": seq}
        if action is not None:
            msg["action"] = action.to_wire()
        if text:
            msg["text"] = text
        await self._send(msg)

    async def rematch(self) -> None:
        await self._send({"type": "rematch", "table": self.table})

    async def close(self) -> None:
        self._closing = True
        if self.link is not None:
            try:
                await asyncio.wait_for(self.link.send({"type": "bye"}), 0.2)
            except Exception:
                pass
            self._drop_link()
