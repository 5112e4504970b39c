"""The test bot leaves by itself when its referee goes silent.

A tournament test whose worker dies mid-run leaves its bots behind unless each notices
the referee is gone; a protobot left playing heartbeats to nobody was once found
orphaned after a CI run. These tests stand in for the referee with a bare ROUTER on
127.0.0.1 that answers ``hello`` with a ``welcome`` (or nothing) and then says no more.
"""

from __future__ import annotations

import subprocess
import sys

import msgpack
import zmq
from bounded import limit

from .tourkit import PROTOBOT

WAIT_S = 60  # generous bound for a loaded 2-core machine; the bot leaves well before it


def start_bot(endpoint: str, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, PROTOBOT, endpoint, "tok", "--random", "2", *extra],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def silent_router() -> tuple[zmq.Context, zmq.Socket, str]:
    ctx = zmq.Context()
    sock = limit(ctx.socket(zmq.ROUTER))
    port = sock.bind_to_random_port("tcp://127.0.0.1")
    return ctx, sock, f"tcp://127.0.0.1:{port}"


def test_protobot_leaves_when_no_welcome_comes() -> None:
    ctx, sock, endpoint = silent_router()
    bot = start_bot(endpoint, "--gone-after", "1.5")
    try:
        assert sock.poll(WAIT_S * 1000), "the bot never said hello"
        _ident, raw = sock.recv_multipart()
        assert msgpack.unpackb(raw)["type"] == "hello"
        _out, err = bot.communicate(timeout=WAIT_S)
        assert bot.returncode == 6, err
        assert "no message from the referee for 1.5 s" in err
    finally:
        bot.kill()
        bot.wait(timeout=WAIT_S)
        sock.close()
        ctx.term()


def test_protobot_leaves_when_the_referee_goes_silent_after_welcome() -> None:
    ctx, sock, endpoint = silent_router()
    # before the welcome it would wait 60 s: only the welcome's heartbeat can make it leave sooner
    bot = start_bot(endpoint)
    try:
        assert sock.poll(WAIT_S * 1000), "the bot never said hello"
        ident, _raw = sock.recv_multipart()
        welcome = {"type": "welcome", "id": 1, "session": "s", "name": "protobot", "resumed": False,
                   "heartbeat_ms": 200, "liveness": 3, "max_message_bytes": 4096}
        sock.send_multipart([ident, msgpack.packb(welcome)])
        heartbeats = 0
        for _ in range(WAIT_S * 10):  # short polls, so the loop ends as soon as the bot does
            if bot.poll() is not None:
                break
            if sock.poll(100):
                _ident, raw = sock.recv_multipart()
                heartbeats += msgpack.unpackb(raw)["type"] == "heartbeat"
        _out, err = bot.communicate(timeout=WAIT_S)
        assert bot.returncode == 6, err
        assert "no message from the referee for 1.2 s" in err  # 2 x liveness 3 x 0.2 s
        assert heartbeats >= 2  # it kept its side of the liveness rule while it waited
    finally:
        bot.kill()
        bot.wait(timeout=WAIT_S)
        sock.close()
        ctx.term()
