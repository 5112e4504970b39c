"""The sans-IO session core (okgin/protocol/session.py), without a referee: time is a
number the test passes in, messages are maps, so every rule is checked exactly.

What the drivers (the SDK's clients, the tournament's admin link, the conformance kit's
organiser) rely on: hello with and without a token, replies matched by id, the
heartbeat and silence deadlines, and the two errors that end a connection's session
(``hello_first``: resume; ``session_taken``: stop, never resume)."""

from __future__ import annotations

import pytest

from okgin.protocol import PROTOCOL_MAJOR, PROTOCOL_MINOR
from okgin.protocol.session import Due, Kind, Session

TOKEN = "a" * 32


def welcomed(now: float = 0.0, **kw: object) -> Session:
    s = Session("ann", **kw)  # type: ignore[arg-type]
    h = s.hello(now)
    got = s.receive(
        {"type": "welcome", "id": h["id"], "token": TOKEN, "heartbeat_ms": 1000, "liveness": 3, "resumed": False}, now
    )
    assert got.kind is Kind.WELCOME
    return s


def test_hello_carries_the_version_the_token_and_only_the_fields_given() -> None:
    s = Session("bot", "player", events=False)
    h = s.hello(0.0)
    assert h == {
        "type": "hello",
        "protocol": PROTOCOL_MAJOR,
        "minor": PROTOCOL_MINOR,
        "role": "player",
        "name": "bot",
        "events": False,
        "id": 1,
    }
    assert s.handshaking and not s.ready
    admin = Session("org", "admin", token=TOKEN, admin_key="k", hello_fields={"batch_events": True})
    h2 = admin.hello(0.0)
    assert (h2["token"], h2["admin_key"], h2["batch_events"], "events" in h2) == (TOKEN, "k", True, False)


def test_the_welcome_sets_the_token_and_the_deadlines() -> None:
    s = welcomed()
    assert s.ready and s.token == TOKEN and (s.heartbeat_s, s.liveness) == (1.0, 3)
    assert s.due(0.99) is None and s.wakeup(0.5) == 1.0
    assert s.due(1.0) is Due.HEARTBEAT
    assert s.heartbeat(1.0) == {"type": "heartbeat"} and s.due(1.5) is None  # sending moves the beat
    s.request({"type": "ping"}, 1.9)
    assert s.due(2.5) is None  # any message counts as a heartbeat
    assert s.due(3.01) is Due.SILENT  # nothing heard for liveness x heartbeat
    s.receive({"type": "heartbeat"}, 3.0)
    assert s.due(3.01) is not Due.SILENT


def test_no_heartbeat_is_due_while_the_hello_is_unanswered() -> None:
    s = Session("ann")
    s.hello(0.0)
    assert s.due(100.0) is None and s.wakeup(100.0) is None


def test_replies_are_matched_to_their_request_and_the_rest_is_classified() -> None:
    s = welcomed()
    ping = s.request({"type": "ping"}, 0.0)
    act = s.tag({"type": "act", "table": "t", "seq": 1, "action": {"kind": "pass"}}, 0.0)
    assert ping["id"] != act["id"] and set(s.pending()) == {ping["id"]}
    got = s.receive({"type": "pong", "id": ping["id"], "time_ms": 5}, 0.1)
    assert (got.kind, got.request, s.pending()) == (Kind.REPLY, ping["id"], {})
    refused = s.receive({"type": "error", "id": act["id"], "name": "stale_seq", "code": 4002}, 0.2)
    assert refused.kind is Kind.ERROR and refused.request is None  # nobody waits for an act's answer
    assert s.receive({"type": "prompt", "table": "t", "seq": 2}, 0.3).kind is Kind.PROMPT
    assert s.receive({"type": "advise_prompt", "table": "t", "seq": 2}, 0.3).kind is Kind.PROMPT
    assert s.receive({"type": "event", "table": "t"}, 0.3).kind is Kind.EVENT
    late = s.request({"type": "sync", "table": "t"}, 0.4)
    s.forget(late["id"])  # its caller timed out: the late answer is unasked
    assert s.receive({"type": "snapshot", "id": late["id"]}, 0.5).kind is Kind.EVENT


def test_hello_first_after_the_welcome_means_resume_with_the_token() -> None:
    s = welcomed()
    asked = s.request({"type": "ping"}, 0.0)
    got = s.receive({"type": "error", "id": asked["id"], "name": "hello_first", "code": 2001}, 0.1)
    assert got.kind is Kind.REPLY and got.error_name == "hello_first"  # the request gets it
    assert s.due(0.1) is Due.RESUME and s.wakeup(0.1) == 0.1
    unasked = welcomed()
    assert unasked.receive({"type": "error", "name": "hello_first", "code": 2001}, 0.1).kind is Kind.LOST
    h = unasked.hello(0.2)
    assert h["token"] == TOKEN and unasked.lost is None and unasked.due(0.2) is None
    back = unasked.receive({"type": "welcome", "id": h["id"], "token": TOKEN, "heartbeat_ms": 1000, "resumed": True}, 0.3)
    assert back.kind is Kind.WELCOME and unasked.resumes == 1


def test_session_taken_stops_the_session_for_good() -> None:
    s = welcomed()
    s.request({"type": "ping"}, 0.0)
    got = s.receive({"type": "error", "name": "session_taken", "code": 2008, "message": "another connection"}, 0.1)
    assert got.kind is Kind.TAKEN and s.taken == "another connection"
    assert s.pending() == {} and not s.ready
    assert s.due(100.0) is None  # no heartbeat, no silence, no resume
    with pytest.raises(RuntimeError, match="session_taken"):
        s.hello(0.2)


def test_hello_first_during_the_handshake_is_only_an_answer() -> None:
    """Before any welcome, hello_first is the answer to a message sent too early, not a
    lost session: there is no token to resume with."""
    s = Session("ann")
    assert s.receive({"type": "error", "name": "hello_first", "code": 2001}, 0.0).kind is Kind.ERROR
    assert s.lost is None


def test_restart_forgets_the_session() -> None:
    s = welcomed()
    s.restart()
    assert s.token is None and s.welcome is None and "token" not in s.hello(1.0)


def test_the_blocking_client_is_the_async_one_method_for_method() -> None:
    """Client is AsyncClient driven synchronously, not a copy: every public coroutine of
    the asyncio client has its blocking form (``next`` is ``recv``), with the same
    signature and docstring, so the two cannot drift apart again."""
    import inspect

    from clients.sdk import AsyncClient, Client

    coros = {n for n, f in inspect.getmembers(AsyncClient, inspect.iscoroutinefunction) if not n.startswith("_")}
    assert coros - {"close"} <= set(vars(Client)) | {"next"}
    assert Client.recv.__wrapped__ is AsyncClient.next  # type: ignore[attr-defined]
    for name in coros - {"close", "next"}:
        blocking = getattr(Client, name)
        assert blocking.__wrapped__ is getattr(AsyncClient, name), name
        assert not inspect.iscoroutinefunction(blocking) and blocking.__doc__ == getattr(AsyncClient, name).__doc__
    c = Client("tcp://127.0.0.1:1", name="same", token="t" * 32, reply_timeout=3.0)
    assert (c.name, c.token, c.reply_timeout, c.reconnects, c.connected) == ("same", "t" * 32, 3.0, 0, False)
    c.token = None
    assert c.token is None and c.session.token is None  # one state: the core's
