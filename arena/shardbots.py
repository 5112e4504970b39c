"""Hosted bots at the arena's own shards: a connected account's game against a hosted bot.

A hosted bot plays connected accounts too (issue 27: "the arena keeps the bot playing
rated games against others of similar rating"). Such a game is an ordinary arena game
(:meth:`arena.shards.ShardPool.play`): the desk pairs the connected account's seek with
the hosted bot's (:meth:`arena.hosted.HostedLeague.seeks`), the shard deals a fresh seed
of its own (never a duplicate deal: the connected player could remember it), and the
connected player is sent ``game_ready`` as for any game. The hosted seat is played by a
**fresh process of the bot in a fresh sandbox**, started here exactly as a tournament
starts a participant (:class:`competition.tournament.bots.BotLauncher`: bubblewrap, no
network, its own directory read-only, a cgroup over the whole sandbox, a bounded log with
its token redacted), reaching the shard through its seat's **door** (protocol.md §13.2:
``create_table`` with ``doors``), never the shard's shared socket. So the bot sees its seat
and nothing else of the shard, and nothing of the arena (its database, its state, other
bots' directories). Only a shard on the arena's own host has doors a sandbox can be given,
so these games are played on local shards only (a ``[[remote_shards]]`` one never).

A bot whose process exits before its game ended loses it at once: its seat is taken
with its token and resigned (:func:`competition.tournament.link.resign_seat`), as the
tournament does for a crash.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import zmq.asyncio

from competition.tournament import cgroups
from competition.tournament.botlog import LogBudget
from competition.tournament.bots import BotLauncher, LaunchedBot
from competition.tournament.config import TournamentConfig
from competition.tournament.link import CurveClient, resign_seat
from competition.tournament.sandbox import Sandbox, probe
from competition.tournament.schedule import ScheduledGame
from referee.private import private_dir

__all__ = ["CRASH_GRACE_S", "LOGS_TOTAL_MB", "SeatedBots", "ShardBots"]

log = logging.getLogger("okgin.arena.hosted")

CRASH_GRACE_S = 1.0  # after a bot exits, wait this long for a game_end already on its way
LOGS_TOTAL_MB = 256  # every log of hosted bots at the shards together (then they are cut short)


@dataclass
class SeatedBots:
    """The hosted bots of one game at a shard: their processes, and the tasks that resign a
    seat whose bot exited before the game ended."""

    launcher: BotLauncher | None
    bots: list[LaunchedBot] = field(default_factory=list)
    watchers: list[asyncio.Task[None]] = field(default_factory=list)


class ShardBots:
    """Starts hosted bots at shard seats (module doc). :meth:`start` probes the sandbox
    once; without one, :attr:`error` says why and no hosted bot plays a connected account
    (hosted bots never run unconfined)."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.logdir = private_dir(workdir / "shard-logs")
        kept = sum(f.stat().st_size for f in self.logdir.iterdir() if f.is_file())
        self.budget = LogBudget(LOGS_TOTAL_MB * 1024 * 1024, used=kept)
        self.sandbox: Sandbox | None = None
        self.cgroups: cgroups.Backend | None = None
        self.error: str | None = "not started"
        self.serial = itertools.count(1)

    def start(self) -> None:
        """Probe bubblewrap and the cgroups (blocking: run it in a thread)."""
        why = probe()
        if why is not None:
            self.error = f"no sandbox here: {why}"
            return
        # The arena's own hosted files (logs, runs) are covered inside whatever a bot sees.
        self.sandbox = Sandbox([self.workdir])
        self.cgroups, _ = cgroups.probe(cgroups.CGROUP_FS)
        self.error = None

    @property
    def ready(self) -> bool:
        return self.error is None

    def close(self) -> None:
        if self.cgroups is not None:
            self.cgroups.close()

    async def seat(self, cfg: TournamentConfig, seats: dict[int, str], endpoint: str, tokens: list[str],
                   doors: list[str], table: str, over: Callable[[], bool], ctx: zmq.asyncio.Context,
                   curve: CurveClient | None = None) -> SeatedBots:
        """Start the participant ``seats[seat]`` of ``cfg`` at each of those seats of
        ``table`` (the shard at ``endpoint``), through its door. ``over()`` says whether the
        game has ended (a bot that exits after that is not resigned); ``ctx`` and ``curve``: the
        shard pool's, to resign a seat over the shard's own socket."""
        if self.sandbox is None:
            raise RuntimeError(self.error or "no sandbox")
        launcher = BotLauncher(cfg, self.logdir, self.budget, {endpoint: Path(doors[0][len("ipc://"):])})
        launcher.sandbox, launcher.cgroups = self.sandbox, self.cgroups
        out = SeatedBots(launcher)
        n = next(self.serial)
        q: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        try:
            for seat, name in sorted(seats.items()):
                # The key names the bot's log and cgroup; "shard" keeps it apart from the league's.
                sg = ScheduledGame(index=n, pairing=("shard", name), deal=n, seating=seat, seats=(name,), seed="")
                out.bots.append(await launcher.launch(cfg.participant(name), seat, endpoint, tokens[seat], table, sg, 1, q,
                                                      door=doors[seat]))
        except BaseException:
            await self.end(out, natural=False)
            raise
        out.watchers.append(asyncio.ensure_future(self.watch(q, endpoint, tokens, table, over, ctx, curve)))
        return out

    async def watch(self, q: asyncio.Queue[dict[str, Any]], endpoint: str, tokens: list[str], table: str,
                    over: Callable[[], bool], ctx: zmq.asyncio.Context, curve: CurveClient | None) -> None:
        """Resign the seat of a bot that exited before its game ended (after a moment for
        a game_end already on its way)."""
        while True:
            msg = await q.get()
            await asyncio.sleep(CRASH_GRACE_S)
            if over():
                continue
            seat = int(msg["seat"])
            log.info("hosted bot at %s seat %d exited with %s before its game ended: resigned", table, seat, msg.get("code"))
            with contextlib.suppress(Exception):
                await resign_seat(ctx, endpoint, tokens[seat], table, timeout=30.0, curve=curve)

    async def end(self, seated: SeatedBots, natural: bool) -> None:
        """End the game's bots (``natural``: its game ended, each may exit by itself first)."""
        for w in seated.watchers:
            w.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await w
        if seated.launcher is not None and seated.bots:
            for b in seated.bots:
                b.discard = natural  # keep the log of a game that did not end normally
            await seated.launcher.end(seated.bots, natural)
