"""The tournament runner's admin link and seat takeover on the protocol core, against a
real referee subprocess on loopback (no tournament around them).

- :class:`AdminLink`: hello and welcome, requests matched by id, a watched table's feed
  delivered to its subscriber, the pings' round trips, and the referee declared gone
  when it falls silent (SIGSTOP: liveness x heartbeat and the link's grace);
- :func:`resign_seat`: takes a reserved seat with its token and resigns the game.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import zmq.asyncio

from clients.match_referee import RefereeProcess
from competition.tournament.link import AdminLink, RefereeGone, RequestFailed, resign_seat

pytestmark = pytest.mark.timeout(180)

WAIT_S = 60.0  # an upper bound for failures only; never asserted on


@pytest.fixture
def ref(tmp_path: Path) -> Iterator[RefereeProcess]:
    r = RefereeProcess(tmp_path, ["--heartbeat-ms", "200", "--liveness", "3", "--untimed"])
    try:
        yield r
    finally:
        os.kill(r.proc.pid, signal.SIGCONT)  # a test that froze it lets it stop
        r.stop()


def _bot(endpoint: str, token: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "okgin", "bot", "simple", "--connect", endpoint, "--token", token, "--quiet"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)


async def _until(q: asyncio.Queue[dict[str, Any]], kind: str) -> dict[str, Any]:
    while True:
        msg = await asyncio.wait_for(q.get(), WAIT_S)
        if msg.get("type") == kind:
            return msg


Body = Callable[[zmq.asyncio.Context, AdminLink, list[subprocess.Popen[bytes]]], Awaitable[None]]


def _with_link(ref: RefereeProcess, body: Body) -> None:
    """Run ``body(ctx, link, bots)`` with a connected admin link, within a bound; the
    link is closed and every bot the body started is stopped by PID afterwards."""
    bots: list[subprocess.Popen[bytes]] = []

    async def run() -> None:
        ctx = zmq.asyncio.Context()
        link = AdminLink(ctx, ref.endpoint, "organiser-test", ref.admin_key)
        try:
            welcome = await link.connect(timeout=WAIT_S)
            assert welcome["type"] == "welcome" and welcome["role"] == "admin"
            await body(ctx, link, bots)
        finally:
            await link.close()
            ctx.term()

    try:
        asyncio.run(asyncio.wait_for(run(), 150))
    finally:
        for b in bots:
            if b.poll() is None:
                b.terminate()
            b.wait(30)


async def _watched(link: AdminLink, table: str) -> tuple[dict[str, Any], asyncio.Queue[dict[str, Any]]]:
    """A reserved table created and watched: its table_created and its feed."""
    created = await link.request({"type": "create_table", "table": table, "reserved": True, "rules": {"target_score": 30}})
    q: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    link.subscribe(table, q.put_nowait)
    snap = await link.request({"type": "watch", "table": table})
    assert snap["type"] == "snapshot" and snap["status"] == "waiting"
    return created, q


def test_the_admin_link_creates_watches_pings_and_sees_the_referee_go(ref: RefereeProcess) -> None:
    async def body(ctx: zmq.asyncio.Context, link: AdminLink, bots: list[subprocess.Popen[bytes]]) -> None:
        assert (link.heartbeat_s, link.liveness) == (0.2, 3)  # the welcome's, through the core
        created, q = await _watched(link, "lnk")
        with pytest.raises(RequestFailed) as e:
            await link.request({"type": "create_table", "table": "lnk"})
        assert e.value.name == "table_exists"
        bots.extend(_bot(ref.endpoint, t) for t in created["seat_tokens"])
        await _until(q, "game_start")
        end = await _until(q, "game_end")
        assert end["termination"] == "normal"
        while not link.rtt_ms:  # pings go every heartbeat; the game may be quicker
            await asyncio.sleep(0.05)  # bounded by the wait_for around the body
        assert link.rtt_summary()["pings"] >= 1
        gone: list[str] = []
        link.on_gone(gone.append)
        os.kill(ref.proc.pid, signal.SIGSTOP)
        await asyncio.wait_for(link.gone_event.wait(), WAIT_S)
        assert gone and "silent" in gone[0]
        assert (await _until(q, "_referee_gone"))["reason"] == gone[0]
        with pytest.raises(RefereeGone):
            await link.request({"type": "ping"})

    _with_link(ref, body)


def test_resign_seat_takes_the_reserved_seat_and_resigns(ref: RefereeProcess) -> None:
    async def body(ctx: zmq.asyncio.Context, link: AdminLink, bots: list[subprocess.Popen[bytes]]) -> None:
        created, q = await _watched(link, "gone")
        toks = created["seat_tokens"]
        bots.append(_bot(ref.endpoint, toks[1]))  # seat 0's bot "died" before it started
        assert await resign_seat(ctx, ref.endpoint, toks[0], "gone", timeout=WAIT_S) == "resigned"
        end = await _until(q, "game_end")
        assert end["termination"] == "resigned" and end["at_fault"] == 0, end
        assert await resign_seat(ctx, ref.endpoint, "0" * 32, "gone", timeout=WAIT_S) == "could not take the seat: bad_token"

    _with_link(ref, body)
