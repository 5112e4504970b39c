"""The gateway: where remote bots connect, once, for a whole tournament.

A remote participant runs its bot wherever it likes and points it at the gateway with
the token the organiser handed out. To the bot the gateway *is* a referee speaking
protocol.md: ``hello`` with its token gets ``welcome``, and then, game after game, it
receives ``seated``, ``game_start``, ``prompt``... for tables it never asked for, and
answers as usual (``act``, ``advise``, ``resign``, ``sync`` carry the ``table``).

Why a gateway and not the referee's address: seats are reserved per game with tokens the
referee issues (``create_table`` with ``reserved``), games run on whichever referee is
free, and a remote bot cannot be told any of that in advance. The gateway takes the
seat for it (``hello`` with the seat token on a connection of its own to that game's
referee) and relays every message of that table both ways, unchanged. The referee keeps
every rule and every clock; the gateway adds one loopback hop.

- Heartbeats: the gateway answers the bot's liveness itself (a ``heartbeat`` whenever
  it has sent nothing for ``heartbeat_ms``) and passes the bot's own traffic upstream,
  so a bot that goes silent is seen as disconnected by the referee, which applies the
  table's ``disconnect_grace_ms`` like for any other player.
- Reconnection: a new ``hello`` with the same token replaces the old connection; the
  gateway then asks every upstream for a ``sync`` (snapshot plus the pending prompt).
- Seat business only (protocol 1.5, like a sandboxed bot's seat door, referee.doors):
  a tokenless ``hello`` gets ``seat_only``, one with an unknown token ``bad_token``;
  anything before ``hello`` gets ``hello_first``; after it, only ``act``, ``advise``,
  ``sync``, ``resign`` (for the bot's own tables: another table gets ``not_seated``),
  ``ping``, ``heartbeat`` and ``bye``. Every lobby request (``list_tables``, ``watch``,
  ``create_table``, ``join``, ``queue``, ``rematch`` ...) gets ``seat_only`` and never
  reaches a referee: before 1.5 one naming the bot's table was passed on, and one
  naming none was taken for a heartbeat.
- Connections are capped per host (``max_per_host``) and in all (``max_connections``)
  by a :class:`referee.connguard.ConnectionGuard`: past a cap a new connection is closed
  as soon as it is accepted, so one visitor cannot hold the gateway's memory or lock the
  others out.
- The end: when the runner closes the gateway, every connected bot gets ``shutdown``
  (protocol.md §5.24, as from a stopping referee), so a bot that plays "until shutdown"
  (``okgin bot NAME --token T --games 0``) exits by itself. The gateway waits a moment,
  bounded by ``CLOSE_WAIT_S``, for the bots' ``bye`` before it closes the socket, so the
  message is not dropped with it.
- CURVE: with ``curve_keys`` (a directory holding the gateway's pair, as ``okgin referee
  --curve-keys``) and ``curve_allow`` (a directory of the remote bots' public ``*.key``,
  or ``any``), the gateway is a CURVE server like a referee (protocol.md §13): remote
  bots connect with ``OKGIN_CURVE_SERVER_KEY`` set to its public key, and a key not in
  the allow-list never gets past the handshake. Without arguments it reads
  ``OKGIN_GATEWAY_CURVE_KEYS`` and ``OKGIN_GATEWAY_ALLOW``. Its relays to a CURVE
  referee use the runner's keys for that referee (``attach(..., curve=)``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import zmq
import zmq.asyncio

from okgin import env
from okgin.protocol import ERRORS, MAX_MESSAGE_BYTES, ProtocolError, decode, encode
from okgin.schedule import nonce_commitment, parse_hex32
from referee.connguard import ConnectionGuard

from .link import CurveClient

HEARTBEAT_MS = 5000
LIVENESS = 3
CLOSE_WAIT_S = 1.0  # how long close() waits for the bots' bye after shutdown
ENV_CURVE_KEYS = "OKGIN_GATEWAY_CURVE_KEYS"
ENV_CURVE_ALLOW = "OKGIN_GATEWAY_ALLOW"
# Live connections per visiting host and in all (ConnectionGuard). A remote bot needs one,
# and a few while it reconnects; several participants may share a host (a NAT).
MAX_PER_HOST = 16
MAX_CONNECTIONS = 512
# What a participant may send after hello: its seats' play, and session upkeep.
SEAT_TYPES = frozenset({"act", "advise", "sync", "resign", "entropy_reveal", "ping", "heartbeat", "bye"})


def _error(name: str, message: str, rid: Any = None, request: str | None = None) -> dict[str, Any]:
    msg: dict[str, Any] = {
        "type": "error",
        "code": ERRORS[name][0] if name in ERRORS else 5001,
        "name": name,
        "message": message,
        "request": request,
    }
    if rid is not None:
        msg["id"] = rid
    return msg


@dataclass
class _Upstream:
    table: str
    name: str
    sock: zmq.asyncio.Socket
    task: asyncio.Task[None] | None = None


@dataclass
class _Remote:
    name: str
    token: str
    route: bytes | None = None
    last_sent: float = 0.0
    connected: asyncio.Event = field(default_factory=asyncio.Event)
    # When it was last seen absent (made, or its bye): the runner's no-show clock.
    absent_since: float = field(default_factory=time.monotonic)
    upstreams: dict[str, _Upstream] = field(default_factory=dict)
    # 1.5 (.entropy): the nonce commitment of its first hello that had one, the table
    # name its entropy_request named, and the nonce it revealed
    entropy_commit: str | None = None
    entropy_table: str | None = None
    entropy_nonce: str | None = None


class Gateway:
    def __init__(
        self,
        ctx: zmq.asyncio.Context,
        bind: str,
        tokens: dict[str, str],
        curve_keys: str | None = None,
        curve_allow: str | None = None,
        max_per_host: int = MAX_PER_HOST,
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        self.ctx = ctx
        self.max_per_host = max_per_host
        self.max_connections = max_connections
        self.guard: ConnectionGuard | None = None
        self.bind = bind
        self.curve_keys = curve_keys if curve_keys is not None else env.get(ENV_CURVE_KEYS)
        self.curve_allow = curve_allow if curve_allow is not None else env.get(ENV_CURVE_ALLOW)
        self._auth: Any = None  # the ZAP handler of a CURVE gateway
        self.remotes = {name: _Remote(name, tok) for name, tok in tokens.items()}
        self.by_token = {tok: name for name, tok in tokens.items()}
        self.by_route: dict[bytes, str] = {}
        self.sock: zmq.asyncio.Socket | None = None
        self.endpoint = ""
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> str:
        s = self.ctx.socket(zmq.ROUTER)
        s.setsockopt(zmq.LINGER, 0)
        s.setsockopt(zmq.ROUTER_MANDATORY, 1)
        s.setsockopt(zmq.MAXMSGSIZE, 1 << 20)
        try:
            if self.curve_keys or self.curve_allow:
                self._start_curve(s)
            if self.max_per_host or self.max_connections:
                self.guard = ConnectionGuard(zmq.Context.shadow(self.ctx.underlying), s, per_host=self.max_per_host,
                                             total=self.max_connections)
            s.bind(self.bind)
        except (zmq.ZMQError, ValueError):
            self._stop_guard()
            s.close(linger=0)  # a socket left open would hang the context's term (at exit, or when collected)
            self._stop_auth()
            raise
        self.endpoint = s.getsockopt_string(zmq.LAST_ENDPOINT)
        self.sock = s
        self._tasks = [asyncio.ensure_future(self._recv_loop()), asyncio.ensure_future(self._heartbeats())]
        return self.endpoint

    def _start_curve(self, s: zmq.Socket) -> None:
        """Make ``s`` (not yet bound) a CURVE server admitting the allowed keys only.

        Raises ValueError with a sentence on unusable keys. The ZAP handler runs in a
        thread on a sync shadow of the runner's context (one ZAP endpoint per context;
        the runner's has no other server socket)."""
        from zmq.auth.thread import ThreadAuthenticator

        from referee.security import CurveError, allowed_keys, server_keys

        if not (self.curve_keys and self.curve_allow):
            raise ValueError(
                "a CURVE gateway needs both its key pair directory and an allow-list (a directory of *.key, or 'any')"
            )
        try:
            public, secret = server_keys(self.curve_keys)
            location = allowed_keys(self.curve_allow)
        except CurveError as e:
            raise ValueError(f"gateway CURVE: {e}") from None
        auth = ThreadAuthenticator(zmq.Context.shadow(self.ctx.underlying), log=None)
        auth.start()
        auth.configure_curve(domain="*", location=location)
        self._auth = auth
        s.curve_secretkey = secret
        s.curve_publickey = public
        s.curve_server = True

    def _stop_guard(self) -> None:
        if self.guard is not None:
            self.guard.stop()
            self.guard = None

    def _stop_auth(self) -> None:
        if self._auth is not None:
            self._auth.stop()
            self._auth = None

    async def close(self, reason: str = "the tournament is over") -> None:
        told = [r for r in self.remotes.values() if r.route is not None]
        for r in told:
            await self._to_bot(r, {"type": "shutdown", "reason": reason})
        deadline = time.monotonic() + CLOSE_WAIT_S
        while any(r.route is not None for r in told) and time.monotonic() < deadline:
            await asyncio.sleep(0.02)  # the receive loop clears a route at the bot's bye
        for t in self._tasks:
            t.cancel()
        for r in self.remotes.values():
            for table in list(r.upstreams):
                await self.detach(r.name, table)
        for t in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await t
        self._stop_guard()
        if self.sock is not None:
            # a bot that said no bye may still be reading: a short linger, not a drop
            self.sock.close(linger=int(CLOSE_WAIT_S * 1000) if told else 0)
        self._stop_auth()

    # ------------------------------------------------------------------ runner side
    async def wait_connected(self, name: str) -> None:
        await self.remotes[name].connected.wait()

    def is_connected(self, name: str) -> bool:
        return self.remotes[name].connected.is_set()

    def absent_for(self, name: str) -> float:
        """Seconds ``name`` has been away (since the gateway opened, or since its bye);
        0 while it is connected."""
        r = self.remotes[name]
        return 0.0 if r.connected.is_set() else time.monotonic() - r.absent_since

    async def attach(self, name: str, endpoint: str, seat_token: str, table: str,
                     curve: CurveClient | None = None, seat: int = 0, seats: Sequence[str] = ()) -> None:
        """Take the reserved seat for ``name`` and relay that table to it (with the runner's
        ``curve`` keys for a referee that speaks CURVE). ``seat`` and ``seats`` (the seat and
        who sits where) this gateway does not need: the arena's (arena.eventseats) tells them."""
        r = self.remotes[name]
        up = self.ctx.socket(zmq.DEALER)
        up.setsockopt(zmq.LINGER, 0)
        if curve is not None:
            curve.apply(up)
        up.connect(endpoint)
        await up.send(encode({"type": "hello", "id": f"gw-{table}", "protocol": 1, "role": "player", "name": name,
                              "token": seat_token}))
        link = _Upstream(table, name, up)
        link.task = asyncio.ensure_future(self._upstream_loop(r, link))
        r.upstreams[table] = link

    async def detach(self, name: str, table: str) -> None:
        r = self.remotes.get(name)
        link = None if r is None else r.upstreams.pop(table, None)
        if link is None:
            return
        if link.task is not None:
            link.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await link.task
        with contextlib.suppress(zmq.ZMQError):
            await link.sock.send(encode({"type": "bye"}), flags=zmq.NOBLOCK)
        link.sock.close(linger=0)

    # ------------------------------------------------------ participants' nonces
    def entropy_commit(self, name: str) -> str | None:
        return self.remotes[name].entropy_commit

    def entropy_nonce(self, name: str) -> str | None:
        return self.remotes[name].entropy_nonce

    async def request_entropy(self, name: str, table: str, commitments_hash: str) -> None:
        """Ask ``name`` for its nonce (protocol.md 5.27), as a referee asks a seat."""
        r = self.remotes[name]
        if r.entropy_commit is None or r.entropy_nonce is not None:
            return
        r.entropy_table = table
        await self._to_bot(r, {"type": "entropy_request", "table": table, "commitments_hash": commitments_hash})

    async def _entropy_reveal(self, r: _Remote, route: bytes, msg: dict[str, Any]) -> None:
        rid = msg.get("id")
        nonce = msg.get("nonce")
        if r.entropy_table is None or msg.get("table") != r.entropy_table:
            await self._reply(
                route, _error("forbidden", "no entropy_request was sent to you for that table", rid, "entropy_reveal")
            )
            return
        try:
            ok = nonce_commitment(parse_hex32(nonce)) == r.entropy_commit
        except ValueError:
            ok = False
        if not ok:
            await self._reply(route, _error("bad_message", "entropy_reveal: this nonce does not hash to your hello's "
                                            "entropy_commit", rid, "entropy_reveal"))
            return
        if r.entropy_nonce is None:
            r.entropy_nonce = nonce
        await self._reply(route, {"type": "ok", "id": rid, "request": "entropy_reveal", "table": r.entropy_table})

    # ----------------------------------------------------------------- relaying
    async def _to_bot(self, r: _Remote, msg: dict[str, Any]) -> None:
        if r.route is None or self.sock is None:
            return
        try:
            await self.sock.send_multipart([r.route, encode(msg)], flags=zmq.NOBLOCK)
            r.last_sent = time.monotonic()
        except zmq.ZMQError:
            pass  # the bot is gone or slow: dropped, as the referee would (protocol.md §10)

    async def _upstream_loop(self, r: _Remote, link: _Upstream) -> None:
        while True:
            msg = decode(await link.sock.recv(), max_bytes=1 << 20, strict=False)
            if msg.get("type") == "welcome" and str(msg.get("id", "")).startswith("gw-"):
                continue  # the bot already has the gateway's welcome
            if msg.get("type") == "error" and str(msg.get("id", "")).startswith("gw-"):
                msg = {**msg, "table": link.table}
                msg.pop("id", None)
            await self._to_bot(r, msg)

    async def _reply(self, route: bytes, msg: dict[str, Any]) -> None:
        assert self.sock is not None
        with contextlib.suppress(zmq.ZMQError):
            await self.sock.send_multipart([route, encode(msg)], flags=zmq.NOBLOCK)

    async def _recv_loop(self) -> None:
        assert self.sock is not None
        while True:
            route, frame = (await self.sock.recv_multipart())[:2]
            try:
                msg = decode(frame)
            except ProtocolError as e:
                await self._reply(route, _error(e.name, str(e)))
                continue
            kind = msg.get("type")
            rid = msg.get("id")
            name = self.by_route.get(route)
            if kind == "hello":
                await self._hello(route, msg)
                continue
            if name is None or self.remotes[name].route != route:
                await self._reply(route, _error("hello_first", "send hello with your token first", rid, kind))
                continue
            r = self.remotes[name]
            if kind not in SEAT_TYPES:
                await self._reply(
                    route,
                    _error(
                        "seat_only",
                        f"the tournament gateway carries only your seats' play: {kind} is refused here",
                        rid,
                        kind if isinstance(kind, str) else None,
                    ),
                )
                continue
            if kind == "ping":
                await self._reply(route, {"type": "pong", "id": rid, "time_ms": int(time.monotonic() * 1000)})
                continue
            if kind == "entropy_reveal":
                await self._entropy_reveal(r, route, msg)
                continue
            table = msg.get("table")
            if isinstance(table, str):
                link = r.upstreams.get(table)
                if link is None:
                    await self._reply(route, _error("not_seated", f"you have no seat at {table!r} in this tournament", rid, kind))
                    continue
                with contextlib.suppress(zmq.ZMQError):
                    await link.sock.send(frame)
                continue
            if kind not in ("heartbeat", "bye"):
                await self._reply(route, _error("bad_message", f"{kind} needs the table it is for", rid, kind))
                continue
            # heartbeat, bye and anything without a table: a sign of life for every game it plays.
            out = encode({"type": "bye"} if kind == "bye" else {"type": "heartbeat"})
            for link in list(r.upstreams.values()):
                with contextlib.suppress(zmq.ZMQError):
                    await link.sock.send(out)
            if kind == "bye":
                r.route = None
                r.connected.clear()
                r.absent_since = time.monotonic()

    async def _hello(self, route: bytes, msg: dict[str, Any]) -> None:
        rid = msg.get("id")
        if msg.get("protocol") != 1:
            await self._reply(route, _error("version_mismatch", "this gateway speaks protocol 1", rid, "hello"))
            return
        token = msg.get("token")
        if not isinstance(token, str) or not token:
            await self._reply(
                route,
                _error("seat_only", "the tournament gateway admits only sessions with your participant token", rid, "hello"),
            )
            return
        name = self.by_token.get(token)
        if name is None:
            await self._reply(route, _error("bad_token", "that token is not one this tournament handed out", rid, "hello"))
            return
        r = self.remotes[name]
        resumed = r.route is not None
        commit = msg.get("entropy_commit")
        if r.entropy_commit is None and isinstance(commit, str):
            with contextlib.suppress(ValueError):
                parse_hex32(commit)
                r.entropy_commit = commit  # the first one counts: a reconnect cannot change it
        if r.route is not None and r.route != route:
            self.by_route.pop(r.route, None)
        r.route = route
        self.by_route[route] = name
        await self._reply(route, {
            "type": "welcome", "id": rid, "protocol": 1, "minor": 0, "token": r.token, "role": "player", "name": name,
            "resumed": resumed, "heartbeat_ms": HEARTBEAT_MS, "liveness": LIVENESS, "max_message_bytes": MAX_MESSAGE_BYTES,
            "referee": "okgin tournament gateway",
        })
        r.last_sent = time.monotonic()
        r.connected.set()
        for link in list(r.upstreams.values()):
            with contextlib.suppress(zmq.ZMQError):
                await link.sock.send(encode({"type": "sync", "table": link.table}))

    async def _heartbeats(self) -> None:
        while True:
            await asyncio.sleep(HEARTBEAT_MS / 1000 / 2)
            now = time.monotonic()
            for r in self.remotes.values():
                if r.route is not None and now - r.last_sent >= HEARTBEAT_MS / 1000:
                    await self._to_bot(r, {"type": "heartbeat"})
