"""The prompt a table waits on, its ``seq`` and clocks, and the prompt frames (protocol.md §5.11, §7).

:class:`Prompts` owns the running move (:class:`Pending`), the table's ``seq`` counter
and every seat's :class:`referee.table.clock.SeatClock` (:attr:`Prompts.clocks`). It
builds ``prompt`` and ``advise_prompt`` frames into the table's
:class:`referee.table.feed.Feed`; the move's deadline is an output
(:attr:`Pending.deadline`), for the IO shell to time. Like the rest of the game flow it
reads no clock: every method that needs the time is handed ``now``.
"""

from __future__ import annotations

from typing import Any

from okgin import Game
from okgin.protocol import ProtocolError
from okgin.protocol.settings import Clock

from ..sessions import Session
from ..wireviews import ViewCache, frame, pack
from .clock import GameClocks
from .feed import Feed

__all__ = ["Pending", "Prompts"]


class Pending:
    """The prompt waiting for an answer: whose, which ``seq``, since when, until when."""

    __slots__ = ("advised", "allowance_ms", "deadline", "held_until", "paused_since", "refused", "seat", "seq", "start")

    def __init__(self, seat: int, seq: int, start: float, allowance_ms: int | None) -> None:
        self.seat = seat
        self.seq = seq
        self.start = start
        self.allowance_ms = allowance_ms
        #: when the move is late (grace included): the shell's timer; None: untimed or stopped
        self.deadline: float | None = None
        #: refused answers to this move so far (re-prompts of one move share the count)
        self.refused = 0
        #: advice accepted for this prompt (Gin in the Box)
        self.advised = 0
        #: since when the move's clock is stopped, its seat being away (policy away_clock
        #: ``pause``, protocol.md §8); None: it runs. ``deadline`` is None meanwhile.
        self.paused_since: float | None = None
        #: Gin in the Box (1.6): until when this captain's prompt waits for its sitter's
        #: advice (the table's advice window, the sitter a person or an agent); None: sent.
        #: While it waits its clock stands still (``paused_since``) and ``deadline`` is
        #: the window's end.
        self.held_until: float | None = None

    def spent_ms(self, now: float) -> int:
        """The time this move has used so far (a stopped clock stands where it stopped)."""
        return int(((now if self.paused_since is None else self.paused_since) - self.start) * 1000)


class Prompts:
    """One table's pending prompt, ``seq`` and clocks (see the module docstring)."""

    __slots__ = ("_untimed_clock", "advice_window", "clock", "clocks", "feed", "name", "pause_away", "pending", "seq", "views")

    def __init__(self, name: str, clock: Clock, num_seats: int, views: ViewCache, feed: Feed) -> None:
        self.name = name
        self.clock = clock
        self.views = views
        self.feed = feed
        self.seq = 0
        self.pending: Pending | None = None
        self.clocks = GameClocks(clock, num_seats, None)  # no bank before the first game (its snapshot says so)
        self._untimed_clock: bytes | None = None  # the packed clock of an untimed prompt (frame)
        #: policy away_clock ``pause``: a seat's move clock stops while the seat is away
        self.pause_away = False
        #: policies.advice_window_ms, in seconds (1.6): 0, no window
        self.advice_window = 0.0

    def prompt(
        self,
        game: Game,
        game_no: int,
        now: float,
        error: ProtocolError | None = None,
        fresh: bool = True,
        lead: list[tuple[Session, bytes]] | None = None,
    ) -> None:
        """Prompt the seat to act (a fresh move, or a re-prompt of the same move); ``lead``
        are frames that must reach their sessions just before the prompt."""
        assert not game.is_over
        seat = game.current_player
        assert seat is not None
        old = self.pending
        start = now if (fresh or old is None) else old.start
        self.seq += 1
        p = Pending(seat, self.seq, start, self.clocks.seats[seat].allowance_ms())
        if not fresh and old is not None:
            p.refused = old.refused
        if p.allowance_ms is not None:
            p.deadline = self.clocks.deadline(start, p.allowance_ms)
        self.pending = p
        if fresh and self.waits_for_advice(game):
            p.held_until = p.deadline = now + self.advice_window
            p.paused_since = start
        since = self.feed.seating.away_since.get(seat)
        if since is not None:
            self.pause(seat, since)
        self.send_prompt(game, game_no, now, error, lead)

    def waits_for_advice(self, game: Game) -> bool:
        """Whether the captain's prompt now waits for its sitter's advice (1.6, protocol.md
        §5.14): the table has an advice window, and the sitter is connected and said in its
        ``hello`` that it is a person or an agent (``advice_wait``). A bot sitter never
        holds a captain up."""
        if not self.advice_window or game.roles is None or game.current_player != game.roles[1]:
            return False
        sitter = self.feed.seating.seats[game.roles[2]]
        return sitter is not None and sitter.rid is not None and sitter.advice_wait

    def release(self, game: Game, game_no: int, now: float) -> bool:
        """The captain's held prompt goes out now (advice came, the window ended, or its
        sitter left): its clock starts now. False if it was not held."""
        p = self.pending
        if p is None or p.held_until is None:
            return False
        p.held_until = None
        p.paused_since = None
        p.start = now
        p.deadline = None if p.allowance_ms is None else self.clocks.deadline(now, p.allowance_ms)
        sess = self.feed.seating.seats[p.seat]
        since = self.feed.seating.away_since.get(p.seat)
        if since is not None:
            self.pause(p.seat, now)
        elif sess is not None and sess.rid is not None:
            self.feed.sends.append((sess, self.frame(p, game_no, None, now)))
        return True

    def send_prompt(
        self, game: Game, game_no: int, now: float, error: ProtocolError | None = None,
        lead: list[tuple[Session, bytes]] | None = None,
    ) -> None:
        """(Re)send the pending prompt to its seat, and the advise prompt to the sitter.

        The prompt frame is built before ``lead`` (the seat's event of the move just made)
        is sent, so that the event and the prompt leave back to back: a client woken by
        the event then finds the prompt already there, instead of going back to sleep
        for it while the referee builds the prompt (one wake-up per decision, not two).
        """
        p = self.pending
        if p is None:
            return
        sess = self.feed.seating.seats[p.seat]
        send = sess is not None and sess.rid is not None and p.held_until is None  # a held prompt waits (1.6)
        data = self.frame(p, game_no, error, now) if send else None
        sends = self.feed.sends
        if lead:
            sends.extend(lead)
        if data is not None:
            assert sess is not None
            sends.append((sess, data))
        if game.roles is not None and p.seat == game.roles[1]:
            self.send_advise_prompt(game, game_no, now)

    def send_to(self, game: Game, game_no: int, seat: int, now: float) -> None:
        """Resend what ``seat`` is waiting to answer, if anything (resume, ``sync``)."""
        p = self.pending
        if p is None:
            return
        if p.seat == seat:
            sess = self.feed.seating.seats[seat]
            if sess is not None and sess.rid is not None and p.held_until is None:
                self.feed.send(sess, self.frame(p, game_no, None, now))
        elif game.roles is not None and seat == game.roles[2]:
            self.send_advise_prompt(game, game_no, now)

    def send_advise_prompt(self, game: Game, game_no: int, now: float | None = None) -> None:
        p = self.pending
        if p is None or game.roles is None or p.seat != game.roles[1]:
            return
        sitter = game.roles[2]
        sess = self.feed.seating.seats[sitter]
        if sess is None or sess.rid is None:
            return
        fields: dict[str, Any] = {"type": "advise_prompt", "table": self.name, "game": game_no, "seq": p.seq, "captain": p.seat}
        if p.held_until is not None and now is not None:  # 1.6: the captain waits this long for you
            fields["window_ms"] = max(0, int((p.held_until - now) * 1000))
        legal, view = ("legal", self.views.legal_packed()), ("view", self.views.packed(sitter))
        if sess.batched:
            self.feed.send(sess, frame(fields, legal, view, ("events", self.feed.take_held(sitter))))
        else:
            self.feed.send(sess, frame(fields, legal, view))

    def clock_state(self, p: Pending, now: float) -> dict[str, Any]:
        spent = p.spent_ms(now)
        return self.clocks.state(p.allowance_ms, spent, self.clocks.banks_now(p.seat, spent))

    def banks_now(self, now: float) -> list[int] | None:
        """Every seat's bank, the pending move's time so far taken off its seat's."""
        p = self.pending
        if p is None:
            return self.clocks.banks()
        return self.clocks.banks_now(p.seat, p.spent_ms(now))

    # ------------------------------------------------------------------ time nobody is charged (protocol.md §7, §8)
    def pause(self, seat: int, since: float) -> bool:
        """``seat`` is away since ``since``: at a table whose away clock pauses, its
        pending move's clock stops there (not before the move began, and not for a move
        that was already late by then). True if a clock stopped."""
        p = self.pending
        if not self.pause_away or p is None or p.seat != seat or p.paused_since is not None:
            return False
        since = max(since, p.start)
        if p.deadline is not None and p.deadline <= since:
            return False  # late before it went away: the timeout policy rules
        p.paused_since = since
        p.deadline = None
        return True

    def resume(self, seat: int, now: float) -> None:
        """``seat`` is back: its stopped move clock runs again from where it stood."""
        p = self.pending
        if p is None or p.seat != seat or p.paused_since is None or p.held_until is not None:
            return
        p.start += now - p.paused_since
        p.paused_since = None
        if p.allowance_ms is not None:
            p.deadline = self.clocks.deadline(p.start, p.allowance_ms)

    def credit(self, lost_s: float) -> None:
        """The referee did not run for ``lost_s`` (referee.stalls): the pending move's
        clock moves on by as much, charged to nobody."""
        p = self.pending
        if p is None:
            return
        p.start += lost_s
        if p.deadline is not None:
            p.deadline += lost_s
        if p.paused_since is not None:
            p.paused_since += lost_s
        if p.held_until is not None:
            p.held_until += lost_s

    def frame(self, p: Pending, game_no: int, error: ProtocolError | None, now: float) -> bytes:
        """The ``prompt`` frame of ``p`` (with ``error``: a re-prompt after a refused answer)."""
        fields: dict[str, Any] = {"type": "prompt", "table": self.name, "game": game_no, "seq": p.seq, "seat": p.seat}
        if p.allowance_ms is None and self.clocks.seats[0].bank_ms is None:
            # an untimed move: the clock map never changes at this table (packed once)
            clock = self._untimed_clock
            if clock is None:
                clock = self._untimed_clock = pack(self.clock_state(p, now))
        else:
            clock = pack(self.clock_state(p, now))
        if error is not None:
            fields["error"] = error.info()
        legal, view = ("legal", self.views.legal_packed()), ("view", self.views.packed(p.seat))
        sess = self.feed.seating.seats[p.seat]
        if sess is not None and sess.batched:
            return frame(fields, ("clock", clock), legal, view, ("events", self.feed.take_held(p.seat)))
        return frame(fields, ("clock", clock), legal, view)

    def restart_clock(self, seq: int, now: float) -> None:
        """After a restart, the seat to act of prompt ``seq`` is back: its clock starts ``now``."""
        p = self.pending
        if p is None or p.seq != seq:
            return
        p.start = now
        if p.allowance_ms is not None:
            p.deadline = self.clocks.deadline(now, p.allowance_ms)
