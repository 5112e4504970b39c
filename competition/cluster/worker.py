"""What a Dask worker runs for ``okgin tournament --dask``: games, with the local run's own code.

A game task does on the worker exactly what a local run does on the organiser's host:
it plays the game with a :class:`~competition.tournament.local.LocalExecutor`
(``play_attempt``: pick the referee; then create the reserved table, launch the
sandboxed bots, follow the feed, take the journal's record, reveal the salt), so a
record played here is byte for byte the one a local run plays with the same secret.
There is no second implementation of a game to drift from the first.

Why a loop thread per worker process: a game is asyncio (ZeroMQ links, bot
processes), and the worker's own event loop (Dask's comms, heartbeats) must not wait
behind a game's work. The process keeps one event loop in a daemon thread (a game's
task is a coroutine that Dask awaits on its loop, and that only waits for the game
played on this one; the preflight runs in Dask's thread pool), and with it one
:class:`~competition.tournament.local.LocalExecutor` per tournament config, each with
its own ``okgin referee`` process started on the first game and reused for every game
after (its referee pool's restart logic replaces a referee that dies). The referee and
the bots are children of that thread with ``PR_SET_PDEATHSIG`` (``procs.spawn``), so a
worker killed with ``kill -9`` takes its games' processes with it: only those games
are lost, and Dask runs their tasks again on another worker.

The participants' nonces (docs/tournaments.md, *Deals nobody can choose*) are collected at
the preflight as in a local run: a participant's preflight task leaves its bot seated at
its preflight table on the worker (:meth:`_Host.preflight` with ``hold``) and returns its
commitment; once the driver has fixed the list, it asks each held bot for its nonce and
reads it (:func:`ask_nonce`, :func:`read_nonce`: ``client.run`` coroutines, awaited on the
worker's own loop, never a task slot, so a held bot never waits for a thread another one
holds) and releases them (:func:`release_holds`; a hold nobody asks about ends after
:data:`HOLD_S`).

The worker has no results file: the few events a game logs (``record-mismatch``,
``reveal-failed``, ``referee-died``...) are kept in :class:`WorkerEvents` (the
executor's :class:`~competition.tournament.executor.EventLog`) and sent back with the
game; the driver writes them.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import os
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Coroutine
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from competition.tournament import entropy
from competition.tournament.bots import PLACEHOLDER_RE
from competition.tournament.config import Participant, TournamentConfig
from competition.tournament.executor import Forfeit, NoReferee, Outcome, RunOptions
from competition.tournament.local import LocalExecutor
from competition.tournament.preflight import Held, check, program_problem, release
from competition.tournament.schedule import ScheduledGame
from competition.tournament.store import GameResult
from referee.private import private_dir

T = TypeVar("T")
KEEP_RUNNERS = 2  # tournaments whose referee a worker keeps at once (a second run may share the cluster)
LOG_CAP = 1 << 20  # bytes of one bot log sent back (the start and the end are what explain a crash)
HOLD_S = 300.0  # a bot held for its nonce is released after this long if the driver never comes back


class MissingProgram(RuntimeError):
    """A participant's program cannot run on this worker; the message names both."""


@dataclass
class GameReply:
    """A game task's answer: the runner's own outcome, where it was played, what was logged."""

    out: GameResult | Outcome
    where: str
    worker: str
    events: list[tuple[str, str, int | None]] = field(default_factory=list)
    # The bot logs the runner kept (a game that did not end normally, or --keep-logs),
    # by file name: the driver writes them to its own NAME-run/logs, as a local run has them.
    logs: list[tuple[str, bytes]] = field(default_factory=list)


class WorkerEvents:
    """The worker's :class:`~competition.tournament.executor.EventLog`: a path (the
    sandbox hides it; there is no file) and a list of the events a game logs, sent back
    with it. The worker is given each game's seed and who forfeits it: it needs no
    secret, no nonces and no results file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.events: list[tuple[str, str, int | None]] = []

    def log_event(self, kind: str, detail: str, game: int | None = None) -> None:
        self.events.append((kind, detail, game))

    def drain(self) -> list[tuple[str, str, int | None]]:
        out, self.events = self.events, []
        return out


def worker_address() -> str:
    """This Dask worker's address (``local`` outside one, e.g. in a unit test)."""
    try:
        from distributed import get_worker

        return str(get_worker().address)
    except (ImportError, ValueError):
        return "local"


def _base_dir() -> Path:
    """Where this worker keeps its referees' journals and the bots' logs: inside the
    worker's own ``--local-directory`` (Dask cleans it when the worker ends)."""
    try:
        from distributed import get_worker

        base = Path(get_worker().local_directory) / "okgin"
    except (ImportError, ValueError):
        base = Path(tempfile.gettempdir()) / f"okgin-worker-{os.getpid()}"
    return private_dir(base)  # 0700: the referees' journals and the bots' logs (referee.private)


def participant_problem(cfg: TournamentConfig, p: Participant) -> str | None:
    """Why ``p`` cannot be started on this host (its program or directory is missing),
    or None. Checked on every worker before the first game and before each game, so a
    host without the bot built says so by name instead of losing every game to crashes."""
    if p.kind == "remote":
        return None
    cwd = str(cfg.resolve_path(p.cwd)) if p.cwd else cfg.config_dir
    if not Path(cwd).is_dir():
        return f"directory not found: {cwd}"
    env = {**os.environ, **dict(p.env)}
    if p.kind == "command":
        program = PLACEHOLDER_RE.sub(lambda m: cfg.config_dir if m.group(1) == "config_dir" else m.group(0), p.command[0])
        return program_problem([program], cwd, env)
    assert p.bot is not None
    spec = p.bot.rsplit(":", 1)[0]
    if spec.endswith(".py"):
        path = Path(spec) if Path(spec).is_absolute() else Path(cwd) / spec
        if not path.is_file():
            return f"file not found: {path}"
    return None


def check_participants(cfg: TournamentConfig, names: list[str]) -> list[tuple[str, str]]:
    """``client.run`` target: (participant, problem) for each of ``names`` this worker cannot start."""
    out = []
    for name in names:
        problem = participant_problem(cfg, cfg.participant(name))
        if problem:
            out.append((name, problem))
    return out


@dataclass
class _Hold:
    """A participant's bot kept seated at its preflight table for its nonce."""

    executor: LocalExecutor
    held: Held
    seat: entropy.Contributor
    expiry: asyncio.TimerHandle | None = None


@dataclass
class _Event:
    """One tournament config's executor on this worker, and the events its games log."""

    executor: LocalExecutor
    events: WorkerEvents


class _Host:
    """This worker process's event loop thread and its executors."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True, name="okgin-worker-loop")
        self.thread.start()
        self.events: OrderedDict[str, _Event] = OrderedDict()
        self.count = itertools.count(1)
        self.lock: asyncio.Lock | None = None
        self.holds: dict[str, _Hold] = {}  # by the driver's key: bots held for their nonces

    def call(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the loop thread and wait for it (from a Dask task's thread).

        No bound here: a game ends by itself (the table's clock and the runner's
        stall_timeout see to it), and the driver can give up on the task."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    async def event(self, cfg: TournamentConfig, keep_logs: bool) -> _Event:
        """The executor (and its referee) for this config, started on its first game."""
        if self.lock is None:
            self.lock = asyncio.Lock()
        key = hashlib.sha256(repr((cfg, keep_logs)).encode()).hexdigest()
        async with self.lock:
            ev = self.events.get(key)
            if ev is not None:
                self.events.move_to_end(key)
                return ev
            for old_key in list(self.events):
                if len(self.events) < KEEP_RUNNERS:
                    break
                old = self.events[old_key]
                if not any(s.active for s in old.executor.pool.slots):  # never one with a game in progress
                    del self.events[old_key]
                    await old.executor.close()
            workdir = _base_dir() / f"{cfg.name}-{os.getpid()}-{next(self.count)}"
            private_dir(workdir)
            events = WorkerEvents(workdir / f"{cfg.name}.sqlite")
            executor = LocalExecutor(cfg, RunOptions(referees=1, progress=False, keep_logs=keep_logs), events, workdir)
            try:
                await executor.start()
            except BaseException:
                await executor.close()
                raise
            ev = self.events[key] = _Event(executor, events)
            return ev

    async def play(self, cfg: TournamentConfig, keep_logs: bool, sg: ScheduledGame, attempt: int,
                   forfeit: Forfeit | None) -> GameReply:
        worker = worker_address()
        for name in dict.fromkeys(sg.seats):
            problem = participant_problem(cfg, cfg.participant(name))
            if problem:
                raise MissingProgram(f"participant {name} cannot run on Dask worker {worker}: {problem}")
        ev = await self.event(cfg, keep_logs)
        logdir = ev.executor.logdir
        pattern = f"{sg.key}-a*-s*.log"
        before = set(logdir.glob(pattern))
        try:
            out, label = await ev.executor.play_attempt(sg, attempt, forfeit)
        except NoReferee as e:
            out, label = Outcome(True, f"{e} on Dask worker {worker}"), "-"
        if isinstance(out, GameResult):
            out = replace(out, referee=f"{out.referee} on {worker}")
        logs = _take_logs(sorted(set(logdir.glob(pattern)) - before))
        return GameReply(out, f"Dask worker {worker} referee {label}", worker, ev.events.drain(), logs)

    async def preflight(self, cfg: TournamentConfig, keep_logs: bool, name: str,
                        hold: str | None = None) -> tuple[str | None, str | None]:
        """(its problem or None, its nonce commitment or None). ``hold``: the event
        collects nonces; a bot that passed and committed stays seated under that key."""
        p = cfg.participant(name)
        problem = participant_problem(cfg, p)
        if problem:
            return problem, None
        try:
            executor = (await self.event(cfg, keep_logs)).executor
        except Exception as e:  # no sandbox here (bwrap missing), a referee that does not start
            return f"this worker cannot host its games: {e}", None
        slot = await executor.pool.pick()
        if slot is None:
            return "no referee could be started on this worker", None
        held: list[Held] | None = [] if hold is not None else None
        try:
            why = await check(executor.bots, slot, p, hold=held)
        finally:
            slot.active -= 1
        if not held or hold is None:
            return why, None
        seat = await entropy.referee_seat(held[0].slot, held[0].name, held[0].table)
        if seat.commit is None:  # a bot that sends none (protocol 1.4) still plays
            await release(executor.bots, held)
            return why, None
        h = self.holds[hold] = _Hold(executor, held[0], seat)
        h.expiry = self.loop.call_later(HOLD_S, lambda: asyncio.ensure_future(self.release(hold)))
        return why, seat.commit

    async def ask(self, hold: str, commitments_hash: str) -> bool:
        h = self.holds.get(hold)
        if h is None:
            return False
        await h.seat.ask(commitments_hash)
        return True

    async def nonce(self, hold: str) -> str | None:
        h = self.holds.get(hold)
        return None if h is None else await h.seat.nonce()

    async def release(self, prefix: str) -> None:
        """End the held bots whose key is ``prefix`` or starts with ``prefix/`` (their
        tables closed)."""
        gone = [self.holds.pop(k) for k in list(self.holds) if k == prefix or k.startswith(prefix + "/")]
        for h in gone:
            if h.expiry is not None:
                h.expiry.cancel()
        await asyncio.gather(*(release(h.executor.bots, [h.held]) for h in gone), return_exceptions=True)


def _take_logs(paths: list[Path]) -> list[tuple[str, bytes]]:
    """The logs this game's attempt left (the runner deleted those of a normal game),
    read and removed here: the worker's directory is not where an organiser looks."""
    out = []
    for path in paths:
        try:
            with path.open("rb") as f:
                data = f.read(LOG_CAP + 1)
            path.unlink()
        except OSError:
            continue
        if len(data) > LOG_CAP:
            data = data[:LOG_CAP] + b"\n# (cut at %d bytes on the worker)\n" % LOG_CAP
        out.append((path.name, data))
    return out


_HOST: _Host | None = None
_HOST_LOCK = threading.Lock()


def _host() -> _Host:
    global _HOST
    with _HOST_LOCK:
        if _HOST is None:
            _HOST = _Host()
        return _HOST


async def play_game(cfg: TournamentConfig, keep_logs: bool, sg: ScheduledGame, attempt: int,
                    forfeit: Forfeit | None = None) -> GameReply:
    """The Dask task of one game: play ``sg`` on this worker's referee, return the result.

    A coroutine function, which Dask awaits on the worker's own event loop instead of
    running it in its thread pool: the game itself is played on this process's loop
    thread (:class:`_Host`), and the worker's loop only waits for it, so the task skips
    two thread hand-offs (into the pool at the start, back to the worker's loop at the
    end) that would each wait for a time slice on a loaded host. The wait is shielded:
    a task cancelled by the driver (the run stopped) lets its game end normally here,
    as a thread would have, instead of tearing it down mid-move. The worker still runs
    at most ``--nthreads`` such tasks at once, and their ``resources`` hold as before.
    """
    host = _host()
    return await asyncio.shield(asyncio.wrap_future(
        asyncio.run_coroutine_threadsafe(host.play(cfg, keep_logs, sg, attempt, forfeit), host.loop)))


def preflight_participant(cfg: TournamentConfig, keep_logs: bool, name: str,
                          hold: str | None = None) -> tuple[str | None, str, str | None]:
    """The Dask task of a participant's preflight: (its problem or None, this worker, its
    nonce commitment or None). ``hold``: the event collects nonces, and a bot that
    committed stays seated under this key until :func:`release_holds`."""
    host = _host()
    why, commit = host.call(host.preflight(cfg, keep_logs, name, hold))
    return why, worker_address(), commit


async def _on_host(coro: Coroutine[Any, Any, T]) -> T:
    host = _host()
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, host.loop))


async def ask_nonce(hold: str, commitments_hash: str) -> bool:
    """``client.run`` target: ask the bot held under ``hold`` for its nonce (False: no such
    hold on this worker, e.g. it was restarted)."""
    return await _on_host(_host().ask(hold, commitments_hash))


async def read_nonce(hold: str) -> str | None:
    """``client.run`` target: the nonce the bot held under ``hold`` revealed, if any yet."""
    return await _on_host(_host().nonce(hold))


async def release_holds(prefix: str) -> None:
    """``client.run`` target: end every bot held under ``prefix`` or a key below it (``prefix/...``)."""
    await _on_host(_host().release(prefix))
