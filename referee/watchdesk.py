"""The watch desk: what a client may look at (protocol.md §5.6, §5.9, §5.10, §11).

Listing tables a page at a time, watching a table (its public feed, or the full feed for
the organiser's broadcast), unwatching it, and ``sync`` (a fresh snapshot for a seat or a
watcher). Nothing here changes a game: the desk reads the lobby's tables and tells a table
who watches it (:meth:`referee.table.Table.add_watcher`).

It is handed what it uses: the lobby's table index, the settings, the send functions
(:class:`referee.tablehost.Host`) and the rate limiter, which charges a page of tables to
whoever asked for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from okgin.protocol import ProtocolError
from okgin.protocol.catalogue import DEFAULT_PAGE

if TYPE_CHECKING:
    from .config import RefereeConfig
    from .ratelimit import RateLimiter
    from .sessions import Session
    from .table import Table
    from .tablehost import Host

__all__ = ["WatchDesk"]


class WatchDesk:
    """``list_tables``, ``watch``, ``unwatch`` and ``sync``. See the module docstring."""

    def __init__(self, tables: dict[str, Table], config: RefereeConfig, host: Host, limiter: RateLimiter | None) -> None:
        self.tables = tables  # the lobby's, read only
        self.config = config
        self.host = host
        self.limiter = limiter

    def on_list_tables(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        """One page of tables (1.4), in creation order, optionally filtered.

        Why paged: at 10,000 tables a full list was 4 MB, and 40 requests nobody read
        held 170 MB in the referee's send queues and stalled its loop for 4.5 s. A page
        is at most MAX_PAGE tables; ``next`` continues after the last one (an opaque
        cursor: the table's creation number), so tables made meanwhile are not missed.
        """
        limit = msg.get("limit", DEFAULT_PAGE)
        after = -1
        if "cursor" in msg:
            cur = msg["cursor"]
            if not (cur.isascii() and cur.isdigit()):  # "²".isdigit() is true, and int() refuses it
                raise ProtocolError("bad_message", "cursor: pass back the 'next' string of a tables reply")
            after = int(cur)
        variant, status, want_open = msg.get("variant"), msg.get("status"), msg.get("open", False)
        page: list[dict[str, Any]] = []
        total = 0
        last = after
        more = False
        for t in self.tables.values():
            if variant is not None and t.rules.variant != variant:
                continue
            if status is not None and t.status != status:
                continue
            if want_open and (t.reserved_tokens is not None or t.full):
                continue
            total += 1
            if t.serial <= after:
                continue
            if len(page) < limit:
                page.append(t.info())
                last = t.serial
            else:
                more = True
        reply = self.host.encode(
            {
                "type": "tables",
                "tables": page,
                "next": str(last) if more else None,
                "total": total,
                **({} if rqid is None else {"id": rqid}),
            }
        )
        limiter = self.limiter
        if limiter is not None and sess.rid is not None:
            limiter.charge(sess.rid, len(reply))  # the page, not the request, is what it costs
        self.host.send_bytes(sess, reply)

    def on_watch(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        name = msg["table"]
        t = self.tables.get(name)
        if t is None:
            raise ProtocolError("no_such_table", f"no table named {name!r}", table=name)
        full = bool(msg.get("full", False))
        events = bool(msg.get("events", True))
        if full:
            if not events:
                # the full feed is released a hand at a time, events and all: nothing to decline
                raise ProtocolError("bad_message", "events: false is for the public feed only (watch without full)",
                                    table=name)
            self.check_full_watch(sess, t, msg.get("broadcast_token"))
        if name not in sess.watches and len(sess.watches) >= self.config.max_watches_per_session:
            raise ProtocolError(
                "limit_reached", f"a session may watch at most {self.config.max_watches_per_session} tables", table=name
            )
        t.add_watcher(sess, full, events)
        self.host.send(sess, t.snapshot(None, full, rqid))

    def check_full_watch(self, sess: Session, t: Table, token: Any) -> None:
        """May ``sess`` watch ``t``'s full feed? Raises ``no_full_feed`` or ``broadcast_only``.

        Why a credential: the full feed shows every hand and the stock, so it is for the
        organiser's broadcast (an admin session, or whoever the organiser gives the
        table's broadcast token). Why a player is refused even with one: its own session
        must never see the cards it plays against; a second session it opens with a
        token it was given is the organiser's trust, not the referee's to judge (§11).
        """
        name = t.name
        if t.full_feed_delay_ms is None:
            raise ProtocolError("no_full_feed", f"table {name!r} offers no full-visibility feed", table=name)
        if t.is_player(sess):
            raise ProtocolError(
                "broadcast_only",
                f"you play at table {name!r}: its full feed is never for its players (watch without full)",
                table=name,
            )
        if sess.role != "admin" and not t.broadcast_ok(token):
            raise ProtocolError(
                "broadcast_only",
                f"table {name!r}'s full feed needs its broadcast_token (from table_created) or an admin session",
                table=name,
            )

    def on_unwatch(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        name = msg["table"]
        if name not in sess.watches:
            raise ProtocolError("not_seated", f"you are not watching table {name!r}", table=name)
        t = self.tables.get(name)
        if t is not None:
            t.remove_watcher(sess)
        else:
            sess.watches.pop(name)
        self.host.reply_ok(sess, "unwatch", rqid, name)

    def on_sync(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        name = msg["table"]
        t = self.tables.get(name)
        if t is None:
            raise ProtocolError("no_such_table", f"no table named {name!r}", table=name)
        if name in sess.seats:
            seat = sess.seats[name]
            self.host.send(sess, t.snapshot(seat, False, rqid))
            t.send_prompt_to(seat)
        elif name in sess.watches:
            self.host.send(sess, t.snapshot(None, sess.watches[name], rqid))
        else:
            raise ProtocolError("not_seated", f"you neither sit at nor watch table {name!r}", table=name)
