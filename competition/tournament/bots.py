"""A seat's bot for one game: its command, its sandbox and cgroup, its log, its end.

A local participant's bot is started for every game (:meth:`BotLauncher.launch`): its
command (:meth:`BotLauncher.bot_argv`, never with its token, which goes in its
environment), confined by bubblewrap (:mod:`.sandbox`) at its seat's door, in a cgroup of
its own (:mod:`.cgroups`), its output copied into a bounded, redacted log
(:mod:`.botlog`). A remote participant's seat is attached to the gateway instead
(:mod:`.gateway`). The game (:mod:`.game`) and the preflight (:mod:`.preflight`) both
start bots here, so whatever confinement a game applies applies to the preflight too.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from okgin.launch import bot_argv
from referee.private import open_private

from . import cgroups
from .botlog import BoundedLog, LogBudget, copy_output
from .config import Participant, TournamentConfig
from .gateway import Gateway
from .link import CurveClient
from .procs import kill_sandbox, spawn, stop
from .sandbox import Limits, Sandbox, conceal, default_dirs, endpoint_inside, is_python, private_dirs, rlimit_preexec
from .schedule import ScheduledGame

__all__ = ["OUTPUT_DRAIN_S", "PLACEHOLDER_RE", "BotLauncher", "LaunchedBot"]

OUTPUT_DRAIN_S = 2.0  # after a bot exits, wait this long for the rest of its output
PLACEHOLDER_RE = re.compile(r"\{(endpoint|table|name|game|config_dir)\}")  # no {token}: .config.PLACEHOLDERS


@dataclass
class LaunchedBot:
    """A seat's bot for one game: its process (or the gateway's relay), its log, and the
    tasks that watch it; ended by :meth:`BotLauncher.end`."""

    seat: int
    name: str
    proc: asyncio.subprocess.Process | None
    log_path: Path
    log: IO[bytes]
    exit_task: asyncio.Future[None] | None = None
    exited: int | None = None
    remote_table: str | None = None  # a remote bot relayed by the gateway for this table
    sandboxed: bool = False  # proc is bubblewrap: stopped with its sandbox (procs.kill_sandbox)
    cgroup: cgroups.Group | None = None  # the sandbox's limits as a whole (.cgroups), removed after the game
    enforcer: asyncio.Future[str] | None = None  # ends the sandbox at its memory or CPU limit
    output: BoundedLog | None = None  # its output, written into log within bounds (.botlog)
    copier: asyncio.Future[None] | None = None
    discard: bool = False  # delete the log once the bot is ended (a normal game's, without --keep-logs)

    async def drained(self, timeout: float) -> None:
        """Until its output is all in the log (end of file on the pipe), ``timeout`` at
        most: a child the bot left behind may hold the pipe open."""
        if self.copier is not None and not self.copier.done():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self.copier), timeout)



class BotLauncher:
    """Starts and ends the bots of a run's games: the config, where logs go and their
    budget, the sandbox and cgroups (set up by the executor before the first game), the
    referees' ipc sockets, and the gateway for remote participants."""

    def __init__(self, cfg: TournamentConfig, logdir: Path, log_budget: LogBudget, ipc_for: dict[str, Path]) -> None:
        self.cfg = cfg
        self.logdir = logdir
        self.log_budget = log_budget
        self.ipc_for = ipc_for  # the referee pool's: the ipc socket of each referee, by endpoint
        # The sandbox of local bots (.sandbox) and whole-sandbox limits (.cgroups; None =
        # per-process rlimits), set up before the first game; the gateway, when the event
        # has remote participants.
        self.sandbox: Sandbox | None = None
        self.cgroups: cgroups.Backend | None = None
        self.gateway: Gateway | None = None

    def bot_argv(self, p: Participant, endpoint: str, table: str, sg: ScheduledGame) -> list[str]:
        """The bot's command. Never its seat token: a command line is public (any local
        user reads /proc/PID/cmdline), so the token travels in the bot's own environment
        (``OKGIN_TOKEN``, readable by its uid and root only; see :meth:`launch`)."""
        if p.kind == "bot":
            assert p.bot is not None
            # The bot's own seed comes from the game's key, never from the deal's seed
            # (secret until the game ends): deterministic games, so resumes replay exactly.
            return bot_argv(p.bot, endpoint, *p.args, name=p.name, seed=sg.key, quiet=True)
        values = {"endpoint": endpoint, "table": table, "name": p.name, "game": sg.key,
                  "config_dir": self.cfg.config_dir}
        return [PLACEHOLDER_RE.sub(lambda m: values[m.group(1)], w) for w in p.command]

    def open_log(self, sg: ScheduledGame, seat: int, name: str, attempt: int, table: str) -> tuple[Path, IO[bytes]]:
        """A new log file for this seat of this attempt: ``KEY-aN-sSEAT-NAME.log``.

        Never an existing one: attempts count from 1 again in a resumed run, so the log of
        an attempt a killed run left behind (the one an organiser wants to read) would be
        overwritten. N is then the next number free on disk; the header names the table.
        """
        for n in itertools.count(attempt):
            path = self.logdir / f"{sg.key}-a{n}-s{seat}-{name}.log"
            try:
                log = open_private(path, "xb")
            except FileExistsError:
                continue
            log.write(f"# {sg.key} seat {seat} ({name}), table {table}\n".encode())
            return path, log
        raise AssertionError("unreachable")

    def door_request(self, endpoint: str) -> dict[str, Any]:
        """What ``create_table`` adds to ask for seat doors (protocol 1.5, referee.doors):
        sandboxed bots reach a referee of this host through their seat's door only."""
        return {"doors": True} if self.sandbox is not None and endpoint in self.ipc_for else {}

    async def launch(self, p: Participant, seat: int, endpoint: str, token: str, table: str, sg: ScheduledGame,
                     attempt: int, q: asyncio.Queue[dict[str, Any]], door: str | None = None,
                     curve: CurveClient | None = None) -> LaunchedBot:
        """``door``: the seat's door (an ``ipc://`` endpoint from ``table_created.doors``);
        ``curve``: the runner's keys for that referee, for the gateway's relay."""
        log_path, log = self.open_log(sg, seat, p.name, attempt, table)
        if p.kind == "remote":
            assert self.gateway is not None
            log.write(f"# remote bot {p.name}, relayed by the gateway\n".encode())
            await self.gateway.attach(p.name, endpoint, token, table, curve=curve, seat=seat, seats=sg.seats)
            return LaunchedBot(seat, p.name, None, log_path, log, remote_table=table)
        cwd = str(self.cfg.resolve_path(p.cwd)) if p.cwd else self.cfg.config_dir
        # Its seat's door, never the referee's shared socket: through the door it can play
        # its seat and nothing else (no lobby, no other table, a connection cap of its own).
        # Every sandboxed bot reaches it through the relay (.relay): over ipc://, or over
        # TCP on the sandbox's own loopback for one that cannot use ipc:// (network = "tcp").
        sandboxed_ipc = self.sandbox is not None and endpoint in self.ipc_for
        if sandboxed_ipc and not door:
            raise RuntimeError(f"referee at {endpoint} gave no seat door for {p.name} (it needs protocol 1.5)")
        socket = Path(door[len("ipc://"):]) if sandboxed_ipc and door else None
        if socket is not None:
            endpoint = endpoint_inside(p.network)  # the seat's door, as the sandbox shows it
        argv = self.bot_argv(p, endpoint, table, sg)
        env = {"OKGIN_ENDPOINT": endpoint, "OKGIN_TOKEN": token, "OKGIN_TABLE": table, "OKGIN_NAME": p.name, **dict(p.env)}
        limits = self.cfg.limits.merged(p.limits)
        preexec = rlimit_preexec(limits)
        # What the log shows of the launch: the command and the names of the variables
        # set, never a value (the token is one).
        log.write(f"# {' '.join(argv)}\n# environment: {' '.join(sorted(env))}\n".encode())
        log.flush()
        pass_fds: tuple[int, ...] = ()
        inherit_env = True
        if self.sandbox is not None:
            mine = self.visible_dirs(p)
            wrapped = self.sandbox.wrap(argv, visible=mine, cwd=Path(cwd), env=env, socket=socket,
                                        limits=limits, network=p.network,
                                        others=[d for o in self.cfg.participants if o.name != p.name
                                                for d in private_dirs(mine, self.visible_dirs(o))])
            # bwrap's options (the bot's environment with its token, the host paths it
            # binds and hides) go through a file descriptor, not its public command line;
            # bwrap itself gets a bare environment (the sandbox's /proc/1/environ).
            argv, args_fd = conceal(wrapped.argv)
            preexec = wrapped.preexec
            pass_fds, env, inherit_env = (args_fd, *wrapped.fds), {}, False
        group = self.sandbox_group(f"{sg.key}-a{attempt}-s{seat}", limits, log)
        if group is not None:
            preexec = group.preexec()
        sandboxed = self.sandbox is not None
        spawning = asyncio.ensure_future(spawn(argv, cwd=cwd, env=env, preexec=preexec, pass_fds=pass_fds,
                                               inherit_env=inherit_env, output_pipe=True))
        try:
            # Shielded: a game stopped while its bot starts (an SPRT decided, the run was
            # interrupted) must still end the process it started, not lose its handle.
            proc: asyncio.subprocess.Process | None = await asyncio.shield(spawning)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await stop(await spawning, grace=2.0, sandboxed=sandboxed)
            if group is not None:
                await group.remove()
            log.close()
            raise
        except OSError as e:
            # A program that cannot even start has crashed at once.
            log.write(f"# could not start: {e}\n".encode())
            log.flush()
            proc = None
        finally:
            for fd in pass_fds:
                os.close(fd)
        bot = LaunchedBot(seat, p.name, proc, log_path, log, sandboxed=sandboxed, cgroup=group)
        if group is not None and proc is not None:
            def end_sandbox(proc: asyncio.subprocess.Process = proc) -> None:
                if proc.returncode is None:  # never a reaped (perhaps reused) pid
                    kill_sandbox(proc.pid)

            bot.enforcer = asyncio.ensure_future(cgroups.enforce(group, end_sandbox))
        if proc is not None and proc.stdout is not None:
            bot.output = BoundedLog(log, self.cfg.bot_log_kb * 1024, self.log_budget, [token.encode()])
            bot.copier = asyncio.ensure_future(copy_output(proc.stdout, bot.output))

        async def watch_exit() -> None:
            code = 127 if proc is None else await proc.wait()
            await bot.drained(OUTPUT_DRAIN_S)  # its last words are in the log before anyone reads them
            bot.exited = code
            q.put_nowait({"type": "_exit", "seat": seat, "code": code})

        bot.exit_task = asyncio.ensure_future(watch_exit())
        return bot

    def sandbox_group(self, name: str, limits: Limits, log: IO[bytes]) -> cgroups.Group | None:
        """A cgroup for one sandbox (.cgroups), or None: no cgroups here (the rlimits of
        .sandbox then apply), or the cgroupfs refused this one (said in the bot's log)."""
        if self.cgroups is None:
            return None
        try:
            return self.cgroups.group(name, limits)
        except OSError as e:
            log.write(f"# no cgroup for this sandbox ({e}): per-process rlimits only\n".encode())
            print(f"okgin tournament: warning: no cgroup for {name} ({e}): per-process rlimits only", file=sys.stderr,
                  flush=True)
            return None

    def visible_dirs(self, p: Participant) -> list[Path]:
        """The program directories a participant's sandbox shows: its ``dir``, else the
        directories of its command's files (plus the Python installation for ``bot``)."""
        if p.kind == "remote":
            return []
        cwd = self.cfg.resolve_path(p.cwd) if p.cwd else Path(self.cfg.config_dir)
        if p.dirs:  # declared: these, plus the Python installation for a Python program
            python = p.kind == "bot" or is_python(p.command[0])
            return [self.cfg.resolve_path(d) for d in p.dirs] + (default_dirs([], cwd, True) if python else [])
        if p.kind == "bot":
            assert p.bot is not None
            spec = p.bot.rsplit(":", 1)[0]
            return default_dirs([spec] if spec.endswith(".py") else [], cwd, True)
        return default_dirs(list(p.command), cwd, False)

    @staticmethod
    def log_tail(path: Path, lines: int = 3) -> str:
        try:
            text = path.read_text(errors="replace").strip().splitlines()
        except OSError:
            return ""
        text = [t for t in text if t and not t.startswith("# ")]
        return " / ".join(t.strip()[:200] for t in text[-lines:])

    async def end(self, bots: list[LaunchedBot], natural: bool) -> None:
        """End ``bots`` (``natural``: their game ended, each may exit by itself first), remove
        their cgroups, close their logs and delete those marked ``discard``."""
        async def end_one(b: LaunchedBot) -> None:
            if b.remote_table is not None and self.gateway is not None:
                await self.gateway.detach(b.name, b.remote_table)
            if b.proc is not None:
                if natural:
                    # A bot may exit by itself once its game is over; give it a moment.
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(asyncio.shield(b.proc.wait()), 1.0)
                await stop(b.proc, grace=2.0, sandboxed=b.sandboxed)
            if b.enforcer is not None:
                b.enforcer.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await b.enforcer
            if b.cgroup is not None and not await b.cgroup.remove():
                print(f"okgin tournament: warning: could not remove the cgroup of {b.name}'s sandbox ({b.cgroup.name})",
                      file=sys.stderr, flush=True)
            if b.exit_task is not None:
                b.exit_task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await b.exit_task
            await b.drained(OUTPUT_DRAIN_S)
            if b.copier is not None and not b.copier.done():
                b.copier.cancel()  # a process the bot left behind holds the pipe: its output ends here
                with contextlib.suppress(asyncio.CancelledError):
                    await b.copier
            b.log.close()
            if b.discard:
                with contextlib.suppress(OSError):
                    b.log_path.unlink()
                if b.output is not None:
                    self.log_budget.give_back(b.output.written)

        await asyncio.gather(*(end_one(b) for b in bots))
