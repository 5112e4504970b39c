"""The arena's front against a real ``okgin arena`` process: sign-in and its refusals, one
session per account, challenges, cancels, limits, bans, no-shows and cooldowns."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from arenakit import FAST_RULES, ArenaProcess, Client, add_accounts, arena_hello, resign_game, take_seats

from arena.desk import AUTH_FAILED, MAX_SEEKS
from arena.store import Store, state_db_url
from okgin.protocol import ERRORS

ACCOUNTS = ("ann", "bob", "cat", "dan", "eve", "fay", "gus", "hal", "ivy")


class World:
    def __init__(self, arena: ArenaProcess, keys: dict[str, str], state: Path) -> None:
        self.arena = arena
        self.keys = keys
        self.state = state
        self.clients: list[Client] = []

    def client(self) -> Client:
        c = Client(self.arena.endpoint, validate="all")
        self.clients.append(c)
        return c

    def sign_in(self, account: str, role: str = "player") -> Client:
        c = self.client()
        w = arena_hello(c, account, self.keys[account], role=role)
        assert w["type"] == "welcome", w
        return c

    def store(self) -> Store:
        return Store.open(state_db_url(self.state))


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    state = tmp_path_factory.mktemp("front") / "arena"
    keys = add_accounts(state, *ACCOUNTS, admin=("root",))
    keys.update(add_accounts(state, "root", kind="human", admin=("root",)))
    arena = ArenaProcess(state, toml=f"show_up_ms = 4000\n[rules]\n{FAST_RULES}")
    w = World(arena, keys, state)
    try:
        yield w
    finally:
        for c in w.clients:
            c.close()
        assert arena.stop() == 0, arena.stderr()


def error(reply: dict[str, Any], name: str) -> dict[str, Any]:
    assert reply["type"] == "error" and reply["name"] == name, reply
    assert reply["code"] == ERRORS[name][0]
    return reply


def test_sign_in_refusals_are_one_answer(world: World) -> None:
    c = world.client()
    unknown = error(arena_hello(c, "nobody", "okga_" + "x" * 43), "auth_failed")
    wrong = error(arena_hello(c, "ann", world.keys["bob"]), "auth_failed")
    assert unknown["message"] == wrong["message"] == AUTH_FAILED
    error(arena_hello(c, "ann", None), "auth_failed")  # a player needs its key
    error(c.request({"type": "ping"}), "hello_first")  # nothing was opened
    guest = arena_hello(c, None, None, role="spectator")
    assert guest["type"] == "welcome" and guest["account"] is None
    assert c.request({"type": "lobby"})["type"] == "lobby_state"
    assert c.request({"type": "leaderboard", "variant": "box", "limit": 5})["type"] == "leaderboard_page"
    error(c.request({"type": "seek", "variant": "oklahoma"}), "forbidden")
    # the referee's own lobby is not served at the front
    p = world.sign_in("ann")
    error(p.request({"type": "join", "table": "x"}), "forbidden")
    error(p.request({"type": "create_table"}), "forbidden")
    # role admin needs an admin account
    error(arena_hello(world.client(), "bob", world.keys["bob"], role="admin"), "forbidden")


def test_a_revoked_or_rotated_key_stops_at_once(world: World) -> None:
    world.sign_in("hal").close()  # verified once: its key is cached by the front
    store = world.store()
    try:
        new = store.rotate("hal")
    finally:
        store.close()
    error(arena_hello(world.client(), "hal", world.keys["hal"]), "auth_failed")
    assert arena_hello(world.client(), "hal", new)["type"] == "welcome"


def test_one_live_session_per_account(world: World) -> None:
    first = world.sign_in("cat")
    first.request({"type": "seek", "variant": "box"}, "sought")
    second = world.sign_in("cat")
    taken = first.wait_for(lambda m: m["type"] == "error")
    assert taken["name"] == "session_taken" and "id" not in taken
    error(first.request({"type": "lobby"}), "session_taken")
    lobby = second.request({"type": "lobby"}, "lobby_state")
    assert [r["account"] for r in lobby["online"]].count("cat") == 1
    assert not [s for s in lobby["seeks"] if s["account"] == "cat"]  # the old session's seeks went with it


def test_challenge_decline_cancel_accept(world: World) -> None:
    ann, bob = world.sign_in("ann"), world.sign_in("bob")
    error(ann.request({"type": "challenge", "to": ["nobody"], "variant": "oklahoma"}), "no_such_account")
    error(ann.request({"type": "challenge", "to": ["gus"], "variant": "oklahoma"}), "no_such_account")  # offline
    error(ann.request({"type": "challenge", "to": ["bob"], "variant": "box"}), "bad_message")  # the Box needs two
    c1 = ann.request({"type": "challenge", "to": ["bob"], "variant": "oklahoma", "rated": False}, "challenged")
    offer = bob.wait_for(lambda m: m["type"] == "challenge_offer")
    assert offer["challenge"] == c1["challenge"] and offer["from"]["account"] == "ann" and offer["rated"] is False
    assert 0 < offer["expires_ms"] <= 60000
    assert [x["challenge"] for x in bob.request({"type": "lobby"}, "lobby_state")["challenges"]] == [c1["challenge"]]
    error(ann.request({"type": "accept", "challenge": c1["challenge"]}), "no_such_challenge")  # not offered to ann
    bob.request({"type": "decline", "challenge": c1["challenge"]}, "ok")
    closed = ann.wait_for(lambda m: m["type"] == "challenge_closed")
    assert closed == {"type": "challenge_closed", "challenge": c1["challenge"], "reason": "declined", "by": "bob"}
    error(bob.request({"type": "accept", "challenge": c1["challenge"]}), "no_such_challenge")
    c2 = ann.request({"type": "challenge", "to": ["bob"], "variant": "oklahoma"}, "challenged")
    bob.wait_for(lambda m: m["type"] == "challenge_offer")
    ann.request({"type": "cancel", "challenge": c2["challenge"]}, "ok")
    closed = bob.wait_for(lambda m: m["type"] == "challenge_closed")
    assert (closed["reason"], closed["by"]) == ("cancelled", "ann")
    error(ann.request({"type": "cancel", "challenge": c2["challenge"]}), "no_such_challenge")
    error(ann.request({"type": "cancel", "seek": "k0"}), "no_such_seek")
    error(ann.request({"type": "cancel", "seek": "a", "challenge": "b"}), "bad_message")
    c3 = ann.request({"type": "challenge", "to": ["bob"], "variant": "oklahoma"}, "challenged")
    bob.wait_for(lambda m: m["type"] == "challenge_offer")
    bob.request({"type": "accept", "challenge": c3["challenge"]}, "ok")
    ready = {"ann": ann.wait_for(lambda m: m["type"] == "game_ready"),
             "bob": bob.wait_for(lambda m: m["type"] == "game_ready")}
    assert ready["ann"]["players"][0]["account"] == "ann"  # a challenge seats its maker first
    error(bob.request({"type": "seek", "variant": "oklahoma"}), "busy")
    ends = resign_game(ready, "bob")
    assert ends["ann"]["termination"] == "resigned"
    over = ann.wait_for(lambda m: m["type"] == "game_over", timeout_ms=120000)
    assert over["result"] == "win" and over["termination"] == "resigned" and over["rating"]["after"] > 1500
    assert bob.wait_for(lambda m: m["type"] == "game_over", timeout_ms=120000)["result"] == "loss"


def test_seek_limits_and_presets(world: World) -> None:
    dan = world.sign_in("dan")
    error(dan.request({"type": "seek", "variant": "oklahoma", "clock": "marathon"}), "bad_message")
    ids = [dan.request({"type": "seek", "variant": "box", "clock": c}, "sought")["seek"]
           for c in ("standard", "blitz")][:MAX_SEEKS]
    error(dan.request({"type": "seek", "variant": "box"}), "limit_reached")
    dan.request({"type": "cancel", "seek": ids[0]}, "ok")
    dan.request({"type": "seek", "variant": "box"}, "sought")
    for _ in range(30):  # 20 of these requests per 10 s per account
        r = dan.request({"type": "lobby"})
        if r["type"] == "error":
            error(r, "rate_limited")
            break
    else:
        raise AssertionError("the per-account rate limit never answered")


def test_ban_closes_the_session_and_unban_lets_it_back(world: World) -> None:
    root = world.sign_in("root", role="admin")
    ivy = world.sign_in("ivy")
    error(root.request({"type": "ban", "account": "nobody", "reason": "x"}), "no_such_account")
    root.request({"type": "ban", "account": "ivy", "reason": "flooding"}, "ok")
    note = ivy.wait_for(lambda m: m["type"] == "error")
    assert note["name"] == "banned" and "flooding" in note["message"]
    assert error(arena_hello(world.client(), "ivy", world.keys["ivy"]), "banned")["message"].endswith("flooding")
    root.request({"type": "unban", "account": "ivy"}, "ok")
    assert arena_hello(world.client(), "ivy", world.keys["ivy"])["type"] == "welcome"


def test_a_no_show_voids_the_game_and_cools_the_account_down(world: World) -> None:
    eve, fay = world.sign_in("eve"), world.sign_in("fay")
    eve.request({"type": "seek", "variant": "oklahoma", "rated": True}, "sought")
    fay.request({"type": "seek", "variant": "oklahoma", "rated": True}, "sought")
    ready = eve.wait_for(lambda m: m["type"] == "game_ready")
    fay.wait_for(lambda m: m["type"] == "game_ready")
    seats = take_seats({"eve": ready})  # fay never comes
    try:
        over = eve.wait_for(lambda m: m["type"] == "game_over", timeout_ms=60000)
        assert (over["result"], over["termination"], over["rating"]) == ("void", "no_show", None)
        assert fay.wait_for(lambda m: m["type"] == "game_over", timeout_ms=120000)["result"] == "void"
    finally:
        for c in seats.values():
            c.close()
    cooling = error(fay.request({"type": "seek", "variant": "oklahoma"}), "cooldown")
    assert 0 < cooling["retry_ms"] <= 30000
    eve.request({"type": "seek", "variant": "oklahoma"}, "sought")  # who came may play at once
    store = world.store()
    try:
        assert store.game(ready["game"]).status == "void"  # type: ignore[union-attr]
        assert store.rating("eve", "oklahoma").games == 0
    finally:
        store.close()


def test_every_arena_error_is_exercised_in_these_tests() -> None:
    here = Path(__file__).parent
    src = "".join(p.read_text() for p in here.glob("test_*.py")) + (here.parents[0] / "referee" /
                                                                    "test_ref_extension.py").read_text()
    missing = [n for n, (code, _) in ERRORS.items() if code >= 6000 and f'"{n}"' not in src]
    assert not missing, missing
