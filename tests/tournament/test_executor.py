"""The runner and its executor meet at one small interface (competition.tournament.executor).

The runner owns the event (order, forfeits, recording, replays, stopping); an executor only
plays what it is handed. So the runner runs with any object that implements the interface,
here one that plays no game at all: no referee, no bot process, no sockets.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import zmq.asyncio

from competition.tournament.config import TournamentConfig, parse_config
from competition.tournament.entropy import Contributor
from competition.tournament.executor import Forfeit, NonceRound, Outcome, RunOptions, StopRun
from competition.tournament.gateway import Gateway
from competition.tournament.runner import Runner
from competition.tournament.schedule import ScheduledGame
from competition.tournament.store import GameResult, ResultsStore


class PaperExecutor:
    """Plays every game on paper: seat 0 wins. ``fail``: attempts that fail (replayed);
    ``stop_at``: the game index whose attempt finds the executor unable to go on."""

    def __init__(self, cfg: TournamentConfig, opts: RunOptions, store: ResultsStore, workdir: Path,
                 ctx: zmq.asyncio.Context) -> None:
        self.concurrency: int | None = None
        self.note = lambda _: None
        self.fail: set[tuple[int, int]] = set()
        self.stop_at: int | None = None
        self.calls: list[Any] = []

    def check(self) -> None:
        self.calls.append("check")

    async def prepare(self, store: ResultsStore, gateway: Gateway | None, nonces: NonceRound | None) -> None:
        self.calls.append(("prepare", gateway, nonces is not None))
        if nonces is not None:
            seats: list[Contributor] = []
            await nonces(seats)

    async def play_attempt(self, sg: ScheduledGame, attempt: int,
                           forfeit: Forfeit | None) -> tuple[GameResult | Outcome, str]:
        await asyncio.sleep(0)
        if sg.index == self.stop_at:
            raise StopRun("the paper ran out")
        if (sg.index, attempt) in self.fail:
            return Outcome(True, "the referee was lost"), "paper"
        return GameResult(index=sg.index, key=sg.key, deal=sg.deal, seating=sg.seating, seed=sg.seed, seats=sg.seats,
                          scores=(100, 0), winner=sg.seats[0], termination="normal", culprit=None, reason="on paper",
                          hands=1, referee="paper", attempts=attempt), "paper"

    def abort(self, reason: str) -> None:
        self.calls.append(("abort", reason))

    async def close(self) -> None:
        self.calls.append("close")


def _event(tmp_path: Path) -> tuple[TournamentConfig, ResultsStore]:
    cfg = parse_config({"tournament": {"name": "paper", "games_per_pairing": 2, "concurrency": 2},
                        "participant": [{"name": n, "bot": "random"} for n in "abc"]}, str(tmp_path))
    return cfg, ResultsStore.for_run(cfg, tmp_path / "paper.sqlite", resume=False)


def test_the_runner_plays_the_schedule_through_any_executor(tmp_path: Path) -> None:
    cfg, store = _event(tmp_path)
    try:
        runner = Runner(cfg, RunOptions(progress=False), store, PaperExecutor)
        ex = runner.executor
        assert isinstance(ex, PaperExecutor)
        ex.fail = {(0, 1)}  # game 0's first attempt fails: the runner plays it again
        assert asyncio.run(runner.run()) == 0
        games = {g.index: g for g in store.games()}
        assert sorted(games) == list(range(len(runner.schedule)))
        assert games[0].attempts == 2 and all(g.attempts == 1 for i, g in games.items() if i)
        assert [e for e in store.events() if e[1] == "replay"], "the failed attempt is logged as a replay"
        # A new event collects the participants' nonces: the runner hands the executor its round.
        assert ex.calls[0] == "check" and ex.calls[1] == ("prepare", None, True) and ex.calls[-1] == "close"
        assert store.entropy() is not None
    finally:
        store.close()


def test_an_executor_that_cannot_go_on_stops_the_run(tmp_path: Path) -> None:
    cfg, store = _event(tmp_path)
    try:
        runner = Runner(cfg, RunOptions(progress=False, concurrency=1), store, PaperExecutor)
        ex = runner.executor
        assert isinstance(ex, PaperExecutor)
        ex.stop_at = 2
        assert asyncio.run(runner.run()) == 1  # games left unplayed: run again with --resume
        assert runner.state.stop_reason == "the paper ran out"
        assert ("abort", "the paper ran out") in ex.calls and ex.calls[-1] == "close"
        assert sorted(g.index for g in store.games()) == [0, 1]
    finally:
        store.close()
