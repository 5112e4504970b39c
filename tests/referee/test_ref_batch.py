"""Protocol 1.3: batched events (``hello.batch_events``), against a real referee.

The property that matters: a batched seat learns exactly what an events-on seat learns,
move for move (the same ``n``, ``move`` and ``auto``, in the same order), only carried
inside its next ``prompt`` / ``advise_prompt`` / ``hand_end`` / ``game_end`` instead of
one ``event`` frame per move. It is checked by playing the same seeded game twice, at a
table of events-on seats and at a table of batched seats, with the same deterministic
choices, and comparing what each seat was told.
"""

from __future__ import annotations

from typing import Any

import pytest
from refharness import Client, error_of, play_until_end, simple_choice

CARRIERS = ("prompt", "advise_prompt", "hand_end", "game_end")


def seat_table(referee: Any, make_client: Any, table: str, variant: str, seed: int, **hello: Any) -> dict[int, Client]:
    admin = make_client(referee.endpoint)
    admin.hello("organiser", role="admin")
    created = admin.request(
        {
            "type": "create_table",
            "table": table,
            "variant": variant,
            "reserved": True,
            "seed": seed,
            "rules": {"target_score": 30},
        },
        "table_created",
    )
    clients = {}
    for seat, tok in enumerate(created["seat_tokens"]):
        c = make_client(referee.endpoint, validate="all")  # every message against the strict schema
        w = c.hello(f"p{seat}", token=tok, **hello)
        assert w["batch_events"] is hello.get("batch_events", False)
        c.expect("seated")
        clients[seat] = c
    return clients


def told(c: Client) -> list[tuple[int, dict[str, Any], bool]]:
    """The moves a seat was told, in order: from event frames, or from batched lists."""
    out = []
    for m in c.received:
        if m["type"] == "event":
            out.append((m["n"], m["move"], m["auto"]))
        elif m["type"] in CARRIERS and "events" in m:
            out.extend((e["n"], e["move"], e["auto"]) for e in m["events"])
    return out


@pytest.mark.parametrize("variant", ["oklahoma", "box"])
def test_batched_seats_are_told_every_move_in_one_frame_per_decision(referee, make_client, variant):
    plain = seat_table(referee, make_client, "plain", variant, seed=5)
    batched = seat_table(referee, make_client, "batched", variant, seed=5, batch_events=True)
    ends_p = play_until_end(plain, "plain", advise=True)
    ends_b = play_until_end(batched, "batched", advise=True)
    assert ends_p[0]["final"] == ends_b[0]["final"]  # the same game was played
    for seat, c in batched.items():
        types = [m["type"] for m in c.received]
        assert "event" not in types
        moves = told(c)
        assert moves and moves == told(plain[seat])  # the same moves, as this seat may see them
        # every feed number reaches the seat exactly once: in its own message or in a batch
        ns = sorted(
            [n for n, _, _ in moves] + [m["n"] for m in c.received if m["type"] in ("game_start", "hand_end", "game_end")]
        )
        assert ns == list(range(len(ns)))
        # a carrier's list holds only moves older than the carrier, and the views agree
        prompts_p = {m["seq"]: m for m in plain[seat].received if m["type"] == "prompt"}
        for m in c.received:
            if m["type"] in CARRIERS:
                assert "events" in m
                if m["type"] in ("hand_end", "game_end"):
                    assert all(e["n"] < m["n"] for e in m["events"])
            if m["type"] == "prompt":
                # the advice a captain's view shows depends on whether the sitter's advice
                # beat the captain's move (a race the protocol allows, §5.14), so it is
                # not compared: everything else in the view must agree
                assert _without_advice(m["view"]) == _without_advice(prompts_p[m["seq"]]["view"])
                assert m["legal"] == prompts_p[m["seq"]]["legal"]
    for c in plain.values():  # 1.2 behaviour unchanged: no batch lists for others
        assert not [m for m in c.received if m["type"] in CARRIERS and "events" in m]


def test_batch_with_events_off_and_mixed_seats(referee, make_client):
    """events=false wins over batch_events (no moves at all); a batched and an events-on
    seat at one table each get theirs."""
    lean = make_client(referee.endpoint, validate="all")
    assert lean.hello("lean", events=False, batch_events=True)["batch_events"] is True
    full = make_client(referee.endpoint)
    assert full.hello("full")["batch_events"] is False
    lean.request({"type": "join", "table": "m", "rules": {"target_score": 20}}, "seated")
    full.request({"type": "join", "table": "m", "rules": {"target_score": 20}}, "seated")
    play_until_end({0: lean, 1: full}, "m")
    assert not told(lean) and not [m for m in lean.received if m["type"] in CARRIERS and "events" in m]
    assert told(full)
    # seat_table's batched seat next to an events-on one
    batched = make_client(referee.endpoint, validate="all")
    batched.hello("b", batch_events=True)
    other = make_client(referee.endpoint)
    other.hello("o")
    batched.request({"type": "join", "table": "x", "rules": {"target_score": 20}}, "seated")
    other.request({"type": "join", "table": "x", "any_rules": True}, "seated")
    play_until_end({0: batched, 1: other}, "x")
    assert "event" not in {m["type"] for m in batched.received}
    assert [n for n, _, _ in told(batched)] == [n for n, mv, _ in told(other)]


def test_batched_seat_resumes_from_its_snapshot(referee, make_client):
    """Held moves are covered by a snapshot: after a resume, the next lists start after it."""
    clients = seat_table(referee, make_client, "r", "oklahoma", seed=9, batch_events=True)
    acted = last = None
    count = 0
    while not (count >= 3 and last == 0):  # stop right after seat 0 moved: it holds that move
        for seat, c in clients.items():
            while c.sock.poll(20):
                m = c.recv()
                if m["type"] == "prompt":
                    c.send({"type": "act", "table": "r", "seq": m["seq"], "action": simple_choice(m["legal"])})
                    acted, last = m, seat
                    count += seat == 0
                    break
            if last == 0 and count >= 3:
                break
    assert acted is not None
    again = make_client(referee.endpoint, validate="all")
    w = again.hello("p0", token=clients[0].token, batch_events=True)
    assert w["resumed"] is True and w["batch_events"] is True
    snap = again.expect("snapshot")
    assert snap["n"] >= 1
    clients[0].close()
    clients[0] = again
    play_until_end(clients, "r")
    ns = [n for n, _, _ in told(again)]
    assert ns and min(ns) > snap["n"]  # what the snapshot covers is never told again
    feed = sorted(ns + [m["n"] for m in again.received if m["type"] in ("hand_end", "game_end")])
    assert feed == list(range(snap["n"] + 1, snap["n"] + 1 + len(feed)))


def test_batch_events_must_be_a_bool(referee, make_client):
    c = make_client(referee.endpoint)
    m = c.request({"type": "hello", "protocol": 1, "role": "player", "name": "x", "batch_events": "yes"}, check=False)
    assert "batch_events" in error_of(m, "bad_message")["message"]


def _without_advice(view: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in view.items() if k != "advice"}
