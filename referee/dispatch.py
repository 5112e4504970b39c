"""The dispatcher: one frame in, one handler called, every failure one ``error`` out.

Small on purpose: it checks what is common to every message (framing, decoding, schema,
session, role) and hands the message to its owner: the session desk
(:mod:`referee.sessions`), the lobby (:mod:`referee.lobby`) or a table
(:mod:`referee.table`). No client input can raise out of :meth:`Dispatcher.handle`:
unexpected exceptions become ``internal`` errors and are logged.

Routing ids the client chose are refused (``bad_identity``, protocol 1.4) before
anything else: libzmq hands a new connection that sets ``ZMQ_ROUTING_ID`` the id it
asks for as soon as the previous holder's pipe is gone, so a known id was enough to
speak as a dropped client whose session the referee still thought connected. Ids
libzmq generates are 5 bytes, a zero byte then a counter; a client-set id of that shape
still passes (libzmq 4.3 does not refuse zero-led client ids), but it must guess a
32-bit counter the referee never reveals.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from okgin.protocol import ROLES, ProtocolError, decode, encode, peek_id, request_id, validate
from okgin.protocol.catalogue import ARENA_CLIENT_TYPES

from .sessions import TAKEN_MESSAGE
from .table import FINISHED, PLAYING

if TYPE_CHECKING:
    from .config import RefereeConfig
    from .doors import Door
    from .lagging import LagGuard
    from .lobby import Lobby
    from .ratelimit import RateLimiter
    from .sending import Sender
    from .sessions import Session, SessionDesk
    from .tablehost import Host

log = logging.getLogger("okgin.referee")

Handler = Callable[["Session", dict[str, Any], Any], None]
# bad_identity is answered at most once per routing id per this many seconds, and at
# most this many ids are remembered for it (a flood of new ids is bounded by the number
# of connections libzmq accepts, each answered once).
IDENTITY_ANSWER_EVERY_S = 1.0
MAX_REFUSED_IDS = 10_000
BAD_IDENTITY_MESSAGE = (
    "this connection set its own routing id: do not set ZMQ_ROUTING_ID / identity on the DEALER"
    " (the referee knows a client by its token, and refuses client-chosen routing ids)"
)


class Dispatcher:
    """Routes every decoded message to its handler. See the module docstring.

    Handed what it uses, not the referee: the session desk (``hello``, connections), the
    lobby (a seat's table), the sends, the rate limiter and the lagging guard (either may
    be None: off), and ``routes``, the other parts' handlers by message type (the watch
    desk's, the admin desk's, the entropy desk's, the lobby's), to which it adds its own."""

    def __init__(self, config: RefereeConfig, desk: SessionDesk, lobby: Lobby, sender: Sender, host: Host,
                 limiter: RateLimiter | None, lag: LagGuard | None, routes: Mapping[str, Handler]) -> None:
        self.config = config
        self.desk = desk
        self.conns = desk.conns
        self.lobby = lobby
        self.sender = sender
        self.stats = sender.stats
        self.now = sender.now
        self.host = host
        self.limiter = limiter
        self.lag = lag
        self.nbytes = 0  # the size of the frame being handled (charged to its sender)
        self.refused: dict[bytes, float] = {}  # client-chosen routing id -> when bad_identity was sent
        self.handlers: dict[str, Handler] = {
            **dict.fromkeys(ARENA_CLIENT_TYPES, self.not_an_arena),  # 1.6: unless an extension (the arena) handles them
            **routes,
            "heartbeat": self.on_heartbeat,
            "ping": self.on_ping,
            "bye": self.on_bye,
            "act": self.on_act,
            "advise": self.on_advise,
            "resign": self.on_resign,
            "rematch": self.on_rematch,
        }

    def handle(self, frames: list[bytes], door: Door | None = None) -> None:
        """One message; ``door``: the seat door it came through (referee.doors), or None."""
        rid = frames[0]
        if door is None:
            if len(rid) != 5 or rid[0]:  # not an id libzmq generated: the client chose it
                # (before the rate limiter: a chosen id must not share a door peer's budget)
                self.refuse_identity(rid)
                return
        elif len(rid) != 11 or rid[6]:
            self.refuse_identity(rid, door=True)
            return
        self.nbytes = nbytes = len(frames[-1])
        limiter = self.limiter
        if limiter is not None and not limiter.admit(rid, nbytes):
            return  # over its budget: dropped unread (referee.ratelimit)
        t: str | None = None
        rqid: Any = None
        msg: Any = None
        sess: Session | None = None
        stats = self.stats
        try:
            if len(frames) != 2:
                raise ProtocolError(
                    "bad_frame",
                    f"one frame per message, got {len(frames) - 1} (a REQ socket adds an empty frame: use a DEALER)",
                )
            sess = self.conns.get(rid)
            if sess is not None:
                sess.last_recv = self.now()
                lag = self.lag
                if lag is not None and lag.lagging:
                    lag.on_message(sess)
            try:
                msg = decode(frames[1], self.config.max_message_bytes)
            except ProtocolError:
                rqid, t = peek_id(frames[1])  # still echo the id if a bounded prefix shows it
                raise
            rqid = request_id(msg)
            t = validate(msg)
            if door is not None:  # seat-only (referee.doors): refused before anything changes
                if sess is None and t == "hello":
                    door.admit_hello(msg)
                else:
                    door.admit(t, msg)
            if sess is None:
                desk = self.desk
                if t != "hello":
                    if desk.taken and desk.still_taken(rid):
                        raise ProtocolError("session_taken", TAKEN_MESSAGE)
                    raise ProtocolError("hello_first", f"send hello first; this connection has no session yet (got {t})")
                if desk.taken:
                    desk.taken.pop(rid, None)  # a deliberate hello on it: a connection like any other
                desk.hello(rid, msg, rqid)
                return
            if t == "hello":
                raise ProtocolError(
                    "already_welcomed", "this connection already has a session; open a new connection to resume another"
                )
            if sess.role not in ROLES[t]:
                raise ProtocolError("forbidden", f"a {sess.role} may not send {t}")
            self.handlers[t](sess, msg, rqid)
        except ProtocolError as e:
            stats["errors"] += 1
            if e.request is None and t is not None:
                e.request = t
            self.sender.raw_send(rid, encode(e.to_wire(rqid)))
            if e.name == "bad_message" and e.request == "act" and sess is not None:
                self.reprompt(sess, msg)
        except Exception:
            stats["internal"] += 1
            log.error("internal error on %s: %s", t, traceback.format_exc())
            err = ProtocolError("internal", "the referee failed on this request (a bug, logged); nothing was changed", request=t)
            self.sender.raw_send(rid, encode(err.to_wire(rqid)))

    def reprompt(self, sess: Session, msg: Any) -> None:
        """After ``bad_message`` on an ``act``: send the sender's pending prompt again.

        Why: a malformed answer (``seq`` as a string, say) never reaches the table, so
        without this an untimed game waits for ever on a prompt its player already
        answered, badly (protocol.md §5.12). Only when the act names a table where the
        sender sits with the prompt pending; once per bad message, which the rate
        limiter has charged like any other (nothing is refunded), so a client cannot
        make the referee send more than it sends itself.
        """
        name = msg.get("table") if isinstance(msg, dict) else None
        if not isinstance(name, str):
            return
        t = self.lobby.tables.get(name)
        seat = sess.seats.get(name)
        if t is None or seat is None or t.status != PLAYING:
            return
        p = t.pending
        if p is not None and p.seat == seat:
            t.send_prompt_to(seat)

    def refuse_identity(self, rid: bytes, door: bool = False) -> None:
        """Answer a client-chosen routing id with ``bad_identity``, at most once a second.

        Nothing of the frame is read and no session is made for it. Why bounded: each
        frame of a flood would otherwise cost an answer; remembered ids are swept when
        the table of them is full, and cleared if all are recent (then some may be
        answered twice in a second: still one answer per frame at worst)."""
        now = self.now()
        refused = self.refused
        last = refused.get(rid)
        if last is not None and now - last < IDENTITY_ANSWER_EVERY_S:
            return
        if last is None and len(refused) >= MAX_REFUSED_IDS:
            for k in [k for k, v in refused.items() if now - v >= IDENTITY_ANSWER_EVERY_S]:
                del refused[k]
            if len(refused) >= MAX_REFUSED_IDS:
                refused.clear()
        refused[rid] = now
        self.stats["errors"] += 1
        data = encode(ProtocolError("bad_identity", BAD_IDENTITY_MESSAGE).to_wire())
        if door:
            self.sender.raw_send(rid, data)
        else:
            self.sender.raw_send_main(rid, data)

    # ---------------------------------------------------------------- session-level
    def not_an_arena(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        raise ProtocolError(
            "not_an_arena", f"{msg['type']} is an arena's request (protocol.md §19); this is a plain referee"
        )

    def on_heartbeat(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        pass

    def on_ping(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        self.host.reply(sess, {"type": "pong", "time_ms": int(self.now() * 1000)}, rqid)

    def on_bye(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        self.desk.disconnect(sess)

    # ---------------------------------------------------------------- table-level
    def on_act(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        t, seat = self.lobby.table_of(sess, msg["table"])
        try:
            free = t.on_act(sess, seat, msg, rqid)
        except ProtocolError as e:
            e.table = t.name
            raise
        limiter = self.limiter
        if free and limiter is not None and sess.rid is not None:
            limiter.refund(sess.rid, self.nbytes)  # an answer to its own prompt: not counted (referee.ratelimit)

    def on_advise(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        t, seat = self.lobby.table_of(sess, msg["table"])
        try:
            t.on_advise(sess, seat, msg, rqid)
        except ProtocolError as e:
            e.table = t.name
            raise

    def on_resign(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        t, seat = self.lobby.table_of(sess, msg["table"])
        if t.status != PLAYING:
            raise ProtocolError("no_game", f"no game is running at table {t.name!r}", table=t.name)
        self.host.reply_ok(sess, "resign", rqid, t.name)
        t.forfeit(seat, "resigned")

    def on_rematch(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        t, seat = self.lobby.table_of(sess, msg["table"])
        if t.game_no == 0:
            raise ProtocolError("no_game", f"no game has been played at table {t.name!r} yet", table=t.name)
        if t.status == PLAYING:
            if t.consented_game == t.game_no:
                # 1.6: this game started on every seat's consent, so this rematch crossed its
                # start (a client that answered a rematch_status sent before its first
                # rematch was read): it asked for what is running, and changes nothing
                self.host.reply_ok(sess, "rematch", rqid, t.name)
                return
            raise ProtocolError("game_in_progress", f"game {t.game_no} is still running at table {t.name!r}", table=t.name)
        if t.status != FINISHED:
            # a seat is free: consent is given to the players at a full table (§5.18),
            # and whoever takes the free seat asks for the game by joining
            raise ProtocolError(
                "no_game",
                f"table {t.name!r} has a free seat: ask for a rematch once it is full (a rematch_status will ask you)",
                table=t.name,
            )
        self.host.reply_ok(sess, "rematch", rqid, t.name)
        t.rematch(seat)

