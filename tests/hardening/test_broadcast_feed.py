"""The full-visibility feed is for broadcasters, and shows a hand only once it has ended
(issue 14, item 2; protocol.md §11, 1.4).

The attack this file replays: a seated player ``watch``-ed its own table with
``full: true`` and read its next stock cards from the feed. A hand's stock keeps its order,
so no delay in milliseconds protected it. Now (a) a player of the table is refused the
full feed (``broadcast_only``), token or not; (b) anyone else needs the table's broadcast
token or an admin session; (c) nothing of a running hand reaches a full watcher, checked
causally: whenever a seat is about to move, the hand is not over, so the watcher may hold
nothing of it, and each card a seat later draws from the stock must be absent from all
the watcher had received before that draw; (d) once the hand has ended, the watcher gets
every message of it, in order, with the move's cards. The public feed is
tests/hardening/test_information.py's.

Everything runs against a real ``okgin referee`` process on 127.0.0.1.
"""

from __future__ import annotations

import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
import zmq

from .hkit import ADMIN_KEY, RECV_TIMEOUT_MS, Raw, RefProc, admin, error_of, simple_choice

FEED = ("game_start", "event", "hand_end", "game_end")
CARDS = {r + s for r in "A23456789TJQK" for s in "cdhs"}


@pytest.fixture(scope="module")
def ref(tmp_path_factory: pytest.TempPathFactory):
    r = RefProc(tmp_path_factory.mktemp("bcast"), label="bcast")
    yield r
    assert r.internal_errors() == []
    r.stop()


def cards_of(x: Any, out: set[str] | None = None) -> set[str]:
    """Every card string anywhere in a message."""
    out = set() if out is None else out
    if isinstance(x, dict):
        for v in x.values():
            cards_of(v, out)
    elif isinstance(x, list):
        for v in x:
            cards_of(v, out)
    elif isinstance(x, str) and x in CARDS:
        out.add(x)
    return out


def full_table(adm: Raw, table: str, seed: int, delay_ms: int = 0, variant: str = "oklahoma", reserved: bool = True,
               target: int = 30) -> tuple[list[str] | None, str | None]:
    """An admin table with a full feed: (seat tokens, broadcast token)."""
    m = adm.request({"type": "create_table", "table": table, "variant": variant, "seed": seed, "reserved": reserved,
                     "rules": {"target_score": target}, "full_feed_delay_ms": delay_ms}, "table_created")
    return m["seat_tokens"], m.get("broadcast_token")


def seat(ref: RefProc, toks: list[str], table: str) -> list[Raw]:
    out = []
    for s, tok in enumerate(toks):
        c = Raw(ref.endpoint)
        c.hello(f"{table}-p{s}", token=tok)
        out.append(c)
    return out


def watch_full(c: Raw, table: str, token: str | None = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"type": "watch", "table": table, "full": True}
    if token is not None:
        msg["broadcast_token"] = token
    return c.request(msg)


# ---------------------------------------------------------------- (a), (b): who may watch
def test_a_player_never_gets_its_own_tables_full_feed(ref: RefProc) -> None:
    adm = admin(ref.endpoint)
    toks, btok = full_table(adm, "own", 7)
    assert toks is not None
    players = seat(ref, toks, "own")
    for p in players:
        error_of(watch_full(p, "own"), "broadcast_only")
        error_of(watch_full(p, "own", btok or "0" * 32), "broadcast_only")  # the organiser's token does not help
        snap = p.request({"type": "watch", "table": "own"}, "snapshot")  # the public feed stays open to it
        assert snap["full"] is False and snap["view"]["hand"] is None
    # the seat token on a new connection is that player again (a spectator may not use it, §13)
    again = Raw(ref.endpoint)
    again.hello("own-p0", token=toks[0])
    error_of(watch_full(again, "own", btok), "broadcast_only")
    # a player that left is refused for the rest of that game too
    players[1].request({"type": "leave", "table": "own"}, "ok")
    error_of(watch_full(players[1], "own", btok), "broadcast_only")
    for c in (*players, again, adm):
        c.close()


def test_a_session_that_sits_down_loses_its_full_watch(ref: RefProc) -> None:
    adm = admin(ref.endpoint)
    _, btok = full_table(adm, "open", 8, reserved=False)
    p = Raw(ref.endpoint)
    p.hello("switcher")
    assert watch_full(p, "open", btok)["type"] == "snapshot"  # not a player yet: the organiser's trust
    p.request({"type": "join", "table": "open", "rules": {"target_score": 30}}, "seated")
    error_of(p.request({"type": "unwatch", "table": "open"}), "not_seated")  # the full watch is gone
    error_of(watch_full(p, "open", btok), "broadcast_only")
    p.close()
    adm.close()


def test_b_the_full_feed_needs_a_credential(ref: RefProc) -> None:
    adm = admin(ref.endpoint)
    toks, btok = full_table(adm, "cred", 9, delay_ms=600000)
    assert toks is not None and isinstance(btok, str) and len(btok) == 32
    players = seat(ref, toks, "cred")
    spect = Raw(ref.endpoint)
    spect.hello("curious", role="spectator")
    error_of(watch_full(spect, "cred"), "broadcast_only")
    error_of(watch_full(spect, "cred", "0" * 32), "broadcast_only")
    error_of(watch_full(spect, "cred", btok[:-1]), "broadcast_only")
    error_of(watch_full(spect, "cred", toks[0]), "broadcast_only")  # a seat token is not a broadcast token
    snap = watch_full(spect, "cred", btok)
    assert snap["type"] == "snapshot" and snap["full"] is True
    assert snap["view"] is None and snap["n"] == 0  # nothing of the running hand
    assert spect.request({"type": "sync", "table": "cred"}, "snapshot")["full"] is True
    boss = admin(ref.endpoint)
    snap = watch_full(boss, "cred")  # an admin session needs no token
    assert snap["type"] == "snapshot" and snap["full"] is True and snap["view"] is None
    pub = Raw(ref.endpoint)
    pub.hello("public", role="spectator")
    assert pub.request({"type": "watch", "table": "cred"}, "snapshot")["full"] is False
    # a table without a full feed has no broadcast token, and says so
    m = adm.request({"type": "create_table", "table": "plain"}, "table_created")
    assert m.get("broadcast_token") is None
    error_of(watch_full(spect, "plain", btok), "no_full_feed")
    for c in (*players, spect, boss, pub, adm):
        c.close()


# ---------------------------------------------------------------- (c), (d): when it shows
def _play_watched(ref: RefProc, table: str, seed: int, delay_ms: int, variant: str) -> None:
    adm = admin(ref.endpoint, key=ADMIN_KEY)
    toks, btok = full_table(adm, table, seed, delay_ms=delay_ms, variant=variant)
    assert toks is not None
    bc = Raw(ref.endpoint)
    bc.hello("broadcaster", role="spectator")
    snap = watch_full(bc, table, btok)
    assert snap["type"] == "snapshot", snap
    seats = seat(ref, toks, table)
    game_no = 1
    got: list[dict[str, Any]] = []  # the broadcaster's feed messages of game 1, as received
    hand_end_n: list[int] = []  # per ended hand (as the seats saw it): the hand_end's n
    seat_feed: dict[int, dict[int, dict[str, Any]]] = defaultdict(dict)  # seat -> n -> its message
    pending_draw: dict[int, frozenset[str]] = {}  # seat -> cards the broadcaster had when it drew from the stock
    draws_checked = 0
    foreseen: list[str] = []  # stock draws the broadcaster could have told in advance
    early: list[int] = []  # n of messages of a running hand the broadcaster already had
    late: Raw | None = None
    late_snapshot: dict[str, Any] | None = None  # a mid-hand snapshot that looked into the running hand

    beat = [time.monotonic()]

    def drain() -> None:
        if time.monotonic() - beat[0] > 1.0:  # a silent watcher is declared gone (§10)
            beat[0] = time.monotonic()
            bc.send({"type": "heartbeat"})
        while bc.sock.poll(0):
            m = bc.recv()
            if m["type"] in FEED and m.get("game") == game_no:
                got.append(m)

    def of_running_hand() -> set[str]:
        """Every card in what the broadcaster holds of the hand being played now."""
        last = hand_end_n[-1] if hand_end_n else -1
        out: set[str] = set()
        for m in got:
            if m["n"] > last:
                cards_of(m, out)
        return out

    poller = zmq.Poller()
    for c in seats:
        poller.register(c.sock, zmq.POLLIN)
    done: set[int] = set()
    while len(done) < len(seats):
        ready = dict(poller.poll(RECV_TIMEOUT_MS))
        assert ready, "no progress"
        for s, c in enumerate(seats):
            if c.sock not in ready:
                continue
            m = c.recv()
            if m["type"] in FEED:
                seat_feed[s][m["n"]] = m
            if m["type"] == "event" and m["move"]["seat"] == s and s in pending_draw:
                assert m["move"]["kind"] == "draw_stock"
                card = m["move"]["card"]
                assert card is not None
                # (c) the card this seat just drew was in nothing the broadcaster had before the draw
                if card in pending_draw.pop(s):
                    foreseen.append(card)
                draws_checked += 1
            elif m["type"] == "hand_end":
                if not hand_end_n or hand_end_n[-1] < m["n"]:
                    hand_end_n.append(m["n"])
            elif m["type"] == "game_end":
                done.add(s)
            elif m["type"] == "prompt":
                # (c) seat s is to move in a hand that has not ended: the broadcaster holds nothing of it
                drain()
                last = hand_end_n[-1] if hand_end_n else -1
                early.extend(g["n"] for g in got if g["n"] > last and g["n"] not in early)
                action = simple_choice(m["legal"])
                if action["kind"] == "draw_stock":
                    pending_draw[s] = frozenset(of_running_hand())
                if late is None and len(hand_end_n) == 1:
                    # a broadcaster arriving mid-hand: its snapshot is the last released point
                    late = Raw(ref.endpoint)
                    late.hello("late", role="spectator")
                    ls = watch_full(late, table, btok)
                    v = ls["view"]
                    if ls["n"] > hand_end_n[-1] or not (
                        v is None or "stock" not in v or v["hand_number"] < m["view"]["hand_number"]
                    ):
                        late_snapshot = ls
                c.send({"type": "act", "table": table, "seq": m["seq"], "action": action})
    assert len(hand_end_n) >= 2 and draws_checked > 5, (hand_end_n, draws_checked)
    assert not foreseen, (
        f"the full feed showed {len(foreseen)} of {draws_checked} stock draws before they were drawn: {foreseen[:10]}"
    )
    assert not early, f"the full feed sent n={early} while their hand was being played"
    assert late_snapshot is None, f"a full snapshot taken mid-hand showed the running hand: n={late_snapshot['n']}"
    # (d) after the game (its last hand ended): every message, in order, each move with its cards
    last_n = max(seat_feed[0])
    while not got or got[-1]["n"] < last_n:
        m = bc.recv()
        if m["type"] in FEED and m.get("game") == game_no:
            got.append(m)
    assert [g["n"] for g in got] == list(range(last_n + 1))
    assert [g["type"] for g in got] == [seat_feed[0][n]["type"] for n in range(last_n + 1)]
    for g in got:
        n, v = g["n"], g.get("view")
        if g["type"] == "event":
            mover = g["move"]["seat"]
            own = seat_feed[mover].get(n)
            if own is not None and own["view"] is not None:
                assert g["move"] == own["move"]  # the mover saw its own move whole
            if g["move"]["kind"] in ("draw_stock", "draw_discard", "take", "discard", "knock"):
                assert g["move"]["card"] is not None, g
            if v is not None:
                assert v["stock"] is not None and v["all_hands"] is not None
        elif g["type"] == "hand_end" and n != hand_end_n[-1]:
            assert "stock" not in v and "all_hands" not in v  # it shows the next deal: public only
        elif g["type"] in ("game_start", "game_end") or n == hand_end_n[-1]:
            assert v["stock"] is not None and v["all_hands"] is not None
    snap = bc.request({"type": "sync", "table": table}, "snapshot")
    assert snap["full"] is True and snap["n"] == last_n and snap["view"]["all_hands"] is not None
    for c in (*seats, bc, adm, *([late] if late else [])):
        c.close()


@pytest.mark.parametrize(("variant", "delay_ms"), [("oklahoma", 0), ("box", 0), ("oklahoma", 30)])
def test_c_d_a_hand_shows_only_once_it_ended(ref: RefProc, variant: str, delay_ms: int) -> None:
    _play_watched(ref, f"h{variant}{delay_ms}", 4242, delay_ms, variant)


def test_the_public_feed_is_live(ref: RefProc) -> None:
    """The public spectator is not held back: it sees a hand's moves while it is played."""
    adm = admin(ref.endpoint)
    toks, _ = full_table(adm, "live", 5, delay_ms=600000)
    assert toks is not None
    players = seat(ref, toks, "live")
    pub = Raw(ref.endpoint)
    pub.hello("public", role="spectator")
    pub.request({"type": "watch", "table": "live"}, "snapshot")
    p = players[0] if players[0].sock.poll(RECV_TIMEOUT_MS) else players[1]
    prompt = p.wait_for(lambda m: m["type"] == "prompt")
    p.send({"type": "act", "table": "live", "seq": prompt["seq"], "action": simple_choice(prompt["legal"])})
    ev = pub.wait_for(lambda m: m["type"] == "event")
    assert ev["view"]["hand_number"] == 0 and ev["view"]["hand"] is None and "stock" not in ev["view"]
    for c in (*players, pub, adm):
        c.close()


def test_the_broadcast_token_is_printed_by_the_cli(tmp_path: Path) -> None:
    r = RefProc(tmp_path, "--table", "solo", "--full-feed-delay-ms", "0", label="cli")
    try:
        line = r.readline()
        assert line == "table solo"
        line = r.readline()
        assert line.startswith("broadcast token ")
        tok = line.split()[-1]
        s = Raw(r.endpoint)
        s.hello("tv", role="spectator")
        error_of(watch_full(s, "solo"), "broadcast_only")
        assert watch_full(s, "solo", tok)["type"] == "snapshot"
        s.close()
    finally:
        r.stop()
