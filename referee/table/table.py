"""One table of the referee: the IO shell around its parts.

The parts each own their state: :class:`referee.table.seating.Seating` (seats, watchers,
grace timers), :class:`referee.table.fullfeed.FullFeed` (the held full view, the
broadcast token), :class:`referee.table.deals.DealSecrets` (seeds, salts, reveals),
:class:`referee.table.feed.Feed` (who gets which frame), and
:class:`referee.table.flow.GameFlow`, the game flow without I/O, which holds the prompts
and one :class:`referee.table.clock.SeatClock` per seat.

:class:`Table` is what the rest of the referee talks to. It gives each part only what it
needs, passes the time in, then does the I/O the flow asked for (:meth:`Table.flush`):
the frames go to its :class:`referee.tablehost.TableHost`'s ``send_bytes`` (never a
socket), the move timer and the full feed's releases go on the host's loop, and the
table's state goes to crash recovery. Every request is checked completely before
anything changes, so a refused request leaves the table as it was (protocol.md §3).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from okgin import Game, RuleSet
from okgin.protocol import encode
from okgin.protocol.settings import Clock, Policies

from ..journal import JOURNAL_FORMAT, JOURNAL_VERSION, Journal, iso_now
from ..sessions import Session
from ..wireviews import ViewCache, frame, pack_array, with_field
from .clock import GameClocks
from .deals import REVEAL_AT_END, DealSecrets
from .feed import Feed
from .flow import GameFlow
from .fullfeed import FullFeed
from .prompts import Pending
from .replay import Replayed
from .seating import Seating
from .status import CLOSED, FINISHED, WAITING, TableStatus

if TYPE_CHECKING:
    from ..tablehost import TableHost

__all__ = ["Table"]


class Table:
    """One table of the referee. See the module docstring."""

    def __init__(
        self, host: TableHost, name: str, origin: str, rules: RuleSet, clock: Clock, policies: Policies,
        seed: int | str | None = None, reserved: bool = False, player_names: list[str] | None = None,
        full_feed_delay_ms: int | None = None, serial: int = 0, reveal: str = REVEAL_AT_END,
    ) -> None:
        self.host = host
        self.name = name
        self.serial = serial  # the lobby's creation number (list_tables pages by it)
        self.origin = origin
        self.rules = rules
        self.rules_wire = rules.to_dict()
        self.num_seats = rules.num_players
        self.clock = clock
        self.policies = policies
        self.full_feed_delay_ms = full_feed_delay_ms
        self.seating = Seating(name, self.num_seats, self._call_later, reserved, player_names)
        self.fullfeed = FullFeed(full_feed_delay_ms) if full_feed_delay_ms is not None else None
        self.secrets = DealSecrets(seed, reveal)
        self.feed = Feed(self.seating, self.fullfeed)
        caps = (host.config.max_advice_per_prompt, host.config.max_advice_per_hand)
        self.flow = GameFlow(name, rules, clock, policies, self.seating, self.feed, self.secrets, caps)
        self._timer: asyncio.TimerHandle | None = None  # the pending prompt's deadline
        self._armed: tuple[int, float] | None = None  # (seq, deadline) that timer is for
        #: the number of the last game that started on every seat's consent (§5.18): a
        #: ``rematch`` that crossed its start is answered ``ok`` (1.6), not refused
        self.consented_game = 0

    # ------------------------------------------------------------------ the parts' state, read-only
    def set_status(self, status: TableStatus) -> None:
        """The lobby's say over a table between games (a newcomer joins a finished table)."""
        self.flow.status = status

    status: TableStatus = property(lambda self: self.flow.status, set_status)  # type: ignore[assignment]
    game: Game | None = property(lambda self: self.flow.game)  # type: ignore[assignment]
    game_no: int = property(lambda self: self.flow.game_no)  # type: ignore[assignment]
    seq: int = property(lambda self: self.flow.prompts.seq)  # type: ignore[assignment]
    n: int = property(lambda self: self.flow.n)  # type: ignore[assignment]
    pending: Pending | None = property(lambda self: self.flow.pending)  # type: ignore[assignment]
    illegal: list[int] = property(lambda self: self.flow.illegal)  # type: ignore[assignment]
    decisions: int = property(lambda self: self.flow.decisions)  # type: ignore[assignment]
    journal: Journal | None = property(lambda self: self.flow.journal)  # type: ignore[assignment]
    views: ViewCache = property(lambda self: self.flow.views)  # type: ignore[assignment]
    clocks: GameClocks = property(lambda self: self.flow.prompts.clocks)  # type: ignore[assignment]
    seats: list[Session | None] = property(lambda self: self.seating.seats)  # type: ignore[assignment]
    names: list[str | None] = property(lambda self: self.seating.names)  # type: ignore[assignment]
    reserved_tokens: list[str] | None = property(lambda self: self.seating.reserved_tokens)  # type: ignore[assignment]
    watchers: dict[Session, bool] = property(lambda self: self.seating.watchers)  # type: ignore[assignment]
    rematch_ready: list[bool] = property(lambda self: self.seating.rematch_ready)  # type: ignore[assignment]
    full: bool = property(lambda self: self.seating.full)  # type: ignore[assignment]
    empty: bool = property(lambda self: self.seating.empty)  # type: ignore[assignment]
    deals = property(lambda self: self.secrets.history)
    base_seed = property(lambda self: self.secrets.base_seed)
    reveal: str = property(lambda self: self.secrets.reveal)  # type: ignore[assignment]
    seed = property(lambda self: self.secrets.seed)
    salt = property(lambda self: self.secrets.salt)
    seed_hash = property(lambda self: self.secrets.seed_hash)
    broadcast_token = property(lambda self: None if self.fullfeed is None else self.fullfeed.broadcast_token)
    broadcast_hash = property(lambda self: None if self.fullfeed is None else self.fullfeed.broadcast_hash)

    # ------------------------------------------------------------------ describing
    players = property(lambda self: self.seating.players)
    free_seats = property(lambda self: self.seating.free_seats)

    def info(self) -> dict[str, Any]:
        """The ``TableInfo`` of protocol.md §6.10."""
        return {
            "table": self.name, "variant": self.rules.variant, "origin": self.origin, "status": self.status,
            "game": self.game_no, "players": self.players(), "spectators": len(self.seating.watchers),
            "rules": self.rules_wire, "clock": self.clock.to_wire(), "policies": self.policies.to_wire(),
            "full_feed": self.full_feed_delay_ms is not None,
            # 1.6: which seats a session holds now (a reserved seat's name shows while it is empty:
            # the arena tells a player who never came from one who did, protocol.md §19)
            "seated": [s is not None for s in self.seating.seats],
        }

    def seated_msg(self, seat: int) -> dict[str, Any]:
        return {"type": "seated", "table": self.name, "seat": seat, **self.desc(), "status": self.status}

    def desc(self) -> dict[str, Any]:
        return {
            "variant": self.rules.variant, "rules": self.rules_wire, "num_seats": self.num_seats, "players": self.players(),
            "clock": self.clock.to_wire(), "policies": self.policies.to_wire(),
        }

    def snapshot(self, seat: int | None, full: bool, rqid: Any = None) -> dict[str, Any]:
        """The ``snapshot`` for a seat, a public spectator or the delayed full feed."""
        flow = self.flow
        if seat is not None:
            self.feed.held[seat].clear()  # the snapshot covers what a batched seat was holding (1.3)
        n = flow.n
        view: dict[str, Any] | None = None
        if flow.game is not None:
            if full:
                n, view = (0, None) if self.fullfeed is None else self.fullfeed.snapshot_point(flow.game_no)
            else:
                view = flow.views.wire(seat)
        msg: dict[str, Any] = {
            "type": "snapshot", "table": self.name, "status": self.status, "game": self.game_no, "n": n, "seat": seat,
            "full": full, **self.desc(), "seed_hash": self.seed_hash, "clocks": flow.prompts.banks_now(self.host.now()),
            "view": view,
        }
        if rqid is not None:
            msg["id"] = rqid
        return msg

    # ------------------------------------------------------------------ seats and watchers
    def sit(self, sess: Session, seat: int) -> None:
        """Put ``sess`` in ``seat`` (free, checked by the caller). A finished table waits again."""
        self.seating.sit(sess, seat)
        self.feed.held[seat].clear()
        if self.status == FINISHED:
            self.flow.status = WAITING
        self._changed()

    def unseat(self, sess: Session) -> bool:
        """Take ``sess`` out of its seat here (its grace timer too); False if it had none."""
        seat = self.seating.unseat(sess)
        if seat is None:
            return False
        self.feed.held[seat].clear()
        if self.status == FINISHED:
            self.flow.status = WAITING
            # 1.6: the consent of whoever stays was cleared (§5.18); say so, or a player
            # who sent rematch waits for a game that can no longer start on it
            self.send_rematch_status()
        self._changed()
        return True

    def start_grace(self, seat: int, delay_s: float, expired: Callable[[Table, int, Session], None]) -> None:
        """The seat's connection is gone: ``expired(table, seat, session)`` runs after ``delay_s``."""
        self.seating.start_grace(seat, delay_s, partial(expired, self))

    def cancel_grace(self, seat: int) -> bool:
        """Stop the seat's grace timer; True if one was running (the seat was disconnected)."""
        return self.seating.cancel_grace(seat)

    def grace_ended(self, seat: int) -> None:
        """The grace timer of ``seat`` fired (it no longer needs cancelling)."""
        self.seating.grace_ended(seat)

    is_player = property(lambda self: self.seating.is_player)
    add_watcher = property(lambda self: self.seating.add_watcher)
    remove_watcher = property(lambda self: self.seating.remove_watcher)
    set_reserved_token = property(lambda self: self.seating.set_reserved_token)
    restore_deals = property(lambda self: self.secrets.restore_history)  # crash recovery: [game, seed, salt, hash] rows
    saved_deals = property(lambda self: self.secrets.saved_history)
    remember_deal = property(lambda self: self.secrets.keep)

    def broadcast_ok(self, token: Any) -> bool:
        """Whether ``token`` is this table's broadcast token (compared in constant time)."""
        return self.fullfeed is not None and self.fullfeed.broadcast_ok(token)

    def seat_status(self, seat: int, connected: bool, forfeit_in_ms: int | None) -> None:
        """Tell the table's other seats and its spectators that ``seat``'s connection went
        (its seat is held for ``forfeit_in_ms``) or came back (protocol 1.4, §5.26).

        Why: without it the others saw only "waiting for ann to draw" for the whole grace
        and could not tell a thinking player from a crashed one. The seat itself is not
        told (it is the one disconnected, or it knows it is back)."""
        if self.status == CLOSED:
            return
        sess = self.seating.seats[seat]
        name = sess.name if sess is not None else self.seating.names[seat]
        data = encode({
            "type": "seat_status", "table": self.name, "seat": seat, "name": name,
            "connected": connected, "forfeit_in_ms": forfeit_in_ms,
        })
        for other in self.seating.everyone():
            if other is not sess and other.rid is not None:
                self.host.send_bytes(other, data)

    def rematch(self, seat: int) -> None:
        """``seat`` asks for another game (protocol.md §5.18); it starts when all have.

        A seat that is ready already changes nothing and nobody is told again (1.6): a
        ``rematch_status`` sent before a seat's ``rematch`` was read shows it not ready,
        and a client that answers it with a second ``rematch`` must not be punished."""
        ready = self.seating.rematch_ready
        if ready[seat]:
            return
        ready[seat] = True
        self.send_rematch_status()
        if self.full and all(ready):
            self.consented_game = self.game_no + 1
            self.start_game()

    def send_rematch_status(self) -> None:
        """Every seated player hears who is ready for the next game (§5.18)."""
        ready = self.seating.rematch_ready
        status = encode({"type": "rematch_status", "table": self.name, "ready": list(ready), "game": self.game_no + 1})
        for s in self.seating.seats:
            if s is not None:
                self.host.send_bytes(s, status)

    def close(self, reason: str) -> list[Session]:
        """Abandon the game, tell seats and watchers ``table_closed``, empty the table.

        Returns the sessions that lost a seat here, for the caller to forget if they now
        hold nothing (the sessions are the referee's, not the table's)."""
        self.abandon("abandoned")
        msg = encode({"type": "table_closed", "table": self.name, "reason": reason})
        for sess in self.seating.everyone():
            self.host.send_bytes(sess, msg)
        unseated = self.seating.clear()
        self.stop_timers()
        self.flow.status = CLOSED
        return unseated

    def stop_timers(self) -> None:
        """Cancel every timer of this table (the referee is stopping)."""
        self.seating.stop_timers()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = self._armed = None

    # ------------------------------------------------------------------ the game: inputs to the flow
    def start_game(self) -> None:
        """All seats taken: deal game ``game_no + 1`` and prompt the first seat."""
        flow, host = self.flow, self.host
        flow.deal()
        journal_dir = host.config.journal_dir
        if journal_dir is not None:
            journal = flow.journal = Journal(journal_dir, self.name, flow.game_no)
            journal.write(
                "start", format=JOURNAL_FORMAT, version=JOURNAL_VERSION, table=self.name, game=flow.game_no,
                rules=self.rules_wire, seed_hash=self.seed_hash, players=self.players(), clock=self.clock.to_wire(),
                policies=self.policies.to_wire(), referee=host.software, started=iso_now(),
            )
        if host.recovery is not None:
            host.recovery.game_started(self)  # the seed is on disk before anyone hears of the game
        flow.announce(self.desc(), host.now())
        self.flush()

    def on_act(self, sess: Session, seat: int, msg: dict[str, Any], rqid: Any) -> bool:
        """A seat's answer to a prompt: :meth:`referee.table.flow.GameFlow.act`."""
        try:
            return self.flow.act(sess, seat, msg, rqid, self.host.now())
        finally:
            self.flush()

    def on_advise(self, sess: Session, seat: int, msg: dict[str, Any], rqid: Any) -> None:
        """The sitter's advice: :meth:`referee.table.flow.GameFlow.advise`."""
        try:
            self.flow.advise(sess, seat, msg, rqid, self.host.now())
        finally:
            self.flush()

    def forfeit(self, seat: int, reason: str) -> None:
        """``seat`` loses the running game (timeout, illegal, disconnect, resigned)."""
        self.flow.forfeit(seat, reason)
        self.flush()

    def abandon(self, reason: str = "abandoned") -> None:
        """End the running game with no winner (table closed, referee stopping)."""
        self.flow.abandon(reason)
        self.flush()

    def end_game(self, at_fault: int | None) -> None:
        """The game is over (recovery: it ended in the journal): ``game_end`` to everyone."""
        self.flow.end_game(at_fault)
        self.flush()

    def send_prompt_to(self, seat: int) -> None:
        """Resend what ``seat`` is waiting to answer, if anything (resume, ``sync``)."""
        self.flow.send_prompt_to(seat, self.host.now())
        self.flush()

    def send_missed_end(self, seat: int, sess: Session, heard: float) -> None:
        """After a resume's snapshot: the last game's ``game_end`` again, if the session
        may have missed it (protocol.md §10).

        ``heard`` is when the referee last heard from the session before this resume's
        ``hello``. If that is no later than when the ``game_end`` was last sent to it,
        nothing shows the client had it: it was disconnected when the game ended, or
        its process died and was restarted before the referee noticed (*1.6*; 1.3-1.5
        sent it only in the first case, so a quick restart never learned the result).
        It is sent again on every such resume; a session that spoke after receiving it
        (a heartbeat will do) is not sent it again. A batched seat's ``events`` is
        empty: the snapshot covered them."""
        missed = self.flow.missed_end.get(seat)
        if missed is None or missed[0] is not sess or heard > missed[2]:
            return
        self.flow.missed_end[seat] = (sess, missed[1], sess.last_recv)
        data = frame(missed[1], ("view", self.flow.views.packed(seat)))
        if sess.batched:
            data = with_field(data, "events", pack_array([]))
        self.host.send_bytes(sess, data)

    def _on_timer(self, seq: int) -> None:
        now = self.host.now()  # first: a stall of the referee is credited here if it was not yet (referee.stalls)
        if self._armed is not None and self._armed[0] == seq:
            self._timer = self._armed = None  # spent
        if self._still_there(now) and self.flow.deadline_passed(seq, now):
            self.flush()
            self.host.kick()
        else:
            self.flush()  # sets the timer again if the move's deadline moved on (a stall, a stopped clock)

    def _still_there(self, now: float) -> bool:
        """At a table whose away clock pauses: whether the seat to act is still heard
        from. One that has been silent for more than a heartbeat when its move falls due
        is not ruled late yet: the timer waits until the liveness check says whether it
        is gone (its clock then stops from when it fell silent, :meth:`seat_away`) or
        alive (then the timeout stands)."""
        p = self.flow.pending
        if p is None or not self.flow.prompts.pause_away:
            return True
        sess = self.seating.seats[p.seat]
        if sess is None or sess.rid is None:
            return True
        cfg = self.host.config
        beat = cfg.heartbeat_ms / 1000
        if now - sess.last_recv <= beat:
            return True
        if p.deadline is not None:
            p.deadline = max(p.deadline, sess.last_recv + beat * cfg.liveness + beat)
        return False

    # ------------------------------------------------------------------ time nobody is charged (protocol.md §7, §8)
    def seat_away(self, seat: int, since: float) -> None:
        """The seat's connection is gone, silent since ``since``: at a table whose away
        clock pauses, its move's clock stops from then (protocol.md §8)."""
        self.flow.seat_away(seat, since)
        self.flush()

    def seat_back(self, seat: int) -> None:
        """The seat resumed its session: a stopped move clock runs again."""
        self.flow.seat_back(seat, self.host.now())
        self.flush()

    def credit_stall(self, lost_s: float) -> None:
        """The referee did not run for ``lost_s`` (referee.stalls): every clock and grace
        of this table moves on by as much. Sends nothing, sets timers only (the move
        timer is set again when it fires early: :meth:`_on_timer`)."""
        self.flow.credit_stall(lost_s)
        if self.seating.grace_timers:
            self.seating.delay_graces(lost_s, self.host.loop.time())

    def _release_full(self) -> None:
        self.feed.release_full()
        self.flush()
        self.host.kick()

    # ------------------------------------------------------------------ the flow's outputs
    def _changed(self) -> None:
        if self.host.recovery is not None:
            self.host.recovery.table_changed(self)

    def _call_later(self, delay: float, fn: Callable[..., Any], *args: Any) -> asyncio.TimerHandle:
        return self.host.loop.call_later(delay, fn, *args)  # (the loop is the referee's once it has started)

    def flush(self) -> None:
        """Do what the flow asked for: save the state if it changed (before anyone is
        told), send the frames in order, time the full feed's releases, and set the move
        timer to the pending prompt's deadline (or none)."""
        flow, feed, host = self.flow, self.feed, self.host
        if flow.changed:
            flow.changed = False
            self._changed()
        sends = feed.sends
        if sends:
            feed.sends = []
            send = host.send_bytes
            for sess, data in sends:
                send(sess, data)
        if feed.releases:
            assert self.fullfeed is not None
            for _ in range(feed.releases):
                host.loop.call_later(self.fullfeed.delay_ms / 1000, self._release_full)
            feed.releases = 0
        p = flow.pending
        want = None if p is None or p.deadline is None else (p.seq, p.deadline)
        if want != self._armed:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = None if want is None else host.loop.call_at(want[1], self._on_timer, want[0])
            self._armed = want

    # ------------------------------------------------------------------ crash recovery (referee.recovery)
    def restore_counters(self, names: list[str | None], game_no: int, seq: int, reserved: bool) -> None:
        """A restarted referee's table: its names and counters as saved. Reserved seats'
        tokens are unknown until presented (only their hashes were kept)."""
        self.seating.restore(names, reserved)
        self.flow.restore_counters(game_no, seq)

    def restore_broadcast(self, hash_: str) -> None:
        """The broadcast token stays valid across a restart: only its hash was kept."""
        if self.fullfeed is not None:
            self.fullfeed.restore_broadcast(hash_)

    def restore_game(self, r: Replayed, seed: int | str, salt: str | None, journal: Journal) -> None:
        """A running game replayed from its journal (:func:`referee.table.replay.replay`):
        take it over as it stood (``salt`` None: a game started before protocol 1.4)."""
        self.secrets.restore(seed, salt)
        self.seating.rematch_ready = [False] * self.num_seats
        self.flow.restore_game(r.game, r.n, r.seq, r.banks, r.illegal, r.decisions, journal)
        if r.missing_hand_end is not None:  # the hand ended just before the crash: record its end
            self.flow.restored_hand_end(r.missing_hand_end)

    def resume_restored(self) -> Pending | None:
        """After :meth:`restore_game`: issue the pending prompt again (same seq), with its
        clock stopped until the seat is back (:meth:`restart_clock`); nobody is connected.
        The full feed resumes with the hand's next message: what it held was lost."""
        self.flow.prompt(self.host.now())
        p = self.flow.pending
        assert p is not None
        p.deadline = None
        self.flush()
        return p

    def restart_clock(self, seq: int) -> None:
        """The seat to act is back after a restart: its move's clock starts now."""
        self.flow.restart_clock(seq, self.host.now())
        self.flush()

    def restore_finished(self, game: Game, seed: int | str, salt: str | None, seed_hash_: str, n: int) -> None:
        """A table between games: its last game as recorded."""
        self.secrets.restore(seed, salt, seed_hash_)
        self.secrets.remember(self.game_no)
        self.flow.restore_finished(game, n)
