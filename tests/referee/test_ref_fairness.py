"""Service order across connections (protocol.md §2, informative): when several
connections' messages wait at once, the referee serves first the session it sent to
least recently, and one connection's messages keep their order.

Why it matters: ZeroMQ's ROUTER fair-queue lets a newly active peer overtake older ones,
which under load made some tables' decisions wait several rounds (bench/README.md).
The test holds the referee's loop, queues pings from three connections in one order,
gives the sessions the opposite "last sent" order, releases the loop, and reads the
order in which the real referee handled them (a recording wrapper around its handler,
which still runs the real one)."""

from __future__ import annotations

import threading
import time
from typing import Any

from refharness import Client, RefereeThread


def _hold_loop(r: RefereeThread, before: Any) -> threading.Event:
    """Block the referee's loop (after running ``before`` on it) until the event is set."""
    release = threading.Event()
    ready = threading.Event()

    def block() -> None:
        before()
        ready.set()
        release.wait(10)

    r.loop.call_soon_threadsafe(block)
    assert ready.wait(10)
    return release


def test_waiting_messages_are_served_longest_waiting_session_first(referee: RefereeThread, make_client: Any) -> None:
    a, b, c = (make_client(referee.endpoint) for _ in range(3))
    toks = {}
    for name, cl in (("a", a), ("b", b), ("c", c)):
        toks[name] = cl.hello(name)["token"]
    ref = referee.ref
    by_token = {}

    def find() -> None:
        for s in ref.conns.values():
            by_token[s.token] = s

    referee.call(find)
    handled: list[tuple[str, Any]] = []
    real = ref.transport.handle

    def record(frames: list[bytes], door: Any = None) -> None:
        sess = ref.conns.get(frames[0])
        handled.append((sess.name if sess is not None else "?", frames[1]))
        real(frames, door)

    def age() -> None:
        # a was sent to most recently, c longest ago: c is served first
        now = time.monotonic()
        by_token[toks["a"]].last_sent = now - 1
        by_token[toks["b"]].last_sent = now - 2
        by_token[toks["c"]].last_sent = now - 3
        ref.transport.handle = record

    release = _hold_loop(referee, age)
    try:
        a.send({"type": "ping", "id": "a1"})
        b.send({"type": "ping", "id": "b1"})
        a.send({"type": "ping", "id": "a2"})
        c.send({"type": "ping", "id": "c1"})
        time.sleep(1.0)  # all four reach the referee's queues (its I/O thread runs on) while its loop is held
    finally:
        release.set()
    assert [a.expect("pong")["id"] for _ in range(2)] == ["a1", "a2"]  # one connection: in order
    assert b.expect("pong")["id"] == "b1" and c.expect("pong")["id"] == "c1"
    assert [name for name, _ in handled] == ["c", "b", "a", "a"]


def test_a_request_arriving_while_others_are_handled_is_not_left_waiting(referee: RefereeThread, make_client: Any) -> None:
    """After serving a batch, the referee looks at the socket once more: a send while
    handling can consume the edge of ZeroMQ's descriptor, and a message that arrived
    meanwhile would otherwise wait until the referee next sent something outside a
    drain (at worst a heartbeat, heartbeat_ms later; this failed without it). Here many
    clients ping at once, repeatedly; every ping must be answered within a timeout far
    below heartbeat_ms (a correctness bound, not a speed measurement)."""
    clients: list[Client] = [make_client(referee.endpoint) for _ in range(8)]
    for i, cl in enumerate(clients):
        cl.hello(f"p{i}")
    assert referee.config.heartbeat_ms >= 2000
    for rnd in range(50):
        for cl in clients:
            cl.send({"type": "ping", "id": rnd})
        for cl in clients:
            assert cl.expect("pong", timeout_ms=referee.config.heartbeat_ms // 2)["id"] == rnd


def test_a_new_connections_hello_waits_behind_sessions_messages(referee: RefereeThread, make_client: Any) -> None:
    """A connection without a session sorts last (as far as the referee knows it began
    waiting just now), so a ``hello`` resuming a token cannot overtake a ``bye`` that
    the session's old connection sent first (tests/hardening/test_security.py saw that
    happen under load when new connections sorted first)."""
    old = make_client(referee.endpoint)
    token = old.hello("mover")["token"]
    ref = referee.ref
    handled: list[str] = []
    real = ref.transport.handle

    def record(frames: list[bytes], door: Any = None) -> None:
        sess = ref.conns.get(frames[0])
        handled.append("new" if sess is None else sess.name)
        real(frames, door)

    def spy() -> None:
        ref.transport.handle = record

    new = make_client(referee.endpoint, validate="none")
    release = _hold_loop(referee, spy)
    try:
        old.send({"type": "bye"})
        new.send({"type": "hello", "protocol": 1, "role": "player", "name": "mover", "token": token})
        time.sleep(1.0)  # both reach the referee's queues while its loop is held
    finally:
        release.set()
    w = new.expect("welcome", "error")
    assert handled[:2] == ["mover", "new"], handled
    # the bye came first and ended the seatless session, so its token no longer resumes it
    # (served the other way round, the hello would have been welcomed with resumed=true)
    assert w["type"] == "error" and w["name"] == "bad_token", w
