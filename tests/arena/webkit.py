"""The arena's web face for the tests: a store with known contents, the web served by uvicorn
on a free loopback port in a thread of its own, plain HTTP requests, and headless Chromium.

The store's games are played by the engine (seeded random moves, fixed times), so every page
over it is the same on every run (the README's screenshot is taken of one). A Box game's
sitter advises with a note that is HTML, to check that no page ever treats it as such.
"""

from __future__ import annotations

import asyncio
import base64
import http.client
import random
import re
import shutil
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock
from urllib.parse import urlencode, urlsplit

from arena import keys
from arena.store import GameResult, NewGame, Store
from arena.web.serve import WebFace
from okgin.errors import IllegalAction
from okgin.game import Game
from okgin.rules import RuleSet

__all__ = ["EVIL", "WebThread", "chromium", "fetch", "played_game", "post", "seeded_store", "token_of"]

#: What a user might type where a page shows their words.
EVIL = "<script>alert(1)</script>"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
CHROMIUM_FLAGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", "--window-size=1200,900", "--hide-scrollbars", "--force-device-scale-factor=1",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
]


def played_game(variant: str, seed: int, advice: str | None = None) -> Game:
    """A whole game of seeded random moves, but a knock whenever one is legal (short, decisive
    games, short rules); with ``advice``, the Box's sitter sends that note whenever the
    captain is to act."""
    g = Game(RuleSet.from_dict({"variant": variant, "target_score": 20, "max_hands": 4}), seed=seed)
    rng = random.Random(seed)
    while not g.over:
        if advice is not None and g.roles is not None and g.hand.to_act == g.roles[1]:
            try:
                g.advise(g.roles[2], None, advice)
            except IllegalAction:
                pass
        legal = g.legal_actions()
        knocks = [a for a in legal if a.kind in ("knock", "big_gin")]
        g.apply(rng.choice(knocks or legal))
    return g


def seeded_store(url: str = "sqlite://:memory:") -> Store:
    """Accounts (people, bots, an admin, a banned one whose reason is HTML) and 24 finished
    rated games with their records, at fixed times; one Box game is still in play. The
    accounts' keys are hashed with a cheap scrypt (n=16): nobody uses them, and seven hashes at
    full cost take seconds on a loaded machine (rotate an account to give it a real key)."""
    real = keys.hash_key
    with mock.patch.object(keys, "hash_key", lambda key: real(key, n=16)):
        return _seed(Store.open(url))


def _seed(store: Store) -> Store:
    people, bots = ("ann", "ben"), ("simple-1", "random-1", "strong-1")
    for n in people:
        store.add_account(n, "human", created_ms=1_000)
    for n in bots:
        store.add_account(n, "bot", created_ms=1_000)
    store.add_account("root", "human", admin=True, created_ms=1_000)
    store.add_account("cheat", "bot", created_ms=1_000)
    players = (*people, *bots)
    t = 1_700_000_000_000
    for i in range(20):
        a, b = players[i % 5], players[(i * 2 + 1) % 5]
        if a == b:
            b = players[(i + 1) % 5]
        g = played_game("oklahoma", i)
        gid = f"ok{i:02d}"
        store.new_game(NewGame(gid, "oklahoma", True, (a, b), {"move_ms": 60_000}, "s0", f"t-{gid}", t + i * 60_000))
        store.finish_game(gid, GameResult(g.winner, tuple(g.scores), str(g.termination or "normal"), t + i * 60_000 + 50_000,
                                          record=g.to_record(), seed=str(g.seed_value)))
    for i in range(4):
        seats = ("ann", "simple-1", "strong-1") if i % 2 else ("ben", "random-1", "simple-1")
        g = played_game("box", 100 + i, advice=EVIL if i == 0 else None)
        gid = f"box{i:02d}"
        store.new_game(NewGame(gid, "box", True, seats, {"move_ms": 60_000}, "s0", f"t-{gid}", t + (30 + i) * 60_000))
        store.finish_game(gid, GameResult(g.winner, tuple(g.scores), str(g.termination or "normal"),
                                          t + (30 + i) * 60_000 + 50_000, record=g.to_record()))
    store.new_game(NewGame("now01", "box", True, ("ann", "ben", "random-1"), {"move_ms": 60_000}, "s0", "t-now01",
                           t + 40 * 60_000))
    sub = store.add_submission("strong-1", ("python3", "bot.py", "{endpoint}"), "oklahoma", "/nonexistent/bots/1", 3, 4096,
                               created_ms=t)
    store.set_submission(sub.id, "failed", f"crash: exit 1: {EVIL}", at_ms=t)
    store.ban("cheat", EVIL, "root", at_ms=t)
    return store


class WebThread:
    """A :class:`arena.web.serve.WebFace` over ``store``, on its own event loop in a thread."""

    def __init__(self, store: Store, checker: Any = None, **settings: Any) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="web-test", daemon=True)
        self.thread.start()
        self.face = WebFace(store, checker, "127.0.0.1:0", "test arena", **settings)
        self.url = self.call(self.face.start())

    def call(self, coro: Any, timeout: float = 60.0) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def stop(self) -> None:
        try:
            self.call(self.face.stop())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(30)
            self.loop.close()


def fetch(url: str, auth: tuple[str, str] | None = None, timeout: float = 60.0) -> tuple[int, dict[str, str], str]:
    """GET ``url``: (status, headers with lower-case names, body)."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=timeout)
    headers = {}
    if auth is not None:
        headers["Authorization"] = "Basic " + base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
    try:
        conn.request("GET", parts.path + (f"?{parts.query}" if parts.query else ""), headers=headers)
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read().decode("utf-8")
    finally:
        conn.close()


TOKEN = re.compile(r'name="token" value="([0-9a-f]{64})"')


def origin_of(base: str) -> str:
    p = urlsplit(base)
    return f"{p.scheme}://{p.netloc}"


def post(base: str, path: str, fields: dict[str, str] | str | bytes, auth: tuple[str, str] | None,
         origin: str | None = "same", headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], str]:
    """POST a form to ``base + path``: (status, headers, body). ``origin="same"`` sends the
    site's own Origin (as a browser does from the admin page), None sends none."""
    p = urlsplit(base)
    body = fields if isinstance(fields, bytes) else (fields if isinstance(fields, str) else urlencode(fields)).encode()
    h = {"Content-Type": "application/x-www-form-urlencoded", **(headers or {})}
    if origin is not None:
        h["Origin"] = origin_of(base) if origin == "same" else origin
    if auth is not None:
        h["Authorization"] = "Basic " + base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
    conn = http.client.HTTPConnection(p.hostname or "127.0.0.1", p.port, timeout=60)
    try:
        conn.request("POST", path, body=body, headers=h)
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read().decode("utf-8")
    finally:
        conn.close()


def token_of(base: str, auth: tuple[str, str], page: str = "/admin/bans") -> str:
    status, _, body = fetch(base.rstrip("/") + page, auth=auth)
    assert status == 200, body
    tokens = set(TOKEN.findall(body))
    assert len(tokens) == 1, tokens  # one token for every form of the admin
    return tokens.pop()


@contextmanager
def chromium(tmp: Path) -> Iterator[Any]:
    """A headless Chromium driven by selenium, with a profile of its own under ``tmp``."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    assert CHROMIUM is not None and CHROMEDRIVER is not None
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument("--user-data-dir=" + tempfile.mkdtemp(prefix="chromium-", dir=tmp))
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    driver.set_page_load_timeout(60)
    driver.set_script_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()
