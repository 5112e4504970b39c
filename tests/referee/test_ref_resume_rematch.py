"""Protocol 1.6's wire holes of issue 29, on a real referee: a quick restart learns how
its game ended (protocol.md §10), rematch consent never vanishes silently and a repeated
``rematch`` is harmless (§5.18), and ``ok`` names the table (§5.22)."""

from __future__ import annotations

from typing import Any

from refharness import Client, RefereeThread, error_of


def until_pong(c: Client) -> list[dict[str, Any]]:
    """Send a ping; what arrives before its pong (everything the referee sent before it
    read the ping: protocol.md §4.1), heartbeats left out."""
    rid = c.next_id()
    c.send({"type": "ping", "id": rid})
    seen = []
    while True:
        m = c.recv()
        if m["type"] == "pong" and m.get("id") == rid:
            return seen
        if m["type"] != "heartbeat":
            seen.append(m)


def reserved_game(r: RefereeThread, make_client: Any) -> tuple[list[str], Client, Client]:
    admin = make_client(r.endpoint)
    admin.hello("org", role="admin")
    toks = admin.request({"type": "create_table", "table": "t", "reserved": True}, "table_created")["seat_tokens"]
    a, b = make_client(r.endpoint), make_client(r.endpoint)
    a.hello("alice", token=toks[0])
    b.hello("bob", token=toks[1])
    a.wait_for(lambda m: m["type"] == "game_start")
    b.wait_for(lambda m: m["type"] == "game_start")
    return toks, a, b


def test_a_quick_restart_learns_how_its_game_ended(make_referee, make_client):
    """A bot that dies silently and is restarted with its token while the referee still
    takes its dead connection for alive gets its game's ``game_end`` after the snapshot
    (protocol.md §10, 1.6). On 1.5 it got the ``finished`` snapshot alone: no result."""
    # a liveness far beyond the test: the referee never notices the dead connection
    r = make_referee(heartbeat_ms=5000, liveness=60)
    toks, a, b = reserved_game(r, make_client)
    a.close()  # alice's process dies: no bye, the referee is not told
    assert b.request({"type": "resign", "table": "t"}, "ok")["table"] == "t"  # 1.6: ok names the table
    end = b.wait_for(lambda m: m["type"] == "game_end")
    alice = r.call(lambda: r.ref.sessions[toks[0]])
    assert r.call(lambda: alice.rid is not None)  # the game_end went to the dead connection

    a2 = make_client(r.endpoint)
    assert a2.hello("alice", token=toks[0])["resumed"] is True
    # recv, not expect: the resume sends its messages at once, and a heartbeat (due only
    # after 5 s of silence) cannot come between them; on 1.5 the heartbeat came instead
    snap, again = a2.recv(), a2.recv()
    assert snap["type"] == "snapshot" and snap["status"] == "finished"
    assert again["type"] == "game_end"
    keys = ("table", "game", "n", "final", "termination", "winner", "at_fault", "seed", "salt", "seed_hash")
    assert [again[k] for k in keys] == [end[k] for k in keys]
    assert again["view"]["seat"] == 0
    # it dies again before saying anything: the next restart is told again
    a2.close()
    a3 = make_client(r.endpoint)
    assert a3.hello("alice", token=toks[0])["resumed"] is True
    assert [m["type"] for m in until_pong(a3)] == ["snapshot", "game_end"]
    # a3 spoke (the ping) after its game_end: the referee knows it had it
    a3.close()
    a4 = make_client(r.endpoint)
    assert a4.hello("alice", token=toks[0])["resumed"] is True
    assert [m["type"] for m in until_pong(a4)] == ["snapshot"]


def test_a_seat_that_heard_its_game_end_is_not_sent_it_again(make_referee, make_client):
    """The other side of the rule: a client that said anything after its ``game_end``
    (here a ping) and then resumes gets the snapshot only."""
    r = make_referee(heartbeat_ms=5000, liveness=60)
    toks, a, b = reserved_game(r, make_client)
    b.request({"type": "resign", "table": "t"}, "ok")
    a.wait_for(lambda m: m["type"] == "game_end")
    a.request({"type": "ping"}, "pong")
    a2 = make_client(r.endpoint)
    assert a2.hello("alice", token=toks[0])["resumed"] is True
    assert [m["type"] for m in until_pong(a2)] == ["snapshot"]


def finished_named_table(r: RefereeThread, make_client: Any) -> tuple[Client, Client]:
    """alice (seat 0) and bob (seat 1) at table t, game 1 over (bob resigned)."""
    a, b = make_client(r.endpoint), make_client(r.endpoint)
    a.hello("alice")
    b.hello("bob")
    a.request({"type": "join", "table": "t"}, "seated")
    b.request({"type": "join", "table": "t"}, "seated")
    # a rematch during game 1 (which started on the join, not on consent) is still refused
    error_of(a.request({"type": "rematch", "table": "t"}), "game_in_progress")
    b.request({"type": "resign", "table": "t"}, "ok")
    a.wait_for(lambda m: m["type"] == "game_end")
    b.wait_for(lambda m: m["type"] == "game_end")
    return a, b


def test_leaving_a_finished_table_tells_the_others_their_consent_was_cleared(make_referee, make_client):
    """§5.18 (1.6): bob asked for a rematch; alice leaves; bob is told, with a
    ``rematch_status`` where nobody is ready, instead of waiting for ever."""
    r = make_referee(heartbeat_ms=5000)
    a, b = finished_named_table(r, make_client)
    assert b.request({"type": "rematch", "table": "t"}, "ok")["table"] == "t"
    assert b.wait_for(lambda m: m["type"] == "rematch_status")["ready"] == [False, True]
    a.wait_for(lambda m: m["type"] == "rematch_status")
    assert a.request({"type": "leave", "table": "t"}, "ok")["table"] == "t"
    told = [m for m in until_pong(b) if m["type"] == "rematch_status"]
    assert told == [{"type": "rematch_status", "table": "t", "ready": [False, False], "game": 2}]
    # a newcomer asks for the game by joining: bob is asked again
    c = make_client(r.endpoint)
    c.hello("carol")
    assert c.request({"type": "join", "table": "t"}, "seated")["seat"] == 0
    assert b.wait_for(lambda m: m["type"] == "rematch_status")["ready"] == [True, False]


def test_a_repeated_rematch_is_harmless(make_referee, make_client):
    """§5.18 (1.6): a second ``rematch`` from a ready seat is ``ok`` and tells nobody
    anything new; one that crosses the start of the game it asked for is ``ok`` too
    (1.5 answered the first with another ``rematch_status`` and the second with
    ``game_in_progress``, which a naive bot answering every not-ready status met)."""
    r = make_referee(heartbeat_ms=5000)
    a, b = finished_named_table(r, make_client)
    a.request({"type": "rematch", "table": "t"}, "ok")
    assert a.wait_for(lambda m: m["type"] == "rematch_status")["ready"] == [True, False]
    assert b.wait_for(lambda m: m["type"] == "rematch_status")["ready"] == [True, False]
    assert a.request({"type": "rematch", "table": "t"}, "ok")["table"] == "t"
    assert not [m for m in until_pong(b) if m["type"] == "rematch_status"]
    assert not [m for m in until_pong(a) if m["type"] == "rematch_status"]
    b.request({"type": "rematch", "table": "t"}, "ok")
    start = a.wait_for(lambda m: m["type"] == "game_start")
    assert start["game"] == 2
    # alice's naive second answer to the status that showed bob not ready, read late
    late = a.request({"type": "rematch", "table": "t"})
    assert late["type"] == "ok" and late["table"] == "t"
    assert r.call(lambda: r.ref.tables["t"].game_no) == 2
