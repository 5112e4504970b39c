"""What a table needs from the server around it, and nothing more (issue 25 item 1).

A :class:`referee.table.Table` used to be handed the whole :class:`referee.server.Referee`
and reached through it for everything. :class:`TableHost` is the whole of what a table may
use: a clock, the loop for its timers, the send functions, the settings, and the recovery
hooks. Anything else a table wants (the lobby, the session desk, the transport) it does not
get, so a table cannot grow a dependency on them without this interface saying so.

:class:`Host` is the referee's implementation: a few bound methods stored as attributes, so
a call through it costs what a call through the referee cost (one attribute read, no extra
frame) on the hot path. A test or a benchmark may pass any object of the same shape
(``bench/referee.py``'s ``NullHub`` does).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .config import RefereeConfig
    from .sessions import Session
    from .table import Table

__all__ = ["Host", "RecoveryHooks", "TableHost"]


class RecoveryHooks(Protocol):
    """The crash-recovery calls a table makes (:class:`referee.recovery.Recovery`)."""

    def table_changed(self, t: Table) -> None:
        """The table's state changed: write it (seats, status, tokens)."""

    def game_started(self, t: Table) -> None:
        """A game was dealt: its seed is on disk before anyone hears of the game."""


class TableHost(Protocol):
    """Everything a table may use of the server. See the module docstring.

    The members are read-only properties here so that an implementation may hold them as
    plain attributes (bound methods included): the hot path reads them once per send.
    """

    @property
    def config(self) -> RefereeConfig:
        """The referee's settings (the journal directory, advice caps)."""

    @property
    def software(self) -> str:
        """The referee's name and version, for journals."""

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The loop a table sets its timers on (``call_at`` agrees with :attr:`now`)."""

    @property
    def recovery(self) -> RecoveryHooks | None:
        """Crash recovery's hooks, or None when the referee runs without it."""

    @property
    def now(self) -> Callable[[], float]:
        """The loop's clock (``time.monotonic``)."""

    @property
    def encode(self) -> Callable[[dict[str, Any]], bytes]:
        """Pack a message (``okgin.protocol.encode``)."""

    @property
    def send(self) -> Callable[[Session, dict[str, Any]], None]:
        """Encode and send a message to a session (dropped if it is not connected)."""

    @property
    def send_bytes(self) -> Callable[[Session, bytes], None]:
        """Send a packed frame to a session; never blocks (a full queue drops it)."""

    @property
    def kick(self) -> Callable[[], None]:
        """After sends made outside a drain (timers): let the transport read again."""

    @property
    def reply_ok(self) -> Callable[[Session, str, Any, str | None], None]:
        """Answer a request with ``ok`` (with its id, if it had one, and *1.6* the table it
        concerned, if any)."""


class Host:
    """The referee's :class:`TableHost`: a clock, the loop, the sends, the settings.

    ``loop`` is set when the referee starts and ``recovery`` when its recovery state is
    open; a table reads both at the moment it uses them.
    """

    __slots__ = ("config", "encode", "kick", "loop", "now", "recovery", "send", "send_bytes", "software")

    def __init__(
        self,
        config: RefereeConfig,
        software: str,
        now: Callable[[], float],
        encode: Callable[[dict[str, Any]], bytes],
        send: Callable[[Session, dict[str, Any]], None],
        send_bytes: Callable[[Session, bytes], None],
        kick: Callable[[], None],
    ) -> None:
        self.config = config
        self.software = software
        self.now = now
        self.encode = encode
        self.send = send
        self.send_bytes = send_bytes
        self.kick = kick
        self.loop: asyncio.AbstractEventLoop = None  # type: ignore[assignment]  # set when the referee starts
        self.recovery: RecoveryHooks | None = None

    def reply(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        """Send ``msg`` as the answer to a request (with its id, if it had one)."""
        if rqid is not None:
            msg["id"] = rqid
        self.send(sess, msg)

    def reply_ok(self, sess: Session, request: str, rqid: Any, table: str | None) -> None:
        msg: dict[str, Any] = {"type": "ok", "request": request}
        if table is not None:
            msg["table"] = table  # 1.6: a client with requests at several tables knows which
        self.reply(sess, msg, rqid)
