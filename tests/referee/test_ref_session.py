"""Sessions: handshake, ping, heartbeats both ways, silence, bye, resume mid-hand with a
full snapshot, disconnect grace expiring into a forfeit (protocol.md §4.1, §10)."""

from __future__ import annotations

from typing import Any

from refharness import Client, RefereeThread, error_of, play_until_end, simple_choice

from okgin.protocol import MAX_MESSAGE_BYTES, PROTOCOL_MINOR


def wait_state(r: RefereeThread, pred: Any, client_beats: list[Client] = (), rounds: int = 2000) -> None:
    """Poll the referee's state (not the clock) until ``pred`` holds; keep others alive."""
    for _ in range(rounds):
        if r.call(pred):
            return
        for c in client_beats:
            c.send({"type": "heartbeat"})
            while c.sock.poll(0):
                c.recv()
        import time

        time.sleep(0.01)
    raise AssertionError("state never reached")


def test_hello_welcome_fields(referee, make_client):
    c = make_client(referee.endpoint, validate="all")
    w = c.hello("alice")
    assert w["protocol"] == 1 and w["minor"] == PROTOCOL_MINOR and w["role"] == "player" and w["resumed"] is False
    assert w["events"] is True
    assert len(w["token"]) == 32 and int(w["token"], 16) >= 0
    assert w["heartbeat_ms"] == referee.config.heartbeat_ms and w["liveness"] == referee.config.liveness
    assert w["max_message_bytes"] == MAX_MESSAGE_BYTES and w["referee"].startswith("okgin")
    other = make_client(referee.endpoint)
    assert other.hello("alice")["token"] != w["token"]  # names are not identities
    p = c.request({"type": "ping"}, "pong")
    assert isinstance(p["time_ms"], int)
    # unknown fields are ignored (protocol.md §14)
    assert c.request({"type": "ping", "future_field": [1, 2]}, "pong", check=False)["type"] == "pong"
    # heartbeats carry no reply
    c.send({"type": "heartbeat"})
    assert c.request({"type": "list_tables"}, "tables")["tables"] == []


def test_referee_sends_heartbeats_and_drops_silent_peers(make_referee, make_client):
    r = make_referee(heartbeat_ms=100, liveness=3)
    c = make_client(r.endpoint)
    c.hello("quiet")
    assert c.expect("heartbeat")["type"] == "heartbeat"
    token = c.token
    wait_state(r, lambda: token not in r.ref.sessions)  # silent, holding nothing: forgotten
    again = make_client(r.endpoint)
    m = again.request({"type": "hello", "protocol": 1, "role": "player", "name": "q", "token": token})
    error_of(m, "bad_token")


def play_on_until_end(c: Client, table: str, limit: int = 20000) -> dict[str, Any]:
    """The one client still connected plays its prompts and beats (so the referee never
    takes it for gone) until its ``game_end``, which is returned.

    Bounded, and failing at once on an error: if a stall on a loaded machine made the
    referee take this client for gone, its messages get ``hello_first`` and its
    ``game_end`` would never come, so looping on would only end in pytest's timeout."""
    for _ in range(limit):
        c.send({"type": "heartbeat"})
        if c.sock.poll(50):
            m = c.recv()
            if m["type"] == "error" and m.get("name") in ("hello_first", "session_taken"):
                raise AssertionError(f"the playing client lost its session: {m}")
            if m["type"] == "prompt":
                c.send({"type": "act", "table": table, "seq": m["seq"], "action": simple_choice(m["legal"])})
            if m["type"] == "game_end":
                return m
    raise AssertionError(f"no game_end in {limit} rounds")


def test_bye_holds_seats_and_token_resumes(make_referee, make_client):
    r = make_referee(heartbeat_ms=5000)
    a, b = make_client(r.endpoint), make_client(r.endpoint)
    a.hello("alice")
    b.hello("bob")
    a.request({"type": "join", "table": "t"}, "seated")
    a.send({"type": "bye"})
    wait_state(r, lambda: r.ref.sessions[a.token].rid is None)
    assert r.call(lambda: r.ref.tables["t"].seats[0] is r.ref.sessions[a.token])
    a2 = make_client(r.endpoint)
    w = a2.hello("alice", token=a.token)
    assert w["resumed"] is True and w["token"] == a.token
    snap = a2.expect("snapshot")
    assert snap["seat"] == 0 and snap["status"] == "waiting" and snap["view"] is None
    b.request({"type": "join", "table": "t"}, "seated")
    assert a2.wait_for(lambda m: m["type"] == "game_start")["seat"] == 0


def test_reconnect_mid_hand_gets_snapshot_and_same_prompt(make_referee, make_client, tmp_path):
    # 5 s of silence before a peer is gone: the seat that plays on must outlast a loaded
    # machine's stalls (its loop below beats only by acting); the one that vanishes is
    # waited for by state, not by the clock.
    r = make_referee(heartbeat_ms=500, liveness=10, journal_dir=str(tmp_path))
    admin = make_client(r.endpoint)
    admin.hello("org", role="admin")
    toks = admin.request({"type": "create_table", "table": "t", "seed": 5, "rules": {"target_score": 30},
                          "policies": {"disconnect_grace_ms": 60000}, "reserved": True}, "table_created")["seat_tokens"]
    clients = {}
    for s, tok in enumerate(toks):
        c = make_client(r.endpoint)
        c.hello(f"p{s}", token=tok)
        clients[s] = c
    # play until seat 0 has been prompted at least 4 times, then vanish without answering
    prompts = {0: 0}
    pending: dict[str, Any] = {}

    def choose(seat: int, m: dict[str, Any]) -> dict[str, Any] | None:
        return simple_choice(m["legal"])

    poll_target = None
    for _ in range(20000):  # bounded: a lost session fails here, not at pytest's timeout
        if poll_target is not None:
            break
        for s, c in clients.items():
            if not c.sock.poll(10):
                continue
            m = c.recv()
            assert m["type"] != "error", m
            if m["type"] == "prompt":
                if s == 0:
                    prompts[0] += 1
                    if prompts[0] >= 4 and m["view"]["phase"] == "discard":
                        poll_target = m
                        break
                c.send({"type": "act", "table": "t", "seq": m["seq"], "action": choose(s, m)})
    assert poll_target is not None, "seat 0 never reached its fourth discard prompt"
    pending["prompt"] = poll_target
    old = clients[0]
    old.close()  # the connection is gone: silence
    wait_state(r, lambda: r.ref.sessions[toks[0]].rid is None, client_beats=[clients[1]])
    new = make_client(r.endpoint)
    w = new.hello("p0", token=toks[0])
    assert w["resumed"] is True
    snap = new.expect("snapshot")
    assert snap["seat"] == 0 and snap["status"] == "playing"
    assert snap["view"]["hand"] == poll_target["view"]["hand"] and snap["view"]["phase"] == "discard"
    again = new.expect("prompt")
    assert again["seq"] == poll_target["seq"] and again["legal"] == poll_target["legal"]
    assert again["clock"]["remaining_ms"] is None  # no time control on this table
    clients[0] = new
    new.send({"type": "act", "table": "t", "seq": again["seq"], "action": simple_choice(again["legal"])})
    ends = play_until_end(clients, "t")
    assert ends[0]["termination"] == "normal"
    journal = next(tmp_path.glob("t-g1-*.jsonl")).read_text()
    assert '"t":"disconnect"' in journal and '"t":"reconnect"' in journal
    from referee.replay import check_file

    assert check_file(next(tmp_path.glob("t-g1-*.jsonl"))).termination == "normal"


def test_disconnect_grace_expires_into_forfeit(make_referee, make_client):
    # Silence is noticed after 3 s: long enough that bob, who beats every 50 ms, is never
    # taken for gone when the machine stalls; alice's silence is the point of the test.
    r = make_referee(heartbeat_ms=100, liveness=30)
    admin = make_client(r.endpoint)
    admin.hello("org", role="admin")
    admin.request({"type": "create_table", "table": "t", "policies": {"disconnect_grace_ms": 200}}, "table_created")
    a, b = make_client(r.endpoint), make_client(r.endpoint)
    a.hello("alice")
    b.hello("bob")
    a.request({"type": "join", "table": "t", "seat": 0}, "seated")
    b.request({"type": "join", "table": "t", "seat": 1}, "seated")
    a.close()  # alice vanishes; bob keeps beating until the game ends
    end = play_on_until_end(b, "t")
    assert end["termination"] == "disconnect" and end["at_fault"] == 0 and end["winner"] == 1
    # alice's seat is freed and her session forgotten
    wait_state(r, lambda: r.ref.tables["t"].seats[0] is None and a.token not in r.ref.sessions, client_beats=[b])


def test_sessions_may_decline_events(referee, make_client):
    """Protocol 1.1: hello events=false -> no event messages for that session's seats;
    prompts, hand results and the game's end still come, and the game is the same."""
    lean, full = make_client(referee.endpoint), make_client(referee.endpoint)
    assert lean.hello("lean", events=False)["events"] is False
    assert full.hello("full")["events"] is True
    spect = make_client(referee.endpoint)
    spect.hello("v", role="spectator", events=False)
    lean.request({"type": "join", "table": "e", "rules": {"target_score": 25}}, "seated")
    full.request({"type": "join", "table": "e", "rules": {"target_score": 25}}, "seated")
    spect.request({"type": "watch", "table": "e"}, "snapshot")
    ends = play_until_end({0: lean, 1: full}, "e")
    assert ends[0]["final"] == ends[1]["final"]
    lean_types = {m["type"] for m in lean.received}
    assert "event" not in lean_types and {"game_start", "prompt", "hand_end", "game_end"} <= lean_types
    assert any(m["type"] == "event" for m in full.received)
    spect.wait_for(lambda m: m["type"] == "game_end")
    assert any(m["type"] == "event" for m in spect.received)  # watches are not affected
    # resuming may change the choice
    again = make_client(referee.endpoint)
    assert again.hello("lean", token=lean.token, events=True)["events"] is True


def test_resume_after_the_game_ended_delivers_the_missed_game_end(make_referee, make_client):
    """A seat whose game ends while it is disconnected (within its grace) gets, on resume,
    the snapshot and then that game's ``game_end`` (protocol.md §10): without it a client
    waiting for the end of its game would wait for ever. Delivered once, never twice."""
    # A liveness that outlasts a loaded machine's stalls: alice leaves with ``bye`` (gone at
    # once, seat held), so nothing here waits for silence, and bob can never be taken for
    # gone while he plays on.
    r = make_referee(heartbeat_ms=200, liveness=25)
    admin = make_client(r.endpoint)
    admin.hello("org", role="admin")
    # alice's moves time out into default moves, so the game ends without her
    toks = admin.request({"type": "create_table", "table": "t", "seed": 9, "rules": {"target_score": 10},
                          "clock": {"move_ms": 20, "grace_ms": 0},
                          "policies": {"timeout": "default_move", "disconnect_grace_ms": 600000},
                          "reserved": True}, "table_created")["seat_tokens"]
    a, b = make_client(r.endpoint), make_client(r.endpoint)
    a.hello("alice", token=toks[0])
    b.hello("bob", token=toks[1])
    a.send({"type": "bye"})  # alice goes, her seat held; bob plays (and knocks), her moves are defaults
    end = play_on_until_end(b, "t")
    assert end["termination"] == "normal"
    assert r.call(lambda: r.ref.sessions[toks[0]].rid is None and r.ref.tables["t"].seats[0] is r.ref.sessions[toks[0]])
    a2 = make_client(r.endpoint)
    assert a2.hello("alice", token=toks[0], batch_events=True)["resumed"] is True
    snap = a2.expect("snapshot")
    assert snap["status"] == "finished" and snap["game"] == 1
    missed = a2.expect("game_end")
    assert [missed[k] for k in ("game", "n", "winner", "final")] == [end[k] for k in ("game", "n", "winner", "final")]
    assert missed["view"]["seat"] == 0 and missed["events"] == []  # batched: the snapshot covered them
    assert a2.request({"type": "ping"}, "pong")["type"] == "pong"
    # a second resume gets the snapshot only: the missed end was delivered
    a2.close()
    a3 = make_client(r.endpoint)
    assert a3.hello("alice", token=toks[0])["resumed"] is True
    assert a3.expect("snapshot")["status"] == "finished"
    assert a3.request({"type": "ping"}, "pong")["type"] == "pong"
    assert not any(m["type"] == "game_end" for m in a3.received)


def test_a_ping_after_resuming_is_answered_after_every_snapshot_and_prompt(make_referee, make_client):
    """protocol.md §4.1: a client learns that a resume has sent everything (one snapshot
    per table where it sits, the pending prompts) when the `pong` to a `ping` sent right
    after the `welcome` arrives; a client seated nowhere gets the pong and nothing else."""
    r = make_referee(heartbeat_ms=5000)
    a, b, c = make_client(r.endpoint), make_client(r.endpoint), make_client(r.endpoint)
    a.hello("alice")
    b.hello("bob")
    c.hello("carol")
    for table, other in (("t1", b), ("t2", c)):
        a.request({"type": "join", "table": table}, "seated")
        other.request({"type": "join", "table": table}, "seated")
        a.wait_for(lambda m, t=table: m["type"] == "game_start" and m["table"] == t)
    a2 = make_client(r.endpoint)
    assert a2.hello("alice", token=a.token)["resumed"] is True
    ping = a2.next_id()
    a2.send({"type": "ping", "id": ping})
    seen = []
    while True:
        m = a2.expect("snapshot", "prompt", "advise_prompt", "pong", "seat_status", "event")
        if m["type"] == "pong":
            assert m["id"] == ping
            break
        seen.append(m)
    snaps = {m["table"]: m for m in seen if m["type"] == "snapshot"}
    assert set(snaps) == {"t1", "t2"}
    to_act = {t for t, s in snaps.items() if s["view"] is not None and s["view"]["to_act"] == s["seat"]}
    assert {m["table"] for m in seen if m["type"] == "prompt"} == to_act
    lone = make_client(r.endpoint)
    lone.hello("dora")
    lone2 = make_client(r.endpoint)
    assert lone2.hello("dora", token=lone.token)["resumed"] is True
    lone2.send({"type": "ping", "id": 1})
    assert lone2.expect("pong", "snapshot")["type"] == "pong"
