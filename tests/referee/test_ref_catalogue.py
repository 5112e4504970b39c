"""The catalogue: protocol.md, protocol.schema.json and the code name the same messages
and error codes, and one scripted session sends and receives every message of the
catalogue, each validated against the (closed) schema."""

from __future__ import annotations

import re

import jsonschema
from refharness import ROOT, SCHEMA, Client, play_until_end

from okgin.protocol import CLIENT_TYPES, DIRECTIONS, ERRORS, REFEREE_TYPES
from okgin.protocol.catalogue import ARENA_CLIENT_TYPES, ARENA_TYPES, FIELDS, largest_legal_messages
from okgin.protocol.schema import schema_json

DOC = (ROOT / "protocol.md").read_text()


def test_schema_file_is_the_built_schema():
    assert (ROOT / "protocol.schema.json").read_text() == schema_json(), (
        "regenerate: python -m okgin.protocol.schema > protocol.schema.json"
    )
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_doc_schema_and_code_agree():
    summary = DOC[DOC.index("### Summary") : DOC.index("### 5.1")]
    doc_types = set(re.findall(r"^\| `([a-z_]+)` \| (?:C→R|R→C|both) \|", summary, re.M))
    assert doc_types == set(DIRECTIONS) == set(SCHEMA["x-messages"])
    for t, d in DIRECTIONS.items():
        row = re.search(rf"^\| `{t}` \| (C→R|R→C|both) \|", summary, re.M)
        assert row is not None
        want = {"client to referee": "C→R", "referee to client": "R→C", "both ways": "both"}[d]
        assert row.group(1) == want, t
        assert SCHEMA["x-messages"][t]["direction"] == d
    for name, (code, _) in ERRORS.items():
        assert re.search(rf"^\| {code} \| `{name}` \|", DOC, re.M), f"error {code} {name} missing from protocol.md §9"
    table = DOC[DOC.index("## 9. Errors") : DOC.index("## 10.")]
    assert len(re.findall(r"^\| \d{4} \|", table, re.M)) == len(ERRORS)
    # the referee's own field checks require exactly what the schema requires
    for t in CLIENT_TYPES:
        schema_required = set(SCHEMA["$defs"][f"msg_{t}"]["required"]) - {"type"}
        code_required = {f for f, (_, req) in FIELDS[t].items() if req}
        assert schema_required == code_required, t
        assert set(SCHEMA["$defs"][f"msg_{t}"]["properties"]) - {"type", "id"} == set(FIELDS[t]), t


def test_every_message_of_the_catalogue(make_referee, make_client):
    r = make_referee(
        heartbeat_ms=150, liveness=400
    )  # heartbeats quick (the catalogue has one); a silent admin or watcher is kept through a slow game
    sent: set[str] = set()
    clients: list[Client] = []

    def client(name: str, role: str = "player", **kw) -> Client:
        c = make_client(r.endpoint, validate="all")
        orig = c.send

        def send(msg, check=True):
            sent.add(msg["type"])
            orig(msg, check)

        c.send = send  # type: ignore[method-assign]
        c.hello(name, role=role, **kw)
        clients.append(c)
        return c

    admin = client("org", "admin")
    admin.send({"type": "heartbeat"})
    admin.request({"type": "ping"}, "pong")
    admin.request({"type": "list_tables"}, "tables")
    made = admin.request(
        {
            "type": "create_table",
            "table": "box",
            "variant": "box",
            "seed": 247,
            "reserved": True,
            "rules": {"target_score": 30},
            "full_feed_delay_ms": 0,
        },
        "table_created",
    )
    toks = made["seat_tokens"]
    watcher = client("w", "spectator")
    watcher.request({"type": "watch", "table": "box", "full": True, "broadcast_token": made["broadcast_token"]}, "snapshot")
    seats = {}
    for s, tok in enumerate(toks):
        seats[s] = client(f"p{s}", token=tok)
    # the sitter's advice must reach the captain: answer advise prompts before acting
    play_until_end(seats, "box", advise=True)
    admin.request({"type": "reveal", "table": "box", "game": 1}, "revealed")
    p0 = seats[0]
    p0.request({"type": "sync", "table": "box"}, "snapshot")
    p0.request({"type": "rematch", "table": "box"}, "ok")
    seats[1].expect("rematch_status", skip=("heartbeat", "game_end", "hand_end", "event", "ok"))
    watcher.request({"type": "unwatch", "table": "box"}, "ok")
    a, b = client("a"), client("b")
    a.request({"type": "queue"}, "queued")
    a.request({"type": "leave"}, "ok")
    a.request({"type": "join", "table": "duel"}, "seated")
    b.request({"type": "join", "table": "duel"}, "seated")
    a.wait_for(lambda m: m["type"] == "game_start")
    b.send({"type": "bye"})  # 1.4: the other seat is told the seat is away, then back
    a.wait_for(lambda m: m["type"] == "seat_status" and m["connected"] is False)
    gone = b
    b = client("b", token=b.token)
    a.wait_for(lambda m: m["type"] == "seat_status" and m["connected"] is True)
    b.request({"type": "resign", "table": "duel"}, "ok")
    a.wait_for(lambda m: m["type"] == "game_end")
    admin.request({"type": "close_table", "table": "duel"}, "ok")
    a.wait_for(lambda m: m["type"] == "table_closed")
    # 1.5: a participant's nonce at a preflight table (protocol.md 5.27)
    from okgin.schedule import nonce_commitment

    pre = admin.request({"type": "create_table", "table": "pre", "reserved": True}, "table_created")
    nonce = bytes(range(32))
    pc = client("pc", token=pre["seat_tokens"][0], entropy_commit=nonce_commitment(nonce))
    admin.request({"type": "entropy", "table": "pre", "commitments_hash": "ab" * 32}, "entropy_state")
    pc.wait_for(lambda m: m["type"] == "entropy_request")
    pc.request({"type": "entropy_reveal", "table": "pre", "nonce": nonce.hex()}, "ok")
    a.request({"type": "dance"}, "error", check=False)
    # 1.6: a plain referee refuses the arena's requests (tests/arena/ plays them at an arena)
    biggest = largest_legal_messages()
    for t in sorted(ARENA_CLIENT_TYPES):
        msg = {k: v for k, v in biggest[t].items() if k != "id"}
        err = a.request(msg, "error", check=False)
        assert err["name"] == ("not_an_arena" if t not in ("ban", "unban") else "forbidden"), (t, err)
    b.send({"type": "bye"})
    r.stop()  # sends shutdown to everyone still connected
    for c in clients:
        if c is not b and c is not gone:
            c.wait_for(lambda m: m["type"] == "shutdown")
    received = {m["type"] for c in clients for m in c.received}
    assert received == set(REFEREE_TYPES) - ARENA_TYPES, f"never received: {set(REFEREE_TYPES) - ARENA_TYPES - received}"
    assert (sent - {"dance"}) == set(CLIENT_TYPES), f"never sent: {set(CLIENT_TYPES) - sent}"
