"""Spectators (protocol.md §11) and the information rule (docs/rules.md §5).

The property test plays many games and checks every message to every seat and public
spectator against an oracle: a full-visibility watcher (delay 0) on the same table, whose
view for feed number ``n`` shows every hand and the stock. A message reflecting state
``n`` may carry no card that, at ``n``, lies hidden in the stock or in a hand its
recipient may not see.
"""

from __future__ import annotations

from typing import Any

import zmq
from feedkit import fill_hand_ends
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from refharness import RECV_TIMEOUT_MS, Client, error_of, simple_choice

FEED = ("game_start", "event", "hand_end", "game_end")
REVEALED_KEYS = ("last_result", "result", "role_draws", "final")  # public once shown


def cards_in(x: Any, out: set[str]) -> set[str]:
    """Every card string inside a message, skipping what the rules have revealed."""
    if isinstance(x, dict):
        for k, v in x.items():
            if k not in REVEALED_KEYS:
                cards_in(v, out)
    elif isinstance(x, list):
        for v in x:
            cards_in(v, out)
    elif isinstance(x, str) and len(x) == 2 and x[0] in "A23456789TJQK" and x[1] in "cdhs":
        out.add(x)
    return out


def hidden_from(full_view: dict[str, Any], seat: int | None) -> set[str]:
    """Cards hidden from ``seat`` (None: a spectator) in the state ``full_view`` shows."""
    roles = full_view["roles"]
    may_see = set()
    if seat is not None:
        may_see.add(seat)
        if roles[seat] == "sitter":
            may_see.add(roles.index("captain"))
    hidden = set(full_view["stock"])
    for i, hand in enumerate(full_view["all_hands"]):
        if i not in may_see:
            hidden |= set(hand) - set(full_view["known_cards"][i])
    return hidden


def run_watched_game(r, make_client, variant: str, seed: int, target: int) -> tuple[dict, dict, Client, Client]:
    admin = make_client(r.endpoint)
    admin.hello("org", role="admin")
    n = 2 if variant == "oklahoma" else 3
    made = admin.request({"type": "create_table", "table": f"w{seed}{variant}", "variant": variant, "seed": seed,
                          "rules": {"target_score": target}, "reserved": True, "full_feed_delay_ms": 0}, "table_created")
    toks = made["seat_tokens"]
    table = f"w{seed}{variant}"
    public = make_client(r.endpoint, validate="none")
    public.hello("watcher", role="spectator")
    assert public.request({"type": "watch", "table": table}, "snapshot")["view"] is None
    oracle = make_client(r.endpoint, validate="none")
    oracle.hello("oracle", role="spectator")
    oracle.request({"type": "watch", "table": table, "full": True, "broadcast_token": made["broadcast_token"]}, "snapshot")
    seats = {}
    for s, tok in enumerate(toks):
        c = make_client(r.endpoint, validate="none")
        c.hello(f"p{s}", token=tok)
        seats[s] = c
    # Drive the game; record (state n, message) per recipient.
    log: dict[Any, list[tuple[int, dict[str, Any]]]] = {s: [] for s in seats}
    log["public"] = []
    full: dict[int, dict[str, Any]] = {}
    moves: dict[int, dict[str, Any]] = {}
    cur = {k: 0 for k in log}
    poller = zmq.Poller()
    who = {}
    for k, c in [*seats.items(), ("public", public), ("oracle", oracle)]:
        poller.register(c.sock, zmq.POLLIN)
        who[c.sock] = (k, c)
    done: set[Any] = set()
    while len(done) < n + 2:
        ready = dict(poller.poll(RECV_TIMEOUT_MS))
        assert ready, "no progress"
        for sock in ready:
            k, c = who[sock]
            m = c.recv()
            if m["type"] == "game_end":
                done.add(k)
            if k == "oracle":
                if m["type"] in FEED and m.get("view") is not None:
                    full[m["n"]] = m["view"]
                if m["type"] == "event":
                    moves[m["n"]] = m["move"]
                continue
            if m["type"] in FEED:
                cur[k] = m["n"]
            log[k].append((cur[k], m))
            if m["type"] == "prompt":
                c.send({"type": "act", "table": table, "seq": m["seq"], "action": simple_choice(m["legal"])})
            elif m["type"] == "advise_prompt":
                c.send({"type": "advise", "table": table, "seq": m["seq"], "action": simple_choice(m["legal"]), "text": "x"})
    fill_hand_ends(full, moves)
    return log, full, public, oracle


def check_information(log: dict, full: dict) -> int:
    checked = 0
    for k, entries in log.items():
        seat = None if k == "public" else k
        for n, m in entries:
            if m["type"] == "event" and m["view"] is None:
                # the move that ended a hand: a knock shows no card; a discard is public
                assert m["move"]["kind"] != "knock" or m["move"]["card"] is None
                continue
            if m["type"] in ("error", "ok", "heartbeat", "seated", "welcome"):
                continue
            fv = full[n]
            leaked = cards_in(m, set()) & hidden_from(fv, seat)
            assert not leaked, f"{k} was sent hidden cards {sorted(leaked)} in {m['type']} (n={n})"
            v = m.get("view")
            if seat is None and v is not None:
                assert v["hand"] is None and v["seat"] is None and v["advice"] == []
                assert "all_hands" not in v and "stock" not in v
            if seat is not None and v is not None:
                assert "all_hands" not in v and "stock" not in v
                if v["roles"][seat] == "box":
                    assert v["advice"] == []
            checked += 1
    return checked


@settings(max_examples=6, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10**6), variant=st.sampled_from(["oklahoma", "box"]))
def test_no_hidden_card_ever_reaches_a_seat_or_spectator(make_referee, make_client, seed, variant):
    r = make_referee()
    log, full, _, _ = run_watched_game(r, make_client, variant, seed, target=30)
    assert check_information(log, full) > 20
    assert {m["type"] for _, m in log["public"]} >= {"game_start", "event", "hand_end", "game_end"}
    r.stop()


def test_public_feed_snapshot_then_numbered_deltas(make_referee, make_client):
    r = make_referee()
    log, full, _, _ = run_watched_game(r, make_client, "oklahoma", 12, target=25)
    ns = [m["n"] for _, m in log["public"] if m["type"] in FEED]
    assert ns == list(range(len(ns)))
    # a spectator joining late gets a snapshot at the current n, then continues from n + 1
    late = Client(r.endpoint)
    late.hello("late", role="spectator")
    snap = late.request({"type": "watch", "table": "w12oklahoma"}, "snapshot")
    assert snap["status"] == "finished" and snap["n"] == ns[-1] and snap["seat"] is None and snap["view"]["hand"] is None
    assert late.request({"type": "unwatch", "table": "w12oklahoma"}, "ok")["request"] == "unwatch"
    error_of(late.request({"type": "sync", "table": "w12oklahoma"}), "not_seated")
    late.close()
    # the full feed showed everything (the oracle): its views carry every hand and the stock
    assert all("all_hands" in v and "stock" in v for v in full.values())


def test_full_feed_is_delayed(make_referee, make_client):
    r = make_referee()
    admin = make_client(r.endpoint)
    admin.hello("org", role="admin")
    made = admin.request({"type": "create_table", "table": "d", "reserved": True, "full_feed_delay_ms": 600000}, "table_created")
    toks = made["seat_tokens"]
    seats = {}
    for s, tok in enumerate(toks):
        c = make_client(r.endpoint)
        c.hello(f"p{s}", token=tok)
        seats[s] = c
    fw = make_client(r.endpoint)
    fw.hello("broadcast", role="spectator")
    error_of(fw.request({"type": "watch", "table": "d", "full": True}), "broadcast_only")  # 1.4: the broadcaster's credential
    snap = fw.request({"type": "watch", "table": "d", "full": True, "broadcast_token": made["broadcast_token"]}, "snapshot")
    # ten minutes of delay: nothing of this game may be shown yet, not even the deal
    assert snap["full"] is True and snap["view"] is None and snap["n"] == 0 and snap["status"] == "playing"
    assert not fw.sock.poll(200) or fw.expect("heartbeat")
    pub = make_client(r.endpoint)
    pub.hello("public", role="spectator")
    snap2 = pub.request({"type": "watch", "table": "d"}, "snapshot")
    assert snap2["view"] is not None and snap2["view"]["hand"] is None


def test_watch_errors_and_sync(referee, make_client):
    a, b = make_client(referee.endpoint), make_client(referee.endpoint)
    a.hello("a")
    b.hello("b")
    a.request({"type": "join", "table": "s"}, "seated")
    b.request({"type": "join", "table": "s"}, "seated")
    a.expect("game_start")
    snap = a.request({"type": "sync", "table": "s"}, "snapshot")
    assert snap["seat"] == 0 and snap["view"]["seat"] == 0 and snap["view"]["hand"] is not None
    v = make_client(referee.endpoint)
    v.hello("v", role="spectator")
    error_of(v.request({"type": "watch", "table": "s", "full": True}), "no_full_feed")
    v.request({"type": "watch", "table": "s"}, "snapshot")
    assert v.request({"type": "sync", "table": "s"}, "snapshot")["full"] is False
    info = v.request({"type": "list_tables"}, "tables")["tables"]
    assert info[0]["spectators"] == 1 and info[0]["players"] == ["a", "b"]


def test_close_table_tells_everyone(referee, make_client):
    admin = make_client(referee.endpoint)
    admin.hello("org", role="admin")
    admin.request({"type": "create_table", "table": "c"}, "table_created")
    a, b, v = make_client(referee.endpoint), make_client(referee.endpoint), make_client(referee.endpoint)
    a.hello("a")
    b.hello("b")
    v.hello("v", role="spectator")
    a.request({"type": "join", "table": "c"}, "seated")
    b.request({"type": "join", "table": "c"}, "seated")
    v.request({"type": "watch", "table": "c"}, "snapshot")
    assert admin.request({"type": "close_table", "table": "c"}, "ok")["request"] == "close_table"
    for c in (a, b, v):
        end = c.wait_for(lambda m: m["type"] == "game_end")
        assert end["termination"] == "abandoned" and end["winner"] is None
        closed = c.expect("table_closed")
        assert closed["table"] == "c" and closed["reason"]
    error_of(a.request({"type": "resign", "table": "c"}), "no_such_table")



def play_watched(r, make_client, table: str, watches: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """Create reserved ``table``, have one spectator per entry of ``watches`` send those
    ``watch`` messages in turn, play the game with the simple choice, and return each
    spectator's feed messages up to its ``game_end``."""
    admin = make_client(r.endpoint)
    admin.hello("org", role="admin")
    made = admin.request({"type": "create_table", "table": table, "seed": 7, "rules": {"target_score": 30},
                          "reserved": True}, "table_created")
    poller = zmq.Poller()
    who: dict[Any, tuple[str, Client]] = {}
    for k, msgs in watches.items():
        c = make_client(r.endpoint)
        c.hello(k, role="spectator")
        for w in msgs:
            c.request({"type": "watch", "table": table, **w}, "snapshot")
        poller.register(c.sock, zmq.POLLIN)
        who[c.sock] = (k, c)
    for s, tok in enumerate(made["seat_tokens"]):
        c = make_client(r.endpoint, validate="none")
        c.hello(f"p{s}", token=tok)
        poller.register(c.sock, zmq.POLLIN)
        who[c.sock] = (f"seat{s}", c)
    got: dict[str, list[dict[str, Any]]] = {k: [] for k in watches}
    ended: set[str] = set()
    while ended != set(watches):
        ready = dict(poller.poll(RECV_TIMEOUT_MS))
        assert ready, "no progress"
        for sock in ready:
            k, c = who[sock]
            m = c.recv()
            if k in got:
                if m["type"] in FEED:
                    got[k].append(m)
                if m["type"] == "game_end":
                    ended.add(k)
            elif m["type"] == "prompt":
                c.send({"type": "act", "table": table, "seq": m["seq"], "action": simple_choice(m["legal"])})
    return got


def test_a_quiet_watch_gets_the_games_without_their_moves(make_referee, make_client):
    """Protocol 1.8: ``watch`` with ``events: false`` (an arena's front on its shards) gets
    the feed without its ``event`` messages, every other message with the same ``n`` as a
    plain watcher's; a ``watch`` again without it brings the events back, and it is refused
    with ``full``."""
    r = make_referee()
    got = play_watched(r, make_client, "q", {"loud": [{}], "quiet": [{"events": False}]})
    moves = [m for m in got["loud"] if m["type"] == "event"]
    assert moves, "the plain watcher saw the moves"
    assert not [m for m in got["quiet"] if m["type"] == "event"]
    assert [(m["type"], m["n"]) for m in got["quiet"]] == [(m["type"], m["n"]) for m in got["loud"] if m["type"] != "event"]
    assert {m["type"] for m in got["quiet"]} >= {"game_start", "hand_end", "game_end"}
    # watched again without events: they come back (the latest watch decides), as they
    # do for a watcher that asked for them after a quiet one
    again = play_watched(r, make_client, "q2", {"back": [{"events": False}, {}], "other": [{}]})
    assert [m["n"] for m in again["back"]] == [m["n"] for m in again["other"]]
    assert [m for m in again["back"] if m["type"] == "event"]
    admin = make_client(r.endpoint)
    admin.hello("org2", role="admin")
    admin.request({"type": "create_table", "table": "f", "full_feed_delay_ms": 0}, "table_created")
    refused = error_of(admin.request({"type": "watch", "table": "f", "full": True, "events": False}), "bad_message")
    assert "public feed" in refused["message"]
