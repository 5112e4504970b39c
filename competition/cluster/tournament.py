"""``okgin tournament CONFIG --dask ADDRESS``: the schedule's games as Dask tasks.

The driver is the ordinary :class:`~competition.tournament.runner.Runner` with another
executor (:class:`~competition.tournament.executor.Executor`): :class:`DaskExecutor`.
Its :meth:`~DaskExecutor.prepare` starts no local referees or sandbox; it reaches the
cluster, checks it, and runs the preflight on the workers. Its
:meth:`~DaskExecutor.play_attempt` sends the game to a worker, which plays it with a
:class:`~competition.tournament.local.LocalExecutor` of its own (:mod:`.worker`).
Everything else is the runner's, on the organiser's host: the queue in schedule order,
the replay of a failed attempt, and ``Runner.record``, which writes each game to the
results file as its task comes back, so resume, duplicate deals, the secret seeds and
their reveal, SPRT stopping and the report are the same as in a local run.

Failures:

- a worker that dies mid-game (``kill -9``, a lost host) loses that game only: the
  scheduler runs the task again on another worker (Dask's ``allowed-failures``), and
  after too many lost workers the attempt counts as failed and is replayed like a game
  whose referee died. Nothing of an unfinished game is ever written, and a game is
  recorded once: the store's primary key is the schedule index, and a result for an
  index already recorded is dropped with an event;
- the runner killed: its client's tasks are released by the scheduler; ``--resume``
  against the same (or another) cluster plays the indices still missing;
- bad input is refused before the first game (exit 2, no results file left): an
  unreachable scheduler, a cluster without workers, a participant whose
  ``resources`` no worker offers, a worker that lacks a participant's program.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import secrets
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import zmq.asyncio

from competition.tournament import entropy
from competition.tournament.botlog import LogBudget
from competition.tournament.config import TournamentConfig
from competition.tournament.executor import EventLog, Forfeit, NonceRound, Outcome, RunOptions, StartError, StopRun
from competition.tournament.gateway import Gateway
from competition.tournament.preflight import PreflightFailed
from competition.tournament.schedule import ScheduledGame, pairings
from competition.tournament.store import GameResult, ResultsStore
from referee.private import open_private, private_dir

from .connect import LOCAL, AsyncClusterHandle, ClusterError, open_async_client
from .worker import (
    GameReply,
    MissingProgram,
    ask_nonce,
    check_participants,
    play_game,
    preflight_participant,
    read_nonce,
    release_holds,
)

LIVENESS_S = 1.0  # how often a wait for a task looks whether the client is still connected


class _Stopped(Exception):
    """The run stopped (SPRT decided, a signal) while a game's task was out."""


class _Lost(Exception):
    """The client gave up on the scheduler (it did not come back within the timeout)."""


def resources_of(cfg: TournamentConfig, names: Sequence[str]) -> dict[str, float]:
    """The Dask resources a game of ``names`` holds on its worker: the sum over its
    distinct participants (two GPU bots at one table use two GPUs at once)."""
    need: dict[str, float] = {}
    for name in dict.fromkeys(names):
        for k, v in cfg.participant(name).resources:
            need[k] = need.get(k, 0.0) + v
    return need


def _fmt(res: dict[str, float]) -> str:
    return ", ".join(f"{k}={v:g}" for k, v in sorted(res.items())) or "none"


def offers(worker_resources: dict[str, Any], need: dict[str, float]) -> bool:
    """Whether a worker's ``--resources`` cover ``need``."""
    return all(float(worker_resources.get(k, 0)) >= v for k, v in need.items())


class DaskExecutor:
    """Plays a run's games on the workers of a Dask cluster (an
    :class:`~competition.tournament.executor.Executor`)."""

    def __init__(self, cfg: TournamentConfig, opts: RunOptions, store: EventLog, workdir: Path,
                 ctx: zmq.asyncio.Context | None = None) -> None:
        self.cfg = cfg
        self.opts = opts
        self.store = store
        self.concurrency: int | None = None
        self.note: Callable[[str], None] = lambda _: None  # nothing to tell the live display: a lost worker is an event
        # The run stopped (its reason), and the event that wakes a wait for a task.
        self.stopped: str | None = None
        self.stop_event = asyncio.Event()
        # The bot logs workers send back go here, within the event's total (.botlog), as a
        # local run keeps them.
        self.logdir = private_dir(workdir / "logs")
        kept = sum(f.stat().st_size for f in self.logdir.iterdir() if f.is_file())
        self.log_budget = LogBudget(cfg.bot_logs_total_mb * 1024 * 1024, used=kept)
        # An asynchronous client on the runner's own loop: a game's task goes out from
        # this loop and its result comes back to it, with no thread hand-off either way.
        self.handle: AsyncClusterHandle | None = None
        self.inflight: set[Any] = set()  # distributed.Future of the games out on workers
        self._cancels: set[asyncio.Task[Any]] = set()
        # Futures of games already recorded, released only after the next submit: a
        # future dropped sends "release" on the client's batched stream to the scheduler,
        # which then holds the next message (the next game's submit, a moment later) for
        # its 10 ms batching interval. Released after it, both go out at once.
        self._spent: list[Any] = []
        self.tag = secrets.token_hex(4)  # task keys unique to this run, even resumed on the same cluster
        self.workers: dict[str, dict[str, Any]] = {}
        # A game whose worker is lost mid-game is played again by the scheduler under the
        # same task (Dask's allowed-failures), unseen by the task's caller: the scheduler's
        # remove-worker events name the tasks it was processing, so the replay is counted
        # here and recorded (the game's attempts, an events row).
        self.task_games: dict[str, ScheduledGame] = {}
        self.lost: dict[int, int] = {}  # game index -> workers lost under it
        # What the workers are sent: the config without what only the organiser needs. A
        # fixed secret (tournament.seed or .secret) would give every worker every deal of
        # the event, where it needs only the seed of each game it plays (in the game), and
        # the admin key opens remote referees the workers never use.
        self.worker_cfg = replace(cfg, seed=None, secret=None, admin_key="")

    @property
    def client(self) -> Any:
        assert self.handle is not None
        return self.handle.client

    @property
    def address(self) -> str:
        return self.handle.address if self.handle is not None else str(self.opts.dask)

    def check(self) -> None:
        remote = [p.name for p in self.cfg.participants if p.kind == "remote"]
        if remote:  # before the runner opens its gateway for them
            raise StartError(f"remote participants ({', '.join(remote)}) connect to the runner's gateway and play on "
                             "its referees, which a Dask run does not have: play them without --dask")

    async def close(self) -> None:
        self._spent.clear()
        if self.handle is not None:
            await self.handle.aclose()

    # ---------------------------------------------------------------- before
    def _security(self) -> Any:
        if not self.opts.dask_tls:
            return None
        from .certs import CertsError, load_security

        try:
            return load_security(self.opts.dask_tls)
        except CertsError as e:
            raise StartError(str(e)) from None

    async def prepare(self, store: ResultsStore, gateway: Gateway | None, nonces: NonceRound | None) -> None:
        """Reach the cluster and check it can play every game, then the preflight."""
        await self.connect()
        self.check_resources()
        await self.check_programs()
        await self.dask_preflight(nonces)
        if not self.opts.concurrency:
            # Enough games out to keep every worker thread busy, and one more queued for
            # each, so that a worker starts its next game as soon as one ends.
            threads = sum(int(w.get("nthreads") or 1) for w in self.workers.values())
            self.concurrency = max(1, 2 * threads)
        line = (f"playing on the Dask scheduler at {self.address}: {len(self.workers)} worker(s), "
                f"{self.concurrency} game(s) out at once")
        self.store.log_event("dask", line)
        if self.opts.progress:
            print(line, flush=True)

    async def connect(self) -> None:
        """Reach the scheduler, hear of lost workers (a game they played is replayed and
        counted), and see at least one worker; :class:`StartError` otherwise. The first
        part of :meth:`prepare`; the arena's hosted bots (arena.hosted) start with it alone,
        since their bots are validated one by one as they are submitted."""
        address = str(self.opts.dask)
        try:
            self.handle = await open_async_client(
                address, security=self._security(), timeout=self.opts.dask_timeout,
                workers=None if address == LOCAL else 1)
        except ClusterError as e:
            raise StartError(str(e)) from None
        with contextlib.suppress(Exception):  # an old scheduler without events: replays go uncounted
            self.client.subscribe_topic("all", self._cluster_event)
        info = await self.client.scheduler.identity(n_workers=-1)
        self.workers = dict(info.get("workers") or {})
        if not self.workers:
            raise StartError(f"the Dask scheduler at {self.address} has no workers: start some there "
                             f"(dask worker {self.address})")

    def use_config(self, cfg: TournamentConfig) -> None:
        """Play the next games with ``cfg``: the same event with more participants (the
        arena's hosted bots arrive while it runs). Games already out keep the config they
        were sent with."""
        self.cfg = cfg
        self.worker_cfg = replace(cfg, seed=None, secret=None, admin_key="")

    def eligible(self, need: dict[str, float]) -> list[str]:
        return [a for a, w in self.workers.items() if offers(w.get("resources") or {}, need)]

    def check_resources(self) -> None:
        """Every participant, and every pairing's sum, has a worker offering its resources."""
        offered = "; ".join(f"{a}: {_fmt({k: float(v) for k, v in (w.get('resources') or {}).items()})}"
                            for a, w in sorted(self.workers.items()))
        problems = []
        for p in self.cfg.participants:
            need = dict(p.resources)
            if need and not self.eligible(need):
                problems.append(f"participant {p.name} needs the Dask resources {_fmt(need)}, and no worker of the "
                                f"scheduler at {self.address} offers them")
        if not problems:
            for pairing in pairings(self.cfg):
                need = resources_of(self.cfg, pairing)
                if need and not self.eligible(need):
                    problems.append(f"a game of {' v '.join(pairing)} needs the Dask resources {_fmt(need)} on one "
                                    f"worker, and no worker of the scheduler at {self.address} offers them")
        if problems:
            raise StartError("; ".join(problems) + f" (the workers offer: {offered}); start a worker with "
                             f"`dask worker {self.address} --resources \"NAME=AMOUNT\"`, or change the participant's "
                             "resources")

    async def check_programs(self) -> None:
        """Every worker that may be given a participant's games can start its program."""
        asked: dict[str, list[str]] = {}
        for a in self.workers:
            res = self.workers[a].get("resources") or {}
            asked[a] = [p.name for p in self.cfg.participants if p.kind != "remote" and offers(res, dict(p.resources))]
        found: dict[str, list[tuple[str, str]]] = {}
        for a, names in asked.items():
            if names:
                try:
                    reply = await asyncio.wait_for(self.client.run(check_participants, self.worker_cfg, names,
                                                                   workers=[a]), self.opts.dask_timeout + 60)
                except Exception as e:  # the worker left meanwhile: its games will go elsewhere
                    self.store.log_event("dask", f"could not check worker {a}: {type(e).__name__}: {e}")
                    continue
                found.update({w: list(v) for w, v in reply.items() if v})
        if found:
            lines = [f"participant {name} cannot run on Dask worker {w}: {why}"
                     for w, items in sorted(found.items()) for name, why in items]
            raise StartError("; ".join(lines) + " (build or install it on that host at the same path, or restrict the "
                             "participant to the workers that have it with resources = {...})")

    async def dask_preflight(self, nonces: NonceRound | None = None) -> None:
        """The preflight (each local participant starts and says hello), on a worker.

        ``nonces``: the event collects the participants' nonces (.entropy), as a local run
        does: each bot that passed stays seated on its worker (the preflight task's
        ``hold``), its commitment comes back with the task, and the round asks and reads
        each one there (:func:`.worker.ask_nonce`, :func:`.worker.read_nonce`); the bots
        are released after it, whatever happens."""
        local = [p for p in self.cfg.participants if p.kind != "remote"]
        hold = f"okgin-nonces-{self.cfg.name}-{self.tag}" if nonces is not None else None
        futures = [self.client.submit(preflight_participant, self.worker_cfg, self.opts.keep_logs, p.name,
                                      f"{hold}/{p.name}" if hold else None, pure=False,
                                      key=f"okgin-preflight-{self.cfg.name}-{p.name}-{self.tag}",
                                      resources=dict(p.resources) or None) for p in local]
        failures = []
        seats: list[entropy.Contributor] = []
        try:
            for p, fut in zip(local, futures, strict=True):
                try:
                    why, worker, commit = await self._result(fut)
                except _Stopped:
                    raise StartError("interrupted during the preflight") from None
                except Exception as e:
                    raise StartError(f"preflight of {p.name} failed on the Dask cluster at {self.address}: "
                                     f"{type(e).__name__}: {e}") from None
                if why:
                    failures.append((p.name, f"{why} (on Dask worker {worker})"))
                elif hold and commit is not None:
                    seats.append(self.held_seat(p.name, f"{hold}/{p.name}", worker, commit))
            if failures:
                self.store.log_event("preflight", "; ".join(f"{n}: {w}" for n, w in failures))
                raise PreflightFailed(failures)
            if nonces is not None:
                await nonces(seats)
        finally:
            if hold:  # every worker: a failed preflight may leave bots held whose task never came back
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(self.client.run(release_holds, hold), self.opts.dask_timeout + 30)

    def held_seat(self, name: str, key: str, worker: str, commit: str) -> entropy.Contributor:
        """A local participant held on ``worker`` for its nonce (.entropy.Contributor)."""

        async def on_worker(fn: Any, *args: Any) -> Any:
            try:
                reply = await asyncio.wait_for(self.client.run(fn, key, *args, workers=[worker]),
                                               self.opts.dask_timeout + 30)
                return reply[worker]
            except Exception as e:
                # The organiser's failure, never the participant's (as a lost referee in a
                # local run): the event stops before any game rather than call it withheld.
                raise RuntimeError(f"preflight: Dask worker {worker}, which holds {name}'s bot, was lost while "
                                   f"collecting the participants' nonces ({type(e).__name__}: {e}); no game was "
                                   "played") from None

        async def ask(h: str) -> None:
            if not await on_worker(ask_nonce, h):
                raise RuntimeError(f"preflight: Dask worker {worker} no longer holds {name}'s bot (restarted?) while "
                                   "collecting the participants' nonces; no game was played")

        async def nonce() -> str | None:
            got = await on_worker(read_nonce)
            return got if isinstance(got, str) else None

        return entropy.Contributor(name, commit, ask, nonce)

    # ------------------------------------------------------------------ games
    async def play_attempt(self, sg: ScheduledGame, attempt: int,
                           forfeit: Forfeit | None = None) -> tuple[GameResult | Outcome, str]:
        need = resources_of(self.cfg, sg.seats)
        fut: Any = None
        key = f"okgin-{self.cfg.name}-{sg.key}-a{attempt}-{self.tag}"
        self.task_games[key] = sg
        try:
            fut = self.client.submit(play_game, self.worker_cfg, self.opts.keep_logs, sg, attempt, forfeit, pure=False,
                                     key=key, resources=need or None)
            self._spent.clear()
            self.inflight.add(fut)
            reply: GameReply = await self._result(fut)
        except _Stopped:
            return Outcome(False, self.stopped or "stopped"), "dask"
        except _Lost:
            raise self._lost() from None
        except MissingProgram as e:
            raise StopRun(str(e), f"{e} (build or install it there at the same path)") from None
        except Exception as e:  # KilledWorker (too many workers died under it), the scheduler lost, a worker-side failure
            if self.client_closed():
                raise self._lost() from None
            return Outcome(True, f"the Dask task failed: {type(e).__name__}: {e}"), "dask"
        finally:
            self.inflight.discard(fut)
            self.task_games.pop(key, None)
            if fut is not None:
                self._spent.append(fut)
        for kind, detail, game in reply.events:
            self.store.log_event(kind, f"{detail} (on Dask worker {reply.worker})", game=game)
        self._write_logs(reply)
        out = reply.out
        if isinstance(out, GameResult) and self.lost.get(sg.index):
            out = replace(out, attempts=out.attempts + self.lost[sg.index])
        return out, reply.where

    def _cluster_event(self, event: Any) -> None:
        """A scheduler event (topic "all"): a worker removed while it was playing one of
        this run's games means the scheduler plays that game again on another worker."""
        try:
            _, msg = event
        except (TypeError, ValueError):
            return
        if not isinstance(msg, dict) or msg.get("action") != "remove-worker":
            return
        for key in msg.get("processing-tasks") or ():
            sg = self.task_games.get(str(key))
            if sg is None:
                continue
            n = self.lost[sg.index] = self.lost.get(sg.index, 0) + 1
            self.store.log_event("replay", f"{sg.key}: Dask worker {msg.get('worker')} was lost while playing it "
                                 f"(lost {n} time(s)); the scheduler plays it again on another worker", game=sg.index)

    def _write_logs(self, reply: GameReply) -> None:
        """The bot logs a worker kept, in this run's log directory (never over a file
        already there: a resumed run's attempts count from 1 again, like a local run's)."""
        for name, data in reply.logs:
            stem = Path(name).stem
            for n in itertools.count():
                path = self.logdir / (f"{stem}.log" if n == 0 else f"{stem}-{n}.log")
                try:
                    with open_private(path, "xb") as f:
                        f.write(f"# played on Dask worker {reply.worker}\n".encode())
                        # The event's total for bot logs holds here too (.botlog): each
                        # worker's runner has its own, and this run keeps them all.
                        grant = self.log_budget.take(len(data))
                        f.write(data[:grant])
                        if grant < len(data):
                            f.write(f"\n# {len(data) - grant} bytes of output dropped: the event's bot logs reached "
                                    f"their limit of {self.log_budget.total} bytes (tournament.bot_logs_total_mb)\n".encode())
                except FileExistsError:
                    continue
                except OSError as e:
                    self.store.log_event("dask", f"could not write the log {name} from {reply.worker}: {e}")
                break

    def client_closed(self) -> bool:
        """Whether the client gave up on the scheduler (Dask closes it when the scheduler
        does not come back within the connection timeout; a scheduler back sooner keeps
        it, and only the games that were out are played again)."""
        return self.handle is not None and str(getattr(self.client, "status", "")) in ("closing", "closed")

    def _lost(self) -> StopRun:
        """Stop the run: without a scheduler no game can be played, and a resumed run
        (against a restarted scheduler) plays the games still missing."""
        reason = f"lost the Dask scheduler at {self.address}"
        if self.stopped is None:
            self.store.log_event("dask", f"{reason}: the client gave up after {self.opts.dask_timeout:g} s")
        return StopRun(reason)

    async def _result(self, fut: Any) -> Any:
        """``fut``'s result, awaited on the runner's loop (the client is asynchronous);
        :class:`_Stopped` if the run stops first (the task is then cancelled by
        :meth:`abort`), :class:`_Lost` if the client is closed meanwhile (a future it
        held may then never settle)."""
        box: asyncio.Future[Any] = asyncio.ensure_future(fut.result())
        stop: asyncio.Future[Any] = asyncio.ensure_future(self.stop_event.wait())
        waits: list[asyncio.Future[Any]] = [box, stop]
        try:
            while not box.done() and not stop.done():
                await asyncio.wait(waits, timeout=LIVENESS_S, return_when=asyncio.FIRST_COMPLETED)
                if not box.done() and self.client_closed():
                    raise _Lost()
        finally:
            stop.cancel()
            if not box.done():
                box.cancel()
        if not box.done() or (box.cancelled() and self.stop_event.is_set()):
            raise _Stopped()
        if box.cancelled():  # the task was cancelled by someone else than this run's stop
            if self.client_closed():
                raise _Lost()
            raise RuntimeError("the Dask task was cancelled")
        return box.result()

    def abort(self, reason: str) -> None:
        self.stopped = reason
        self.stop_event.set()
        if self.inflight and self.handle is not None:
            # The games out on workers run to their end there; their results are not wanted.
            with contextlib.suppress(Exception):
                task = asyncio.get_running_loop().create_task(self._cancel(list(self.inflight)))
                self._cancels.add(task)
                task.add_done_callback(self._cancels.discard)

    async def _cancel(self, futures: list[Any]) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.client.cancel(futures), 10)

