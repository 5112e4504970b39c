"""Who is at a table: its seats, names, reserved-seat tokens, watchers and grace timers.

The sessions are the referee's (:class:`referee.sessions.Session`), not the table's:
:class:`Seating` only records where they sit or watch, on both sides (the table's list
and the session's ``seats``/``watches`` maps), so that either can be asked. A seat whose
connection is gone is held for its grace (protocol.md §8); the timer is run by the loop
function handed in (``call_later``), nothing else of the referee.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable
from typing import Any

from ..sessions import Session

__all__ = ["Seating"]


class Seating:
    """The seats and watchers of one table (see the module docstring)."""

    __slots__ = (
        "away_since", "call_later", "game_tokens", "grace_calls", "grace_timers", "names", "num_seats", "quiet",
        "rematch_ready", "reserved_tokens", "seats", "table", "watchers",
    )

    def __init__(
        self,
        table: str,
        num_seats: int,
        call_later: Callable[..., asyncio.TimerHandle],
        reserved: bool = False,
        names: list[str] | None = None,
    ) -> None:
        self.table = table
        self.num_seats = num_seats
        self.call_later = call_later
        self.seats: list[Session | None] = [None] * num_seats
        self.names: list[str | None] = [None] * num_seats
        for i, nm in enumerate((names or [])[:num_seats]):
            self.names[i] = nm
        self.reserved_tokens: list[str] | None = [secrets.token_hex(16) for _ in range(num_seats)] if reserved else None
        self.rematch_ready: list[bool] = [False] * num_seats
        #: session -> whether it watches the full feed
        self.watchers: dict[Session, bool] = {}
        #: public watchers that declined ``event`` messages (protocol 1.8, ``watch.events``
        #: false): an arena's front only needs a game's start and end from its shards, and the
        #: events were most of its work (bench/README.md, *The arena under load*)
        self.quiet: set[Session] = set()
        #: Tokens of the sessions seated here since the current game started (and of those
        #: still seated from before): they may never watch the full feed (Lobby.on_watch).
        self.game_tokens: set[str] = set()
        self.grace_timers: dict[int, asyncio.TimerHandle] = {}
        #: what each grace timer calls, to set it again later (:meth:`delay_graces`)
        self.grace_calls: dict[int, tuple[Callable[[int, Session], Any], Session]] = {}
        #: seat -> since when (the referee's clock) its connection is gone, while it is
        #: (the away clock of protocol.md §8 stops a seat's move from then)
        self.away_since: dict[int, float] = {}

    # ------------------------------------------------------------------ questions
    def players(self) -> list[str | None]:
        """Each seat's player name (a reserved seat's name even while it is empty)."""
        names = self.names if self.reserved_tokens else [None] * self.num_seats
        return [s.name if s is not None else names[i] for i, s in enumerate(self.seats)]

    def free_seats(self) -> list[int]:
        return [i for i, s in enumerate(self.seats) if s is None]

    @property
    def full(self) -> bool:
        return all(s is not None for s in self.seats)

    @property
    def empty(self) -> bool:
        return all(s is None for s in self.seats)

    def is_player(self, sess: Session) -> bool:
        """Whether ``sess`` plays here: seated now, seated since the current game started,
        or holding one of the table's reserved seat tokens (then it is that seat)."""
        if self.table in sess.seats or sess.token in self.game_tokens:
            return True
        return self.reserved_tokens is not None and sess.token in self.reserved_tokens

    def public_watchers(self, event: bool = False) -> list[Session]:
        """The connected watchers of the public feed (for an ``event``, those that did not
        decline events)."""
        if event and self.quiet:
            quiet = self.quiet
            return [s for s, full in self.watchers.items() if not full and s.rid is not None and s not in quiet]
        return [s for s, full in self.watchers.items() if not full and s.rid is not None]

    def full_watchers(self) -> list[Session]:
        """The connected watchers of the full feed."""
        return [s for s, full in self.watchers.items() if full and s.rid is not None]

    def everyone(self) -> list[Session]:
        """Seated sessions and watchers, each once (connected or not)."""
        out: dict[int, Session] = {}
        for s in [s for s in self.seats if s is not None] + list(self.watchers):
            out.setdefault(id(s), s)
        return list(out.values())

    # ------------------------------------------------------------------ changes
    def sit(self, sess: Session, seat: int) -> None:
        """Put ``sess`` in ``seat`` (free, checked by the caller). A player never keeps the
        full feed of its own table (protocol.md §11)."""
        self.seats[seat] = sess
        sess.seats[self.table] = seat
        if sess.token:
            self.game_tokens.add(sess.token)
        if self.watchers.get(sess):
            self.remove_watcher(sess)

    def unseat(self, sess: Session) -> int | None:
        """Take ``sess`` out of its seat here (its grace timer too); its seat, or None."""
        seat = sess.seats.pop(self.table, None)
        if seat is None:
            return None
        self.seats[seat] = None
        self.cancel_grace(seat)
        self.away_since.pop(seat, None)
        self.rematch_ready = [False] * self.num_seats
        return seat

    def new_game(self) -> None:
        """A game starts: the players of this game are the seated ones (and nobody is ready again)."""
        self.game_tokens = {s.token for s in self.seats if s is not None and s.token}
        self.rematch_ready = [False] * self.num_seats

    def clear(self) -> list[Session]:
        """Empty the table (it closes): the sessions that lost a seat here."""
        unseated = []
        for i, seated in enumerate(self.seats):
            if seated is not None:
                seated.seats.pop(self.table, None)
                self.seats[i] = None
                unseated.append(seated)
        for sess in list(self.watchers):
            sess.watches.pop(self.table, None)
        self.watchers.clear()
        self.quiet.clear()
        self.stop_timers()
        return unseated

    def add_watcher(self, sess: Session, full: bool, events: bool = True) -> None:
        """Watch (again: the latest ``watch`` sets the kind of feed and whether events come)."""
        self.watchers[sess] = full
        sess.watches[self.table] = full
        if events:
            self.quiet.discard(sess)
        else:
            self.quiet.add(sess)

    def remove_watcher(self, sess: Session) -> None:
        self.watchers.pop(sess, None)
        self.quiet.discard(sess)
        sess.watches.pop(self.table, None)

    def set_reserved_token(self, seat: int, token: str) -> None:
        assert self.reserved_tokens is not None
        self.reserved_tokens[seat] = token

    def restore(self, names: list[str | None], reserved: bool) -> None:
        """Crash recovery: the names as saved; reserved seats' tokens are unknown until
        presented (only their hashes were kept)."""
        self.names = list(names)
        if reserved:
            self.reserved_tokens = [""] * self.num_seats

    # ------------------------------------------------------------------ grace
    def start_grace(self, seat: int, delay_s: float, expired: Callable[[int, Session], Any]) -> None:
        """The seat's connection is gone: ``expired(seat, session)`` runs after ``delay_s``."""
        self.cancel_grace(seat)
        sess = self.seats[seat]
        assert sess is not None
        self.grace_timers[seat] = self.call_later(delay_s, expired, seat, sess)
        self.grace_calls[seat] = (expired, sess)

    def delay_graces(self, lost_s: float, loop_now: float) -> None:
        """Every running grace ends ``lost_s`` later (the referee did not run for that
        long, referee.stalls: a seat cannot come back to a referee that is not there)."""
        for seat, h in list(self.grace_timers.items()):
            fn, sess = self.grace_calls[seat]
            h.cancel()
            self.grace_timers[seat] = self.call_later(max(0.0, h.when() + lost_s - loop_now), fn, seat, sess)
        for seat in self.away_since:
            self.away_since[seat] += lost_s

    def cancel_grace(self, seat: int) -> bool:
        """Stop the seat's grace timer; True if one was running (the seat was disconnected)."""
        self.grace_calls.pop(seat, None)
        h = self.grace_timers.pop(seat, None)
        if h is None:
            return False
        h.cancel()
        return True

    def grace_ended(self, seat: int) -> None:
        """The grace timer of ``seat`` fired (it no longer needs cancelling)."""
        self.grace_timers.pop(seat, None)
        self.grace_calls.pop(seat, None)

    def stop_timers(self) -> None:
        for h in self.grace_timers.values():
            h.cancel()
        self.grace_timers.clear()
        self.grace_calls.clear()
