"""Sessions: who a client is, across connections (protocol.md §4.1, §10).

Identity is the referee-issued token, never the ZeroMQ routing id: libzmq accepts
duplicate routing ids silently and a reconnecting client gets a new one. A session keeps
its seats while its connection is gone (for the table's grace time) and is rebound to a
new routing id by a ``hello`` carrying its token.

When two live connections present one token, the newer ``hello`` wins and the older
connection is told ``session_taken`` (protocol 1.4), at once and for every later
message it sends, rather than ``hello_first``: §10.1 tells a client that gets
``hello_first`` to resume, so with that answer two processes sharing a token took the
seat from each other for ever. ``session_taken`` tells the client to stop.
"""

from __future__ import annotations

import hmac
import secrets
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from okgin.protocol import PROTOCOL_MAJOR, PROTOCOL_MINOR, ProtocolError, encode

from .extension import refuse_plain_hello

if TYPE_CHECKING:
    from .config import RefereeConfig
    from .extension import Extension
    from .lobby import Lobby
    from .recovery import Recovery
    from .sending import Sender
    from .table import Table
    from .tablehost import Host

_PLAYING, _CLOSED = "playing", "closed"  # referee.table's statuses (it imports this module)
#: The longest the referee spends releasing expired seats before it reads its socket again.
SLICE_S = 0.002
# Routing ids of connections whose session a newer connection took, remembered at most
# this many (oldest forgotten first): each costs a few dozen bytes, and a forgotten one
# only gets ``hello_first`` instead of ``session_taken`` (SessionDesk.taken).
MAX_TAKEN = 10_000


def opt_in(sess: Session, msg: dict[str, Any]) -> None:
    """A hello's 1.6 opt-ins (checked by the catalogue): ``advice_wait``, and its minor."""
    sess.advice_wait = bool(msg.get("advice_wait", False)) and sess.role == "player"
    minor = msg.get("minor")
    sess.minor = minor if isinstance(minor, int) and not isinstance(minor, bool) else 0


def new_token() -> str:
    """128 random bits as 32 hex digits (protocol.md §13)."""
    return secrets.token_hex(16)


@dataclass(eq=False)
class Session:
    """One client identity. ``rid`` is None while disconnected."""

    token: str
    name: str
    role: str
    rid: bytes | None = None
    last_recv: float = 0.0
    last_sent: float = 0.0
    seats: dict[str, int] = field(default_factory=dict)  # table name -> seat
    watches: dict[str, bool] = field(default_factory=dict)  # table name -> full feed?
    queues: set[str] = field(default_factory=set)
    dropped: int = 0  # messages that could not be queued for this peer
    events: bool = True  # protocol 1.1: False = no `event` messages for this session's seats
    batch: bool = False  # protocol 1.3: events held and carried by the seat's next prompt/hand_end/...
    opened_by: bytes | None = None  # the connection whose hello opened it (capped per connection)
    tables_made: int = 0  # tables this session created by joining new names, still open (capped)
    # 1.5 (referee.entropy): the nonce commitment of the hello that seated it, the
    # commitments hash it was asked to reveal for, and the nonce it revealed
    entropy_commit: str | None = None
    entropy_asked: str | None = None
    entropy_nonce: str | None = None
    # 1.6: a person or an agent (hello.advice_wait): sitting out at a table with an advice
    # window, the captain's prompt waits for its advice; the minor its hello said
    advice_wait: bool = False
    minor: int = 0

    @property
    def batched(self) -> bool:
        """Whether this session's seats get their events batched (1.3; events=false wins)."""
        return self.batch and self.events

    @property
    def connected(self) -> bool:
        return self.rid is not None


class SessionDesk:
    """Sessions and their connections: ``hello``, resume, liveness (protocol.md §4.1, §10).

    Owns ``sessions`` (token -> Session) and ``conns`` (routing id -> Session). What a
    session holds at tables (seats, watches, queue places) is the lobby's and the
    tables' business: the desk asks them to hold, resume or release it.

    Handed the settings, the sends and the clock (:class:`referee.tablehost.Host`) and the
    raw sends (:class:`referee.sending.Sender`); the referee wires in :attr:`lobby` (which
    is made after the desk, since it is handed the desk's sessions) and :attr:`recovery`.
    """

    def __init__(self, config: RefereeConfig, host: Host, sender: Sender) -> None:
        self.config = config
        self.host = host
        self.sender = sender
        self.lobby: Lobby = None  # type: ignore[assignment]  # wired by the referee
        self.recovery: Recovery | None = None  # crash recovery (referee.recovery), when it is on
        #: a service plugged into the referee (referee.extension: the arena), which owns every hello then
        self.extension: Extension | None = None
        self.sessions: dict[str, Session] = {}
        self.conns: dict[bytes, Session] = {}
        self.opened: dict[bytes, int] = {}  # connection -> sessions it opened that are still held
        # Seats whose grace ran out, released in slices (see grace_expired).
        self._expired: deque[tuple[Table, int, Session]] = deque()
        self._reaping = False
        # routing id of a connection whose session was taken -> (token, when it last spoke);
        # ordered by that time (re-inserted on every message), so tick() prunes from the front.
        self.taken: dict[bytes, tuple[str, float]] = {}

    # ---------------------------------------------------------------- hello
    def hello(self, rid: bytes, msg: dict[str, Any], rqid: Any) -> None:
        if msg["protocol"] != PROTOCOL_MAJOR:
            raise ProtocolError("version_mismatch", f"this referee speaks protocol {PROTOCOL_MAJOR}, not {msg['protocol']}")
        if self.extension is not None:
            self.extension.hello(rid, msg, rqid)  # it admits the connection (admit), now or later
            return
        refuse_plain_hello(msg)
        role = msg["role"]
        if role == "admin":
            self.check_admin(msg.get("admin_key"))
        token = msg.get("token")
        if token:
            if self.recovery is not None:
                self.recovery.claim(token)  # a session or reserved seat restored after a crash
            sess = self.sessions.get(token)
            if sess is not None:
                self.resume(sess, rid, role, rqid, msg.get("events", True), msg.get("batch_events", False), msg)
                return
            res = self.lobby.reserved.get(token)
            if res is None:
                raise ProtocolError("bad_token", "this referee holds no session or reserved seat for that token")
            if role != "player":
                raise ProtocolError("forbidden", "a reserved seat token is for role player")
            table, seat = res
            sess = self.new_session(rid, msg["name"], role, token)
            sess.events = msg.get("events", True)
            sess.batch = msg.get("batch_events", False)
            opt_in(sess, msg)
            sess.entropy_commit = msg.get("entropy_commit")
            self.welcome(sess, False, rqid)
            self.lobby.sit(sess, table, seat, None)
            return
        self.check_caps(rid)
        sess = self.new_session(rid, msg["name"], role, new_token())
        sess.events = msg.get("events", True)
        sess.batch = msg.get("batch_events", False)
        opt_in(sess, msg)
        self.welcome(sess, False, rqid)

    def check_caps(self, rid: bytes) -> None:
        """Refuse a new session past the referee's caps: in all, and per connection."""
        if len(self.sessions) >= self.config.max_sessions:
            raise ProtocolError("limit_reached", f"this referee holds {len(self.sessions)} sessions, its limit")
        cap = self.config.max_sessions_per_connection
        if self.opened.get(rid, 0) >= cap:
            raise ProtocolError(
                "limit_reached",
                f"this connection has opened {cap} sessions that are still held, its limit; resume one with its token",
            )

    def admit(self, rid: bytes, msg: dict[str, Any], rqid: Any, name: str, role: str, extra: dict[str, Any]) -> Session:
        """Open a session an extension has authenticated (referee.extension), and welcome it
        with the extension's fields ``extra``. Raises ``already_welcomed`` if the connection
        got a session meanwhile, and ``limit_reached`` past the caps."""
        if rid in self.conns:
            raise ProtocolError("already_welcomed", "this connection already has a session")
        self.check_caps(rid)
        sess = self.new_session(rid, name, role, new_token())
        sess.events = msg.get("events", True)
        sess.batch = msg.get("batch_events", False)
        opt_in(sess, msg)
        self.welcome(sess, False, rqid, extra)
        return sess

    def take_over(self, sess: Session) -> None:
        """A newer session of the same identity won (an extension's accounts): tell ``sess``'s
        connection ``session_taken`` (and every later message of it), and close ``sess``."""
        rid = sess.rid
        self.disconnect(sess)
        if rid is not None:
            self.take(rid, sess.token)

    def check_admin(self, given: Any) -> None:
        """Admin is closed unless the key matches, or the referee was started with admin
        open (protocol.md §13): an open admin lets anyone who can connect close games."""
        key = self.config.admin_key
        if key is None:
            if self.config.open_admin:
                return
            raise ProtocolError(
                "auth_failed",
                "role admin is closed on this referee: it has no admin key (an embedded referee: set RefereeConfig.admin_key;"
                " `okgin referee` generates one at start unless given --admin-key or --open-admin)",
            )
        if not isinstance(given, str) or not hmac.compare_digest(given.encode(), key.encode()):
            raise ProtocolError(
                "auth_failed",
                "role admin needs this referee's admin_key (`okgin referee` prints it at start and writes it to"
                " JOURNAL_DIR/.okgin-state/admin.key, or takes it from --admin-key / OKGIN_ADMIN_KEY)",
            )

    def new_session(self, rid: bytes, name: str, role: str, token: str) -> Session:
        now = self.host.now()
        sess = Session(token=token, name=name, role=role, rid=rid, last_recv=now, last_sent=now, opened_by=rid)
        self.sessions[token] = sess
        self.opened[rid] = self.opened.get(rid, 0) + 1
        self.conns[rid] = sess
        if self.recovery is not None:
            self.recovery.session_added(sess)
        return sess

    def adopt(self, sess: Session) -> None:
        """A session restored after a crash whose token was just presented (referee.recovery)."""
        self.sessions[sess.token] = sess

    def welcome(self, sess: Session, resumed: bool, rqid: Any, extra: dict[str, Any] | None = None) -> None:
        cfg = self.config
        self.host.reply(
            sess,
            {
                "type": "welcome",
                "protocol": PROTOCOL_MAJOR,
                "minor": PROTOCOL_MINOR,
                "token": sess.token,
                "role": sess.role,
                "name": sess.name,
                "resumed": resumed,
                "heartbeat_ms": cfg.heartbeat_ms,
                "liveness": cfg.liveness,
                "max_message_bytes": cfg.max_message_bytes,
                "referee": self.host.software,
                "events": sess.events,
                "batch_events": sess.batch,
                **({"advice_wait": True} if sess.advice_wait else {}),  # 1.6: granted
                **(extra or {}),  # an extension's (1.6: the arena's account and presets)
            },
            rqid,
        )

    def resume(
        self, sess: Session, rid: bytes, role: str, rqid: Any, events: bool, batch: bool, msg: dict[str, Any] | None = None
    ) -> None:
        if role != sess.role:
            raise ProtocolError("forbidden", f"this token belongs to a {sess.role} session, not {role}")
        sess.events = events
        sess.batch = batch
        if msg is not None:
            opt_in(sess, msg)
        if sess.rid is not None and sess.rid != rid:
            self.conns.pop(sess.rid, None)
            self.take(sess.rid, sess.token)
        sess.rid = rid
        self.conns[rid] = sess
        heard = sess.last_recv  # before this hello: did the client speak after its game's end?
        sess.last_recv = self.host.now()
        self.welcome(sess, True, rqid)
        tables = self.lobby.tables
        for name, seat in list(sess.seats.items()):
            t = tables[name]
            if t.cancel_grace(seat):
                if t.journal is not None:
                    t.journal.write("reconnect", seat=seat)
                t.seat_back(seat)
                t.seat_status(seat, True, None)
            self.host.send(sess, t.snapshot(seat, False))
            t.send_missed_end(seat, sess, heard)
            t.send_prompt_to(seat)

    def take(self, rid: bytes, token: str) -> None:
        """A newer connection resumed the session of ``rid``: tell ``rid`` at once, and
        remember it so that its later messages get ``session_taken`` too (Dispatcher)."""
        taken = self.taken
        taken.pop(rid, None)
        taken[rid] = (token, self.host.now())
        while len(taken) > MAX_TAKEN:
            del taken[next(iter(taken))]
        err = ProtocolError("session_taken", TAKEN_MESSAGE)
        self.sender.raw_send(rid, encode(err.to_wire()))

    def still_taken(self, rid: bytes) -> bool:
        """Whether ``rid`` is a connection whose session was taken (and note that it spoke)."""
        entry = self.taken.pop(rid, None)
        if entry is None:
            return False
        self.taken[rid] = (entry[0], self.host.now())
        return True

    # ---------------------------------------------------------------- liveness
    def disconnect(self, sess: Session) -> None:
        """The session's connection is gone: drop queues and watches, hold its seats."""
        if sess.rid is not None and self.extension is not None:
            self.extension.gone(sess)
        if sess.rid is not None:
            self.conns.pop(sess.rid, None)
            sess.rid = None
        lobby = self.lobby
        lobby.unqueue(sess)
        lobby.unwatch_all(sess)
        # Silent since its last message and the heartbeat it then owed us (protocol.md §10):
        # the away clock (§8) stops a seat's move from then, not from when we noticed.
        since = min(self.host.now(), sess.last_recv + self.config.heartbeat_ms / 1000)
        for name, seat in list(sess.seats.items()):
            t = lobby.tables[name]
            if t.journal is not None:
                t.journal.write("disconnect", seat=seat)
            t.start_grace(seat, t.policies.disconnect_grace_ms / 1000, self.grace_expired)
            t.seat_away(seat, since)
            t.seat_status(seat, False, t.policies.disconnect_grace_ms)
        self.maybe_forget(sess)

    def grace_expired(self, t: Table, seat: int, sess: Session) -> None:
        """A seat's grace ran out: release it soon, in a slice of bounded time.

        Why not at once: one session may hold many seats, and many sessions may be cut
        off together; their timers then all fall due in one turn of the loop, where
        releasing thousands of seats (forfeits, journals, closing tables) stalled every
        other table for seconds. Slices of SLICE_S leave the socket a turn between them.
        """
        t.grace_ended(seat)
        self._expired.append((t, seat, sess))
        if not self._reaping:
            self._reaping = True
            self.host.loop.call_soon(self._reap)

    def _reap(self) -> None:
        now = self.host.now
        end = now() + SLICE_S
        todo = self._expired
        while todo:
            self._release(*todo.popleft())
            if now() >= end:
                break
        if todo:
            self.host.loop.call_soon(self._reap)
        else:
            self._reaping = False
        self.host.kick()

    def _release(self, t: Table, seat: int, sess: Session) -> None:
        if t.seats[seat] is not sess or sess.connected or t.status == _CLOSED:
            return
        if t.status == _PLAYING:
            t.forfeit(seat, "disconnect")
        self.lobby.unseat(sess, t)

    def maybe_forget(self, sess: Session) -> None:
        if sess.rid is None and not sess.seats:
            if self.sessions.pop(sess.token, None) is sess and sess.opened_by is not None:
                left = self.opened.get(sess.opened_by, 0) - 1
                if left > 0:
                    self.opened[sess.opened_by] = left
                else:
                    self.opened.pop(sess.opened_by, None)
            if self.recovery is not None:
                self.recovery.session_forgotten(sess)

    def credit_stall(self, lost_s: float) -> None:
        """The referee did not run for ``lost_s`` (referee.stalls): nobody was silent for
        that time, since nobody could reach us."""
        for sess in self.conns.values():
            sess.last_recv += lost_s

    def tick(self) -> None:
        """Heartbeats out, silent peers declared gone (protocol.md §10)."""
        now = self.host.now()
        hb = self.config.heartbeat_ms / 1000
        dead_after = hb * self.config.liveness
        beat = encode({"type": "heartbeat"})
        for sess in list(self.conns.values()):
            if now - sess.last_recv > dead_after:
                self.disconnect(sess)
            elif now - sess.last_sent >= hb:
                self.host.send_bytes(sess, beat)
        taken = self.taken
        while taken:  # ordered by last message: the silent ones are at the front
            rid = next(iter(taken))
            if now - taken[rid][1] <= dead_after:
                break
            del taken[rid]


TAKEN_MESSAGE = (
    "a newer connection resumed this session with its token, so this connection no longer has it;"
    " do not resume (two processes sharing one token would take the seat from each other): stop"
)
