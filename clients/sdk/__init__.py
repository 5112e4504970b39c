"""The Python SDK: play okgin over the network (protocol.md v1).

- :class:`AsyncClient` — the client, for asyncio programs (the Textual TUI): ``await
  connect()`` (hello, token kept), heartbeats, automatic resume after silence or
  ``hello_first``, a stop on ``session_taken``, ``request()`` with errors raised as
  :class:`RefereeError` (code, name, sentence), one method per request (``join``,
  ``queue``, ``act``, ``advise``, ``watch``, ``create_table``, ...), ``async for msg in
  client``. The session rules are the protocol core's
  (:class:`okgin.protocol.session.Session`), shared with the referee's own tools.
- :class:`Client` — the same client driven synchronously, for bots and scripts: each
  method runs its AsyncClient namesake on a private event loop thread (``recv`` is
  ``next``), so the two cannot drift apart.
- Typed messages (:mod:`clients.sdk.messages`): ``Prompt``, ``MoveEvent``, ``HandEnd``,
  ``GameEnd``, ``AdvisePrompt``, ``AdviceReceived``, ``Snapshot``... carrying the
  engine's ``View``, ``Action``, ``HandResult`` and ``RuleSet``.
- :class:`ArenaClient` — an account at an okgin arena (protocol 1.6): seek, challenge,
  lobby, and each ``game_ready`` played at its shard by the bot driver below.
- :func:`run_bot` / :class:`BotDriver` — drive a :class:`clients.bot.Bot` with the same
  hooks in the same order as :func:`clients.local.play_local`.
"""

from .aio import AsyncClient
from .arena import ArenaClient, ArenaGame
from .client import DEFAULT_ENDPOINT, Client
from .errors import ConnectionLost, RefereeError, SDKError, SessionTaken, Timeout
from .messages import (
    AdviceReceived,
    AdvisePrompt,
    ChallengeClosed,
    ChallengeOffer,
    Disconnected,
    ErrorMessage,
    GameEnd,
    GameOver,
    GameReady,
    GameStart,
    HandEnd,
    LobbyState,
    Message,
    MoveEvent,
    Ok,
    Prompt,
    Queued,
    Reconnected,
    RematchStatus,
    Seated,
    SeatStatus,
    Shutdown,
    Snapshot,
    TableClosed,
    TableCreated,
    Unknown,
    Welcome,
    parse_message,
)
from .runner import BotDriver, drive, play_reserved, run_bot, serve

__all__ = [
    "DEFAULT_ENDPOINT", "AdviceReceived", "AdvisePrompt", "ArenaClient", "ArenaGame", "AsyncClient", "BotDriver",
    "ChallengeClosed", "ChallengeOffer", "Client", "ConnectionLost", "Disconnected", "ErrorMessage", "GameEnd",
    "GameOver", "GameReady", "GameStart", "HandEnd", "LobbyState", "Message", "MoveEvent", "Ok", "Prompt", "Queued",
    "Reconnected", "RefereeError", "RematchStatus", "SDKError", "SeatStatus", "Seated", "SessionTaken", "Shutdown",
    "Snapshot", "TableClosed", "TableCreated", "Timeout", "Unknown", "Welcome", "drive", "parse_message",
    "play_reserved", "run_bot", "serve",
]
