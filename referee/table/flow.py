"""A table's game flow without I/O: deal, prompt, act, timeout, illegal, advice, end.

The same shape as :mod:`okgin.protocol.session`: an input goes in (a seat's ``act`` or
``advise``, a prompt's deadline passing, a forfeit), with the time (``now``); what comes
out is the frames to send, in order (:attr:`referee.table.feed.Feed.sends`), the move
timer to set (:attr:`Pending.deadline` of :attr:`GameFlow.pending`), the full-feed
releases that fell due (:attr:`referee.table.feed.Feed.releases`) and whether the table's
saved state changed (:attr:`GameFlow.changed`). It opens no socket, reads no clock and
sets no timer, so tests drive it directly (``tests/referee/test_table_flow.py``); the
IO shell, :class:`referee.table.table.Table`, sends, times and saves.

One thing is written as it happens: the game's journal (handed in by the shell, None in
tests and without journals), because it is write-ahead: a move's line is on disk before
any frame that tells of it exists.

This is where the rules of protocol.md §4.3, §7 and §8 live: who is prompted with what,
what each seat is told after a move, what happens on a timeout or an illegal action.
A refused input raises :class:`okgin.protocol.ProtocolError` and changes nothing
(protocol.md §3), except a late answer, which the timeout policy answers first.
"""

from __future__ import annotations

from typing import Any

from okgin import Action, Game, HandResult, IllegalAction, RuleSet
from okgin.protocol import ProtocolError, encode
from okgin.protocol.settings import Clock, Policies

from ..defaults import default_action
from ..journal import Journal
from ..sessions import Session
from ..wireviews import ViewCache, frame, pack
from .advice import Advice
from .clock import GameClocks
from .deals import DealSecrets
from .feed import Feed
from .frames import move_builders
from .prompts import Pending, Prompts
from .refusals import ERROR_TEXT_CHARS, refused_input
from .seating import Seating
from .status import FINISHED, PLAYING, WAITING

__all__ = ["GameFlow"]


class GameFlow:
    """One table's game flow (see the module docstring)."""

    def __init__(
        self, name: str, rules: RuleSet, clock: Clock, policies: Policies, seating: Seating, feed: Feed, secrets: DealSecrets,
        advice_caps: tuple[int, int] = (2, 40),
    ) -> None:
        self.name = name
        self.rules = rules
        self.clock = clock
        self.policies = policies
        self.seating = seating
        self.feed = feed
        self.secrets = secrets
        self.num_seats = seating.num_seats
        self.status = WAITING
        self.game: Game | None = None
        self.game_no = 0
        self.n = 0
        self.illegal: list[int] = [0] * self.num_seats
        self.decisions = 0
        self.journal: Journal | None = None
        self.views = ViewCache()
        self.prompts = Prompts(name, clock, self.num_seats, self.views, feed)
        self.prompts.pause_away = policies.away_clock == "pause"
        self.prompts.advice_window = policies.advice_window_ms / 1000
        #: The last game's ``game_end`` per seat, which the seat's session may have missed:
        #: seat -> (that session, the message's fields, the session's ``last_recv`` when it
        #: was last sent). A resume sends it again after the snapshot while the referee
        #: has heard nothing from the session since (protocol.md §10, 1.6): a session
        #: that was disconnected when the game ended, and a quick restart whose old
        #: connection the referee still took for alive, both learn how their game ended.
        #: Without it a client waiting for the end of its game would wait for ever.
        self.missed_end: dict[int, tuple[Session, dict[str, Any], float]] = {}
        #: set when the table's saved state changed (a game ended): the shell saves it
        self.changed = False
        self.advice = Advice(name, advice_caps, feed)

    # ------------------------------------------------------------------ start
    def deal(self) -> None:
        """All seats taken: deal game ``game_no + 1`` (nothing is told yet: :meth:`announce`).

        Two steps, so that the shell can save the seed (crash recovery) after the deal
        and before anyone hears of the game."""
        self.game_no += 1
        self.game = Game(self.rules, self.secrets.deal(self.game_no))
        self.views.reset(self.game)
        self.missed_end.clear()
        self.n = 0
        self.prompts.clocks = GameClocks.fresh(self.clock, self.num_seats)
        self.illegal = [0] * self.num_seats
        self.seating.new_game()
        if self.feed.full is not None:
            self.feed.full.new_game()
        self.feed.clear_held()
        self.status = PLAYING

    def announce(self, desc: dict[str, Any], now: float) -> None:
        """``game_start`` to everyone (``desc``: the table's description), then the first prompt."""
        base = {
            "type": "game_start", "table": self.name, "game": self.game_no, "n": 0, **desc,
            "seed_hash": self.secrets.seed_hash,
        }
        self.feed.broadcast(
            lambda seat: frame({**base, "seat": seat}, ("view", self.views.packed(seat))),
            lambda: {**base, "seat": None, "view": self.full_view()},
            self.game_no,
        )
        self.prompt(now)

    def full_view(self) -> dict[str, Any]:
        assert self.game is not None
        return self.game.full_view().to_wire()

    # ------------------------------------------------------------------ prompts (referee.table.prompts)
    @property
    def pending(self) -> Pending | None:
        return self.prompts.pending

    def prompt(
        self, now: float, error: ProtocolError | None = None, fresh: bool = True, lead: list[tuple[Session, bytes]] | None = None
    ) -> None:
        assert self.game is not None
        self.prompts.prompt(self.game, self.game_no, now, error, fresh, lead)

    def send_prompt_to(self, seat: int, now: float) -> None:
        """Resend what ``seat`` is waiting to answer, if anything (resume, ``sync``)."""
        if self.game is not None:
            self.prompts.send_to(self.game, self.game_no, seat, now)

    # ------------------------------------------------------------------ moves
    def act(self, sess: Session, seat: int, msg: dict[str, Any], rqid: Any, now: float) -> bool:
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
        if p.paused_since is not None:  # its seat is back (a resume runs first; this is a safety net)
            self.prompts.resume(seat, now)
        elapsed = p.spent_ms(now)
        if self.prompts.clocks.late(p.allowance_ms, elapsed):
            assert p.allowance_ms is not None
            self.timeout(p, now)
            raise ProtocolError(
                "stale_seq",
                f"your move arrived {elapsed - p.allowance_ms} ms after its time limit (grace {self.clock.grace_ms} ms); "
                f"the timeout policy ({self.policies.timeout}) was applied",
            )
        try:
            action = Action.from_wire(msg["action"])
        except Exception as e:  # any malformation of a client's map is bad_action
            return self.illegal_act(sess, seat, "bad_action", f"bad action: {e}", msg["action"], None, rqid, now)
        hand_before = game.hand
        try:
            result = game.apply(action, seat=seat)
        except IllegalAction as e:
            return self.illegal_act(
                sess, seat, "illegal_action", f"illegal action {action}: {e}", msg["action"], action, rqid, now
            )
        self.prompts.pending = None
        self.prompts.clocks.seats[seat].charge(elapsed)
        self.after_move(seat, action, hand_before, result, p.seq, elapsed, False, now)
        return True

    def after_move(
        self, actor: int, action: Action, hand_before: Any, result: HandResult | None, seq: int, elapsed: int, auto: bool,
        now: float,
    ) -> None:
        """A move was applied: journal it, tell everyone, prompt the next seat (or end)."""
        game = self.game
        assert game is not None
        self.decisions += 1
        self.views.touch()
        self.n += 1
        n = self.n
        if self.journal is not None:
            self.journal.write_action(actor, action, seq, elapsed, auto, n)
        ended = result is not None
        base = {"type": "event", "table": self.name, "game": self.game_no, "n": n, "auto": auto}
        build, held, build_full = move_builders(self.views, base, actor, action, hand_before, ended, self.full_view)
        feed = self.feed
        feed.hold(held)
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
            self.prompt(now, lead=feed.first_frames(build, first))
            feed.broadcast(build, build_full, self.game_no, event=True, skip=first)
            return
        feed.broadcast(build, build_full, self.game_no, event=True)
        assert result is not None
        self.n += 1
        rw = result.to_wire()
        if self.journal is not None:
            self.journal.write("hand_end", result=rw, n=self.n)
        rb = pack(rw)
        hbase = {"type": "hand_end", "table": self.name, "game": self.game_no, "n": self.n}
        feed.broadcast(
            lambda seat: frame(hbase, ("result", rb), ("view", self.views.packed(seat))),
            # the full view now shows the next hand's deal: that waits for the next hand's end
            lambda: {**hbase, "result": rw, "view": self.full_view() if game.is_over else self.views.wire(None)},
            self.game_no,
            carrier=True,
        )
        if game.is_over:
            self.end_game(None)
            return
        self.prompt(now)

    def illegal_act(
        self, sess: Session, seat: int, name: str, message: str, raw: Any, action: Action | None, rqid: Any, now: float
    ) -> bool:
        """An illegal or malformed action: error, then re-prompt or forfeit (protocol.md §8).

        The journal keeps a well-formed action in its canonical form (small by
        construction) and of anything else only its size, hash and head
        (:func:`referee.table.refusals.refused_input`). Returns whether this answer is
        free (see :meth:`act`)."""
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
            seq = p.seq if p else None
            if action is not None:
                self.journal.write("illegal", seat=seat, seq=seq, action=action.to_wire(), error=err.info(), count=count)
            else:
                self.journal.write(
                    "illegal", seat=seat, seq=seq, action=None, input=refused_input(raw), error=err.info(), count=count
                )
        self.feed.send(sess, encode(err.to_wire(rqid)))
        if self.policies.illegal == "forfeit" and count >= self.policies.illegal_limit:
            self.forfeit(seat, "illegal")
        else:
            self.prompt(now, error=err, fresh=False)
        return free

    def deadline_passed(self, seq: int, now: float) -> bool:
        """The move timer of prompt ``seq`` fired; False if that prompt was answered since."""
        p = self.pending
        if p is None or p.seq != seq or p.deadline is None:
            return False
        if now < p.deadline:
            return False  # moved on since the timer was set (a stall was credited): the shell sets it again
        if p.held_until is not None:  # the advice window ended: the captain's prompt goes out
            assert self.game is not None
            return self.prompts.release(self.game, self.game_no, now)
        self.timeout(p, now)
        return True

    def timeout(self, p: Pending, now: float) -> None:
        """A late move: forfeit, or the referee's default move (protocol.md §8)."""
        game = self.game
        assert game is not None
        elapsed = p.spent_ms(now)
        if self.journal is not None:
            self.journal.write("timeout", seat=p.seat, seq=p.seq, ms=elapsed, policy=self.policies.timeout)
        self.prompts.pending = None
        if self.policies.timeout == "forfeit":
            self.forfeit(p.seat, "timeout")
            return
        action = default_action(game)
        hand_before = game.hand
        result = game.apply(action, seat=p.seat)
        self.prompts.clocks.seats[p.seat].charge_timeout()
        self.after_move(p.seat, action, hand_before, result, p.seq, elapsed, True, now)

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
        self.prompts.pending = None
        self.views.touch()
        final = game.final_scores()
        secrets = self.secrets
        if self.journal is not None:
            self.journal.write(
                "end", **secrets.journal_fields(), final=final, termination=game.termination, record=game.to_record()
            )
            self.journal.close()
            self.journal = None
        self.n += 1
        self.status = FINISHED
        self.seating.rematch_ready = [False] * self.num_seats
        secrets.remember(self.game_no)
        self.changed = True
        base = {
            "type": "game_end", "table": self.name, "game": self.game_no, "n": self.n, "final": final,
            "termination": game.termination, "winner": game.winner, "at_fault": at_fault, **secrets.end_fields(),
            "seed_hash": secrets.seed_hash,
        }
        for seat, sess in enumerate(self.seating.seats):
            if sess is not None:
                self.missed_end[seat] = (sess, base, sess.last_recv)
        self.feed.broadcast(
            lambda seat: frame(base, ("view", self.views.packed(seat))),
            lambda: {**base, "view": self.full_view()},
            self.game_no,
            carrier=True,
        )
        if not self.seating.full:
            self.status = WAITING

    # ------------------------------------------------------------------ crash recovery (Table.restore_game, ...)
    def restore_counters(self, game_no: int, seq: int) -> None:
        self.game_no, self.prompts.seq = game_no, seq

    def restore_game(
        self, game: Game, n: int, seq: int, banks: list[int] | None, illegal: list[int], decisions: int, journal: Journal
    ) -> None:
        """A running game replayed from its journal, as it stood (its seed: the secrets')."""
        self.game = game
        self.views.reset(game)
        self.n, self.prompts.seq, self.decisions = n, seq, decisions
        self.prompts.clocks = GameClocks(self.clock, self.num_seats, banks)
        self.illegal = illegal
        self.status = PLAYING
        self.journal = journal

    def restored_hand_end(self, result: HandResult) -> None:
        """The journal's last move ended a hand whose ``hand_end`` line was lost: write it."""
        self.n += 1
        if self.journal is not None:
            self.journal.write("hand_end", result=result.to_wire(), n=self.n)

    # ------------------------------------------------------------------ time nobody is charged (protocol.md §7, §8)
    def seat_away(self, seat: int, since: float) -> None:
        """``seat``'s connection is gone since ``since``: remember it, and stop its move's
        clock if the table's away clock pauses."""
        self.seating.away_since[seat] = since
        self.prompts.pause(seat, since)
        game, p = self.game, self.pending
        if game is not None and game.roles is not None and p is not None and p.held_until is not None and seat == game.roles[2]:
            self.prompts.release(game, self.game_no, since)  # no advice will come from a sitter that is gone

    def seat_back(self, seat: int, now: float) -> None:
        """``seat`` resumed: its stopped move clock (if any) runs again."""
        self.seating.away_since.pop(seat, None)
        self.prompts.resume(seat, now)

    def credit_stall(self, lost_s: float) -> None:
        """The referee did not run for ``lost_s``: the running move is charged none of it.
        The ``last_recv`` stamps of ``missed_end`` move on like the connected sessions'
        own (referee.sessions.SessionDesk.credit_stall), so they still compare."""
        self.prompts.credit(lost_s)
        for seat, (sess, fields, stamp) in list(self.missed_end.items()):
            if sess.rid is not None:
                self.missed_end[seat] = (sess, fields, stamp + lost_s)

    def restart_clock(self, seq: int, now: float) -> None:
        """The seat to act is back after a restart: its move's clock starts ``now``."""
        if self.status == PLAYING and self.game is not None:
            self.prompts.restart_clock(seq, now)

    def restore_finished(self, game: Game, n: int) -> None:
        """A table between games: its last game as recorded."""
        self.game = game
        self.views.reset(game)
        self.n = n
        self.status = FINISHED if self.seating.full else WAITING

    # ------------------------------------------------------------------ advice
    def advise(self, sess: Session, seat: int, msg: dict[str, Any], rqid: Any, now: float = 0.0) -> None:
        """The sitter's advice to its captain (Gin in the Box, protocol.md §5.13)."""
        game = self.game
        if game is None or self.status != PLAYING:
            raise ProtocolError("no_game", f"no game is running at table {self.name}")
        if game.roles is None:
            raise ProtocolError("forbidden", "advice exists only in Gin in the Box")
        if seat != game.roles[2]:
            raise ProtocolError("forbidden", f"only the player sitting out (seat {game.roles[2]}) may advise the captain")
        p = self.pending
        if p is None or p.seat != game.roles[1] or msg["seq"] != p.seq:
            pending = "no prompt is pending" if p is None else f"the pending prompt is seq {p.seq} for seat {p.seat}"
            if sess.minor >= 6 and msg["seq"] < self.prompts.seq:
                # 1.6: say it plainly (a 1.5 client keeps the stale_seq it knows)
                raise ProtocolError(
                    "advice_late", f"your captain already played: advice for seq {msg['seq']} came too late ({pending})"
                )
            raise ProtocolError("stale_seq", f"advice for seq {msg['seq']} is stale: {pending}")
        self.advice.take(game, self.game_no, p, self.journal, sess, seat, msg, rqid)
        self.views.touch()
        self.prompts.release(game, self.game_no, now)  # a captain waiting for this advice is prompted now (1.6)
