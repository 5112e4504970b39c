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
from collections.abc import Callable, Sequence
from pathlib import Path

from okgin import Game, RuleSet
from okgin.journal import read_journal
from okgin.launch import bot_argv, endpoint_from_line, referee_argv

from .match import BotSpec, GameSummary, MatchResult, bot_seed, check_bots, display_names, game_seed, plan, summarize
from .sdk import Client

STARTUP_TIMEOUT = 30.0


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
    bots: Sequence[BotSpec],
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

    ``bots`` must be specs (names or ``file.py:Class``): each runs in its own process.
    ``jobs`` lanes play in parallel, each with its own bot processes. ``journal_dir``
    keeps the journals (default: a temporary directory, removed afterwards).
    """
    rules = rules or RuleSet(variant="box" if len(bots) == 3 else "oklahoma")
    if not all(isinstance(b, str) for b in bots):
        raise ValueError("--via-referee runs every bot in its own process: give bot names or file.py:Class specs, not factories")
    check_bots(bots, rules)
    deals, order = plan(len(bots), games)
    names = display_names(bots)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="okgin-match-") as tmp:
        jdir = Path(journal_dir) if journal_dir is not None else Path(tmp) / "journals"
        jdir.mkdir(parents=True, exist_ok=True)
        ref = RefereeProcess(jdir, referee_args, Path(tmp) / "referee.log")
        procs: list[subprocess.Popen[bytes]] = []
        try:
            tables = _create_tables(ref.endpoint, ref.admin_key, rules, seed, order)
            lanes = max(1, min(jobs, len(order)))
            for lane in range(lanes):
                mine = [(k, d, s) for k, (d, s) in enumerate(order) if k % lanes == lane]
                for i, spec in enumerate(bots):
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
            while any(p.poll() is None for p in procs):
                if deadline is not None and time.monotonic() > deadline:
                    raise TimeoutError(f"the match through the referee did not finish within {timeout} s")
                time.sleep(0.05)
                if progress is not None:
                    now_done = sum(1 for _ in jdir.glob("*.jsonl"))
                    if now_done != done:
                        done = now_done
                        progress(max(0, done - lanes), len(order))
            failed = [(k, p.returncode) for k, p in enumerate(procs) if p.returncode != 0]
            if failed:
                logs = "\n".join(
                    (Path(tmp) / f).read_text(errors="replace")[-800:] for f in sorted(os.listdir(tmp)) if f.startswith("bot-")
                )
                raise RuntimeError(f"bot process(es) failed: {failed}\n{logs}")
        finally:
            for p in procs:
                if p.poll() is None:
                    p.terminate()
                    p.wait(10)
            ref.stop()
        results = _collect(jdir, order, tables, keep_records)
    if progress is not None:
        progress(len(order), len(order))
    res = MatchResult(names, rules, seed, deals, results, time.perf_counter() - t0, via="via referee")
    res.extra["referee_endpoint"] = ref.endpoint
    return res


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
