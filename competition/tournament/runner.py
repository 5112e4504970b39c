"""The runner: plays a tournament's schedule on referees, game by game, and records it.

One asyncio loop drives everything (no threads):

- **Referees.** ``--referees N`` starts N ``okgin referee`` processes on free loopback
  ports (one per core is a good N); ``--referee-endpoints`` uses running ones. The runner
  speaks to each as an admin over the documented protocol (:mod:`.link`). A game goes to
  the referee with the fewest games in progress.
- **A game.** ``create_table`` with reserved seats, the deal's seed, the clock and the
  policies; ``watch`` it (public feed); launch each seat's bot with its seat token
  (:mod:`.procs`); follow the feed until ``game_end``; take the record and clocks
  (:mod:`.records`); write the game to the results file in one transaction; close the
  table; end the bot processes.
- **Failures.** A bot process that exits before its game ended loses it: the runner
  takes its seat with the seat token and resigns it (termination ``crash``). A game with
  no move for ``stall_timeout`` seconds (a hung bot at a table without a time control)
  is resigned for the seat to act (termination ``timeout``). A referee that dies (its
  process exits, it shuts down, or it goes silent) has its unfinished games replayed on
  another referee with a fresh table; a local referee is restarted (at most 3 times per
  slot). Nothing about an unfinished game is ever written, so a replay cannot count it
  twice.
- **Resume.** The results file holds every finished game by its schedule index; a
  resumed run plays the indices that are missing, with the same seats and seeds.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import json
import os
import re
import secrets
import shutil
import signal
import sys
import tempfile
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import IO, Any

import zmq
import zmq.asyncio

from okgin import env
from okgin.launch import bot_argv
from referee.private import open_private, private_dir

from . import cgroups, entropy
from .botlog import BoundedLog, LogBudget, copy_output
from .chain import chain_head
from .config import Participant, TournamentConfig
from .gateway import Gateway
from .link import AdminLink, CurveClient, RefereeGone, RequestFailed, resign_seat
from .preflight import PreflightFailed, all_crashed, preflight
from .procs import LocalReferee, kill_sandbox, spawn, stop
from .progress import Progress
from .records import FeedRecorder, find_journal, read_journal
from .report import report_from_store, sprt_status
from .sandbox import (
    SOCKET_PATH,
    Limits,
    Sandbox,
    conceal,
    default_dirs,
    is_python,
    limit_hit,
    private_dirs,
    probe,
    rlimit_preexec,
)
from .schedule import Schedule, ScheduledGame
from .sprt import Sprt, SprtMonitor
from .store import GameResult, ResultsStore, discard
from .verify import secrecy_lines

MAX_ATTEMPTS = 5
MAX_RESTARTS = 3
SCAN_LIMIT = 100_000  # queued games looked through for one that can start (a remote participant away)
CRASH_GRACE_S = 1.0  # after a bot exits, wait this long for a game_end already on its way
OUTPUT_DRAIN_S = 2.0  # after a bot exits, wait this long for the rest of its output
# Before a game starts, the stall clock is at least this long. Why: stall_timeout is about
# moves; starting a bot (an interpreter, a sandbox, a cgroup) on a loaded machine can take
# seconds, and a short stall_timeout then forfeited a bot that was still starting.
START_ALLOWANCE_S = 30.0
PLACEHOLDER_RE = re.compile(r"\{(endpoint|table|name|game|config_dir)\}")  # no {token}: .config.PLACEHOLDERS


class StartError(Exception):
    """A bad argument or config value found only once the run has begun (an endpoint
    ZeroMQ refuses): exit status 2, and the results file of a new run is discarded like
    any failed start's."""


class NoReferee(Exception):
    """Every referee is gone (and the local ones could not be restarted)."""


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


@dataclass
class Slot:
    """One referee the runner plays on."""

    label: str
    endpoint: str
    link: AdminLink
    local: LocalReferee | None = None
    active: int = 0
    restarts: int = 0
    dead: bool = False
    games: int = 0
    watcher: asyncio.Future[None] | None = None


@dataclass
class Outcome:
    """How a game attempt ended, when it did not end with a recorded game."""

    replay: bool
    why: str


@dataclass
class _Override:
    seat: int
    termination: str
    reason: str


@dataclass
class _Bot:
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


@dataclass
class RunState:
    stop_reason: str | None = None


class Runner:
    def __init__(self, cfg: TournamentConfig, opts: RunOptions, store: ResultsStore) -> None:
        self.cfg = cfg
        self.opts = opts
        self.store = store
        self.schedule = Schedule(cfg, store.secret(), store.entropy_nonces())
        self.done: set[int] = set()  # recorded game indices: a deal is revealed once all of its are
        self.ctx = zmq.asyncio.Context()
        self.slots: list[Slot] = []
        self.workdir = store.path.with_name(store.path.stem + "-run")
        self.logdir = self.workdir / "logs"
        # 0700 (.private): the journals, logs and referee state in it hold seeds and what
        # bots saw; another local user must not read them while the event runs.
        private_dir(self.workdir)
        private_dir(self.logdir)
        # The event's total for bot logs (.botlog): what earlier runs of it kept counts.
        kept = sum(f.stat().st_size for f in self.logdir.iterdir() if f.is_file())
        self.log_budget = LogBudget(cfg.bot_logs_total_mb * 1024 * 1024, used=kept)
        self.admin_key = opts.admin_key or cfg.admin_key or env.get("OKGIN_ADMIN_KEY")
        # The referees this runner starts itself get this key (admin is closed on a referee
        # without one): the given key, else a random one that never leaves this process.
        self.local_admin_key = self.admin_key or secrets.token_hex(16)
        self.concurrency = opts.concurrency or cfg.concurrency
        self.state = RunState()
        self.active_queues: set[asyncio.Queue[dict[str, Any]]] = set()
        self.queue: deque[tuple[int, int]] = deque()
        self.unplayable: list[tuple[int, str]] = []
        self._slot_lock = asyncio.Lock()
        self.progress: Progress | None = None
        self.sprt = None if cfg.sprt is None else Sprt(cfg.sprt.elo0, cfg.sprt.elo1, cfg.sprt.alpha, cfg.sprt.beta,
                                                              cfg.sprt.model)
        # The test reads complete deal pairs (the pentanomial GSPRT, see .sprt).
        self.sprt_monitor = None if cfg.sprt is None or self.sprt is None else SprtMonitor(
            self.sprt, cfg.sprt.candidate, cfg.sprt.baseline, cfg.unit_games((cfg.sprt.candidate, cfg.sprt.baseline)))
        self.gateway: Gateway | None = None
        self.stop_event = asyncio.Event()
        # The sandbox of local bots (.sandbox), set up by run(); the ipc socket of each
        # referee, by the endpoint the runner knows it by.
        self.sandbox: Sandbox | None = None
        self.ipc_dir: Path | None = None
        # Whole-sandbox limits (.cgroups): probed with the sandbox; None = per-process rlimits.
        self.cgroups: cgroups.Backend | None = None
        self.cgroup_fs = cgroups.CGROUP_FS
        self.limits_by = cgroups.RLIMITS
        self.limits_why = ""
        self.ipc_for: dict[str, Path] = {}
        # Remote participants (relayed by the gateway): the deals each is playing right
        # now, so that it never sits at two seatings of one deal at once, and an event
        # set whenever a game ends (a waiting game may have become playable).
        self.remote_names = frozenset(p.name for p in cfg.participants if p.kind == "remote")
        self.playing_deals: dict[str, set[int]] = {n: set() for n in self.remote_names}
        self.changed = asyncio.Event()
        self.games_from: float | None = None  # time.monotonic() when the first game could start
        # participants who committed a nonce and withheld it: every game of theirs is forfeited (.entropy)
        self.withheld: frozenset[str] = entropy.withheld(store)

    def reschedule(self) -> None:
        """Deal from the participants' nonces once the preflight stored them (.entropy),
        and forfeit the games of those who committed one and withheld it."""
        self.schedule = Schedule(self.cfg, self.store.secret(), self.store.entropy_nonces())
        self.withheld = entropy.withheld(self.store)

    # ------------------------------------------------------------------ referees
    async def start_referees(self) -> None:
        endpoints = self.opts.referee_endpoints or self.cfg.referee_endpoints
        if endpoints:
            for i, ep in enumerate(endpoints):
                if ep.startswith("ipc://"):
                    self.ipc_for[ep] = Path(ep[len("ipc://"):])
                    if self.sandbox is not None and self.sandbox.root:
                        # The bots run as other uids and need write permission to connect.
                        with contextlib.suppress(OSError):
                            os.chmod(self.ipc_for[ep], 0o666)
                elif self.sandbox is not None and any(p.kind != "remote" and p.network == "none" for p in self.cfg.participants):
                    raise StartError(
                        f"referee endpoint {ep}: sandboxed local bots have no network and reach a referee only through an "
                        "ipc:// socket on this host: give its ipc endpoint (okgin referee --also-bind ipc://PATH), let the "
                        "runner start its referees, or set tournament.sandbox = false (docs/tournaments.md, Sandbox)")
                # A remote referee may run --curve-keys: the runner is then its CURVE client
                # like any other (OKGIN_CURVE_SERVER_KEY / OKGIN_CURVE_CLIENT_KEY, .link).
                try:
                    curve = CurveClient.from_env()
                except ValueError as e:
                    raise StartError(f"referee endpoint {ep}: {e}") from None
                link = AdminLink(self.ctx, ep, f"organiser-{self.cfg.name}", self.admin_key, curve=curve)
                try:
                    await link.connect(timeout=15.0)
                except (RefereeGone, RequestFailed) as e:
                    await link.close()
                    raise RuntimeError(f"cannot use the referee at {ep}: {e}") from None
                except zmq.ZMQError as e:
                    await link.close()
                    raise StartError(f"referee endpoint {ep!r}: {e.strerror}") from None
                slot = Slot(f"r{i}", ep, link)
                link.on_gone(functools.partial(self._slot_gone, slot))
                self.slots.append(slot)
            return
        n = self.opts.referees or self.cfg.referees
        self.slots = list(await asyncio.gather(*(self._start_local(f"r{i}") for i in range(n))))

    async def _start_local(self, label: str, restarts: int = 0) -> Slot:
        ipc = None if self.ipc_dir is None else self.ipc_dir / f"{label}.sock"
        ref = await LocalReferee.start(self.workdir, label, self.local_admin_key, ipc=ipc)
        if ipc is not None:
            self.ipc_for[ref.endpoint] = ipc
        link = AdminLink(self.ctx, ref.endpoint, f"organiser-{self.cfg.name}", self.local_admin_key)
        try:
            await link.connect(timeout=30.0)
        except (RefereeGone, RequestFailed):
            await link.close()
            await ref.stop()
            raise
        slot = Slot(label, ref.endpoint, link, ref, restarts=restarts)
        link.on_gone(functools.partial(self._slot_gone, slot))
        slot.watcher = asyncio.ensure_future(self._watch_referee(slot))
        return slot

    async def _watch_referee(self, slot: Slot) -> None:
        assert slot.local is not None
        code = await slot.local.proc.wait()
        slot.link.mark_gone(f"its process exited with status {code}")

    def _slot_gone(self, slot: Slot, why: str) -> None:
        if slot.dead:
            return
        slot.dead = True
        self.store.log_event("referee-died", f"referee {slot.label} at {slot.endpoint}: {why}")
        if self.progress is not None:
            self.progress.note = f"referee {slot.label} died"

    async def pick_slot(self) -> Slot | None:
        async with self._slot_lock:
            alive = [s for s in self.slots if not s.dead]
            if not alive:
                # Restart local referees that died (remote ones cannot be restarted from here).
                for i, s in enumerate(self.slots):
                    if s.local is not None and s.restarts < MAX_RESTARTS:
                        await self._retire(s)
                        try:
                            new = await self._start_local(s.label, s.restarts + 1)
                        except (RuntimeError, RefereeGone, RequestFailed, OSError) as e:
                            self.store.log_event("referee-restart-failed", f"{s.label}: {e}")
                            s.restarts = MAX_RESTARTS
                            continue
                        self.slots[i] = new
                        self.store.log_event("referee-restarted", f"{new.label} at {new.endpoint} (restart {new.restarts})")
                        alive.append(new)
                        break
            if not alive:
                return None
            slot = min(alive, key=lambda s: (s.active, self.slots.index(s)))
            slot.active += 1
            return slot

    async def _retire(self, slot: Slot) -> None:
        slot.dead = True  # its end from here on is ours, not a failure
        await slot.link.close()
        if slot.local is not None:
            await slot.local.stop()

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

    # ---------------------------------------------------------------------- bots
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
                     attempt: int, q: asyncio.Queue[dict[str, Any]], door: str | None = None) -> _Bot:
        """``door``: the seat's door (an ``ipc://`` endpoint from ``table_created.doors``)."""
        log_path, log = self.open_log(sg, seat, p.name, attempt, table)
        if p.kind == "remote":
            assert self.gateway is not None
            log.write(f"# remote bot {p.name}, relayed by the gateway\n".encode())
            await self.gateway.attach(p.name, endpoint, token, table)
            return _Bot(seat, p.name, None, log_path, log, remote_table=table)
        cwd = str(self.cfg.resolve_path(p.cwd)) if p.cwd else self.cfg.config_dir
        # Its seat's door, never the referee's shared socket: through the door it can play
        # its seat and nothing else (no lobby, no other table, a connection cap of its own).
        sandboxed_ipc = self.sandbox is not None and p.network == "none" and endpoint in self.ipc_for
        if sandboxed_ipc and not door:
            raise RuntimeError(f"referee at {endpoint} gave no seat door for {p.name} (it needs protocol 1.5)")
        socket = Path(door[len("ipc://"):]) if sandboxed_ipc and door else None
        if socket is not None:
            endpoint = f"ipc://{SOCKET_PATH}"  # the seat's door, as the sandbox shows it
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
            argv, preexec = self.sandbox.wrap(argv, visible=mine, cwd=Path(cwd), env=env, socket=socket,
                                              limits=limits, network=p.network,
                                              others=[d for o in self.cfg.participants if o.name != p.name
                                                      for d in private_dirs(mine, self.visible_dirs(o))])
            # bwrap's options (the bot's environment with its token, the host paths it
            # binds and hides) go through a file descriptor, not its public command line;
            # bwrap itself gets a bare environment (the sandbox's /proc/1/environ).
            argv, args_fd = conceal(argv)
            pass_fds, env, inherit_env = (args_fd,), {}, False
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
        bot = _Bot(seat, p.name, proc, log_path, log, sandboxed=sandboxed, cgroup=group)
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
        self.ipc_dir = Path(tempfile.mkdtemp(prefix="okgin-ipc-"))  # 0700: only the runner and its referees
        store = self.store.path
        hidden = [store, *(store.with_name(store.name + x) for x in ("-wal", "-shm", "-journal")), self.workdir,
                  self.ipc_dir, *output_files(store, output_dir(self.cfg, store, self.opts.output))]
        if self.cfg.config_file:
            hidden.append(Path(self.cfg.config_file))
        self.sandbox = Sandbox(hidden)
        self.cgroups, self.limits_why = cgroups.probe(self.cgroup_fs)
        self.limits_by = self.cgroups.mechanism if self.cgroups is not None else cgroups.RLIMITS

    def record_limits(self) -> None:
        """Name what enforced the local bots' limits in the results file (the report
        prints it) and in the run's header. Per-process rlimits, once used, stay named."""
        if all(p.kind == "remote" for p in self.cfg.participants) or (self.cfg.sandbox and self.sandbox is None):
            return  # no local bot, or a Dask run (its workers start the sandboxes)
        if self.store.get_meta("limits_by") != cgroups.RLIMITS:
            self.store.set_meta("limits_by", self.limits_by)
        if self.opts.progress:
            why = (f": {', '.join(self.cgroups.controllers())} per sandbox" if self.cgroups is not None
                   else f" ({self.limits_why})" if self.limits_why else " (tournament.sandbox = false)")
            print(f"okgin tournament: sandbox limits enforced by {self.limits_by}{why}", flush=True)

    @staticmethod
    def log_tail(path: Path, lines: int = 3) -> str:
        try:
            text = path.read_text(errors="replace").strip().splitlines()
        except OSError:
            return ""
        text = [t for t in text if t and not t.startswith("# ")]
        return " / ".join(t.strip()[:200] for t in text[-lines:])

    # ---------------------------------------------------------------------- game
    async def play(self, sg: ScheduledGame, attempt: int, slot: Slot) -> GameResult | Outcome:
        cfg = self.cfg
        table = f"{cfg.name}-{sg.index}-{attempt}"
        q: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        slot.link.subscribe(table, q.put_nowait)
        self.active_queues.add(q)
        bots: list[_Bot] = []
        ended = False
        override: _Override | None = None
        takeover: asyncio.Task[str] | None = None
        holds: list[asyncio.Task[str]] = []
        rtt_from = len(slot.link.rtt_ms)
        started = time.time()
        try:
            absent = await self._wait_for_remotes(sg)
            if absent is None:
                return Outcome(False, self.state.stop_reason or "stopped")
            try:
                reply = await slot.link.request({
                    "type": "create_table", "table": table, "variant": cfg.rules.variant, "rules": cfg.rules.to_dict(),
                    "seed": sg.seed, "clock": cfg.time_control.to_wire(), "policies": cfg.policies.to_wire(),
                    "reserved": True, "players": list(sg.seats),
                    # Secret deals: game_end reveals nothing; the runner asks for the salt
                    # (5.25) and publishes the seed once every game of the deal has ended.
                    "reveal": "deferred",
                    **self.door_request(slot.endpoint),
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
            withheld = [n for n in sg.seats if n in self.withheld]
            if absent or withheld:
                # No-show, or a nonce committed and withheld (.entropy): the runner takes that
                # seat and resigns it, and holds the others (nobody needs to play a game that
                # is forfeited at its start).
                if absent:
                    seat = sg.seats.index(absent[0])
                    override = _Override(seat, "no_show", f"{' and '.join(absent)} did not connect to the gateway within "
                                         f"no_show_s = {cfg.no_show_s:g} s (a no-show forfeits its games)")
                else:
                    seat = sg.seats.index(withheld[0])
                    override = _Override(seat, "withheld", f"{' and '.join(withheld)} committed a nonce at the preflight and "
                                         "did not reveal it (withholding forfeits every game)")
                takeover = asyncio.ensure_future(resign_seat(self.ctx, slot.endpoint, tokens[seat], table))
                holds.extend(asyncio.ensure_future(resign_seat(self.ctx, slot.endpoint, tokens[s], table, resign=False))
                             for s in range(len(sg.seats)) if s != seat)
            else:
                for seat, name in enumerate(sg.seats):
                    bots.append(await self.launch(cfg.participant(name), seat, slot.endpoint, tokens[seat], table, sg,
                                                  attempt, q, door=doors[seat]))
            last_progress = time.monotonic()
            while rec.end is None:
                stall = cfg.stall_timeout if rec.started else max(cfg.stall_timeout, START_ALLOWANCE_S)
                wait = stall - (time.monotonic() - last_progress)
                try:
                    msg = await asyncio.wait_for(q.get(), max(0.01, wait))
                except TimeoutError:
                    if override is None:
                        seat = await self._stalled_seat(slot, table, rec, bots)
                        override = _Override(seat, "timeout", f"{sg.seats[seat]} made no move for {stall:g} s "
                                             "(the runner's stall_timeout; the table's clock did not end it)")
                        takeover = asyncio.ensure_future(resign_seat(self.ctx, slot.endpoint, tokens[seat], table))
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
                        holds.append(asyncio.ensure_future(
                            resign_seat(self.ctx, slot.endpoint, tokens[seat], table, resign=False)))
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
                    tail = self.log_tail(bots[seat].log_path)
                    group = bots[seat].cgroup
                    hit = (group.verdict() if group is not None else None) or limit_hit(
                        msg["code"], tail, self.cfg.limits.merged(cfg.participant(sg.seats[seat]).limits))
                    override = _Override(seat, "crash", f"{sg.seats[seat]}'s process exited with status {msg['code']} "
                                         f"before the game ended" + (f" ({hit})" if hit else "") + (f": {tail}" if tail else ""))
                    takeover = asyncio.ensure_future(resign_seat(self.ctx, slot.endpoint, tokens[seat], table))
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
            await self._end_bots(bots, natural=ended)
            if not slot.dead:
                with contextlib.suppress(RefereeGone, RequestFailed):
                    await slot.link.request({"type": "close_table", "table": table}, timeout=10.0)

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

    async def _stalled_seat(self, slot: Slot, table: str, rec: FeedRecorder, bots: list[_Bot]) -> int:
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

    async def _end_bots(self, bots: list[_Bot], natural: bool) -> None:
        async def end(b: _Bot) -> None:
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

        await asyncio.gather(*(end(b) for b in bots))

    async def _finish(self, sg: ScheduledGame, attempt: int, slot: Slot, table: str, rec: FeedRecorder,
                      override: _Override | None, started: float, rtt_from: int, bots: list[_Bot]) -> GameResult | Outcome:
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
        feed_record, mismatch = rec.record()
        record, clocks = feed_record, rec.clocks()
        if slot.local is not None:
            j = await self._journal(slot.local.journal_dir, table)
            if j is not None:
                jend, jclocks = j
                record, clocks = jend.get("record") or feed_record, jclocks
        if mismatch:
            self.store.log_event("record-mismatch", mismatch, game=sg.index)
            clocks["record_note"] = mismatch
        rtt = slot.link.rtt_ms[rtt_from:]
        if rtt:
            clocks["referee_rtt_ms"] = {
                "pings": len(rtt),
                "max": round(max(rtt), 2),
                "median": round(sorted(rtt)[len(rtt) // 2], 2),
            }
        keep_logs = self.opts.keep_logs or term != "normal"
        if not keep_logs:
            for b in bots:
                b.discard = True  # deleted by _end_bots, once the bot and its output have ended
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
            self.store.log_event("reveal-failed", f"{sg.key}: the referee did not reveal the salt: {e}", game=sg.index)
            return replace(g, seed_hash=rec.seed_hash or "")
        start_hash = rec.seed_hash or str(rv.get("seed_hash") or "")
        if str(rv.get("seed")) != sg.seed or rv.get("seed_hash") != start_hash:
            self.store.log_event("seed-mismatch", f"{sg.key}: the referee revealed seed {rv.get('seed')!r} with hash "
                                 f"{rv.get('seed_hash')!r}; the schedule's seed is {sg.seed!r}, game_start's hash "
                                 f"{rec.seed_hash!r}", game=sg.index)
        return replace(g, seed_hash=start_hash, salt=str(rv.get("salt") or ""))

    def _reveal_finished_deals(self, deals: set[int]) -> None:
        """Publish the seed of each of ``deals`` whose every game has been recorded."""
        for deal in sorted(deals):
            if all(i in self.done for i in self.schedule.deal_games(deal)):
                self.store.reveal_deal(deal, self.schedule.seed(deal))

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
                end, clocks = read_journal(path)
                if end is not None:
                    return end, clocks
            await asyncio.sleep(0.05)
        return None

    # -------------------------------------------------------------------- driver
    def _record(self, g: GameResult) -> None:
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
        for q in list(self.active_queues):
            q.put_nowait({"type": "_abort", "reason": reason})

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

    async def play_attempt(self, sg: ScheduledGame, attempt: int) -> tuple[GameResult | Outcome, str]:
        """One attempt at ``sg`` on the least busy referee, and that referee's label.

        A method of its own because a Dask run (competition.cluster) plays it on a worker:
        its driver overrides this to send the game there, and the worker calls this one.
        Raises :class:`NoReferee` when no referee is left.
        """
        slot = await self.pick_slot()
        if slot is None:
            raise NoReferee("no referee is left to play on")
        try:
            out = await self.play(sg, attempt, slot)
        finally:
            slot.active -= 1
        if isinstance(out, GameResult):
            slot.games += 1
        return out, slot.label

    def settle(self, sg: ScheduledGame, attempt: int, out: GameResult | Outcome, where: str) -> None:
        """Record a finished game, or queue its replay (at most :data:`MAX_ATTEMPTS`)."""
        if isinstance(out, GameResult):
            self._record(out)
            return
        if not out.replay:
            return
        self.store.log_event("replay", f"{sg.key} attempt {attempt} on {where}: {out.why}", game=sg.index)
        if attempt >= MAX_ATTEMPTS:
            self.unplayable.append((sg.index, out.why))
            return
        self.queue.appendleft((sg.index, attempt + 1))

    async def prepare(self) -> None:
        """Before the first game: the sandbox, the referees and the preflight (a Dask
        run, competition.cluster, does these on its workers instead)."""
        self.setup_sandbox()
        await self.start_referees()
        await preflight(self)

    async def run(self) -> int:
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
            self.record_limits()
            self.games_from = time.monotonic()
            self.progress.draw(force=True)
            workers = [asyncio.ensure_future(self.worker()) for _ in range(min(self.concurrency, len(self.queue)))]
            await asyncio.gather(*workers)
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                with contextlib.suppress(NotImplementedError, RuntimeError):
                    loop.remove_signal_handler(sig)
            await asyncio.gather(*(self._retire(s) for s in self.slots), return_exceptions=True)
            if self.gateway is not None:
                await self.gateway.close()
            if self.ipc_dir is not None:
                shutil.rmtree(self.ipc_dir, ignore_errors=True)
            if self.cgroups is not None:
                self.cgroups.close()
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


async def _done(task: asyncio.Task[str] | None) -> str:
    if task is None:
        return "no takeover"
    if not task.done():
        return "takeover still running"
    with contextlib.suppress(Exception):
        return task.result()
    return "takeover failed"


def output_dir(cfg: TournamentConfig, db: Path, output: str | None) -> Path:
    """Where the CSV, JSON and chart go: ``--output``, else the config's ``output_dir``,
    else beside the results file (wherever ``--db`` put it)."""
    if output:
        return Path(output).expanduser()
    return cfg.resolve_path(cfg.output_dir) if cfg.output_dir else db.parent


def output_files(db: Path, output: Path) -> list[Path]:
    """The files a run writes in ``output``: CSV, JSON, PNG chart (and the SVG a report
    may write), named after the results file (``cup.sqlite`` gives ``cup.csv``...), so
    that two events with two results files (``--db``) never overwrite each other's."""
    stem = db.stem
    return [output / f"{stem}.csv", output / f"{stem}.json", output / f"{stem}-ratings.png", output / f"{stem}-ratings.svg"]


def write_outputs(cfg: TournamentConfig, store: ResultsStore, output: Path) -> list[Path]:
    from .chart import ChartError, write_chart

    rep = report_from_store(store)
    output.mkdir(parents=True, exist_ok=True)
    csv_path, json_path, png_path = output_files(store.path, output)[:3]
    csv_path.write_text(rep.to_csv(), encoding="utf-8")
    json_path.write_text(rep.to_json(), encoding="utf-8")
    paths = [csv_path, json_path]
    try:
        paths.append(write_chart(rep, png_path))
    except ChartError as e:  # matplotlib is an optional extra: the run's results do not depend on it
        print(f"okgin tournament: no chart: {e}", flush=True)
    print(rep.to_text())
    return paths


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
            from competition.cluster.tournament import DaskRunner  # Dask is an optional extra

            runner: Runner = DaskRunner(cfg, opts, store)
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
