"""The arena client (protocol 1.6, protocol.md §19): an account, its key, seeks and
challenges, and each game it is given played at a referee shard like any reserved seat.

Why a client of its own, over :class:`~clients.sdk.aio.AsyncClient`: the arena speaks
the referee's envelope, heartbeats and errors, so its connection *is* an AsyncClient
(hello with ``account`` and ``key``); what the arena adds is a handful of requests
(``seek``, ``challenge``, ``accept``, ``decline``, ``cancel``, ``lobby``,
``leaderboard``) and two things it says unasked: ``game_ready`` (where to play, with
which seat token) and ``game_over`` (the result and the rating). A game itself is
played on a **new connection** to the shard named in ``game_ready``, with its token,
by the SDK's own bot driver (:func:`clients.sdk.runner.drive`): an arena game is a
reserved seat at a referee, nothing more. The arena connection stays open meanwhile
(its heartbeats run on the event loop while the game runs in a worker thread).

Clients never import the arena's server code: this module speaks the protocol only.

A bot's life, in short (``okgin bot NAME --arena ENDPOINT --account A --key-file F``)::

    arena = ArenaClient("tcp://127.0.0.1:7200", "mybot", read_key(Path("mybot.key")))
    await arena.connect()
    games = await arena.play_games(lambda: get_bot("simple"), games=10, variant="oklahoma")

Keys are secrets: read from a file of mode 0600 (:func:`read_key`) or from
``OKGIN_ARENA_KEY``, never from a command line (``/proc/PID/cmdline`` is readable by
every local user). The key and the seat tokens never appear in a ``repr`` or a message
this module prints.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import zmq
import zmq.asyncio

from okgin import env

from ..bot import Bot
from . import requests as rq
from .aio import AsyncClient
from .client import Client
from .curve import CurveKeys
from .errors import RefereeError, SDKError
from .messages import (
    Challenged,
    ChallengeOffer,
    ErrorMessage,
    GameEnd,
    GameOver,
    GameReady,
    Leaderboard,
    LobbyState,
    Message,
    Sought,
    Welcome,
)
from .runner import BotDriver, ErrorHook, drive

__all__ = [
    "BUSY_PATIENCE", "ENV_KEY", "GAME_OVER_WAIT", "HELLO_TIMEOUT", "ArenaClient", "ArenaGame", "KeyFileError",
    "arena_key", "describe_refusal", "private_key_file", "read_key", "shard_curve",
]

ENV_KEY = "OKGIN_ARENA_KEY"
#: How long to wait for the arena's welcome: it checks a key with a slow hash (scrypt) off
#: its loop, and a busy arena queues the checks, so allow more than a referee's hello.
HELLO_TIMEOUT = 30.0
#: How long :meth:`ArenaClient.seek_again` retries ``busy`` after a game.
BUSY_PATIENCE = 10.0
#: How long, after its game ended at the shard, to wait for the arena's ``game_over``
#: (the arena hears of the end from the shard, a moment after the players).
GAME_OVER_WAIT = 30.0


class KeyFileError(SDKError):
    """The key file is missing, empty, or readable by others."""


def read_key(path: Path) -> str:
    """The API key in the first line of ``path``, a file only its owner may read.

    A key file readable by its group or others is refused (as ssh refuses such a
    private key): the key is the account."""
    try:
        st = path.stat()
    except OSError as e:
        raise KeyFileError(f"cannot read the key file {path}: {e.strerror}") from None
    if st.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise KeyFileError(f"the key file {path} is readable by others (mode {stat.S_IMODE(st.st_mode):o}): chmod 600 {path}")
    try:
        lines = path.read_text(encoding="utf-8").strip().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise KeyFileError(f"cannot read the key file {path}: {getattr(e, 'strerror', None) or e}") from None
    key = lines[0].strip() if lines else ""
    if not key:
        raise KeyFileError(f"the key file {path} is empty")
    return key


def arena_key(key_file: Path | None) -> str:
    """The key from ``key_file`` if given, else ``OKGIN_ARENA_KEY``; :class:`KeyFileError`
    with a sentence saying how to give one when neither is there."""
    if key_file is not None:
        return read_key(key_file)
    key = env.get(ENV_KEY)
    if key is None:
        raise KeyFileError(f"no arena key: give --key-file FILE (mode 0600) or set {ENV_KEY}")
    return key.strip()


#: One line per refusal a person meets when joining an arena (bot or lobby).
_REFUSALS = {
    "auth_failed": "authentication failed: unknown account or wrong key (revoked or rotated?)",
    "banned": "this account is banned",
    "cooldown": "this account is in a cooldown (it did not show up for a game)",
    "busy": "this account is already in a game",
    "limit_reached": "too many open seeks for this account",
    "not_an_arena": "this endpoint is a referee, not an arena (use --connect for a referee)",
    "session_taken": "another connection logged in with this account",
    "no_such_account": "no such account online",
}


def describe_refusal(e: RefereeError) -> str:
    """An arena's refusal as one line for a person: what it means, then the arena's own words."""
    text = _REFUSALS.get(e.name)
    if text is None:
        return f"the arena refused: {e.name} ({e.code}): {e.message}"
    if e.name == "cooldown" and e.retry_ms is not None:
        text += f"; try again in {max(1, round(e.retry_ms / 1000))} s"
    return f"{text} [{e.name}: {e.message}]" if e.message else f"{text} [{e.name}]"


def shard_curve(ready: GameReady, own: CurveKeys | None) -> CurveKeys | None:
    """CURVE keys for the connection to ``ready``'s shard: its public key, with this
    client's own key pair if it has one (else a fresh pair); None for a plain shard."""
    if not ready.server_key:
        return None
    if own is not None:
        return CurveKeys(ready.server_key.encode("ascii"), own.public, own.secret)
    public, secret = zmq.curve_keypair()
    return CurveKeys(ready.server_key.encode("ascii"), public, secret)


@dataclass(frozen=True)
class ArenaGame:
    """One arena game of this client: where it was (``ready``), how it ended at the table
    (``end``: None when the game never started, e.g. voided by a no-show) and what the
    arena said of it (``over``: None if it said nothing within :data:`GAME_OVER_WAIT`)."""

    ready: GameReady
    end: GameEnd | None
    over: GameOver | None


class ArenaClient:
    """An asyncio client of an okgin arena. See the module docstring.

    An arena holds no session after its connection goes (protocol.md §19): a session it
    lost cannot be resumed with its token, so by default (``reconnect`` False) a silent or
    forgotten connection ends in :class:`~clients.sdk.errors.ConnectionLost`, and the
    program signs in again with a new client (the lobby does).

    ``role`` ``spectator`` may connect without an account (``account``/``key`` None): it
    may ask for the ``lobby`` and the ``leaderboard`` only.

    >>> a = ArenaClient("tcp://127.0.0.1:7200", "ann", "okga_secret")   # nothing sent before connect()
    >>> a.account, "okga_secret" in repr(a)
    ('ann', False)
    """

    def __init__(
        self,
        endpoint: str,
        account: str | None,
        key: str | None,
        *,
        role: str = "player",
        context: zmq.asyncio.Context | zmq.Context | None = None,
        curve: CurveKeys | None = None,
        reply_timeout: float = 30.0,
        reconnect: bool = False,
    ) -> None:
        self.endpoint = endpoint
        self.account = account
        self.client = AsyncClient(
            endpoint, name=account or "spectator", role=role, account=account, key=key, context=context, curve=curve,
            reply_timeout=reply_timeout, reconnect=reconnect,
        )
        self.held: list[Message] = []  # messages read while waiting for another, handed out first

    def __repr__(self) -> str:
        return f"ArenaClient({self.endpoint!r}, account={self.account!r})"

    # ------------------------------------------------------------------ session
    async def connect(self, timeout: float = HELLO_TIMEOUT) -> Welcome:
        """Say hello with the account and key. Refusals raise :class:`RefereeError`
        (``auth_failed``, ``banned``...: :func:`describe_refusal` words them); no answer
        within ``timeout`` raises :class:`~clients.sdk.errors.Timeout`. The account's
        name becomes the welcome's spelling (names are looked up in any case)."""
        welcome = await self.client.connect(timeout)
        name = (welcome.account or {}).get("name")
        if isinstance(name, str) and name:
            self.account = name
        return welcome

    async def close(self) -> None:
        await self.client.close()

    async def __aenter__(self) -> ArenaClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def welcome(self) -> Welcome | None:
        return self.client.welcome

    @property
    def arena(self) -> dict[str, Any]:
        """The welcome's ``arena``: its name, variants and clock presets (empty before)."""
        w = self.client.welcome
        return dict(w.arena or {}) if w is not None else {}

    @property
    def me(self) -> dict[str, Any]:
        """The welcome's ``account``: name, kind (human or bot), admin (empty before)."""
        w = self.client.welcome
        return dict(w.account or {}) if w is not None else {}

    # ------------------------------------------------------------------ requests
    async def seek(self, variant: str = "oklahoma", clock: str | None = None, rated: bool | None = None) -> str:
        """Ask for a game; returns the seek's id. ``game_ready`` comes when it is paired."""
        reply = await self.client.request(rq.seek(variant, clock, rated))
        return _typed(reply, Sought).seek

    async def seek_again(self, variant: str = "oklahoma", clock: str | None = None, rated: bool | None = None,
                         patience: float = BUSY_PATIENCE) -> str:
        """:meth:`seek` right after a game: an arena may still count this account as
        playing for a moment after its ``game_over`` (it frees the players as it files
        the game), so ``busy`` is retried for up to ``patience`` seconds.

        ``busy`` may also mean the arena has seated this account in its next game
        already, unasked: an event's game (protocol.md §19) comes as a ``game_ready``
        while the account is free, and a client that kept seeking would never read it.
        So between tries it waits for a ``game_ready``; if one comes it is kept for
        :meth:`next` / :meth:`wait_for` and ``""`` is returned: no seek was made."""
        deadline = time.monotonic() + patience
        delay = 0.1
        while True:
            try:
                return await self.seek(variant, clock, rated)
            except RefereeError as e:
                if e.name != "busy" or time.monotonic() + delay > deadline:
                    raise
            ready = await self.wait_for(lambda m: isinstance(m, GameReady), delay)
            if ready is not None:
                self.held.insert(0, ready)
                return ""
            delay = min(1.0, delay * 2)

    async def challenge(
        self, to: list[str], variant: str = "oklahoma", clock: str | None = None, rated: bool | None = None
    ) -> str:
        """Challenge named accounts; returns the challenge's id."""
        reply = await self.client.request(rq.challenge(to, variant, clock, rated))
        return _typed(reply, Challenged).challenge

    async def accept(self, challenge_id: str) -> None:
        await self.client.request(rq.accept(challenge_id))

    async def decline(self, challenge_id: str) -> None:
        await self.client.request(rq.decline(challenge_id))

    async def cancel_seek(self, seek_id: str) -> None:
        await self.client.request(rq.cancel(seek_id=seek_id))

    async def cancel_challenge(self, challenge_id: str) -> None:
        await self.client.request(rq.cancel(challenge_id=challenge_id))

    async def lobby(self) -> LobbyState:
        return _typed(await self.client.request(rq.lobby()), LobbyState)

    async def leaderboard(self, variant: str = "oklahoma", offset: int | None = None, limit: int | None = None) -> Leaderboard:
        return _typed(await self.client.request(rq.leaderboard(variant, offset, limit)), Leaderboard)

    # ------------------------------------------------------------------ the stream
    async def next(self, timeout: float | None = None) -> Message | None:
        """The next message the arena sent unasked (``game_ready``, ``game_over``,
        ``challenge_offer``, ``challenge_closed``, an ``error``, the SDK's
        ``Disconnected``/``Reconnected``), held ones first; None after ``timeout``."""
        if self.held:
            return self.held.pop(0)
        return await self.client.next(timeout)

    async def wait_for(self, want: Callable[[Message], bool], timeout: float | None) -> Message | None:
        """The first message ``want`` accepts (held ones included), within ``timeout``
        seconds (None: no limit); the others are held for :meth:`next`, in order."""
        for m in self.held:
            if want(m):
                self.held.remove(m)
                return m
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return None
            got = await self.client.next(left)
            if got is None:
                continue
            if want(got):
                return got
            self.held.append(got)

    # ------------------------------------------------------------------ playing
    def table_client(self, ready: GameReady, context: zmq.Context | None = None) -> Client:
        """A blocking client for ``ready``'s table: its shard, its seat token (hello seats
        it), CURVE when the shard asks for it. Not connected yet."""
        return Client(
            ready.endpoint, self.account or "arena-player", "player", token=ready.token, context=context, events=False,
            curve=shard_curve(ready, self.client.curve),
        )

    async def play(
        self,
        ready: GameReady,
        bot: Bot,
        *,
        threaded: bool = True,
        on_error: ErrorHook | None = None,
        stop: threading.Event | None = None,
    ) -> GameEnd | None:
        """Play the game of ``ready`` with ``bot`` at its shard (in a worker thread, so
        this loop keeps the arena connection alive); returns its ``game_end``, or None if
        the table closed (or ``stop`` was set) before the game ended."""
        def run() -> GameEnd | None:
            client = self.table_client(ready)
            try:
                client.connect()
                ends = drive(client, BotDriver(bot, on_error), 1, threaded, stop=stop)
            finally:
                client.close()
            return ends[-1] if ends else None

        return await asyncio.to_thread(run)

    async def play_games(
        self,
        make: Callable[[], Bot],
        games: int = 1,
        variant: str = "oklahoma",
        clock: str | None = None,
        rated: bool | None = None,
        *,
        accept_challenges: bool = False,
        threaded: bool = True,
        on_error: ErrorHook | None = None,
        on_game: Callable[[ArenaGame], None] | None = None,
    ) -> list[ArenaGame]:
        """Seek and play ``games`` games (<= 0: until the connection ends), each with a
        fresh bot from ``make``; ``on_game`` hears of each as it ends. With
        ``accept_challenges`` a challenge offered meanwhile is accepted (its game is then
        played in place of the seek's, which the arena drops: one game at a time).

        Refusals of ``seek`` (``cooldown``, ``banned``...) raise :class:`RefereeError`."""
        played: list[ArenaGame] = []
        while games <= 0 or len(played) < games:
            seek = await self.seek_again(variant, clock, rated) if played else await self.seek(variant, clock, rated)
            ready: GameReady | None = None
            while ready is None:
                msg = await self.wait_for(lambda m: isinstance(m, GameReady | ChallengeOffer | ErrorMessage), None)
                if isinstance(msg, GameReady):
                    ready = msg
                elif isinstance(msg, ChallengeOffer):
                    # Answered at once either way, so the challenger is not left waiting.
                    # Accepting: the seek is withdrawn first (one game at a time).
                    if not accept_challenges:
                        with contextlib.suppress(RefereeError):
                            await self.decline(msg.challenge)
                        continue
                    try:
                        await self.cancel_seek(seek)
                    except RefereeError:  # paired meanwhile: its game_ready is on the way
                        with contextlib.suppress(RefereeError):
                            await self.decline(msg.challenge)
                        continue
                    try:
                        await self.accept(msg.challenge)
                    except RefereeError:  # expired or withdrawn meanwhile: seek again
                        seek = await self.seek(variant, clock, rated)
                elif isinstance(msg, ErrorMessage) and on_error is not None:
                    on_error(msg)
            game = await self.play_one(ready, make(), threaded=threaded, on_error=on_error)
            played.append(game)
            if on_game is not None:
                on_game(game)
        return played

    async def play_one(
        self, ready: GameReady, bot: Bot, *, threaded: bool = True, on_error: ErrorHook | None = None
    ) -> ArenaGame:
        """Play ``ready``'s game and wait (at most :data:`GAME_OVER_WAIT` s) for the
        arena's ``game_over``. A ``game_over`` that comes while the table still plays
        (the arena voided the game, say) stops the table a few seconds later."""
        stop = threading.Event()
        task = asyncio.create_task(self.play(ready, bot, threaded=threaded, on_error=on_error, stop=stop))
        over: GameOver | None = None

        def is_over(m: Message) -> bool:
            return isinstance(m, GameOver) and m.game == ready.game

        try:
            while not task.done():
                got = await self.wait_for(lambda m: is_over(m), 0.5)
                if got is not None:
                    assert isinstance(got, GameOver)
                    over = got
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(asyncio.shield(task), 5.0)
                    stop.set()
                    break
            end = await task
        finally:
            stop.set()
            if not task.done():
                task.cancel()
        if over is None:
            got = await self.wait_for(is_over, GAME_OVER_WAIT)
            over = got if isinstance(got, GameOver) else None
        return ArenaGame(ready, end, over)


def _typed(m: Message, cls: type) -> Any:
    if not isinstance(m, cls):
        raise SDKError(f"expected {cls.__name__}, the arena answered {m.type!r}")
    return m


def private_key_file(path: Path, key: str) -> None:
    """Write ``key`` to ``path`` with mode 0600 (for tests and for scripts handing a key
    to a bot): created that way, never widened."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(key + "\n")
