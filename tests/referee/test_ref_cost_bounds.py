"""Bounded cost per connection (issue 14 item 3), each attack against a real referee.

Each test reproduces one way a single client could make the referee do unbounded work
or hold unbounded memory on protocol 1.3, and checks the 1.4 bound: a journal line per
refused input, advice per prompt and hand, a page of ``list_tables``, tables made per
session, sessions per connection, and expired seats released in slices.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import zmq
from refharness import Client, RefereeThread, error_of

from okgin.protocol import MAX_MESSAGE_BYTES, encode


def _seated_pair(
    referee: RefereeThread, make_client: Any, table: str = "t1", variant: str = "oklahoma"
) -> tuple[list[Client], list[dict[str, Any]]]:
    """Players at one named table, the game started; returns them and their first messages."""
    n = 3 if variant == "box" else 2
    cls = [make_client(referee.endpoint) for _ in range(n)]
    for i, c in enumerate(cls):
        c.hello(f"p{i}")
        c.request({"type": "join", "table": table, "variant": variant}, "seated")
    return cls, []


def _prompt_of(clients: list[Client], table: str) -> tuple[Client, dict[str, Any]]:
    """The first prompt any of ``clients`` gets (the others' messages are consumed)."""
    poller = zmq.Poller()
    for c in clients:
        poller.register(c.sock, zmq.POLLIN)
    for _ in range(200):
        ready = dict(poller.poll(10_000))
        assert ready, "no prompt within 10 s"
        for c in clients:
            if c.sock in ready:
                m = c.recv()
                if m["type"] == "prompt" and m["table"] == table:
                    return c, m
    raise AssertionError("no prompt")


def test_refused_inputs_cost_the_journal_a_bounded_line(make_referee: Any, make_client: Any, tmp_path: Path) -> None:
    """1.3 kept a copy of a refused act's payload: a nested map of lists grew to hundreds
    of KB a line (300 acts of 59 KB wrote 78 MB). Now each line is small, whatever came."""
    referee = make_referee(journal_dir=str(tmp_path))
    cls, _ = _seated_pair(referee, make_client)
    c, p = _prompt_of(cls, "t1")
    # the largest nested action that fits a frame: lists of short strings, as deep as allowed
    junk: Any = {"kind": "discard", "card": "Zz", "x": [["ab" * 20] * 12 for _ in range(12)]}
    while len(encode({"type": "act", "table": "t1", "seq": p["seq"], "action": junk})) > MAX_MESSAGE_BYTES - 16:
        junk["x"].pop()
    seq = p["seq"]
    for _ in range(5):
        c.send({"type": "act", "table": "t1", "seq": seq, "action": junk}, check=False)
        m = c.wait_for(lambda m: m["type"] == "error")
        assert m["name"] in ("bad_action", "illegal_action"), m
        seq = c.wait_for(lambda m: m["type"] == "prompt")["seq"]
    lines = [ln for f in tmp_path.glob("*.jsonl") for ln in f.read_bytes().split(b"\n") if b'"t":"illegal"' in ln]
    assert len(lines) == 5
    for ln in lines:
        assert len(ln) < 1024, f"an illegal line of {len(ln)} bytes"
        e = json.loads(ln)
        assert e["input"]["bytes"] > 1000 and len(e["input"]["sha256"]) == 64


def test_only_the_first_refused_answer_to_a_move_is_free(make_referee: Any, make_client: Any) -> None:
    """On 1.3 every illegal act answering one's own prompt was refunded, so a client could
    pipeline them without limit. Now the second one and later count: with a small budget
    the flood is cut off (rate_limited) while the first one never is."""
    referee = make_referee(rate_limit_per_s=1, rate_limit_burst=10)
    cls, _ = _seated_pair(referee, make_client)
    c, p = _prompt_of(cls, "t1")
    seq = p["seq"]
    names = []
    for _ in range(40):
        c.send({"type": "act", "table": "t1", "seq": seq, "action": {"kind": "discard", "card": "Zz"}}, check=False)
        m = c.wait_for(lambda m: m["type"] in ("error", "prompt"), timeout_ms=10_000)
        names.append(m.get("name", m["type"]))
        if m.get("name") == "rate_limited":
            break
        if m["type"] == "error":
            seq = c.wait_for(lambda m: m["type"] == "prompt")["seq"]
        else:
            seq = m["seq"]
    assert "rate_limited" in names, names


def test_advice_is_capped_per_prompt_and_the_captains_view_stays_small(referee: RefereeThread, make_client: Any) -> None:
    """On 1.3 a sitter could send thousands of advices for one prompt, and every later
    message to the captain carried all of them (2 MB each)."""
    cls, _ = _seated_pair(referee, make_client, "box1", "box")
    # the sitter gets an advise_prompt when the captain is prompted
    poller = zmq.Poller()
    for cl in cls:
        poller.register(cl.sock, zmq.POLLIN)
    sitter = ap = None
    for _ in range(200):
        ready = dict(poller.poll(10_000))
        assert ready
        for cl in cls:
            if cl.sock in ready:
                m = cl.recv()
                if m["type"] == "advise_prompt":
                    sitter, ap = cl, m
        if sitter is not None:
            break
    assert sitter is not None and ap is not None
    answers = []
    for i in range(10):
        m = sitter.request(
            {"type": "advise", "table": "box1", "seq": ap["seq"], "action": None, "text": f"note {i} " + "x" * 200}, "ok", "error"
        )
        answers.append(m.get("name", m["type"]))
    assert answers[:2] == ["ok", "ok"], answers
    assert set(answers[2:]) <= {"limit_reached", "stale_seq"} and "limit_reached" in answers, answers


def test_list_tables_is_paged_and_every_table_is_listed_once(make_referee: Any, make_client: Any) -> None:
    """On 1.3 one list_tables answered every table (4 MB at 10,000 tables)."""
    referee = make_referee(max_tables_per_session=1000, max_seats_per_session=1000)
    c = make_client(referee.endpoint)
    c.hello("squatter")
    for i in range(120):
        c.request({"type": "join", "table": f"sq{i}"}, "seated")
    page = c.request({"type": "list_tables"}, "tables")
    assert len(page["tables"]) == 50 and page["total"] == 120 and page["next"] is not None
    seen = [t["table"] for t in page["tables"]]
    while page["next"] is not None:
        page = c.request({"type": "list_tables", "cursor": page["next"], "limit": 200}, "tables")
        seen += [t["table"] for t in page["tables"]]
    assert seen == [f"sq{i}" for i in range(120)]
    assert c.request({"type": "list_tables", "status": "playing"}, "tables")["total"] == 0
    assert c.request({"type": "list_tables", "open": True, "limit": 1}, "tables")["total"] == 120
    error_of(c.request({"type": "list_tables", "limit": 100000}, "error", check=False), "bad_message")
    error_of(c.request({"type": "list_tables", "cursor": "not-a-cursor"}, "error", check=False), "bad_message")


def test_one_session_cannot_squat_the_table_space(referee: RefereeThread, make_client: Any) -> None:
    """On 1.3 one client created 9,996 tables in 3.6 s and locked out new joins."""
    c = make_client(referee.endpoint)
    c.hello("squatter")
    cap = referee.config.max_tables_per_session
    for i in range(cap):
        c.request({"type": "join", "table": f"sq{i}"}, "seated")
    error_of(c.request({"type": "join", "table": "one-more"}, "error"), "limit_reached")
    c.request({"type": "leave", "table": "sq0"}, "ok")  # the table closes: one may be made again
    c.request({"type": "join", "table": "one-more"}, "seated")
    other = make_client(referee.endpoint)
    other.hello("honest")
    other.request({"type": "join", "table": "fresh"}, "seated")


def test_one_connection_cannot_open_sessions_without_limit(referee: RefereeThread, make_client: Any) -> None:
    """hello, join (the seat keeps the session), bye, hello again...: on 1.3 one
    connection could open sessions until the referee's global cap."""
    c = make_client(referee.endpoint)
    cap = referee.config.max_sessions_per_connection
    for i in range(cap):
        c.hello(f"s{i}")
        c.request({"type": "join", "table": f"hold{i}"}, "seated")
        c.send({"type": "bye"})
    m = c.request({"type": "hello", "protocol": 1, "role": "player", "name": "again"}, "welcome", "error")
    error_of(m, "limit_reached")


def test_expired_seats_are_released_in_slices(make_referee: Any, make_client: Any) -> None:
    """A session holding many seats goes away: on 1.3 every grace timer fell due in one
    turn of the loop and the referee answered nothing until all were released (14 s at
    9,996 tables). Now a message that arrives meanwhile is served between slices."""
    n = 3000
    referee = make_referee(max_tables_per_session=n, max_seats_per_session=n)
    ref = referee.ref
    c = make_client(referee.endpoint)
    c.hello("many")
    for i in range(n):
        c.request({"type": "join", "table": f"m{i}"}, "seated")
    pinger = make_client(referee.endpoint)
    pinger.hello("pinger")
    order: list[str] = []
    queued = threading.Event()
    real_release = ref.desk._release
    real_handle = ref.transport.handle

    def release(*args: Any) -> None:
        if not order:
            # first release: put a ping in the referee's socket, and wait until it is there
            pinger.send({"type": "ping", "id": "mid"})
            queued.set()
            sock = ref.transport.sock
            assert sock is not None
            poller = zmq.Poller()
            poller.register(sock, zmq.POLLIN)
            assert poller.poll(10_000), "the ping did not reach the referee"
        order.append("release")
        real_release(*args)

    def handle(frames: list[bytes], door: Any = None) -> None:
        if frames[0] in ref.conns and ref.conns[frames[0]].name == "pinger":
            order.append("ping")
        real_handle(frames, door)

    def arm() -> None:
        ref.desk._release = release  # type: ignore[method-assign]
        ref.transport.handle = handle
        sess = next(s for s in ref.conns.values() if s.name == "many")
        for name, seat in list(sess.seats.items()):
            ref.desk.grace_expired(ref.tables[name], seat, sess)
        ref.desk.disconnect(sess)

    referee.call(arm)
    assert queued.wait(10)
    assert pinger.expect("pong")["id"] == "mid"
    referee.call(lambda: None)
    assert "ping" in order
    assert order.index("ping") < len(order) - 1, "the ping waited until every seat was released"


def test_a_batch_of_dear_requests_is_served_in_slices(referee: RefereeThread, make_client: Any) -> None:
    """On 1.3 a drain served everything it read (up to 2000 messages) before reading
    again: 2000 requests of a millisecond each (creating tables) held honest moves for
    two seconds. Now a drain serves for DRAIN_BUDGET_S at most; a message that arrived
    meanwhile is read and served before the rest of the batch. The referee's clock is
    a fake here that moves 1 ms per reading, so the budget runs out after a few."""
    ref = referee.ref
    flooder = make_client(referee.endpoint)
    flooder.hello("flooder")
    honest = make_client(referee.endpoint)
    honest.hello("honest")
    order: list[str] = []
    real_handle = ref.transport.handle
    clock = [time.monotonic()]  # the sessions' times were taken on the real clock

    def fake_now() -> float:
        clock[0] += 0.001
        return clock[0]

    def handle(frames: list[bytes], door: Any = None) -> None:
        sess = ref.conns.get(frames[0])
        who = sess.name if sess is not None else "?"
        if who == "flooder" and "flooder" not in order:
            honest.send({"type": "ping", "id": "honest"})  # arrives while the batch is served
            sock = ref.transport.sock
            assert sock is not None
            poller = zmq.Poller()
            poller.register(sock, zmq.POLLIN)
            assert poller.poll(10_000), "the honest ping did not reach the referee"
        order.append(who)
        real_handle(frames, door)

    release = threading.Event()
    ready = threading.Event()

    def hold() -> None:
        ref.transport.handle = handle
        ref.transport.now = fake_now
        ready.set()
        release.wait(10)

    referee.loop.call_soon_threadsafe(hold)
    assert ready.wait(10)
    for i in range(60):
        flooder.send({"type": "ping", "id": i})
    # all 60 are in the referee's queue before it reads (a ping reply needs no state)
    release.set()
    assert honest.expect("pong")["id"] == "honest"
    for _ in range(60):
        flooder.expect("pong")
    referee.call(lambda: None)
    assert order.count("flooder") == 60
    assert order.index("honest") < len(order) - 1, "the honest ping waited for the whole batch"
