"""``okgin match --via-referee``: the same games as in-process, through a real referee.

A launcher (the brief's dependency rule: clients never import the referee, launchers
start it as a subprocess):

1. start ``okgin referee --bind tcp://127.0.0.1:0 --journal-dir TMP`` and read the
   endpoint it prints;
2. as an admin client, create one reserved table per game with the game seed of
   :func:`clients.match.game_seed` and the policy "an illegal action forfeits"
   (``illegal_limit`` 1, as the in-process match), and take its seat tokens;
3. start one ``okgin bot SPEC --plan FILE`` process per bot (per lane), whose plan lists
   its seat tokens in game order with the bot seeds of :func:`clients.match.bot_seed`;
   every process plays its games in the same order, so no process waits on a game
   another has not reached;
4. read each game's journal (its last line holds the engine's full record), rebuild the
   game with :meth:`okgin.Game.from_record` (which re-checks every result) and summarize
   it exactly as an in-process game.

Same seeds, same bots, same hooks in the same order (:mod:`clients.sdk.runner`): the
same actions and results, which ``tests/clients/test_match_referee.py`` checks.

A bot may also be a **command** in any language (:class:`CommandBot`, ``okgin eval
--command``): it keeps protocol.md §18's launch contract, so it is started once per game,
with that game's seat token in ``OKGIN_TOKEN`` and the endpoint in ``OKGIN_ENDPOINT`` (and
``{endpoint}``, ``{name}``, ``{table}`` replaced in its words; never the token, which a
command line would show to every local user), the next game's process when the last one
ended. Its games are the same deals and seatings; its own moves are its own, and
replay only if it is deterministic.

One honest difference: the sitter's advice in Gin in the Box travels beside the
captain's prompt, so a captain may act before the advice arrives and the referee then
refuses it as stale. Advice never moves the game, so actions and results agree; the
records' advice entries may not.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import tempfile
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from okgin import Game, RuleSet
from okgin.journal import read_journal
from okgin.launch import bot_argv, endpoint_from_line, mcp_argv, referee_argv

from .match import BotSpec, GameSummary, MatchResult, bot_seed, check_bots, display_names, game_seed, plan, summarize
from .sdk import Client

STARTUP_TIMEOUT = 30.0
#: placeholders a command's words may hold (protocol.md §18); {token} is not one of them here
COMMAND_FIELDS = ("endpoint", "name", "table")


@dataclass(frozen=True)
class CommandBot:
    """A bot that is a program of any language speaking the protocol (protocol.md §18):
    its command as words (no shell) and the name it plays under."""

    argv: tuple[str, ...]
    name: str = "command"
    #: a language-model agent: an MCP host that plays through ``okgin mcp`` (the MCP seat).
    #: It is given the seat's command in ``OKGIN_MCP_SERVER`` (JSON words) and the token in
    #: ``OKGIN_SEAT_TOKEN``, and starts the seat itself over stdio; the seat counts its
    #: moves, refusals and text (:class:`clients.mcp.server.Usage`)
    mcp: bool = False

    def __post_init__(self) -> None:
        if not self.argv:
            raise ValueError("a command bot needs a command")
        if any("{token}" in w for w in self.argv):
            raise ValueError("the seat token travels in OKGIN_TOKEN, never on a command line (other users can read it)")

    def words(self, endpoint: str, table: str) -> list[str]:
        values = {"endpoint": endpoint, "name": self.name, "table": table}
        out = []
        for w in self.argv:
            for k in COMMAND_FIELDS:
                w = w.replace("{" + k + "}", values[k])
            out.append(w)
        return out


class CommandLane:
    """One lane's games of a :class:`CommandBot`: one process per game, in order."""

    def __init__(self, bot: CommandBot, endpoint: str, games: list[tuple[str, str]], log: Path) -> None:
        self.bot, self.endpoint, self.log = bot, endpoint, log
        self.todo: deque[tuple[str, str]] = deque(games)  # (table, token)
        self.proc: subprocess.Popen[bytes] | None = None
        self.failures: list[tuple[str, int]] = []
        self.table = ""

    def step(self) -> bool:
        """Start the next game's process once the last one ended; False when all are done."""
        if self.proc is not None:
            code = self.proc.poll()
            if code is None:
                return True
            if code != 0:
                self.failures.append((self.table, code))
            self.proc = None
        if not self.todo:
            return False
        self.table, token = self.todo.popleft()
        env = {k: v for k, v in os.environ.items() if k != "OKGIN_ADMIN_KEY"}
        env.update(OKGIN_ENDPOINT=self.endpoint, OKGIN_TABLE=self.table, OKGIN_NAME=self.bot.name)
        if self.bot.mcp:
            stats = self.log.with_name(f"mcp-{self.table}.json")
            env.update(OKGIN_SEAT_TOKEN=token,
                       OKGIN_MCP_SERVER=json.dumps(mcp_argv(self.endpoint, name=self.bot.name, stats=stats)))
        else:
            env.update(OKGIN_TOKEN=token)
        with open(self.log, "ab") as err:
            self.proc = subprocess.Popen(
                self.bot.words(self.endpoint, self.table), env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=err,
            )
        return True

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(2)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


class RefereeProcess:
    """A referee subprocess on a loopback port chosen by the OS; stopped by its PID.

    It gets a random admin key (``admin_key``) through its environment, not its command
    line, which other local users can read: admin is closed on a referee without one."""

    def __init__(self, journal_dir: Path, extra_args: Sequence[str] = (), log_path: Path | None = None) -> None:
        self.log_path = log_path or journal_dir / "referee.log"
        self._log = open(self.log_path, "w", encoding="utf-8")  # kept for the process's lifetime
        self.admin_key = secrets.token_hex(16)
        cmd = referee_argv(journal_dir, *extra_args)
        env = {**os.environ, "OKGIN_ADMIN_KEY": self.admin_key}
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self._log, text=True, env=env)
        self.endpoint = self._read_endpoint()

    def _read_endpoint(self) -> str:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        endpoint = endpoint_from_line(line)
        if endpoint is None:
            self.stop()
            raise RuntimeError(f"the referee did not start: {line.strip() or self.log_path.read_text().strip()[-500:]}")
        return endpoint

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self._log.close()


def run_match_via_referee(
    bots: Sequence[BotSpec | CommandBot],
    games: int = 100,
    seed: int | str = 0,
    rules: RuleSet | None = None,
    jobs: int = 1,
    keep_records: bool = False,
    referee_args: Sequence[str] = (),
    progress: Callable[[int, int], None] | None = None,
    journal_dir: str | os.PathLike[str] | None = None,
    timeout: float | None = None,
) -> MatchResult:
    """Play the games of :func:`clients.match.run_match` through a referee subprocess.

    ``bots`` must be specs (names or ``file.py:Class``), each run in its own process, or
    :class:`CommandBot` programs, started once per game. ``jobs`` lanes play in parallel,
    each with its own bot processes. ``journal_dir`` keeps the journals (default: a
    temporary directory, removed afterwards).
    """
    rules = rules or RuleSet(variant="box" if len(bots) == 3 else "oklahoma")
    if not all(isinstance(b, (str, CommandBot)) for b in bots):
        raise ValueError("--via-referee runs every bot in its own process: give bot names or file.py:Class specs, not factories")
    check_bots([b for b in bots if isinstance(b, str)], rules, len(bots))
    deals, order = plan(len(bots), games)
    names = display_names([b.name if isinstance(b, CommandBot) else b for b in bots])
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="okgin-match-") as tmp:
        jdir = Path(journal_dir) if journal_dir is not None else Path(tmp) / "journals"
        jdir.mkdir(parents=True, exist_ok=True)
        ref = RefereeProcess(jdir, referee_args, Path(tmp) / "referee.log")
        procs: list[subprocess.Popen[bytes]] = []
        commands: list[CommandLane] = []
        try:
            tables = _create_tables(ref.endpoint, ref.admin_key, rules, seed, order)
            lanes = max(1, min(jobs, len(order)))
            for lane in range(lanes):
                mine = [(k, d, s) for k, (d, s) in enumerate(order) if k % lanes == lane]
                for i, spec in enumerate(bots):
                    if isinstance(spec, CommandBot):
                        games_of = [(tables[k][0], tables[k][1][s.index(i)]) for k, d, s in mine]
                        commands.append(CommandLane(spec, ref.endpoint, games_of, Path(tmp) / f"bot-{lane}-{i}.log"))
                        continue
                    entries = []
                    for k, d, s in mine:
                        entries.append({"token": tables[k][1][s.index(i)], "seed": bot_seed(seed, d, i)})
                    pf = Path(tmp) / f"plan-{lane}-{i}.json"
                    pf.write_text(json.dumps(entries))
                    procs.append(
                        subprocess.Popen(
                            bot_argv(str(spec), ref.endpoint, plan=pf, name=names[i], quiet=True, no_thread=True),
                            stdout=subprocess.DEVNULL,
                            stderr=open(Path(tmp) / f"bot-{lane}-{i}.log", "wb"),
                        )
                    )
            deadline = None if timeout is None else time.monotonic() + timeout
            done = 0
            while [c for c in commands if c.step()] or any(p.poll() is None for p in procs):
                if deadline is not None and time.monotonic() > deadline:
                    raise TimeoutError(f"the match through the referee did not finish within {timeout} s")
                time.sleep(0.05)
                if progress is not None:
                    now_done = sum(1 for _ in jdir.glob("*.jsonl"))
                    if now_done != done:
                        done = now_done
                        progress(max(0, done - lanes), len(order))
            failed: list[tuple[int | str, int | None]] = [(k, p.returncode) for k, p in enumerate(procs) if p.returncode != 0]
            failed += [(f"{c.bot.name} at {t}", code) for c in commands for t, code in c.failures]
            if failed:
                logs = "\n".join(
                    (Path(tmp) / f).read_text(errors="replace")[-800:] for f in sorted(os.listdir(tmp)) if f.startswith("bot-")
                )
                raise RuntimeError(f"bot process(es) failed: {failed}\n{logs}")
        finally:
            for c in commands:
                c.stop()
            for p in procs:
                if p.poll() is None:
                    p.terminate()
                    p.wait(10)
            ref.stop()
        results = _collect(jdir, order, tables, keep_records)
        usage = mcp_usage(Path(tmp)) if any(isinstance(b, CommandBot) and b.mcp for b in bots) else None
    if progress is not None:
        progress(len(order), len(order))
    res = MatchResult(names, rules, seed, deals, results, time.perf_counter() - t0, via="via referee")
    res.extra["referee_endpoint"] = ref.endpoint
    if usage is not None:
        res.extra["mcp"] = usage
    return res


def mcp_usage(directory: Path) -> dict[str, int]:
    """The MCP seat's counts (``okgin mcp --stats``) summed over every game of a match; a
    game whose seat wrote none (its agent never started it) counts in ``missing``."""
    total = {"games": 0, "missing": 0, "calls": 0, "moves": 0, "refused": 0, "chars": 0}
    for f in sorted(directory.glob("mcp-*.json")):
        try:
            data = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            total["missing"] += 1
            continue
        total["games"] += 1
        for k in ("calls", "moves", "refused", "chars"):
            total[k] += int(data.get(k, 0))
    return total


def _create_tables(
    endpoint: str, admin_key: str, rules: RuleSet, seed: int | str, order: list[tuple[int, tuple[int, ...]]]
) -> list[tuple[str, list[str]]]:
    """One reserved admin table per game: (table name, seat tokens)."""
    out = []
    with Client(endpoint, "okgin-match", "admin", admin_key=admin_key) as admin:
        admin.connect()
        for k, (d, _s) in enumerate(order):
            name = f"m{k}-d{d}"
            created = admin.create_table(
                table=name,
                variant=rules.variant,
                rules=rules,
                seed=game_seed(seed, d),
                reserved=True,
                policies={"illegal": "forfeit", "illegal_limit": 1, "timeout": "forfeit", "disconnect_grace_ms": 60000},
                clock={"move_ms": 0, "bank_ms": 0, "increment_ms": 0},
            )
            assert created.seat_tokens is not None
            out.append((created.table, list(created.seat_tokens)))
    return out


def _collect(
    jdir: Path, order: list[tuple[int, tuple[int, ...]]], tables: list[tuple[str, list[str]]], keep_records: bool
) -> list[GameSummary]:
    files: dict[str, Path] = {}
    for f in jdir.glob("*.jsonl"):
        table = f.name.split("-g1-")[0]
        files[table] = f
    out = []
    for k, (d, s) in enumerate(order):
        name = tables[k][0]
        path = files.get(name)
        if path is None:
            raise RuntimeError(f"no journal for table {name}")
        record = read_journal(path).record
        if record is None:
            raise RuntimeError(f"the game of table {name} did not end (journal {path})")
        out.append(summarize(Game.from_record(record, verify=True), d, s, keep_records))
    return out
