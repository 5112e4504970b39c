"""A real arena (``okgin arena`` with a real shard process) and two bots: sign in, seek,
``game_ready``, play at the shard, ``game_over`` with the rating change, the game and the
ratings in the store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from arenakit import FAST_RULES, ArenaProcess, Client, add_accounts, arena_hello, play_game, take_seats

from arena.store import Store, state_db_url


@pytest.fixture
def arena_dir(tmp_path: Path) -> Path:
    return tmp_path / "arena"


def signed_in(endpoint: str, account: str, key: str) -> Client:
    c = Client(endpoint, validate="all")
    w = arena_hello(c, account, key)
    assert w["type"] == "welcome", w
    assert w["account"] == {"name": account, "kind": "bot", "admin": False} and w["name"] == account
    assert set(w["arena"]["clocks"]) >= {"standard"} and w["arena"]["variants"] == ["oklahoma", "box"]
    return c


def test_two_bots_seek_and_play_a_rated_game(arena_dir: Path) -> None:
    keys = add_accounts(arena_dir, "ann", "bob")
    arena = ArenaProcess(arena_dir)
    clients: list[Client] = []
    try:
        ann, bob = signed_in(arena.endpoint, "ann", keys["ann"]), signed_in(arena.endpoint, "bob", keys["bob"])
        clients += [ann, bob]
        s1 = ann.request({"type": "seek", "variant": "oklahoma"}, "sought")
        bob.request({"type": "seek", "variant": "oklahoma", "clock": "standard", "rated": True}, "sought")
        ready = {a: c.wait_for(lambda m: m["type"] == "game_ready") for a, c in (("ann", ann), ("bob", bob))}
        assert ready["ann"]["game"] == ready["bob"]["game"] and ready["ann"]["table"] == ready["bob"]["table"]
        assert {ready["ann"]["seat"], ready["bob"]["seat"]} == {0, 1}
        assert ready["ann"]["token"] != ready["bob"]["token"]
        assert [p["account"] for p in ready["ann"]["players"]][ready["ann"]["seat"]] == "ann"
        assert ready["ann"]["endpoint"] != arena.endpoint  # played at a shard
        # the seek is gone once paired
        err = ann.request({"type": "cancel", "seek": s1["seek"]}, "error")
        assert err["name"] == "no_such_seek"
        assert ann.request({"type": "seek", "variant": "oklahoma"}, "error")["name"] == "busy"
        ends = play_game(ready)
        assert ends["ann"]["seed"] is not None and ends["ann"]["salt"]  # the deal revealed at the end
        over = {a: c.wait_for(lambda m: m["type"] == "game_over", timeout_ms=120000) for a, c in (("ann", ann), ("bob", bob))}
        game = ready["ann"]["game"]
        assert {o["game"] for o in over.values()} == {game}
        results = sorted(o["result"] for o in over.values())
        assert results in (["loss", "win"], ["draw", "draw"])
        for a, o in over.items():
            assert o["scores"] == ends[a]["final"]["scores"]
            assert o["rating"]["before"] == 1500 and o["rating"]["provisional"] is True
            if o["result"] == "win":
                assert o["rating"]["after"] > 1500
        lobby = ann.request({"type": "lobby"}, "lobby_state")
        assert lobby["me"]["recent"][0]["game"] == game
        assert {row["account"] for row in lobby["online"]} == {"ann", "bob"}
        board = ann.request({"type": "leaderboard", "variant": "oklahoma"}, "leaderboard_page")
        assert sorted(r["account"] for r in board["rows"]) == ["ann", "bob"]
    finally:
        for c in clients:
            c.close()
        assert arena.stop() == 0, arena.stderr()
    store = Store.open(state_db_url(arena_dir))
    try:
        row = store.game(game)
        assert row is not None and row.status == "finished" and row.rated
        assert row.record is not None and row.journal and Path(row.journal).is_file()
        assert row.seed_hash and row.salt
        winner: Any = row.winner
        assert winner is None or row.players[winner] in ("ann", "bob")
        assert store.rating("ann", "oklahoma").games == 1
    finally:
        store.close()


def test_an_abandoned_game_is_a_rated_loss_after_the_grace(arena_dir: Path) -> None:
    """A player who leaves its game (its connection to the shard gone) loses it once the
    disconnect grace has run out, and the loss is rated: leaving cannot save a rating."""
    from arenakit import FAST_RULES, take_seats

    keys = add_accounts(arena_dir, "ann", "bob")
    arena = ArenaProcess(arena_dir, toml=f"disconnect_grace_ms = 1000\n[rules]\n{FAST_RULES}")
    try:
        ann, bob = signed_in(arena.endpoint, "ann", keys["ann"]), signed_in(arena.endpoint, "bob", keys["bob"])
        ann.request({"type": "seek", "variant": "oklahoma"}, "sought")
        bob.request({"type": "seek", "variant": "oklahoma"}, "sought")
        ready = {a: c.wait_for(lambda m: m["type"] == "game_ready") for a, c in (("ann", ann), ("bob", bob))}
        seats = take_seats(ready)
        seats["bob"].wait_for(lambda m: m["type"] == "game_start")
        seats["bob"].send({"type": "bye"})  # bob walks away from the table (silence does the same, later)
        seats["bob"].close()
        end = seats["ann"].wait_for(lambda m: m["type"] == "game_end", timeout_ms=60000)
        assert (end["termination"], end["at_fault"]) == ("disconnect", ready["bob"]["seat"])
        over = bob.wait_for(lambda m: m["type"] == "game_over", timeout_ms=60000)
        assert over["result"] == "loss" and over["rating"]["after"] < over["rating"]["before"]
        assert ann.wait_for(lambda m: m["type"] == "game_over", timeout_ms=120000)["result"] == "win"
        seats["ann"].close()
        ann.close()
        bob.close()
    finally:
        assert arena.stop() == 0, arena.stderr()


def test_off_loopback_the_arena_needs_curve_or_insecure(tmp_path: Path) -> None:
    """A key must never cross a network in clear: a non-loopback bind without CURVE is
    refused before anything is bound or started."""
    import subprocess

    from okgin.launch import okgin_argv

    out = subprocess.run(okgin_argv("arena", "--state", str(tmp_path / "s"), "--bind", "tcp://192.0.2.1:7118"),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "needs CURVE" in out.stderr and "--insecure" in out.stderr, out
    assert out.stdout == ""


def test_a_box_table_at_the_arena_waits_for_a_persons_advice(arena_dir: Path) -> None:
    """The arena's ``advice_window_ms`` (issue 28 item 4: a table option of the referee,
    ``okgin play`` and the arena) reaches every Box table it makes, as the table's policy
    that holds a captain's prompt for a sitter whose hello says ``advice_wait``; an
    Oklahoma table, which has no sitter, gets none."""
    keys = add_accounts(arena_dir, "ann", "bob", "cid")
    arena = ArenaProcess(arena_dir, toml=f"show_up_ms = 20000\nadvice_window_ms = 7000\n[rules]\n{FAST_RULES}")
    clients: list[Client] = []
    seats: dict[str, Client] = {}
    try:
        for a in ("ann", "bob", "cid"):
            clients.append(signed_in(arena.endpoint, a, keys[a]))
        for c in clients:
            c.request({"type": "seek", "variant": "box"}, "sought")
        ready = {a: c.wait_for(lambda m: m["type"] == "game_ready") for a, c in zip(("ann", "bob", "cid"), clients, strict=True)}
        seats = take_seats(ready)
        seated = seats["ann"].wait_for(lambda m: m["type"] in ("seated", "snapshot") and "policies" in m)
        assert seated["policies"]["advice_window_ms"] == 7000
    finally:
        for c in [*clients, *seats.values()]:
            c.close()
        assert arena.stop() == 0, arena.stderr()
