"""Hidden information is sacred (issue 9 §4): over 1,000 games, no message to any seat or
spectator carries a card the rules (docs/rules.md §5) do not let it see.

The oracle is the referee's own game at the moment each frame is sent: a frame to seat
``s`` may carry no card that is then in the stock, or in a hand ``s`` may not see (its
own; the captain's for the sitter), other than cards publicly known to be there (taken
from the discard pile). Results, final scores and role draws are revealed by the rules
and skipped. Besides playing (mostly the deterministic ``simple_choice``, sometimes a
random legal move), the players also resume their sessions on new connections, ask for
``sync``, send illegal and stale moves, and sitters advise; spectators join mid-game and
``sync``: every path that builds a view is exercised.

CI path (fast, documented in docs/operations.md): the real referee in this process with
its frames captured at the socket boundary (:mod:`tests.hardening.inproc`), 1,000 games.
``OKGIN_SLOW=1`` adds the same property through real sockets against an ``okgin referee``
process, with a delayed-by-zero full-visibility watcher as the oracle.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import msgpack
import pytest
import zmq
from feedkit import fill_hand_ends

from .hkit import RECV_TIMEOUT_MS, Raw, RefProc, admin, simple_choice
from .inproc import InProcReferee

pytestmark = pytest.mark.timeout(900)

REVEALED_KEYS = ("last_result", "result", "role_draws", "final")
_pack = msgpack.Packer(use_bin_type=True).pack
CARDS = {r + s for r in "A23456789TJQK" for s in "cdhs"}


def cards_in(x: Any, out: set[str]) -> set[str]:
    """Every card string in a message, except under keys the rules have revealed."""
    if isinstance(x, dict):
        for k, v in x.items():
            if k not in REVEALED_KEYS:
                cards_in(v, out)
    elif isinstance(x, list):
        for v in x:
            cards_in(v, out)
    elif isinstance(x, str) and x in CARDS:
        out.add(x)
    return out


_CARD_RE = re.compile(rb"\xa2([A23456789TJQK][cdhs])")


def cards_fast(m: dict[str, Any]) -> set[str]:
    """A superset of :func:`cards_in`, by a C regex over the message re-packed without its
    revealed keys (they sit at the top and in ``view``): every card on the wire is a
    msgpack fixstr of length 2 (0xa2 + 2 bytes). A superset only because two bytes of
    another value may look like a card, so a hidden card found here is confirmed with
    the exact :func:`cards_in`."""
    stripped = {k: v for k, v in m.items() if k not in REVEALED_KEYS}
    v = stripped.get("view")
    if isinstance(v, dict):
        stripped["view"] = {k: x for k, x in v.items() if k not in REVEALED_KEYS}
    return {c.decode() for c in _CARD_RE.findall(_pack(stripped))}


def hidden_from(full_view: dict[str, Any], seat: int | None) -> set[str]:
    roles = full_view["roles"]
    may_see: set[int] = set()
    if seat is not None:
        may_see.add(seat)
        if roles[seat] == "sitter":
            may_see.add(roles.index("captain"))
    hidden = set(full_view["stock"])
    for i, hand in enumerate(full_view["all_hands"]):
        if i not in may_see:
            hidden |= set(hand) - set(full_view["known_cards"][i])
    return hidden


def check_view_shape(m: dict[str, Any], seat: int | None) -> None:
    v = m.get("view")
    if not isinstance(v, dict):
        return
    assert "all_hands" not in v and "stock" not in v, f"a full view reached {seat}: {m['type']}"
    if seat is None:
        assert v["hand"] is None and v["seat"] is None and v["advice"] == [], f"a spectator saw private parts in {m['type']}"
    elif v["roles"][seat] == "box" or v["roles"][seat] in ("dealer", "nondealer"):
        assert v["advice"] == [], f"seat {seat} ({v['roles'][seat]}) saw advice"


class Property:
    """Drives games on an in-process referee and checks every captured frame."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.ip = InProcReferee()
        self.ip.on_send = self.on_send
        self.inbox: dict[bytes, list[dict[str, Any]]] = defaultdict(list)
        self.who: dict[bytes, tuple[str, int | None]] = {}
        self.cache: dict[int | None, set[str]] = {}
        self._state: tuple[Any, ...] | None = None
        self._full: dict[str, Any] = {}
        self._public_seen: set[bytes] = set()
        self.checked = 0
        self.types: dict[str, int] = defaultdict(int)
        self._n = 0
        self.ip.send(b"admin", {"type": "hello", "protocol": 1, "role": "admin", "name": "org", "id": 1})

    def rid(self, label: str) -> bytes:
        self._n += 1
        return f"{label}#{self._n}".encode()

    def on_send(self, rid: bytes, data: bytes) -> None:
        m = msgpack.unpackb(data, raw=False)
        self.inbox[rid].append(m)
        target = self.who.get(rid)
        if target is None:
            return
        table, seat = target
        self.types[m["type"]] += 1
        t = self.ip.ref.tables.get(table)
        if t is None or t.game is None:
            assert not cards_in(m, set()), f"cards before any deal: {m}"
            return
        if m["type"] == "event" and m.get("view") is None:
            # the move that ended a hand: a knock's face-down card stays hidden
            assert m["move"]["kind"] != "knock" or m["move"]["card"] is None, m
            return
        g = t.game
        state = (table, id(g), len(g.log), g.hand.number, len(g.hand.events))
        if state != self._state:  # one full view per state, one hidden set per viewer
            self._state = state
            self._full = g.full_view().to_wire()
            self.cache.clear()
            self._public_seen.clear()
        if seat is None:  # public watchers share one frame: check each distinct one once
            if data in self._public_seen:
                self.checked += 1
                return
            self._public_seen.add(data)
        hidden = self.cache.get(seat)
        if hidden is None:
            hidden = self.cache[seat] = hidden_from(self._full, seat)
        leaked = cards_fast(m) & hidden
        if leaked:
            leaked = cards_in(m, set()) & hidden
        who = "spectator" if seat is None else f"seat {seat}"
        assert not leaked, f"{who} of {table} was sent hidden {sorted(leaked)} in {m['type']}"
        check_view_shape(m, seat)
        self.checked += 1

    def hello(self, rid: bytes, target: tuple[str, int | None], **fields: Any) -> None:
        self.who[rid] = target
        self.ip.send(rid, {"type": "hello", "protocol": 1, "id": 1, **fields})

    def play(self, k: int) -> None:
        rng = self.rng
        variant = "box" if rng.random() < 0.5 else "oklahoma"
        table = f"g{k}"
        self.ip.send(
            b"admin",
            {
                "type": "create_table",
                "id": 2,
                "table": table,
                "variant": variant,
                "seed": rng.randrange(10**9),
                "reserved": True,
                "rules": {"target_score": 1 if rng.random() < 0.7 else 15},
            },
        )
        created = self.inbox[b"admin"].pop()
        assert created["type"] == "table_created", created
        tokens = created["seat_tokens"]
        seats: dict[int, bytes] = {}
        for s, tok in enumerate(tokens):
            seats[s] = self.rid(f"{table}/{s}")
            self.hello(seats[s], (table, s), role="player", name=f"p{s}", token=tok)
        watchers: list[bytes] = []
        old: list[bytes] = []  # connections replaced by a resume
        t = self.ip.ref.tables[table]
        for _ in range(10_000):
            if t.status != "playing" and t.game_no >= 1:
                break
            if not watchers or (len(watchers) < 2 and rng.random() < 0.02):
                w = self.rid(f"{table}/w")
                self.hello(w, (table, None), role="spectator", name="w")
                self.ip.send(w, {"type": "watch", "table": table, "id": 3})
                watchers.append(w)
            r = rng.random()
            if r < 0.03:  # a seat resumes on a new connection: snapshot, then its prompt again
                s = rng.randrange(len(tokens))
                self.inbox.pop(seats[s], None)
                old.append(seats[s])
                seats[s] = self.rid(f"{table}/{s}")
                self.hello(seats[s], (table, s), role="player", name=f"p{s}", token=tokens[s])
            elif r < 0.06:
                self.ip.send(seats[rng.randrange(len(tokens))], {"type": "sync", "table": table, "id": 4})
            elif r < 0.08:
                self.ip.send(rng.choice(watchers), {"type": "sync", "table": table, "id": 5})
            p = t.pending
            if p is None:
                break
            prompt = next((m for m in reversed(self.inbox[seats[p.seat]]) if m["type"] == "prompt" and m["seq"] == p.seq), None)
            assert prompt is not None, f"seat {p.seat} of {table} has no prompt for seq {p.seq}"
            g = t.game
            if g.roles is not None and p.seat == g.roles[1] and rng.random() < 0.5:
                sitter = seats[g.roles[2]]
                adv = next((m for m in reversed(self.inbox[sitter]) if m["type"] == "advise_prompt" and m["seq"] == p.seq), None)
                assert adv is not None, "the sitter was not asked for advice"
                self.ip.send(
                    sitter, {"type": "advise", "table": table, "seq": p.seq, "action": rng.choice(adv["legal"]), "text": "x"}
                )
            legal = prompt["legal"]
            r = rng.random()
            if r < 0.02:
                action: dict[str, Any] = {"kind": "discard", "card": rng.choice(sorted(CARDS))}  # mostly illegal
            elif r < 0.04:
                self.ip.send(
                    seats[p.seat], {"type": "act", "table": table, "seq": max(0, p.seq - 1), "action": legal[0]}
                )  # stale
                action = simple_choice(legal)
            elif r < 0.1:
                action = rng.choice(legal)
            else:
                action = simple_choice(legal)
            self.ip.send(seats[p.seat], {"type": "act", "table": table, "seq": p.seq, "action": action})
            for r_ in [*seats.values(), *watchers]:
                del self.inbox[r_][:-8]  # keep the inboxes small; the property was checked at capture
        else:
            raise AssertionError(f"{table} did not end")
        assert t.game is not None and t.game.is_over
        self.ip.send(b"admin", {"type": "close_table", "table": table, "id": 6})
        for r in [*seats.values(), *watchers]:
            self.ip.send(r, {"type": "bye"})  # the referee forgets them (they hold nothing now)
        for r in [*seats.values(), *watchers, *old]:
            self.who.pop(r, None)
            self.inbox.pop(r, None)


def test_no_hidden_card_in_1000_games() -> None:
    prop = Property(seed=2024)
    try:
        for k in range(1000):
            prop.play(k)
    finally:
        prop.ip.close()
    assert prop.checked > 50_000
    for typ in ("game_start", "prompt", "event", "hand_end", "game_end", "snapshot", "advise_prompt", "advice"):
        assert prop.types[typ] > 0, f"never checked a {typ}"


# ---------------------------------------------------------------- through real sockets
FEED = ("game_start", "event", "hand_end", "game_end")


def _socket_game(ref: RefProc, adm: Raw, k: int, rng: random.Random) -> int:
    variant = "box" if k % 2 else "oklahoma"
    table = f"s{k}"
    made = adm.request(
        {
            "type": "create_table",
            "table": table,
            "variant": variant,
            "seed": rng.randrange(10**9),
            "reserved": True,
            "rules": {"target_score": 30},
            "full_feed_delay_ms": 0,
        },
        "table_created",
    )
    toks = made["seat_tokens"]
    oracle = Raw(ref.endpoint, validate="none")
    oracle.hello("oracle", role="spectator")
    oracle.request({"type": "watch", "table": table, "full": True, "broadcast_token": made["broadcast_token"]}, "snapshot")
    public = Raw(ref.endpoint, validate="none")
    public.hello("public", role="spectator")
    public.request({"type": "watch", "table": table}, "snapshot")
    seats = {}
    for s, tok in enumerate(toks):
        c = Raw(ref.endpoint, validate="none")
        c.hello(f"p{s}", token=tok)
        seats[s] = c
    log: list[tuple[int | None, int, dict[str, Any]]] = []
    full: dict[int, dict[str, Any]] = {}
    moves: dict[int, dict[str, Any]] = {}
    cur: dict[Any, int] = defaultdict(int)
    poller = zmq.Poller()
    who: dict[Any, tuple[Any, Raw]] = {}
    for key, c in [*seats.items(), ("public", public), ("oracle", oracle)]:
        poller.register(c.sock, zmq.POLLIN)
        who[c.sock] = (key, c)
    done: set[Any] = set()
    while len(done) < len(seats) + 2:
        ready = dict(poller.poll(RECV_TIMEOUT_MS))
        assert ready, "no progress"
        for sock in ready:
            key, c = who[sock]
            m = c.recv()
            if m["type"] == "game_end":
                done.add(key)
            if key == "oracle":
                if m["type"] in FEED and m.get("view") is not None:
                    full[m["n"]] = m["view"]
                if m["type"] == "event":
                    moves[m["n"]] = m["move"]
                continue
            if m["type"] in FEED:
                cur[key] = m["n"]
            log.append((None if key == "public" else key, cur[key], m))
            if m["type"] == "prompt":
                legal = m["legal"]
                c.send(
                    {
                        "type": "act",
                        "table": table,
                        "seq": m["seq"],
                        "action": rng.choice(legal) if rng.random() < 0.2 else simple_choice(legal),
                    }
                )
            elif m["type"] == "advise_prompt":
                c.send({"type": "advise", "table": table, "seq": m["seq"], "action": rng.choice(m["legal"]), "text": "x"})
    fill_hand_ends(full, moves)
    checked = 0
    for seat, n, m in log:
        if m["type"] in ("error", "ok", "heartbeat", "seated", "welcome") or (m["type"] == "event" and m["view"] is None):
            continue
        leaked = cards_in(m, set()) & hidden_from(full[n], seat)
        assert not leaked, f"{seat} was sent hidden {sorted(leaked)} in {m['type']} (n={n})"
        check_view_shape(m, seat)
        checked += 1
    for c in [*seats.values(), public, oracle]:
        c.close()
    adm.request({"type": "close_table", "table": table}, "ok")
    return checked


@pytest.mark.slow
def test_no_hidden_card_through_sockets(tmp_path: Path) -> None:
    ref = RefProc(tmp_path, "--no-journal")
    adm = admin(ref.endpoint, validate="none")
    rng = random.Random(7)
    try:
        checked = sum(_socket_game(ref, adm, k, rng) for k in range(200))
        assert checked > 10_000
    finally:
        adm.close()
        ref.stop()
