"""The arena's lobby (``okgin tui --arena``, protocol 1.6, protocol.md §19).

Who is online with their ratings (bots marked), the open seeks, the challenges to and
from you (accept or decline them), your own ratings and recent games; seek a game, or
challenge someone. When the arena says ``game_ready`` the app plays that game on the
ordinary table screen, at the shard the arena named, with the seat token it gave
(:meth:`clients.tui.app.OkginApp.play_arena_game`); after the game, back here.

The arena connection is a :class:`clients.sdk.arena.ArenaClient` in this screen's
worker, on the app's loop: it stays open (heartbeats included) while a game is played
on the table screen above it. The lobby is asked for again every
:data:`REFRESH_S` seconds and whenever the arena says something that changes it; the
lines are built by the plain functions below, so they are tested without a terminal.
"""

from __future__ import annotations

import asyncio
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Checkbox, Footer, Input, Label, OptionList, Select, Static
from textual.widgets.option_list import Option

from clients.sdk import ConnectionLost, RefereeError, SDKError
from clients.sdk import Timeout as SDKTimeout
from clients.sdk.arena import HELLO_TIMEOUT, ArenaClient, describe_refusal
from clients.sdk.messages import (
    ChallengeClosed,
    ChallengeOffer,
    Disconnected,
    ErrorMessage,
    GameOver,
    GameReady,
    LobbyState,
    Reconnected,
)

from .base import OkginScreen

#: Seconds between two lobby refreshes while nothing happens (the arena allows 20
#: requests in 10 s per account; this is one in 5).
REFRESH_S = 5.0
VARIANTS = (("Oklahoma Gin (2 players)", "oklahoma"), ("Gin in the Box (3 players)", "box"))


def kind_mark(kind: object) -> str:
    """How an account's kind is shown: bots are marked, people are not."""
    return " [bot]" if kind == "bot" else ""


def rating_text(r: dict[str, Any] | None) -> str:
    """1612±80, with a ? while provisional; "-" without a rating."""
    if not r:
        return "-"
    text = f"{r.get('rating', '?')}±{r.get('deviation', '?')}"
    return text + "?" if r.get("provisional") else text


def online_line(entry: dict[str, Any], variant: str) -> str:
    ratings = entry.get("ratings") or {}
    playing = " · playing" if entry.get("playing") else ""
    return f"{entry.get('account')}{kind_mark(entry.get('kind'))} {rating_text(ratings.get(variant))}{playing}"


def seek_line(s: dict[str, Any]) -> str:
    rated = "rated" if s.get("rated", True) else "casual"
    return f"{s.get('account')}{kind_mark(s.get('kind'))} {s.get('rating', '-')}: {s.get('variant')}, {s.get('clock')}, {rated}"


def challenge_line(c: dict[str, Any], me: str) -> str:
    """A challenge offered to me ("from bob") or sent by me ("to bob")."""
    sender = c.get("from") or {}
    rated = "rated" if c.get("rated", True) else "casual"
    what = f"{c.get('variant')}, {c.get('clock')}, {rated}"
    if sender.get("account") == me:
        return f"to {', '.join(str(a) for a in c.get('to') or [])}: {what}"
    who = f"{sender.get('account')}{kind_mark(sender.get('kind'))} {sender.get('rating', '-')}"
    return f"from {who}: {what} (a accepts, d declines)"


def recent_line(g: dict[str, Any]) -> str:
    change = g.get("rating_change")
    delta = "" if change is None else f" {change:+d}"
    return f"{g.get('result')} vs {', '.join(str(o) for o in g.get('opponents') or [])} ({g.get('variant')}){delta}"


def my_ratings(me: dict[str, Any] | None) -> str:
    if not me:
        return ""
    ratings = me.get("ratings") or {}
    parts = [f"{v} {rating_text(r)}" for v, r in sorted(ratings.items())]
    return "Your ratings: " + (" · ".join(parts) if parts else "none yet (your first games are provisional)")


def game_over_text(over: GameOver) -> str:
    """The arena's word on a finished game, one line."""
    text = f"Game {over.game}: {over.result}"
    if over.termination and over.termination != "normal":
        text += f" ({over.termination})"
    if over.scores:
        text += f", scores {' - '.join(str(s) for s in over.scores)}"
    r = over.rating
    if r:
        text += f"; rating {r.get('before')} → {r.get('after')}" + (" (provisional)" if r.get("provisional") else "")
    return text


class ArenaLobbyScreen(OkginScreen[None]):
    BINDINGS = [
        Binding("s", "seek", "Seek"),
        Binding("c", "challenge", "Challenge"),
        Binding("a", "accept", "Accept"),
        Binding("d", "decline", "Decline"),
        Binding("ctrl+r", "refresh", "Refresh"),
        Binding("escape", "app.quit", "Quit"),
    ]

    def __init__(self, endpoint: str, account: str, key: str, connect: bool = True) -> None:
        super().__init__()
        self.endpoint = endpoint
        self.account = account
        self._key = key
        self.connect_on_mount = connect  # off in snapshot tests: they open no socket
        self.client: ArenaClient | None = None
        self.lobby: LobbyState | None = None
        self.my_seek: str | None = None
        self.playing: str | None = None  # the arena game on the table screen now
        self.last_result: str | None = None

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="arena"):
            yield Static(f"okgin arena — {self.endpoint} — {self.account}", classes="dialog-title", id="arena-title")
            yield Static("", id="arena-me")
            with Horizontal(classes="row"):
                yield Label("Game")
                yield Select(VARIANTS, value="oklahoma", allow_blank=False, id="arena-variant", compact=True)
                yield Select([("standard", "standard")], value="standard", allow_blank=False, id="arena-clock", compact=True)
                yield Checkbox("rated", value=True, id="arena-rated", compact=True)
                yield Button("Seek (s)", id="seek", variant="primary", compact=True)
                yield Button("Cancel seek", id="cancel-seek", compact=True)
            with Horizontal(classes="row"):
                yield Label("Challenge")
                yield Input("", id="arena-to", placeholder="account (two, comma-separated, for the Box)", compact=True)
                yield Button("Challenge (c)", id="challenge", compact=True)
            with Horizontal(id="arena-lists"):
                with Vertical():
                    yield Label("Online")
                    yield OptionList(id="arena-online")
                    yield Label("Open seeks")
                    yield OptionList(id="arena-seeks")
                with Vertical():
                    yield Label("Challenges")
                    yield OptionList(id="arena-challenges")
                    yield Label("Your recent games")
                    yield OptionList(id="arena-recent")
            yield Static("", id="arena-status")
        yield Footer()

    def on_mount(self) -> None:
        for inp in self.query(Input):
            inp.cursor_blink = getattr(self.app, "cursor_blink", True)
        if self.connect_on_mount:
            self._status(f"Signing in to {self.endpoint} as {self.account}…")
            self._run()

    # ------------------------------------------------------------------ drawing
    def _status(self, text: str) -> None:
        self.query_one("#arena-status", Static).update(text)

    def _variant(self) -> str:
        return str(self.query_one("#arena-variant", Select).value)

    def show_lobby(self, lobby: LobbyState) -> None:
        """Fill the four lists and the ratings line from a ``lobby_state``."""
        self.lobby = lobby
        variant = self._variant()
        me = lobby.me or {}
        last = f"\nLast game: {self.last_result}" if self.last_result else ""
        self.query_one("#arena-me", Static).update(my_ratings(me) + last)
        lists = (
            ("#arena-online", [(online_line(e, variant), str(e.get("account"))) for e in lobby.online]),
            ("#arena-seeks", [(seek_line(s), str(s.get("seek"))) for s in lobby.seeks]),
            ("#arena-challenges", [(challenge_line(c, self.account), str(c.get("challenge"))) for c in lobby.challenges]),
            ("#arena-recent", [(recent_line(g), str(g.get("game"))) for g in me.get("recent") or []]),
        )
        for ident, rows in lists:
            ol = self.query_one(ident, OptionList)
            highlighted = ol.highlighted
            ol.clear_options()
            seen: set[str] = set()
            for text, key in rows:
                if key in seen:  # an OptionList refuses two options with one id
                    continue
                seen.add(key)
                ol.add_option(Option(text, id=key))
            if highlighted is not None and rows:
                ol.highlighted = min(highlighted, ol.option_count - 1)

    def set_clocks(self, clocks: dict[str, Any]) -> None:
        if clocks:
            names = sorted(clocks)
            sel = self.query_one("#arena-clock", Select)
            sel.set_options([(n, n) for n in names])
            sel.value = "standard" if "standard" in names else names[0]

    # ------------------------------------------------------------------ the arena
    @work(exclusive=True, group="arena", exit_on_error=False)
    async def _run(self) -> None:
        """Sign in, then read the arena's messages until the app quits; sign in again
        when the connection is lost (an arena keeps no session to resume, §19)."""
        while await self._session():
            if self.client is not None:
                await self.client.close()
            await asyncio.sleep(1.0)

    async def _session(self) -> bool:
        """One arena session; True when it was lost and a new one should start."""
        delay = 1.0
        while True:
            client = self.client = ArenaClient(self.endpoint, self.account, self._key, reply_timeout=10.0)
            try:
                welcome = await client.connect(HELLO_TIMEOUT)
                break
            except RefereeError as e:
                self._status(f"Cannot sign in: {describe_refusal(e)}")
                return False
            except (SDKTimeout, TimeoutError):
                # Not running yet, or busy checking keys (a slow hash, on purpose): try again.
                await client.close()
                self._status(f"No arena answers at {self.endpoint} yet. Is it running? Trying again (q quits).")
                await asyncio.sleep(delay)
                delay = min(10.0, delay * 2)
        arena = welcome.arena or {}
        me = welcome.account or {}
        self.query_one("#arena-title", Static).update(
            f"okgin arena {arena.get('name', '')} — {self.endpoint} — {me.get('name', self.account)}{kind_mark(me.get('kind'))}")
        self.set_clocks(arena.get("clocks") or {})
        self._status("Signed in. Seek a game (s), or pick someone online and challenge them (c).")
        await self._refresh()
        try:
            while True:
                msg = await client.next(REFRESH_S)
                if msg is None:
                    if self.playing is None:
                        await self._refresh()
                    continue
                await self._on_arena(msg)
        except ConnectionLost as e:
            self._status(f"Lost the arena ({e}): signing in again…")
            return True

    async def _on_arena(self, msg: object) -> None:
        if isinstance(msg, GameReady):
            self.my_seek = None
            self.playing = msg.game
            opponents = ", ".join(str(p.get("account")) for p in msg.players if p.get("account") != self.account)
            self._status(f"Game {msg.game} against {opponents}: to the table…")
            assert self.client is not None
            self.okgin_app.play_arena_game(msg, self.account, self.client.client.curve)
        elif isinstance(msg, GameOver):
            self.last_result = game_over_text(msg)
            self.app.notify(self.last_result, timeout=8)
            await self._refresh()
        elif isinstance(msg, ChallengeOffer):
            self.app.notify(f"{msg.sender.get('account')} challenges you: {msg.variant}, {msg.clock}"
                            f"{'' if msg.rated else ', casual'} (a accepts, d declines)", timeout=10)
            self.app.bell()
            await self._refresh()
        elif isinstance(msg, ChallengeClosed):
            self._status(f"Challenge {msg.challenge} closed: {msg.reason}" + (f" by {msg.by}" if msg.by else ""))
            await self._refresh()
        elif isinstance(msg, ErrorMessage):
            self._status(f"The arena says: {describe_refusal(msg.exception())}")
        elif isinstance(msg, Disconnected):
            self._status(f"Connection to the arena lost ({msg.reason}): signing in again…")
        elif isinstance(msg, Reconnected):
            self._status("Back in the arena.")
            await self._refresh()

    async def _refresh(self) -> None:
        if self.client is None:
            return
        try:
            self.show_lobby(await self.client.lobby())
        except RefereeError as e:
            if e.name != "rate_limited":
                self._status(describe_refusal(e))
        except (SDKError, TimeoutError) as e:
            self._status(f"The lobby did not come: {e}")

    def back_from_game(self) -> None:
        """The table screen closed: the lobby is current again."""
        self.playing = None
        if self.client is not None:
            self._refresh_soon()

    @work(group="arena-requests", exit_on_error=False)
    async def _refresh_soon(self) -> None:
        await self._refresh()

    # ------------------------------------------------------------------ requests
    @work(group="arena-requests", exit_on_error=False)
    async def _request(self, what: str, *args: Any) -> None:
        """One request to the arena; its refusal is shown in one line."""
        if self.client is None or self.client.welcome is None:
            self._status("Not signed in to the arena.")
            return
        try:
            if what == "seek":
                variant, clock, rated = args
                self.my_seek = await self.client.seek(variant, clock, rated)
                self._status(f"Seeking {variant} ({clock}, {'rated' if rated else 'casual'}): waiting for an opponent…")
            elif what == "cancel":
                if self.my_seek is None:
                    self._status("You have no open seek.")
                    return
                await self.client.cancel_seek(self.my_seek)
                self.my_seek = None
                self._status("Seek cancelled.")
            elif what == "challenge":
                to, variant, clock, rated = args
                await self.client.challenge(to, variant, clock, rated)
                self._status(f"Challenged {', '.join(to)}: waiting for an answer…")
            elif what == "accept":
                await self.client.accept(args[0])
                self._status("Accepted: the game starts when everyone has.")
            elif what == "decline":
                await self.client.decline(args[0])
                self._status("Declined.")
        except RefereeError as e:
            self._status(describe_refusal(e))
            return
        except (SDKError, TimeoutError) as e:
            self._status(str(e))
            return
        await self._refresh()

    def _choice(self) -> tuple[str, str, bool]:
        clock = self.query_one("#arena-clock", Select).value
        return self._variant(), str(clock), self.query_one("#arena-rated", Checkbox).value

    def action_seek(self) -> None:
        self._request("seek", *self._choice())

    def action_challenge(self) -> None:
        to = [a.strip() for a in self.query_one("#arena-to", Input).value.replace(",", " ").split() if a.strip()]
        if not to:
            self.query_one("#arena-to", Input).focus()
            self._status("Type the account to challenge (or pick someone online), then c.")
            return
        variant, clock, rated = self._choice()
        self._request("challenge", to, variant, clock, rated)

    def _picked_challenge(self) -> str | None:
        ol = self.query_one("#arena-challenges", OptionList)
        if ol.highlighted is None and ol.option_count:
            ol.highlighted = 0
        if ol.highlighted is None:
            self._status("No challenge to answer.")
            return None
        return ol.get_option_at_index(ol.highlighted).id

    def action_accept(self) -> None:
        if (cid := self._picked_challenge()) is not None:
            self._request("accept", cid)

    def action_decline(self) -> None:
        if (cid := self._picked_challenge()) is not None:
            self._request("decline", cid)

    def action_refresh(self) -> None:
        self._refresh_soon()

    @on(OptionList.OptionSelected, "#arena-online")
    def _pick_player(self, event: OptionList.OptionSelected) -> None:
        if event.option.id and event.option.id != self.account:
            self.query_one("#arena-to", Input).value = event.option.id

    @on(Select.Changed, "#arena-variant")
    def _variant_changed(self, _event: Select.Changed) -> None:
        if self.lobby is not None:
            self.show_lobby(self.lobby)  # the ratings shown are the variant's

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "seek":
            self.action_seek()
        elif event.button.id == "cancel-seek":
            self._request("cancel")
        elif event.button.id == "challenge":
            self.action_challenge()

    async def on_unmount(self) -> None:
        if self.client is not None:
            await self.client.close()
