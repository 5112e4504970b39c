"""The TUI's network backend: a protocol client (protocol.md) living in the app's worker.

Built on the Python SDK's :class:`clients.sdk.AsyncClient` (hello and token, heartbeats,
resume after silence, typed messages). The client and its ZeroMQ socket are created
inside the app's async worker, on the app's own event loop, never in a thread: every
message is reduced to a new :class:`TableState` on the loop that draws it, so there are
no locks and no torn states. Moves are sent from key handlers on that same loop.

Failures, as the player sees them:
- the referee does not answer ``hello`` (not running, wrong address): the screen says
  so and the client retries with a growing delay until the player quits;
- the connection goes silent (the SDK notices after ``liveness`` heartbeats) or drops and
  comes back underneath (ZeroMQ reconnects by itself and the referee answers
  ``hello_first``: the SDK takes that as its cue too): either way the SDK resumes with
  the token and says so (``Disconnected``, ``Reconnected``): "connection lost" banner,
  then the referee's snapshot and the pending prompt, and the game goes on;
- the referee refuses a request: its sentence is shown where the player looks.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from clients.sdk import AsyncClient, ConnectionLost, Disconnected, Reconnected, RefereeError, SDKError, SessionTaken
from clients.sdk import Timeout as SDKTimeout
from clients.sdk import messages as sdk
from clients.sdk.curve import CurveKeys
from okgin import Action, env
from okgin.protocol.settings import PEOPLE_CLOCK, PEOPLE_POLICIES

from .backend import Backend
from .messages import ConnectionChanged, Notice, RefereeMessage
from .model import CONNECTED, CONNECTING, ENDED, LOST, OFFLINE
from .saved_sessions import SessionStore
from .seating import Seating

if TYPE_CHECKING:
    from .app import OkginApp

#: What the player reads when another terminal resumed this seat (the referee's
#: ``session_taken``, protocol.md §10.1): in words, not as the error's name and code.
TAKEN_SENTENCE = ("This seat was taken over by another terminal (the same name at the same table, or "
                  "okgin tui --resume). This window no longer plays: carry on in the other one, and press q to close this one.")
#: The referee could not be reached again in time, or it no longer holds the seat.
LOST_SENTENCE = ("The connection to the referee is lost for good: it no longer answers, or no longer holds your seat. "
                 "Press q to close this window.")

HELLO_TIMEOUT_S = 5.0
MAX_RETRY_S = 10.0


def sentence(e: BaseException) -> str:
    """What to show the player: the referee's own sentence when it refused something."""
    return e.message if isinstance(e, RefereeError) else str(e)


async def list_tables(endpoint: str, name: str = "okgin-tui") -> list[dict[str, Any]]:
    """The referee's tables (for the lobby), over a short spectator connection."""
    client = AsyncClient(endpoint, name[:40] or "okgin-tui", "spectator", reconnect=False, reply_timeout=HELLO_TIMEOUT_S)
    try:
        await client.connect(HELLO_TIMEOUT_S)
        return await client.list_tables()
    finally:
        await client.close()


def people_settings(client: AsyncClient) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The clock and policies of a table a person creates from the TUI (issue 28 item 3):
    a bank of 10 minutes and 5 s a move (no limit per move) and a clock that stops while
    a player's connection is gone (``okgin.protocol.settings.PEOPLE_CLOCK``,
    ``PEOPLE_POLICIES``; docs/rules.md §7.1). Only a referee of protocol 1.6 or later knows
    them; an older one gives its own defaults, as before."""
    welcome = client.welcome
    if welcome is None or welcome.minor < 6:
        return None, None
    c = PEOPLE_CLOCK
    return ({"move_ms": c.move_ms, "bank_ms": c.bank_ms, "increment_ms": c.increment_ms},
            {"away_clock": PEOPLE_POLICIES.away_clock})


class NetworkBackend(Backend):
    """Plays (or watches) at one table of a referee over the network.

    It reports to the app only by posting messages (:class:`RefereeMessage` for what the
    referee said, :class:`ConnectionChanged`, :class:`Notice`): it never writes the
    app's state nor calls its methods, so the app alone decides what is shown.

    A player's session token is saved (:class:`SessionStore`, per endpoint, name and
    table) once the referee welcomes it; the same command run again after a crash finds
    it and resumes the seat instead of asking for a new one.
    """

    description = "referee over the network"

    def __init__(self, endpoint: str, name: str, seating: Seating, token: str | None = None, retry: bool = True,
                 store: SessionStore | None = None, curve: CurveKeys | None = None) -> None:
        self.endpoint = endpoint
        self.curve = curve  # an arena's CURVE shard (game_ready.server_key); None: OKGIN_CURVE_* or plain TCP
        self.name = name[:40] or "player"
        self.seating = seating
        self.token = token  # the session's identity once welcomed (or a reserved seat's)
        self.retry = retry
        self.client: AsyncClient | None = None
        self.table: str | None = seating.table
        self._closing = False
        self._advice_seq: int | None = None  # the open advise_prompt's seq (for advise)
        # Saved sessions: players seated by join or quick match (a reserved seat's token
        # is its owner's to keep; a spectator holds no seat).
        self.store = store if store is not None else (SessionStore() if seating.mode in ("join", "quick") else None)
        self._from_store = False
        if self.token is None and self.store is not None:
            saved = self.store.get(endpoint, self.name, seating.table)
            if saved is not None:
                self.token, self._from_store = saved.token, True

    # ------------------------------------------------------------------ worker
    def _post(self, app: OkginApp, msg: object) -> None:
        app.post_message(msg)  # type: ignore[arg-type]

    def _connection(self, app: OkginApp, status: str, detail: str = "") -> None:
        self._post(app, ConnectionChanged(status, detail))

    async def run(self, app: OkginApp) -> None:
        """Connect (retrying while nobody answers), sit down (or resume a saved seat),
        then forward every message to the app until the app closes the backend."""
        delay = 1.0
        while not self._closing:
            self._connection(app, CONNECTING, f"Connecting to {self.endpoint}…")
            self.client = AsyncClient(
                self.endpoint, self.name, "spectator" if self.seating.mode == "watch" else "player",
                token=self.token, reply_timeout=10.0, curve=self.curve,
            )
            # A person plays here: as the sitter of Gin in the Box, its captain's prompt may
            # wait for its advice (protocol 1.6; an older referee ignores the field).
            self.client.session.hello_fields["advice_wait"] = True
            try:
                welcome = await self.client.connect(HELLO_TIMEOUT_S)
                break
            except (SDKTimeout, TimeoutError):
                await self.client.close(bye=False)
                if not self.retry:
                    self._connection(app, CONNECTING, f"No referee answers at {self.endpoint}. Is it running?")
                    return
                wait = int(min(delay, MAX_RETRY_S))
                for left in range(wait, 0, -1):  # the banner counts down, one second at a time
                    self._connection(
                        app, CONNECTING, f"No referee answers at {self.endpoint}. Is it running? Retrying in {left} s (q quits).")
                    await asyncio.sleep(1.0)
                    if self._closing:
                        return
                delay *= 2
            except RefereeError as e:
                await self.client.close(bye=False)
                if e.name == "bad_token" and self._from_store:
                    self._forget_saved(app)
                    continue  # join afresh, as if no seat had been saved
                self._refused(app, e)
                return
        else:
            return
        self.token = welcome.token
        self._connection(app, CONNECTED, "")
        if welcome.resumed:
            # The referee seats us again by itself: a snapshot and the open prompt follow.
            self._post(app, Notice(f"Welcome back: your seat{' at ' + self.table if self.table else ''} is yours again."))
        else:
            try:
                await self._sit(app)
            except RefereeError as e:
                self._refused(app, e)
                return
        self._save()
        try:
            async for msg in self.client:
                await self._on_message(app, msg)
        except SessionTaken:
            self._connection(app, ENDED, TAKEN_SENTENCE)
        except ConnectionLost:
            self._connection(app, ENDED, LOST_SENTENCE)
        except SDKError as e:
            if not self._closing:
                self._connection(app, ENDED, f"Disconnected from the referee ({e}). Press q to close this window.")

    def _save(self) -> None:
        if self.store is not None and self.token:
            try:
                self.store.save(self.endpoint, self.name, self.seating.table, self.token)
            except OSError:
                pass  # no state directory: the seat is simply not resumable after a crash

    def _forget_saved(self, app: OkginApp) -> None:
        """The saved token is stale (the referee forgot the session): drop it, say so."""
        assert self.store is not None
        self.store.remove(self.endpoint, self.name, self.seating.table, self.token)
        where = f"table {self.seating.table}" if self.seating.table else "the quick-match queue"
        self._post(app, Notice(f"Your saved seat at {where} is gone (the referee no longer holds it, bad_token): "
                               "removed it and joining afresh.", "warning"))
        self.token, self._from_store = None, False

    def forget_session(self) -> None:
        """The game is over (or the player left it for good): no seat to come back to."""
        if self.store is not None and self.token:
            try:
                self.store.remove(self.endpoint, self.name, self.seating.table, self.token)
            except OSError:
                pass

    def _refused(self, app: OkginApp, e: RefereeError) -> None:
        self._connection(app, OFFLINE, f"The referee refused: {e.message}")
        # No table: a refusal to seat us is about the table we asked for, whatever the state holds.
        refusal = sdk.ErrorMessage("error", code=e.code, name=e.name, message=e.message, request=e.request, table=None)
        self._post(app, RefereeMessage(refusal, time.monotonic()))

    async def _sit(self, app: OkginApp) -> None:
        """Sit down as the seating says; the reply goes to the app like the rest."""
        client = self.client
        assert client is not None
        s = self.seating
        if s.mode == "token":
            return  # hello with a reserved seat's token seats us at once
        if s.mode == "watch":
            if not self.table:
                raise RefereeError(0, "bad_message", "name the table to watch (--table)")
            self._feed(app, await client.watch(self.table, s.full, s.broadcast_token))
            return
        if s.mode == "create":
            # Admin is closed on a referee without a key (protocol 1.4): the key given, or $OKGIN_ADMIN_KEY.
            key = s.admin_key or env.get("OKGIN_ADMIN_KEY")
            admin = AsyncClient(self.endpoint, self.name, "admin", admin_key=key, reconnect=False)
            try:
                await admin.connect(HELLO_TIMEOUT_S)
                people = people_settings(admin)
                made = await admin.create_table(table=s.table, variant=s.variant, rules=s.rules or None,
                                                clock=s.clock or people[0], policies=people[1])
            finally:
                await admin.close()
            self.table = made.table
        if s.mode == "quick":
            self._feed(app, await client.queue(s.variant, s.rules or None))
        else:
            assert self.table is not None
            create = s.mode == "join"
            # mode create: the table was just made above with its rules, so sit whatever they are;
            # mode join: ask for the chosen rules, so a squatted name is refused (rules_mismatch
            # lists the table's rules and _refused shows them) rather than silently seating us.
            clock, policies = people_settings(client) if create else (None, None)
            reply = await client.join(self.table, s.seat, s.variant if create else None, (s.rules or None) if create else None,
                                      any_rules=not create, clock=clock, policies=policies)
            self._feed(app, reply)

    async def _on_message(self, app: OkginApp, msg: Any) -> None:
        if isinstance(msg, Disconnected):
            self._connection(app, LOST, f"Connection lost ({msg.reason}): reconnecting with your token…")
            return
        if isinstance(msg, Reconnected):
            self._connection(app, CONNECTED, "")
            return
        if msg.raw:  # from the referee (a malformed message, which the SDK reports with no raw map, is dropped)
            if isinstance(msg, sdk.Seated | sdk.GameStart | sdk.Snapshot) and msg.table:
                self.table = msg.table
            if isinstance(msg, sdk.AdvisePrompt):
                self._advice_seq = msg.seq
            elif isinstance(msg, sdk.HandEnd | sdk.GameEnd | sdk.AdviceReceived):
                self._advice_seq = None
            self._feed(app, msg)

    def _feed(self, app: OkginApp, msg: sdk.Message) -> None:
        self._post(app, RefereeMessage(msg, time.monotonic()))

    # ------------------------------------------------------------------ requests
    def _client(self) -> AsyncClient:
        if self.client is None or not self.client.connected:
            raise RuntimeError("not connected to the referee right now: reconnecting…")
        return self.client

    async def act(self, action: Action, seq: int | None) -> None:
        if self.table is None or seq is None:
            raise RuntimeError("no move is asked for right now")
        await self._client().act(self.table, seq, action)

    async def advise(self, action: Action | None, text: str) -> None:
        seq = self._advice_seq
        if seq is None or self.table is None:
            raise RuntimeError("your captain is not to act now: advice waits for its turn")
        try:
            await self._client().advise(self.table, seq, action, text or None)
        except RefereeError as e:
            raise RuntimeError(e.message) from None

    async def resign(self) -> None:
        if self.table is None:
            raise RuntimeError("no game to resign")
        try:
            await self._client().resign(self.table)
        except RefereeError as e:
            raise RuntimeError(e.message) from None

    async def rematch(self) -> None:
        if self.table is None:
            raise RuntimeError("no table to ask for a rematch")
        try:
            await self._client().rematch(self.table)
        except RefereeError as e:
            raise RuntimeError(e.message) from None

    async def close(self, bye: bool = True) -> None:
        self._closing = True
        if self.client is not None:
            await self.client.close(bye=bye)
