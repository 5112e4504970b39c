"""The web face over a PostgreSQL store gives the same pages as over SQLite.

Two stores get the same contents (tests/arena/webkit.py's accounts and engine-played games,
an event, a ban made through the admin form), each is served by its own web on loopback, and
every page is fetched from both over HTTP: leaderboards, player pages, the viewer of finished
games, a game in play, the live list, events and the admin pages must be the same bytes (the
admin forms' tokens aside: each web draws its own secret). The live stream over PostgreSQL
tells of a game that finishes there. The PostgreSQL server is the session's private one
(tests/arena/conftest.py): it skips without PostgreSQL, and fails instead under
``OKGIN_REQUIRE_PG=1``.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from unittest import mock

import pytest

pytest.importorskip("starlette", reason="the web needs okgin[arena-web]")

from test_web_pages import read_until, sse_connect
from webkit import EVIL, WebThread, fetch, played_game, post, seeded_store, token_of

from arena.auth import KeyChecker
from arena.store import GameResult, NewGame, Store

#: Every page a visitor or an admin reads, over the seeded store.
PAGES = ("/", "/leaderboard/oklahoma", "/leaderboard/box", "/leaderboard/oklahoma?kind=human", "/leaderboard/box?kind=bot",
         "/player/ann", "/player/simple-1", "/player/strong-1?page=1", "/player/ben", "/game/ok00", "/game/ok07",
         "/game/ok19", "/game/box00", "/game/box03", "/game/now01", "/live", "/events", "/events?status=finished")
ADMIN_PAGES = ("/admin", "/admin/accounts", "/admin/bans", "/admin/submissions", "/admin/submissions?status=failed")
NOW_MS = 1_700_010_000_000  # the pages' clock, the same for both webs (times shown as "ago")
T0 = 1_700_000_000_000


def fill(store: Store) -> str:
    """The seeded contents plus an event with standings; the admin's key."""
    ev = store.add_event("friday " + EVIL, "round_robin", ["simple-1", "random-1"], start_ms=T0, by="root")
    store.start_event(ev.id, "/srv/results.sqlite")
    store.finish_event(ev.id, [
        {"rank": 1, "account": "simple-1", "games": 2, "wins": 2, "losses": 0, "draws": 0, "score": 2.0, "elo": 190.0,
         "err95": 400.0, "forfeits": 0, "points_for": 200},
        {"rank": 2, "account": "random-1", "games": 2, "wins": 0, "losses": 2, "draws": 0, "score": 0.0, "elo": -190.0,
         "err95": 400.0, "forfeits": 0, "points_for": 10, "plays": "connected"}],
        [{"name": "chain", "status": "ok", "summary": "2 records", "problems": []}], at_ms=T0 + 1)
    store.add_event("later", "gauntlet", ["strong-1", "ann"], start_ms=T0 + 10, by="root", champion="strong-1")
    return store.rotate("root", at_ms=2)


@pytest.fixture(scope="module")
def webs(pg_server) -> Iterator[dict[str, tuple[WebThread, Store, str]]]:  # type: ignore[no-untyped-def]
    out: dict[str, tuple[WebThread, Store, str]] = {}
    checkers = []
    try:
        for backend, url in (("sqlite", "sqlite://:memory:"), ("postgresql", pg_server.new_database())):
            store = seeded_store(url)
            key = fill(store)
            checker = KeyChecker(store, lambda: 0)
            checkers.append(checker)
            out[backend] = (WebThread(store, checker, poll_ms=50, heartbeat_ms=300), store, key)
        yield out
    finally:
        for web, store, _ in out.values():
            web.stop()
            store.close()
        for c in checkers:
            c.close()


def page(site: tuple[WebThread, Store, str], path: str, admin: bool = False) -> str:
    web, _, key = site
    with mock.patch("arena.web.app._now_ms", lambda: NOW_MS):
        status, _, body = fetch(web.url.rstrip("/") + path, auth=("root", key) if admin else None)
    assert status == 200, (path, body)
    return re.sub(r'name="token" value="[0-9a-f]{64}"', 'name="token" value="T"', body)


def finish_one(store: Store, gid: str, seed: int) -> None:
    g = played_game("oklahoma", seed)
    store.new_game(NewGame(gid, "oklahoma", True, ("ann", "strong-1"), {"move_ms": 60_000}, "s0", f"t-{gid}", T0 + 90 * 60_000))
    store.finish_game(gid, GameResult(g.winner, tuple(g.scores), str(g.termination or "normal"), T0 + 91 * 60_000,
                                      record=g.to_record(), seed=str(g.seed_value)))


def wait_for_mark(web: WebThread) -> None:
    """Until the stream's poller has read the store's change mark once: a game finished
    before that read would be its starting point, not a change."""
    for _ in range(3000):  # a bound for failures only (60 s at most)
        if web.face.web.hub.mark is not None:
            return
        web.call(asyncio.sleep(0.02))
    raise AssertionError("the live poller never read the change mark")


def test_every_page_over_postgresql_is_the_page_over_sqlite(webs) -> None:  # type: ignore[no-untyped-def]
    sq, pg = webs["sqlite"], webs["postgresql"]
    assert pg[1].dialect.name == "postgresql" and sq[1].dialect.name == "sqlite"
    for path in PAGES:
        assert page(pg, path) == page(sq, path), path
    for path in ADMIN_PAGES:
        assert page(pg, path, admin=True) == page(sq, path, admin=True), path
    # the contents are real: rated games on the board, a viewer with its steps, the event's standings
    board = page(pg, "/leaderboard/oklahoma")
    assert all(f'data-account="{n}"' in board for n in ("ann", "ben", "simple-1", "random-1", "strong-1"))
    assert 'data-account="cheat"' not in board
    assert "knock" in page(pg, "/game/ok07").lower() and "In progress" in page(pg, "/game/now01")
    assert "friday &lt;script&gt;" in page(pg, "/events") and EVIL not in page(pg, "/events")


def test_a_ban_by_form_and_a_finished_game_read_alike_and_the_stream_tells(webs) -> None:  # type: ignore[no-untyped-def]
    for backend in ("sqlite", "postgresql"):  # the same writes, the same order
        web, store, key = webs[backend]
        token = token_of(web.url, ("root", key))
        assert post(web.url, "/admin/ban", {"account": "ben", "reason": "web " + EVIL, "token": token}, ("root", key))[0] == 303
        with sse_connect(web) as s:
            read_until(s, b"okgin arena live")
            wait_for_mark(web)
            finish_one(store, "late01", 7)
            assert b"event: change" in read_until(s, b"event: change")  # the change mark moves on both backends
        assert store.account("ben").banned == "web " + EVIL
    sq, pg = webs["sqlite"], webs["postgresql"]
    without_time = [[(n, what, by, why) for n, _at, what, by, why in st.ban_log(5)] for st in (pg[1], sq[1])]
    assert without_time[0] == without_time[1] and without_time[0][0] == ("ben", "ban", "root", "web " + EVIL)
    for path in (*PAGES, "/game/late01", "/player/strong-1"):
        if path == "/player/ben":
            continue  # banned now: 404 on both
        assert page(pg, path) == page(sq, path), path
    for path in ADMIN_PAGES:
        a, b = page(pg, path, admin=True), page(sq, path, admin=True)
        if path == "/admin/bans":  # the ban's time is each store's own clock: compare without the times
            a, b = (re.sub(r'<td title="[^"]*">[^<]*</td>', "", x) for x in (a, b))
        assert a == b, path
    assert 'data-account="ben"' not in page(pg, "/leaderboard/oklahoma")
