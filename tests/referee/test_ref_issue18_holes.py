"""Holes a stranger's bot found in the referee (issue 18), each against a real referee.

- rematch consent (protocol.md §5.18): a player who stayed at a finished table is never
  dealt into a new game it did not ask for, and ``rematch`` is refused at a table with a
  free seat;
- a malformed ``act`` (``bad_message``) is followed by the pending prompt again, so an
  untimed game does not hang on it (§5.12);
- the referee is as strict as the schema: ``{"kind": "pass", "card": "As"}`` is refused.
"""

from __future__ import annotations

from typing import Any

from refharness import Client, RefereeThread


def _seat_two(referee: RefereeThread, make_client: Any, table: str) -> tuple[Client, Client]:
    a, b = make_client(referee.endpoint), make_client(referee.endpoint)
    a.hello("alice")
    b.hello("bob")
    a.request({"type": "join", "table": table}, "seated")
    b.request({"type": "join", "table": table}, "seated")
    return a, b


def _finish_by_resign(a: Client, b: Client, table: str) -> None:
    a.wait_for(lambda m: m["type"] == "game_start")
    b.wait_for(lambda m: m["type"] == "game_start")
    b.request({"type": "resign", "table": table}, "ok")
    a.wait_for(lambda m: m["type"] == "game_end")
    b.wait_for(lambda m: m["type"] == "game_end")


def test_a_newcomer_does_not_deal_a_stayer_into_a_game_it_did_not_ask_for(referee: RefereeThread, make_client: Any) -> None:
    a, b = _seat_two(referee, make_client, "t")
    _finish_by_resign(a, b, "t")
    b.request({"type": "leave", "table": "t"}, "ok")
    # a free seat: consent is asked for at a full table only
    err = a.request({"type": "rematch", "table": "t"}, "error")
    assert err["name"] == "no_game" and err["table"] == "t"
    c = make_client(referee.endpoint)
    c.hello("carol")
    sc = c.request({"type": "join", "table": "t"}, "seated")
    assert sc["status"] == "finished"  # full, waiting for the stayer's consent
    st = a.wait_for(lambda m: m["type"] in ("rematch_status", "game_start"))
    assert st["type"] == "rematch_status" and st["ready"] == [False, True] and st["game"] == 2
    info = a.request({"type": "list_tables"}, "tables")
    assert next(t for t in info["tables"] if t["table"] == "t")["status"] == "finished"
    a.request({"type": "rematch", "table": "t"}, "ok")
    g2 = a.wait_for(lambda m: m["type"] == "game_start")
    assert g2["game"] == 2
    assert c.wait_for(lambda m: m["type"] == "game_start")["game"] == 2


def test_rematch_before_any_game_is_refused(referee: RefereeThread, make_client: Any) -> None:
    a = make_client(referee.endpoint)
    a.hello("alice")
    a.request({"type": "join", "table": "w"}, "seated")
    assert a.request({"type": "rematch", "table": "w"}, "error")["name"] == "no_game"


def _first_prompt(*clients: Client) -> tuple[Client, dict[str, Any]]:
    """The game's first prompt and who got it (the non-dealer, with the upcard offer)."""
    import zmq

    poller = zmq.Poller()
    for c in clients:
        poller.register(c.sock, zmq.POLLIN)
    for _ in range(1000):
        ready = dict(poller.poll(10000))
        assert ready, "no prompt within 10 s"
        for c in clients:
            if c.sock in ready:
                m = c.recv()
                if m["type"] == "prompt":
                    return c, m
    raise AssertionError("no prompt")


def test_a_malformed_act_is_followed_by_the_prompt_again(referee: RefereeThread, make_client: Any) -> None:
    a, b = _seat_two(referee, make_client, "m")
    who, p = _first_prompt(a, b)
    who.send({"type": "act", "id": 7, "table": "m", "seq": str(p["seq"]), "action": p["legal"][0]}, check=False)
    err = who.wait_for(lambda m: m.get("id") == 7)
    assert err["type"] == "error" and err["name"] == "bad_message" and err["request"] == "act"
    again = who.expect("prompt")
    assert again["seq"] == p["seq"] and again["legal"] == p["legal"]
    # and the game goes on from it
    who.send({"type": "act", "table": "m", "seq": again["seq"], "action": again["legal"][0]})
    ev = who.wait_for(lambda m: m["type"] == "event")
    assert ev["move"]["kind"] == again["legal"][0]["kind"]


def test_a_malformed_act_without_a_pending_prompt_brings_no_prompt(referee: RefereeThread, make_client: Any) -> None:
    a, b = _seat_two(referee, make_client, "n")
    who, _ = _first_prompt(a, b)
    other = b if who is a else a
    err = other.request({"type": "act", "table": "n", "seq": "1", "action": {"kind": "pass"}}, "error", check=False)
    assert err["name"] == "bad_message"
    assert other.request({"type": "ping"}, "pong", "prompt")["type"] == "pong"  # no prompt came first


def test_pass_with_a_card_is_refused_not_played(referee: RefereeThread, make_client: Any) -> None:
    a, b = _seat_two(referee, make_client, "s")
    who, p = _first_prompt(a, b)
    assert {"kind": "pass"} in p["legal"]
    bad = who.request(
        {"type": "act", "table": "s", "seq": p["seq"], "action": {"kind": "pass", "card": "As"}}, "error", check=False
    )
    assert bad["name"] == "bad_action" and "takes no 'card'" in bad["message"]
    again = who.expect("prompt")  # the table's illegal policy (reprompt): the same decision, with the error
    assert again["error"]["name"] == "bad_action" and again["legal"] == p["legal"] and again["view"] == p["view"]
    who.send({"type": "act", "table": "s", "seq": again["seq"], "action": {"kind": "pass"}})
    ev = who.wait_for(lambda m: m["type"] == "event")
    assert ev["move"] == {"seat": p["seat"], "kind": "pass", "card": None}


def test_leave_mid_game_answers_ok_then_game_end_to_the_leaver_too(referee: RefereeThread, make_client: Any) -> None:
    # protocol.md §5.9: the ok first, then the game_end (the leaver is still seated), then the seat is free
    a, b = _seat_two(referee, make_client, "l")
    _first_prompt(a, b)
    b.send({"type": "leave", "id": 9, "table": "l"})
    ok = b.wait_for(lambda m: m.get("id") == 9 or m["type"] == "game_end")
    assert ok["type"] == "ok" and ok["request"] == "leave"
    end = b.wait_for(lambda m: m["type"] == "game_end")
    assert end["termination"] == "resigned" and end["at_fault"] == 1 and end["winner"] == 0
    info = a.request({"type": "list_tables"}, "tables")
    assert next(t for t in info["tables"] if t["table"] == "l")["players"] == ["alice", None]
