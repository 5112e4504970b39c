"""The arena's web pages: a Starlette application, Jinja2 templates rendered on the server.

Read-only for the public: leaderboards per variant (``/leaderboard/oklahoma``,
``/leaderboard/box``), a page per player (rating chart, recent games, head-to-head), the
games in play (``/live``), a viewer for any finished game (``/game/ID``), the arena's events
(``/events``), and one stream of server-sent events (``/live/events``) that tells the
leaderboards and the live list to refresh themselves. Admin pages (``/admin/...``) need an
admin account's name and key (HTTP Basic, checked by the arena's own
:class:`arena.auth.KeyChecker`: scrypt off the loop, the same failure lockout as ``hello``).
Their two forms, ban and unban (``POST /admin/ban``, ``/admin/unban``), are the web's only
writes: the store's own :meth:`arena.store.Store.ban` and ``unban``, as at the command line,
behind the checks of :meth:`WebApp.admin_form`. The browser resends Basic credentials to
any site's POST, so each form is also checked for its origin and a per-admin token (CSRF).

Every read goes through :class:`arena.store.Store` in a small thread pool (a query never
runs on the loop that serves the arena's players), every page is bounded (pages of at most
:data:`PAGE` rows, query parameters checked, with a 400 that says what is wrong), and every
response carries the headers of :mod:`arena.web.security`. Jinja2 escapes everything it
writes (``autoescape``); no template marks anything safe, so no name or note from a user is
ever HTML.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import hmac
import os
import re
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlsplit

import jinja2
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from ..auth import Busy, KeyChecker
from ..ratings import VARIANTS
from ..store import EVENT_STATUSES, KINDS, NAME_RE, SUBMISSION_STATUSES, Account, GameRow, Store, StoreError
from .live import Full, LiveHub
from .security import SecurityHeaders
from .viewer import describe, public_steps
from .words import ago, clock_words, result_words, utc

__all__ = ["ADMIN_PAGE", "BAN_LOG_SHOWN", "CHART_POINTS", "EVENTS_SHOWN", "GAME_ID_RE", "MAX_FORM_BYTES", "PAGE",
           "STEPS_CACHE", "Refused", "WebApp", "create_app"]

HERE = Path(__file__).resolve().parent
#: Rows per page of a leaderboard, a live list, a player's games.
PAGE = 50
#: Rows per page of the admin's accounts list.
ADMIN_PAGE = 100
#: A rating chart draws at most the last this many games.
CHART_POINTS = 500
#: The highest page number any list accepts (a bound on OFFSET, not on the data).
MAX_PAGE = 100_000
#: The events page lists at most this many (the latest scheduled first).
EVENTS_SHOWN = 50
#: Finished games whose viewer steps are kept in memory (the most recently viewed).
STEPS_CACHE = 64
GAME_ID_RE = re.compile(r"[A-Za-z0-9_.-]{1,64}")
#: An admin form's body is at most this many bytes (a name, a reason of 200 characters, the token).
MAX_FORM_BYTES = 4096
#: The bans page shows the latest this many bans and unbans.
BAN_LOG_SHOWN = 50
#: The longest ban reason kept (the store cuts at the same length).
REASON_CHARS = 200
T = TypeVar("T")


def bad_request(what: str) -> HTTPException:
    return HTTPException(400, what)


def int_param(request: Request, name: str, default: int, lo: int, hi: int) -> int:
    """A whole-number query parameter in [lo, hi], or a 400 saying so."""
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    if not raw.isascii() or not raw.isdigit() or len(raw) > 9 or not lo <= int(raw) <= hi:
        raise bad_request(f"{name} must be a whole number from {lo} to {hi}")
    return int(raw)


def choice_param(request: Request, name: str, default: str, allowed: tuple[str, ...]) -> str:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    if raw not in allowed:
        raise bad_request(f"{name} must be one of: {', '.join(allowed)}")
    return raw


class Refused(HTTPException):
    """A 403 whose reason is shown: an admin form from another site or with a stale token.
    (A failed sign-in stays a 403 that says nothing of why.)"""

    def __init__(self, why: str) -> None:
        super().__init__(403, why)


class WebApp:
    """The pages over one store; :attr:`app` is the ASGI application (see the module docstring)."""

    def __init__(self, store: Store, checker: KeyChecker | None, arena_name: str = "okgin arena",
                 poll_ms: int = 1000, heartbeat_ms: int = 15_000, max_clients: int = 100, threads: int = 2,
                 on_ban: Callable[[str, str], None] | None = None) -> None:
        self.store = store
        self.checker = checker
        #: Called on the loop after a ban is stored: the arena's :meth:`arena.desk.ArenaDesk.banned`
        #: (drop the cached key, close the account's session); none when the web runs alone.
        self.on_ban = on_ban
        #: The key of the admin forms' tokens: new at each start, so a restart voids every form.
        self.secret = os.urandom(32)
        self.arena_name = arena_name
        self.pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="arena-web")
        self.steps: OrderedDict[str, list[dict[str, Any]]] = OrderedDict()
        self.hub = LiveHub(lambda: self.read(store.change_mark), poll_ms, heartbeat_ms, max_clients)
        env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True,
                                 undefined=jinja2.StrictUndefined)
        env.filters["ago"] = ago
        env.filters["clock"] = clock_words
        env.filters["utc"] = utc
        env.globals["variants"] = VARIANTS
        self.templates = Jinja2Templates(env=env)
        routes = [
            Route("/", self.home),
            Route("/about", self.about),
            Route("/leaderboard/{variant}", self.leaderboard),
            Route("/player/{name}", self.player),
            Route("/live", self.live),
            Route("/live/events", self.live_events),
            Route("/game/{game_id}", self.game),
            Route("/events", self.events),
            Route("/admin", self.admin),
            Route("/admin/accounts", self.admin_accounts),
            Route("/admin/bans", self.admin_bans),
            Route("/admin/submissions", self.admin_submissions),
            Route("/admin/ban", self.admin_ban, methods=["POST"]),
            Route("/admin/unban", self.admin_unban, methods=["POST"]),
            Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
        ]
        app = Starlette(routes=routes, exception_handlers={HTTPException: self.error})
        self.app = SecurityHeaders(app)

    # -- plumbing ------------------------------------------------------------------------------

    async def start(self) -> None:
        self.hub.start()

    async def close(self) -> None:
        await self.hub.close()
        self.pool.shutdown(wait=False, cancel_futures=True)

    async def read(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` (a store read) in the web's threads, never on the loop."""
        return await asyncio.get_running_loop().run_in_executor(self.pool, lambda: fn(*args))

    def page(self, request: Request, name: str, status: int = 200, **context: Any) -> Response:
        context.setdefault("title", self.arena_name)
        context.setdefault("live", False)
        return self.templates.TemplateResponse(request, name, {"arena": self.arena_name, "now_ms": _now_ms(), **context},
                                               status_code=status)

    async def error(self, request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        headers = dict(exc.headers or {})
        if isinstance(exc, Refused):
            resp = self.page(request, "error.html", 403, title="403", detail=exc.detail)
            resp.headers["Cache-Control"] = "no-store"
            return resp
        if exc.status_code in (401, 403):  # never say why: a wrong name and a wrong key read alike
            return HTMLResponse("<!doctype html><title>forbidden</title><p>Forbidden.</p>", exc.status_code, headers)
        detail = exc.detail if exc.status_code in (400, 413) else {404: "Nothing here.", 405: "Not allowed.",
                                                           503: "Busy: try again shortly."}.get(exc.status_code, "Error.")
        resp = self.page(request, "error.html", exc.status_code, title=f"{exc.status_code}", detail=detail)
        resp.headers.update(headers)
        return resp

    # -- public pages --------------------------------------------------------------------------

    async def home(self, request: Request) -> Response:
        boards = {v: await self.read(self.store.leaderboard, v, 0, 10) for v in VARIANTS}
        playing = await self.read(self.store.games_playing, 0, 10)
        n_playing = await self.read(self.store.count_playing)
        return self.page(request, "home.html", boards=boards, playing=playing, n_playing=n_playing, live=True)

    async def about(self, request: Request) -> Response:
        return self.page(request, "about.html", title="about")

    async def leaderboard(self, request: Request) -> Response:
        variant = request.path_params["variant"]
        if variant not in VARIANTS:
            raise HTTPException(404)
        page = int_param(request, "page", 1, 1, MAX_PAGE)
        kind = choice_param(request, "kind", "all", ("all", *KINDS))
        k = None if kind == "all" else kind
        rows = await self.read(self.store.leaderboard, variant, (page - 1) * PAGE, PAGE, k)
        total = await self.read(self.store.leaderboard_size, variant, k)
        return self.page(request, "leaderboard.html", title=f"{variant} leaderboard", variant=variant, rows=rows,
                         first_rank=(page - 1) * PAGE + 1, page=page, pages=max(1, -(-total // PAGE)), kind=kind,
                         total=total, live=True)

    async def player(self, request: Request) -> Response:
        name = request.path_params["name"]
        acct = await self.read(self.store.account, name) if NAME_RE.fullmatch(name) else None
        if acct is None or acct.banned:
            raise HTTPException(404)
        page = int_param(request, "page", 1, 1, MAX_PAGE)
        ratings = {v: await self.read(self.store.rating, acct.name, v) for v in VARIANTS}
        charts = {}
        for v in VARIANTS:
            pts = await self.read(self.store.history, acct.name, v, CHART_POINTS)
            charts[v] = [[p.n, round(p.rating, 1), round(p.deviation, 1)] for p in pts]
        games = await self.read(self.store.recent_games, acct.name, PAGE + 1, (page - 1) * PAGE)
        h2h = await self.read(self.store.head_to_head, acct.name)
        rows = [_game_for(g, acct.name) for g in games[:PAGE]]
        return self.page(request, "player.html", title=acct.name, acct=acct, ratings=ratings, charts=charts, games=rows,
                         page=page, more=len(games) > PAGE, h2h=h2h[:PAGE])

    async def live(self, request: Request) -> Response:
        page = int_param(request, "page", 1, 1, MAX_PAGE)
        playing = await self.read(self.store.games_playing, (page - 1) * PAGE, PAGE + 1)
        n_playing = await self.read(self.store.count_playing)
        return self.page(request, "live.html", title="games in play", playing=playing[:PAGE], n_playing=n_playing,
                         page=page, more=len(playing) > PAGE, live=True)

    async def live_events(self, request: Request) -> Response:
        try:
            self.hub.join()
        except Full:
            raise HTTPException(503, headers={"Retry-After": "30"}) from None
        return StreamingResponse(self.hub.stream(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})

    async def game(self, request: Request) -> Response:
        gid = request.path_params["game_id"]
        g = await self.read(self.store.game, gid) if GAME_ID_RE.fullmatch(gid) else None
        if g is None:
            raise HTTPException(404)
        steps: list[dict[str, Any]] = []
        if g.status == "finished" and g.record:
            cached = self.steps.get(g.id)
            if cached is None:  # a finished game never changes: replayed once, kept among the last few
                cached = await self.read(public_steps, g.record, g.players)
                self.steps[g.id] = cached
                while len(self.steps) > STEPS_CACHE:
                    self.steps.popitem(last=False)
            self.steps.move_to_end(g.id)
            steps = cached
        return self.page(request, "game.html", title=f"game {g.id}", g=g, steps=steps, rules=describe(g.record),
                         results=[g.result_for(p) for p in g.players] if g.status == "finished" else [])

    async def events(self, request: Request) -> Response:
        """The arena's events (``okgin arena event add``), the latest scheduled first: each
        one's accounts and status, and once it ran its standings and every ``verify`` check,
        so anyone can see the result was checked, and how."""
        status = choice_param(request, "status", "all", ("all", *EVENT_STATUSES))
        rows = await self.read(self.store.events, None if status == "all" else status, EVENTS_SHOWN)
        return self.page(request, "events.html", title="events", events=rows, shown=status)

    # -- admin ---------------------------------------------------------------------------------

    async def admin_account(self, request: Request) -> Account:
        """The admin account the request's Basic credentials name, else 401 (none given) or
        403 (any wrong part: unknown name, wrong key, not an admin, banned), said alike."""
        header = request.headers.get("authorization", "")
        if not header.lower().startswith("basic "):
            raise HTTPException(401, headers={"WWW-Authenticate": 'Basic realm="okgin arena admin", charset="UTF-8"'})
        try:
            name, _, key = base64.b64decode(header[6:].strip(), validate=True).decode("utf-8").partition(":")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            raise HTTPException(403) from None
        if self.checker is None or not NAME_RE.fullmatch(name) or not key:
            raise HTTPException(403)
        try:
            acct = await self.checker.check(name, key)
        except Busy:
            raise HTTPException(503, headers={"Retry-After": "5"}) from None
        if acct is None or not acct.admin or acct.banned or acct.revoked:
            raise HTTPException(403)
        return acct

    async def admin(self, request: Request) -> Response:
        acct = await self.admin_account(request)
        counts = {"accounts": await self.read(self.store.count_accounts),
                  "banned": await self.read(self.store.count_accounts, True),
                  "playing": await self.read(self.store.count_playing)}
        return self.admin_page(request, "admin.html", me=acct, counts=counts)

    async def admin_accounts(self, request: Request) -> Response:
        acct = await self.admin_account(request)
        page = int_param(request, "page", 1, 1, MAX_PAGE)
        rows = await self.read(lambda: self.store.accounts((page - 1) * ADMIN_PAGE, ADMIN_PAGE + 1))
        return self.admin_page(request, "admin_accounts.html", me=acct, rows=rows[:ADMIN_PAGE], page=page,
                               more=len(rows) > ADMIN_PAGE, token=await self.form_token(acct))

    async def admin_bans(self, request: Request) -> Response:
        acct = await self.admin_account(request)
        page = int_param(request, "page", 1, 1, MAX_PAGE)
        rows = await self.read(lambda: self.store.accounts((page - 1) * ADMIN_PAGE, ADMIN_PAGE + 1, banned=True))
        logs = {a.name: (await self.read(self.store.account_log, a.name))[-5:] for a in rows[:ADMIN_PAGE]}
        record = await self.read(self.store.ban_log, BAN_LOG_SHOWN)
        return self.admin_page(request, "admin_bans.html", me=acct, rows=rows[:ADMIN_PAGE], logs=logs, page=page,
                               more=len(rows) > ADMIN_PAGE, record=record, token=await self.form_token(acct))

    async def admin_submissions(self, request: Request) -> Response:
        acct = await self.admin_account(request)
        status = choice_param(request, "status", "all", ("all", *SUBMISSION_STATUSES))
        rows = await self.read(self.store.submissions, None if status == "all" else status, None, ADMIN_PAGE)
        return self.admin_page(request, "admin_submissions.html", me=acct, rows=rows, shown=status,
                               statuses=("all", *SUBMISSION_STATUSES))

    # -- admin actions: ban and unban -------------------------------------------------------------

    async def form_token(self, acct: Account) -> str:
        """The token every admin form carries: an HMAC, under this web's secret, of the admin's
        name and its stored key hash. Another site's page cannot read it (no CORS here), and it
        dies with the key (rotate, revoke) and with the web's restart."""
        stored = await self.read(self.store.key_hash, acct.name) or ""
        return hmac.new(self.secret, f"okgin-admin-form\0{acct.name.lower()}\0{stored}".encode(),
                        hashlib.sha256).hexdigest()

    async def admin_form(self, request: Request) -> tuple[Account, dict[str, str]]:
        """An admin action's checks, in this order: the admin's key (401/403, said alike), the
        request came from a page of this site (``Origin``, else ``Referer``, names the ``Host``
        asked for), a form of at most :data:`MAX_FORM_BYTES` (413), and its token (403 with
        the reason). Returns the admin and the form's fields (each given once)."""
        acct = await self.admin_account(request)
        host = request.headers.get("host", "").lower()
        origin = request.headers.get("origin")
        source = origin if origin is not None else request.headers.get("referer")
        if not host or source is None or source == "null" or urlsplit(source).netloc.lower() != host:
            raise Refused("Refused: this form was not sent from the admin pages of this arena "
                          "(its Origin or Referer names another site, or none). Open the admin page here and send it again.")
        if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/x-www-form-urlencoded":
            raise bad_request("an admin form is sent as application/x-www-form-urlencoded")
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > MAX_FORM_BYTES):
            raise HTTPException(413, f"an admin form is at most {MAX_FORM_BYTES} bytes")
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_FORM_BYTES:
                raise HTTPException(413, f"an admin form is at most {MAX_FORM_BYTES} bytes")
        try:
            parsed = parse_qs(body.decode("utf-8"), keep_blank_values=True, strict_parsing=bool(body), max_num_fields=8)
        except (UnicodeDecodeError, ValueError):
            raise bad_request("the form could not be read") from None
        if any(len(v) != 1 for v in parsed.values()):
            raise bad_request("each field of the form is given once")
        fields = {k: v[0] for k, v in parsed.items()}
        if not hmac.compare_digest(fields.get("token", "").encode(), (await self.form_token(acct)).encode()):
            raise Refused("Refused: this form's token is missing or stale (the arena restarted, or your key changed). "
                          "Reload the admin page and send it again.")
        return acct, fields

    def form_account(self, fields: dict[str, str], me: Account) -> str:
        name = fields.get("account", "").strip()
        if not NAME_RE.fullmatch(name):
            raise bad_request("account must be an account's name")
        if name.lower() == me.name.lower():
            raise bad_request("an admin cannot ban or unban itself here")
        return name

    async def admin_ban(self, request: Request) -> Response:
        """Ban an account from the web: :meth:`arena.store.Store.ban`, the same call as
        ``okgin arena account ban`` (the account's log keeps who, when and why), then the
        arena's ``on_ban`` (its session, if any, is told and closed). Back to the bans page."""
        me, fields = await self.admin_form(request)
        name = self.form_account(fields, me)
        reason = " ".join(fields.get("reason", "").split())
        if not reason or len(reason) > REASON_CHARS or not reason.isprintable():
            raise bad_request(f"reason must be 1 to {REASON_CHARS} printable characters")
        try:
            await self.read(self.store.ban, name, reason, me.name)
        except StoreError:
            raise bad_request(f"no account {name} here") from None
        if self.checker is not None:
            self.checker.forget(name)
        if self.on_ban is not None:
            self.on_ban(name, reason)
        return RedirectResponse("/admin/bans", 303, headers={"Cache-Control": "no-store"})

    async def admin_unban(self, request: Request) -> Response:
        """Lift a ban from the web: :meth:`arena.store.Store.unban`, as ``okgin arena account unban``."""
        me, fields = await self.admin_form(request)
        name = self.form_account(fields, me)
        try:
            await self.read(self.store.unban, name, me.name)
        except StoreError:
            raise bad_request(f"no account {name} here") from None
        if self.checker is not None:
            self.checker.forget(name)
        return RedirectResponse("/admin/bans", 303, headers={"Cache-Control": "no-store"})

    def admin_page(self, request: Request, name: str, **context: Any) -> Response:
        resp = self.page(request, name, title="admin", **context)
        resp.headers["Cache-Control"] = "no-store"
        return resp


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _game_for(g: GameRow, name: str) -> dict[str, Any]:
    """One row of a player's recent games: the result for them, the others, the rating change."""
    seat = [p.lower() for p in g.players].index(name.lower())
    before = g.before[seat] if seat < len(g.before) else None
    after = g.after[seat] if seat < len(g.after) else None
    change = None if before is None or after is None else round(after - before)
    return {"g": g, "result": result_words(g.result_for(g.players[seat])), "seat": seat,
            "opponents": [p for i, p in enumerate(g.players) if i != seat], "change": change}


def create_app(store: Store, checker: KeyChecker | None = None, **kw: Any) -> WebApp:
    """The web face over ``store`` (``kw``: :class:`WebApp`'s settings)."""
    return WebApp(store, checker, **kw)
