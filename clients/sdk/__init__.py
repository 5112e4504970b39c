"""The Python SDK: play okgin over the network (protocol.md v1).

- :class:`Client` — blocking client for bots and scripts: ``connect()`` (hello, token
  kept), heartbeats, automatic resume after silence, ``request()`` with errors raised
  as :class:`RefereeError` (code, name, sentence), and one method per request
  (``join``, ``queue``, ``act``, ``advise``, ``watch``, ``create_table``, ...).
- :class:`AsyncClient` — the same for asyncio programs (the Textual TUI): ``await
  connect()``, ``async for msg in client``, ``await act(...)``, ``await advise(...)``.
- Typed messages (:mod:`clients.sdk.messages`): ``Prompt``, ``MoveEvent``, ``HandEnd``,
  ``GameEnd``, ``AdvisePrompt``, ``AdviceReceived``, ``Snapshot``... carrying the
  engine's ``View``, ``Action``, ``HandResult`` and ``RuleSet``.
- :func:`run_bot` / :class:`BotDriver` — drive a :class:`clients.bot.Bot` with the same
  hooks in the same order as :func:`clients.local.play_local`.
"""

from .aio import AsyncClient
from .client import DEFAULT_ENDPOINT, Client
from .errors import ConnectionLost, RefereeError, SDKError, SessionTaken, Timeout
from .messages import (
    AdviceReceived,
    AdvisePrompt,
    Disconnected,
    ErrorMessage,
    GameEnd,
    GameStart,
    HandEnd,
    Message,
    MoveEvent,
    Ok,
    Prompt,
    Queued,
    Reconnected,
    RematchStatus,
    Seated,
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
    "DEFAULT_ENDPOINT", "AdviceReceived", "AdvisePrompt", "AsyncClient", "BotDriver", "Client", "ConnectionLost",
    "Disconnected", "ErrorMessage", "GameEnd", "GameStart", "HandEnd", "Message", "MoveEvent", "Ok", "Prompt",
    "Queued", "Reconnected", "RefereeError", "RematchStatus", "SDKError", "Seated", "SessionTaken", "Shutdown", "Snapshot",
    "TableClosed", "TableCreated", "Timeout", "Unknown", "Welcome", "drive", "parse_message", "play_reserved",
    "run_bot", "serve",
]
