"""The lobby: tables and who sits where (protocol.md §4.2, §5.6-§5.9, §5.19-§5.21).

Owns the referee's tables, the quick-match queues and the reserved seat tokens. Every
request is checked completely before anything changes (a refused request changes
nothing, protocol.md §3). Seating itself is the table's (:meth:`Table.sit`,
:meth:`Table.unseat`, :meth:`Table.close`); the lobby decides who may sit where and
keeps its own indexes in step. Watching is :mod:`referee.watchdesk`'s, an organiser's
requests :mod:`referee.admindesk`'s.

The lobby is handed what it uses: the settings, the sends and the table host
(:class:`referee.tablehost.Host`), and of the session desk and the doors one call each.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from okgin import RuleError, RuleSet, canonical_json
from okgin.protocol import ProtocolError
from okgin.protocol.catalogue import MAX_NAME

from .config import MAX_MS, Clock, Policies
from .table import FINISHED, PLAYING, REVEAL_AT_END, REVEAL_DEFERRED, WAITING, Table

if TYPE_CHECKING:
    from .config import RefereeConfig
    from .sessions import Session
    from .tablehost import Host


class Lobby:
    """Tables, queues and reserved seats of one referee. See the module docstring."""

    def __init__(
        self,
        config: RefereeConfig,
        host: Host,
        sessions: dict[str, Session],
        forget: Callable[[Session], None],
        close_doors: Callable[[str], None],
    ) -> None:
        self.config = config
        #: the sends and what every table is handed (referee.tablehost)
        self.host = host
        #: the session desk's sessions by token (read only: a closed table's reserved tokens)
        self.sessions = sessions
        #: the desk's ``maybe_forget``: a session that holds nothing more and is gone is forgotten
        self.forget = forget
        #: the seat doors' ``close_table`` (referee.doors): a table's doors go with it
        self.close_doors = close_doors
        self.tables: dict[str, Table] = {}
        self.queues: dict[str, list[Session]] = {}
        self.reserved: dict[str, tuple[Table, int]] = {}
        self._counter = 0
        self.made_by: dict[str, Session] = {}  # named table -> the session whose join made it (capped)
        self._serial = 0  # tables created so far: each table's creation number (list_tables' cursor)

    # ---------------------------------------------------------------- helpers
    def rules(self, variant: str, partial: Any) -> RuleSet:
        d = dict(partial or {})
        if "knock_limit" in d and d["knock_limit"] is None:  # the schema's Rules: "upcard" or 0-10, never nil
            raise ProtocolError("bad_rules", "knock_limit must be 'upcard' or a whole number 0-10, not nil")
        if "variant" in d and d["variant"] != variant:
            raise ProtocolError("bad_rules", f"rules say variant {d['variant']!r} but the request says {variant!r}")
        d["variant"] = variant
        try:
            return RuleSet.from_dict(d)
        except (RuleError, TypeError, ValueError) as e:
            raise ProtocolError("bad_rules", str(e)) from None

    def check_seat_limit(self, sess: Session) -> None:
        if len(sess.seats) + len(sess.queues) >= self.config.max_seats_per_session:
            raise ProtocolError(
                "limit_reached", f"a session may hold at most {self.config.max_seats_per_session} seats and queue places"
            )

    def check_table_limit(self) -> None:
        if len(self.tables) >= self.config.max_tables:
            raise ProtocolError("limit_reached", f"this referee hosts {len(self.tables)} tables, its limit")

    def new_name(self, prefix: str) -> str:
        while True:
            self._counter += 1
            name = f"{prefix}{self._counter}"
            if name not in self.tables:
                return name

    def reserve(self, token: str, t: Table, seat: int) -> None:
        self.reserved[token] = (t, seat)

    def table_of(self, sess: Session, name: str) -> tuple[Table, int]:
        t = self.tables.get(name)
        if t is None:
            raise ProtocolError("no_such_table", f"no table named {name!r}", table=name)
        seat = sess.seats.get(name)
        if seat is None:
            raise ProtocolError("not_seated", f"you have no seat at table {name!r}", table=name)
        return t, seat

    def _changed(self, t: Table) -> None:
        recovery = self.host.recovery
        if recovery is not None:
            recovery.table_changed(t)

    # ---------------------------------------------------------------- tables
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
        """Create a table (the admin message, the CLI's one table, and embedding programs).

        ``reveal`` (protocol 1.4): ``"game_end"`` reveals each game's seed and salt in its
        ``game_end``; ``"deferred"`` sends nulls there and keeps them for an admin's
        ``reveal`` (secret deals: a tournament may reuse a deal with other players).
        Raises :class:`ProtocolError` (nothing created) on a bad setting.
        """
        if reveal not in (REVEAL_AT_END, REVEAL_DEFERRED):
            raise ProtocolError("bad_message", f"reveal must be {REVEAL_AT_END!r} or {REVEAL_DEFERRED!r}, not {reveal!r}")
        rs = rules if isinstance(rules, RuleSet) else self.rules(variant, rules)
        ck = clock if isinstance(clock, Clock) else self.config.clock.merge(clock)
        try:
            pol = policies if isinstance(policies, Policies) else self.config.policies.merge(policies)
        except TypeError as e:
            raise ProtocolError("bad_message", f"bad policies: {e}") from None
        if full_feed_delay_ms is not None and not (isinstance(full_feed_delay_ms, int) and 0 <= full_feed_delay_ms <= MAX_MS):
            raise ProtocolError("bad_message", f"full_feed_delay_ms must be 0-{MAX_MS} or nil")
        if players is not None and (len(players) > rs.num_players or any(not 0 < len(p) <= MAX_NAME for p in players)):
            raise ProtocolError("bad_message", f"players lists at most {rs.num_players} names of 1-{MAX_NAME} characters")
        if table is not None and table in self.tables:  # after the settings: a malformed request is refused as such
            raise ProtocolError("table_exists", f"a table named {table!r} exists")
        self.check_table_limit()
        name = table or self.new_name("t")
        self._serial += 1
        t = Table(
            self.host,
            name,
            origin,
            rs,
            ck,
            pol,
            seed=seed,
            reserved=reserved,
            player_names=players,
            full_feed_delay_ms=full_feed_delay_ms,
            serial=self._serial,
            reveal=reveal,
        )
        self.tables[name] = t
        self._changed(t)
        if t.reserved_tokens:
            for i, tok in enumerate(t.reserved_tokens):
                self.reserved[tok] = (t, i)
        return t

    def sit(self, sess: Session, t: Table, seat: int, rqid: Any) -> None:
        """Seat a joining player; a full table starts its first game, or asks for consent.

        After a game (protocol.md §5.18) a new game starts only when every seated player
        has consented: the newcomer by joining, the players who stayed by ``rematch``. So
        filling a free seat makes the table ``finished`` and sends ``rematch_status``
        (the newcomer marked ready), instead of dealing the stayers into a game they
        never asked for.
        """
        t.sit(sess, seat)
        again = t.full and t.status == WAITING and t.game_no > 0
        if again:
            t.status = FINISHED
            self._changed(t)
        self.host.reply(sess, t.seated_msg(seat), rqid)
        if again:
            t.rematch(seat)  # the newcomer's consent; starts the game if nobody else is seated
        elif t.full and t.status == WAITING:
            t.start_game()

    def unseat(self, sess: Session, t: Table) -> None:
        if not t.unseat(sess):
            return
        if t.empty and t.origin != "admin":
            self.close_table(t, "the last player left")
        self.forget(sess)

    def close_table(self, t: Table, reason: str) -> None:
        for sess in t.close(reason):
            self.forget(sess)
        self.close_doors(t.name)  # after table_closed was queued for its seats
        if t.reserved_tokens:
            for tok in t.reserved_tokens:
                self.reserved.pop(tok, None)
                s = self.sessions.get(tok)
                if s is not None:
                    self.forget(s)
        if self.tables.get(t.name) is t:
            del self.tables[t.name]
            maker = self.made_by.pop(t.name, None)
            if maker is not None:
                maker.tables_made -= 1
        self._changed(t)

    def unqueue(self, sess: Session) -> None:
        for key in sess.queues:
            q = self.queues.get(key)
            if q is not None and sess in q:
                q.remove(sess)
                if not q:
                    del self.queues[key]
        sess.queues.clear()

    def unwatch_all(self, sess: Session) -> None:
        for name in list(sess.watches):
            t = self.tables.get(name)
            if t is not None:
                t.remove_watcher(sess)
        sess.watches.clear()

    # ---------------------------------------------------------------- handlers
    def on_queue(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        variant = msg.get("variant", "oklahoma")
        rules = self.rules(variant, msg.get("rules"))
        rw = rules.to_dict()
        key = f"{variant}/{hashlib.sha256(canonical_json(rw).encode()).hexdigest()[:8]}"
        if key in sess.queues:
            raise ProtocolError("already_seated", f"you are already in queue {key}")
        self.check_seat_limit(sess)
        q = self.queues.setdefault(key, [])
        q.append(sess)
        sess.queues.add(key)
        needed = rules.num_players
        self.host.reply(
            sess, {"type": "queued", "queue": key, "variant": variant, "rules": rw, "waiting": len(q), "needed": needed}, rqid
        )
        if len(q) >= needed:
            if len(self.tables) >= self.config.max_tables:
                return  # they wait until a table is free; the queue keeps its order
            group = q[:needed]
            del q[:needed]
            if not q:
                del self.queues[key]
            for s in group:
                s.queues.discard(key)
            t = self.create_table(self.new_name("q"), variant, rules, origin="quick")
            for i, s in enumerate(group):
                t.sit(s, i)
            for i, s in enumerate(group):
                self.host.send(s, t.seated_msg(i))
            t.start_game()

    def join_settings(self, msg: dict[str, Any]) -> tuple[Clock, Policies]:
        """The clock and policies a ``join`` asks for a table it creates (1.6, protocol.md
        §5.8), laid over the referee's defaults. A player may choose a humane clock for a
        table of people (okgin tui asks for a bank with an increment, and the away clock
        ``pause``), but not none at all where the operator gave every table one: a silent
        player could then hold a game for ever (docs/operations.md)."""
        clock = self.config.clock.merge(msg.get("clock"))
        try:
            policies = self.config.policies.merge(msg.get("policies"))
        except TypeError as e:
            raise ProtocolError("bad_message", f"bad policies: {e}") from None
        if self.config.clock.limited and not clock.limited:
            raise ProtocolError(
                "bad_message", "this referee gives every table a clock: a join's clock needs move_ms or bank_ms above 0"
            )
        return clock, policies

    def on_join(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        name = msg["table"]
        t = self.tables.get(name)
        want = msg.get("seat")
        partial = msg.get("rules")
        # the variant: the join's, else its rules map's (as check_join_rules reads it), else oklahoma
        named = partial.get("variant") if isinstance(partial, dict) else None
        variant = msg.get("variant") or (named if named in ("oklahoma", "box") else "oklahoma")
        rules = self.rules(variant, partial)  # checked also at an existing table, any_rules or not (bad_rules)
        clock, policies = self.join_settings(msg)  # checked whatever the table (1.6); used only by a join that creates it
        if t is None:
            if want is not None and want >= rules.num_players:
                raise ProtocolError("bad_seat", f"{variant} has seats 0-{rules.num_players - 1}, not {want}", table=name)
            self.check_seat_limit(sess)
            cap = self.config.max_tables_per_session
            if sess.tables_made >= cap:
                raise ProtocolError(
                    "limit_reached", f"you have made {cap} tables that are still open, your limit; leave one first", table=name
                )
            self.check_table_limit()
            t = self.create_table(name, variant, rules, clock=clock, policies=policies, origin="named")
            sess.tables_made += 1
            self.made_by[name] = sess
            self.sit(sess, t, 0 if want is None else want, rqid)
            return
        if t.reserved_tokens is not None:
            raise ProtocolError("forbidden", f"table {name!r} is reserved: its seats are taken with their tokens", table=name)
        if name in sess.seats:
            raise ProtocolError("already_seated", f"you already sit at seat {sess.seats[name]} of table {name!r}", table=name)
        if not msg.get("any_rules", False):
            self.check_join_rules(t, msg)
        free = t.free_seats()
        if not free:
            raise ProtocolError("table_full", f"every seat of table {name!r} is taken", table=name)
        if want is not None:
            if want >= t.num_seats or t.seats[want] is not None:
                raise ProtocolError("bad_seat", f"seat {want} of table {name!r} is not free (free: {free})", table=name)
            seat = want
        else:
            seat = free[0]
        self.check_seat_limit(sess)
        self.sit(sess, t, seat, rqid)

    def check_join_rules(self, t: Table, msg: dict[str, Any]) -> None:
        """Refuse (``rules_mismatch``) a join whose rules are not the table's (protocol.md §5.8).

        Why a join naming no rules asks for the defaults, not for "whatever": a join is
        create-or-join, and the first to name a table sets its rules; were an absent
        ``rules`` to mean "any", whoever squats a well-known name with ``target_score`` 1
        would silently hand those rules to everyone who joins it. So a join asks for
        ``rules`` laid over its variant's defaults; ``any_rules`` true sits whatever they
        are. The variant alone defaults to the table's, as before 1.4: it is a table's
        headline (its seat count, in every listing), and people and bots join a box table
        by name without naming it. The error lists each difference, so a client can show
        it or join again with them.
        """
        partial = msg.get("rules")
        variant = msg.get("variant")
        if variant is None:  # a rules map may name the variant alone
            v = partial.get("variant") if isinstance(partial, dict) else None
            variant = v if v in ("oklahoma", "box") else t.rules.variant
        wanted = self.rules(variant, partial).to_dict()
        have = t.rules_wire
        diffs = [
            f"{k} {canonical_json(have.get(k))} (you asked {canonical_json(wanted.get(k))})"
            for k in sorted(set(have) | set(wanted))
            if have.get(k) != wanted.get(k)
        ]
        if diffs:
            raise ProtocolError(
                "rules_mismatch",
                f"table {t.name!r} plays other rules than your join asks for: {'; '.join(diffs)}. "
                "Join naming those rules, or with any_rules true to sit whatever they are",
                table=t.name,
            )

    def on_leave(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        if "table" not in msg:
            if not sess.queues:
                raise ProtocolError("not_queued", "you are in no quick-match queue")
            self.unqueue(sess)
            self.host.reply_ok(sess, "leave", rqid, None)
            return
        t, seat = self.table_of(sess, msg["table"])
        self.host.reply_ok(sess, "leave", rqid, t.name)
        if t.status == PLAYING:
            t.forfeit(seat, "resigned")
        self.unseat(sess, t)
