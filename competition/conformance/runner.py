"""Runs the games of a conformance check: referee, spectator, proxy, bot processes.

The kit starts ``okgin referee`` on loopback as a subprocess (port 0, journals in the
kit's work directory), connects to it as an organiser (role admin, with a random admin
key so that no bot can be one), and for each game creates a table with reserved seats
and a fixed seed, watches it, and launches the bot under test and the opponents with
their seat tokens. The bot under test talks to the referee through the kit's
:class:`~.proxy.Proxy`, which records its conversation and fires the probes:

- **idle wait** (first game of each variant): the opponents start only after the bot
  has waited ``3 x heartbeat_ms`` at the table, so it must send heartbeats;
- **illegal move** (first game of each variant, from the bot's 3rd move): one of the
  bot's ``act`` messages is relayed with an action the rules refuse, so the referee
  answers ``illegal_action`` and re-prompts; the bot must carry on;
- **silent drop** (second game of each variant, or the first after the probe above,
  from the bot's 6th move): the bot's connection is silenced both ways; the bot must
  notice the silence and resume its session on a new connection with its token.

Opponents run as subprocesses (``okgin bot simple`` by default: the referee package
never imports a client) and connect through the proxy too, unrecorded, so that when the
bot under test sits out in Gin in the Box the captain's move can wait (at most a second)
for the bot's advice on it: a built-in captain answers at once, and advice that comes
after the move is refused as stale.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import zmq
import zmq.asyncio

from okgin import RuleSet
from okgin.launch import bot_argv, endpoint_from_line, referee_argv
from okgin.protocol import ProtocolError, decode, decode_from_referee, encode
from okgin.protocol.session import Due, Kind, RequestId, Session

from .arenadesk import ArenaDesk
from .proxy import Connection, Proxy
from .trace import C2R, Fault, GameTrace

PLACEHOLDERS = ("endpoint", "token", "table", "name", "game", "seat", "arena", "account", "key_file", "variant")
VARIANT_SEATS = {"oklahoma": 2, "box": 3}
ILLEGAL_AT_ACT = 3
SILENCE_AT_ACT = 6
ADVICE_WAIT_S = 1.0
# The launch contract (protocol.md §18), the same for the kit, okgin match --via-referee
# and the tournament runner: a bot has HELLO_WITHIN_S from its start to say hello with its
# token (the tournament preflight allows as much), and a bot still running after its
# game_end is sent SIGTERM, then SIGKILL after TERM_GRACE_S.
HELLO_WITHIN_S = 10.0
TERM_GRACE_S = 2.0


class KitError(RuntimeError):
    """The kit itself could not run (referee did not start, bad command, ...)."""


@dataclass(frozen=True)
class KitConfig:
    command: tuple[str, ...]
    variants: tuple[str, ...] = ("oklahoma", "box")
    games: int = 20
    seed: int = 1
    opponent: str = "simple"
    opponent_command: tuple[str, ...] | None = None
    rules: tuple[str, ...] = ()  # NAME=VALUE rule options (okgin rules), both variants
    name: str = "bot-under-test"
    heartbeat_ms: int = 1000
    liveness: int = 4
    move_ms: int = 10_000
    disconnect_grace_ms: int = 20_000
    jobs: int = 2
    game_timeout_s: float = 120.0
    exit_timeout_s: float = 10.0
    probes: bool = True
    work_dir: str | None = None
    referee_command: tuple[str, ...] | None = None
    verbose: bool = False
    # --arena: each game's bot is started with OKGIN_ARENA/OKGIN_ACCOUNT/OKGIN_KEY_FILE (the kit's
    # stand-in arena, .arenadesk) instead of OKGIN_ENDPOINT/OKGIN_TOKEN, and finds its table there
    arena: bool = False


@dataclass
class RunResult:
    config: KitConfig
    games: list[GameTrace]
    referee: str = ""
    endpoint: str = ""
    proxy_endpoint: str = ""
    seconds: float = 0.0
    work_dir: str = ""
    orphans: list[tuple[int, dict[str, Any] | None]] = field(default_factory=list)
    not_zmtp: list[str] = field(default_factory=list)
    arena_endpoint: str = ""  # --arena: the kit's stand-in arena
    arena_strangers: list[str] = field(default_factory=list)  # hellos there for accounts the kit did not hand out


def fill(argv: Sequence[str], values: dict[str, str]) -> list[str]:
    """Replace ``{endpoint}``-style placeholders (only the known ones) in every word."""
    pattern = re.compile(r"\{(" + "|".join(PLACEHOLDERS) + r")\}")
    return [pattern.sub(lambda m: values.get(m.group(1), m.group(0)), word) for word in argv]


def illegal_action(legal: Any) -> dict[str, Any]:
    """A well-formed action that is not among ``legal`` (so the rules refuse it)."""
    kinds = {a.get("kind") for a in legal if isinstance(a, dict)} if isinstance(legal, list) else set()
    for kind in ("take", "draw_discard", "draw_stock", "pass"):
        if kind not in kinds:
            return {"kind": kind}
    return {"kind": "discard", "card": "As"}  # never reached: no phase allows all four


class Admin:
    """The kit's organiser connection: creates and watches tables, collects game ends.

    The session rules are the protocol core's (:class:`okgin.protocol.session.Session`):
    hello, request ids, the heartbeat deadline, and what ``hello_first`` means here: the
    referee lost this session (its loop or ours stalled past the liveness limit), so the
    kit resumes it with the token and watches its tables again."""

    def __init__(self, ctx: zmq.asyncio.Context, endpoint: str, key: str, heartbeat_ms: int) -> None:
        self.ctx = ctx
        self.endpoint = endpoint
        self.key = key
        self.heartbeat_ms = heartbeat_ms  # the referee's, until its welcome says it
        self.session = Session("conformance-kit", "admin", admin_key=key)
        self.sock: zmq.asyncio.Socket | None = None
        self._replies: dict[RequestId, asyncio.Future[dict[str, Any]]] = {}
        self._ends: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._resuming = asyncio.Lock()
        self.referee = ""

    @property
    def token(self) -> str:
        return self.session.token or ""

    async def start(self) -> None:
        self.sock = self.ctx.socket(zmq.DEALER)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.connect(self.endpoint)
        self._tasks = [asyncio.create_task(self._reader()), asyncio.create_task(self._beat())]
        welcome = await self._ask(self.session.hello(time.monotonic()), 20.0)
        self.referee = str(welcome.get("referee", ""))

    async def stop(self) -> None:
        for t in self._tasks:
            t.cancel()
        for t in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await t
        if self.sock is not None:
            self.sock.close(0)

    async def _beat(self) -> None:
        """Heartbeats when due; a resume when the referee answered one ``hello_first``.
        Silence alone changes nothing: the kit's referee is its own, on loopback, and
        a stalled one answers ``hello_first`` once it runs again."""
        assert self.sock is not None
        while True:
            now = time.monotonic()
            due = self.session.due(now)
            if due is Due.RESUME:
                with contextlib.suppress(TimeoutError, KitError):
                    await self._resume(20.0)
                continue
            if due is Due.HEARTBEAT or due is Due.SILENT:
                await self.sock.send(encode(self.session.heartbeat(now)))
            wake = self.session.wakeup(now)
            await asyncio.sleep(self.heartbeat_ms / 1000 if wake is None or wake <= now else wake - now)

    async def _reader(self) -> None:
        assert self.sock is not None
        while True:
            frame = await self.sock.recv()
            try:
                msg = decode(frame, max_bytes=1 << 24, strict=False)
            except ProtocolError:
                continue
            got = self.session.receive(msg, time.monotonic())
            if got.kind is Kind.WELCOME:
                self.heartbeat_ms = int(self.session.heartbeat_s * 1000)
            fut = self._replies.pop(got.request, None) if got.request is not None else None
            if fut is not None:
                if not fut.done():
                    fut.set_result(msg)
            elif msg.get("type") == "game_end":
                fut2 = self._ends.get(str(msg.get("table")))
                if fut2 is not None and not fut2.done():
                    fut2.set_result(msg)

    async def request(self, msg: dict[str, Any], timeout: float = 20.0) -> dict[str, Any]:
        reply = await self._ask(self.session.request(msg, time.monotonic()), timeout)
        if reply.get("type") == "error" and reply.get("name") == "hello_first" and self.token:
            await self._resume(timeout)
            reply = await self._ask(self.session.request(msg, time.monotonic()), timeout)
        if reply.get("type") == "error":
            raise KitError(f"the referee refused the kit's {msg.get('type')}: {reply.get('name')}: {reply.get('message')}")
        return reply

    async def _resume(self, timeout: float) -> None:
        """Resume the session with its token and watch the unfinished tables again
        (once, however many requests learnt at the same time that it was lost)."""
        async with self._resuming:
            if self.session.lost is None:
                return  # resumed meanwhile
            reply = await self._ask(self.session.hello(time.monotonic()), timeout)
            if reply.get("type") == "error":
                # The referee forgot the session, not just the connection: an admin holds
                # no seat, so a session silent past the liveness limit (a loaded machine
                # stalls both loops) is dropped at once and its token answers bad_token.
                # The kit is the organiser and has the key: a new session does the same job.
                self.session.restart()
                reply = await self._ask(self.session.hello(time.monotonic()), timeout)
                if reply.get("type") != "welcome":
                    raise KitError(f"the referee refused the kit's admin session: {reply.get('name')}: {reply.get('message')}")
            for table in [t for t, f in self._ends.items() if not f.done()]:
                await self._ask(self.session.request({"type": "watch", "table": table}, time.monotonic()), timeout)

    async def _ask(self, out: dict[str, Any], timeout: float) -> dict[str, Any]:
        """Send a request the session has tagged with its id; await the reply."""
        rid: RequestId = out["id"]
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._replies[rid] = fut
        assert self.sock is not None
        try:
            await self.sock.send(encode(out))
            return await asyncio.wait_for(fut, timeout)
        finally:
            self._replies.pop(rid, None)
            self.session.forget(rid)

    async def watch(self, table: str) -> asyncio.Future[dict[str, Any]]:
        """Watch a table; the future resolves with its ``game_end``."""
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._ends[table] = fut
        await self.request({"type": "watch", "table": table})
        return fut


@dataclass
class _Probe:
    """A probe still to fire in some game of a variant."""

    kind: str
    at_act: int
    armed_from_game: int


class Kit:
    """One conformance run; also the proxy's frame handler."""

    def __init__(self, cfg: KitConfig) -> None:
        self.cfg = cfg
        self.by_token: dict[str, GameTrace] = {}
        self.by_conn: dict[int, GameTrace] = {}
        self.opponent_tokens: dict[str, GameTrace] = {}
        self.opponent_conns: dict[int, GameTrace] = {}
        # (table, seq) of an advise_prompt relayed to the bot under test, set once it advised.
        self.advice_due: dict[tuple[str, int], asyncio.Event] = {}
        self.conns: dict[int, Connection] = {}
        self.probes: dict[str, list[_Probe]] = {}
        self.result = RunResult(cfg, [])
        self.hello_seen: dict[str, asyncio.Event] = {}
        self._procs: list[Child] = []
        self.desk: ArenaDesk | None = None

    # -- frame handler (called by the proxy) ----------------------------------------
    def on_open(self, conn: Connection) -> None:
        self.conns[conn.id] = conn

    def on_close(self, conn: Connection) -> None:
        if conn.not_zmtp:
            self.result.not_zmtp.append(conn.not_zmtp)

    def on_frame(self, conn: Connection, direction: str, body: bytes, more: bool) -> list[bytes] | Awaitable[list[bytes]]:
        if conn.id in self.opponent_conns and direction != C2R:
            return [body]  # what opponents receive is not the kit's business
        t = time.monotonic()
        problem = "multipart message (a message is exactly one frame)" if more else None
        try:
            # what the bot sends is held to the referee's limits; what it receives is not
            msg: dict[str, Any] | None = decode(body) if direction == C2R else decode_from_referee(body)
        except ProtocolError as e:
            msg, problem = None, f"{e.name}: {e}"
        if conn.id in self.opponent_conns:
            return self._opponent_frame(self.opponent_conns[conn.id], direction, msg, body)
        gt = self.by_conn.get(conn.id)
        if gt is None and direction == C2R:
            token = msg.get("token") if msg and msg.get("type") == "hello" else None
            if isinstance(token, str) and token in self.opponent_tokens:
                self.opponent_conns[conn.id] = self.opponent_tokens[token]
                return [body]
            gt = self.by_token.get(token) if isinstance(token, str) else None
            if gt is None:
                self.result.orphans.append((conn.id, msg))
                return [body]
            self.by_conn[conn.id] = gt
            gt.connections.append(conn.id)
            if gt.hello_after is None:
                # --arena: the launch contract's "hello within" counts from game_ready
                since = gt.arena.ready_at if gt.arena is not None and gt.arena.ready_at is not None else gt.started
                gt.hello_after = time.monotonic() - since
            ev = self.hello_seen.get(gt.token)
            if ev is not None:
                ev.set()
            # A new connection resuming a session the kit silenced: close the old one.
            for other in gt.connections[:-1]:
                old = self.conns.get(other)
                if old is not None and old.silenced and not old.closed:
                    old.close()
        if gt is None:
            return [body]
        rec = gt.add(
            conn.id, direction, t, msg, problem=problem, relayed=not conn.silenced, raw=body if msg is None or more else b""
        )
        if conn.silenced or msg is None:
            return [body]
        kind = msg.get("type")
        if direction != C2R:
            if kind == "prompt":
                gt.last_prompt = msg
            elif kind == "advise_prompt" and isinstance(msg.get("seq"), int):
                self.advice_due.setdefault((gt.table, msg["seq"]), asyncio.Event())
            return [body]
        if kind == "advise" and isinstance(msg.get("seq"), int):
            due = self.advice_due.get((gt.table, msg["seq"]))
            if due is not None:
                asyncio.get_running_loop().call_soon(due.set)  # after this frame is relayed
        if kind != "act":
            return [body]
        gt.acts += 1
        probe = self._due_probe(gt)
        if probe is None:
            return [body]
        self.probes[gt.variant].remove(probe)
        if probe.kind == "illegal":
            legal = gt.last_prompt.get("legal") if gt.last_prompt else None
            replaced = {**msg, "action": illegal_action(legal)}
            rec.replaced_by = replaced
            gt.faults.append(
                Fault("illegal", rec.index, t, gt.acts, f"relayed {replaced['action']} instead of the bot's {msg.get('action')}")
            )
            return [encode(replaced)]
        # Silence the connection right after this act has been relayed.
        gt.faults.append(Fault("silence", rec.index, t, gt.acts, "connection silenced both ways after this act"))
        asyncio.get_running_loop().call_soon(_silence, conn)
        return [body]

    def _opponent_frame(
        self, gt: GameTrace, direction: str, msg: dict[str, Any] | None, body: bytes
    ) -> list[bytes] | Awaitable[list[bytes]]:
        """An opponent's frame: relayed as it is, except that a captain's move waits (up to
        ADVICE_WAIT_S) for the advice of the sitter under test on the same prompt, so that
        the advice can arrive in time (a real captain thinks; a built-in bot does not)."""
        if direction != C2R or msg is None or msg.get("type") != "act" or not isinstance(msg.get("seq"), int):
            return [body]
        key = (gt.table, msg["seq"])
        due = self.advice_due.get(key)
        if due is None or due.is_set():
            self.advice_due.pop(key, None)
            return [body]

        async def hold() -> list[bytes]:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(due.wait(), ADVICE_WAIT_S)
            self.advice_due.pop(key, None)
            return [body]

        return hold()

    def _due_probe(self, gt: GameTrace) -> _Probe | None:
        for p in self.probes.get(gt.variant, []):
            # Probes fire at least three moves apart, so each one's recovery is seen alone.
            apart = not gt.faults or gt.acts >= gt.faults[-1].act + 3
            if gt.index >= p.armed_from_game and gt.acts >= p.at_act and apart:
                return p
        return None

    # -- running ------------------------------------------------------------------
    async def run(self) -> RunResult:
        cfg = self.cfg
        start = time.monotonic()
        work = Path(cfg.work_dir) if cfg.work_dir else Path(tempfile.mkdtemp(prefix="okgin-conformance-"))
        work.mkdir(parents=True, exist_ok=True)
        self.result.work_dir = str(work)
        for v in cfg.variants:
            self.probes[v] = []
            if cfg.probes:
                self.probes[v] = [_Probe("illegal", ILLEGAL_AT_ACT, 0), _Probe("silence", SILENCE_AT_ACT, min(1, cfg.games - 1))]
        admin_key = secrets.token_hex(16)
        referee = await self._start_referee(work, admin_key)
        ctx = zmq.asyncio.Context()
        admin = Admin(ctx, self.result.endpoint, admin_key, cfg.heartbeat_ms)
        proxy: Proxy | None = None
        try:
            await admin.start()
            self.result.referee = admin.referee
            host, port = self.result.endpoint.removeprefix("tcp://").rsplit(":", 1)
            proxy = Proxy(host, int(port), self)
            self.result.proxy_endpoint = await proxy.start()
            if cfg.arena:
                self.desk = ArenaDesk(ctx, cfg.heartbeat_ms, cfg.liveness)
                self.result.arena_endpoint = await self.desk.start()
            sem = asyncio.Semaphore(max(1, cfg.jobs))
            plan = [(v, i) for i in range(cfg.games) for v in cfg.variants]

            async def one(variant: str, index: int) -> GameTrace:
                async with sem:
                    return await self._game(admin, work, variant, index)

            self.result.games = list(await asyncio.gather(*(one(v, i) for v, i in plan)))
        finally:
            if self.desk is not None:
                self.result.arena_strangers = list(self.desk.strangers)
                await self.desk.stop()
            if proxy is not None:
                await proxy.stop()
            await admin.stop()
            ctx.term()
            await referee.stop(5.0)
            for p in self._procs:
                await p.stop(2.0)
        self.result.seconds = time.monotonic() - start
        return self.result

    async def _start_referee(self, work: Path, admin_key: str) -> Child:
        cfg = self.cfg
        argv = referee_argv(work / "journals", "--heartbeat-ms", str(cfg.heartbeat_ms), "--liveness", str(cfg.liveness),
                            command=cfg.referee_command)
        # The admin key goes in the referee's environment, not its command line, which
        # every local user can read in /proc/PID/cmdline.
        env = {**os.environ, "OKGIN_ADMIN_KEY": admin_key}
        with open(work / "referee.stderr", "wb") as err:
            proc = Child(subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL, env=env))
        assert proc.popen.stdout is not None
        stdout = proc.popen.stdout
        try:
            line = await asyncio.wait_for(asyncio.to_thread(stdout.readline), 30)
        except TimeoutError:
            line = b""
        endpoint = endpoint_from_line(line)
        if endpoint is None:
            await proc.stop(2.0)
            raise KitError(f"the referee did not print its endpoint (first line: {line[:200]!r}); see {work / 'referee.stderr'}")
        self.result.endpoint = endpoint
        # Keep reading its stdout so that it never blocks on a full pipe.
        threading.Thread(target=_drain, args=(stdout,), daemon=True).start()
        return proc

    def _launch(self, argv: list[str], env: dict[str, str], log: Path) -> Child:
        try:
            with open(log, "wb") as out:
                proc = Child(subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=env))
        except OSError as e:
            raise KitError(f"cannot start {argv[0]!r}: {e}") from None
        self._procs.append(proc)
        return proc

    async def _game(self, admin: Admin, work: Path, variant: str, index: int) -> GameTrace:
        cfg = self.cfg
        n = VARIANT_SEATS[variant]
        seat = index % n
        table = f"conf-{variant}-{index + 1}"
        seed = cfg.seed * 100_000 + (0 if variant == "oklahoma" else 50_000) + index
        names = [cfg.name if s == seat else f"{cfg.opponent}-{s}" for s in range(n)]
        policies = {
            "timeout": "forfeit",
            "illegal": "reprompt",
            "illegal_limit": 3,
            "disconnect_grace_ms": cfg.disconnect_grace_ms,
        }
        reply = await admin.request({
            "type": "create_table", "table": table, "variant": variant, "seed": seed, "reserved": True, "players": names,
            "clock": {"move_ms": cfg.move_ms, "grace_ms": 1000}, "policies": policies,
            "rules": RuleSet(variant=variant).with_assignments(list(cfg.rules)).to_dict(),
        })
        tokens = list(reply.get("seat_tokens") or [])
        if len(tokens) != n:
            raise KitError(f"create_table gave {len(tokens)} seat tokens for {n} seats")
        gt = GameTrace(variant, index, table, seat, tokens[seat], seed)
        self.by_token[gt.token] = gt
        for s, token in enumerate(tokens):
            if s != seat:
                self.opponent_tokens[token] = gt
        self.hello_seen[gt.token] = asyncio.Event()
        ended = await admin.watch(table)
        gdir = work / table
        gdir.mkdir(exist_ok=True)

        def env_for(token: str, endpoint: str, name: str, s: int) -> dict[str, str]:
            return {
                **os.environ,
                "OKGIN_ENDPOINT": endpoint,
                "OKGIN_TOKEN": token,
                "OKGIN_TABLE": table,
                "OKGIN_NAME": name,
                "OKGIN_SEAT": str(s),
            }

        values = {
            "endpoint": self.result.proxy_endpoint,
            "token": gt.token,
            "table": table,
            "name": cfg.name,
            "game": str(index + 1),
            "seat": str(seat),
        }
        values["variant"] = variant
        env = env_for(gt.token, self.result.proxy_endpoint, cfg.name, seat)
        if self.desk is not None:
            # The bot learns its table from the stand-in arena's game_ready, not from the kit.
            account, key_file = self._arena_visit(gt, gdir, names, len(tokens), index)
            values.update(endpoint="", token="", arena=self.desk.endpoint, account=account, key_file=str(key_file))
            env = {k: v for k, v in env.items() if k not in ("OKGIN_ENDPOINT", "OKGIN_TOKEN", "OKGIN_TABLE", "OKGIN_SEAT")}
            env.update(OKGIN_ARENA=self.desk.endpoint, OKGIN_ACCOUNT=account, OKGIN_KEY_FILE=str(key_file))
        gt.started = time.monotonic()
        bot = self._launch(fill(cfg.command, values), env, gdir / "bot.log")
        opponents: list[Child] = []
        try:
            if index == 0 and cfg.probes:
                # The idle wait: the bot sits alone at the table for three heartbeats.
                if await _first(self.hello_seen[gt.token].wait(), bot, 60):
                    t0 = time.monotonic()
                    await asyncio.sleep(3 * cfg.heartbeat_ms / 1000)
                    gt.idle_window = (t0, time.monotonic())
            for s in range(n):
                if s == seat:
                    continue
                ep = self.result.proxy_endpoint
                ovalues = {
                    "endpoint": ep,
                    "token": tokens[s],
                    "table": table,
                    "name": names[s],
                    "game": str(index + 1),
                    "seat": str(s),
                }
                argv = fill(self._opponent_argv(), ovalues)
                opponents.append(self._launch(argv, env_for(tokens[s], ep, names[s], s), gdir / f"opponent-{s}.log"))
            if await _first(asyncio.shield(ended), bot, cfg.game_timeout_s):
                gt.game_end = ended.result()
                if gt.arena is not None and self.desk is not None:
                    await self.desk.game_over(gt.arena, gt.game_end)  # as an arena does, after the table's game_end
            elif bot.returncode is not None:
                # The bot is gone: give the game's end a moment to arrive (it may have
                # exited right after it), else report the early exit without waiting for
                # the referee's disconnect grace.
                if await _first(asyncio.shield(ended), None, 3.0):
                    gt.game_end = ended.result()
                else:
                    gt.problem = f"the bot's process exited (status {bot.returncode}) before the game ended"
            else:
                gt.problem = f"the game did not end within {cfg.game_timeout_s:.0f} s"
            gt.ended = time.monotonic()
            try:
                gt.exit_code = await asyncio.wait_for(bot.wait(), cfg.exit_timeout_s)
                gt.exited_by_itself = True
                gt.exit_after = time.monotonic() - gt.ended
            except TimeoutError:
                # It stayed (protocol.md §18 allows a bot to stay in the lobby): end it as
                # every launcher does, SIGTERM then SIGKILL; exiting on SIGTERM is clean.
                gt.exit_code = await bot.stop(TERM_GRACE_S)
                gt.stopped_by_term = not bot.killed
        finally:
            for p in [bot, *opponents]:
                await p.stop(5.0)
            with contextlib.suppress(KitError, TimeoutError):
                await admin.request({"type": "close_table", "table": table})
        gt.stderr_tail = _tail(gdir / "bot.log")
        if cfg.verbose:
            end = gt.game_end or {}
            print(
                f"  {gt.label}: {end.get('termination', gt.problem)}, {len(gt.records)} messages, exit {gt.exit_code}",
                file=sys.stderr,
            )
        return gt

    def _arena_visit(self, gt: GameTrace, gdir: Path, names: list[str], seats: int, index: int) -> tuple[str, Path]:
        """--arena: this game's account, its key in a 0600 file, and the stand-in arena
        told to expect them (and what game_ready to send)."""
        assert self.desk is not None
        cfg = self.cfg
        account = f"conf-{gt.variant[0]}{index + 1}-{secrets.token_hex(3)}"
        key = "okga_" + secrets.token_urlsafe(32)
        key_file = gdir / "arena.key"
        fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(key + "\n")
        game = {
            "game": f"conf-{gt.table}", "endpoint": self.result.proxy_endpoint, "server_key": None, "table": gt.table,
            "token": gt.token, "seat": gt.seat, "variant": gt.variant, "clock": {"move_ms": cfg.move_ms, "grace_ms": 1000},
            "rated": True, "show_up_ms": int(HELLO_WITHIN_S * 1000),
            "players": [{"account": account if s == gt.seat else names[s], "kind": "bot", "rating": 1500}
                        for s in range(seats)],
        }
        wait = 3 * cfg.heartbeat_ms / 1000 if (index == 0 and cfg.probes) else 0.0
        gt.arena = self.desk.expect(account, key, gt.variant, game, wait)
        return account, key_file

    def _opponent_argv(self) -> list[str]:
        if self.cfg.opponent_command:
            return list(self.cfg.opponent_command)
        return bot_argv(self.cfg.opponent, "{endpoint}", name="{name}")  # the token: $OKGIN_TOKEN, never argv


async def _first(awaitable: Awaitable[Any], bot: Child | None, timeout: float) -> bool:
    """Wait for ``awaitable`` at most ``timeout`` seconds, and no longer than ``bot``
    lives; True when the awaitable finished first."""
    task = asyncio.ensure_future(awaitable)
    waits: set[asyncio.Future[Any]] = {task}
    if bot is not None:
        waits.add(asyncio.ensure_future(bot.wait()))
    done, pending = await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    for p in pending:
        p.cancel()
    return task in done


def _silence(conn: Connection) -> None:
    conn.silenced = True


def _drain(stream: Any) -> None:
    with contextlib.suppress(Exception):
        while stream.read(65536):
            pass


class Child:
    """A process the kit started. Waited for by polling its own PID: no asyncio child
    watcher, whose waitpid() can race with the subprocess module's and then report a
    made-up exit status 255, which here would be blamed on the bot."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self.popen = popen
        self.killed = False  # stop() had to send SIGKILL

    @property
    def returncode(self) -> int | None:
        return self.popen.poll()

    async def wait(self) -> int:
        while (code := self.popen.poll()) is None:
            await asyncio.sleep(0.02)
        return code

    async def stop(self, grace: float) -> int:
        """End it (only this PID): SIGTERM, then SIGKILL after ``grace`` seconds."""
        if self.popen.poll() is not None:
            return self.popen.returncode
        with contextlib.suppress(ProcessLookupError):
            self.popen.send_signal(signal.SIGTERM)
        try:
            return await asyncio.wait_for(self.wait(), grace)
        except TimeoutError:
            self.killed = True
            with contextlib.suppress(ProcessLookupError):
                self.popen.kill()
            return await self.wait()


def _tail(path: Path, lines: int = 12) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def remove_work_dir(path: str) -> None:
    shutil.rmtree(path, ignore_errors=True)
