"""Issue 14 items 4 and 5: sessions belong to tokens, not routing ids; admin is closed.

Against real referees on loopback (an in-process :class:`referee.server.Referee` on its
own thread, or ``okgin referee`` as a subprocess):

- a client that chooses its routing id is refused (``bad_identity``), so it can never
  take over a dropped client's connection, whose session the referee still holds;
- when two live connections hold one token, the newer wins and the older is told
  ``session_taken`` (not ``hello_first``, which tells a client to resume: the steal
  loop), and the SDK stops instead of resuming;
- a default ``okgin referee`` closes admin: it generates a key, prints it on stderr,
  writes it to ``JOURNAL_DIR/.okgin-state/admin.key`` (0600); ``--open-admin`` opens it.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgpack
import pytest
import zmq
from bounded import readline
from refharness import RefereeThread

WAIT_MS = 10000  # an upper bound for failures only; never asserted on


def dealer(endpoint: str, **options: Any) -> zmq.Socket:
    s = zmq.Context.instance().socket(zmq.DEALER)
    s.setsockopt(zmq.LINGER, 0)
    s.setsockopt(zmq.SNDTIMEO, WAIT_MS)
    for k, v in options.items():
        s.setsockopt(getattr(zmq, k), v)
    s.connect(endpoint)
    return s


def send(s: zmq.Socket, msg: dict[str, Any]) -> None:
    s.send(msgpack.packb(msg, use_bin_type=True))


def recv(s: zmq.Socket, timeout_ms: int = WAIT_MS) -> dict[str, Any] | None:
    """The next message other than a heartbeat, or None if none comes in time."""
    while s.poll(timeout_ms):
        m = msgpack.unpackb(s.recv(), raw=False)
        if m.get("type") != "heartbeat":
            return m
    return None


def hello(s: zmq.Socket, name: str, **extra: Any) -> dict[str, Any] | None:
    send(s, {"type": "hello", "protocol": 1, "role": "player", "name": name, "id": "h", **extra})
    return recv(s)


@pytest.fixture
def slow_referee() -> Iterator[RefereeThread]:
    """Long liveness: a dropped client stays "connected" to the referee (the window an
    impostor with the same routing id would use)."""
    r = RefereeThread(heartbeat_ms=60000, liveness=5)
    yield r
    r.stop()


# ------------------------------------------------------------ routing ids
def test_a_client_chosen_routing_id_is_refused_and_cannot_take_a_seat(slow_referee: RefereeThread) -> None:
    r = slow_referee
    ep = r.endpoint
    # A sets its own routing id, says hello and joins a table, then drops.
    a = dealer(ep, ROUTING_ID=b"victim")
    m = hello(a, "alice")
    send(a, {"type": "join", "table": "g", "id": 2})
    joined = recv(a, 500)  # (a referee that accepted the id seats A here)
    a.close(0)
    # Another honest player sits at the table.
    c = dealer(ep)
    assert (hello(c, "carol") or {}).get("type") == "welcome"
    send(c, {"type": "join", "table": "g", "id": 3})
    assert (recv(c) or {}).get("type") == "seated"
    # B reuses the id and speaks without hello, as if it were A: refused, never seated.
    b = dealer(ep, ROUTING_ID=b"victim")
    got = None
    for i in range(50):  # bad_identity is answered at most once a second per id: keep asking
        send(b, {"type": "join", "table": "g", "id": 10 + i})
        send(b, {"type": "act", "table": "g", "seq": 1, "action": {"kind": "pass"}, "id": 100 + i})
        got = recv(b, 200)
        if got is not None:
            break
    assert got is not None and got["name"] == "bad_identity", f"B spoke as A: {got}"
    assert "id" not in got  # the frame was not even read
    assert m is not None and m["type"] == "error" and m["name"] == "bad_identity" and m["code"] == 2009, m
    assert "ZMQ_ROUTING_ID" in m["message"]
    assert joined is None  # answered once a second at most: A's join got nothing
    b.close(0)
    # Nothing happened in A's name: no session, no seat, the table still waits for a player.
    assert r.call(lambda: b"victim" not in r.ref.conns and len(r.ref.sessions) == 1)
    assert r.call(lambda: [s is not None for s in r.ref.tables["g"].seats]) == [True, False]
    c.close(0)


def test_a_zero_led_id_of_the_wrong_length_is_refused_too(slow_referee: RefereeThread) -> None:
    s = dealer(slow_referee.endpoint, ROUTING_ID=b"\0victim")
    m = hello(s, "mallory")
    assert m is not None and m["name"] == "bad_identity", m
    s.close(0)


# ------------------------------------------------------------ one token, two connections
def test_the_older_connection_gets_session_taken_at_once_and_for_every_message(slow_referee: RefereeThread) -> None:
    ep = slow_referee.endpoint
    old = dealer(ep)
    w = hello(old, "alice")
    assert w is not None and w["type"] == "welcome"
    new = dealer(ep)
    w2 = hello(new, "alice", token=w["token"])
    assert w2 is not None and w2["type"] == "welcome" and w2["resumed"] is True
    told = recv(old)  # sent at once, before the old connection says anything
    assert told is not None and told["name"] == "session_taken" and told["code"] == 2008 and "id" not in told, told
    send(old, {"type": "ping", "id": 7})
    again = recv(old)
    assert again is not None and again["name"] == "session_taken" and again["id"] == 7, again
    send(new, {"type": "ping", "id": 8})
    assert (recv(new) or {}).get("type") == "pong"  # the newer one keeps the session
    # A deliberate hello on the old connection is served like any other.
    w3 = hello(old, "alice-2")
    assert w3 is not None and w3["type"] == "welcome" and w3["token"] != w["token"]
    old.close(0)
    new.close(0)


def test_two_sdk_clients_with_one_token_do_not_steal_the_seat_back_and_forth() -> None:
    from clients import sdk

    r = RefereeThread(heartbeat_ms=100, liveness=20)  # A's SDK beats every 100 ms
    try:
        a = sdk.Client(r.endpoint, "alice")
        a.connect()
        a.join("g")
        outcome: list[BaseException] = []
        stop = threading.Event()

        def run_a() -> None:
            try:
                while not stop.is_set():
                    a.recv(timeout=0.05)
            except BaseException as e:
                outcome.append(e)

        b = sdk.Client(r.endpoint, "alice", token=a.token)
        # A's thread starts after B resumed: the clients are not thread-safe, so
        # each is pumped by one thread only.
        assert b.connect().resumed
        ta = threading.Thread(target=run_a, daemon=True)
        ta.start()
        failures = 0
        for _ in range(10):  # a window of ten pings and about twenty of A's heartbeats
            try:
                b.ping()
            except sdk.RefereeError:
                failures += 1
            b.recv(timeout=0.2)
        stop.set()
        ta.join(10)
        assert outcome and type(outcome[0]).__name__ == "SessionTaken", outcome
        assert isinstance(outcome[0], sdk.ConnectionLost)
        assert (a.reconnects, b.reconnects, failures) == (0, 0, 0)  # no ping-pong: one resume, B's
        sess = r.call(lambda: r.ref.sessions[a.token])
        assert r.call(lambda: sess.rid is not None and sess.seats == {"g": 0})
        with pytest.raises(sdk.ConnectionLost):
            a.send({"type": "ping"})  # A stays stopped
        b.close()
    finally:
        r.stop()


def test_okgin_bot_stops_with_status_3_when_another_process_takes_its_session(tmp_path: Path) -> None:
    r = RefereeThread(admin_key="k")
    bots: list[subprocess.Popen[str]] = []
    try:
        org = dealer(r.endpoint)
        send(org, {"type": "hello", "protocol": 1, "role": "admin", "name": "org", "admin_key": "k", "id": 1})
        assert (recv(org) or {}).get("type") == "welcome"
        send(org, {"type": "create_table", "table": "t", "reserved": True, "id": 2})
        created = recv(org)
        assert created is not None and created["type"] == "table_created", created
        tok = created["seat_tokens"][0]
        cmd = [sys.executable, "-m", "okgin", "bot", "simple", "--connect", r.endpoint, "--token", tok, "--quiet"]
        first = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        bots.append(first)
        # the first bot holds the seat once the table shows it seated
        for _ in range(600):
            if r.call(lambda: r.ref.tables["t"].seats[0] is not None and r.ref.tables["t"].seats[0].connected):
                break
            assert first.poll() is None, first.communicate(timeout=10)
            org.poll(50)  # wait a moment while the first bot starts (bounded by the loop)
        second = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        bots.append(second)
        _, err = first.communicate(timeout=60)
        assert first.returncode == 3, err
        assert "another connection took this session" in err
        assert second.poll() is None  # the newer one keeps the seat, waiting for an opponent
        org.close(0)
    finally:
        for p in bots:
            if p.poll() is None:
                p.terminate()
                p.communicate(timeout=30)
        r.stop()


# ------------------------------------------------------------ admin closed by default
class Ref:
    """``okgin referee`` on 127.0.0.1:0 with its stdout and stderr read line by line."""

    def __init__(self, tmp: Path, *args: str) -> None:
        env = {k: v for k, v in os.environ.items() if k != "OKGIN_ADMIN_KEY"}
        self.journals = tmp / "journals"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "okgin", "referee", "--bind", "tcp://127.0.0.1:0", "--journal-dir", str(self.journals), *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, env=env,
        )
        assert self.proc.stdout is not None
        first = readline(self.proc.stdout, 60, "the referee, its endpoint line").strip()
        assert first.startswith("okgin referee listening on tcp://127.0.0.1:"), first
        self.endpoint = first.split()[-1]

    def stderr_line(self) -> str:
        assert self.proc.stderr is not None
        return readline(self.proc.stderr, 60, "the referee's stderr").strip()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
        self.proc.communicate(timeout=30)


def admin_hello(endpoint: str, key: str | None) -> dict[str, Any] | None:
    s = dealer(endpoint)
    try:
        return hello(s, "org", role="admin", **({"admin_key": key} if key is not None else {}))
    finally:
        s.close(0)


def test_a_default_referee_refuses_admin_without_its_generated_key(tmp_path: Path) -> None:
    ref = Ref(tmp_path)
    try:
        m = admin_hello(ref.endpoint, None)
        assert m is not None and m["name"] == "auth_failed", m
        assert "admin.key" in m["message"]
        assert (admin_hello(ref.endpoint, "guess") or {}).get("name") == "auth_failed"
        line = ref.stderr_line()
        assert line.startswith("okgin referee: admin key "), line
        key = line.split()[4]
        path = ref.journals / ".okgin-state" / "admin.key"
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert path.read_text().strip() == key and len(key) == 32
        assert (admin_hello(ref.endpoint, key) or {}).get("type") == "welcome"
    finally:
        ref.stop()
    # Restarted with --recover, the referee keeps the key (admin sessions can resume).
    again = Ref(tmp_path, "--recover")
    try:
        assert key in again.stderr_line()
        assert (admin_hello(again.endpoint, key) or {}).get("type") == "welcome"
    finally:
        again.stop()


def test_open_admin_opens_admin_with_a_warning(tmp_path: Path) -> None:
    ref = Ref(tmp_path, "--open-admin")
    try:
        assert (admin_hello(ref.endpoint, None) or {}).get("type") == "welcome"
        assert "WARNING" in ref.stderr_line()
        assert not (ref.journals / ".okgin-state" / "admin.key").exists()
    finally:
        ref.stop()
