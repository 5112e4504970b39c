"""bench/loaddriver, the compiled client side of bench/referee.py's figure (d), against a
real referee on loopback TCP.

The driver's figures are only trustworthy if it really plays: every mode must get
through hands and games (hello accepted, named tables joined and filled, every prompt
answered with a legal action, rematches accepted) and end with a well-formed JSON line.
Its error paths (bad arguments, a referee ``error``) must end the run with a non-zero
status and a sentence on stderr, since the bench reports whatever the driver prints.
Both transports are played against the real referee: ``zmtp`` (the default: the
driver's own ZMTP 3.0 over TCP, bench/loaddriver/zmtp.c) and ``zmq`` (libzmq).

What a real referee never sends (a frame cut into single bytes, a PING, a greeting that
is not ZMTP, a reserved flag...) is played by :class:`RawPeer`, a listening TCP socket
writing the referee's side of ZMTP by hand and reading the driver's with the
conformance kit's own ZMTP reader. Correctness only: nothing here asserts on how fast
anything was.
"""

from __future__ import annotations

import json
import shutil
import socket
import struct
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgpack
import pytest
import zmq
from refharness import Client, RefereeThread

from competition.conformance.zmtp import COMMAND, LONG, MORE, Direction, Frame, encode_frame, pair

ROOT = Path(__file__).resolve().parents[2]
DRIVER_DIR = ROOT / "bench" / "loaddriver"
KEYS = {"decisions", "decisions_per_s", "hands_per_s", "games", "p50_ms", "p99_ms", "mean_us", "median_us",
        "driver_cpu_s", "transport"}
TRANSPORTS = ["zmtp", "zmq"]
pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def driver() -> Path:
    """Build the driver as bench/referee.py does; skip only when the toolchain is absent."""
    missing = [tool for tool in ("make", "cc", "pkg-config") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} missing: cannot build bench/loaddriver")
    if subprocess.run(["pkg-config", "--exists", "libzmq", "msgpack"], timeout=60).returncode != 0:
        pytest.skip("pkg-config finds no libzmq or msgpack (apt: libzmq3-dev libmsgpack-dev): cannot build bench/loaddriver")
    proc = subprocess.run(["make", "-C", str(DRIVER_DIR), "-s"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"bench/loaddriver does not build:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    return DRIVER_DIR / "build" / "loaddriver"


def run(driver: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(driver), *args], capture_output=True, text=True, timeout=120)


def start(driver: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([str(driver), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def reap(proc: subprocess.Popen[str]) -> None:
    """End a driver a test left running (only the one it started, by its handle)."""
    if proc.poll() is None:
        proc.kill()
        proc.wait(30)


def check_output(proc: subprocess.CompletedProcess[str], seconds: float) -> dict[str, Any]:
    """Exit 0, "ready" then "measuring" on stderr (bench/referee.py reads the referee's CPU
    on the latter), exactly one JSON line on stdout carrying drive()'s keys."""
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines() == ["loaddriver: ready", "loaddriver: measuring"], proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 1, proc.stdout
    out: dict[str, Any] = json.loads(lines[0])
    assert KEYS <= out.keys()
    assert isinstance(out["decisions"], int) and isinstance(out["games"], int)
    assert out["decisions_per_s"] == pytest.approx(out["decisions"] / seconds, abs=1e-3)
    assert out["driver_cpu_s"] >= 0
    if out["decisions"]:
        assert 0 < out["p50_ms"] <= out["p99_ms"]  # a sorted list's order, not a timing target
        assert out["median_us"] > 0 and out["mean_us"] > 0
    return out


def table_games(referee: RefereeThread) -> dict[str, int]:
    """Games started per table b{i}, read on the referee's own loop."""
    return referee.call(lambda: {name: t.game_no for name, t in referee.ref.tables.items() if name.startswith("b")})


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("mode", ["events", "lean", "batched"])
def test_each_mode_plays_hands_and_games(driver: Path, referee: RefereeThread, mode: str, transport: str) -> None:
    out = check_output(run(driver, "--endpoint", referee.endpoint, "--tables", "5", "--seconds", "1.5",
                           "--warmup", "0.3", "--mode", mode, "--transport", transport), 1.5)
    assert out["decisions"] > 0
    assert out["hands_per_s"] > 0
    assert out["mode"] == mode and out["tables"] == 5 and out["transport"] == transport
    games = table_games(referee)
    assert sorted(games) == [f"b{i}" for i in range(5)]  # named tables b0..b4, each joined by both clients
    assert all(g >= 1 for g in games.values())  # every table filled and started
    assert sum(games.values()) >= out["games"]  # each game_end counted by the driver was a referee game


def test_paced_mode_answers_after_its_think_time(driver: Path, referee: RefereeThread) -> None:
    out = check_output(run(driver, "--endpoint", referee.endpoint, "--tables", "3", "--seconds", "1.5",
                           "--warmup", "0.2", "--think-ms", "5"), 1.5)
    assert out["decisions"] > 0
    assert out["think_ms"] == 5
    assert out["transport"] == "zmtp"  # the default: bench/referee.py passes no --transport


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_referee_error_ends_the_run(driver: Path, referee: RefereeThread,
                                   make_client: Callable[..., Client], transport: str) -> None:
    """b0 is already full when the driver joins it: the referee's table_full error is the
    driver's failure, never a silently smaller load."""
    for i in range(2):
        c = make_client(referee.endpoint)
        c.hello(f"squatter-{i}")
        c.request({"type": "join", "id": c.next_id(), "table": "b0"}, "seated")
    proc = run(driver, "--endpoint", referee.endpoint, "--tables", "2", "--seconds", "1", "--transport", transport)
    assert proc.returncode == 1
    assert "table_full" in proc.stderr
    assert proc.stdout == ""


@pytest.mark.parametrize("args, says", [
    (["--endpoint", "tcp://10.0.0.1:7117"], "loopback endpoints only"),
    (["--endpoint", "tcp://127.0.0.1:7117", "--mode", "loud"], "--mode must be"),
    (["--endpoint", "tcp://127.0.0.1:7117", "--transport", "quic"], "--transport must be"),
    (["--endpoint", "tcp://127.0.0.1:7117", "--tables", "0"], "--tables must be"),
    (["--endpoint", "tcp://127.0.0.1:7117", "--seconds", "soon"], "--seconds must be"),
    (["--tables", "5"], "usage"),
])
def test_bad_arguments_are_refused(driver: Path, args: list[str], says: str) -> None:
    proc = run(driver, *args)
    assert proc.returncode == 2
    assert says in proc.stderr
    assert proc.stdout == ""


def test_zmtp_over_ipc(driver: Path, make_referee: Callable[..., RefereeThread], tmp_path: Path) -> None:
    """ipc:// (a Unix socket, whose connect completes at once: the TCP path's connect is
    still in progress when the greeting is queued) plays like TCP."""
    referee = make_referee(bind=f"ipc://{tmp_path}/ref.sock")
    out = check_output(run(driver, "--endpoint", referee.endpoint, "--tables", "2", "--seconds", "1",
                           "--warmup", "0.2"), 1.0)
    assert out["decisions"] > 0 and out["transport"] == "zmtp"


def test_zmtp_refused_connection_ends_the_run(driver: Path) -> None:
    """Nothing listening: the zmtp path says so at once (libzmq would retry quietly)."""
    with socket.create_server(("127.0.0.1", 0)) as s:
        port = s.getsockname()[1]  # closed again: nobody listens there now
    proc = run(driver, "--endpoint", f"tcp://127.0.0.1:{port}", "--tables", "1", "--seconds", "1")
    assert proc.returncode == 1
    assert "cannot connect" in proc.stderr and "refused" in proc.stderr
    assert proc.stdout == ""


# ---------------------------------------------------------------- the referee's side by hand
SIG = b"\xff" + b"\x00" * 8 + b"\x7f"


def greeting(mechanism: bytes = b"NULL", major: int = 3, minor: int = 1) -> bytes:
    return SIG + bytes([major, minor]) + mechanism.ljust(20, b"\x00") + b"\x00" + b"\x00" * 31


def command(name: bytes, data: bytes = b"") -> bytes:
    body = bytes([len(name)]) + name + data
    if len(body) > 255:
        return bytes([COMMAND | LONG]) + struct.pack(">Q", len(body)) + body
    return bytes([COMMAND, len(body)]) + body


def ready(socket_type: bytes = b"ROUTER") -> bytes:
    props = b"\x0bSocket-Type" + struct.pack(">I", len(socket_type)) + socket_type + b"\x08Identity" + b"\x00" * 4
    return command(b"READY", props)


def message(msg: dict[str, Any]) -> bytes:
    return encode_frame(msgpack.packb(msg, use_bin_type=True))


class RawPeer:
    """The referee's end of the driver's connections, written by hand on plain TCP."""

    def __init__(self, rcvbuf: int | None = None) -> None:
        self.server = socket.socket()
        if rcvbuf is not None:  # inherited by the accepted connections (fixed: no autotuning)
            self.server.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.server.bind(("127.0.0.1", 0))
        self.server.listen()
        self.server.settimeout(20)
        self.endpoint = f"tcp://127.0.0.1:{self.server.getsockname()[1]}"
        self.conns: list[tuple[socket.socket, Direction]] = []

    def accept(self, n: int) -> None:
        for _ in range(n):
            conn, _ = self.server.accept()
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn.settimeout(20)
            mine, theirs = pair("driver", "peer")
            theirs.feed(SIG + b"\x03")  # our major version, so the reader frames as 3.x
            self.conns.append((conn, mine))

    def send(self, i: int, data: bytes, bytewise: bool = False) -> None:
        conn = self.conns[i][0]
        if not bytewise:
            conn.sendall(data)
            return
        for k in range(len(data)):  # one byte per segment: the driver's reads see every cut
            conn.sendall(data[k:k + 1])
            time.sleep(0.0002)

    def read(self, i: int, want: Callable[[list[bytes | Frame]], bool]) -> list[bytes | Frame]:
        """The driver's items (raw greeting and command bytes, message frames) until ``want``."""
        conn, reader = self.conns[i]
        items: list[bytes | Frame] = []
        while not want(items):
            data = conn.recv(65536)
            assert data, f"the driver closed connection {i}; items so far: {items}"
            items += reader.feed(data)
        return items

    def close(self) -> None:
        for conn, _ in self.conns:
            conn.close()
        self.server.close()


def frames(items: list[bytes | Frame]) -> list[dict[str, Any]]:
    return [msgpack.unpackb(it.body) for it in items if isinstance(it, Frame)]


@pytest.fixture
def peer() -> Any:
    p = RawPeer()
    yield p
    p.close()


def end_by_referee_error(peer: RawPeer, proc: subprocess.Popen[str]) -> str:
    """Send the driver a referee ``error`` (which must end its run); its stderr."""
    peer.send(1, message({"type": "error", "code": 1, "name": "test_over", "message": "enough"}))
    return proc.communicate(timeout=30)[1]


def open_table(peer: RawPeer) -> None:
    """Both connections through the handshake, hello, welcome and join."""
    peer.accept(2)
    for i in range(2):
        peer.read(i, lambda it: len(it) >= 4)
        peer.send(i, greeting() + ready())
        assert frames(peer.read(i, lambda it: any(isinstance(x, Frame) for x in it)))[0]["type"] == "hello"
        peer.send(i, message({"type": "welcome", "protocol": 1, "token": "t", "heartbeat_ms": 5000}))
    for i in range(2):
        assert frames(peer.read(i, lambda it: any(isinstance(x, Frame) for x in it))) == [
            {"type": "join", "table": "b0"}]


def test_zmtp_handshake_pings_long_and_cut_frames(driver: Path, peer: RawPeer) -> None:
    """The driver's greeting and READY (DEALER), its hello held back until our READY
    (libzmq drops a connection whose message comes first), a PING answered with a PONG
    carrying our context, a long welcome (8-byte size) cut into single bytes, then the
    joins; our error ends the run with its name."""
    proc = start(driver, "--endpoint", peer.endpoint, "--tables", "1", "--seconds", "5")
    try:
        peer.accept(2)
        for i in range(2):
            items = peer.read(i, lambda it: len(it) >= 4)  # signature, version, rest, READY
            greet = b"".join(it for it in items[:3] if isinstance(it, bytes))
            assert greet == greeting(minor=0)  # 3.0, NULL, as-server 0, zero filler
            assert items[3][:2] == bytes([COMMAND, len(items[3]) - 2]) and b"\x05READY" in items[3]
            assert b"Socket-Type\x00\x00\x00\x06DEALER" in items[3]
            assert not frames(items)
        time.sleep(0.2)
        for conn, _ in peer.conns:  # still nothing: the hello waits for our READY
            conn.setblocking(False)
            with pytest.raises(BlockingIOError):
                conn.recv(1)
            conn.settimeout(20)
        for i in range(2):
            peer.send(i, greeting() + ready(), bytewise=i == 0)
            hello = frames(peer.read(i, lambda it: any(isinstance(x, Frame) for x in it)))
            assert hello[0]["type"] == "hello" and hello[0]["name"] == f"b0-{i}"
        ping = command(b"PING", b"\x00\x64" + b"ctx-42")
        peer.send(0, ping, bytewise=True)
        pong = peer.read(0, lambda it: len(it) >= 1)
        assert pong == [command(b"PONG", b"ctx-42")]
        welcome = {"type": "welcome", "protocol": 1, "token": "t" * 400, "heartbeat_ms": 5000}
        assert encode_frame(msgpack.packb(welcome))[0] & LONG
        for i in range(2):
            peer.send(i, command(b"SUBSCRIBE", b"x") + message(welcome), bytewise=i == 0)  # other commands: ignored
        for i in range(2):
            joins = frames(peer.read(i, lambda it: any(isinstance(x, Frame) for x in it)))
            assert joins == [{"type": "join", "table": "b0"}]
        err = end_by_referee_error(peer, proc)
    finally:
        reap(proc)
    assert proc.returncode == 1
    assert "referee error test_over" in err and "enough" in err


def test_zmtp_answers_libzmq_heartbeats(driver: Path) -> None:
    """A real libzmq ROUTER that PINGs every 20 ms and drops a peer silent for 100 ms
    after a PING: the driver, left waiting 0.5 s for its welcome, stays connected only by
    answering PONG (libzmq's own ZMTP, not our reading of the RFC)."""
    ctx = zmq.Context.instance()
    router = ctx.socket(zmq.ROUTER)
    for opt, val in ((zmq.HEARTBEAT_IVL, 20), (zmq.HEARTBEAT_TIMEOUT, 100), (zmq.ROUTER_MANDATORY, 1),
                     (zmq.LINGER, 0), (zmq.RCVTIMEO, 20000), (zmq.SNDTIMEO, 20000)):
        router.setsockopt(opt, val)
    router.bind("tcp://127.0.0.1:0")
    proc = start(driver, "--endpoint", router.getsockopt_string(zmq.LAST_ENDPOINT), "--tables", "1",
                 "--seconds", "5")
    try:
        hellos = [router.recv_multipart() for _ in range(2)]
        assert sorted(msgpack.unpackb(body)["name"] for _, body in hellos) == ["b0-0", "b0-1"]
        time.sleep(0.5)  # about 25 PINGs each, every one of them answered or the peer is gone
        welcome = {"type": "welcome", "protocol": 1, "token": "t", "heartbeat_ms": 5000}
        for rid, _ in hellos:
            router.send_multipart([rid, msgpack.packb(welcome)])  # ROUTER_MANDATORY: raises if gone
        joins = [msgpack.unpackb(router.recv_multipart()[1]) for _ in range(2)]
        assert joins == [{"type": "join", "table": "b0"}] * 2
        router.send_multipart([hellos[0][0], msgpack.packb({"type": "error", "code": 1, "name": "test_over",
                                                            "message": "enough"})])
        _, err = proc.communicate(timeout=30)
    finally:
        reap(proc)
        router.close(0)
    assert proc.returncode == 1
    assert "referee error test_over" in err


def test_zmtp_queues_what_the_socket_does_not_take(driver: Path) -> None:
    """A referee that reads nothing while it sends 120 000 prompts: the acts (about 7 MB)
    outgrow the kernel's buffers (a 4 KB receive buffer here, at most 4 MB of send
    buffer), so the driver must queue what would block and flush it on EPOLLOUT. Every
    act arrives, once, in order."""
    n = 120_000
    peer = RawPeer(rcvbuf=4096)
    proc = start(driver, "--endpoint", peer.endpoint, "--tables", "1", "--seconds", "60")
    try:
        open_table(peer)
        legal = [{"kind": "pass"}, {"kind": "take"}]
        peer.send(0, b"".join(message({"type": "prompt", "table": "b0", "seq": k, "legal": legal})
                              for k in range(1, n + 1)))
        conn, reader = peer.conns[0]
        seqs: list[int] = []
        while len(seqs) < n:
            data = conn.recv(1 << 20)
            assert data, f"the driver closed the connection after {len(seqs)} acts"
            for item in reader.feed(data):
                assert isinstance(item, Frame)
                act = msgpack.unpackb(item.body)
                assert act == {"type": "act", "table": "b0", "seq": act["seq"], "action": {"kind": "pass"}}
                seqs.append(act["seq"])
        assert seqs == list(range(1, n + 1))
        err = end_by_referee_error(peer, proc)
    finally:
        reap(proc)
        peer.close()
    assert proc.returncode == 1
    assert "referee error test_over" in err


@pytest.mark.parametrize("payload, says", [
    (b"HTTP/1.1 200 OK\r\n\r\n", "not a ZMTP 3 greeting"),
    (SIG + b"\x01\x05", "ZMTP revision 1"),
    (greeting(b"PLAIN"), "mechanism PLAIN"),
    (greeting() + ready(b"PUB"), "a PUB socket"),
    (greeting() + command(b"HELLO"), "expected READY"),
    (greeting() + command(b"ERROR", b"\x0bbad-handshk"), "ZMTP ERROR: bad-handshk"),
    (greeting() + message({"type": "welcome"}), "before the peer's READY"),
    (greeting() + ready() + b"\x08\x01x", "reserved bits"),
    (greeting() + ready() + bytes([MORE, 1]) + b"x" + encode_frame(b"y"), "multipart"),
    (greeting() + ready() + bytes([LONG]) + struct.pack(">Q", 1 << 40), "a frame of 1099511627776 bytes"),
    (greeting() + ready() + command(b"PING", b"\x00"), "a PING of 1 bytes"),
    (greeting() + ready() + encode_frame(b"\xc1"), "not a msgpack map"),
    (greeting() + ready() + command(b"READY"), "a second READY"),
])
def test_zmtp_violations_end_the_run(driver: Path, peer: RawPeer, payload: bytes, says: str) -> None:
    """Whatever is not ZMTP (or not one msgpack map per frame) ends the run: status 1,
    the reason on stderr, no JSON line."""
    proc = start(driver, "--endpoint", peer.endpoint, "--tables", "1", "--seconds", "1")
    try:
        peer.accept(2)
        for i in range(2):
            peer.send(i, payload)
        out, err = proc.communicate(timeout=60)
    finally:
        reap(proc)
    assert proc.returncode == 1, err
    assert says in err
    assert out == ""
