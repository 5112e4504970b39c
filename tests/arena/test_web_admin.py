"""Banning and unbanning from the arena's web admin pages, over real HTTP: the forms' token,
the cross-site check, the size bound, who may, what is recorded and shown; and at a real
``okgin arena`` (front, shard, web), a ban through the form closes the account's session and
refuses its next sign-in, an unban lets it back. One test drives the form in headless
Chromium (skipped without Debian's chromium and chromium-driver)."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

pytest.importorskip("starlette", reason="the web needs okgin[arena-web]")

from arenakit import ArenaProcess, Client, add_accounts, arena_hello
from webkit import CHROMEDRIVER, CHROMIUM, EVIL, WebThread, chromium, fetch, post, seeded_store, token_of

from arena.auth import KeyChecker
from arena.store import Store
from arena.web.app import MAX_FORM_BYTES

FORBIDDEN = "<!doctype html><title>forbidden</title><p>Forbidden.</p>"


@pytest.fixture(scope="module")
def site() -> Iterator[tuple[WebThread, Store, dict[str, str]]]:
    store = seeded_store()
    keys = {"root": store.rotate("root", at_ms=2), "ann": store.rotate("ann", at_ms=2)}
    checker = KeyChecker(store, lambda: 0)
    web = WebThread(store, checker)
    try:
        yield web, store, keys
    finally:
        web.stop()
        checker.close()
        store.close()


def state_of(store: Store, name: str) -> tuple[str | None, int]:
    acct = store.account(name)
    assert acct is not None
    return acct.banned, len(store.account_log(name))


def test_a_form_without_its_token_or_from_another_site_changes_nothing(site) -> None:  # type: ignore[no-untyped-def]
    web, store, keys = site
    root = ("root", keys["root"])
    token = token_of(web.url, root)
    before = state_of(store, "ben")
    refusals = [
        post(web.url, "/admin/ban", {"account": "ben", "reason": "x"}, root),  # no token
        post(web.url, "/admin/ban", {"account": "ben", "reason": "x", "token": "0" * 64}, root),  # a wrong one
        post(web.url, "/admin/ban", {"account": "ben", "reason": "x", "token": token[:-1]}, root),
    ]
    for status, h, body in refusals:
        assert status == 403 and "token is missing or stale" in body and h["cache-control"] == "no-store", body
    good = {"account": "ben", "reason": "x", "token": token}
    for origin in ("http://evil.example", "null", None, "http://127.0.0.1:1"):  # another site, a sandbox, none
        status, _, body = post(web.url, "/admin/ban", good, root, origin=origin)
        assert status == 403 and "not sent from the admin pages of this arena" in body, (origin, body)
    status, _, body = post(web.url, "/admin/ban", good, root, origin=None,
                           headers={"Referer": "http://evil.example/admin/bans"})
    assert status == 403 and "not sent from the admin pages of this arena" in body
    assert state_of(store, "ben") == before  # nothing happened, nothing was logged
    # the checks do not let a non-admin or nobody through with a token of its own
    assert post(web.url, "/admin/ban", good, None)[0] == 401
    ann = ("ann", keys["ann"])
    assert post(web.url, "/admin/ban", {**good, "token": token}, ann)[2] == FORBIDDEN
    assert fetch(web.url + "admin/bans", auth=ann)[0] == 403  # so ann never sees a token
    assert post(web.url, "/admin/ban", good, ("root", "okga_wrong"))[2] == FORBIDDEN
    assert state_of(store, "ben") == before


def test_form_bounds_and_checks(site) -> None:  # type: ignore[no-untyped-def]
    web, store, keys = site
    root = ("root", keys["root"])
    token = token_of(web.url, root)
    before = state_of(store, "ben")
    status, _, body = post(web.url, "/admin/ban", b"token=" + token.encode() + b"&reason=" + b"x" * MAX_FORM_BYTES, root)
    assert status == 413 and f"at most {MAX_FORM_BYTES} bytes" in body
    cases = [
        ({"account": "ben", "reason": "", "token": token}, "reason must be 1 to 200 printable characters"),
        ({"account": "ben", "reason": "y" * 201, "token": token}, "reason must be 1 to 200"),
        ({"account": "<b>", "reason": "x", "token": token}, "account must be an account&#39;s name"),
        ({"account": "nobody", "reason": "x", "token": token}, "no account nobody here"),
        ({"account": "root", "reason": "x", "token": token}, "cannot ban or unban itself"),
        ("account=ben&account=ann&reason=x&token=" + token, "each field of the form is given once"),
    ]
    for fields, words in cases:
        status, _, body = post(web.url, "/admin/ban", fields, root)
        assert status == 400 and words in body, (fields, body)
    status, _, body = post(web.url, "/admin/ban", {"account": "ben"}, root, headers={"Content-Type": "text/plain"})
    assert status == 400 and "application/x-www-form-urlencoded" in body
    assert fetch(web.url + "admin/ban", auth=root)[0] == 405  # a GET never bans
    assert state_of(store, "ben") == before


def test_an_admin_bans_and_unbans_through_the_forms_and_the_bans_page_keeps_the_record(site) -> None:  # type: ignore[no-untyped-def]
    web, store, keys = site
    root = ("root", keys["root"])
    token = token_of(web.url, root, "/admin/accounts")
    _, _, accounts = fetch(web.url + "admin/accounts", auth=root)
    assert 'action="/admin/ban"' in accounts and 'action="/admin/unban"' in accounts  # ben may be banned, cheat unbanned
    status, h, _ = post(web.url, "/admin/ban", {"account": "Ben", "reason": f"spam {EVIL}", "token": token}, root)
    assert status == 303 and h["location"] == "/admin/bans"
    assert store.account("ben").banned == f"spam {EVIL}"
    _at, what, by, detail = store.account_log("ben")[-1]
    assert (what, by, detail) == ("ban", "root", f"spam {EVIL}")
    assert "ben" not in fetch(web.url + "leaderboard/oklahoma")[2]  # off the boards at once
    _, h, bans = fetch(web.url + "admin/bans", auth=root)
    assert h["referrer-policy"] == "same-origin" and "script-src 'self'" in h["content-security-policy"]
    assert EVIL not in bans and html.escape(f"spam {EVIL}", quote=False) in bans
    assert re.search(r'<td class="what">ban</td><td class="name">ben</td>\s*<td class="by">root</td>', bans)
    status, _, _ = post(web.url, "/admin/unban", {"account": "ben", "token": token}, root)
    assert status == 303 and store.account("ben").banned is None
    assert store.account_log("ben")[-1][1:3] == ("unban", "root")
    _, _, bans = fetch(web.url + "admin/bans", auth=root)
    first = re.search(r'<table class="bans" id="ban-record">.*?<tbody>\s*<tr>(.*?)</tr>', bans, re.S)
    assert first and "unban" in first.group(1) and "ben" in first.group(1)  # the record keeps the lifted ban, newest first
    assert 'data-account="ben"' not in bans.split('id="ban-record"')[0]  # no longer in the banned list
    assert "ben" in fetch(web.url + "leaderboard/oklahoma")[2]


# -- at a real arena ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ArenaProcess, dict[str, str], Path]]:
    tmp = tmp_path_factory.mktemp("web-admin")
    state = tmp / "arena"
    keys = add_accounts(state, "boss", kind="human", admin=("boss",))
    keys.update(add_accounts(state, "victim", "other"))
    proc = ArenaProcess(state, web=True)
    try:
        yield proc, keys, tmp
    finally:
        assert proc.stop() == 0, proc.stderr()


def refused(reply: dict[str, Any], why: str) -> None:
    assert reply["type"] == "error" and reply["name"] == "banned" and reply["message"].endswith(why), reply


def test_a_ban_through_the_form_closes_the_session_and_refuses_the_next_sign_in(arena) -> None:  # type: ignore[no-untyped-def]
    proc, keys, _ = arena
    boss = ("boss", keys["boss"])
    online = Client(proc.endpoint)
    later = Client(proc.endpoint)
    try:
        token = token_of(proc.web, boss, "/admin/accounts")
        assert post(proc.web, "/admin/ban", {"account": "victim", "reason": "web ban", "token": token},
                    ("victim", keys["victim"]))[2] == FORBIDDEN  # a bot's own key is no admin's
        assert post(proc.web, "/admin/ban", {"account": "victim", "reason": "web ban", "token": token}, boss,
                    origin="http://evil.example")[0] == 403
        assert arena_hello(later, "victim", keys["victim"])["type"] == "welcome"  # neither did anything
        later.close()
        assert arena_hello(online, "victim", keys["victim"])["type"] == "welcome"  # takes the session over
        status, _, _ = post(proc.web, "/admin/ban", {"account": "victim", "reason": "web ban", "token": token}, boss)
        assert status == 303
        note = online.wait_for(lambda m: m["type"] == "error")  # the open session is told, then closed
        refused(note, "web ban")
        later = Client(proc.endpoint)
        refused(arena_hello(later, "victim", keys["victim"]), "web ban")  # and the next sign-in is refused
        later.close()
        assert post(proc.web, "/admin/unban", {"account": "victim", "token": token}, boss)[0] == 303
        later = Client(proc.endpoint)
        assert arena_hello(later, "victim", keys["victim"])["type"] == "welcome"
        _, _, bans = fetch(proc.web + "admin/bans", auth=boss)
        assert re.search(r'<td class="what">unban</td><td class="name">victim</td>\s*<td class="by">boss</td>', bans)
        assert re.search(r'<td class="what">ban</td><td class="name">victim</td>\s*<td class="by">boss</td>'
                         r'<td class="reason">web ban</td>', bans)
    finally:
        online.close()
        later.close()


def wait_for_bans(driver: Any, words: str, what: str) -> None:
    """Until the bans page (loaded anew after a form) shows ``words`` in its banned list: read
    in one script, so a page replaced between two selenium calls is never a stale element."""
    from selenium.webdriver.support.ui import WebDriverWait

    script = ("const t = document.getElementById('bans');"
              "return location.pathname === '/admin/bans' && document.readyState === 'complete' && t ? t.textContent : '';")
    WebDriverWait(driver, 120, 0.1).until(lambda d: words in (d.execute_script(script) or ""), what)


@pytest.mark.skipif(CHROMIUM is None or CHROMEDRIVER is None, reason="Debian's chromium and chromium-driver are not installed")
def test_the_ban_form_works_in_a_browser(arena, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Chromium signs in with the admin's key in the address (HTTP Basic), fills the accounts
    page's ban form and sends it: no script, the page's own Origin, the token in the form."""
    from selenium.webdriver.common.by import By

    proc, keys, _ = arena
    p = urlsplit(proc.web)
    with chromium(tmp_path) as driver:
        driver.get(f"http://boss:{keys['boss']}@{p.netloc}/admin/accounts")
        row = driver.find_element(By.CSS_SELECTOR, "#accounts tr[data-account='other']")
        row.find_element(By.NAME, "reason").send_keys("browser ban")
        row.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        wait_for_bans(driver, "browser ban", "the ban on the bans page")
        c = Client(proc.endpoint)
        try:
            refused(arena_hello(c, "other", keys["other"]), "browser ban")
        finally:
            c.close()
        driver.find_element(By.CSS_SELECTOR, "#bans tr[data-account='other'] button[type=submit]").click()
        wait_for_bans(driver, "Nobody is banned.", "the ban lifted")
    c = Client(proc.endpoint)
    try:
        assert arena_hello(c, "other", keys["other"])["type"] == "welcome"
    finally:
        c.close()
