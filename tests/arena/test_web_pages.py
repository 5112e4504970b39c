"""The arena's web pages over real HTTP: uvicorn on a free loopback port, a store with known
games (tests/arena/webkit.py), every page, its headers, its escaping, its bounds, the admin
key, the event stream, and the viewer's rule for hidden cards."""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

pytest.importorskip("starlette", reason="the web needs okgin[arena-web]")

from webkit import EVIL, WebThread, fetch, played_game, seeded_store

from arena.auth import KeyChecker
from arena.store import Store
from arena.web.viewer import public_steps

PAGES = ("/", "/about", "/leaderboard/oklahoma", "/leaderboard/box?kind=bot", "/leaderboard/oklahoma?kind=human&page=1",
         "/player/ann", "/player/simple-1?page=1", "/live", "/game/ok03", "/game/box00", "/game/now01", "/events")
CARD = re.compile(r'"[A2-9TJQK][cdhs]"')


@pytest.fixture(scope="module")
def site() -> Iterator[tuple[WebThread, Store, str]]:
    store = seeded_store()
    key = store.rotate("root", at_ms=2)  # the admin's key, known to the test
    checker = KeyChecker(store, lambda: 0)  # the arena hands the web its own; here, the test's
    web = WebThread(store, checker, poll_ms=50, heartbeat_ms=300, max_clients=2)
    try:
        yield web, store, key
    finally:
        web.stop()
        checker.close()
        store.close()


def url(site: tuple[WebThread, Store, str], path: str) -> str:
    return site[0].url.rstrip("/") + path


def test_every_public_page_renders(site) -> None:  # type: ignore[no-untyped-def]
    for path in PAGES:
        status, headers, body = fetch(url(site, path))
        assert status == 200, (path, body[:500])
        assert headers["content-type"].startswith("text/html"), path
    _, _, board = fetch(url(site, "/leaderboard/oklahoma"))
    rows = re.findall(r'data-account="([^"]+)"', board)
    assert rows[0] == "strong-1" and set(rows) == {"ann", "ben", "simple-1", "random-1", "strong-1"}
    assert "cheat" not in rows  # banned accounts are off the boards
    assert 'class="kind kind-bot"' in board and 'class="kind kind-human"' in board  # humans and bots marked apart
    assert board.count('<span class="provisional">?</span>') >= 5  # few games: every rating is provisional
    _, _, bots = fetch(url(site, "/leaderboard/oklahoma?kind=bot"))
    assert set(re.findall(r'data-account="([^"]+)"', bots)) == {"simple-1", "random-1", "strong-1"}
    _, _, player = fetch(url(site, "/player/ann"))
    assert 'id="chart-oklahoma"' in player and "data-points='[[1," in player
    assert re.search(r'<td><a class="player" href="/player/simple-1">simple-1</a></td><td>6</td>', player)  # head to head
    _, _, live = fetch(url(site, "/live"))
    assert 'data-game="now01"' in live and 'data-game="ok03"' not in live


def test_security_headers_on_every_response(site) -> None:  # type: ignore[no-untyped-def]
    paths = (*PAGES, "/static/arena.js", "/static/arena.css", "/nowhere", "/leaderboard/oklahoma?page=0", "/admin",
             "/player/%3Cscript%3E")
    for path in paths:
        _status, h, body = fetch(url(site, path))
        csp = h.get("content-security-policy", "")
        assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp and "script-src 'self'" in csp, path
        assert "unsafe-inline" not in csp and "unsafe-eval" not in csp, path
        # the admin pages send their Origin to themselves (their forms' cross-site check), nowhere else
        referrer = "same-origin" if path.startswith("/admin") else "no-referrer"
        assert h.get("x-content-type-options") == "nosniff" and h.get("referrer-policy") == referrer, path
        assert h.get("x-frame-options") == "DENY", path
        if h.get("content-type", "").startswith("text/html"):
            for tag in re.findall(r"<script[^>]*>", body):  # no inline script: a source, or data that never runs
                assert 'src="/static/' in tag or 'type="application/json"' in tag, (path, tag)
            assert " on" not in " ".join(re.findall(r"<[a-z]+ [^>]*\bon[a-z]+=", body)), path  # no inline handlers


def test_no_html_from_users_anywhere(site) -> None:  # type: ignore[no-untyped-def]
    """A ban reason and a sitter's advice note hold HTML: every page shows it as text."""
    _web, store, key = site
    escaped = "&lt;script&gt;alert(1)&lt;/script&gt;"
    _, _, bans = fetch(url(site, "/admin/bans"), auth=("root", key))
    assert escaped in bans and EVIL not in bans
    _, _, accounts = fetch(url(site, "/admin/accounts"), auth=("root", key))
    assert escaped in accounts and EVIL not in accounts
    _, _, subs = fetch(url(site, "/admin/submissions?status=failed"), auth=("root", key))
    assert "crash: exit 1: " + escaped in subs and EVIL not in subs and "python3 bot.py {endpoint}" in subs
    _, _, viewer = fetch(url(site, "/game/box00"))
    assert "advised" in viewer and EVIL not in viewer and "\\u003cscript\\u003ealert(1)" in viewer
    for path in ("/player/%3Cscript%3Ealert(1)%3C%2Fscript%3E", "/game/%3Cscript%3Ealert(1)%3C%2Fscript%3E",
                 "/leaderboard/%3Cscript%3E", "/live?page=%3Cscript%3E"):
        status, _, body = fetch(url(site, path))
        assert status in (400, 404) and "<script>alert" not in body, path
    with pytest.raises(Exception, match="account names"):  # and a name cannot hold HTML to begin with
        store.add_account(EVIL, "human")


def test_query_parameters_are_checked(site) -> None:  # type: ignore[no-untyped-def]
    for path, words in (("/leaderboard/oklahoma?page=0", "page must be a whole number from 1 to 100000"),
                        ("/leaderboard/oklahoma?page=abc", "page must be a whole number"),
                        ("/leaderboard/oklahoma?page=99999999999", "page must be a whole number"),
                        ("/leaderboard/box?kind=robot", "kind must be one of: all, human, bot"),
                        ("/player/ann?page=-1", "page must be"), ("/live?page=1.5", "page must be")):
        status, _, body = fetch(url(site, path))
        assert status == 400 and words in body, (path, body[-400:])
    assert fetch(url(site, "/leaderboard/holdem"))[0] == 404
    assert fetch(url(site, "/player/nobody"))[0] == 404
    assert fetch(url(site, "/player/cheat"))[0] == 404  # a banned account has no public page
    status, _, body = fetch(url(site, "/leaderboard/oklahoma?page=9"))
    assert status == 200 and "No rated games yet." in body  # past the end: an empty page, not an error


def test_admin_pages_need_an_admin_key(site) -> None:  # type: ignore[no-untyped-def]
    _web, _store, key = site
    wrong = (("root", "okga_wrong"), ("nobody", key), ("ann", key), ("root", key[:-1]), ("<b>", key))
    for i, path in enumerate(("/admin", "/admin/accounts", "/admin/bans", "/admin/submissions")):
        status, h, _ = fetch(url(site, path))
        assert status == 401 and h["www-authenticate"].startswith("Basic"), path
        answers = {fetch(url(site, path), auth=auth)[2] for auth in (wrong if i == 0 else wrong[i:i + 1])}
        assert answers == {"<!doctype html><title>forbidden</title><p>Forbidden.</p>"}, path  # one answer, no reason
        status, h, _body = fetch(url(site, path), auth=("root", key))
        assert status == 200 and h.get("cache-control") == "no-store", path
    _, _, accounts = fetch(url(site, "/admin/accounts"), auth=("root", key))
    assert all(f">{n}</a>" in accounts for n in ("ann", "cheat", "root", "strong-1"))
    assert fetch(url(site, "/admin"), auth=("ann", "x"))[0] == 403
    status, _, body = fetch(url(site, "/admin/submissions?status=dead"), auth=("root", key))
    assert status == 400 and "status must be one of: all, pending" in body


def test_a_game_in_progress_shows_no_card(site) -> None:  # type: ignore[no-untyped-def]
    status, _, body = fetch(url(site, "/game/now01"))
    assert status == 200 and "In progress" in body
    assert 'id="steps"' not in body and not CARD.search(body)
    _, _, done = fetch(url(site, "/game/ok03"))
    assert 'id="steps"' in done and CARD.search(done)


def test_the_viewer_shows_a_hand_only_once_it_ended() -> None:
    """The steps pass through the broadcast feed's rule (referee.table.fullfeed.FullFeed): a
    record cut inside a hand shows the hands that ended and nothing of the running one."""
    g = played_game("oklahoma", 7)
    rec = g.to_record()
    steps = public_steps(rec, ["ann", "ben"])
    assert steps[-1]["type"] == "game_end" and sum(s["type"] == "hand_end" for s in steps) == len(g.results)
    ends = [i for i, s in enumerate(steps) if s["type"] == "hand_end"]
    assert len(ends) >= 2
    moves_before_second_end = sum(1 for s in steps[:ends[1]] if s["type"] in ("move", "advice"))
    cut = {**rec, "entries": rec["entries"][:moves_before_second_end - 1]}  # inside the second hand
    shown = public_steps(cut, ["ann", "ben"])
    assert shown == steps[:ends[0] + 1]  # the first hand, to its end; nothing of the second
    assert public_steps({**rec, "entries": rec["entries"][:3]}, ["ann", "ben"]) == []


def sse_connect(site: tuple[WebThread, Store, str] | WebThread) -> socket.socket:
    parts = urlsplit((site if isinstance(site, WebThread) else site[0]).url)
    s = socket.create_connection((parts.hostname, parts.port), timeout=30)
    s.sendall(b"GET /live/events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n")
    return s


def read_until(s: socket.socket, token: bytes, limit: int = 1 << 16) -> bytes:
    got = b""
    while token not in got:
        chunk = s.recv(4096)  # the socket's timeout bounds the wait
        if not chunk:
            break
        got += chunk
        assert len(got) < limit
    return got


def test_the_event_stream_is_bounded_beats_and_tells_of_changes(site) -> None:  # type: ignore[no-untyped-def]
    web, store, _ = site
    a, b = sse_connect(site), sse_connect(site)
    try:
        head = read_until(a, b"okgin arena live")
        assert b" 200 " in head.split(b"\r\n")[0] and b"text/event-stream" in head
        read_until(b, b"okgin arena live")
        status, h, _ = fetch(url(site, "/live/events"))  # the cap is 2 here
        assert status == 503 and h.get("retry-after") == "30"
        assert b": heartbeat" in read_until(a, b": heartbeat")
        store.void_game("now01", "test")  # a game leaves play: the mark moves
        assert b"event: change" in read_until(b, b"event: change")
    finally:
        a.close()
        b.close()
    deadline = 200
    while web.face.web.hub.clients and deadline:  # a closed stream frees its place (noticed at its next write)
        web.call(__import__("asyncio").sleep(0.05))
        deadline -= 1
    assert web.face.web.hub.clients == 0


def test_the_store_reads_the_pages_use(site) -> None:  # type: ignore[no-untyped-def]
    _, store, _ = site
    assert [a.kind for a, _ in store.leaderboard("oklahoma", kind="bot")] == ["bot"] * 3
    assert store.leaderboard_size("oklahoma") == 5 and store.leaderboard_size("oklahoma", "human") == 2
    h2h = store.head_to_head("ann")
    assert h2h and all(h.games == h.wins + h.losses + h.draws for h in h2h)
    assert sum(h.games for h in h2h) == sum(len(g.players) - 1 for g in store.recent_games("ann", 200) if g.status == "finished")
    full, last3 = store.history("ann", "oklahoma"), store.history("ann", "oklahoma", last=3)
    assert len(full) > 3 and last3 == full[-3:]
    assert [g.id for g in store.recent_games("ann", 2, 1)] == [g.id for g in store.recent_games("ann", 3)][1:]
    assert store.count_accounts() == 7 and [a.name for a in store.accounts(banned=True)] == ["cheat"]
    assert [a.name for a in store.accounts(2, 2)] == [a.name for a in store.accounts()][2:4]


def test_streams_end_when_the_web_stops() -> None:
    store = Store.open("sqlite://:memory:")
    web = WebThread(store, heartbeat_ms=600_000)
    stopped = False
    try:
        with sse_connect(web) as s:
            read_until(s, b"okgin arena live")
            assert web.face.web.hub.clients == 1
            web.stop()  # the arena's shutdown: no heartbeat is due for ten minutes, yet the stream ends now
            stopped = True
            tail = read_until(s, b"\x00never")  # to the end of the stream: the server closed it
            assert b"0\r\n\r\n" in tail or tail == b""
    finally:
        if not stopped:
            web.stop()
        store.close()


@pytest.mark.parametrize("web, words", [("0.0.0.0:7119", "is not a loopback address"), ("nonsense", "--web takes HOST:PORT")])
def test_okgin_arena_refuses_a_web_address(tmp_path, web, words) -> None:  # type: ignore[no-untyped-def]
    """The web's admin pages carry keys: off loopback only with --insecure (before anything starts)."""
    import subprocess

    from okgin.launch import okgin_argv

    out = subprocess.run(okgin_argv("arena", "--state", str(tmp_path / "s"), "--web", web), capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 2 and words in out.stderr and out.stdout == "", out


def test_the_events_page_shows_each_events_standings_and_verify_result(site) -> None:  # type: ignore[no-untyped-def]
    """An event an admin ran (``okgin arena event add``; arena.events stores what it gives):
    its accounts, standings and every verify check on /events, a failed one with its reason,
    all escaped; ``?status=`` filters and is checked."""
    _web, store, _key = site
    done = store.add_event("friday " + EVIL, "round_robin", ["simple-1", "random-1"], start_ms=1_000, by="root")
    store.start_event(done.id, "/srv/results.sqlite")
    store.finish_event(done.id, [
        {"rank": 1, "account": "simple-1", "games": 4, "wins": 4, "losses": 0, "draws": 0, "score": 4.0, "elo": 240.8,
         "err95": 310.2, "forfeits": 0, "points_for": 400},
        {"rank": 2, "account": "random-1", "games": 4, "wins": 0, "losses": 4, "draws": 0, "score": 0.0, "elo": -240.8,
         "err95": 310.2, "forfeits": 0, "points_for": 12, "plays": "connected"},
    ], [{"name": "chain", "status": "ok", "summary": "4 records, head 9f2c", "problems": []},
        {"name": "journals", "status": "FAIL", "summary": "1 record disagrees", "problems": ["game 3: " + EVIL]}])
    failed = store.add_event("gauntlet", "gauntlet", ["strong-1", "ann"], start_ms=2_000, by="root", champion="strong-1")
    store.finish_event(failed.id, [], [], error="ann has no active hosted bot")
    status, _, body = fetch(url(site, "/events"))
    assert status == 200 and EVIL not in body
    section = body[body.index(f'id="event-{done.id}"'):]
    assert "friday &lt;script&gt;alert(1)&lt;/script&gt;" in section and 'data-status="finished"' in section
    assert re.search(r'<tr data-account="simple-1"><td>1</td>.*?<td>4</td><td>4</td><td>0</td>', section)
    assert re.search(r'<tr data-account="random-1"><td>2</td>.*?<td class="plays">connected</td>', section)
    assert "+241 ± 310" in section
    assert "A CHECK FAILED" in section and "<b>FAIL</b> journals: 1 record disagrees" in section
    assert "game 3: &lt;script&gt;" in section
    assert "It could not run: ann has no active hosted bot" in body
    assert 'of <a class="player" href="/player/strong-1">' in body
    _, _, only_failed = fetch(url(site, "/events?status=failed"))
    assert "ann has no active hosted bot" in only_failed and f'id="event-{done.id}"' not in only_failed
    status, _, _ = fetch(url(site, "/events?status=%3Cscript%3E"))
    assert status == 400
