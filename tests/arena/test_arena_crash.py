"""kill -9 of a shard and of the arena itself (issue 26, item 7).

- A shard killed in the middle of a game: the game is void (no rating change, each player
  told ``game_over`` ``void`` ``shard_lost``) and a new shard takes its place.
- The arena killed: on restart no finished game is lost, a game that ended at its shard
  while the arena could not hear it (frozen, then killed) is recorded from the shard's
  journal, a game cut short is void, and the ratings equal ``okgin arena ratings --rebuild``.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

from arenakit import ArenaProcess, Client, add_accounts, arena_hello, play_game, take_seats

from arena.store import Store, state_db_url
from okgin.launch import okgin_argv

OVER_MS = 120_000  # game_over follows a fsynced transaction: on a loaded machine it may take a while


def sign_in(endpoint: str, account: str, key: str) -> Client:
    c = Client(endpoint, validate="sample")
    assert arena_hello(c, account, key)["type"] == "welcome"
    return c


def paired(a: Client, b: Client) -> dict[str, dict]:
    a.request({"type": "seek", "variant": "oklahoma"}, "sought")
    b.request({"type": "seek", "variant": "oklahoma"}, "sought")
    return {"a": a.wait_for(lambda m: m["type"] == "game_ready"), "b": b.wait_for(lambda m: m["type"] == "game_ready")}


def by_challenge(a: Client, b: Client, b_name: str) -> dict[str, dict]:
    """A game between two accounts whatever their ratings (a seek waits for the gap to widen)."""
    c = a.request({"type": "challenge", "to": [b_name], "variant": "oklahoma"}, "challenged")
    b.wait_for(lambda m: m["type"] == "challenge_offer")
    b.request({"type": "accept", "challenge": c["challenge"]}, "ok")
    return {"a": a.wait_for(lambda m: m["type"] == "game_ready"), "b": b.wait_for(lambda m: m["type"] == "game_ready")}


def test_a_killed_shard_voids_its_game_and_is_replaced(tmp_path: Path) -> None:
    state = tmp_path / "arena"
    keys = add_accounts(state, "a", "b")
    arena = ArenaProcess(state, extra=("-v",))
    try:
        a, b = sign_in(arena.endpoint, "a", keys["a"]), sign_in(arena.endpoint, "b", keys["b"])
        ready = paired(a, b)
        (shard,) = arena.children()
        seats = take_seats(ready)
        seats["a"].wait_for(lambda m: m["type"] == "game_start")
        os.kill(shard, signal.SIGKILL)
        for c in (a, b):
            over = c.wait_for(lambda m: m["type"] == "game_over", timeout_ms=OVER_MS)
            assert (over["result"], over["termination"], over["rating"]) == ("void", "shard_lost", None)
        for c in seats.values():
            c.close()
        # a new shard: the next game is played
        for _ in range(600):
            kids = arena.children()
            if kids and shard not in kids:
                break
            a.request({"type": "ping"}, "pong")
        ready = paired(a, b)
        assert ready["a"]["endpoint"] != ready["a"]["endpoint"].replace(":", ";")
        play_game(ready)
        assert a.wait_for(lambda m: m["type"] == "game_over", timeout_ms=OVER_MS)["result"] in ("win", "loss", "draw")
        a.close()
        b.close()
    finally:
        assert arena.stop() == 0, arena.stderr()
    store = Store.open(state_db_url(state))
    try:
        games = store.recent_games("a", 10)
        assert sorted(g.status for g in games) == ["finished", "void"]
        assert store.rating("a", "oklahoma").games == 1
    finally:
        store.close()


def test_a_killed_arena_loses_no_finished_game(tmp_path: Path) -> None:
    state = tmp_path / "arena"
    keys = add_accounts(state, "a", "b", "c", "d")
    arena = ArenaProcess(state, shards=2)
    killed = False
    try:
        a, b = sign_in(arena.endpoint, "a", keys["a"]), sign_in(arena.endpoint, "b", keys["b"])
        c, d = sign_in(arena.endpoint, "c", keys["c"]), sign_in(arena.endpoint, "d", keys["d"])
        # 1. a game played to its end and recorded
        ready = paired(a, b)
        play_game({"a": ready["a"], "b": ready["b"]})
        done = a.wait_for(lambda m: m["type"] == "game_over", timeout_ms=OVER_MS)["game"]
        b.wait_for(lambda m: m["type"] == "game_over", timeout_ms=OVER_MS)
        # 2. a game that ends while the arena cannot hear (frozen), and 3. one cut short by the kill
        ready_ab = by_challenge(a, b, "b")
        c.request({"type": "seek", "variant": "oklahoma", "clock": "blitz"}, "sought")
        d.request({"type": "seek", "variant": "oklahoma", "clock": "blitz"}, "sought")
        ready_cd = {"c": c.wait_for(lambda m: m["type"] == "game_ready"),
                    "d": d.wait_for(lambda m: m["type"] == "game_ready")}
        cut = take_seats(ready_cd)
        cut["c"].wait_for(lambda m: m["type"] == "game_start")
        os.kill(arena.proc.pid, signal.SIGSTOP)
        try:
            play_game({"a": ready_ab["a"], "b": ready_ab["b"]})  # the shard is alive: the game ends there
        finally:
            arena.kill()  # SIGKILL (its shards die with it)
            killed = True
        for x in (a, b, c, d, *cut.values()):
            x.close()
    finally:
        if not killed:
            arena.stop()
    arena2 = ArenaProcess(state)
    try:
        assert "1 game(s) recorded from their journals, 1 voided" in _wait_stderr(arena2, "recorded from")
    finally:
        assert arena2.stop() == 0, arena2.stderr()
    store = Store.open(state_db_url(state))
    try:
        assert store.game(done).status == "finished"  # type: ignore[union-attr]
        ended = store.game(ready_ab["a"]["game"])
        assert ended is not None and ended.status == "finished" and ended.record is not None
        assert store.game(ready_cd["c"]["game"]).status == "void"  # type: ignore[union-attr]
        assert store.rating("a", "oklahoma").games == 2 and store.rating("c", "oklahoma").games == 0
        before = store.ratings_snapshot()
    finally:
        store.close()
    out = subprocess.run(okgin_argv("arena", "ratings", "--state", str(state), "--rebuild"), capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    store = Store.open(state_db_url(state))
    try:
        assert store.ratings_snapshot() == before
    finally:
        store.close()


def _wait_stderr(arena: ArenaProcess, needle: str) -> str:
    """The arena prints its restart summary before serving; by the time its endpoint line is read
    the summary may still be in the pipe of stderr (a file): read until it is there."""
    for _ in range(200):
        text = arena.stderr()
        if needle in text:
            return text
        arena_hello(Client(arena.endpoint, validate="none"), None, None, role="spectator")
    return arena.stderr()
