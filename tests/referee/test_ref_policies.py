"""Time controls and policies (protocol.md §7, §8): both timeout policies, both
illegal-action policies, clocks in prompts. Short limits; no assertion on elapsed time."""

from __future__ import annotations

from typing import Any

from refharness import error_of, play_until_end, simple_choice

from referee.replay import check_file


def setup_table(r, make_client, **create: Any):
    admin = make_client(r.endpoint)
    admin.hello("org", role="admin")
    toks = admin.request({"type": "create_table", "table": "t", "reserved": True, **create}, "table_created")["seat_tokens"]
    clients = {}
    for s, tok in enumerate(toks):
        c = make_client(r.endpoint)
        c.hello(f"p{s}", token=tok)
        c.expect("seated")
        clients[s] = c
    return clients


def first_prompt(clients) -> tuple[int, dict[str, Any]]:
    while True:
        for s, c in clients.items():
            if c.sock.poll(10):
                m = c.recv()
                if m["type"] == "prompt":
                    return s, m


def test_timeout_forfeit(make_referee, make_client, tmp_path):
    r = make_referee(journal_dir=str(tmp_path))
    clients = setup_table(r, make_client, seed=3, clock={"move_ms": 50, "grace_ms": 10}, policies={"timeout": "forfeit"})
    seat, p = first_prompt(clients)
    assert p["clock"]["move_ms"] == 50 and p["clock"]["grace_ms"] == 10
    assert 0 <= p["clock"]["remaining_ms"] <= 50 and p["clock"]["bank_ms"] is None
    # the prompted seat never answers
    ends = {s: c.wait_for(lambda m: m["type"] == "game_end") for s, c in clients.items()}
    for end in ends.values():
        assert end["termination"] == "timeout" and end["at_fault"] == seat and end["winner"] == 1 - seat
    # a late answer changes nothing and is refused
    m = clients[seat].request({"type": "act", "table": "t", "seq": p["seq"], "action": {"kind": "pass"}})
    error_of(m, "no_game")
    journal = next(tmp_path.glob("t-g1-*.jsonl"))
    assert '"t":"timeout"' in journal.read_text()
    assert check_file(journal).termination == "timeout"


def test_timeout_default_move(make_referee, make_client, tmp_path):
    r = make_referee(journal_dir=str(tmp_path))
    clients = setup_table(r, make_client, seed=3, rules={"target_score": 20},
                          clock={"move_ms": 30, "grace_ms": 10}, policies={"timeout": "default_move"})
    seat, p = first_prompt(clients)
    assert p["view"]["phase"] == "offer"
    ev = clients[1 - seat].wait_for(lambda m: m["type"] == "event")
    assert ev["auto"] is True and ev["move"] == {"seat": seat, "kind": "pass", "card": None}
    # nobody answers at all: the referee plays every move; it never knocks, so the game
    # goes on by default moves. Answer from now on, and the game ends normally.
    ends = play_until_end(clients, "t")
    assert ends[0]["termination"] == "normal"
    journal = next(tmp_path.glob("t-g1-*.jsonl"))
    text = journal.read_text()
    assert '"auto":true' in text and '"policy":"default_move"' in text
    check_file(journal)


def test_default_move_plays_whole_turns(make_referee, make_client):
    """A seat that never answers is played for: pass, draw from the stock, discard."""
    r = make_referee()
    clients = setup_table(r, make_client, seed=9, clock={"move_ms": 20, "grace_ms": 5}, policies={"timeout": "default_move"})
    autos: list[dict[str, Any]] = []
    other_seat = None
    while len(autos) < 6:
        for s, c in clients.items():
            if not c.sock.poll(10):
                continue
            m = c.recv()
            if m["type"] == "event" and m["auto"] and s != m["move"]["seat"]:
                autos.append(m["move"])
            if m["type"] == "prompt" and other_seat is not None and s == other_seat:
                c.send({"type": "act", "table": "t", "seq": m["seq"], "action": simple_choice(m["legal"])})
        if other_seat is None and autos:
            other_seat = 1 - autos[0]["seat"]
    kinds = {a["kind"] for a in autos}
    assert {"draw_stock", "discard"} <= kinds and "knock" not in kinds


def test_bank_and_increment_in_prompts(make_referee, make_client):
    r = make_referee()
    clients = setup_table(r, make_client, seed=4, rules={"target_score": 15},
                          clock={"bank_ms": 60000, "increment_ms": 1000, "grace_ms": 100})
    seen: list[dict[str, Any]] = []

    def choose(seat: int, m: dict[str, Any]) -> dict[str, Any]:
        seen.append(m["clock"])
        return simple_choice(m["legal"])

    ends = play_until_end(clients, "t", choose=choose)
    assert ends[0]["termination"] == "normal"
    for ck in seen:
        assert ck["move_ms"] == 0 and ck["increment_ms"] == 1000
        assert len(ck["bank_ms"]) == 2 and all(0 <= b <= 60000 + 1000 * len(seen) for b in ck["bank_ms"])
        assert ck["remaining_ms"] is not None and ck["remaining_ms"] <= max(ck["bank_ms"])
    assert any(b > 60000 for ck in seen for b in ck["bank_ms"])  # increments were added


def test_illegal_reprompt_never_forfeits(make_referee, make_client):
    r = make_referee()
    clients = setup_table(r, make_client, seed=8, policies={"illegal": "reprompt", "illegal_limit": 1})
    seat, p = first_prompt(clients)
    c = clients[seat]
    seq = p["seq"]
    for _ in range(5):
        m = c.request({"type": "act", "table": "t", "seq": seq, "action": {"kind": "draw_discard"}})
        error_of(m, "illegal_action")
        again = c.expect("prompt")
        assert again["seq"] > seq and again["error"]["name"] == "illegal_action"
        seq = again["seq"]
    c.send({"type": "act", "table": "t", "seq": seq, "action": {"kind": "pass"}})
    ev = c.expect("event")
    assert ev["move"]["kind"] == "pass"


def test_illegal_forfeit_after_n(make_referee, make_client, tmp_path):
    r = make_referee(journal_dir=str(tmp_path))
    clients = setup_table(r, make_client, seed=8, policies={"illegal": "forfeit", "illegal_limit": 2})
    seat, p = first_prompt(clients)
    c = clients[seat]
    error_of(
        c.request({"type": "act", "table": "t", "seq": p["seq"], "action": {"kind": "discard", "card": "Kd"}}), "illegal_action"
    )
    again = c.expect("prompt")
    assert again["error"]["name"] == "illegal_action"
    error_of(c.request({"type": "act", "table": "t", "seq": again["seq"], "action": {"kind": "sing"}}, check=False), "bad_action")
    end = c.expect("game_end")
    assert end["termination"] == "illegal" and end["at_fault"] == seat and end["winner"] == 1 - seat
    journal = next(tmp_path.glob("t-g1-*.jsonl"))
    assert journal.read_text().count('"t":"illegal"') == 2
    assert check_file(journal).termination == "illegal"
