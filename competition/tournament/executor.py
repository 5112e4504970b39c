"""What plays a tournament's games: the one small interface of the local and the Dask executor.

The runner (:mod:`.runner`) owns the event: the schedule and its order, who is forfeited
before a game starts (a remote no-show, a withheld nonce), the results file, the replays,
SPRT stopping. An :class:`Executor` owns the playing: it gets a scheduled game and an
attempt number and gives back a :class:`~.store.GameResult` (or an :class:`Outcome` that
says why there is none). Two implement it, neither by subclassing the other:

- :class:`competition.tournament.local.LocalExecutor`: referees and sandboxed bots on this
  host (:mod:`.referees`, :mod:`.bots`, :mod:`.game`). A Dask worker runs one too;
- :class:`competition.cluster.tournament.DaskExecutor`: each game a task on a Dask cluster,
  played there by a worker's own :class:`~competition.tournament.local.LocalExecutor`.

So a record played on a worker is byte for byte the one a local run plays: there is one
implementation of a game.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .entropy import Contributor
    from .gateway import Gateway
    from .link import CurveClient
    from .schedule import ScheduledGame
    from .store import GameResult, ResultsStore

__all__ = [
    "EventLog",
    "Executor",
    "Forfeit",
    "NoReferee",
    "NonceRound",
    "Outcome",
    "RunOptions",
    "StartError",
    "StopRun",
]


class StartError(Exception):
    """A bad argument or config value found only once the run has begun (an endpoint
    ZeroMQ refuses): exit status 2, and the results file of a new run is discarded like
    any failed start's."""


class NoReferee(Exception):
    """Every referee is gone (and the local ones could not be restarted)."""


class StopRun(Exception):
    """The executor can play no more games of this run (its Dask scheduler is lost, a
    worker lacks a participant's program): the runner stops the run with ``reason``.
    With ``error``, the run also fails with that message (exit 1)."""

    def __init__(self, reason: str, error: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.error = error


@dataclass
class RunOptions:
    resume: bool = False
    concurrency: int | None = None
    referees: int | None = None
    referee_endpoints: tuple[str, ...] = ()
    database: str | None = None
    output: str | None = None
    admin_key: str | None = None
    progress: bool = True
    keep_logs: bool = False  # keep every bot's log, not only those of games that ended abnormally
    # A Dask scheduler's address, or "local" (competition.cluster): the games run on its
    # workers; None plays them here, on this host's processes (the default).
    dask: str | None = None
    dask_tls: str | None = None  # a directory of `okgin cluster certs` files for the Dask links
    dask_timeout: float = 10.0  # seconds to reach the scheduler and see a worker
    # The arena's events (arena.events): the local referees' endpoint (default loopback, a
    # free port: "tcp://HOST:0" puts them where the arena's connected accounts reach them),
    # and a factory of the gateway, ``gateway(tokens)``, used in place of the runner's own
    # (the arena's seats its connected accounts through its front: arena.eventseats).
    referee_bind: str | None = None
    gateway: Any = None
    # More ``okgin referee`` flags for the local referees, and the runner's CURVE client for
    # them: an arena with CURVE keys runs its event referee with them, since its connected
    # accounts reach that referee over the network (arena.events).
    referee_args: tuple[str, ...] = ()
    referee_curve: CurveClient | None = None


@dataclass
class Outcome:
    """How a game attempt ended, when it did not end with a recorded game."""

    replay: bool
    why: str


@dataclass(frozen=True)
class Forfeit:
    """A seat the runner takes and resigns at the start of a game (a remote no-show, a
    withheld nonce) or during it (a crash, a stall): the game is recorded with this
    termination and reason for that seat."""

    seat: int
    termination: str
    reason: str


class EventLog(Protocol):
    """What running a game writes to besides its result: the results file
    (:class:`~.store.ResultsStore`) on the organiser's host; on a Dask worker,
    :class:`competition.cluster.worker.WorkerEvents`, sent back with the game. ``path``
    names the results file: the run directory and the sandbox's hidden files derive from it."""

    @property
    def path(self) -> Path: ...

    def log_event(self, kind: str, detail: str, game: int | None = None) -> None: ...


# The participants' nonce round (.entropy.collect), which the executor runs while the bots
# that passed its preflight are still seated, with those of them it can ask.
NonceRound = Callable[["list[Contributor]"], Awaitable[None]]


class Executor(Protocol):
    """Plays the games the runner hands it (see the module doc)."""

    # Games at once that suit this executor when --concurrency does not say (set by
    # prepare; None: the config's concurrency).
    concurrency: int | None
    # Where it tells the live display something (a referee died); the runner sets it.
    note: Callable[[str], None]

    def check(self) -> None:
        """Refuse (:class:`StartError`) a config this executor cannot play, before
        anything is opened."""

    async def prepare(self, store: ResultsStore, gateway: Gateway | None, nonces: NonceRound | None) -> None:
        """Before the first game: start what plays the games and run the preflight
        (every local participant starts and says hello); ``nonces``, when the event
        collects them, runs within it. Raises :class:`StartError` or
        :class:`~.preflight.PreflightFailed`."""

    async def play_attempt(self, sg: ScheduledGame, attempt: int,
                           forfeit: Forfeit | None) -> tuple[GameResult | Outcome, str]:
        """One attempt at ``sg``, and where it was played. ``forfeit``: a seat the game
        is forfeited by from its start. Raises :class:`NoReferee` or :class:`StopRun`."""

    def abort(self, reason: str) -> None:
        """The run stops: end the games in progress (their results are not wanted)."""

    async def close(self) -> None:
        """After the last game: stop every process and connection it started."""
