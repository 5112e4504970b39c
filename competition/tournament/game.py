"""One game on one referee: the table, its bots, the public feed to the end, the record.

``create_table`` with reserved seats, the deal's seed, the clock and the policies (and
seat doors for sandboxed bots); ``watch`` it (public feed); launch each seat's bot with
its seat token (:mod:`.bots`); follow the feed until ``game_end``; take the record and
clocks (:mod:`.records`); ask for the salt (``reveal``); close the table; end the bots.

Failures: a bot process that exits before its game ended loses it: its seat is taken
with the seat token and resigned (termination ``crash``). A game with no move for
``stall_timeout`` seconds (a hung bot at a table without a time control) is resigned for
the seat to act (termination ``timeout``). A referee that dies, or a table it closes,
gives an :class:`~.executor.Outcome` to replay. Nothing about an unfinished game is
returned, so a replay cannot count it twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import zmq.asyncio

from .bots import BotLauncher, LaunchedBot
from .config import TournamentConfig
from .executor import EventLog, Forfeit, Outcome
from .link import RefereeGone, RequestFailed, resign_seat
from .records import FeedRecorder, find_journal, journal_outcome
from .referees import Slot
from .sandbox import limit_hit
from .schedule import ScheduledGame
from .store import GameResult

__all__ = ["CRASH_GRACE_S", "START_ALLOWANCE_S", "GamePlayer"]

CRASH_GRACE_S = 1.0  # after a bot exits, wait this long for a game_end already on its way
# Before a game starts, the stall clock is at least this long. Why: stall_timeout is about
# moves; starting a bot (an interpreter, a sandbox, a cgroup) on a loaded machine can take
# seconds, and a short stall_timeout then forfeited a bot that was still starting.
START_ALLOWANCE_S = 30.0


class GamePlayer:
    """Plays games on the referees it is given, with the bots its launcher starts."""

    def __init__(self, cfg: TournamentConfig, keep_logs: bool, log: EventLog, bots: BotLauncher,
                 ctx: zmq.asyncio.Context) -> None:
        self.cfg = cfg
        self.keep_logs = keep_logs  # keep every bot's log, not only those of games that ended abnormally
        self.log = log
        self.bots = bots
        self.ctx = ctx
        self.active_queues: set[asyncio.Queue[dict[str, Any]]] = set()

    def abort(self, reason: str) -> None:
        """End every game in progress (the run stopped): each returns ``Outcome(False, reason)``."""
        for q in list(self.active_queues):
            q.put_nowait({"type": "_abort", "reason": reason})

    def take_seat(self, slot: Slot, token: str, table: str, resign: bool = True) -> asyncio.Task[str]:
        """Take a seat with its token and resign it (or only hold it, ``resign=False``),
        over CURVE if the slot's link speaks it (.link.resign_seat)."""
        return asyncio.ensure_future(resign_seat(self.ctx, slot.endpoint, token, table, resign=resign,
                                                 curve=slot.link.curve))

    async def play(self, sg: ScheduledGame, attempt: int, slot: Slot, forfeit: Forfeit | None = None) -> GameResult | Outcome:
        """Play ``sg`` on ``slot``'s referee: the table, the bots, the feed to its end, the
        record and the salt; or the :class:`Outcome` that says why not (``replay``: play
        it again). ``forfeit``: a seat the runner resigns from the start."""
        cfg = self.cfg
        table = f"{cfg.name}-{sg.index}-{attempt}"
        q: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        slot.link.subscribe(table, q.put_nowait)
        self.active_queues.add(q)
        bots: list[LaunchedBot] = []
        ended = False
        override: Forfeit | None = None
        takeover: asyncio.Task[str] | None = None
        holds: list[asyncio.Task[str]] = []
        rtt_from = len(slot.link.rtt_ms)
        started = time.time()
        try:
            try:
                reply = await slot.link.request({
                    "type": "create_table", "table": table, "variant": cfg.rules.variant, "rules": cfg.rules.to_dict(),
                    "seed": sg.seed, "clock": cfg.time_control.to_wire(), "policies": cfg.policies.to_wire(),
                    "reserved": True, "players": list(sg.seats),
                    # Secret deals: game_end reveals nothing; the runner asks for the salt
                    # (5.25) and publishes the seed once every game of the deal has ended.
                    "reveal": "deferred",
                    **self.bots.door_request(slot.endpoint),
                })
                tokens = list(reply.get("seat_tokens") or [])
                if len(tokens) != len(sg.seats):
                    return Outcome(True, f"create_table gave {len(tokens)} seat tokens for {len(sg.seats)} seats")
                doors = list(reply.get("doors") or [None] * len(tokens))
                if len(doors) != len(tokens):
                    return Outcome(True, f"create_table gave {len(doors)} seat doors for {len(tokens)} seats")
                await slot.link.request({"type": "watch", "table": table})
            except RefereeGone as e:
                return Outcome(True, f"referee {slot.label} gone: {e}")
            except RequestFailed as e:
                return Outcome(True, f"referee {slot.label} refused the table: {e}")
            rec = FeedRecorder(cfg.rules, sg.seed)
            if forfeit is not None:
                # A no-show or a withheld nonce (the runner decided): take that seat and
                # resign it, and hold the others (nobody needs to play a game that is
                # forfeited at its start).
                override = forfeit
                seat = forfeit.seat
                takeover = self.take_seat(slot, tokens[seat], table)
                holds.extend(self.take_seat(slot, tokens[s], table, resign=False)
                             for s in range(len(sg.seats)) if s != seat)
            else:
                for seat, name in enumerate(sg.seats):
                    bots.append(await self.bots.launch(cfg.participant(name), seat, slot.endpoint, tokens[seat], table, sg,
                                                  attempt, q, door=doors[seat], curve=slot.link.curve))
            last_progress = time.monotonic()
            while rec.end is None:
                stall = cfg.stall_timeout if rec.started else max(cfg.stall_timeout, START_ALLOWANCE_S)
                wait = stall - (time.monotonic() - last_progress)
                try:
                    msg = await asyncio.wait_for(q.get(), max(0.01, wait))
                except TimeoutError:
                    if override is None:
                        seat = await self._stalled_seat(slot, table, rec, bots)
                        override = Forfeit(seat, "timeout", f"{sg.seats[seat]} made no move for {stall:g} s "
                                             "(the runner's stall_timeout; the table's clock did not end it)")
                        takeover = self.take_seat(slot, tokens[seat], table)
                        last_progress = time.monotonic()
                        continue
                    return Outcome(True, f"the game did not end after resigning a stalled seat ({await _done(takeover)})")
                kind = msg.get("type")
                if kind == "_referee_gone":
                    return Outcome(True, f"referee {slot.label} gone: {msg.get('reason')}")
                if kind == "_abort":
                    return Outcome(False, str(msg.get("reason")))
                if kind == "_exit":
                    seat = int(msg["seat"])
                    if override is not None:
                        # Another seat already loses; hold this one so the game can start and end.
                        holds.append(self.take_seat(slot, tokens[seat], table, resign=False))
                        continue
                    # The game_end may already be on its way (a bot that exits when its game ends).
                    later: list[dict[str, Any]] = []
                    with contextlib.suppress(TimeoutError):
                        while rec.end is None:
                            m2 = await asyncio.wait_for(q.get(), CRASH_GRACE_S)
                            if m2.get("type") in ("_referee_gone", "_abort", "_exit"):
                                later.append(m2)
                                if m2.get("type") != "_exit":
                                    break
                                continue
                            rec.feed(m2)
                    for m2 in later:
                        q.put_nowait(m2)
                    if rec.end is not None:
                        break
                    if any(m2.get("type") != "_exit" for m2 in later):
                        continue
                    tail = self.bots.log_tail(bots[seat].log_path)
                    group = bots[seat].cgroup
                    hit = (group.verdict() if group is not None else None) or limit_hit(
                        msg["code"], tail, cfg.limits.merged(cfg.participant(sg.seats[seat]).limits))
                    override = Forfeit(seat, "crash", f"{sg.seats[seat]}'s process exited with status {msg['code']} "
                                         f"before the game ended" + (f" ({hit})" if hit else "") + (f": {tail}" if tail else ""))
                    takeover = self.take_seat(slot, tokens[seat], table)
                    last_progress = time.monotonic()
                    continue
                if kind == "table_closed" and rec.end is None:
                    return Outcome(True, f"the referee closed the table: {msg.get('reason')}")
                rec.feed(msg)
                last_progress = time.monotonic()
            ended = True
            result = await self._finish(sg, attempt, slot, table, rec, override, started, rtt_from, bots)
            if isinstance(result, GameResult):
                result = await self._revealed(slot, table, sg, rec, result)
            return result
        finally:
            slot.link.unsubscribe(table)
            self.active_queues.discard(q)
            for t in [takeover, *holds]:
                if t is not None and not t.done():
                    t.cancel()
            await self.bots.end(bots, natural=ended)
            if not slot.dead:
                with contextlib.suppress(RefereeGone, RequestFailed):
                    await slot.link.request({"type": "close_table", "table": table}, timeout=10.0)

    async def _stalled_seat(self, slot: Slot, table: str, rec: FeedRecorder, bots: list[LaunchedBot]) -> int:
        """The seat to blame for a stall: the one to act, or (before the game started)
        the first whose bot never took its seat."""
        if rec.started and rec.to_act is not None:
            return int(rec.to_act)
        with contextlib.suppress(RefereeGone, RequestFailed):
            snap = await slot.link.request({"type": "watch", "table": table}, timeout=10.0)
            for seat, who in enumerate(snap.get("players") or []):
                if who is None:
                    return seat
        return 0

    async def _finish(self, sg: ScheduledGame, attempt: int, slot: Slot, table: str, rec: FeedRecorder,
                      override: Forfeit | None, started: float, rtt_from: int, bots: list[LaunchedBot]) -> GameResult | Outcome:
        end = rec.end or {}
        term = str(end.get("termination") or "normal")
        if term == "abandoned":
            return Outcome(True, "the referee abandoned the game")
        final = end.get("final") or {}
        scores = tuple(int(x) for x in final.get("scores") or [0] * len(sg.seats))
        winner_seat = end.get("winner")
        at_fault = end.get("at_fault")
        reason = self._reason(term, sg, winner_seat, at_fault, scores)
        if override is not None and at_fault == override.seat and term == "resigned":
            term, reason = override.termination, override.reason
        # The record is built once, from the best source (.records): the journal of a
        # referee this run started (the engine's own record, the referee's move times),
        # else the game rebuilt from the public feed and checked against the referee's
        # final result.
        record: dict[str, Any] | None = None
        clocks: dict[str, Any] = rec.clocks()
        if slot.local is not None:
            j = await self._journal(slot.local.journal_dir, table)
            if j is not None:
                jend, clocks = j
                record = jend.get("record")
        if record is None:
            record, mismatch = rec.record()
            if mismatch:
                self.log.log_event("record-mismatch", mismatch, game=sg.index)
                clocks["record_note"] = mismatch
        rtt = slot.link.rtt_ms[rtt_from:]
        if rtt:
            clocks["referee_rtt_ms"] = {
                "pings": len(rtt),
                "max": round(max(rtt), 2),
                "median": round(sorted(rtt)[len(rtt) // 2], 2),
            }
        keep_logs = self.keep_logs or term != "normal"
        if not keep_logs:
            for b in bots:
                b.discard = True  # deleted by BotLauncher.end, once the bot and its output have ended
        return GameResult(
            index=sg.index, key=sg.key, deal=sg.deal, seating=sg.seating, seed=sg.seed, seats=sg.seats, scores=scores,
            winner=None if winner_seat is None else sg.seats[int(winner_seat)], termination=term,
            culprit=None if at_fault is None else sg.seats[int(at_fault)], reason=reason, hands=len(rec.results),
            clocks=clocks, record=record, referee=slot.endpoint, table_id=table, attempts=attempt, started=started,
            finished=time.time(),
        )

    async def _revealed(self, slot: Slot, table: str, sg: ScheduledGame, rec: FeedRecorder, g: GameResult) -> GameResult:
        """The referee's salt for this game (``reveal``, protocol.md §5.25, before the
        table is closed), kept with game_start's ``seed_hash`` so that ``okgin tournament
        verify`` can check the commitment. A referee that dealt another seed than the
        schedule's is logged (verify then fails on it); the game stands as played."""
        try:
            rv = await slot.link.request({"type": "reveal", "table": table, "game": 1}, timeout=10.0)
        except (RefereeGone, RequestFailed) as e:
            self.log.log_event("reveal-failed", f"{sg.key}: the referee did not reveal the salt: {e}", game=sg.index)
            return replace(g, seed_hash=rec.seed_hash or "")
        start_hash = rec.seed_hash or str(rv.get("seed_hash") or "")
        if str(rv.get("seed")) != sg.seed or rv.get("seed_hash") != start_hash:
            self.log.log_event("seed-mismatch", f"{sg.key}: the referee revealed seed {rv.get('seed')!r} with hash "
                                 f"{rv.get('seed_hash')!r}; the schedule's seed is {sg.seed!r}, game_start's hash "
                                 f"{rec.seed_hash!r}", game=sg.index)
        return replace(g, seed_hash=start_hash, salt=str(rv.get("salt") or ""))

    def _reason(self, term: str, sg: ScheduledGame, winner: Any, at_fault: Any, scores: tuple[int, ...]) -> str:
        who = sg.seats[int(at_fault)] if isinstance(at_fault, int) else "?"
        if term == "normal" and isinstance(winner, int):
            return f"{sg.seats[winner]} reached {self.cfg.rules.target_score} points ({'-'.join(map(str, scores))})"
        return {
            "timeout": f"{who} ran out of time (the table's clock, policy {self.cfg.policies.timeout})",
            "illegal": f"{who} made {self.cfg.policies.illegal_limit} illegal move(s) (policy {self.cfg.policies.illegal})",
            "disconnect": f"{who} lost its connection and did not come back within the disconnect grace",
            "resigned": f"{who} resigned",
        }.get(term, f"{term} ({who})")

    async def _journal(self, journal_dir: Path, table: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """The journal's end line and clocks; the line may land just after game_end."""
        for _ in range(40):
            path = find_journal(journal_dir, table)
            if path is not None:
                end, clocks = journal_outcome(path)
                if end is not None:
                    return end, clocks
            await asyncio.sleep(0.05)
        return None


async def _done(task: asyncio.Task[str] | None) -> str:
    if task is None:
        return "no takeover"
    if not task.done():
        return "takeover still running"
    with contextlib.suppress(Exception):
        return task.result()
    return "takeover failed"
