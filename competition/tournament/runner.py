"""The runner: a tournament's schedule played to the end, game by game, and recorded.

The runner owns the event; an executor (:mod:`.executor`) plays its games. One asyncio
loop drives everything (no threads):

- **Order.** Games are taken in schedule order by ``concurrency`` workers
  (:meth:`Runner.worker`), except that a game with a remote participant waits while that
  participant is away (until its no-show time runs out) or plays another seating of the
  same deal.
- **Forfeits before a game.** A remote no-show, or a participant that committed a nonce
  and withheld it (.entropy), forfeits: the executor is told which seat to resign.
- **Playing.** The executor plays each attempt: on this host's referees and sandboxed bots
  (:class:`~.local.LocalExecutor`, the default), or on a Dask cluster
  (competition.cluster.tournament.DaskExecutor).
- **Recording.** A finished game is written to the results file in one transaction
  (:meth:`Runner.record`); a deal's seed is revealed once every game of it is in; an
  attempt that failed (its referee died) is played again, at most :data:`MAX_ATTEMPTS`
  times. Nothing about an unfinished game is ever written, so a replay cannot count it
  twice.
- **Resume.** The results file holds every finished game by its schedule index; a
  resumed run plays the indices that are missing, with the same seats and seeds.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import shutil
import signal
import sys
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import zmq
import zmq.asyncio

from referee.private import open_private, private_dir

from . import entropy
from .chain import chain_head
from .config import TournamentConfig
from .entropy import Contributor
from .executor import Executor, Forfeit, NoReferee, Outcome, RunOptions, StartError, StopRun
from .gateway import Gateway
from .local import LocalExecutor
from .outputs import output_dir, write_outputs
from .preflight import PreflightFailed, all_crashed
from .progress import Progress
from .report import sprt_status
from .schedule import Schedule, ScheduledGame
from .sprt import SprtMonitor
from .store import GameResult, ResultsStore, discard
from .verify import secrecy_lines

__all__ = ["MAX_ATTEMPTS", "SCAN_LIMIT", "ExecutorFactory", "RunOptions", "Runner", "run_tournament", "write_outputs"]

MAX_ATTEMPTS = 5
SCAN_LIMIT = 100_000  # queued games looked through for one that can start (a remote participant away)

# How the runner makes its executor: (config, options, results file, run directory, ZeroMQ context).
ExecutorFactory = Callable[[TournamentConfig, RunOptions, ResultsStore, Path, zmq.asyncio.Context], Executor]


@dataclass
class RunState:
    stop_reason: str | None = None


class Runner:
    """Plays ``cfg``'s schedule with an executor made by ``executor`` (by default on this
    host) and records it in ``store``."""

    def __init__(self, cfg: TournamentConfig, opts: RunOptions, store: ResultsStore,
                 executor: ExecutorFactory = LocalExecutor) -> None:
        self.cfg = cfg
        self.opts = opts
        self.store = store
        self.schedule = Schedule(cfg, store.secret(), store.entropy_nonces())
        self.done: set[int] = set()  # recorded game indices: a deal is revealed once all of its are
        self.ctx = zmq.asyncio.Context()
        # 0700 (.private): the journals, logs and referee state in it hold seeds and what
        # bots saw; another local user must not read them while the event runs.
        self.workdir = private_dir(store.path.with_name(store.path.stem + "-run"))
        self.concurrency = opts.concurrency or cfg.concurrency
        self.state = RunState()
        self.queue: deque[tuple[int, int]] = deque()
        self.unplayable: list[tuple[int, str]] = []
        self.progress: Progress | None = None
        self.sprt = None if cfg.sprt is None else cfg.sprt.test()
        # The test reads complete deal pairs (the pentanomial GSPRT, see .sprt).
        self.sprt_monitor = None if cfg.sprt is None or self.sprt is None else SprtMonitor(
            self.sprt, cfg.sprt.candidate, cfg.sprt.baseline, cfg.unit_games((cfg.sprt.candidate, cfg.sprt.baseline)))
        self.gateway: Gateway | None = None
        self.stop_event = asyncio.Event()
        # Remote participants (relayed by the gateway): the deals each is playing right
        # now, so that it never sits at two seatings of one deal at once, and an event
        # set whenever a game ends (a waiting game may have become playable).
        self.remote_names = frozenset(p.name for p in cfg.participants if p.kind == "remote")
        self.playing_deals: dict[str, set[int]] = {n: set() for n in self.remote_names}
        self.changed = asyncio.Event()
        self.games_from: float | None = None  # time.monotonic() when the first game could start
        # participants who committed a nonce and withheld it: every game of theirs is forfeited (.entropy)
        self.withheld: frozenset[str] = entropy.withheld(store)
        self.executor = executor(cfg, opts, store, self.workdir, self.ctx)
        self.executor.note = self._note

    def _note(self, text: str) -> None:
        if self.progress is not None:
            self.progress.note = text

    def reschedule(self) -> None:
        """Deal from the participants' nonces once the preflight stored them (.entropy),
        and forfeit the games of those who committed one and withheld it."""
        self.schedule = Schedule(self.cfg, self.store.secret(), self.store.entropy_nonces())
        self.withheld = entropy.withheld(self.store)

    async def prepare(self) -> None:
        """Before the first game: the executor's (referees, sandbox, preflight), with the
        participants' nonce round when this event collects nonces; then the schedule is
        dealt again from them."""

        async def nonce_round(seats: list[Contributor]) -> None:
            await entropy.collect(self.store, self.cfg, self.gateway, self.stop_event, seats)

        await self.executor.prepare(self.store, self.gateway, nonce_round if entropy.wanted(self.store) else None)
        self.reschedule()
        if not self.opts.concurrency and self.executor.concurrency:
            self.concurrency = self.executor.concurrency

    def hand_out_tokens(self, endpoint: str, tokens: dict[str, str]) -> None:
        """Tell the organiser the gateway's endpoint and the remote participants' tokens.

        The tokens go to a 0600 file in the run directory (``remote-tokens``), and to the
        standard output only when it is a terminal: output redirected to a file or a CI
        log is readable by whoever the umask lets in, and a token plays every game of
        its participant."""
        path = self.workdir / "remote-tokens"
        with open_private(path, "wb") as f:
            f.write("".join(f"{n}: {tokens[n]}\n" for n in sorted(tokens)).encode())
        if sys.stdout.isatty():
            print(f"remote bots connect to {endpoint} with their tokens (also in {path}):", flush=True)
            for n in sorted(tokens):
                print(f"  {n}: {tokens[n]}", flush=True)
        else:
            print(f"remote bots connect to {endpoint} with their tokens, in {path} (mode 0600; printed only on a "
                  "terminal)", flush=True)

    async def _wait_for_remotes(self, sg: ScheduledGame) -> list[str] | None:
        """A game with a remote bot starts only once that bot is connected to the gateway
        (its clock would otherwise run while nobody can answer), or once it has been
        away for ``no_show_s``: then it is a no-show, and the names of the no-shows are
        returned (their games are forfeited). None if the run is stopped while waiting.

        The worker takes such a game only when it is ready (:meth:`_next_game`); this
        waits only for a bot that left between that moment and this one."""
        if self.gateway is None:
            return []
        gw = self.gateway
        for name in sg.seats:
            if name not in self.remote_names or gw.is_connected(name):
                continue
            left = self.cfg.no_show_s - self._away(name)
            if left > 0:
                waiter = asyncio.ensure_future(gw.wait_connected(name))
                stopper = asyncio.ensure_future(self.stop_event.wait())
                await asyncio.wait({waiter, stopper}, timeout=left + 0.01, return_when=asyncio.FIRST_COMPLETED)
                waiter.cancel()
                stopper.cancel()
            if self.stop_event.is_set():
                return None
        return [n for n in sg.seats if n in self.remote_names and not gw.is_connected(n)]

    def _reveal_finished_deals(self, deals: set[int]) -> None:
        """Publish the seed of each of ``deals`` whose every game has been recorded."""
        for deal in sorted(deals):
            if all(i in self.done for i in self.schedule.deal_games(deal)):
                self.store.reveal_deal(deal, self.schedule.seed(deal))

    def record(self, g: GameResult) -> None:
        """Write a finished game to the results file (once: a game that comes back a
        second time, a Dask task run twice, is dropped with an event), reveal the deals it
        completes, and feed the live display and the SPRT."""
        if g.index in self.done:
            self.store.log_event("duplicate", f"{g.key} came back a second time ({g.referee}); the first is kept",
                                 game=g.index)
            return
        if self.sprt is not None and self.store.get_meta("sprt_decision") is not None:
            # Finished after the test decided (it was already past its last move): the
            # test stopped at the deciding game, so this one is dropped like any other
            # game in progress at that moment.
            return
        self.store.record_game(g)
        self.done.add(g.index)
        self._reveal_finished_deals({g.deal})
        if self.progress is not None:
            self.progress.add(g)
        if self.sprt_monitor is not None:
            decision = self.sprt_monitor.add(g)
            if decision and self.state.stop_reason is None:
                st = self.sprt_monitor.status()
                cells = [int(c) for c in st.paired.counts]
                self.store.set_meta("sprt_decision", json.dumps({
                    "decision": decision, "games": self.sprt_monitor.tracker.recorded, "pairs": int(st.paired.units),
                    "cells": cells, "unpaired": st.paired.unpaired, "llr": st.llr}))
                self.store.log_event("sprt", f"{decision} accepted after {int(st.paired.units)} pairs "
                                             f"(cells {'/'.join(map(str, cells))}), LLR {st.llr:.3f}")
                self.abort_all(f"SPRT decided {decision}")

    def sprt_figures(self, games: Sequence[GameResult]) -> tuple[float, float, float]:
        """(LLR, lower, upper) for the live display: the final report's computation
        (:func:`.report.sprt_status`, whichever model it uses), so the two never disagree."""
        assert self.cfg.sprt is not None
        st = sprt_status(asdict(self.cfg.sprt), games,
                         per_unit=self.cfg.unit_games((self.cfg.sprt.candidate, self.cfg.sprt.baseline)))
        return st["llr"], st["lower"], st["upper"]

    def abort_all(self, reason: str) -> None:
        self.state.stop_reason = reason
        self.stop_event.set()
        self.queue.clear()
        self.executor.abort(reason)

    async def worker(self) -> None:
        """Take games off the queue until it is empty or the run stops.

        In schedule order, except that a game with a remote participant waits (and the
        games after it go ahead) while that participant is away and its no-show time
        has not run out, or while it plays another game of the same deal."""
        while self.queue and self.state.stop_reason is None:
            item = self._next_game()
            if item is None:
                await self._await_change()
                continue
            index, attempt = item
            sg = self.schedule[index]
            remotes = [n for n in sg.seats if n in self.remote_names]
            for n in remotes:
                self.playing_deals[n].add(sg.deal)
            try:
                out, where = await self.play_attempt(sg, attempt)
            except NoReferee as e:
                self.unplayable.append((index, str(e)))
                self.abort_all("every referee is gone")
                return
            finally:
                for n in remotes:
                    self.playing_deals[n].discard(sg.deal)
                self.changed.set()
            self.settle(sg, attempt, out, where)
        self.changed.set()  # a worker waiting for a game that was queued as a replay

    def _ready(self, name: str, deal: int) -> bool:
        """May a game of ``deal`` with remote participant ``name`` start now?"""
        if deal in self.playing_deals[name]:
            return False  # never two seatings of one deal at once (it could carry the cards over)
        assert self.gateway is not None
        return self.gateway.is_connected(name) or self._away(name) >= self.cfg.no_show_s

    def _away(self, name: str) -> float:
        """How long remote ``name`` has been away, for its no-show time: counted from its
        bye, or from the first game (not from the gateway's opening: the preflight of
        the local bots, however slow, is no remote bot's fault); 0 while connected."""
        assert self.gateway is not None
        since = time.monotonic() - self.games_from if self.games_from is not None else 0.0
        return min(self.gateway.absent_for(name), since)

    def _next_game(self) -> tuple[int, int] | None:
        """The first queued game that may start now (taken off the queue), or None.

        The queue is looked through only while a remote participant is away or busy
        with a deal, and then at most :data:`SCAN_LIMIT` games deep, so that a long SPRT
        queue costs no more than that per game."""
        gw = self.gateway
        if gw is None or all(gw.is_connected(n) and not self.playing_deals[n] for n in self.remote_names):
            return self.queue.popleft()
        for i, (index, attempt) in enumerate(itertools.islice(self.queue, SCAN_LIMIT)):
            sg = self.schedule[index]
            if all(self._ready(n, sg.deal) for n in sg.seats if n in self.remote_names):
                del self.queue[i]
                return index, attempt
        return None

    async def _await_change(self) -> None:
        """Wait until a queued game may have become playable: a game ended, a remote
        participant connected, one's no-show time ran out, or the run stopped."""
        assert self.gateway is not None
        gw = self.gateway
        self.changed.clear()
        away = [n for n in self.remote_names if not gw.is_connected(n)]
        left = [self.cfg.no_show_s - self._away(n) for n in away]
        waits = [asyncio.ensure_future(self.changed.wait()), asyncio.ensure_future(self.stop_event.wait()),
                 *(asyncio.ensure_future(gw.wait_connected(n)) for n in away)]
        if self.progress is not None and away:
            self.progress.note = f"waiting for remote {', '.join(sorted(away))}"
            self.progress.draw(force=True)
        try:
            await asyncio.wait(waits, timeout=max(0.0, min(left)) + 0.01 if left else None,
                               return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in waits:
                w.cancel()
            if self.progress is not None:
                self.progress.note = ""

    def forfeit(self, sg: ScheduledGame, absent: list[str]) -> Forfeit | None:
        """The seat that forfeits ``sg`` from its start: a remote no-show (``absent``), or
        a participant that committed a nonce at the preflight and withheld it."""
        withheld = [n for n in sg.seats if n in self.withheld]
        if absent:
            return Forfeit(sg.seats.index(absent[0]), "no_show",
                           f"{' and '.join(absent)} did not connect to the gateway within no_show_s = "
                           f"{self.cfg.no_show_s:g} s (a no-show forfeits its games)")
        if withheld:
            return Forfeit(sg.seats.index(withheld[0]), "withheld",
                           f"{' and '.join(withheld)} committed a nonce at the preflight and did not reveal it "
                           "(withholding forfeits every game)")
        return None

    async def play_attempt(self, sg: ScheduledGame, attempt: int) -> tuple[GameResult | Outcome, str]:
        """One attempt at ``sg`` by the executor, once its remote participants are there
        (or have become no-shows), and where it was played. Raises :class:`NoReferee`."""
        absent = await self._wait_for_remotes(sg)
        if absent is None:
            return Outcome(False, self.state.stop_reason or "stopped"), "-"
        try:
            return await self.executor.play_attempt(sg, attempt, self.forfeit(sg, absent))
        except StopRun as e:
            if self.state.stop_reason is None:
                self.abort_all(e.reason)
            if e.error is not None:
                raise RuntimeError(e.error) from None
            return Outcome(False, e.reason), "-"

    def settle(self, sg: ScheduledGame, attempt: int, out: GameResult | Outcome, where: str) -> None:
        """Record a finished game, or queue its replay (at most :data:`MAX_ATTEMPTS`)."""
        if isinstance(out, GameResult):
            self.record(out)
            return
        if not out.replay:
            return
        self.store.log_event("replay", f"{sg.key} attempt {attempt} on {where}: {out.why}", game=sg.index)
        if attempt >= MAX_ATTEMPTS:
            self.unplayable.append((sg.index, out.why))
            return
        self.queue.appendleft((sg.index, attempt + 1))

    async def run(self) -> int:
        self.executor.check()
        games = self.store.games()
        done = {g.index for g in games}
        self.done = set(done)
        self._reveal_finished_deals({g.deal for g in games})  # a kill between a game and its deal's reveal
        if self.sprt_monitor is not None:
            for g in games:
                self.sprt_monitor.add(g)
            # A stored decision counts too: a file decided by an older, per-game test is not reopened.
            if self.sprt_monitor.status().decision or self.store.get_meta("sprt_decision") is not None:
                self.state.stop_reason = "SPRT already decided"
        self.queue.extend((i, 1) for i in range(len(self.schedule)) if i not in done)
        self.progress = Progress(len(self.schedule), [p.name for p in self.cfg.participants], games,
                                 enabled=self.opts.progress, prior_draws=self.cfg.ratings.prior_draws,
                                 sprt=None if self.cfg.sprt is None else self.sprt_figures)
        if not self.queue or self.state.stop_reason:
            return 0
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, self.abort_all, f"interrupted by signal {sig.name}")
        try:
            remote = {p.name for p in self.cfg.participants if p.kind == "remote"}
            if remote:
                tokens = {n: t for n, t in self.store.tokens().items() if n in remote}
                allow = self.cfg.gateway_allow
            if remote and self.opts.gateway is not None:
                self.gateway = self.opts.gateway(tokens)  # the arena's: it seats its accounts itself
                await self.gateway.start()
            elif remote:
                self.gateway = Gateway(
                    self.ctx, self.cfg.gateway, tokens,
                    curve_keys=str(self.cfg.resolve_path(self.cfg.gateway_curve_keys)) if self.cfg.gateway_curve_keys else None,
                    curve_allow=(allow if allow in ("", "any") else str(self.cfg.resolve_path(allow))) or None)
                try:
                    endpoint = await self.gateway.start()
                except zmq.ZMQError as e:
                    raise StartError(f"gateway {self.cfg.gateway!r}: cannot listen there: {e.strerror}") from None
                except ValueError as e:  # CURVE keys or allow-list unusable
                    raise StartError(str(e)) from None
                self.hand_out_tokens(endpoint, tokens)
            await self.prepare()
            self.games_from = time.monotonic()
            self.progress.draw(force=True)
            workers = [asyncio.ensure_future(self.worker()) for _ in range(min(self.concurrency, len(self.queue)))]
            await asyncio.gather(*workers)
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                with contextlib.suppress(NotImplementedError, RuntimeError):
                    loop.remove_signal_handler(sig)
            await self.executor.close()
            if self.gateway is not None:
                await self.gateway.close()
            self.progress.finish()
        left = len(self.schedule) - self.store.count_games()
        if self.state.stop_reason and self.state.stop_reason.startswith("SPRT"):
            return 0
        if self.state.stop_reason or left:
            why = self.state.stop_reason or "; ".join(f"game {i}: {w}" for i, w in self.unplayable[:3])
            print(f"okgin tournament: stopped with {left} game(s) unplayed ({why}); run again with --resume to continue",
                  flush=True)
            return 1
        return 0


def run_tournament(cfg: TournamentConfig, opts: RunOptions) -> int:
    """Run (or resume) ``cfg``; print the final table; return the exit status."""
    db = Path(opts.database).expanduser() if opts.database else cfg.database_path
    store = ResultsStore.for_run(cfg, db, resume=opts.resume)
    workdir = store.path.with_name(store.path.stem + "-run")
    new_workdir = not workdir.exists()
    closed = False
    try:
        schedule = Schedule(cfg, store.secret())
        store.set_meta("games_total", str(len(schedule)))
        store.set_meta("ratings", json.dumps(asdict(cfg.ratings)))
        print(f"secret deals: the event secret's commitment is {store.get_meta('secret_commitment')} "
              "(SHA-256 of the secret, revealed when the event is complete)", flush=True)
        if store.get_meta("secret_fixed") == "1":
            print("okgin tournament: warning: tournament.seed / tournament.secret fixes the event secret: the deals "
                  "are reproducible but NOT secret (anyone who knows the config can compute every deal); "
                  "remove it for secret deals", file=sys.stderr, flush=True)
        if opts.dask:
            from competition.cluster.tournament import DaskExecutor  # Dask is an optional extra

            runner = Runner(cfg, opts, store, DaskExecutor)
        else:
            runner = Runner(cfg, opts, store)
        if not cfg.sandbox and any(p.kind != "remote" for p in cfg.participants):
            store.set_meta("unsandboxed", "1")  # once unconfined, the event stays marked, resumed or not
            print("okgin tournament: warning: tournament.sandbox = false: local bots run unconfined, as you, and can read "
                  "the config, the results file (the event secret) and the journals; the report marks the event "
                  "unsandboxed", file=sys.stderr, flush=True)
        if opts.progress:
            print(f"tournament {cfg.name}: {len(schedule)} games ({store.count_games()} already played), "
                  f"concurrency {runner.concurrency}", flush=True)
        try:
            code = asyncio.run(runner.run())
        except (PreflightFailed, StartError) as e:
            print(f"okgin tournament: {e}", file=sys.stderr, flush=True)
            code = 2
        except RuntimeError as e:
            print(f"okgin tournament: {e}", flush=True)
            code = 1
        if code == 2 or (code == 1 and store.count_games() == 0 and not opts.resume):
            # A failed start leaves no results file behind (nor the run directory it made).
            store.close()
            closed = True
            if not opts.resume:
                discard(db)
                if new_workdir:
                    shutil.rmtree(workdir, ignore_errors=True)
            return code
        complete = store.count_games() == len(schedule) or store.get_meta("sprt_decision") is not None
        if complete and store.get_meta("finished") is None:
            store.set_meta("finished", f"{time.time():.3f}")
            store.log_event("finish", f"{store.count_games()} games recorded")
        if complete:
            # Every deal played is over: publish the seeds and the secret itself.
            schedule = Schedule(cfg, store.secret(), store.entropy_nonces())  # the preflight's nonces included
            for deal in sorted({g.deal for g in store.games()}):
                store.reveal_deal(deal, schedule.seed(deal))
            store.reveal_secret()
            if store.get_meta("chain_head") is None:
                # Over schedule order, now that every game is in (they finish out of order).
                ch = chain_head(store.conn)
                with store.transaction():
                    for k, v in (("chain_head", ch.head), ("chain_games", str(ch.games))):
                        store.conn.execute("INSERT INTO meta(key, value) VALUES (?, ?)", (k, v))
                store.log_event("chain", f"results chain head {ch.head} over {ch.games} game(s)")
        elif store.count_games():
            ch = chain_head(store.conn)
            print(f"results chain so far: {ch.head} over the {ch.games} game(s) recorded (not final: the head is "
                  "stored and printed when the event is complete)", flush=True)
        output = output_dir(cfg, store.path, opts.output)
        paths = write_outputs(cfg, store, output)
        for line in [*secrecy_lines(store), *entropy.report_lines(store)]:
            print(line)
        crashed = all_crashed(store)
        if crashed:
            print("okgin tournament: " + crashed, flush=True)
            code = max(code, 1)
        print("wrote " + ", ".join(str(p) for p in paths) + f"; results in {db}")
        return code
    finally:
        if not closed:
            store.close()

