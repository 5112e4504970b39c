"""Crash recovery: a referee killed with ``kill -9`` resumes every game it was running.

Restart it with ``okgin referee --recover`` on the same journal directory (and the same
endpoint): every table comes back, every game goes on from its last recorded move, and
every client resumes its session with the token it already has (protocol.md §10.1).

**What is kept, where, and why.** The journals already hold every move of every running
game, written and flushed *before* anyone is told of the move (write-ahead), so a move
is either in the journal or was never announced. What a journal does not hold is kept
in ``JOURNAL_DIR/.okgin-state/`` (directory mode 0700, files 0600):

- ``sessions.log``: one line per session: the SHA-256 of its token, its name and role;
  a ``forget`` line when the referee forgets it. Only hashes: whoever reads the state
  directory still cannot take anyone's seat; a client proves its identity after a
  restart by presenting the token, which is hashed and looked up.
- ``tables/NAME.json``: per table, its settings, who sits where (token hashes), the
  reserved-seat token hashes, the game number, the ``seq`` before the running game's
  first prompt, the running game's **seed and salt** and journal path, and the seeds and
  salts of the table's last finished games (``deals``, for an admin's ``reveal`` at a
  table that defers it, protocol 1.4). A seed is a secret until its game ends (a
  journal's start line holds only the salted hash), and at a deferred table after that
  too, so this directory must be kept as private as the referee's memory. Rewritten atomically (temporary file, then
  rename) whenever it changes: table created, a seat taken or left, a game started or
  ended; removed when the table closes.

Writes are flushed, not fsynced: like the journals, this survives a crashed *process*
(kill -9, out of memory, a bug); a power cut may lose the last entries. A clean stop
(SIGTERM) abandons every game as before and clears the state.

**Restoring** re-creates each table, re-deals its game from the seed and re-applies the
journal's moves, advice, resignations, illegal-move counts and clock entries; a torn
last journal line (the process died mid-write) is cut off: nobody was told of it. The
move in progress is prompted again with the same ``seq``; a ``recover`` journal line
marks the outage (``okgin replay --check`` ignores it). Sessions stay *dormant* until
their token is presented again.

**Clocks across the outage** (protocol.md §7): the outage is charged to nobody. Banks
are recomputed from the journal's recorded move times, so they are exactly what they
were after the last recorded move. The move in progress at the crash is prompted again
with its full allowance, and its clock starts only when the seat to act has resumed its
session (the time its client needs to notice the restart is not its fault either); the
referee cannot know how long that seat had already thought before the crash, so that
time is not charged (the one generosity of the rule, in favour of a seat that did not
cause the outage). Every seat's disconnect grace (§8) runs from the restart.

**Restarting without --recover** closes what a crashed referee left: each unfinished
game is restored, then abandoned, so its journal gets its ``abandon`` and ``end`` lines
(seed revealed) and passes ``okgin replay --check``; the state is then discarded.

One referee at a time per journal directory: the state directory is locked
(``flock``); a second referee on the same directory runs without recovery state and
says so.

Not restored: quick-match queues, watches (spectators ``watch`` again after resuming),
rematch requests made before the crash, and sessions holding no seat that do not come
back within the idle window (:meth:`Recovery.idle_window`).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from okgin import Game, RuleSet
from okgin.rng import seed_hash

from .config import Clock, Policies, RefereeConfig
from .journal import Journal, iso_now
from .sessions import Session
from .statefiles import STATE_DIR, STATE_VERSION, RecoveryError, StateDir, read_journal_entries, token_hash
from .table import CLOSED, PLAYING, Table
from .table.replay import replay

__all__ = ["STATE_DIR", "STATE_VERSION", "Recovery", "RecoveryError", "RecoveryParts", "open_recovery", "token_hash"]

log = logging.getLogger("okgin.referee.recovery")


@dataclass(frozen=True)
class RecoveryParts:
    """What recovery uses of the referee's other parts, and nothing more: the lobby's
    tables and four of its and the session desk's functions, the clock and the loop."""

    tables: dict[str, Table]
    create_table: Callable[..., Table]  # the lobby's (a restored table is created as an admin's would be)
    close_table: Callable[[Table, str], None]
    reserve: Callable[[str, Table, int], None]  # the lobby's: a reserved seat's token holds its seat again
    adopt: Callable[[Session], None]  # the session desk's: a dormant session whose token came back
    grace_expired: Callable[[Table, int, Session], None]
    now: Callable[[], float]
    call_later: Callable[..., asyncio.TimerHandle]


class Recovery:
    """The referee's recovery state (see the module docstring). One per referee."""

    def __init__(self, config: RefereeConfig, parts: RecoveryParts, journal_dir: str | os.PathLike[str]) -> None:
        self.config = config
        self.parts = parts
        self.tables = parts.tables
        self.files = StateDir(journal_dir)
        self.root = self.files.root
        self._restoring = False
        self._hash: dict[Session, str] = {}
        self._seq_base: dict[str, int] = {}
        self._journals: dict[str, str] = {}  # table -> its current or last game's journal
        self._reserved: dict[str, list[str | None]] = {}  # restored tables' reserved-seat token hashes
        self.dormant: dict[str, Session] = {}
        self.dormant_reserved: dict[str, tuple[Table, int]] = {}
        self.paused: dict[Table, tuple[Session, int]] = {}
        self._idle_handle: Any = None
        self.summary = ""
        self.restored_games = 0
        self.restored_tables = 0
        self.failed: list[str] = []

    # ------------------------------------------------------------------ lifecycle
    def start(self, recover: bool) -> None:
        """Restore what a crashed referee left (``recover``) or close it; then keep the state."""
        sessions, states, failed = self.files.load()
        self.failed += failed
        if states or sessions:
            self._restore(sessions, states)
            if not recover:
                closed = self._close_restored()
                self.summary = (f"closed {closed} unfinished game(s) left in {self.root.parent} by a stopped referee "
                                "(abandoned; seeds revealed in their journals); start with --recover to resume them instead")
        self.files.tidy(set(self.tables))
        self._rewrite_log()
        for t in self.tables.values():
            self._write_table(t)

    def close(self) -> None:
        """A clean stop: every game was abandoned, nothing is left to recover."""
        if self._idle_handle is not None:
            self._idle_handle.cancel()
        self.files.clear()

    def idle_window(self) -> float:
        """Seconds a restored session holding no seat waits for its client to come back."""
        return max(2 * self.config.liveness * self.config.heartbeat_ms, self.config.policies.disconnect_grace_ms) / 1000

    # ------------------------------------------------------------------ hooks
    def session_added(self, sess: Session) -> None:
        h = token_hash(sess.token)
        self._hash[sess] = h
        self._append({"t": "session", "h": h, "name": sess.name, "role": sess.role})

    def session_forgotten(self, sess: Session) -> None:
        h = self._hash.pop(sess, None)
        if h is None:
            return
        self.dormant.pop(h, None)
        self._append({"t": "forget", "h": h})

    def game_started(self, t: Table) -> None:
        """Called before the game's first message: its seed must be on disk first."""
        self._seq_base[t.name] = t.seq
        self.table_changed(t)

    def table_changed(self, t: Table) -> None:
        if self._restoring:
            return
        if t.status == CLOSED or self.tables.get(t.name) is not t:
            self.files.remove_table(t.name)
            self._seq_base.pop(t.name, None)
            self._journals.pop(t.name, None)
            self._reserved.pop(t.name, None)
            for h, (rt, _) in list(self.dormant_reserved.items()):
                if rt is t:
                    del self.dormant_reserved[h]
            self.paused.pop(t, None)
            return
        self._write_table(t)

    def claim(self, token: Any) -> None:
        """A ``hello`` presents ``token``: wake its dormant session or reserved seat, if any."""
        if not isinstance(token, str) or not (self.dormant or self.dormant_reserved):
            return
        h = token_hash(token)
        sess = self.dormant.pop(h, None)
        if sess is not None:
            sess.token = token
            self.parts.adopt(sess)
            for t, (owner, seq) in list(self.paused.items()):
                if owner is sess:
                    del self.paused[t]
                    t.restart_clock(seq)  # the seat to act is back: its move's clock starts now
            return
        res = self.dormant_reserved.pop(h, None)
        if res is not None:
            t, seat = res
            if self.tables.get(t.name) is t and t.reserved_tokens is not None:
                t.set_reserved_token(seat, token)
                self.parts.reserve(token, t, seat)

    # ------------------------------------------------------------------ writing
    def _append(self, entry: dict[str, Any]) -> None:
        self.files.append(entry)
        if self.files.log_lines > 2 * len(self._hash) + 1000:
            self._rewrite_log()

    def _rewrite_log(self) -> None:
        self.files.rewrite_log([{"t": "session", "h": h, "name": s.name, "role": s.role} for s, h in self._hash.items()])

    def _write_table(self, t: Table) -> None:
        playing = t.status == PLAYING
        self.files.write_table(t.name, {
            "table": t.name, "origin": t.origin, "rules": t.rules_wire, "clock": t.clock.to_wire(),
            "policies": t.policies.to_wire(), "base_seed": t.base_seed, "full_feed_delay_ms": t.full_feed_delay_ms,
            "broadcast_hash": t.broadcast_hash,  # the broadcast token stays valid across a restart
            "names": t.names,
            "reserved": None if t.reserved_tokens is None else [self._reserved_hash(t, i) for i in range(t.num_seats)],
            "seats": [None if s is None else self._hash.get(s) for s in t.seats],
            "status": t.status, "game_no": t.game_no, "seq": t.seq,
            "seq_base": self._seq_base.get(t.name, t.seq) if playing else None,
            "seed": t.seed, "salt": t.salt, "reveal": t.reveal, "deals": t.saved_deals(), "journal": self._journal_path(t),
        })

    def _reserved_hash(self, t: Table, seat: int) -> str | None:
        assert t.reserved_tokens is not None
        tok = t.reserved_tokens[seat]
        if tok:
            return token_hash(tok)
        known = self._reserved.get(t.name)
        return None if known is None else known[seat]

    def _journal_path(self, t: Table) -> str | None:
        if t.journal is not None:
            self._journals[t.name] = str(t.journal.path)
        return self._journals.get(t.name)

    # ------------------------------------------------------------------ restoring
    def _restore(self, sessions: dict[str, tuple[str, str]], states: list[dict[str, Any]]) -> None:
        parts = self.parts
        now = parts.now()
        for h, (name, role) in sessions.items():
            sess = Session(token="", name=name, role=role, rid=None, last_recv=now, last_sent=now)
            self.dormant[h] = sess
            self._hash[sess] = h
        self._restoring = True
        try:
            for st in states:
                try:
                    self._restore_table(st)
                except Exception as e:  # one bad table must not keep the others down
                    log.error("cannot recover table %s: %s", st.get("table"), e)
                    self.failed.append(f"{st.get('table')}: {e}")
                    t = self.tables.get(str(st.get("table")))
                    if t is not None:
                        parts.close_table(t, "its state could not be recovered")
        finally:
            self._restoring = False
        self._idle_handle = parts.call_later(self.idle_window(), self._forget_idle)
        seated = sum(1 for s in self.dormant.values() if s.seats)
        self.summary = (f"recovered {self.restored_games} running game(s) and {self.restored_tables - self.restored_games} other "
                        f"table(s), {len(self.dormant)} session(s) ({seated} seated) waiting for their tokens, from {self.root}")
        if self.failed:
            self.summary += f"; could not recover: {'; '.join(self.failed)}"

    def _restore_table(self, st: dict[str, Any]) -> None:
        parts = self.parts
        rules = RuleSet.from_dict(dict(st["rules"]))
        t = parts.create_table(
            st["table"],
            rules.variant,
            rules,
            seed=st["base_seed"],
            clock=Clock(**st["clock"]),
            policies=Policies(**st["policies"]),
            full_feed_delay_ms=st["full_feed_delay_ms"],
            origin=st["origin"],
            reveal=st.get("reveal", "game_end"),
        )
        t.restore_counters(list(st["names"]), int(st["game_no"]), int(st["seq"]), st["reserved"] is not None)
        if st.get("broadcast_hash"):
            t.restore_broadcast(st["broadcast_hash"])
        t.restore_deals(st.get("deals") or [])
        if st["reserved"] is not None:
            self._reserved[t.name] = list(st["reserved"])
        for i, h in enumerate(st["seats"]):
            if h is None:
                continue
            sess = self.dormant.get(h)
            if sess is None:  # a seat without its session line: keep the seat, the token still works
                sess = Session(
                    token="", name=t.names[i] or "player", role="player", rid=None, last_recv=parts.now(), last_sent=parts.now()
                )
                self.dormant[h] = sess
                self._hash[sess] = h
            t.sit(sess, i)
        for i, h in enumerate(st["reserved"] or []):
            if h is not None and h not in self.dormant:
                self.dormant_reserved[h] = (t, i)
        if st["status"] == PLAYING:
            self._restore_game(t, st)
        elif t.game_no > 0 and st.get("journal"):
            self._restore_finished(t, Path(st["journal"]))
        self.restored_tables += 1
        grace = t.policies.disconnect_grace_ms / 1000
        for i, sess in enumerate(t.seats):
            if sess is not None and not sess.connected:
                t.start_grace(i, grace, parts.grace_expired)

    def _restore_game(self, t: Table, st: dict[str, Any]) -> None:
        path = Path(st["journal"])
        entries = read_journal_entries(path)
        seed = st["seed"]
        salt = st.get("salt")  # absent in a state saved before protocol 1.4: unsalted
        if entries[0].get("seed_hash") != seed_hash(seed, salt):
            raise RecoveryError("the saved seed does not match the journal's seed_hash")
        if entries[-1]["t"] == "end":  # it ended just before the crash
            self._restore_finished(t, path)
            return
        seq_base = int(st["seq_base"] if st.get("seq_base") is not None else st["seq"])
        r = replay(t.rules, t.clock, seed, entries, seq_base)
        journal = Journal.reopen(path)
        journal.write("recover", seq=r.seq + 1, n=r.n, at=iso_now())
        t.restore_game(r, seed, salt, journal)
        self._seq_base[t.name] = seq_base
        self._journals[t.name] = str(path)
        self.restored_games += 1
        if r.game.is_over:
            t.end_game(r.at_fault)
            return
        p = t.resume_restored()  # the same seq as before the crash; nobody is connected yet
        assert p is not None
        owner = t.seats[p.seat]
        if owner is not None and not owner.connected:
            self.paused[t] = (owner, p.seq)

    def _restore_finished(self, t: Table, path: Path) -> None:
        """A table between games: its last game, rebuilt from the journal's record."""
        if not path.exists():
            return  # a new table waits
        entries = read_journal_entries(path)
        end = entries[-1]
        if end["t"] != "end":
            raise RecoveryError(f"{path} has no end line but its table was not playing")
        game = Game.from_record(end["record"], verify=False)
        t.restore_finished(
            game,
            end["seed"],
            end.get("salt"),
            end["seed_hash"],
            1 + max((e["n"] for e in entries if isinstance(e.get("n"), int)), default=0),
        )
        self._journals[t.name] = str(path)

    def _forget_idle(self) -> None:
        """Restored sessions holding no seat whose clients did not come back."""
        self._idle_handle = None
        for sess in list(self.dormant.values()):
            if not sess.seats:
                self.session_forgotten(sess)

    def _close_restored(self) -> int:
        """Without --recover: end every restored game (abandoned) and close every table."""
        games = 0
        for t in list(self.tables.values()):
            if t.status == PLAYING:
                games += 1
                t.abandon("abandoned")
            self.parts.close_table(t, "the referee restarted without --recover")
        for sess in list(self.dormant.values()):
            self.session_forgotten(sess)
        self.dormant_reserved.clear()
        self.paused.clear()
        if self._idle_handle is not None:
            self._idle_handle.cancel()
            self._idle_handle = None
        return games


def open_recovery(
    config: RefereeConfig, parts: RecoveryParts, attach: Callable[[Recovery], None]
) -> tuple[Recovery | None, str]:
    """The referee's recovery state in its journal directory, restored (``config.recover``)
    or cleared, and the sentence that says what was done; None without journals, or when
    another referee holds the directory. ``attach`` points the referee's recovery hooks at
    it before anything is restored (closing a table that cannot be restored calls them)."""
    if config.journal_dir is None or not config.recovery_state:
        return None, ""
    rec = Recovery(config, parts, config.journal_dir)
    if not rec.files.acquire():  # another live referee holds the directory's lock
        summary = f"another referee is using {rec.root}: running without crash recovery"
        log.warning(summary)
        return None, summary
    attach(rec)
    rec.start(config.recover)
    return rec, rec.summary
