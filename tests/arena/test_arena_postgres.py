"""The arena server end to end on PostgreSQL: a real ``okgin arena --db postgresql://...``
process (with its real shard) on the real PostgreSQL server of tests/arena/conftest.py.

Players sign in, are paired and play rated games at the shard; their ratings move; a
player who does not come to its game cools down. Then the arena is stopped and started
again on the same database: the ratings are kept (the next game starts from them, and
``okgin arena ratings --rebuild`` gets the same numbers), and the no-show count is kept
too, so the next no-show's cooldown is doubled (before, the count lived in the front's
memory and a restart forgot it).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from arenakit import FAST_RULES, ArenaProcess, Client, play_game, take_seats

from arena.store import Store
from okgin.launch import okgin_argv
from okgin.protocol import PROTOCOL_MINOR

COOLDOWN_MS = 5000
# heartbeat_ms: the raw arena clients say nothing while their game is played at the shard;
# at 20 s a beat the arena keeps their sessions a minute (5 s: 15 s, less than a game takes
# on a loaded machine, and a dropped session never hears its game_over)
TOML = f"show_up_ms = 4000\ncooldown_ms = {COOLDOWN_MS}\nheartbeat_ms = 20000\n[rules]\n{FAST_RULES}"


def hello(c: Client, name: str, key: str) -> dict[str, Any]:
    """hello with the account and key; the reply. Waited for up to a minute: the key check is
    a slow hash, and a loaded machine queues them (a hang guard, not a speed check)."""
    rid = c.next_id()
    c.send({"type": "hello", "protocol": 1, "minor": PROTOCOL_MINOR, "role": "player", "name": name, "account": name,
            "key": key, "id": rid})
    return c.wait_for(lambda m: m.get("id") == rid, timeout_ms=60000)


def signed_in(endpoint: str, keys: dict[str, str], *names: str) -> dict[str, Client]:
    clients = {}
    for name in names:
        c = Client(endpoint)
        assert hello(c, name, keys[name])["type"] == "welcome"
        clients[name] = c
    return clients


def paired(clients: dict[str, Client]) -> dict[str, dict[str, Any]]:
    """The first challenges the second to a rated game of Oklahoma Gin, which accepts (a
    challenge pairs at once, whatever their ratings: a seek would wait for the gap to
    widen); their game_ready messages (the same game)."""
    (_, ca), (b, cb) = clients.items()
    ca.request({"type": "challenge", "to": [b], "variant": "oklahoma"}, "challenged")
    offer = cb.wait_for(lambda m: m["type"] == "challenge_offer", timeout_ms=60000)
    cb.request({"type": "accept", "challenge": offer["challenge"]}, "ok")
    ready = {n: c.wait_for(lambda m: m["type"] == "game_ready", timeout_ms=60000) for n, c in clients.items()}
    assert len({r["game"] for r in ready.values()}) == 1
    return ready


def rated_game(endpoint: str, keys: dict[str, str]) -> dict[str, dict[str, Any]]:
    """ann and bob play one rated game; each one's game_over."""
    clients = signed_in(endpoint, keys, "ann", "bob")
    try:
        play_game(paired(clients))
        return {n: c.wait_for(lambda m: m["type"] == "game_over", timeout_ms=120000) for n, c in clients.items()}
    finally:
        for c in clients.values():
            c.close()


def carl_misses_a_game(endpoint: str, keys: dict[str, str]) -> int:
    """carl and dan are paired; dan comes to the table, carl never does: the game is void and
    carl cools down. Returns the cooldown's retry_ms the arena gives carl's next seek."""
    clients = signed_in(endpoint, keys, "carl", "dan")
    try:
        deadline = time.monotonic() + 60
        while True:  # a cooldown from before may still run: wait it out (bounded)
            m = clients["carl"].request({"type": "seek", "variant": "oklahoma"})
            if m["type"] == "sought":
                clients["carl"].request({"type": "cancel", "seek": m["seek"]}, "ok")
                break
            assert m["type"] == "error" and m["name"] == "cooldown" and time.monotonic() < deadline, m
            time.sleep(m["retry_ms"] / 1000 + 0.1)
        ready = paired({"dan": clients["dan"], "carl": clients["carl"]})
        seats = take_seats({"dan": ready["dan"]})
        try:
            for c in clients.values():
                over = c.wait_for(lambda m: m["type"] == "game_over", timeout_ms=60000)
                assert over["result"] == "void" and over["termination"] == "no_show" and over["rating"] is None
        finally:
            for s in seats.values():
                s.close()
        m = clients["carl"].request({"type": "seek", "variant": "oklahoma"})
        assert m["type"] == "error" and m["name"] == "cooldown", m
        return int(m["retry_ms"])
    finally:
        for c in clients.values():
            c.close()


@pytest.mark.timeout(900)
def test_the_arena_on_postgresql_plays_rates_and_keeps_everything_across_a_restart(tmp_path: Path, pg_url: str) -> None:
    import subprocess

    with Store.open(pg_url) as store:
        keys = {n: store.add_account(n, "bot") for n in ("ann", "bob", "carl", "dan")}
    state = tmp_path / "arena"
    arena = ArenaProcess(state, toml=TOML, extra=("--db", pg_url))
    try:
        first = rated_game(arena.endpoint, keys)
        assert {o["result"] for o in first.values()} in ({"win", "loss"}, {"draw"})
        for o in first.values():
            assert o["rating"]["before"] == 1500 and o["rating"]["after"] != 1500  # the ratings moved
        retry = carl_misses_a_game(arena.endpoint, keys)
        assert 0 < retry <= COOLDOWN_MS  # the first no-show: the first cooldown
    finally:
        assert arena.stop() == 0, arena.stderr()
    assert not (state / "arena.db").exists()  # everything went to PostgreSQL
    with Store.open(pg_url) as store:
        kept = {n: store.rating(n, "oklahoma") for n in ("ann", "bob")}
        assert all(r.games == 1 for r in kept.values())
        assert store.no_shows("carl") == 1

    arena = ArenaProcess(state, toml=TOML, extra=("--db", pg_url))  # the same database, a new front and shard
    try:
        c = Client(arena.endpoint)
        assert hello(c, "ann", keys["ann"])["type"] == "welcome"
        me = c.request({"type": "lobby"}, "lobby_state")["me"]
        assert me["ratings"]["oklahoma"]["rating"] == round(kept["ann"].rating)  # kept across the restart
        c.close()
        second = rated_game(arena.endpoint, keys)
        for n, o in second.items():
            assert o["rating"]["before"] == round(kept[n].rating)  # the next game starts from the kept rating
        retry = carl_misses_a_game(arena.endpoint, keys)
        assert retry > COOLDOWN_MS  # the second no-show, counted across the restart: doubled
    finally:
        assert arena.stop() == 0, arena.stderr()
    with Store.open(pg_url) as store:
        assert store.rating("ann", "oklahoma").games == 2 and store.no_shows("carl") == 2
        assert [g.status for g in store.recent_games("carl", 5)] == ["void", "void"]
    out = subprocess.run(okgin_argv("arena", "ratings", "--rebuild", "--db", pg_url), capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0 and "the same numbers" in out.stdout, out
