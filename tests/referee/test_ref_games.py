"""Complete games of both variants through a real referee, raw clients only."""

from __future__ import annotations

import pytest
from refharness import play_until_end

from okgin.rng import seed_hash


def seat_players(referee, make_client, variant, n, table="t", **create):
    admin = make_client(referee.endpoint)
    admin.hello("organiser", role="admin")
    created = admin.request(
        {"type": "create_table", "table": table, "variant": variant, "reserved": True, **create}, "table_created"
    )
    assert len(created["seat_tokens"]) == n
    clients = {}
    for seat, tok in enumerate(created["seat_tokens"]):
        c = make_client(referee.endpoint)
        w = c.hello(f"p{seat}", token=tok)
        assert w["token"] == tok and w["resumed"] is False
        s = c.expect("seated")
        assert s["seat"] == seat and s["table"] == table
        clients[seat] = c
    return admin, clients


@pytest.mark.parametrize("variant,n", [("oklahoma", 2), ("box", 3)])
def test_complete_game(referee, make_client, variant, n):
    _, clients = seat_players(referee, make_client, variant, n, seed=11, rules={"target_score": 40})
    ends = play_until_end(clients, "t", advise=True)
    finals = {s: m["final"] for s, m in ends.items()}
    assert len({str(f) for f in finals.values()}) == 1  # everyone is told the same result
    end = ends[0]
    assert end["termination"] == "normal"
    assert max(end["final"]["scores"]) >= 40
    assert end["winner"] == end["final"]["winner"]
    # 1.4: the hash commits to the seed and a secret salt, both revealed at the end
    assert end["seed"] == 11 and end["seed_hash"] == seed_hash(11, end["salt"]) != seed_hash(11)
    # game_start published the same hash before the seed
    starts = [m for m in clients[0].received if m["type"] == "game_start"]
    assert starts and starts[0]["seed_hash"] == end["seed_hash"]
    # feed numbers to each seat are 0, 1, 2, ... without a gap
    for c in clients.values():
        ns = [m["n"] for m in c.received if m["type"] in ("game_start", "event", "hand_end", "game_end")]
        assert ns == list(range(len(ns)))


def test_box_sitter_gets_captain_view_and_advice_reaches_captain(referee, make_client):
    _, clients = seat_players(referee, make_client, "box", 3, seed=247)
    gs = {s: c.expect("game_start") for s, c in clients.items()}
    roles = gs[0]["view"]["roles"]
    captain, sitter, box = roles.index("captain"), roles.index("sitter"), roles.index("box")
    p = clients[captain].expect("prompt")
    ap = clients[sitter].expect("advise_prompt")
    assert ap["seq"] == p["seq"] and ap["captain"] == captain and ap["legal"] == p["legal"]
    assert ap["view"]["hand"] == p["view"]["hand"] and ap["view"]["hand_of"] == captain
    assert gs[box]["view"]["hand"] != p["view"]["hand"]
    ok = clients[sitter].request(
        {"type": "advise", "table": "t", "seq": p["seq"], "action": {"kind": "pass"}, "text": "pass it"}, "ok"
    )
    assert ok["request"] == "advise"
    adv = clients[captain].expect("advice")
    assert adv == {
        "type": "advice",
        "table": "t",
        "game": 1,
        "seq": p["seq"],
        "seat": sitter,
        "action": {"kind": "pass"},
        "text": "pass it",
    }
    # advice never moved the game: the same prompt is still pending
    clients[captain].send({"type": "act", "table": "t", "seq": p["seq"], "action": {"kind": "take"}})
    ev = clients[captain].expect("event")
    assert ev["move"] == {"seat": captain, "kind": "take", "card": p["view"]["upcard"]}
    # the box got no advice, ever
    assert not [m for m in clients[box].received if m["type"] in ("advice", "advise_prompt")]


def test_quick_match_both_variants(referee, make_client):
    for variant, n in (("oklahoma", 2), ("box", 3)):
        clients = {}
        for i in range(n):
            c = make_client(referee.endpoint)
            c.hello(f"q{i}")
            q = c.request({"type": "queue", "variant": variant, "rules": {"target_score": 25}}, "queued")
            assert q["waiting"] == i + 1 and q["needed"] == n and q["rules"]["target_score"] == 25
            clients[i] = c
        seated = {i: c.expect("seated") for i, c in clients.items()}
        table = seated[0]["table"]
        assert sorted(s["seat"] for s in seated.values()) == list(range(n))
        ends = play_until_end({seated[i]["seat"]: c for i, c in clients.items()}, table)
        assert ends[0]["termination"] == "normal"


def test_named_table_rematch_same_table(referee, make_client):
    a, b = make_client(referee.endpoint), make_client(referee.endpoint)
    a.hello("alice")
    b.hello("bob")
    sa = a.request({"type": "join", "table": "friday", "rules": {"target_score": 20}}, "seated")
    assert sa["seat"] == 0 and sa["status"] == "waiting" and sa["players"] == ["alice", None]
    sb = b.request({"type": "join", "table": "friday", "rules": {"target_score": 20}}, "seated")
    assert sb["seat"] == 1 and sb["players"] == ["alice", "bob"]
    ends = play_until_end({0: a, 1: b}, "friday")
    assert ends[0]["game"] == 1
    a.request({"type": "rematch", "table": "friday"}, "ok")
    st = b.expect("rematch_status")
    assert st["ready"] == [True, False] and st["game"] == 2
    b.request({"type": "rematch", "table": "friday"}, "ok")
    g2 = a.wait_for(lambda m: m["type"] == "game_start")
    assert g2["game"] == 2 and g2["table"] == "friday"
    b.wait_for(lambda m: m["type"] == "game_start")
    ends2 = play_until_end({0: a, 1: b}, "friday")
    assert ends2[1]["game"] == 2


def test_resign_and_leave(referee, make_client):
    a, b = make_client(referee.endpoint), make_client(referee.endpoint)
    a.hello("alice")
    b.hello("bob")
    a.request({"type": "join", "table": "r"}, "seated")
    b.request({"type": "join", "table": "r"}, "seated")
    a.expect("game_start")
    ok = b.request({"type": "resign", "table": "r"}, "ok")
    assert ok["request"] == "resign"
    end = a.wait_for(lambda m: m["type"] == "game_end")
    assert end["termination"] == "resigned" and end["at_fault"] == 1 and end["winner"] == 0
    # leaving a finished table frees the seat; the other seat sees a waiting table
    b.request({"type": "leave", "table": "r"}, "ok")
    info = a.request({"type": "list_tables"}, "tables")
    t = next(t for t in info["tables"] if t["table"] == "r")
    assert t["status"] == "waiting" and t["players"] == ["alice", None]
    # leaving mid-game is a resignation
    c = make_client(referee.endpoint)
    c.hello("carol")
    c.request({"type": "join", "table": "r"}, "seated")
    # alice stayed from game 1: game 2 starts only when she consents (protocol.md §5.18)
    assert a.wait_for(lambda m: m["type"] == "rematch_status")["ready"] == [False, True]
    a.request({"type": "rematch", "table": "r"}, "ok")
    a.wait_for(lambda m: m["type"] == "game_start")
    a.request({"type": "leave", "table": "r"}, "ok")
    end = c.wait_for(lambda m: m["type"] == "game_end")
    assert end["termination"] == "resigned" and end["at_fault"] == 0


@pytest.mark.parametrize("variant,n", [("oklahoma", 2), ("box", 3)])
def test_each_prompt_follows_the_feed_message_of_its_state(referee, make_client, variant, n):
    """protocol.md 4.3, per connection: the event of a move reaches a seat before that
    seat's next prompt (the referee sends the prompted seat's event first, the other
    seats' after the prompt; no client may see the prompt ahead of its event). So the
    feed message just before each prompt or advise_prompt shows the prompt's own state."""
    _, clients = seat_players(referee, make_client, variant, n, seed=21, rules={"target_score": 30})
    play_until_end(clients, "t")
    for c in clients.values():
        last_feed = None
        checked = 0
        for m in c.received:
            if m["type"] in ("game_start", "event", "hand_end"):
                last_feed = m
            elif m["type"] in ("prompt", "advise_prompt"):
                assert last_feed is not None and last_feed["view"] == m["view"], (last_feed, m)
                checked += 1
        assert checked > 5
