"""protocol.md §15's transcripts are real: the same moves through a real referee give
the documented prompts, cards, errors and hand results."""

from __future__ import annotations

import json
import re
from typing import Any

from refharness import ROOT, Client, error_of

DOC = (ROOT / "protocol.md").read_text()


def section(title: str) -> str:
    start = DOC.index(title)
    return DOC[start : DOC.index("\n### ", start + 1)]


def json_after(text: str, key: str) -> Any:
    """The JSON value following ``"key":`` in a transcript (brace-matched)."""
    i = text.index(f'"{key}":') + len(key) + 3
    depth = 0
    for j in range(i, len(text)):
        if text[j] in "{[":
            depth += 1
        elif text[j] in "}]":
            depth -= 1
            if depth == 0:
                return json.loads(re.sub(r"\s+", "", text[i : j + 1]))
    raise ValueError(key)


def prompt_of(c: Client) -> dict[str, Any]:
    return c.wait_for(lambda m: m["type"] == "prompt")


def test_transcript_oklahoma_hand(referee, make_client):
    text = section("### 15.1")
    referee.call(lambda: referee.ref.create_table("demo", "oklahoma", seed=871))
    alice, bob = make_client(referee.endpoint), make_client(referee.endpoint)
    alice.hello("alice")
    bob.hello("bob")
    s0 = alice.request({"type": "join", "table": "demo", "variant": "oklahoma"}, "seated")
    assert s0["seat"] == 0 and s0["players"] == ["alice", None] and s0["status"] == "waiting"
    assert bob.request({"type": "join", "table": "demo"}, "seated")["seat"] == 1
    g0 = alice.expect("game_start")
    assert re.fullmatch(r"[0-9a-f]{64}", g0["seed_hash"]) and '"seed_hash":"<64 hex digits: salted' in text  # 1.4: new every game
    assert g0["view"]["hand"] == ["4c", "5c", "Jc", "Td", "Ah", "5h", "Th", "Kh", "4s", "7s"]
    assert bob.expect("game_start")["view"]["hand"] == ["Ac", "2c", "Ad", "3d", "5d", "6d", "7d", "3h", "As", "3s"]
    p = prompt_of(alice)
    assert p["seq"] == 1 and p["legal"] == [{"kind": "take"}, {"kind": "pass"}] and p["view"]["knock_limit"] == 9
    alice.send({"type": "act", "table": "demo", "seq": 1, "action": {"kind": "pass"}})
    p = prompt_of(bob)
    assert p["seq"] == 2
    bob.send({"type": "act", "table": "demo", "seq": 2, "action": {"kind": "pass"}})
    p = prompt_of(alice)
    assert p["seq"] == 3 and p["legal"] == [{"kind": "draw_stock"}]
    alice.send({"type": "act", "table": "demo", "seq": 3, "action": {"kind": "draw_stock"}})
    ev = alice.wait_for(lambda m: m["type"] == "event" and m["n"] == 3)
    assert ev["move"] == {"seat": 0, "kind": "draw_stock", "card": "Jh"}
    assert bob.wait_for(lambda m: m["type"] == "event" and m["n"] == 3)["move"]["card"] is None
    p = prompt_of(alice)
    assert p["seq"] == 4 and [a["card"] for a in p["legal"]] == ["4c", "5c", "Jc", "Td", "Ah", "5h", "Th", "Jh", "Kh", "4s", "7s"]
    err = alice.request({"type": "act", "table": "demo", "seq": 3, "action": {"kind": "draw_stock"}})
    error_of(err, "stale_seq")
    assert err["message"] in text
    alice.send({"type": "act", "table": "demo", "seq": 4, "action": {"kind": "discard", "card": "Jc"}})
    p = prompt_of(bob)
    assert p["seq"] == 5 and p["legal"] == [{"kind": "draw_stock"}, {"kind": "draw_discard"}]
    bob.send({"type": "act", "table": "demo", "seq": 5, "action": {"kind": "draw_stock"}})
    assert bob.wait_for(lambda m: m["type"] == "event" and m["n"] == 5)["move"]["card"] == "7c"
    p = prompt_of(bob)
    assert p["seq"] == 6 and p["legal"][-2:] == [{"kind": "knock", "card": "2c"}, {"kind": "knock", "card": "7c"}]
    bob.send({"type": "act", "table": "demo", "seq": 6, "action": {"kind": "knock", "card": "2c"}})
    ev = alice.wait_for(lambda m: m["type"] == "event" and m["n"] == 6)
    assert ev["move"] == {"seat": 1, "kind": "knock", "card": None} and ev["view"] is None
    he = alice.expect("hand_end")
    assert he["n"] == 7 and he["result"] == json_after(text, "result")
    assert he["view"]["hand_number"] == 1 and he["view"]["upcard"] == "Td" and he["view"]["to_act"] == 0
    p = prompt_of(alice)
    assert p["seq"] == 7 and p["legal"] == [{"kind": "take"}, {"kind": "pass"}]


def test_transcript_box_hand(referee, make_client):
    text = section("### 15.2")
    admin = make_client(referee.endpoint)
    admin.hello("organiser", role="admin")
    toks = admin.request({"type": "create_table", "table": "box7", "variant": "box", "seed": 247, "reserved": True,
                          "clock": {"move_ms": 10000, "grace_ms": 500}}, "table_created")["seat_tokens"]
    c = {}
    for s, tok in enumerate(toks):
        c[s] = make_client(referee.endpoint)
        c[s].hello(["carol", "dan", "erin"][s], token=tok)
        assert c[s].expect("seated")["seat"] == s
    starts = {s: c[s].expect("game_start") for s in c}
    assert (
        re.fullmatch(r"[0-9a-f]{64}", starts[0]["seed_hash"]) and '"seed_hash":"<64 hex digits: salted' in text
    )  # 1.4: new every game
    assert starts[0]["view"]["roles"] == ["captain", "box", "sitter"]
    assert starts[0]["view"]["role_draws"] == [[[0, "Jd"], [1, "Qd"], [2, "5d"]]]
    assert starts[2]["view"]["hand"] == starts[0]["view"]["hand"] and starts[2]["view"]["hand_of"] == 0
    p = prompt_of(c[0])
    ap = c[2].expect("advise_prompt")
    assert p["seq"] == ap["seq"] == 1 and ap["captain"] == 0
    assert p["clock"]["move_ms"] == 10000 and p["clock"]["grace_ms"] == 500
    c[2].request({"type": "advise", "table": "box7", "seq": 1, "action": {"kind": "pass"}, "text": "8c does not help"}, "ok")
    assert c[0].expect("advice")["text"] == "8c does not help"
    c[0].send({"type": "act", "table": "box7", "seq": 1, "action": {"kind": "pass"}})
    p = prompt_of(c[1])
    assert p["seq"] == 2
    c[1].send({"type": "act", "table": "box7", "seq": 2, "action": {"kind": "pass"}})
    p = prompt_of(c[0])
    assert p["seq"] == 3 and p["legal"] == [{"kind": "draw_stock"}]
    c[0].send({"type": "act", "table": "box7", "seq": 3, "action": {"kind": "draw_stock"}})
    for s, card in ((0, "9c"), (2, "9c"), (1, None)):
        assert c[s].wait_for(lambda m: m["type"] == "event" and m["n"] == 3)["move"]["card"] == card
    p = prompt_of(c[0])
    assert p["seq"] == 4 and [a for a in p["legal"] if a["kind"] == "knock"] == [
        {"kind": "knock", "card": "9c"},
        {"kind": "knock", "card": "Td"},
        {"kind": "knock", "card": "Jh"},
        {"kind": "knock", "card": "9s"},
    ]
    c[2].wait_for(lambda m: m["type"] == "advise_prompt" and m["seq"] == 4)
    c[2].send({"type": "advise", "table": "box7", "seq": 4, "action": {"kind": "knock", "card": "9c"}, "text": "knock"})
    adv = c[0].expect("advice")
    assert adv == {
        "type": "advice",
        "table": "box7",
        "game": 1,
        "seq": 4,
        "seat": 2,
        "action": {"kind": "knock", "card": "9c"},
        "text": "knock",
    }
    c[0].send({"type": "act", "table": "box7", "seq": 4, "action": {"kind": "knock", "card": "9c"}})
    he = c[1].wait_for(lambda m: m["type"] == "hand_end")
    assert he["n"] == 5 and he["result"] == json_after(text, "result")
    assert he["view"]["roles"] == ["box", "sitter", "captain"] and he["view"]["to_act"] == 2
    assert prompt_of(c[2])["seq"] == 5
    ap = c[1].wait_for(lambda m: m["type"] == "advise_prompt")
    assert ap["seq"] == 5 and ap["captain"] == 2
