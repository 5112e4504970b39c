"""Every error code of protocol.md §9: triggered by real bad input, answered with the
code, the stable name, a sentence and the request id; nothing in the referee changes."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import msgpack
import pytest
from bounded import dealer
from refharness import Client, RefereeThread, error_of

from okgin import canonical_json
from okgin.protocol import ERRORS


def fingerprint(r: RefereeThread) -> str:
    """Everything a request could change, as one string (read on the referee's loop)."""

    def fp() -> str:
        ref = r.ref
        tables = {
            n: {
                **t.info(),
                "record": t.game.to_record() if t.game else None,
                "seq": t.seq,
                "pending": t.pending.seq if t.pending else None,
                "n": t.n,
                "illegal": t.illegal,
                "watchers": sorted(s.token for s in t.watchers),
                "ready": t.rematch_ready,
            }
            for n, t in ref.tables.items()
        }
        sessions = sorted(
            [s.token, s.name, s.role, sorted(s.seats.items()), sorted(s.watches.items()), sorted(s.queues), s.rid is not None]
            for s in ref.sessions.values()
        )
        queues = {k: [s.token for s in q] for k, q in ref.queues.items()}
        return canonical_json({"tables": tables, "sessions": sessions, "queues": queues, "reserved": sorted(ref.reserved)})

    return r.call(fp)


@pytest.fixture
def scene(make_referee, make_client) -> dict[str, Any]:
    """A referee with an admin key, a running 2-player game, a waiting table, a box game."""
    r = make_referee(admin_key="sesame", max_watches_per_session=2)
    c: dict[str, Client] = {}

    def client(name: str, role: str = "player", **kw: Any) -> Client:
        x = make_client(r.endpoint)
        x.hello(name, role=role, **kw)
        c[name] = x
        return x

    admin = client("admin", "admin", admin_key="sesame")
    alice, bob = client("alice"), client("bob")
    alice.request({"type": "join", "table": "g"}, "seated")
    bob.request({"type": "join", "table": "g"}, "seated")
    alice.expect("game_start")
    bob.expect("game_start")
    g_prompt = {0: alice, 1: bob}
    first = None
    while first is None:  # whoever is prompted first (the non-dealer)
        for seat, cl in g_prompt.items():
            if cl.sock.poll(20):
                m = cl.recv()
                if m["type"] == "prompt":
                    first = (seat, m)
    carol = client("carol")
    carol.request({"type": "join", "table": "w", "variant": "box"}, "seated")
    created = admin.request(
        {"type": "create_table", "table": "b", "variant": "box", "seed": 247, "reserved": True}, "table_created"
    )
    box = {}
    for seat, tok in enumerate(created["seat_tokens"]):
        x = make_client(r.endpoint)
        x.hello(f"box{seat}", token=tok)
        x.expect("seated")
        box[seat] = x
    for x in box.values():
        x.expect("game_start")
    spect = client("sam", "spectator")
    return {"r": r, "c": c, "admin": admin, "first": first, "g": g_prompt, "box": box, "spect": spect}


def expect_error(r: RefereeThread, cl: Client, msg: dict[str, Any] | bytes, name: str, check: bool = False) -> dict[str, Any]:
    before = fingerprint(r)
    if isinstance(msg, bytes):
        cl.send_raw(msg)
        m = cl.wait_for(lambda m: m["type"] == "error")
        assert "id" not in m
    else:
        rid = cl.next_id()
        cl.send({**msg, "id": rid}, check=check)
        m = cl.wait_for(lambda m: m.get("id") == rid or (m["type"] == "error" and "id" not in m))
        assert m.get("id") == rid, f"the error must echo the request id: {m}"
    error_of(m, name)
    assert fingerprint(r) == before, f"{name}: the referee's state changed"
    return m


def test_framing_errors(scene, make_client):
    r = scene["r"]
    alice = scene["c"]["alice"]
    fresh = make_client(r.endpoint)
    expect_error(r, alice, b"\xc1", "bad_frame")  # 0xc1 is never used in msgpack
    expect_error(r, alice, msgpack.packb({"type": "ping"}) + b"\x00", "bad_frame")
    before = fingerprint(r)
    alice.send_raw(b"", msgpack.packb({"type": "ping"}))  # a REQ-style empty delimiter: two frames
    error_of(alice.wait_for(lambda m: m["type"] == "error"), "bad_frame")
    assert fingerprint(r) == before
    expect_error(r, alice, msgpack.packb([1, 2, 3]), "not_a_map")
    expect_error(r, alice, msgpack.packb(None), "not_a_map")
    expect_error(r, alice, msgpack.packb({1: "ping"}), "not_a_map")
    expect_error(r, fresh, msgpack.packb("hello"), "not_a_map")
    # 1.4: ZMQ_MAXMSGSIZE equals max_message_bytes, so libzmq closes a connection that
    # sends more (test_ref_limits_codec); a frame within a larger hard limit is refused
    # too_large, echoing its type. This referee keeps the default hard limit: one byte
    # under it is read and refused by content instead.
    # The id is echoed when it is in the frame's first 512 bytes (okgin.protocol.peek_id).
    alice.send({"type": "ping", "id": "big", "pad": "x" * 3000}, check=False)
    m = error_of(alice.wait_for(lambda m: m["type"] == "error"), "bad_frame")
    assert m["id"] == "big" and m["request"] == "ping"
    expect_error(r, alice, {"type": 5}, "bad_message")
    expect_error(r, alice, {"kind": "ping"}, "bad_message")
    expect_error(r, alice, {"type": "act", "table": "g", "seq": "one", "action": {"kind": "pass"}}, "bad_message")
    expect_error(r, alice, {"type": "act", "table": "g", "seq": 1}, "bad_message")
    expect_error(r, alice, {"type": "join", "table": "bad name!"}, "bad_message")
    expect_error(r, alice, {"type": "join", "table": b"g"}, "bad_message")  # bin, not str
    m = expect_error(r, alice, {"type": "dance"}, "unknown_type")
    assert m["request"] == "dance"
    expect_error(r, alice, {"type": "welcome"}, "unknown_type")  # a referee-only message


def test_session_errors(scene, make_client):
    r = scene["r"]
    fresh = make_client(r.endpoint)
    expect_error(r, fresh, {"type": "hello", "protocol": 2, "role": "player", "name": "x"}, "version_mismatch")
    expect_error(r, fresh, {"type": "ping"}, "hello_first")
    expect_error(r, fresh, {"type": "hello", "protocol": 1, "role": "player", "name": "x", "token": "0" * 32}, "bad_token")
    expect_error(r, fresh, {"type": "hello", "protocol": 1, "role": "admin", "name": "x"}, "auth_failed")
    expect_error(r, fresh, {"type": "hello", "protocol": 1, "role": "admin", "name": "x", "admin_key": "wrong"}, "auth_failed")
    expect_error(r, fresh, {"type": "hello", "protocol": 1, "role": "player", "name": ""}, "bad_message")
    alice = scene["c"]["alice"]
    expect_error(r, alice, {"type": "hello", "protocol": 1, "role": "player", "name": "again"}, "already_welcomed")
    spect = scene["spect"]
    expect_error(r, spect, {"type": "queue"}, "forbidden")
    expect_error(r, spect, {"type": "act", "table": "g", "seq": 1, "action": {"kind": "pass"}}, "forbidden")
    expect_error(r, alice, {"type": "create_table", "table": "mine"}, "forbidden")
    expect_error(r, alice, {"type": "close_table", "table": "g"}, "forbidden")
    # a player's token presented with another role
    other = make_client(r.endpoint)
    expect_error(r, other, {"type": "hello", "protocol": 1, "role": "spectator", "name": "x", "token": alice.token}, "forbidden")


def test_table_errors(scene, make_client):
    r = scene["r"]
    c = scene["c"]
    alice, carol, admin, spect = c["alice"], c["carol"], scene["admin"], scene["spect"]
    dave = make_client(r.endpoint)
    dave.hello("dave")
    expect_error(r, dave, {"type": "watch", "table": "nope"}, "no_such_table")
    expect_error(r, dave, {"type": "act", "table": "nope", "seq": 1, "action": {"kind": "pass"}}, "no_such_table")
    expect_error(r, dave, {"type": "join", "table": "g"}, "table_full")
    expect_error(r, dave, {"type": "queue", "rules": {"knock_limit": 99}}, "bad_rules")
    expect_error(r, dave, {"type": "queue", "rules": {"nonsense": 1}}, "bad_rules")
    expect_error(r, dave, {"type": "queue", "variant": "box", "rules": {"variant": "oklahoma"}}, "bad_rules")
    expect_error(r, dave, {"type": "join", "table": "w", "variant": "oklahoma"}, "rules_mismatch")
    expect_error(r, dave, {"type": "join", "table": "w", "rules": {"target_score": 50}}, "rules_mismatch")
    expect_error(r, carol, {"type": "join", "table": "w"}, "already_seated")
    dave.request({"type": "queue"}, "queued")
    expect_error(r, dave, {"type": "queue"}, "already_seated")
    dave.request({"type": "leave"}, "ok")
    expect_error(r, dave, {"type": "leave"}, "not_queued")
    expect_error(r, admin, {"type": "create_table", "table": "g"}, "table_exists")
    expect_error(r, admin, {"type": "create_table", "clock": {"move_ms": -5}}, "bad_message")
    expect_error(r, admin, {"type": "create_table", "clock": {"tempo": 5}}, "bad_message")
    expect_error(r, admin, {"type": "create_table", "policies": {"timeout": "shrug"}}, "bad_message")
    expect_error(r, admin, {"type": "create_table", "policies": {"illegal_limit": 0}}, "bad_message")
    expect_error(r, dave, {"type": "act", "table": "g", "seq": 1, "action": {"kind": "pass"}}, "not_seated")
    expect_error(r, dave, {"type": "resign", "table": "g"}, "not_seated")
    expect_error(r, dave, {"type": "leave", "table": "g"}, "not_seated")
    expect_error(r, dave, {"type": "unwatch", "table": "g"}, "not_seated")
    expect_error(r, dave, {"type": "sync", "table": "g"}, "not_seated")
    expect_error(r, dave, {"type": "join", "table": "w", "seat": 7}, "bad_seat")
    expect_error(r, dave, {"type": "join", "table": "w", "seat": 0}, "bad_seat")
    expect_error(r, dave, {"type": "join", "table": "new", "seat": 2}, "bad_seat")
    expect_error(r, alice, {"type": "rematch", "table": "g"}, "game_in_progress")
    expect_error(r, admin, {"type": "reveal", "table": "g", "game": 1}, "game_in_progress")
    expect_error(r, admin, {"type": "reveal", "table": "w", "game": 1}, "no_such_game")
    expect_error(r, spect, {"type": "watch", "table": "g", "full": True}, "no_full_feed")
    bt = admin.request({"type": "create_table", "table": "f", "full_feed_delay_ms": 0}, "table_created")["broadcast_token"]
    expect_error(r, spect, {"type": "watch", "table": "f", "full": True}, "broadcast_only")  # 1.4: no credential
    expect_error(r, spect, {"type": "watch", "table": "f", "full": True, "broadcast_token": bt[::-1]}, "broadcast_only")
    expect_error(r, dave, {"type": "join", "table": "b"}, "forbidden")  # reserved seats
    spect.request({"type": "watch", "table": "g"}, "snapshot")
    spect.request({"type": "watch", "table": "w"}, "snapshot")
    expect_error(r, spect, {"type": "watch", "table": "b"}, "limit_reached")
    expect_error(r, carol, {"type": "rematch", "table": "w"}, "no_game")
    expect_error(r, carol, {"type": "resign", "table": "w"}, "no_game")
    expect_error(r, carol, {"type": "act", "table": "w", "seq": 1, "action": {"kind": "pass"}}, "no_game")


def test_limit_on_tables(make_referee, make_client):
    r = make_referee(max_tables=1)
    a = make_client(r.endpoint)
    a.hello("a", role="admin")
    a.request({"type": "create_table", "table": "one"}, "table_created")
    expect_error(r, a, {"type": "create_table", "table": "two"}, "limit_reached")
    p = make_client(r.endpoint)
    p.hello("p")
    expect_error(r, p, {"type": "join", "table": "three"}, "limit_reached")


def test_game_errors(scene):
    r = scene["r"]
    seat, prompt = scene["first"]
    me, other = scene["g"][seat], scene["g"][1 - seat]
    seq = prompt["seq"]
    expect_error(r, other, {"type": "act", "table": "g", "seq": seq, "action": {"kind": "pass"}}, "not_your_turn")
    expect_error(r, me, {"type": "act", "table": "g", "seq": seq + 5, "action": {"kind": "pass"}}, "stale_seq")
    expect_error(r, me, {"type": "act", "table": "g", "seq": seq, "action": {"kind": "pass"}, "seat": 1 - seat}, "wrong_seat")
    # the box game: advice errors
    box = scene["box"]
    views = {s: x.received[-1]["view"] for s, x in box.items()}
    roles = views[0]["roles"]
    captain, sitter, boxseat = roles.index("captain"), roles.index("sitter"), roles.index("box")
    p = box[captain].wait_for(lambda m: m["type"] == "prompt")
    box[sitter].wait_for(lambda m: m["type"] == "advise_prompt")
    s = p["seq"]
    expect_error(r, box[boxseat], {"type": "advise", "table": "b", "seq": s, "text": "psst"}, "forbidden")
    expect_error(r, box[sitter], {"type": "advise", "table": "b", "seq": s - 1, "text": "late"}, "stale_seq")
    expect_error(r, box[sitter], {"type": "advise", "table": "b", "seq": s, "text": "bell\x07"}, "bad_advice")
    expect_error(r, box[sitter], {"type": "advise", "table": "b", "seq": s, "action": {"kind": "draw_stock"}}, "bad_advice")
    expect_error(r, box[sitter], {"type": "advise", "table": "b", "seq": s}, "bad_advice")
    expect_error(r, box[sitter], {"type": "advise", "table": "b", "seq": s, "action": {"kind": "fly"}}, "bad_action")
    expect_error(r, box[sitter], {"type": "act", "table": "b", "seq": s, "action": {"kind": "pass"}}, "not_your_turn")


def test_illegal_and_bad_actions_leave_the_game_untouched(scene):
    r = scene["r"]
    seat, prompt = scene["first"]
    me = scene["g"][seat]

    def record() -> str:
        return r.call(lambda: canonical_json(r.ref.tables["g"].game.to_record()))

    before = record()
    rid = me.next_id()
    me.send({"type": "act", "id": rid, "table": "g", "seq": prompt["seq"], "action": {"kind": "discard", "card": "As"}})
    error_of(me.wait_for(lambda m: m.get("id") == rid), "illegal_action")
    again = me.expect("prompt")
    assert again["seq"] > prompt["seq"] and again["error"]["name"] == "illegal_action"
    assert again["legal"] == prompt["legal"]
    rid = me.next_id()
    me.send({"type": "act", "id": rid, "table": "g", "seq": again["seq"], "action": {"kind": "fly"}}, check=False)
    error_of(me.wait_for(lambda m: m.get("id") == rid), "bad_action")
    third = me.expect("prompt")
    assert third["error"]["code"] == ERRORS["bad_action"][0]
    assert record() == before


def test_internal_error_is_contained(referee, make_client):
    c = make_client(referee.endpoint)
    c.hello("x")

    def boom(*a: Any) -> None:
        raise RuntimeError("simulated bug")

    referee.call(lambda: referee.ref.dispatcher.handlers.__setitem__("list_tables", boom))
    m = c.request({"type": "list_tables"})
    error_of(m, "internal")
    assert m["request"] == "list_tables"
    assert c.request({"type": "ping"}, "pong")["type"] == "pong"  # still serving


def test_too_large_under_a_larger_hard_limit(make_referee, make_client):
    """A referee configured with a hard limit above max_message_bytes reads a frame
    between the two and refuses it ``too_large``, echoing the id from the frame's head."""
    r = make_referee(hard_max_bytes=1 << 16)
    c = make_client(r.endpoint)
    c.hello("big")
    c.send({"type": "ping", "id": "huge", "pad": "x" * 10_000}, check=False)
    m = error_of(c.wait_for(lambda m: m["type"] == "error"), "too_large")
    assert m["id"] == "huge" and m["request"] == "ping"
    assert c.request({"type": "ping"}, "pong")["type"] == "pong"


def test_every_error_code_is_exercised():
    """Keep this file honest: each code of the catalogue appears in a test above (the
    arena's, 6xxx, in tests/arena/, which checks the same of itself)."""
    import inspect
    import sys

    src = inspect.getsource(sys.modules[__name__])
    # Codes a 1.5 client can never get are exercised where a 1.6 client is set up: advice_late
    # (protocol 1.6) by a real referee in tests/hardening/test_outage_clock.py.
    elsewhere = {"advice_late": Path(__file__).parents[1] / "hardening" / "test_outage_clock.py"}
    src += "".join(path.read_text() for path in elsewhere.values())
    missing = [n for n, (code, _) in ERRORS.items() if code < 6000 and f'"{n}"' not in src]
    assert not missing, f"error codes never triggered here: {missing}"


def test_rate_limited_and_lagging(make_referee, make_client):
    """Protocol 1.2: a flood is dropped unread with one ``rate_limited`` notice (no id);
    a watcher whose messages pile up undelivered loses its watches and hears ``lagging``."""
    r = make_referee(rate_limit_per_s=5, rate_limit_burst=3)
    c = make_client(r.endpoint)
    c.hello("flood")  # the hello itself is one of the burst
    for i in range(50):
        c.send({"type": "ping", "id": i})
    got = [c.recv() for _ in range(3)]
    assert [m["type"] for m in got].count("pong") == 2  # the rest of the burst of 3
    notice = error_of(next(m for m in got if m["type"] == "error"), "rate_limited")
    assert "id" not in notice and "dropped" in notice["message"]
    assert not c.sock.poll(300) or c.expect("error", "heartbeat")  # nothing else: the flood was never read
    r2 = make_referee(hwm=5, watcher_drop_limit=5)
    a, b = make_client(r2.endpoint), make_client(r2.endpoint)
    a.hello("a")
    b.hello("b")
    a.request({"type": "join", "table": "busy"}, "seated")
    b.request({"type": "join", "table": "busy"}, "seated")
    slow = make_client(r2.endpoint)
    slow.sock.close(0)  # a receive queue of one message, set before connecting
    slow.sock = dealer(r2.endpoint, ctx=Client.ctx, RCVHWM=1, RCVBUF=4096)  # sends bounded (tests/bounded.py)
    slow.hello("slow", role="spectator")
    slow.request({"type": "watch", "table": "busy"}, "snapshot")
    before = r2.call(lambda: r2.ref.stats["received"])
    for _ in range(4000):  # each answer is a snapshot to a reader that does not read
        slow.send({"type": "sync", "table": "busy"})
    for _ in range(1000):  # until the referee has handled them all
        if r2.call(lambda: r2.ref.stats["received"]) >= before + 4000:
            break
        time.sleep(0.02)
    assert r2.call(lambda: len(r2.ref.tables["busy"].watchers)) == 0  # cut off, not queued for
    got = []
    while slow.sock.poll(500):  # now it reads what reached it
        got.append(slow.recv())
    rid = slow.next_id()  # its next message: the notice comes first if it has not yet been delivered
    slow.send({"type": "ping", "id": rid})
    got.append(slow.wait_for(lambda m: m.get("id") == rid or m["type"] == "error"))
    if got[-1]["type"] != "pong":
        slow.wait_for(lambda m: m.get("id") == rid)
    lag = error_of(next(m for m in got if m["type"] == "error" and m["name"] == "lagging"), "lagging")
    assert "busy" in lag["message"] and "id" not in lag
    assert len(got) < 4000  # most answers were dropped, never queued
    error_of(slow.request({"type": "sync", "table": "busy"}), "not_seated")  # no longer watching
    assert slow.request({"type": "watch", "table": "busy"}, "snapshot")["table"] == "busy"


def test_session_taken_and_bad_identity(referee, make_client):
    """Protocol 1.4 (details: test_ref_identity.py): the older of two connections holding
    one token is told ``session_taken``; a client-chosen routing id gets ``bad_identity``."""
    old, new = make_client(referee.endpoint), make_client(referee.endpoint)
    old.hello("a")
    new.hello("a", token=old.token)
    assert error_of(old.recv(), "session_taken").get("id") is None  # at once, unasked
    error_of(old.request({"type": "ping"}), "session_taken")
    chosen = make_client(referee.endpoint)
    chosen.sock.close(0)
    chosen.sock = dealer(referee.endpoint, ctx=Client.ctx, ROUTING_ID=b"mine")
    chosen.send({"type": "hello", "protocol": 1, "role": "player", "name": "b"})
    error_of(chosen.recv(), "bad_identity")


def test_seat_only_on_a_seat_door(referee, make_client):
    """Protocol 1.5 (details: test_ref_doors.py): through a seat door, a tokenless hello
    and a lobby request get ``seat_only`` and change nothing."""
    admin = make_client(referee.endpoint)
    admin.hello("organiser", role="admin")
    created = admin.request({"type": "create_table", "table": "d", "reserved": True, "doors": True}, "table_created")
    before = fingerprint(referee)
    door = make_client(created["doors"][0])
    error_of(door.request({"type": "hello", "protocol": 1, "role": "player", "name": "spy"}), "seat_only")
    error_of(door.request({"type": "list_tables"}), "seat_only")
    assert fingerprint(referee) == before
