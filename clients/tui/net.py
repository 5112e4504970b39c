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
import math
import os
import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from clients.sdk import AsyncClient, ConnectionLost, Disconnected, Reconnected, RefereeError, SDKError
from clients.sdk import Timeout as SDKTimeout
from okgin import Action

from .backend import Backend
from .model import CONNECTED, CONNECTING, LOST, OFFLINE
from .reducer import reduce

if TYPE_CHECKING:
    from .app import OkginApp

HELLO_TIMEOUT_S = 5.0
MAX_RETRY_S = 10.0


@dataclass(frozen=True)
class Seating:
    """What to do once connected: how this client gets to a table.

    ``mode``: ``quick`` (quick-match queue), ``join`` (a named table, created on first
    join), ``create`` (an admin creates ``table`` with a clock and rules, then we join
    it), ``watch`` (spectate), ``token`` (a reserved seat: the token in ``hello`` seats
    us at once; used by ``okgin play``).
    """

    mode: str = "quick"
    variant: str = "oklahoma"
    rules: dict[str, Any] = field(default_factory=dict)
    table: str | None = None
    seat: int | None = None
    clock: dict[str, int] | None = None
    admin_key: str | None = None
    full: bool = False
    broadcast_token: str | None = None  # with ``full``: the table's broadcast token (1.4)


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


class NetworkBackend(Backend):
    """Plays (or watches) at one table of a referee over the network."""

    description = "referee over the network"

    def __init__(self, endpoint: str, name: str, seating: Seating, token: str | None = None, retry: bool = True) -> None:
        self.endpoint = endpoint
        self.name = name[:40] or "player"
        self.seating = seating
        self.token = token  # the session's identity once welcomed (or a reserved seat's)
        self.retry = retry
        self.client: AsyncClient | None = None
        self.table: str | None = seating.table
        self._closing = False
        self.app: OkginApp | None = None

    # ------------------------------------------------------------------ worker
    async def run(self, app: OkginApp) -> None:
        """Connect (retrying while nobody answers), sit down, then feed every message
        to the app until the app closes the backend."""
        self.app = app
        delay = 0.5
        while not self._closing:
            app.set_connection(CONNECTING, f"Connecting to {self.endpoint}…")
            self.client = AsyncClient(
                self.endpoint, self.name, "spectator" if self.seating.mode == "watch" else "player",
                token=self.token, reply_timeout=10.0,
            )
            try:
                welcome = await self.client.connect(HELLO_TIMEOUT_S)
                break
            except (SDKTimeout, TimeoutError):
                await self.client.close(bye=False)
                wait = min(delay, MAX_RETRY_S)
                if not self.retry:
                    app.set_connection(CONNECTING, f"No referee answers at {self.endpoint}. Is it running?")
                    return
                # Count the wait down on screen, a second at a time.
                left = wait
                while left > 0 and not self._closing:
                    app.set_connection(
                        CONNECTING, f"No referee answers at {self.endpoint}. Is it running? Retrying in {math.ceil(left):.0f} s (q quits).")
                    step = min(1.0, left)
                    await asyncio.sleep(step)
                    left -= step
                delay *= 2
            except RefereeError as e:
                await self.client.close(bye=False)
                self._refused(app, e)
                return
        else:
            return
        self.token = welcome.token
        app.set_connection(CONNECTED, "")
        app.state = replace(app.state, endpoint=self.endpoint)
        try:
            await self._sit(app)
        except RefereeError as e:
            self._refused(app, e)
            return
        try:
            async for msg in self.client:
                await self._on_message(app, msg)
        except ConnectionLost as e:
            app.set_connection(OFFLINE, f"The connection is lost for good: {e}")
        except SDKError as e:
            if not self._closing:
                app.set_connection(OFFLINE, f"Disconnected: {e}")

    def _refused(self, app: OkginApp, e: RefereeError) -> None:
        app.set_connection(OFFLINE, f"The referee refused: {e.message}")
        app.state = replace(app.state, error=e.message)

    async def _sit(self, app: OkginApp) -> None:
        """Sit down as the seating says; the reply goes through the reducer like the rest."""
        client = self.client
        assert client is not None
        s = self.seating
        if s.mode == "token":
            return  # hello with a reserved seat's token seats us at once
        if s.mode == "watch":
            if not self.table:
                raise RefereeError(0, "bad_message", "name the table to watch (--table)")
            self._feed(app, (await client.watch(self.table, s.full, s.broadcast_token)).raw)
            return
        if s.mode == "create":
            # Admin is closed on a referee without a key (protocol 1.4): the key given, or $OKGIN_ADMIN_KEY.
            key = s.admin_key or os.environ.get("OKGIN_ADMIN_KEY") or None
            admin = AsyncClient(self.endpoint, self.name, "admin", admin_key=key, reconnect=False)
            try:
                await admin.connect(HELLO_TIMEOUT_S)
                made = await admin.create_table(table=s.table, variant=s.variant, rules=s.rules or None, clock=s.clock)
            finally:
                await admin.close()
            self.table = made.table
        if s.mode == "quick":
            self._feed(app, (await client.queue(s.variant, s.rules or None)).raw)
        else:
            assert self.table is not None
            create = s.mode == "join"
            # mode create: the table was just made above with its rules, so sit whatever they are;
            # mode join: ask for the chosen rules, so a squatted name is refused (rules_mismatch
            # lists the table's rules and _refused shows them) rather than silently seating us.
            reply = await client.join(self.table, s.seat, s.variant if create else None, (s.rules or None) if create else None,
                                      any_rules=not create)
            self._feed(app, reply.raw)

    async def _on_message(self, app: OkginApp, msg: Any) -> None:
        if isinstance(msg, Disconnected):
            app.set_connection(LOST, f"Connection lost ({msg.reason}): reconnecting with your token…")
            return
        if isinstance(msg, Reconnected):
            app.set_connection(CONNECTED, "")
            return
        if msg.raw:
            t = msg.raw.get("type")
            if t in ("seated", "game_start", "snapshot") and msg.raw.get("table"):
                self.table = msg.raw["table"]
            self._feed(app, msg.raw)

    def _feed(self, app: OkginApp, raw: dict[str, Any]) -> None:
        state, effects = reduce(app.state, raw, time.monotonic())
        app.state = state
        for m in effects:
            app.post_message(m)

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
        seq = self.app.state.extra.get("advice_seq") if self.app is not None else None
        if seq is None or self.table is None:
            raise RuntimeError("your captain is not to act now: advice waits for its turn")
        try:
            await self._client().advise(self.table, seq, action, text or None)
        except RefereeError as e:
            raise RuntimeError(e.message) from None

    async def rematch(self) -> None:
        if self.table is None:
            raise RuntimeError("no table to ask for a rematch")
        try:
            await self._client().rematch(self.table)
        except RefereeError as e:
            raise RuntimeError(e.message) from None

    async def close(self) -> None:
        self._closing = True
        if self.client is not None:
            await self.client.close()
