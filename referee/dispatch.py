"""The dispatcher: one frame in, one handler called, every failure one ``error`` out.

Small on purpose: it checks what is common to every message (framing, decoding, schema,
session, role) and hands the message to its owner: the session desk
(:mod:`referee.sessions`), the lobby (:mod:`referee.lobby`) or a table
(:mod:`referee.tables`). No client input can raise out of :meth:`Dispatcher.handle`:
unexpected exceptions become ``internal`` errors and are logged.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from okgin.protocol import ROLES, ProtocolError, decode, encode, request_id, validate

from .tables import PLAYING

if TYPE_CHECKING:
    from .server import Referee
    from .sessions import Session

log = logging.getLogger("okgin.referee")

Handler = Callable[["Session", dict[str, Any], Any], None]


class Dispatcher:
    """Routes every decoded message to its handler. See the module docstring."""

    def __init__(self, hub: Referee) -> None:
        self.hub = hub
        self.config = hub.config
        lobby = hub.lobby
        self.handlers: dict[str, Handler] = {
            "heartbeat": self.on_heartbeat,
            "ping": self.on_ping,
            "bye": self.on_bye,
            "list_tables": lobby.on_list_tables,
            "queue": lobby.on_queue,
            "join": lobby.on_join,
            "leave": lobby.on_leave,
            "act": self.on_act,
            "advise": self.on_advise,
            "resign": self.on_resign,
            "rematch": self.on_rematch,
            "watch": lobby.on_watch,
            "unwatch": lobby.on_unwatch,
            "sync": lobby.on_sync,
            "create_table": lobby.on_create_table,
            "close_table": lobby.on_close_table,
        }

    def handle(self, frames: list[bytes]) -> None:
        hub = self.hub
        rid = frames[0]
        limiter = hub.limiter
        if limiter is not None and not limiter.admit(rid):
            return  # over its rate: dropped unread (referee.ratelimit)
        t: str | None = None
        rqid: Any = None
        stats = hub.stats
        try:
            if len(frames) != 2:
                raise ProtocolError(
                    "bad_frame",
                    f"one frame per message, got {len(frames) - 1} (a REQ socket adds an empty frame: use a DEALER)",
                )
            sess = hub.conns.get(rid)
            if sess is not None:
                sess.last_recv = hub.now()
                if hub.lag is not None and hub.lag.lagging:
                    hub.lag.on_message(sess)
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
                hub.desk.hello(rid, msg, rqid)
                return
            if t == "hello":
                raise ProtocolError("already_welcomed", "this connection already has a session; open a new connection to resume another")
            if sess.role not in ROLES[t]:
                raise ProtocolError("forbidden", f"a {sess.role} may not send {t}")
            self.handlers[t](sess, msg, rqid)
        except ProtocolError as e:
            stats["errors"] += 1
            if e.request is None and t is not None:
                e.request = t
            hub.raw_send(rid, encode(e.to_wire(rqid)))
        except Exception:
            stats["internal"] += 1
            log.error("internal error on %s: %s", t, traceback.format_exc())
            err = ProtocolError("internal", "the referee failed on this request (a bug, logged); nothing was changed", request=t)
            hub.raw_send(rid, encode(err.to_wire(rqid)))

    # ---------------------------------------------------------------- session-level
    def on_heartbeat(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        pass

    def on_ping(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        self.hub.reply(sess, {"type": "pong", "time_ms": int(self.hub.now() * 1000)}, rqid)

    def on_bye(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        self.hub.desk.disconnect(sess)

    # ---------------------------------------------------------------- table-level
    def on_act(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        hub = self.hub
        t, seat = hub.lobby.table_of(sess, msg["table"])
        try:
            t.on_act(sess, seat, msg, rqid)
        except ProtocolError as e:
            e.table = t.name
            raise
        if hub.limiter is not None and sess.rid is not None:
            hub.limiter.refund(sess.rid)  # an answer to its own prompt: never counted (referee.ratelimit)

    def on_advise(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        t, seat = self.hub.lobby.table_of(sess, msg["table"])
        try:
            t.on_advise(sess, seat, msg, rqid)
        except ProtocolError as e:
            e.table = t.name
            raise

    def on_resign(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        t, seat = self.hub.lobby.table_of(sess, msg["table"])
        if t.status != PLAYING:
            raise ProtocolError("no_game", f"no game is running at table {t.name!r}", table=t.name)
        self.hub.reply_ok(sess, "resign", rqid)
        t.forfeit(seat, "resigned")

    def on_rematch(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        t, seat = self.hub.lobby.table_of(sess, msg["table"])
        if t.game_no == 0:
            raise ProtocolError("no_game", f"no game has been played at table {t.name!r} yet", table=t.name)
        if t.status == PLAYING:
            raise ProtocolError("game_in_progress", f"game {t.game_no} is still running at table {t.name!r}", table=t.name)
        self.hub.reply_ok(sess, "rematch", rqid)
        t.rematch(seat)


def _peek_id(frame: bytes, limit: int) -> tuple[Any, str | None]:
    """The id and type of an oversize frame, if it is a readable map (for the error)."""
    try:
        msg = decode(frame, limit)
    except ProtocolError:
        return None, None
    t = msg.get("type")
    return request_id(msg), t if isinstance(t, str) and len(t) <= 40 else None
