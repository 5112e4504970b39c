"""A table: seats, one game at a time driven by :class:`okgin.Game`, clocks, feeds.

The table is where the rules of protocol.md §4.3, §7, §8 and §11 live: who is prompted
with what, what each seat and spectator is told after a move, what happens on a timeout
or an illegal action, and what goes in the journal. It never touches a socket: it hands
finished messages to its hub, a :class:`referee.tablehost.TableHost`: the send functions,
the clock, the loop for its timers and the settings, never the whole referee.

Every request is checked completely before anything changes, so a refused request
(an ``error``) leaves the table exactly as it was (protocol.md §3).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import secrets
from collections import deque
from collections.abc import Callable
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from msgpack import packb

from okgin import Action, Game, HandResult, IllegalAction, RuleSet
from okgin.protocol import ProtocolError
from okgin.rng import new_salt, new_seed, seed_hash

from .config import Clock, Policies
from .defaults import default_action
from .journal import JOURNAL_FORMAT, JOURNAL_VERSION, Journal, iso_now
from .sessions import Session
from .wireviews import ViewCache, frame, pack, pack_array, with_field

if TYPE_CHECKING:
    from .tablehost import TableHost


class TableStatus(StrEnum):
    """A table's ``status`` (protocol.md): each member is its wire string."""

    WAITING = "waiting"
    PLAYING = "playing"
    FINISHED = "finished"
    CLOSED = "closed"


WAITING, PLAYING, FINISHED, CLOSED = TableStatus.WAITING, TableStatus.PLAYING, TableStatus.FINISHED, TableStatus.CLOSED
#: The full feed holds at most this many messages of the running hand (Table._hold_full);
#: the rules bound a hand to about 2,100 (max_pile_draws <= 1000 draws from the pile, each
#: with its discard, plus the stock), the default cap of 100 to about 300.
FULL_HELD_MAX = 4096
REVEAL_AT_END, REVEAL_DEFERRED = "game_end", "deferred"
#: How many finished games' seeds and salts a table keeps for ``reveal`` (protocol.md §5.25).
REVEAL_HISTORY = 64


#: At most this many characters of a refused input are kept in the journal (its ``head``).
INPUT_HEAD_CHARS = 120
#: At most this many characters of an error's sentence go to a client or the journal.
ERROR_TEXT_CHARS = 300


def refused_input(raw: Any) -> dict[str, Any]:
    """What the journal keeps of an input the referee refused: its size, its hash and a
    short head, never the input itself.

    Why: the journal is written for every refused ``act``, and what a hostile client
    sends is its choice. On 1.3 a copy of the payload was kept (cut per field, but a
    nested map of lists still expanded to hundreds of KB a line): 300 pipelined acts of
    59 KB wrote 78 MB in 3 s. Now a refused input costs the journal a bounded line
    whatever its size, and the hash still lets an operator match it with a capture.
    """
    try:
        data = packb(raw, use_bin_type=True)
    except (TypeError, ValueError, OverflowError):
        data = repr(type(raw)).encode()
    head = repr(raw)
    if len(head) > INPUT_HEAD_CHARS:
        head = head[: INPUT_HEAD_CHARS - 1] + "…"
    return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(), "head": head}


class Pending:
    """The prompt waiting for an answer: whose, which ``seq``, since when, until when."""

    __slots__ = ("advised", "allowance_ms", "refused", "seat", "seq", "start", "timer")

    def __init__(self, seat: int, seq: int, start: float, allowance_ms: int | None) -> None:
        self.seat = seat
        self.seq = seq
        self.start = start
        self.allowance_ms = allowance_ms
        self.timer: asyncio.TimerHandle | None = None
        #: refused answers to this move so far (re-prompts of one move share the count)
        self.refused = 0
        #: advice accepted for this prompt (Gin in the Box)
        self.advised = 0


class Table:
    """One table of the referee. See the module docstring."""

    def __init__(
        self,
        hub: TableHost,
        name: str,
        origin: str,
        rules: RuleSet,
        clock: Clock,
        policies: Policies,
        seed: int | str | None = None,
        reserved: bool = False,
        player_names: list[str] | None = None,
        full_feed_delay_ms: int | None = None,
        serial: int = 0,
        reveal: str = REVEAL_AT_END,
    ) -> None:
        self.hub = hub
        self.name = name
        self.serial = serial  # the lobby's creation number (list_tables pages by it)
        self.origin = origin
        self.rules = rules
        self.rules_wire = rules.to_dict()
        self.num_seats = rules.num_players
        self.clock = clock
        self._untimed_clock: bytes | None = None  # the packed clock of an untimed prompt (_prompt_frame)
        self.policies = policies
        self.base_seed = seed
        #: when game_end reveals the seed and salt: REVEAL_AT_END, or REVEAL_DEFERRED
        #: (game_end carries nulls; an admin's ``reveal`` hands them out, protocol 1.4)
        self.reveal = reveal
        self.full_feed_delay_ms = full_feed_delay_ms
        self.seats: list[Session | None] = [None] * self.num_seats
        self.names: list[str | None] = [None] * self.num_seats
        if player_names:
            for i, nm in enumerate(player_names[: self.num_seats]):
                self.names[i] = nm
        self.reserved_tokens: list[str] | None = [secrets.token_hex(16) for _ in range(self.num_seats)] if reserved else None
        self.status = WAITING
        self.game: Game | None = None
        self.game_no = 0
        self.seq = 0
        self.n = 0
        self.seed: int | str | None = None
        self.salt: str | None = None  # the commitment's salt (protocol 1.4; None: an older game)
        self.seed_hash: str | None = None
        #: game number -> (seed, salt, seed_hash) of this table's last REVEAL_HISTORY
        #: finished games, for the admin's ``reveal`` (Lobby.on_reveal); oldest first
        self.deals: dict[int, tuple[int | str, str | None, str]] = {}
        self.pending: Pending | None = None
        self.banks: list[int] | None = None
        self.illegal: list[int] = [0] * self.num_seats
        self.rematch_ready: list[bool] = [False] * self.num_seats
        self.watchers: dict[Session, bool] = {}
        self.journal: Journal | None = None
        self.grace_timers: dict[int, asyncio.TimerHandle] = {}
        self.views = ViewCache()
        # Protocol 1.3: per seat, the packed HeldEvents not yet delivered to a batched seat.
        self.held: list[list[bytes]] = [[] for _ in range(self.num_seats)]
        #: The ``game_end`` a seated session missed because it was disconnected when the
        #: game ended (within its grace): seat -> (that session, the message's fields).
        #: A resume delivers it after the snapshot; without it a client waiting for the
        #: end of its game would wait for ever (protocol.md §10).
        self.missed_end: dict[int, tuple[Session, dict[str, Any]]] = {}
        # Full-visibility feed (protocol.md §11, 1.4): the running hand's messages, held
        # until that hand ends (_hold_full), and the (n, view) of the last one with a view;
        # hands that ended, waiting out full_feed_delay_ms: (game, messages, (n, view));
        # the last point released to the full watchers: (game, n, view), for snapshots.
        self.full_held: deque[bytes] = deque(maxlen=FULL_HELD_MAX)
        self.full_held_view: tuple[int, dict[str, Any]] | None = None
        self.full_out: deque[tuple[int, list[bytes], tuple[int, dict[str, Any]] | None]] = deque()
        self.full_released: tuple[int, int, dict[str, Any]] | None = None
        #: The secret that admits a broadcaster to the full feed: only its SHA-256 is kept
        #: for checking (and by referee.recovery); ``broadcast_token`` itself is known only
        #: from creation until the ``table_created`` reply (None after a restart).
        self.broadcast_token: str | None = secrets.token_hex(16) if full_feed_delay_ms is not None else None
        self.broadcast_hash: str | None = None if self.broadcast_token is None else _sha256(self.broadcast_token)
        #: Tokens of the sessions seated here since the current game started (and of those
        #: still seated from before): they may never watch the full feed (Lobby.on_watch).
        self.game_tokens: set[str] = set()
        self.decisions = 0
        # advice accepted in the current hand (hand number, count): capped (on_advise)
        self._advice_hand = -1
        self._advice_count = 0

    # ------------------------------------------------------------------ describing
    def players(self) -> list[str | None]:
        return [s.name if s is not None else self.names[i] if self.reserved_tokens else None for i, s in enumerate(self.seats)]

    def info(self) -> dict[str, Any]:
        """The ``TableInfo`` of protocol.md §6.10."""
        return {
            "table": self.name,
            "variant": self.rules.variant,
            "origin": self.origin,
            "status": self.status,
            "game": self.game_no,
            "players": self.players(),
            "spectators": len(self.watchers),
            "rules": self.rules_wire,
            "clock": self.clock.to_wire(),
            "policies": self.policies.to_wire(),
            "full_feed": self.full_feed_delay_ms is not None,
        }

    def seated_msg(self, seat: int) -> dict[str, Any]:
        return {
            "type": "seated",
            "table": self.name,
            "seat": seat,
            **self._desc(),
            "status": self.status,
        }

    def _desc(self) -> dict[str, Any]:
        return {
            "variant": self.rules.variant,
            "rules": self.rules_wire,
            "num_seats": self.num_seats,
            "players": self.players(),
            "clock": self.clock.to_wire(),
            "policies": self.policies.to_wire(),
        }

    def free_seats(self) -> list[int]:
        return [i for i, s in enumerate(self.seats) if s is None]

    @property
    def full(self) -> bool:
        return all(s is not None for s in self.seats)

    @property
    def empty(self) -> bool:
        return all(s is None for s in self.seats)

    # ------------------------------------------------------------------ seats
    def sit(self, sess: Session, seat: int) -> None:
        """Put ``sess`` in ``seat`` (free, checked by the caller). A finished table waits again."""
        self.seats[seat] = sess
        self.held[seat].clear()
        sess.seats[self.name] = seat
        if sess.token:
            self.game_tokens.add(sess.token)
        if self.watchers.get(sess):
            self.remove_watcher(sess)  # a player never keeps the full feed of its own table (§11)
        if self.status == FINISHED:
            self.status = WAITING
        self._changed()

    def unseat(self, sess: Session) -> bool:
        """Take ``sess`` out of its seat here (its grace timer too); False if it had none."""
        seat = sess.seats.pop(self.name, None)
        if seat is None:
            return False
        self.seats[seat] = None
        self.held[seat].clear()
        self.cancel_grace(seat)
        if self.status == FINISHED:
            self.status = WAITING
        self.rematch_ready = [False] * self.num_seats
        self._changed()
        return True

    def start_grace(self, seat: int, delay_s: float, expired: Callable[[Table, int, Session], None]) -> None:
        """The seat's connection is gone: ``expired(table, seat, session)`` runs after ``delay_s``."""
        self.cancel_grace(seat)
        sess = self.seats[seat]
        assert sess is not None
        self.grace_timers[seat] = self.hub.loop.call_later(delay_s, expired, self, seat, sess)

    def cancel_grace(self, seat: int) -> bool:
        """Stop the seat's grace timer; True if one was running (the seat was disconnected)."""
        h = self.grace_timers.pop(seat, None)
        if h is None:
            return False
        h.cancel()
        return True

    def grace_ended(self, seat: int) -> None:
        """The grace timer of ``seat`` fired (it no longer needs cancelling)."""
        self.grace_timers.pop(seat, None)

    def seat_status(self, seat: int, connected: bool, forfeit_in_ms: int | None) -> None:
        """Tell the table's other seats and its spectators that ``seat``'s connection went
        (its seat is held for ``forfeit_in_ms``) or came back (protocol 1.4, §5.26).

        Why: without it the others saw only "waiting for ann to draw" for the whole grace
        and could not tell a thinking player from a crashed one. The seat itself is not
        told (it is the one disconnected, or it knows it is back)."""
        if self.status == CLOSED:
            return
        sess = self.seats[seat]
        name = sess.name if sess is not None else self.names[seat]
        data = self.hub.encode({
            "type": "seat_status", "table": self.name, "seat": seat, "name": name,
            "connected": connected, "forfeit_in_ms": forfeit_in_ms,
        })
        told: set[int] = {id(sess)}
        for other in [s for s in self.seats if s is not None] + list(self.watchers):
            if id(other) not in told and other.rid is not None:
                told.add(id(other))
                self.hub.send_bytes(other, data)

    def stop_timers(self) -> None:
        """Cancel every timer of this table (the referee is stopping)."""
        for h in self.grace_timers.values():
            h.cancel()
        self.grace_timers.clear()
        if self.pending is not None and self.pending.timer is not None:
            self.pending.timer.cancel()

    def close(self, reason: str) -> list[Session]:
        """Abandon the game, tell seats and watchers ``table_closed``, empty the table.

        Returns the sessions that lost a seat here, for the caller to forget if they now
        hold nothing (the sessions are the referee's, not the table's)."""
        self.abandon("abandoned")
        msg = self.hub.encode({"type": "table_closed", "table": self.name, "reason": reason})
        told: set[int] = set()
        for sess in [s for s in self.seats if s is not None] + list(self.watchers):
            if id(sess) not in told:
                told.add(id(sess))
                self.hub.send_bytes(sess, msg)
        unseated = []
        for i, seated in enumerate(self.seats):
            if seated is not None:
                seated.seats.pop(self.name, None)
                self.seats[i] = None
                unseated.append(seated)
        for sess in list(self.watchers):
            sess.watches.pop(self.name, None)
        self.watchers.clear()
        self.stop_timers()
        self.status = CLOSED
        return unseated

    def is_player(self, sess: Session) -> bool:
        """Whether ``sess`` plays here: seated now, seated since the current game started,
        or holding one of the table's reserved seat tokens (then it is that seat)."""
        if self.name in sess.seats or sess.token in self.game_tokens:
            return True
        return self.reserved_tokens is not None and sess.token in self.reserved_tokens

    def broadcast_ok(self, token: Any) -> bool:
        """Whether ``token`` is this table's broadcast token (compared in constant time)."""
        if self.broadcast_hash is None or not isinstance(token, str):
            return False
        return hmac.compare_digest(_sha256(token), self.broadcast_hash)

    def add_watcher(self, sess: Session, full: bool) -> None:
        self.watchers[sess] = full
        sess.watches[self.name] = full

    def remove_watcher(self, sess: Session) -> None:
        self.watchers.pop(sess, None)
        sess.watches.pop(self.name, None)

    def rematch(self, seat: int) -> None:
        """``seat`` asks for another game (protocol.md §5.18); it starts when all have."""
        self.rematch_ready[seat] = True
        status = self.hub.encode(
            {"type": "rematch_status", "table": self.name, "ready": list(self.rematch_ready), "game": self.game_no + 1}
        )
        for s in self.seats:
            if s is not None:
                self.hub.send_bytes(s, status)
        if self.full and all(self.rematch_ready):
            self.start_game()

    # ------------------------------------------------------------------ crash recovery (referee.recovery)
    def restore_counters(self, names: list[str | None], game_no: int, seq: int, reserved: bool) -> None:
        """A restarted referee's table: its names and counters as saved. Reserved seats'
        tokens are unknown until presented (only their hashes were kept)."""
        self.names = list(names)
        self.game_no = game_no
        self.seq = seq
        if reserved:
            self.reserved_tokens = [""] * self.num_seats

    def set_reserved_token(self, seat: int, token: str) -> None:
        assert self.reserved_tokens is not None
        self.reserved_tokens[seat] = token

    def restore_game(
        self,
        game: Game,
        seed: int | str,
        salt: str | None,
        n: int,
        seq: int,
        banks: list[int] | None,
        illegal: list[int],
        decisions: int,
        journal: Journal,
    ) -> None:
        """A running game replayed from its journal: take it over as it stood (``salt``
        None: a game started by a referee before protocol 1.4, unsalted)."""
        self.game = game
        self.views.reset(game)
        self.seed = seed
        self.salt = salt
        self.seed_hash = seed_hash(seed, salt)
        self.n = n
        self.seq = seq
        self.banks = banks
        self.illegal = illegal
        self.decisions = decisions
        self.rematch_ready = [False] * self.num_seats
        self.status = PLAYING
        self.journal = journal

    def restored_hand_end(self, result: HandResult) -> None:
        """The journal's last move ended a hand whose ``hand_end`` line was lost: write it."""
        self.n += 1
        if self.journal is not None:
            self.journal.write("hand_end", result=result.to_wire(), n=self.n)

    def resume_restored(self) -> Pending | None:
        """After :meth:`restore_game`: issue the pending prompt again (same seq), with its
        clock stopped until the seat is back (:meth:`restart_clock`); nobody is connected.
        The full feed resumes with the hand's next message: what it held was lost."""
        self._prompt()
        p = self.pending
        assert p is not None
        if p.timer is not None:
            p.timer.cancel()
            p.timer = None
        return p

    def restart_clock(self, seq: int) -> None:
        """The seat to act is back after a restart: its move's clock starts now."""
        p = self.pending
        if p is None or p.seq != seq or self.status != PLAYING or self.game is None:
            return
        p.start = self.hub.now()
        if p.allowance_ms is not None:
            p.timer = self.hub.loop.call_at(p.start + (p.allowance_ms + self.clock.grace_ms) / 1000, self._on_timer, p.seq)

    def restore_finished(self, game: Game, seed: int | str, salt: str | None, seed_hash_: str, n: int) -> None:
        """A table between games: its last game as recorded."""
        self.game = game
        self.views.reset(game)
        self.seed = seed
        self.salt = salt
        self.seed_hash = seed_hash_
        self.remember_deal(self.game_no, seed, salt, seed_hash_)
        self.n = n
        self.status = FINISHED if self.full else WAITING

    def _changed(self) -> None:
        if self.hub.recovery is not None:
            self.hub.recovery.table_changed(self)

    # ------------------------------------------------------------------ sending
    def _public_watchers(self) -> list[Session]:
        return [s for s, full in self.watchers.items() if not full and s.rid is not None]

    def _feed(
        self,
        build: Callable[[int | None], bytes],
        full_build: Callable[[], dict[str, Any]] | None,
        event: bool = False,
        skip: tuple[int, ...] = (),
        carrier: bool = False,
    ) -> None:
        """Send one feed message: each seat its own frame, public watchers one shared
        frame, the full feed (if this table has one) a delayed copy. An ``event`` skips
        the seats of sessions that declined events (protocol 1.1) or batch them (1.3:
        held by :meth:`_hold`), and the seats in ``skip`` (already sent theirs,
        :meth:`_first_frames`). A ``carrier`` (hand_end, game_end) brings a batched seat
        its held events."""
        send = self.hub.send_bytes
        for seat, sess in enumerate(self.seats):  # (this loop and _hold's are per move: inlined)
            if sess is None or sess.rid is None:
                continue
            if event:
                if not sess.events or sess.batch or seat in skip:
                    continue
                send(sess, build(seat))
            elif carrier and sess.batch and sess.events:  # Session.batched
                send(sess, with_field(build(seat), "events", self._take_held(seat)))
            else:
                send(sess, build(seat))
        if self.watchers:
            watchers = self._public_watchers()
            if watchers:
                data = build(None)
                for w in watchers:
                    send(w, data)
        if self.full_feed_delay_ms is not None and full_build is not None:
            self._hold_full(full_build())

    def _first_frames(self, build: Callable[[int | None], bytes], seats: tuple[int, ...]) -> list[tuple[Session, bytes]]:
        """An ``event``'s frames for ``seats`` only, to go out just ahead of the next
        prompt (see :meth:`_after_move`)."""
        out = []
        for seat in seats:
            sess = self.seats[seat]
            if sess is not None and sess.rid is not None and sess.events and not sess.batch:
                out.append((sess, build(seat)))
        return out

    def _hold(self, entry: Callable[[int], bytes]) -> None:
        """Protocol 1.3: keep a move's HeldEvent for every batched seat (instead of an
        ``event`` frame); its next prompt, advise_prompt, hand_end or game_end carries it."""
        for seat, sess in enumerate(self.seats):
            if sess is not None and sess.batch and sess.events and sess.rid is not None:  # Session.batched
                self.held[seat].append(entry(seat))

    def _take_held(self, seat: int) -> bytes:
        """The packed list of ``seat``'s held events, now being delivered (emptied)."""
        held = self.held[seat]
        data = pack_array(held)
        held.clear()
        return data

    def _hold_full(self, msg: dict[str, Any]) -> None:
        """Keep a full-feed message until its hand has ended (protocol.md §11, 1.4).

        Why held, not merely delayed: a hand's stock keeps its order, so a seat reading a
        full feed delayed by any number of milliseconds knew its next draws (issue 14).
        A ``hand_end`` or ``game_end`` closes the hand: everything held goes out
        ``full_feed_delay_ms`` later, in order, with its ``n``. Before that, nothing of
        the running hand reaches a full watcher (not even the public copy: one ``n``,
        one content). The bound only matters for rules beyond the engine's (FULL_HELD_MAX);
        a watcher that misses messages sees the gap in ``n`` and syncs.
        """
        view = msg.get("view")
        self.full_held.append(self.hub.encode(msg))
        if view is not None:
            self.full_held_view = (msg["n"], view)
        if msg["type"] not in ("hand_end", "game_end"):
            return
        assert self.full_feed_delay_ms is not None
        self.full_out.append((self.game_no, list(self.full_held), self.full_held_view))
        self.full_held.clear()
        self.full_held_view = None
        self.hub.loop.call_later(self.full_feed_delay_ms / 1000, self._release_full)

    def _release_full(self) -> None:
        """An ended hand's delay is over: its messages to the full watchers. Each timer
        releases the oldest waiting hand, so hands go out in order even when two timers
        are due at the same instant (the loop does not promise their order)."""
        if not self.full_out:
            return
        game, batch, point = self.full_out.popleft()
        if point is not None:
            self.full_released = (game, *point)
        send = self.hub.send_bytes
        for w, full in list(self.watchers.items()):
            if full and w.rid is not None:
                for data in batch:
                    send(w, data)
        self.hub.kick()

    def _full_view(self) -> dict[str, Any]:
        assert self.game is not None
        return self.game.full_view().to_wire()

    # ------------------------------------------------------------------ game start
    def _seed_for(self, k: int) -> int | str:
        """Game ``k``'s seed: the admin's fixed seed for game 1, else 256 fresh random bits.

        Never derived from an earlier seed: game k's seed is revealed at its end, and a
        rematch dealt from it (the old ``"S/2"``) would be known to every player before
        it starts. Fixing the seed is for reproducing one game (tests, transcripts,
        tournaments' duplicate deals, which use one table per game)."""
        if self.base_seed is not None and k == 1:
            return self.base_seed
        return new_seed()

    def remember_deal(self, game: int, seed: int | str, salt: str | None, hash_: str) -> None:
        """Keep a finished game's secrets for ``reveal`` (the last REVEAL_HISTORY games)."""
        deals = self.deals
        deals.pop(game, None)
        deals[game] = (seed, salt, hash_)
        while len(deals) > REVEAL_HISTORY:
            del deals[next(iter(deals))]

    def restore_deals(self, saved: list[Any]) -> None:
        """Crash recovery: the finished games' secrets as saved ([game, seed, salt, hash] rows)."""
        for game, seed, salt, hash_ in saved:
            self.remember_deal(int(game), seed, salt, hash_)

    def game_end_secrets(self) -> dict[str, Any]:
        """``game_end``'s ``seed`` and ``salt``: revealed, or nulls at a deferred table."""
        if self.reveal == REVEAL_DEFERRED:
            return {"seed": None, "salt": None}
        return {"seed": self.seed, "salt": self.salt}

    def start_game(self) -> None:
        """All seats taken: deal game ``game_no + 1`` and prompt the first seat."""
        self.game_no += 1
        self.seed = self._seed_for(self.game_no)
        self.game = Game(self.rules, self.seed)
        self.views.reset(self.game)
        self.missed_end.clear()
        self.salt = new_salt()  # fresh per game: the commitment of protocol.md §5.10
        self.seed_hash = seed_hash(self.seed, self.salt)
        self.n = 0
        self.banks = [self.clock.bank_ms] * self.num_seats if self.clock.bank_ms > 0 else None
        self.illegal = [0] * self.num_seats
        self.rematch_ready = [False] * self.num_seats
        self.full_held.clear()
        self.full_held_view = None
        self.game_tokens = {s.token for s in self.seats if s is not None and s.token}
        for held in self.held:
            held.clear()
        self.status = PLAYING
        if self.hub.config.journal_dir is not None:
            self.journal = Journal(self.hub.config.journal_dir, self.name, self.game_no)
            self.journal.write(
                "start",
                format=JOURNAL_FORMAT,
                version=JOURNAL_VERSION,
                table=self.name,
                game=self.game_no,
                rules=self.rules_wire,
                seed_hash=self.seed_hash,
                players=self.players(),
                clock=self.clock.to_wire(),
                policies=self.policies.to_wire(),
                referee=self.hub.software,
                started=iso_now(),
            )
        if self.hub.recovery is not None:
            self.hub.recovery.game_started(self)  # the seed is on disk before anyone hears of the game
        base = {
            "type": "game_start",
            "table": self.name,
            "game": self.game_no,
            "n": 0,
            **self._desc(),
            "seed_hash": self.seed_hash,
        }
        self._feed(
            lambda seat: frame({**base, "seat": seat}, ("view", self.views.packed(seat))),
            lambda: {**base, "seat": None, "view": self._full_view()},
        )
        self._prompt()

    # ------------------------------------------------------------------ prompts
    def _allowance(self, seat: int) -> int | None:
        limits = []
        if self.clock.move_ms > 0:
            limits.append(self.clock.move_ms)
        if self.banks is not None:
            limits.append(self.banks[seat])
        return min(limits) if limits else None

    def clock_state(self, p: Pending) -> dict[str, Any]:
        spent = int((self.hub.now() - p.start) * 1000)
        remaining = None if p.allowance_ms is None else max(0, p.allowance_ms - spent)
        banks = self.bank_now()
        return {
            "remaining_ms": remaining,
            "move_ms": self.clock.move_ms,
            "bank_ms": banks,  # the 1.0 name, kept for 1.x clients: a list here, an int in a Clock
            "banks_ms": banks,  # 1.4: the same list under a name of its own (protocol.md 6.8)
            "increment_ms": self.clock.increment_ms,
            "grace_ms": self.clock.grace_ms,
        }

    def bank_now(self) -> list[int] | None:
        """Every seat's bank, the pending move's time so far taken off its seat's."""
        if self.banks is None:
            return None
        banks = list(self.banks)
        p = self.pending
        if p is not None:
            banks[p.seat] = max(0, banks[p.seat] - int((self.hub.now() - p.start) * 1000))
        return banks

    def _prompt(
        self, error: ProtocolError | None = None, fresh: bool = True, lead: list[tuple[Session, bytes]] | None = None
    ) -> None:
        """Prompt the seat to act (a fresh move, or a re-prompt of the same move); ``lead``
        are frames that must reach their sessions just before the prompt."""
        game = self.game
        assert game is not None and not game.is_over
        seat = game.current_player
        assert seat is not None
        now = self.hub.now()
        old = self.pending
        start = now if (fresh or old is None) else old.start
        if old is not None and old.timer is not None:
            old.timer.cancel()
        self.seq += 1
        p = Pending(seat, self.seq, start, self._allowance(seat))
        if not fresh and old is not None:
            p.refused = old.refused
        if p.allowance_ms is not None:
            deadline = start + (p.allowance_ms + self.clock.grace_ms) / 1000
            p.timer = self.hub.loop.call_at(deadline, self._on_timer, p.seq)
        self.pending = p
        self.send_prompt(error, lead)

    def send_prompt(self, error: ProtocolError | None = None, lead: list[tuple[Session, bytes]] | None = None) -> None:
        """(Re)send the pending prompt to its seat, and the advise prompt to the sitter.

        The prompt frame is built before ``lead`` (the seat's event of the move just made)
        is sent, so that the event and the prompt leave back to back: a client woken by
        the event then finds the prompt already there, instead of going back to sleep
        for it while the referee builds the prompt (one wake-up per decision, not two).
        """
        p = self.pending
        game = self.game
        if p is None or game is None:
            return
        sess = self.seats[p.seat]
        data = self._prompt_frame(p, error) if sess is not None and sess.rid is not None else None
        if lead:
            for s, d in lead:
                self.hub.send_bytes(s, d)
        if data is not None:
            assert sess is not None
            self.hub.send_bytes(sess, data)
        if game.roles is not None and p.seat == game.roles[1]:
            self.send_advise_prompt()

    def send_missed_end(self, seat: int, sess: Session) -> None:
        """After a resume's snapshot: the ``game_end`` this session missed while it was
        disconnected, if its game ended then (each missed end is delivered once; a
        batched seat's ``events`` is empty, the snapshot covered them)."""
        missed = self.missed_end.get(seat)
        if missed is None or missed[0] is not sess:
            return
        del self.missed_end[seat]
        data = frame(missed[1], ("view", self.views.packed(seat)))
        if sess.batched:
            data = with_field(data, "events", pack_array([]))
        self.hub.send_bytes(sess, data)

    def send_prompt_to(self, seat: int) -> None:
        """Resend what ``seat`` is waiting to answer, if anything (resume, ``sync``)."""
        p = self.pending
        game = self.game
        if p is None or game is None:
            return
        if p.seat == seat:
            sess = self.seats[seat]
            if sess is not None and sess.rid is not None:
                self.hub.send_bytes(sess, self._prompt_frame(p, None))
        elif game.roles is not None and seat == game.roles[2]:
            self.send_advise_prompt()

    def send_advise_prompt(self) -> None:
        p = self.pending
        game = self.game
        if p is None or game is None or game.roles is None or p.seat != game.roles[1]:
            return
        sitter = game.roles[2]
        sess = self.seats[sitter]
        if sess is None or sess.rid is None:
            return
        fields = {"type": "advise_prompt", "table": self.name, "game": self.game_no, "seq": p.seq, "captain": p.seat}
        legal, view = ("legal", self.views.legal_packed()), ("view", self.views.packed(sitter))
        if sess.batched:
            self.hub.send_bytes(sess, frame(fields, legal, view, ("events", self._take_held(sitter))))
        else:
            self.hub.send_bytes(sess, frame(fields, legal, view))

    def _prompt_frame(self, p: Pending, error: ProtocolError | None) -> bytes:
        fields: dict[str, Any] = {
            "type": "prompt",
            "table": self.name,
            "game": self.game_no,
            "seq": p.seq,
            "seat": p.seat,
        }
        if p.allowance_ms is None and self.banks is None:
            # an untimed move: the clock map never changes at this table (packed once)
            clock = self._untimed_clock
            if clock is None:
                clock = self._untimed_clock = pack(self.clock_state(p))
        else:
            clock = pack(self.clock_state(p))
        if error is not None:
            fields["error"] = error.info()
        legal, view = ("legal", self.views.legal_packed()), ("view", self.views.packed(p.seat))
        sess = self.seats[p.seat]
        if sess is not None and sess.batched:
            return frame(fields, ("clock", clock), legal, view, ("events", self._take_held(p.seat)))
        return frame(fields, ("clock", clock), legal, view)

    # ------------------------------------------------------------------ moves
    def on_act(self, sess: Session, seat: int, msg: dict[str, Any], rqid: Any) -> bool:
        """A seat's answer to a prompt (protocol.md §5.12). Raises ProtocolError to refuse.

        Returns whether the answer is free of the sender's rate budget: a move applied,
        or the first refused answer to this move (re-prompts included). Answers come at
        the referee's pace, so a bot playing flat out is never throttled; but a client
        that keeps answering with illegal acts is paying for each one past the first
        (referee.ratelimit), and its table's illegal policy applies as always."""
        if "seat" in msg and msg["seat"] != seat:
            raise ProtocolError("wrong_seat", f"you sit at seat {seat} of table {self.name}, not seat {msg['seat']}")
        game = self.game
        if game is None or self.status != PLAYING:
            raise ProtocolError("no_game", f"no game is running at table {self.name}")
        p = self.pending
        if p is None or p.seat != seat:
            who = "nobody" if p is None else f"seat {p.seat}"
            raise ProtocolError("not_your_turn", f"no prompt is pending for seat {seat}; {who} is to act")
        if msg["seq"] != p.seq:
            raise ProtocolError(
                "stale_seq", f"seq {msg['seq']} is not the pending prompt's (seq {p.seq}); this answer is ignored"
            )
        now = self.hub.now()
        elapsed = int((now - p.start) * 1000)
        if p.allowance_ms is not None and elapsed > p.allowance_ms + self.clock.grace_ms:
            self._timeout(p)
            raise ProtocolError(
                "stale_seq",
                f"your move arrived {elapsed - p.allowance_ms} ms after its time limit (grace {self.clock.grace_ms} ms); "
                f"the timeout policy ({self.policies.timeout}) was applied",
            )
        try:
            action = Action.from_wire(msg["action"])
        except Exception as e:  # any malformation of a client's map is bad_action
            return self._illegal(sess, seat, "bad_action", f"bad action: {e}", msg["action"], None, rqid)
        hand_before = game.hand
        try:
            result = game.apply(action, seat=seat)
        except IllegalAction as e:
            return self._illegal(sess, seat, "illegal_action", f"illegal action {action}: {e}", msg["action"], action, rqid)
        if p.timer is not None:
            p.timer.cancel()
        self.pending = None
        if self.banks is not None:
            self.banks[seat] = max(0, self.banks[seat] - elapsed) + self.clock.increment_ms
        self._after_move(seat, action, hand_before, result, p.seq, elapsed, auto=False)
        return True

    def _after_move(
        self, actor: int, action: Action, hand_before: Any, result: HandResult | None, seq: int, elapsed: int, auto: bool
    ) -> None:
        game = self.game
        assert game is not None
        self.decisions += 1
        self.views.touch()
        self.n += 1
        n = self.n
        if self.journal is not None:
            self.journal.write_action(actor, action, seq, elapsed, auto, n)
        kind = action.kind
        ended = result is not None
        base = {"type": "event", "table": self.name, "game": self.game_no, "n": n, "auto": auto}
        if ended:
            public_card = action.card if kind == "discard" else None
            move_pub = {"seat": actor, "kind": kind, "card": None if public_card is None else _cs(public_card)}

            ended_frame = pack({**base, "move": move_pub, "view": None})
            ended_held = pack({"n": n, "move": move_pub, "auto": auto})

            def build(seat: int | None) -> bytes:
                return ended_frame

            def held(seat: int) -> bytes:
                return ended_held
        else:

            views = self.views
            held_base = {"n": n, "auto": auto}

            def build(seat: int | None) -> bytes:
                # the move as this seat saw it = the last event of its view, already packed
                view = views.packed(seat)
                return frame(base, ("move", views.last_event_packed(seat)), ("view", view))

            def held(seat: int) -> bytes:
                return frame(held_base, ("move", views.last_event_packed(seat)))

        def build_full() -> dict[str, Any]:
            card = action.card if action.card is not None else hand_before.events[-1][2]
            move = {"seat": actor, "kind": kind, "card": None if card is None else _cs(card)}
            return {**base, "move": move, "view": None if ended else self._full_view()}

        self._hold(held)
        if not ended:
            # The next decision waits on the next prompt, not on the other events: the
            # seat(s) about to be prompted get the event, then the prompt goes out, and
            # only then does everyone else get the event. Each connection still receives
            # its messages in protocol.md 4.3's order (event before the next prompt);
            # only the order across connections, which no client can observe, changes.
            to_act = game.current_player
            assert to_act is not None  # no hand ended, so the game goes on and a seat is to act
            first: tuple[int, ...] = (to_act,)
            if game.roles is not None and first[0] == game.roles[1]:
                first = (first[0], game.roles[2])  # the sitter's advise_prompt follows too
            self._prompt(lead=self._first_frames(build, first))
            self._feed(build, build_full, event=True, skip=first)
            return
        self._feed(build, build_full, event=True)
        if ended:
            assert result is not None
            self.n += 1
            if self.journal is not None:
                self.journal.write("hand_end", result=result.to_wire(), n=self.n)
            rw = result.to_wire()
            rb = pack(rw)
            hbase = {"type": "hand_end", "table": self.name, "game": self.game_no, "n": self.n}
            self._feed(
                lambda seat: frame(hbase, ("result", rb), ("view", self.views.packed(seat))),
                # the full view now shows the next hand's deal: that waits for the next hand's end
                lambda: {**hbase, "result": rw, "view": self._full_view() if game.is_over else self.views.wire(None)},
                carrier=True,
            )
            if game.is_over:
                self.end_game(None)
                return
        self._prompt()

    def _illegal(self, sess: Session, seat: int, name: str, message: str, raw: Any, action: Action | None, rqid: Any) -> bool:
        """An illegal or malformed action: error, then re-prompt or forfeit (protocol.md §8).

        The journal keeps a well-formed action in its canonical form (small by
        construction) and of anything else only its size, hash and head
        (:func:`refused_input`). Returns whether this answer is free (see :meth:`on_act`)."""
        self.illegal[seat] += 1
        count = self.illegal[seat]
        if len(message) > ERROR_TEXT_CHARS:
            message = message[: ERROR_TEXT_CHARS - 1] + "…"
        err = ProtocolError(name, message, request="act", table=self.name)
        p = self.pending
        free = True
        if p is not None:
            p.refused += 1
            free = p.refused == 1
        if self.journal is not None:
            if action is not None:
                self.journal.write(
                    "illegal", seat=seat, seq=p.seq if p else None, action=action.to_wire(), error=err.info(), count=count
                )
            else:
                self.journal.write(
                    "illegal",
                    seat=seat,
                    seq=p.seq if p else None,
                    action=None,
                    input=refused_input(raw),
                    error=err.info(),
                    count=count,
                )
        self.hub.send(sess, err.to_wire(rqid))
        if self.policies.illegal == "forfeit" and count >= self.policies.illegal_limit:
            self.forfeit(seat, "illegal")
        else:
            self._prompt(error=err, fresh=False)
        return free

    def _on_timer(self, seq: int) -> None:
        p = self.pending
        if p is not None and p.seq == seq:
            self._timeout(p)
            self.hub.kick()

    def _timeout(self, p: Pending) -> None:
        """A late move: forfeit, or the referee's default move (protocol.md §8)."""
        game = self.game
        assert game is not None
        if p.timer is not None:
            p.timer.cancel()
        elapsed = int((self.hub.now() - p.start) * 1000)
        if self.journal is not None:
            self.journal.write("timeout", seat=p.seat, seq=p.seq, ms=elapsed, policy=self.policies.timeout)
        self.pending = None
        if self.policies.timeout == "forfeit":
            self.forfeit(p.seat, "timeout")
            return
        action = default_action(game)
        hand_before = game.hand
        result = game.apply(action, seat=p.seat)
        if self.banks is not None:
            self.banks[p.seat] = self.clock.increment_ms
        self._after_move(p.seat, action, hand_before, result, p.seq, elapsed, auto=True)

    def forfeit(self, seat: int, reason: str) -> None:
        """``seat`` loses the running game (timeout, illegal, disconnect, resigned)."""
        game = self.game
        assert game is not None and not game.is_over
        game.resign(seat, reason)
        if self.journal is not None:
            self.journal.write("resign", seat=seat, reason=reason)
        self.end_game(seat)

    def abandon(self, reason: str = "abandoned") -> None:
        """End the running game with no winner (table closed, referee stopping)."""
        game = self.game
        if game is None or game.is_over or self.status != PLAYING:
            return
        game.abandon(reason)
        if self.journal is not None:
            self.journal.write("abandon", reason=reason)
        self.end_game(None)

    def end_game(self, at_fault: int | None) -> None:
        """The game is over: journal's last line, ``game_end`` to everyone."""
        game = self.game
        assert game is not None and game.is_over
        p = self.pending
        if p is not None and p.timer is not None:
            p.timer.cancel()
        self.pending = None
        self.views.touch()
        final = game.final_scores()
        if self.journal is not None:
            # The journal is the operator's: it keeps the seed and salt even when game_end
            # defers their reveal (protocol.md §12), so that it can still be checked.
            deferred = {"reveal": REVEAL_DEFERRED} if self.reveal == REVEAL_DEFERRED else {}
            self.journal.write(
                "end",
                seed=self.seed,
                salt=self.salt,
                seed_hash=self.seed_hash,
                **deferred,
                final=final,
                termination=game.termination,
                record=game.to_record(),
            )
            self.journal.close()
            self.journal = None
        self.n += 1
        self.status = FINISHED
        self.rematch_ready = [False] * self.num_seats
        assert self.seed is not None and self.seed_hash is not None
        self.remember_deal(self.game_no, self.seed, self.salt, self.seed_hash)
        if self.hub.recovery is not None:
            self.hub.recovery.table_changed(self)
        base = {
            "type": "game_end",
            "table": self.name,
            "game": self.game_no,
            "n": self.n,
            "final": final,
            "termination": game.termination,
            "winner": game.winner,
            "at_fault": at_fault,
            **self.game_end_secrets(),
            "seed_hash": self.seed_hash,
        }
        for seat, sess in enumerate(self.seats):
            if sess is not None and sess.rid is None:
                self.missed_end[seat] = (sess, base)
        self._feed(
            lambda seat: frame(base, ("view", self.views.packed(seat))), lambda: {**base, "view": self._full_view()}, carrier=True
        )
        if not self.full:
            self.status = WAITING

    # ------------------------------------------------------------------ advice
    def on_advise(self, sess: Session, seat: int, msg: dict[str, Any], rqid: Any) -> None:
        game = self.game
        if game is None or self.status != PLAYING:
            raise ProtocolError("no_game", f"no game is running at table {self.name}")
        if game.roles is None:
            raise ProtocolError("forbidden", "advice exists only in Gin in the Box")
        if seat != game.roles[2]:
            raise ProtocolError("forbidden", f"only the player sitting out (seat {game.roles[2]}) may advise the captain")
        p = self.pending
        if p is None or p.seat != game.roles[1] or msg["seq"] != p.seq:
            now = "no prompt is pending" if p is None else f"the pending prompt is seq {p.seq} for seat {p.seat}"
            raise ProtocolError("stale_seq", f"advice for seq {msg['seq']} is stale: {now}")
        # Every advice of a hand is in the captain's view (docs/rules.md §4), so each one makes
        # every later message to the captain bigger: capped per prompt and per hand.
        cfg = self.hub.config
        if p.advised >= cfg.max_advice_per_prompt:
            raise ProtocolError(
                "limit_reached", f"at most {cfg.max_advice_per_prompt} advice per prompt; seq {p.seq} has had its share"
            )
        hand_no = game.hand.number
        if self._advice_hand != hand_no:
            self._advice_hand, self._advice_count = hand_no, 0
        if self._advice_count >= cfg.max_advice_per_hand:
            raise ProtocolError(
                "limit_reached", f"at most {cfg.max_advice_per_hand} advice per hand; this hand has had its share"
            )
        action = None
        raw = msg.get("action")
        if raw is not None:
            try:
                action = Action.from_wire(raw)
            except Exception as e:
                raise ProtocolError("bad_action", f"bad suggested action: {e}") from None
        text = msg.get("text", "")
        try:
            game.advise(seat, action, text)
        except IllegalAction as e:
            raise ProtocolError("bad_advice", str(e)) from None
        p.advised += 1
        self._advice_count += 1
        self.views.touch()
        if self.journal is not None:
            self.journal.write("advice", seat=seat, action=None if action is None else action.to_wire(), text=text, seq=p.seq)
        self.hub.reply_ok(sess, "advise", rqid)
        captain = self.seats[game.roles[1]]
        if captain is not None:
            self.hub.send(
                captain,
                {
                    "type": "advice",
                    "table": self.name,
                    "game": self.game_no,
                    "seq": p.seq,
                    "seat": seat,
                    "action": None if action is None else action.to_wire(),
                    "text": text,
                },
            )

    # ------------------------------------------------------------------ snapshots
    def snapshot(self, seat: int | None, full: bool, rqid: Any = None) -> dict[str, Any]:
        """The ``snapshot`` for a seat, a public spectator or the delayed full feed."""
        if seat is not None:
            self.held[seat].clear()  # the snapshot covers what a batched seat was holding (1.3)
        n = self.n
        view: dict[str, Any] | None = None
        if self.game is not None:
            if full:
                # As of the last message released to the full watchers (_release_full),
                # never a look into a hand still running or still waiting out its delay.
                # Nothing of this game released yet: no view, n 0; its game_start follows.
                rel = self.full_released
                if rel is not None and rel[0] == self.game_no:
                    _, n, view = rel
                else:
                    n = 0
            else:
                view = self.views.wire(seat)
        msg: dict[str, Any] = {
            "type": "snapshot",
            "table": self.name,
            "status": self.status,
            "game": self.game_no,
            "n": n,
            "seat": seat,
            "full": full,
            **self._desc(),
            "seed_hash": self.seed_hash,
            "clocks": self.bank_now() if self.status == PLAYING else (list(self.banks) if self.banks is not None else None),
            "view": view,
        }
        if rqid is not None:
            msg["id"] = rqid
        return msg


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _cs(card: int) -> str:
    from okgin import card_str

    return card_str(card)
