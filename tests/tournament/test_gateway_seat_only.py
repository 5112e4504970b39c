"""The tournament gateway admits only a participant's seat business (issue 24 item 1).

Before protocol 1.5 a remote bot that had said hello could send lobby requests through
the gateway: one naming its own table (``watch``, ``join``, ``create_table``...) was
passed on to that game's referee, one naming none (``list_tables``, ``queue``) was
silently taken for a heartbeat; a tokenless hello got ``bad_token``; and the gateway
had no connection cap at all. Now each gets ``seat_only`` and never reaches a referee,
the bot's own play still works, and connections are capped per visiting host.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import msgpack
import zmq
import zmq.asyncio
from bounded import limit

from competition.tournament.gateway import Gateway
from referee.config import RefereeConfig
from referee.server import Referee

WAIT_S = 10.0


async def _ask(s: zmq.asyncio.Socket, msg: dict[str, Any]) -> dict[str, Any]:
    """Send, and return the answer echoing its id (others, the relayed snapshot of the
    bot's table and heartbeats, are skipped; bounded)."""
    await s.send(msgpack.packb(msg))
    while True:
        m = msgpack.unpackb(await asyncio.wait_for(s.recv(), WAIT_S))
        if m.get("id") == msg["id"]:
            return m


def test_the_gateway_refuses_lobby_requests_and_tokenless_sessions() -> None:
    async def scenario() -> tuple[list[dict[str, Any]], dict[str, Any], set[str]]:
        ref = Referee(RefereeConfig(bind="tcp://127.0.0.1:0", journal_dir=None, admin_key="k" * 32))
        await ref.start()
        ctx = zmq.asyncio.Context()
        gw = Gateway(ctx, "tcp://127.0.0.1:0", {"far": "tok"})
        try:
            table = ref.create_table("g1", reserved=True)
            ref.create_table("other", reserved=True)
            assert table.reserved_tokens is not None
            await gw.attach("far", ref.endpoint, table.reserved_tokens[0], "g1")
            ep = await gw.start()
            s = limit(ctx.socket(zmq.DEALER), 10000)
            s.connect(ep)
            out = [await _ask(s, {"type": "hello", "id": 1, "protocol": 1, "role": "player", "name": "x"})]
            w = await _ask(s, {"type": "hello", "id": 2, "protocol": 1, "role": "player", "name": "x", "token": "tok"})
            assert w["type"] == "welcome", w
            lobby: list[dict[str, Any]] = [
                {"type": "list_tables"},
                {"type": "queue"},
                {"type": "watch", "table": "g1"},
                {"type": "watch", "table": "other"},
                {"type": "create_table", "table": "g1"},
                {"type": "create_table", "table": "my-hand-AS-2C"},
                {"type": "join", "table": "g1"},
                {"type": "leave", "table": "g1"},
                {"type": "rematch", "table": "g1"},
                {"type": "unwatch", "table": "g1"},
                {"type": "close_table", "table": "g1"},
                {"type": "reveal", "table": "g1", "game": 1},
            ]
            for i, m in enumerate(lobby):
                out.append(await _ask(s, {**m, "id": 10 + i}))
            # its own seat's business still goes through
            pong = await _ask(s, {"type": "ping", "id": 99})
            s.close(0)
            return out, pong, set(ref.lobby.tables)
        finally:
            await gw.close()
            await ref.stop()
            ctx.term()

    out, pong, tables = asyncio.run(scenario())
    assert [(m["type"], m.get("name")) for m in out] == [("error", "seat_only")] * len(out), out
    assert all(m["code"] == 2010 and m["message"] for m in out)
    assert pong["type"] == "pong"
    assert tables == {"g1", "other"}  # nothing was created, closed or named after a hand


def test_the_gateway_caps_connections_per_host() -> None:
    cap = 3

    async def scenario() -> tuple[int, int, dict[str, Any]]:
        ctx = zmq.asyncio.Context()
        gw = Gateway(ctx, "tcp://127.0.0.1:0", {"far": "tok"}, max_per_host=cap, max_connections=100)
        ep = await gw.start()
        host, port = ep[len("tcp://"):].rsplit(":", 1)
        s = limit(ctx.socket(zmq.DEALER), 10000)
        flood: list[socket.socket] = []
        try:
            s.connect(ep)
            w = await _ask(s, {"type": "hello", "id": 1, "protocol": 1, "role": "player", "name": "x", "token": "tok"})
            assert w["type"] == "welcome"
            for _ in range(60):
                c = socket.socket()
                c.settimeout(5)
                c.connect((host, int(port)))
                flood.append(c)
            assert gw.guard is not None
            loop = asyncio.get_running_loop()
            deadline = loop.time() + 30  # a bound on a hang, not a timing assertion
            while sum(gw.guard.refused.values()) < 60 - cap:
                assert loop.time() < deadline, f"refused only {sum(gw.guard.refused.values())}"
                await asyncio.sleep(0.02)
            live = sum(gw.guard.snapshot().values())
            # the participant's own connection was never cut
            pong = await _ask(s, {"type": "ping", "id": 2})
            return sum(gw.guard.refused.values()), live, pong
        finally:
            for c in flood:
                c.close()
            s.close(0)
            await gw.close()
            ctx.term()

    refused, live, pong = asyncio.run(scenario())
    assert refused >= 60 - cap and live <= cap + 1
    assert pong["type"] == "pong"
