"""The referee: one asyncio process, one ROUTER socket, many tables (protocol.md).

:class:`Referee` is embeddable: ``await ref.start()`` binds (port 0 works) and returns
the real endpoint; the referee then runs on the caller's event loop until
``await ref.stop()``. ``okgin referee`` (:mod:`referee.cli`) is a thin wrapper.

Why a plain ZeroMQ socket driven by ``loop.add_reader`` rather than awaiting
``zmq.asyncio`` futures: the referee handles one message at a time to completion, and
draining the socket with non-blocking reads in a reader callback costs a few
microseconds per message instead of a future per message. ZeroMQ's file descriptor is
edge-triggered, so the rule here is: drain until ``EAGAIN`` after every wake-up, and
schedule another drain (:meth:`kick`) after any send made outside a drain (timers), since
a send can consume the edge of a message that arrived meanwhile.

Every request is validated fully before it changes anything; a refused request gets one
``error`` (numeric code, stable name, sentence, request id) and changes nothing. No
client input can raise out of :meth:`_handle`: unexpected exceptions become ``internal``
errors and are logged.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import time
import traceback
from typing import Any

import zmq

from okgin import RuleError, RuleSet, __version__, canonical_json
from okgin.protocol import PROTOCOL_MAJOR, PROTOCOL_MINOR, ROLES, ProtocolError, decode, encode, request_id, validate
from okgin.protocol.catalogue import MAX_NAME

from .config import MAX_MS, Clock, Policies, RefereeConfig
from .lagging import LagGuard
from .ratelimit import RateLimiter
from .recovery import Recovery, open_recovery
from .security import CurveError, ThreadAuthenticator, start_curve
from .sessions import Session, new_token
from .tables import CLOSED, FINISHED, PLAYING, WAITING, Table

log = logging.getLogger("okgin.referee")
_send = zmq.backend.Socket.send
_recv = zmq.backend.Socket.recv
_get = zmq.backend.Socket.get
_RCVMORE = int(zmq.RCVMORE)
_EVENTS = int(zmq.EVENTS)
_POLLIN = int(zmq.POLLIN)
_NOBLOCK = int(zmq.NOBLOCK)
_MORE = zmq.SNDMORE | zmq.NOBLOCK
# How long stop() lets ZeroMQ deliver the last messages (shutdown) to peers still reading.
SHUTDOWN_LINGER_MS = 1000
# Messages read per wake-up at most, before timers get a turn (Referee._drain).
DRAIN_MAX = 2000
_NEVER = float("inf")  # the sort key of a connection without a session (Referee._drain)


class Referee:
    """A referee hosting many tables on one ROUTER socket. See the module docstring."""

    software = f"okgin {__version__}"

    def __init__(self, config: RefereeConfig | None = None) -> None:
        self.config = config or RefereeConfig()
        self.tables: dict[str, Table] = {}
        self.sessions: dict[str, Session] = {}
        self.conns: dict[bytes, Session] = {}
        self.queues: dict[str, list[Session]] = {}
        self.reserved: dict[str, tuple[Table, int]] = {}
        self.endpoint: str | None = None
        self.loop: asyncio.AbstractEventLoop = None  # type: ignore[assignment]  # set by start()
        self._ctx: zmq.Context | None = None
        self._sock: zmq.Socket | None = None
        self._fd: int | None = None
        self._tick_handle: asyncio.TimerHandle | None = None
        self._kick_pending = False
        self._in_drain = False
        self._closing = False
        self._stopped: asyncio.Event | None = None
        self._counter = 0
        self.recovery: Recovery | None = None  # crash recovery state (referee.recovery), set by start()
        self.recovery_summary = ""
        self._auth: ThreadAuthenticator | None = None  # CURVE's ZAP handler (referee.security)
        cfg = self.config
        self.limiter = RateLimiter(self, cfg.rate_limit_per_s, cfg.rate_limit_burst) if cfg.rate_limit_per_s > 0 else None
        self.lag = LagGuard(self, cfg.watcher_drop_limit) if cfg.watcher_drop_limit > 0 else None
        self.stats = {"received": 0, "sent": 0, "dropped": 0, "errors": 0, "internal": 0}
        self._handlers = {
            "heartbeat": self._on_heartbeat,
            "ping": self._on_ping,
            "bye": self._on_bye,
            "list_tables": self._on_list_tables,
            "queue": self._on_queue,
            "join": self._on_join,
            "leave": self._on_leave,
            "act": self._on_act,
            "advise": self._on_advise,
            "resign": self._on_resign,
            "rematch": self._on_rematch,
            "watch": self._on_watch,
            "unwatch": self._on_unwatch,
            "sync": self._on_sync,
            "create_table": self._on_create_table,
            "close_table": self._on_close_table,
        }

    # ================================================================ lifecycle
    async def start(self) -> str:
        """Bind the ROUTER and start serving on the running loop; return the real endpoint."""
        if self._sock is not None:
            raise RuntimeError("this referee is already started")
        self.loop = asyncio.get_running_loop()
        self._stopped = asyncio.Event()
        cfg = self.config
        ctx = zmq.Context()
        sock = ctx.socket(zmq.ROUTER)
        try:
            sock.setsockopt(zmq.ROUTER_MANDATORY, 1)
            sock.setsockopt(zmq.SNDHWM, cfg.hwm)
            sock.setsockopt(zmq.RCVHWM, cfg.hwm)
            sock.setsockopt(zmq.MAXMSGSIZE, cfg.hard_max_bytes)
            sock.setsockopt(zmq.LINGER, 0)
            if "[" in cfg.bind or "::" in cfg.bind:
                sock.setsockopt(zmq.IPV6, 1)
            if cfg.curve_keys is not None:  # CURVE + ZAP allow-list (referee.security), before binding
                self._auth = start_curve(ctx, sock, cfg.curve_keys, cfg.curve_allow or "")
            sock.bind(cfg.bind)
        except (zmq.ZMQError, CurveError):
            if self._auth is not None:
                self._auth.stop()
                self._auth = None
            sock.close(0)
            ctx.term()
            raise
        self._ctx = ctx
        self._sock = sock
        self.endpoint = sock.getsockopt_string(zmq.LAST_ENDPOINT)
        self._fd = sock.getsockopt(zmq.FD)
        open_recovery(self)  # restores a crashed referee's games (config.recover), before serving
        self.loop.add_reader(self._fd, self._drain)
        self._schedule_tick()
        self.kick()
        return self.endpoint

    async def serve_forever(self) -> None:
        """Wait until :meth:`stop` has run (from a signal handler or another task)."""
        assert self._stopped is not None, "call start() first"
        await self._stopped.wait()

    async def stop(self, reason: str = "the referee is stopping") -> None:
        """Abandon every running game, close every journal, tell every client, close the socket."""
        if self._closing or self._sock is None:
            return
        self._closing = True
        for t in list(self.tables.values()):
            t.abandon("abandoned")
            if t.journal is not None:
                t.journal.close()
        for sess in list(self.conns.values()):
            self.send(sess, {"type": "shutdown", "reason": reason})
        # Read nothing more (no request may start anything now).
        if self._fd is not None:
            self.loop.remove_reader(self._fd)
            self._fd = None
        if self._tick_handle is not None:
            self._tick_handle.cancel()
        for t in self.tables.values():
            for h in t.grace_timers.values():
                h.cancel()
            if t.pending is not None and t.pending.timer is not None:
                t.pending.timer.cancel()
        # Deliver what is queued (the game_end and shutdown just sent) before going: close
        # with a bounded linger, and let term() wait off the loop until ZeroMQ's I/O thread
        # has written every queue or the linger has passed. Peers that are gone cost
        # nothing (their queues are dropped with them); only a peer that is connected but
        # not reading can hold the stop up, and for SHUTDOWN_LINGER_MS at most.
        self._sock.close(linger=SHUTDOWN_LINGER_MS)
        self._sock = None
        if self._auth is not None:
            self._auth.stop()
            self._auth = None
        ctx, self._ctx = self._ctx, None
        if ctx is not None:
            await self.loop.run_in_executor(None, ctx.term)
        if self.recovery is not None:
            self.recovery.close()
        if self._stopped is not None:
            self._stopped.set()

    async def __aenter__(self) -> Referee:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # ================================================================ plumbing
    # The loop's clock (asyncio's ``loop.time()`` is ``time.monotonic()``: timers set with
    # ``call_at`` and these times agree), called without going through the loop: several
    # times per decision.
    now = staticmethod(time.monotonic)

    encode = staticmethod(encode)

    def kick(self) -> None:
        """Schedule a drain of the socket (after sends made outside a drain)."""
        if not self._kick_pending and self._sock is not None:
            self._kick_pending = True
            self.loop.call_soon(self._drain)

    def _drain(self) -> None:
        """Read what is waiting (at most DRAIN_MAX messages), then serve it oldest first.

        Why read first and sort: ZeroMQ's ROUTER fair-queues its peers, but not in the
        order they started waiting. When a peer's queue runs dry, libzmq swaps the most
        recently activated peer into its slot and reads that one next, so under load a
        newly arrived message often overtakes older ones. At 200 busy tables that made
        the slowest tenth of decisions wait two to four times the median. The referee
        therefore serves each batch in the order in which it last sent something to
        each session: for a player answering a prompt, that is the prompt's time, so
        the table that has waited longest is served first. The sort is stable, so one
        connection's messages keep their order. A client that floods gets an answer
        (an error, at least) to each message, which moves it to the back. Connections
        that have no session yet sort last, in arrival order: as far as the referee
        knows they began waiting just now. (Sorting them first once let a ``hello``
        resuming a token overtake the ``bye`` another connection of that session had
        sent before it: tests/hardening/test_security.py.)
        """
        self._kick_pending = False
        sock = self._sock
        if sock is None or self._closing:
            return
        batch: list[list[bytes]] = []
        more = False
        for i in range(DRAIN_MAX):
            # the backend's recv, without pyzmq's recv_multipart wrapper
            try:
                rid = _recv(sock, _NOBLOCK)
                # a ROUTER hands a routing id, then always at least one frame
                frames = [rid, _recv(sock, _NOBLOCK)]
                while _get(sock, _RCVMORE):
                    frames.append(_recv(sock, _NOBLOCK))
            except zmq.Again:
                break
            except zmq.ZMQError:  # socket closed under us during shutdown
                return
            batch.append(frames)
            if i == 0:
                # Anything more? Most wake-ups of a lightly loaded referee bring one
                # message; asking ZMQ_EVENTS processes the socket's pending commands
                # exactly as a failed read would (so the edge-triggered descriptor is
                # re-armed) at a third of the cost of raising and catching zmq.Again.
                # Asked once per drain only: a busy referee drains many messages per
                # wake-up, where reading on until EAGAIN is the cheaper end.
                try:
                    if not _get(sock, _EVENTS) & _POLLIN:
                        break
                except zmq.ZMQError:
                    return
        else:
            more = True
        if len(batch) > 1:
            conns = self.conns
            batch.sort(key=lambda f: s.last_sent if (s := conns.get(f[0])) is not None else _NEVER)
        self._in_drain = True
        stats = self.stats
        try:
            for frames in batch:
                if self._closing:
                    return
                stats["received"] += 1
                self._handle(frames)
            if more:
                self.kick()  # more may be waiting: let timers run first
            elif batch and self._sock is not None:
                # Handling sent replies, and a send may process the socket's pending
                # commands, consuming the edge of the (edge-triggered) descriptor for a
                # message that arrived meanwhile: ask once more, or that message would
                # wait until the referee next sends outside a drain (at worst a
                # heartbeat, heartbeat_ms later).
                try:
                    if _get(sock, _EVENTS) & _POLLIN:
                        self.kick()
                except zmq.ZMQError:
                    pass
        finally:
            self._in_drain = False

    def send(self, sess: Session, msg: dict[str, Any]) -> None:
        if sess.rid is not None:
            self.send_bytes(sess, encode(msg))

    def send_bytes(self, sess: Session, data: bytes) -> None:
        rid = sess.rid
        if rid is None or self._sock is None:
            return
        if self._raw_send(rid, data):
            sess.last_sent = self.now()
        else:
            sess.dropped += 1
            if self.lag is not None:
                self.lag.on_drop(sess)  # a watcher that never reads is cut off (referee.lagging)

    def _raw_send(self, rid: bytes, data: bytes) -> bool:
        """Queue one frame for a peer without ever blocking; False if it was dropped."""
        sock = self._sock
        if sock is None:
            return False
        try:
            # the backend's send, without pyzmq's Python-level wrapper: this is the
            # referee's hottest call (two frames per message, three messages per move)
            _send(sock, rid, _MORE)
            _send(sock, data, zmq.NOBLOCK)
        except zmq.Again:  # the peer's queue is at its high-water mark
            self.stats["dropped"] += 1
            return False
        except zmq.ZMQError as e:
            if e.errno == zmq.EHOSTUNREACH:  # peer gone (ROUTER_MANDATORY)
                self.stats["dropped"] += 1
                return False
            raise
        finally:
            if not self._in_drain:
                self.kick()
        self.stats["sent"] += 1
        return True

    def reply(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        if rqid is not None:
            msg["id"] = rqid
        self.send(sess, msg)

    def reply_ok(self, sess: Session, request: str, rqid: Any) -> None:
        self.reply(sess, {"type": "ok", "request": request}, rqid)

    # ================================================================ dispatch
    def _handle(self, frames: list[bytes]) -> None:
        rid = frames[0]
        if self.limiter is not None and not self.limiter.admit(rid):
            return  # over its rate: dropped unread (referee.ratelimit)
        t: str | None = None
        rqid: Any = None
        try:
            if len(frames) != 2:
                raise ProtocolError(
                    "bad_frame",
                    f"one frame per message, got {len(frames) - 1} (a REQ socket adds an empty frame: use a DEALER)",
                )
            sess = self.conns.get(rid)
            if sess is not None:
                sess.last_recv = self.now()
                if self.lag is not None and self.lag.lagging:
                    self.lag.on_message(sess)
            try:
                msg = decode(frames[1], self.config.max_message_bytes)
            except ProtocolError as e:
                if e.name == "too_large":  # still echo the id if the frame can be read at all
                    rqid, t = _peek_id(frames[1], self.config.hard_max_bytes)
                raise
            rqid = request_id(msg)
            t = validate(msg)
            if sess is None:
                if t != "hello":
                    raise ProtocolError("hello_first", f"send hello first; this connection has no session yet (got {t})")
                self._on_hello(rid, msg, rqid)
                return
            if t == "hello":
                raise ProtocolError("already_welcomed", "this connection already has a session; open a new connection to resume another")
            if sess.role not in ROLES[t]:
                raise ProtocolError("forbidden", f"a {sess.role} may not send {t}")
            self._handlers[t](sess, msg, rqid)
        except ProtocolError as e:
            self.stats["errors"] += 1
            if e.request is None and t is not None:
                e.request = t
            self._raw_send(rid, encode(e.to_wire(rqid)))
        except Exception:
            self.stats["internal"] += 1
            log.error("internal error on %s: %s", t, traceback.format_exc())
            err = ProtocolError("internal", "the referee failed on this request (a bug, logged); nothing was changed", request=t)
            self._raw_send(rid, encode(err.to_wire(rqid)))

    # ================================================================ sessions
    def _on_hello(self, rid: bytes, msg: dict[str, Any], rqid: Any) -> None:
        if msg["protocol"] != PROTOCOL_MAJOR:
            raise ProtocolError("version_mismatch", f"this referee speaks protocol {PROTOCOL_MAJOR}, not {msg['protocol']}")
        role = msg["role"]
        key = self.config.admin_key
        if role == "admin" and key is not None:
            given = msg.get("admin_key")
            if not isinstance(given, str) or not hmac.compare_digest(given.encode(), key.encode()):
                raise ProtocolError("auth_failed", "role admin needs this referee's admin_key")
        token = msg.get("token")
        if token:
            if self.recovery is not None:
                self.recovery.claim(token)  # a session or reserved seat restored after a crash
            sess = self.sessions.get(token)
            if sess is not None:
                self._resume(sess, rid, role, rqid, msg.get("events", True), msg.get("batch_events", False))
                return
            res = self.reserved.get(token)
            if res is None:
                raise ProtocolError("bad_token", "this referee holds no session or reserved seat for that token")
            if role != "player":
                raise ProtocolError("forbidden", "a reserved seat token is for role player")
            table, seat = res
            sess = self._new_session(rid, msg["name"], role, token)
            sess.events = msg.get("events", True)
            sess.batch = msg.get("batch_events", False)
            self._welcome(sess, False, rqid)
            self._sit(sess, table, seat, None)
            return
        if len(self.sessions) >= self.config.max_sessions:
            raise ProtocolError("limit_reached", f"this referee holds {len(self.sessions)} sessions, its limit")
        sess = self._new_session(rid, msg["name"], role, new_token())
        sess.events = msg.get("events", True)
        sess.batch = msg.get("batch_events", False)
        self._welcome(sess, False, rqid)

    def _new_session(self, rid: bytes, name: str, role: str, token: str) -> Session:
        now = self.now()
        sess = Session(token=token, name=name, role=role, rid=rid, last_recv=now, last_sent=now)
        self.sessions[token] = sess
        self.conns[rid] = sess
        if self.recovery is not None:
            self.recovery.session_added(sess)
        return sess

    def _welcome(self, sess: Session, resumed: bool, rqid: Any) -> None:
        self.reply(
            sess,
            {
                "type": "welcome",
                "protocol": PROTOCOL_MAJOR,
                "minor": PROTOCOL_MINOR,
                "token": sess.token,
                "role": sess.role,
                "name": sess.name,
                "resumed": resumed,
                "heartbeat_ms": self.config.heartbeat_ms,
                "liveness": self.config.liveness,
                "max_message_bytes": self.config.max_message_bytes,
                "referee": self.software,
                "events": sess.events,
                "batch_events": sess.batch,
            },
            rqid,
        )

    def _resume(self, sess: Session, rid: bytes, role: str, rqid: Any, events: bool, batch: bool) -> None:
        if role != sess.role:
            raise ProtocolError("forbidden", f"this token belongs to a {sess.role} session, not {role}")
        sess.events = events
        sess.batch = batch
        if sess.rid is not None and sess.rid != rid:
            self.conns.pop(sess.rid, None)
        sess.rid = rid
        self.conns[rid] = sess
        sess.last_recv = self.now()
        self._welcome(sess, True, rqid)
        for name, seat in list(sess.seats.items()):
            t = self.tables[name]
            h = t.grace_timers.pop(seat, None)
            if h is not None:
                h.cancel()
                if t.journal is not None:
                    t.journal.write("reconnect", seat=seat)
            self.send(sess, t.snapshot(seat, False))
            t.send_missed_end(seat, sess)
            t.send_prompt_to(seat)

    def _disconnect(self, sess: Session) -> None:
        """The session's connection is gone: drop queues and watches, hold its seats."""
        if sess.rid is not None:
            self.conns.pop(sess.rid, None)
            sess.rid = None
        self._unqueue(sess)
        for name in list(sess.watches):
            t = self.tables.get(name)
            if t is not None:
                t.watchers.pop(sess, None)
        sess.watches.clear()
        for name, seat in list(sess.seats.items()):
            t = self.tables[name]
            if t.journal is not None:
                t.journal.write("disconnect", seat=seat)
            grace = t.policies.disconnect_grace_ms / 1000
            old = t.grace_timers.pop(seat, None)
            if old is not None:
                old.cancel()
            t.grace_timers[seat] = self.loop.call_later(grace, self._grace_expired, t, seat, sess)
        self._maybe_forget(sess)

    def _grace_expired(self, t: Table, seat: int, sess: Session) -> None:
        t.grace_timers.pop(seat, None)
        if t.seats[seat] is not sess or sess.connected or t.status == CLOSED:
            return
        if t.status == PLAYING:
            t.forfeit(seat, "disconnect")
        self._unseat(sess, t)
        self.kick()

    def _maybe_forget(self, sess: Session) -> None:
        if sess.rid is None and not sess.seats:
            self.sessions.pop(sess.token, None)
            if self.recovery is not None:
                self.recovery.session_forgotten(sess)

    def _schedule_tick(self) -> None:
        period = min(1.0, max(0.01, self.config.heartbeat_ms / 4000))
        self._tick_handle = self.loop.call_later(period, self._tick)

    def _tick(self) -> None:
        """Heartbeats out, silent peers declared gone (protocol.md §10)."""
        if self._sock is None:
            return
        now = self.now()
        hb = self.config.heartbeat_ms / 1000
        dead_after = hb * self.config.liveness
        beat = encode({"type": "heartbeat"})
        for sess in list(self.conns.values()):
            if now - sess.last_recv > dead_after:
                self._disconnect(sess)
            elif now - sess.last_sent >= hb:
                self.send_bytes(sess, beat)
        self._schedule_tick()

    # ================================================================ lobby
    def _rules(self, variant: str, partial: Any) -> RuleSet:
        d = dict(partial or {})
        if "variant" in d and d["variant"] != variant:
            raise ProtocolError("bad_rules", f"rules say variant {d['variant']!r} but the request says {variant!r}")
        d["variant"] = variant
        try:
            return RuleSet.from_dict(d)
        except (RuleError, TypeError, ValueError) as e:
            raise ProtocolError("bad_rules", str(e)) from None

    def _check_seat_limit(self, sess: Session) -> None:
        if len(sess.seats) + len(sess.queues) >= self.config.max_seats_per_session:
            raise ProtocolError("limit_reached", f"a session may hold at most {self.config.max_seats_per_session} seats and queue places")

    def _check_table_limit(self) -> None:
        if len(self.tables) >= self.config.max_tables:
            raise ProtocolError("limit_reached", f"this referee hosts {len(self.tables)} tables, its limit")

    def _new_name(self, prefix: str) -> str:
        while True:
            self._counter += 1
            name = f"{prefix}{self._counter}"
            if name not in self.tables:
                return name

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
    ) -> Table:
        """Create a table (the admin message, the CLI's one table, and embedding programs).

        Raises :class:`ProtocolError` (nothing created) on a bad setting.
        """
        if table is not None and table in self.tables:
            raise ProtocolError("table_exists", f"a table named {table!r} exists")
        rs = rules if isinstance(rules, RuleSet) else self._rules(variant, rules)
        ck = clock if isinstance(clock, Clock) else self.config.clock.merge(clock)
        try:
            pol = policies if isinstance(policies, Policies) else self.config.policies.merge(policies)
        except TypeError as e:
            raise ProtocolError("bad_message", f"bad policies: {e}") from None
        if full_feed_delay_ms is not None and not (isinstance(full_feed_delay_ms, int) and 0 <= full_feed_delay_ms <= MAX_MS):
            raise ProtocolError("bad_message", f"full_feed_delay_ms must be 0-{MAX_MS} or nil")
        if players is not None and (len(players) > rs.num_players or any(not 0 < len(p) <= MAX_NAME for p in players)):
            raise ProtocolError("bad_message", f"players lists at most {rs.num_players} names of 1-{MAX_NAME} characters")
        self._check_table_limit()
        name = table or self._new_name("t")
        t = Table(self, name, origin, rs, ck, pol, seed=seed, reserved=reserved, player_names=players, full_feed_delay_ms=full_feed_delay_ms)
        self.tables[name] = t
        if self.recovery is not None:
            self.recovery.table_changed(t)
        if t.reserved_tokens:
            for i, tok in enumerate(t.reserved_tokens):
                self.reserved[tok] = (t, i)
        return t

    def _sit(self, sess: Session, t: Table, seat: int, rqid: Any) -> None:
        t.seats[seat] = sess
        t.held[seat].clear()
        sess.seats[t.name] = seat
        if self.recovery is not None:
            self.recovery.table_changed(t)
        if t.status == FINISHED:
            t.status = WAITING
        self.reply(sess, t.seated_msg(seat), rqid)
        if t.full and t.status == WAITING:
            t.start_game()

    def _unseat(self, sess: Session, t: Table) -> None:
        seat = sess.seats.pop(t.name, None)
        if seat is None:
            return
        t.seats[seat] = None
        t.held[seat].clear()
        h = t.grace_timers.pop(seat, None)
        if h is not None:
            h.cancel()
        if t.status == FINISHED:
            t.status = WAITING
        t.rematch_ready = [False] * t.num_seats
        if self.recovery is not None:
            self.recovery.table_changed(t)
        if t.empty and t.origin != "admin":
            self._close_table(t, "the last player left")
        self._maybe_forget(sess)

    def _close_table(self, t: Table, reason: str) -> None:
        t.abandon("abandoned")
        msg = encode({"type": "table_closed", "table": t.name, "reason": reason})
        told: set[int] = set()
        for sess in [s for s in t.seats if s is not None] + list(t.watchers):
            if id(sess) not in told:
                told.add(id(sess))
                self.send_bytes(sess, msg)
        for i, sess in enumerate(t.seats):
            if sess is not None:
                sess.seats.pop(t.name, None)
                t.seats[i] = None
                self._maybe_forget(sess)
        for sess in list(t.watchers):
            sess.watches.pop(t.name, None)
        t.watchers.clear()
        for h in t.grace_timers.values():
            h.cancel()
        t.grace_timers.clear()
        if t.reserved_tokens:
            for tok in t.reserved_tokens:
                self.reserved.pop(tok, None)
                s = self.sessions.get(tok)
                if s is not None:
                    self._maybe_forget(s)
        t.status = CLOSED
        self.tables.pop(t.name, None)
        if self.recovery is not None:
            self.recovery.table_changed(t)

    def _unqueue(self, sess: Session) -> None:
        for key in sess.queues:
            q = self.queues.get(key)
            if q is not None and sess in q:
                q.remove(sess)
                if not q:
                    del self.queues[key]
        sess.queues.clear()

    def _table_of(self, sess: Session, name: str) -> tuple[Table, int]:
        t = self.tables.get(name)
        if t is None:
            raise ProtocolError("no_such_table", f"no table named {name!r}", table=name)
        seat = sess.seats.get(name)
        if seat is None:
            raise ProtocolError("not_seated", f"you have no seat at table {name!r}", table=name)
        return t, seat

    # ================================================================ handlers
    def _on_heartbeat(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        pass

    def _on_ping(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        self.reply(sess, {"type": "pong", "time_ms": int(self.now() * 1000)}, rqid)

    def _on_bye(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        self._disconnect(sess)

    def _on_list_tables(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        self.reply(sess, {"type": "tables", "tables": [t.info() for t in self.tables.values()]}, rqid)

    def _on_queue(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        variant = msg.get("variant", "oklahoma")
        rules = self._rules(variant, msg.get("rules"))
        rw = rules.to_dict()
        key = f"{variant}/{hashlib.sha256(canonical_json(rw).encode()).hexdigest()[:8]}"
        if key in sess.queues:
            raise ProtocolError("already_seated", f"you are already in queue {key}")
        self._check_seat_limit(sess)
        q = self.queues.setdefault(key, [])
        q.append(sess)
        sess.queues.add(key)
        needed = rules.num_players
        self.reply(sess, {"type": "queued", "queue": key, "variant": variant, "rules": rw, "waiting": len(q), "needed": needed}, rqid)
        if len(q) >= needed:
            if len(self.tables) >= self.config.max_tables:
                return  # they wait until a table is free; the queue keeps its order
            group = q[:needed]
            del q[:needed]
            if not q:
                del self.queues[key]
            for s in group:
                s.queues.discard(key)
            t = self.create_table(self._new_name("q"), variant, rules, origin="quick")
            for i, s in enumerate(group):
                t.seats[i] = s
                s.seats[t.name] = i
            for i, s in enumerate(group):
                self.send(s, t.seated_msg(i))
            t.start_game()

    def _on_join(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        name = msg["table"]
        t = self.tables.get(name)
        want = msg.get("seat")
        if t is None:
            variant = msg.get("variant", "oklahoma")
            rules = self._rules(variant, msg.get("rules"))
            if want is not None and want >= rules.num_players:
                raise ProtocolError("bad_seat", f"{variant} has seats 0-{rules.num_players - 1}, not {want}", table=name)
            self._check_seat_limit(sess)
            self._check_table_limit()
            t = self.create_table(name, variant, rules, origin="named")
            self._sit(sess, t, 0 if want is None else want, rqid)
            return
        if t.reserved_tokens is not None:
            raise ProtocolError("forbidden", f"table {name!r} is reserved: its seats are taken with their tokens", table=name)
        if name in sess.seats:
            raise ProtocolError("already_seated", f"you already sit at seat {sess.seats[name]} of table {name!r}", table=name)
        if "variant" in msg and msg["variant"] != t.rules.variant:
            raise ProtocolError("rules_mismatch", f"table {name!r} plays {t.rules.variant}, not {msg['variant']}", table=name)
        if "rules" in msg and self._rules(t.rules.variant, msg["rules"]) != t.rules:
            raise ProtocolError("rules_mismatch", f"table {name!r} plays other rules: {canonical_json(t.rules_wire)}", table=name)
        free = t.free_seats()
        if not free:
            raise ProtocolError("table_full", f"every seat of table {name!r} is taken", table=name)
        if want is not None:
            if want >= t.num_seats or t.seats[want] is not None:
                raise ProtocolError("bad_seat", f"seat {want} of table {name!r} is not free (free: {free})", table=name)
            seat = want
        else:
            seat = free[0]
        self._check_seat_limit(sess)
        self._sit(sess, t, seat, rqid)

    def _on_leave(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        if "table" not in msg:
            if not sess.queues:
                raise ProtocolError("not_queued", "you are in no quick-match queue")
            self._unqueue(sess)
            self.reply_ok(sess, "leave", rqid)
            return
        t, seat = self._table_of(sess, msg["table"])
        self.reply_ok(sess, "leave", rqid)
        if t.status == PLAYING:
            t.forfeit(seat, "resigned")
        self._unseat(sess, t)

    def _on_act(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        t, seat = self._table_of(sess, msg["table"])
        try:
            t.on_act(sess, seat, msg, rqid)
        except ProtocolError as e:
            e.table = t.name
            raise
        if self.limiter is not None and sess.rid is not None:
            self.limiter.refund(sess.rid)  # an answer to its own prompt: never counted (referee.ratelimit)

    def _on_advise(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        t, seat = self._table_of(sess, msg["table"])
        try:
            t.on_advise(sess, seat, msg, rqid)
        except ProtocolError as e:
            e.table = t.name
            raise

    def _on_resign(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        t, seat = self._table_of(sess, msg["table"])
        if t.status != PLAYING:
            raise ProtocolError("no_game", f"no game is running at table {t.name!r}", table=t.name)
        self.reply_ok(sess, "resign", rqid)
        t.forfeit(seat, "resigned")

    def _on_rematch(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        t, seat = self._table_of(sess, msg["table"])
        if t.game_no == 0:
            raise ProtocolError("no_game", f"no game has been played at table {t.name!r} yet", table=t.name)
        if t.status == PLAYING:
            raise ProtocolError("game_in_progress", f"game {t.game_no} is still running at table {t.name!r}", table=t.name)
        t.rematch_ready[seat] = True
        self.reply_ok(sess, "rematch", rqid)
        status = encode({"type": "rematch_status", "table": t.name, "ready": list(t.rematch_ready), "game": t.game_no + 1})
        for s in t.seats:
            if s is not None:
                self.send_bytes(s, status)
        if t.full and all(t.rematch_ready):
            t.start_game()

    def _on_watch(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        name = msg["table"]
        t = self.tables.get(name)
        if t is None:
            raise ProtocolError("no_such_table", f"no table named {name!r}", table=name)
        full = bool(msg.get("full", False))
        if full and t.full_feed_delay_ms is None:
            raise ProtocolError("no_full_feed", f"table {name!r} offers no full-visibility feed", table=name)
        if name not in sess.watches and len(sess.watches) >= self.config.max_watches_per_session:
            raise ProtocolError("limit_reached", f"a session may watch at most {self.config.max_watches_per_session} tables", table=name)
        t.watchers[sess] = full
        sess.watches[name] = full
        self.send(sess, t.snapshot(None, full, rqid))

    def _on_unwatch(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        name = msg["table"]
        if name not in sess.watches:
            raise ProtocolError("not_seated", f"you are not watching table {name!r}", table=name)
        sess.watches.pop(name)
        t = self.tables.get(name)
        if t is not None:
            t.watchers.pop(sess, None)
        self.reply_ok(sess, "unwatch", rqid)

    def _on_sync(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        name = msg["table"]
        t = self.tables.get(name)
        if t is None:
            raise ProtocolError("no_such_table", f"no table named {name!r}", table=name)
        if name in sess.seats:
            seat = sess.seats[name]
            self.send(sess, t.snapshot(seat, False, rqid))
            t.send_prompt_to(seat)
        elif name in sess.watches:
            self.send(sess, t.snapshot(None, sess.watches[name], rqid))
        else:
            raise ProtocolError("not_seated", f"you neither sit at nor watch table {name!r}", table=name)

    def _on_create_table(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        t = self.create_table(
            table=msg.get("table"),
            variant=msg.get("variant", "oklahoma"),
            rules=msg.get("rules"),
            seed=msg.get("seed"),
            clock=msg.get("clock"),
            policies=msg.get("policies"),
            reserved=bool(msg.get("reserved", False)),
            players=msg.get("players"),
            full_feed_delay_ms=msg.get("full_feed_delay_ms"),
        )
        self.reply(sess, {"type": "table_created", "table": t.name, "seat_tokens": t.reserved_tokens}, rqid)

    def _on_close_table(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        name = msg["table"]
        t = self.tables.get(name)
        if t is None:
            raise ProtocolError("no_such_table", f"no table named {name!r}", table=name)
        self.reply_ok(sess, "close_table", rqid)
        self._close_table(t, f"closed by {sess.name}")


def _peek_id(frame: bytes, limit: int) -> tuple[Any, str | None]:
    """The id and type of an oversize frame, if it is a readable map (for the error)."""
    try:
        msg = decode(frame, limit)
    except ProtocolError:
        return None, None
    t = msg.get("type")
    return request_id(msg), t if isinstance(t, str) and len(t) <= 40 else None
