"""A stopping referee delivers its last words: ``shutdown`` reaches every client still
connected, also one whose queue is backed up at the moment of the signal (protocol.md
§5.24), and the process still ends cleanly with every journal closed.

Why a backed-up client: a referee that closes its socket with LINGER=0 after a fixed
short pause drops whatever ZeroMQ has not written yet, and the ``shutdown`` is always
the last message queued. A client that has asked for a lot (here: hundreds of
snapshots) and not read them yet when the signal arrives is exactly the one that lost
it; the referee must keep writing, for a bounded time, to clients that still read.
"""

from __future__ import annotations

import asyncio
import json
import signal
import time

import msgpack
import pytest
import zmq
from bounded import dealer
from refharness import Client
from test_ref_cli import RefereeProcess, spawn  # noqa: F401  (the fixture)

from referee.replay import check_file

pytestmark = pytest.mark.timeout(120)

SNAPSHOTS = 20000  # about 10 MB of replies: more than the kernel's socket buffers hold


def _backed_up_spectator(endpoint: str, table: str, n: int) -> zmq.Socket:
    """A spectator that asks for ``n`` snapshots of ``table`` and reads none yet (its
    small receive buffer keeps the replies beyond its own queue waiting at the referee)."""
    sock = dealer(endpoint, ctx=Client.ctx, RCVBUF=4096)
    sock.send(msgpack.packb({"type": "hello", "id": 0, "protocol": 1, "role": "spectator", "name": "slow"}))
    assert sock.poll(20000), "no welcome"
    assert msgpack.unpackb(sock.recv())["type"] == "welcome"
    for i in range(n):
        sock.send(msgpack.packb({"type": "watch", "id": i + 1, "table": table}))
    return sock


def _read_all(sock: zmq.Socket) -> list[dict]:
    """Every message until the referee has been silent for 3 s (it is gone by then).
    Frames are decoded only at the end: reading must keep up with the referee's writes."""
    frames = []
    while sock.poll(3000):
        frames.append(sock.recv(copy=True))
    return [msgpack.unpackb(f) for f in frames]


def test_shutdown_reaches_a_client_whose_queue_is_backed_up(make_referee):
    """The referee is stopped while megabytes of replies wait in a client's queue; the
    client starts reading a moment later and gets every reply, then ``shutdown``."""
    r = make_referee(hwm=SNAPSHOTS + 1000)
    adm = Client(r.endpoint)
    adm.hello("admin", role="admin")
    adm.send({"type": "create_table", "id": 1, "table": "big"})
    assert adm.expect("table_created")["table"] == "big"
    sent_before = r.call(lambda: r.ref.stats["sent"])
    slow = _backed_up_spectator(r.endpoint, "big", SNAPSHOTS)
    deadline = time.monotonic() + 60
    while r.call(lambda: r.ref.stats["sent"]) < sent_before + 1 + SNAPSHOTS:  # welcome and every watch answered (queued)
        assert time.monotonic() < deadline, "the referee did not answer every watch"
        time.sleep(0.05)
    stopping = asyncio.run_coroutine_threadsafe(r.ref.stop("test over"), r.loop)
    # The client is not reading when the referee stops: it starts a moment later, as a
    # client busy elsewhere or on a slow link would.
    time.sleep(0.2)
    got = _read_all(slow)
    slow.close()
    stopping.result(30)
    kinds = [m["type"] for m in got]
    assert kinds.count("snapshot") == SNAPSHOTS
    assert kinds[-1] == "shutdown" and got[-1]["reason"] == "test over", f"the last message was {got[-1:]}"
    assert adm.wait_for(lambda m: m["type"] == "shutdown")["reason"] == "test over"
    adm.close()


def test_sigterm_with_a_client_that_never_reads(spawn, tmp_path):  # noqa: F811
    """SIGTERM mid-game while one client never reads its backed-up queue: the referee
    still exits cleanly (the wait for delivery is bounded), every journal is closed, and
    every other client gets ``game_end`` then ``shutdown``."""
    rp = spawn("--table", "last", "--reserved", "--seed", "5", "--journal-dir", str(tmp_path))
    assert rp.readline() == "table last"
    toks = [rp.readline().split()[-1] for _ in range(2)]
    players = []
    for s, tok in enumerate(toks):
        c = Client(rp.endpoint)
        c.hello(f"p{s}", token=tok)
        c.expect("seated")
        players.append(c)
    for c in players:
        c.expect("game_start")
    idle = []
    for i in range(10):
        c = Client(rp.endpoint)
        c.hello(f"idle{i}", role="spectator")
        idle.append(c)
    deaf = _backed_up_spectator(rp.endpoint, "last", 900)
    deadline = time.monotonic() + 30
    while not deaf.poll(100):
        assert time.monotonic() < deadline, "the referee answers no watch"
    assert rp.stop(signal.SIGTERM) == 0
    deaf.close()
    for c in players:
        assert c.wait_for(lambda m: m["type"] == "game_end")["termination"] == "abandoned"
        assert c.wait_for(lambda m: m["type"] == "shutdown")["reason"]
        c.close()
    for c in idle:
        assert c.wait_for(lambda m: m["type"] == "shutdown")["reason"]
        c.close()
    journal = next(tmp_path.glob("last-g1-*.jsonl"))
    lines = [json.loads(x) for x in journal.read_text().splitlines()]
    assert lines[-1]["t"] == "end"
    assert check_file(journal).termination == "abandoned"
