"""The referee: one asyncio process, one ROUTER socket, many tables (protocol.md).

:class:`Referee` is embeddable: ``await ref.start()`` binds (port 0 works) and returns
the real endpoint; the referee then runs on the caller's event loop until
``await ref.stop()``. ``okgin referee`` (:mod:`referee.cli`) is a thin wrapper.

The referee is split by role, each part owning its own state:

- :mod:`referee.transport`: the ROUTER socket, its drain order, sends;
- :mod:`referee.doors`: seat doors, a socket per reserved seat that plays only that seat;
- :mod:`referee.sessions`: ``hello``, resume, liveness (the session desk);
- :mod:`referee.lobby`: tables, queues, joins, creation and closing;
- :mod:`referee.dispatch`: one frame in, one handler called, errors out;
- :mod:`referee.table`: one table's seats, game, clocks and feeds.

This class wires them together, handing each part only what it uses (a table gets a
:class:`referee.tablehost.TableHost`: the sends, a clock, the loop, the settings), and
holds the lifecycle (start, stop, the timer tick). A service may be plugged in
(:mod:`referee.extension`: the arena's requests, its ``hello``). Crash recovery (:mod:`referee.recovery`)
gets a :class:`referee.recovery.RecoveryParts`: the lobby's tables and the few functions it calls.

Every request is validated fully before it changes anything; a refused request gets one
``error`` (numeric code, stable name, sentence, request id) and changes nothing.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from functools import partial
from typing import Any

from okgin import RuleSet, __version__
from okgin.protocol import ProtocolError, encode

from .admindesk import AdminDesk
from .config import Clock, Policies, RefereeConfig
from .dispatch import Dispatcher
from .doors import Doors
from .entropy import EntropyDesk
from .extension import Extension, ExtensionParts, refusal
from .lagging import LagGuard
from .lobby import Lobby
from .ratelimit import RateLimiter
from .recovery import Recovery, RecoveryParts, open_recovery
from .sessions import SessionDesk
from .stalls import StallMeter
from .table import REVEAL_AT_END, Table
from .tablehost import Host
from .transport import DRAIN_MAX, SHUTDOWN_LINGER_MS, Transport
from .watchdesk import WatchDesk

__all__ = ["DRAIN_MAX", "SHUTDOWN_LINGER_MS", "Referee"]


def tick_period(cfg: RefereeConfig) -> float:
    """Seconds between lifecycle ticks (heartbeats out, silent peers gone): at most 1 s,
    so the referee reads its clock at least that often (referee.stalls)."""
    return min(1.0, max(0.01, cfg.heartbeat_ms / 4000))


def credit_stall(tables: Mapping[str, Table], desk: SessionDesk, lost_s: float) -> None:
    """The referee did not run for ``lost_s`` (referee.stalls): charge it to nobody. Every
    running move's clock and every grace timer is moved on, and no session is taken for
    silent because of it (protocol.md §7)."""
    for t in tables.values():
        t.credit_stall(lost_s)
    desk.credit_stall(lost_s)


class Referee:
    """A referee hosting many tables on one ROUTER socket. See the module docstring."""

    software = f"okgin {__version__}"

    # The loop's clock (asyncio's ``loop.time()`` is ``time.monotonic()``: timers set with
    # ``call_at`` and these times agree), called without going through the loop: several
    # times per decision.
    now = staticmethod(time.monotonic)

    def __init__(self, config: RefereeConfig | None = None, extension: Extension | None = None) -> None:
        self.config = cfg = config or RefereeConfig()
        self.loop: asyncio.AbstractEventLoop = None  # type: ignore[assignment]  # set by start()
        self._recovery: Recovery | None = None
        self.recovery_summary = ""
        # Each part is handed what it uses (issue 25 item 1). The two cycles (the transport
        # calls the dispatcher, which reaches the tables, which send through the transport;
        # the desk and the lobby each call the other) are closed by wiring an attribute
        # after both ends exist: Transport.handle and .conns, SessionDesk.lobby.
        # The referee's clock: it notices when the loop did not run (referee.stalls), and
        # then moves every running clock on before anyone reads the time (credit_stall).
        self.stalls = StallMeter(tick_period(cfg))
        self.now = self.stalls.now  # the class's monotonic, made stall-aware
        self.transport = tr = Transport(cfg, self.now)
        sender = tr.sender
        #: what a table may use of the referee (referee.tablehost): handed to every table
        self.table_host = host = Host(cfg, self.software, self.now, encode, tr.send, tr.send_bytes, tr.kick)
        self.desk = desk = SessionDesk(cfg, host, sender)
        tr.conns = desk.conns
        # seat doors (protocol 1.5), opened by create_table with doors
        self.doors = Doors(cfg, tr, desk.conns, desk.disconnect)
        self.lobby = lobby = Lobby(cfg, host, desk.sessions, desk.maybe_forget, self.doors.close_table)
        desk.lobby = lobby
        self.stalls.on_stall = partial(credit_stall, lobby.tables, desk)
        limited = cfg.rate_limit_per_s > 0 or cfg.rate_limit_bytes_per_s > 0
        self.limiter = (
            RateLimiter(
                sender, cfg.rate_limit_per_s, cfg.rate_limit_burst, cfg.rate_limit_bytes_per_s, cfg.rate_limit_bytes_burst
            )
            if limited
            else None
        )
        self.lag = LagGuard(sender, lobby.unwatch_all, cfg.watcher_drop_limit) if cfg.watcher_drop_limit > 0 else None
        if self.lag is not None:
            sender.on_drop = self.lag.on_drop
        self.watching = watching = WatchDesk(lobby.tables, cfg, host, self.limiter)
        self.admin = admin = AdminDesk(lobby, self.doors.open, host)
        self.entropy = entropy = EntropyDesk(lobby, host)
        routes = {
            "list_tables": watching.on_list_tables,
            "watch": watching.on_watch,
            "unwatch": watching.on_unwatch,
            "sync": watching.on_sync,
            "queue": lobby.on_queue,
            "join": lobby.on_join,
            "leave": lobby.on_leave,
            "create_table": admin.on_create_table,
            "close_table": admin.on_close_table,
            "reveal": admin.on_reveal,
            "entropy": entropy.on_entropy,
            "entropy_reveal": entropy.on_entropy_reveal,
        }
        if extension is not None:  # a service on this socket (referee.extension: the arena, 1.6)
            desk.extension = extension

            def refuse(rid: bytes, err: ProtocolError, rqid: Any) -> None:
                tr.stats["errors"] += 1
                sender.raw_send(rid, refusal(err, rqid))

            parts = ExtensionParts(
                host=host,
                admit=desk.admit,
                refuse=refuse,
                take=desk.take_over,
                close=desk.disconnect,
            )
            routes.update(extension.attach(parts))
        self.dispatcher = Dispatcher(cfg, desk, lobby, sender, host, self.limiter, self.lag, routes)
        tr.handle = self.dispatcher.handle
        # For whoever inspects a running referee (tests, tools): its counters and indexes.
        self.stats = tr.stats
        self.tables = self.lobby.tables
        self.sessions = self.desk.sessions
        self.conns = self.desk.conns
        self.queues = self.lobby.queues
        self.reserved = self.lobby.reserved
        self._tick_handle: asyncio.TimerHandle | None = None
        self._stopped: asyncio.Event | None = None
        self._started = False
        self._closing = False

    # ================================================================ lifecycle
    @property
    def recovery(self) -> Recovery | None:
        """Crash recovery state (referee.recovery), set by :meth:`start` (``open_recovery``)."""
        return self._recovery

    @recovery.setter
    def recovery(self, rec: Recovery | None) -> None:
        self._recovery = rec
        self.table_host.recovery = rec
        self.desk.recovery = rec

    def _attach_recovery(self, rec: Recovery) -> None:
        self.recovery = rec

    @property
    def endpoint(self) -> str | None:
        return self.transport.endpoint

    async def start(self) -> str:
        """Bind the ROUTER and start serving on the running loop; return the real endpoint."""
        if self._started:
            raise RuntimeError("this referee is already started")
        self.loop = self.table_host.loop = asyncio.get_running_loop()
        self._stopped = asyncio.Event()
        endpoint = self.transport.open(self.loop)
        self._started = True
        # restores a crashed referee's games (config.recover), before serving
        parts = RecoveryParts(
            tables=self.lobby.tables,
            create_table=self.lobby.create_table,
            close_table=self.lobby.close_table,
            reserve=self.lobby.reserve,
            adopt=self.desk.adopt,
            grace_expired=self.desk.grace_expired,
            now=self.now,
            call_later=self.loop.call_later,
        )
        _, self.recovery_summary = open_recovery(self.config, parts, self._attach_recovery)
        self.transport.serve()
        self.stalls.restart()
        self._schedule_tick()
        return endpoint

    async def serve_forever(self) -> None:
        """Wait until :meth:`stop` has run (from a signal handler or another task)."""
        assert self._stopped is not None, "call start() first"
        await self._stopped.wait()

    async def stop(self, reason: str = "the referee is stopping") -> None:
        """Abandon every running game, close every journal, tell every client, close the socket."""
        if self._closing or not self._started:
            return
        self._closing = True
        for t in list(self.tables.values()):
            t.abandon("abandoned")
            if t.journal is not None:
                t.journal.close()
        for sess in list(self.conns.values()):
            self.transport.send(sess, {"type": "shutdown", "reason": reason})
        # Read nothing more (no request may start anything now).
        self.transport.stop_reading()
        if self._tick_handle is not None:
            self._tick_handle.cancel()
        for t in self.tables.values():
            t.stop_timers()
        self.doors.close_all()
        await self.transport.close()
        if self.recovery is not None:
            self.recovery.close()
        if self._stopped is not None:
            self._stopped.set()

    async def __aenter__(self) -> Referee:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def _schedule_tick(self) -> None:
        self._tick_handle = self.loop.call_later(tick_period(self.config), self._tick)

    def _tick(self) -> None:
        if self.transport.sock is None:
            return
        self.desk.tick()  # reads the clock, so a stall is credited at the latest here
        self._schedule_tick()

    # ================================================================ for embedding programs and tests
    def create_table(
        self,
        table: str | None = None,
        variant: str = "oklahoma",
        rules: dict[str, Any] | RuleSet | None = None,
        seed: int | str | None = None,
        clock: dict[str, Any] | Clock | None = None,
        policies: dict[str, Any] | Policies | None = None,
        reserved: bool = False,
        players: list[str] | None = None,
        full_feed_delay_ms: int | None = None,
        origin: str = "admin",
        reveal: str = REVEAL_AT_END,
    ) -> Table:
        """Create a table (embedding programs, the CLI's one table): see :meth:`Lobby.create_table`."""
        return self.lobby.create_table(
            table, variant, rules, seed, clock, policies, reserved, players, full_feed_delay_ms, origin, reveal
        )

    # For tests and tools that drive the referee by hand.
    def _handle(self, frames: list[bytes]) -> None:
        self.dispatcher.handle(frames)
