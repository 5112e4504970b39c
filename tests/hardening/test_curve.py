"""CURVE mode (issue 9 §4; referee/security.py, clients/sdk/curve.py).

``okgin referee --curve-keys DIR --allow KEYS``: allowed clients play as usual, the bytes
on the wire are encrypted (a recording TCP relay between client and referee finds
neither the client's name nor its token, while the same recording of a plain referee
finds both), and unknown keys, plain clients and clients trusting the wrong referee key
fail the handshake — observed through ZeroMQ's socket monitor, not by waiting.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import zmq
import zmq.auth
from bounded import dealer
from zmq.utils.monitor import recv_monitor_message

from .hkit import Raw, RefProc, Seats, expected_record, journal_end, reserved_table

pytestmark = pytest.mark.timeout(300)

HANDSHAKE = (
    zmq.EVENT_HANDSHAKE_SUCCEEDED
    | zmq.EVENT_HANDSHAKE_FAILED_AUTH
    | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL
    | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL
)


def gen(directory: Path, name: str) -> Path:
    out = subprocess.run(
        [sys.executable, "-m", "okgin", "referee", "--gen-keys", str(directory), "--key-name", name],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert f"{name}.key_secret" in out.stdout
    return directory / f"{name}.key_secret"


def curve_of(server_key: Path, client_secret: Path | None) -> tuple[bytes, bytes, bytes]:
    server_public, _ = zmq.auth.load_certificate(str(server_key))
    if client_secret is None:
        public, secret = zmq.curve_keypair()
    else:
        public, secret = zmq.auth.load_certificate(str(client_secret))
    assert secret is not None
    return server_public, public, secret


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("keys")
    k = {"dir": root / "referee", "allowed": root / "allowed", "outsiders": root / "outsiders"}
    gen(k["dir"], "server")
    k["allowed"].mkdir()
    for name in ("org", "alice", "bob"):
        k[name] = gen(root / "clients", name)
        shutil.copy(root / "clients" / f"{name}.key", k["allowed"] / f"{name}.key")
    k["mallory"] = gen(k["outsiders"], "mallory")
    k["server"] = k["dir"] / "server.key"
    return k


def handshake(endpoint: str, curve: tuple[bytes, bytes, bytes] | None) -> tuple[int, zmq.Socket]:
    """Connect a DEALER (CURVE or plain), say hello, return the first handshake event.

    The hello is sent without blocking: a handshake that already failed by then (the test
    thread descheduled between connect and send) can leave the DEALER without any pipe
    (FAILED_AUTH always, FAILED_PROTOCOL when the client noticed the mismatch first), and
    a blocking send on a DEALER with no pipe never returns. Not queued, it cannot be
    answered either, which is what the tests check.
    """
    s = dealer(curve=curve)
    mon = s.get_monitor_socket(HANDSHAKE)
    s.connect(endpoint)
    with contextlib.suppress(zmq.Again):
        s.send(b"\x83\xa4type\xa5hello\xa8protocol\x01\xa4name\xa1x", zmq.NOBLOCK)  # a (bad) hello: anything would do
    try:
        assert mon.poll(20000), "no handshake event"
        ev = recv_monitor_message(mon)["event"]
    finally:
        s.disable_monitor()
        mon.close(0)
    return ev, s


class Relay(threading.Thread):
    """A TCP relay on 127.0.0.1 that records every byte passing through, both ways."""

    def __init__(self, target_port: int) -> None:
        super().__init__(daemon=True)
        self.target = target_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.recorded = bytearray()
        self.stop_flag = threading.Event()

    def run(self) -> None:
        import selectors

        self.listener.settimeout(30)
        client, _ = self.listener.accept()
        upstream = socket.create_connection(("127.0.0.1", self.target), timeout=30)
        client.settimeout(30)  # sendall below: bounded even if a side stops reading
        sel = selectors.DefaultSelector()
        sel.register(client, selectors.EVENT_READ, upstream)
        sel.register(upstream, selectors.EVENT_READ, client)
        while not self.stop_flag.is_set():
            for key, _ in sel.select(0.1):
                data = key.fileobj.recv(65536)  # type: ignore[union-attr]
                if not data:
                    self.stop_flag.set()
                    break
                self.recorded += data
                key.data.sendall(data)
        client.close()
        upstream.close()
        self.listener.close()


def talk_through_relay(ref: RefProc, curve: tuple[bytes, bytes, bytes] | None, name: str) -> tuple[bytes, str]:
    relay = Relay(ref.port)
    relay.start()
    c = Raw(f"tcp://127.0.0.1:{relay.port}", curve=curve)
    w = c.hello(name)
    c.request({"type": "join", "table": f"t-{name}"}, "seated")
    c.request({"type": "ping"}, "pong")
    c.close()
    relay.stop_flag.set()
    relay.join(10)
    return bytes(relay.recorded), w["token"]


def test_curve_referee_encrypts_admits_and_refuses(tmp_path: Path, keys: dict[str, Path]) -> None:
    ref = RefProc(tmp_path, "--curve-keys", str(keys["dir"]), "--allow", str(keys["allowed"]), label="curve")
    plain = RefProc(tmp_path / "plain", label="plain")
    try:
        server = keys["server"]
        # allowed clients play a whole game
        org = Raw(ref.endpoint, curve=curve_of(server, keys["org"]))
        org.hello("organiser", role="admin", admin_key="hardening-admin-key")
        toks = reserved_table(org, "enc", 61, rules={"target_score": 40})
        seats = Seats()
        for s, who in enumerate(("alice", "bob")):
            c = Raw(ref.endpoint, curve=curve_of(server, keys[who]))
            c.hello(who, token=toks[s])
            seats.add("enc", s, c)
        seats.drive()
        assert journal_end(ref.journal_dir, "enc")["record"] == expected_record({"variant": "oklahoma", "target_score": 40}, 61)
        seats.close()
        # the wire carries neither names nor tokens in clear; the plain referee's does
        marker = "PLAINTEXT-marker-alice"
        wire, token = talk_through_relay(ref, curve_of(server, keys["alice"]), marker)
        assert len(wire) > 200
        assert marker.encode() not in wire and token.encode() not in wire and b"welcome" not in wire
        wire, token = talk_through_relay(plain, None, marker)
        assert marker.encode() in wire and token.encode() in wire  # the recording works
        # refused before any protocol: an unknown key, no CURVE, the wrong referee key
        ev, s = handshake(ref.endpoint, curve_of(server, keys["mallory"]))
        assert ev == zmq.EVENT_HANDSHAKE_FAILED_AUTH
        assert not s.poll(300)  # and nothing came back (no reply can exist: no session)
        s.close(0)
        ev, s = handshake(ref.endpoint, None)
        assert ev in (zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL, zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL)
        s.close(0)
        impostor_server = gen(tmp_path / "impostor", "server").with_suffix(".key")
        ev, s = handshake(ref.endpoint, curve_of(impostor_server, keys["alice"]))
        assert ev != zmq.EVENT_HANDSHAKE_SUCCEEDED
        s.close(0)
        ev, s = handshake(ref.endpoint, curve_of(server, keys["bob"]))
        assert ev == zmq.EVENT_HANDSHAKE_SUCCEEDED
        s.close(0)
        # the SDK (okgin bot) connects with keys from the environment
        toks = reserved_table(org, "sdk-enc", 62, rules={"target_score": 30})
        env = {**os.environ, "OKGIN_CURVE_SERVER_KEY": str(server), "OKGIN_CURVE_CLIENT_KEY": str(keys["bob"])}
        bots = [
            subprocess.Popen(
                [sys.executable, "-m", "okgin", "bot", "simple", "--connect", ref.endpoint, "--token", tok, "-q"],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            for tok in toks
        ]
        for b in bots:
            _, err = b.communicate(timeout=120)
            assert b.returncode == 0, err.decode()[-2000:]
        assert journal_end(ref.journal_dir, "sdk-enc")["termination"] == "normal"
        org.close()
        assert ref.internal_errors() == []
    finally:
        ref.stop()
        plain.stop()


def test_allow_any_encrypts_without_an_allow_list(tmp_path: Path, keys: dict[str, Path]) -> None:
    ref = RefProc(tmp_path, "--curve-keys", str(keys["dir"]), "--allow", "any", label="any")
    try:
        c = Raw(ref.endpoint, curve=curve_of(keys["server"], None))  # a fresh, unlisted key
        assert c.hello("anyone")["type"] == "welcome"
        c.close()
        ev, s = handshake(ref.endpoint, None)
        assert ev != zmq.EVENT_HANDSHAKE_SUCCEEDED
        s.close(0)
    finally:
        ref.stop()


def test_curve_settings_are_checked_at_start(tmp_path: Path, keys: dict[str, Path]) -> None:
    def start(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "okgin", "referee", "--bind", "tcp://127.0.0.1:0", "--no-journal", *args],
            capture_output=True,
            text=True,
            timeout=60,
        )

    r = start("--curve-keys", str(keys["dir"]))
    assert r.returncode == 2 and "--allow" in r.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    r = start("--curve-keys", str(keys["dir"]), "--allow", str(empty))
    assert r.returncode == 2 and "no *.key" in r.stderr
    r = start("--curve-keys", str(empty), "--allow", "any")
    assert r.returncode == 2 and "server.key_secret" in r.stderr
