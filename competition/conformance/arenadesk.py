"""The kit's stand-in arena (``okgin conformance --arena``): checks a bot's arena handshake.

Why a stand-in and not a real ``okgin arena``: the kit must see exactly what the bot
says, hand it a table of the kit's own (a reserved seat at the kit's referee, reached
through the kit's proxy, so every check of an ordinary run applies to the game), and
run with no database, no accounts and no rating. So for each game the kit makes an
account name and a key (in a 0600 file), starts the bot with ``OKGIN_ARENA`` (this
desk's endpoint), ``OKGIN_ACCOUNT`` and ``OKGIN_KEY_FILE``, and this desk answers as an
arena does (protocol.md §19): ``welcome`` to a ``hello`` with that account and key,
``sought`` to a ``seek``, then ``game_ready`` naming the game's table at the kit's proxy
with the seat's token. What the bot got wrong is kept on its :class:`ArenaVisit` and
judged by :mod:`.checks` (the ``arena`` feature):

- ``hello``: protocol 1, minor 6 or later, role ``player``, the account and the key it
  was given, valid per the catalogue;
- ``seek``: valid per the catalogue, the game's variant;
- heartbeats while it waits for its game (the first game of each variant waits three
  beats before ``game_ready``, as the table's idle probe does);
- then ``hello`` at the table with ``game_ready.token`` (seen by the proxy; the kit's
  ordinary checks take it from there); after the table's ``game_end`` this desk sends
  ``game_over`` (unrated: the kit keeps no ratings), as an arena does, to a bot still
  connected here.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

import zmq
import zmq.asyncio

from okgin.protocol import PROTOCOL_MAJOR, ProtocolError, decode, encode, validate

__all__ = ["ARENA_MINOR", "ArenaDesk", "ArenaVisit"]

#: hello.account and hello.key are protocol 1.6.
ARENA_MINOR = 6


@dataclass
class ArenaVisit:
    """One bot process's visit to the stand-in arena, for one game of the kit."""

    account: str
    key: str = field(repr=False)
    variant: str
    game: dict[str, Any] = field(repr=False)  # the game_ready to send (its token is a secret)
    wait_s: float = 0.0  # how long to wait after sought before game_ready (the idle probe)
    hello: dict[str, Any] | None = None
    seek: dict[str, Any] | None = None
    heartbeats: list[float] = field(default_factory=list)
    wait_window: tuple[float, float] | None = None
    ready_at: float | None = None  # when game_ready was sent
    bye: bool = False
    problems: list[str] = field(default_factory=list)
    ready: asyncio.Event = field(default_factory=asyncio.Event)


class ArenaDesk:
    """A ROUTER on loopback answering arena handshakes for the visits the kit expects."""

    def __init__(self, ctx: zmq.asyncio.Context, heartbeat_ms: int, liveness: int) -> None:
        self.ctx = ctx
        self.heartbeat_ms = heartbeat_ms
        self.liveness = liveness
        self.endpoint = ""
        self.sock: zmq.asyncio.Socket | None = None
        self.visits: dict[str, ArenaVisit] = {}  # by account
        self.by_peer: dict[bytes, ArenaVisit] = {}
        self.strangers: list[str] = []  # hellos for no expected account
        self._tasks: list[asyncio.Task[None]] = []
        self._seeks = 0

    async def start(self) -> str:
        sock = self.ctx.socket(zmq.ROUTER)
        sock.setsockopt(zmq.LINGER, 0)
        port = sock.bind_to_random_port("tcp://127.0.0.1")
        self.sock = sock
        self.endpoint = f"tcp://127.0.0.1:{port}"
        self._tasks = [asyncio.create_task(self._read()), asyncio.create_task(self._beat())]
        return self.endpoint

    async def stop(self) -> None:
        for t in self._tasks:
            t.cancel()
        for t in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await t
        if self.sock is not None:
            self.sock.close(0)

    def expect(self, account: str, key: str, variant: str, game: dict[str, Any], wait_s: float) -> ArenaVisit:
        visit = ArenaVisit(account, key, variant, game, wait_s)
        self.visits[account] = visit
        return visit

    async def game_over(self, visit: ArenaVisit, end: dict[str, Any]) -> None:
        """The arena's ``game_over`` of ``visit``'s game after its table's ``game_end``, to
        the bot's arena connection if it kept one (a bot that waits for it, as the example
        bots do, then leaves at once instead of at the kit's exit timeout)."""
        peer = next((p for p, v in self.by_peer.items() if v is visit), None)
        if peer is None or visit.bye:
            return
        winner, seat = end.get("winner"), visit.game["seat"]
        result = "draw" if not isinstance(winner, int) else "win" if winner == seat else "loss"
        final = end.get("final")
        scores = final.get("scores") if isinstance(final, dict) else None
        await self._send(peer, {"type": "game_over", "game": visit.game["game"], "result": result,
                                "scores": list(scores) if isinstance(scores, list) else [],
                                "termination": str(end.get("termination", "")), "rating": None})

    async def _send(self, peer: bytes, msg: dict[str, Any]) -> None:
        assert self.sock is not None
        with contextlib.suppress(zmq.ZMQError):
            await self.sock.send_multipart([peer, encode(msg)], zmq.NOBLOCK)

    async def _beat(self) -> None:
        """The arena's own heartbeats to every bot waiting here (a referee's liveness)."""
        while True:
            await asyncio.sleep(self.heartbeat_ms / 1000)
            for peer, visit in list(self.by_peer.items()):
                if not visit.bye:
                    await self._send(peer, {"type": "heartbeat"})

    async def _read(self) -> None:
        assert self.sock is not None
        while True:
            frames = await self.sock.recv_multipart()
            if len(frames) != 2:
                continue
            peer, body = frames
            try:
                msg = decode(body)
            except ProtocolError as e:
                visit = self.by_peer.get(peer)
                if visit is not None:
                    visit.problems.append(f"a frame that is not a message: {e.name}: {e}")
                continue
            await self._on_message(peer, msg)

    async def _refuse(self, peer: bytes, msg: dict[str, Any], name: str, code: int, text: str) -> None:
        await self._send(peer, {"type": "error", "id": msg.get("id"), "code": code, "name": name, "message": text,
                                "request": msg.get("type")})

    async def _on_message(self, peer: bytes, msg: dict[str, Any]) -> None:
        kind = msg.get("type")
        visit = self.by_peer.get(peer)
        now = time.monotonic()
        if visit is None:
            if kind != "hello":
                await self._refuse(peer, msg, "hello_first", 2002, "say hello first")
                return
            await self._hello(peer, msg)
            return
        if kind == "heartbeat":
            visit.heartbeats.append(now)
        elif kind == "bye":
            visit.bye = True
        elif kind == "seek":
            await self._seek(peer, visit, msg)
        elif kind == "hello":
            visit.problems.append("a second hello on the same arena connection")
            await self._refuse(peer, msg, "already_welcomed", 2006, "this connection already has a session")
        else:
            visit.problems.append(f"an unexpected {kind!r} (the kit's arena answers hello, seek, heartbeat and bye)")
            await self._refuse(peer, msg, "bad_message", 1004, f"the conformance kit's arena does not take {kind!r}")

    async def _hello(self, peer: bytes, msg: dict[str, Any]) -> None:
        account = msg.get("account")
        visit = self.visits.get(account) if isinstance(account, str) else None
        if visit is None:
            self.strangers.append(f"hello for account {account!r}, which the kit did not hand out (OKGIN_ACCOUNT)")
            await self._refuse(peer, msg, "auth_failed", 2005, "authentication failed")
            return
        visit.hello = {k: v for k, v in msg.items() if k != "key"}  # the key is not kept in the trace
        problems = visit.problems
        try:
            validate(msg)
        except ProtocolError as e:
            problems.append(f"hello: {e.name}: {e}")
        if msg.get("protocol") != PROTOCOL_MAJOR:
            problems.append(f"hello: protocol {msg.get('protocol')!r}, not {PROTOCOL_MAJOR}")
        minor = msg.get("minor")
        if not isinstance(minor, int) or minor < ARENA_MINOR:
            problems.append(f"hello: minor {minor!r}; account and key are protocol 1.{ARENA_MINOR}, so say minor {ARENA_MINOR}")
        if msg.get("role") != "player":
            problems.append(f"hello: role {msg.get('role')!r}, not 'player'")
        if "token" in msg:
            problems.append("hello: a token at the arena (the seat token goes to the table, not to the arena)")
        if msg.get("key") != visit.key:
            problems.append("hello: not the key of OKGIN_KEY_FILE")
            await self._refuse(peer, msg, "auth_failed", 2005, "authentication failed")
            return
        self.by_peer[peer] = visit
        await self._send(peer, {
            "type": "welcome", "id": msg.get("id"), "token": secrets.token_hex(16), "role": "player", "name": visit.account,
            "resumed": False, "heartbeat_ms": self.heartbeat_ms, "liveness": self.liveness, "max_message_bytes": 4096,
            "referee": "okgin conformance kit (arena stand-in)", "protocol": PROTOCOL_MAJOR, "minor": ARENA_MINOR,
            "events": bool(msg.get("events", True)),
            "arena": {"name": "conformance", "variants": ["oklahoma", "box"], "clocks": {"standard": visit.game["clock"]}},
            "account": {"name": visit.account, "kind": "bot", "admin": False},
        })

    async def _seek(self, peer: bytes, visit: ArenaVisit, msg: dict[str, Any]) -> None:
        try:
            validate(msg)
        except ProtocolError as e:
            visit.problems.append(f"seek: {e.name}: {e}")
            await self._refuse(peer, msg, e.name, 1004, str(e))
            return
        if visit.seek is not None:
            visit.problems.append("a second seek while the first one was open")
            await self._refuse(peer, msg, "limit_reached", 3011, "the kit's arena takes one seek per game")
            return
        visit.seek = dict(msg)
        if msg.get("variant") != visit.variant:
            visit.problems.append(f"seek: variant {msg.get('variant')!r}, but this game is {visit.variant!r} "
                                  "(give the bot --variant {variant})")
        self._seeks += 1
        await self._send(peer, {"type": "sought", "id": msg.get("id"), "seek": f"seek-{self._seeks}"})
        # Not awaited here: the reader must go on stamping the bot's heartbeats meanwhile.
        self._tasks.append(asyncio.create_task(self._pair(peer, visit)))

    async def _pair(self, peer: bytes, visit: ArenaVisit) -> None:
        """``game_ready``, after the idle wait of this visit (if any)."""
        if visit.wait_s > 0:
            t0 = time.monotonic()
            await asyncio.sleep(visit.wait_s)
            visit.wait_window = (t0, time.monotonic())
        visit.ready_at = time.monotonic()
        await self._send(peer, {"type": "game_ready", **visit.game})
        visit.ready.set()
