"""The local executor: a run's games played on this host's referees by sandboxed bots.

It puts together the three parts of playing (:mod:`.referees`, :mod:`.bots`,
:mod:`.game`) and implements :class:`~.executor.Executor`. Before the first game
(:meth:`LocalExecutor.prepare`) it probes the sandbox, starts the referees and runs the
preflight (:mod:`.preflight`); each game then goes to the least busy referee
(:meth:`LocalExecutor.play_attempt`). A Dask worker (competition.cluster.worker) runs
one of these per tournament too, so a game is played by the same code wherever it runs.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import zmq.asyncio

from referee.private import private_dir

from . import cgroups
from .botlog import LogBudget
from .bots import BotLauncher
from .config import TournamentConfig
from .executor import EventLog, Forfeit, NonceRound, NoReferee, Outcome, RunOptions, StartError
from .game import GamePlayer
from .gateway import Gateway
from .outputs import output_dir, output_files
from .preflight import preflight
from .referees import RefereePool
from .sandbox import Sandbox, probe
from .schedule import ScheduledGame
from .store import GameResult, ResultsStore

__all__ = ["LocalExecutor"]


class LocalExecutor:
    """Referees and bot processes of this host (see the module doc). ``log`` takes the
    events of playing (the results file, or a Dask worker's list); ``workdir`` (0700)
    holds the referees' journals and state and the bots' logs."""

    def __init__(self, cfg: TournamentConfig, opts: RunOptions, log: EventLog, workdir: Path,
                 ctx: zmq.asyncio.Context | None = None) -> None:
        self.cfg = cfg
        self.opts = opts
        self.log = log
        self.workdir = workdir
        self._own_ctx = ctx is None
        self.ctx = ctx if ctx is not None else zmq.asyncio.Context()
        self.concurrency: int | None = None
        # 0700 (.private): the bots' logs hold what bots saw.
        self.logdir = private_dir(workdir / "logs")
        # The event's total for bot logs (.botlog): what earlier runs of it kept counts.
        kept = sum(f.stat().st_size for f in self.logdir.iterdir() if f.is_file())
        self.log_budget = LogBudget(cfg.bot_logs_total_mb * 1024 * 1024, used=kept)
        self.pool = RefereePool(cfg, opts, log, workdir, self.ctx)
        self.bots = BotLauncher(cfg, self.logdir, self.log_budget, self.pool.ipc_for)
        self.games = GamePlayer(cfg, opts.keep_logs, log, self.bots, self.ctx)
        # Whole-sandbox limits (.cgroups): probed with the sandbox.
        self.cgroup_fs = cgroups.CGROUP_FS
        self.limits_by = cgroups.RLIMITS
        self.limits_why = ""

    @property
    def note(self) -> Callable[[str], None]:
        return self.pool.note

    @note.setter
    def note(self, note: Callable[[str], None]) -> None:
        self.pool.note = note

    def check(self) -> None:
        """Any config: its checks are the sandbox's and the referees', at :meth:`prepare`."""

    def use_config(self, cfg: TournamentConfig) -> None:
        """Play the next games with ``cfg``: the same event (rules, clock, policies, limits)
        with other participants, for the arena's hosted bots, which arrive while it runs.
        A game in progress looks its seats' participants up as it starts them, so ``cfg``
        must keep every participant of the games in progress."""
        self.cfg = self.bots.cfg = self.games.cfg = self.pool.cfg = cfg

    async def start(self) -> None:
        """The sandbox and the referees: what a game needs (a Dask worker's preflight and
        games need no more)."""
        self.setup_sandbox()
        await self.pool.start(self.bots.sandbox)

    async def prepare(self, store: ResultsStore, gateway: Gateway | None, nonces: NonceRound | None) -> None:
        """Before the first game: the sandbox, the referees and the preflight; then the
        limits' mechanism is named in the results file."""
        self.bots.gateway = gateway
        await self.start()
        await preflight(self.bots, self.pool, self.log, self.opts.concurrency or self.cfg.concurrency, nonces)
        self.record_limits(store)

    async def play_attempt(self, sg: ScheduledGame, attempt: int,
                           forfeit: Forfeit | None = None) -> tuple[GameResult | Outcome, str]:
        """One attempt at ``sg`` on the least busy referee, and that referee's label.
        Raises :class:`~.executor.NoReferee` when no referee is left."""
        slot = await self.pool.pick()
        if slot is None:
            raise NoReferee("no referee is left to play on")
        try:
            out = await self.games.play(sg, attempt, slot, forfeit)
        finally:
            slot.active -= 1
        if isinstance(out, GameResult):
            slot.games += 1
        return out, slot.label

    def abort(self, reason: str) -> None:
        self.games.abort(reason)

    async def close(self) -> None:
        await self.pool.close()
        if self.pool.ipc_dir is not None:
            shutil.rmtree(self.pool.ipc_dir, ignore_errors=True)
        if self.bots.cgroups is not None:
            self.bots.cgroups.close()
        if self._own_ctx:
            with contextlib.suppress(Exception):
                self.ctx.destroy(linger=0)

    def setup_sandbox(self) -> None:
        """Probe bubblewrap once; refuse (StartError) to run local bots unconfined unless
        the config says ``sandbox = false``."""
        if not self.cfg.sandbox or all(p.kind == "remote" for p in self.cfg.participants):
            return
        why = probe()
        if why is not None:
            raise StartError(f"local participants run in a sandbox, and it cannot start here: {why}. "
                             "Install bubblewrap, or set tournament.sandbox = false to run them unconfined "
                             "(the report then marks the event unsandboxed)")
        ipc_dir = self.pool.ipc_dir = Path(tempfile.mkdtemp(prefix="okgin-ipc-"))  # 0700: only the runner and its referees
        store = self.log.path
        hidden = [store, *(store.with_name(store.name + x) for x in ("-wal", "-shm", "-journal")), self.workdir,
                  ipc_dir, *output_files(store, output_dir(self.cfg, store, self.opts.output))]
        if self.cfg.config_file:
            hidden.append(Path(self.cfg.config_file))
        self.bots.sandbox = Sandbox(hidden)
        self.bots.cgroups, self.limits_why = cgroups.probe(self.cgroup_fs)
        self.limits_by = self.bots.cgroups.mechanism if self.bots.cgroups is not None else cgroups.RLIMITS

    def record_limits(self, store: ResultsStore) -> None:
        """Name what enforced the local bots' limits in the results file (the report
        prints it) and in the run's header. Per-process rlimits, once used, stay named."""
        if all(p.kind == "remote" for p in self.cfg.participants) or (self.cfg.sandbox and self.bots.sandbox is None):
            return  # no local bot
        if store.get_meta("limits_by") != cgroups.RLIMITS:
            store.set_meta("limits_by", self.limits_by)
        if self.opts.progress:
            why = (f": {', '.join(self.bots.cgroups.controllers())} per sandbox" if self.bots.cgroups is not None
                   else f" ({self.limits_why})" if self.limits_why else " (tournament.sandbox = false)")
            print(f"okgin tournament: sandbox limits enforced by {self.limits_by}{why}", flush=True)
