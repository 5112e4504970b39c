"""Preflight: every local participant must start and say ``hello`` before the first game.

Why: a typo (``bot = "simpel"``), a missing binary or a bot that crashes at start would
otherwise forfeit every one of its games, and a 600-game run would "succeed" with a
table full of crashes. So before the first game each local participant is started once,
by the games' own launch path (:meth:`.bots.BotLauncher.launch`, so whatever confinement
a game applies applies here too), with the seat token of a reserved
*preflight table* on a referee of the run; it passes when the referee shows its seat
taken (``watch`` snapshot, ``players[0]`` not nil: the bot completed ``hello`` with the
token) within :data:`HELLO_TIMEOUT_S`. The table is then closed and the bot ended; no
game is played and nothing is recorded.

Causes, each named with the participant: ``unknown built-in bot`` (with the known
names, as ``okgin bot`` lists them), ``file not found``, ``not executable``, ``crashed``
(its exit status and the tail of its stderr) and ``no hello``. Remote participants are
not started by the runner (they connect to the gateway when they will) and are not
checked.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import secrets
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from okgin import env as environment

from . import entropy
from .bots import BotLauncher, LaunchedBot
from .config import Participant
from .link import RefereeGone, RequestFailed
from .referees import RefereePool, Slot
from .schedule import ScheduledGame

if TYPE_CHECKING:
    from .executor import EventLog, NonceRound
    from .store import ResultsStore

HELLO_TIMEOUT_S = 10.0
POLL_S = 0.1


class PreflightFailed(Exception):
    """One or more participants cannot play; the message names each and the cause."""

    def __init__(self, failures: list[tuple[str, str]]) -> None:
        self.failures = failures
        lines = [f"  {name}: {why}" for name, why in failures]
        super().__init__("preflight failed, no game was played:\n" + "\n".join(lines))


def program_problem(argv: list[str], cwd: str, env: dict[str, str]) -> str | None:
    """A command's program that cannot be run, said plainly (None if it looks runnable).

    Checked before starting it so that the cause is exact whatever wraps the launch."""
    if not argv:
        return "file not found: the command is empty"
    prog = argv[0]
    if "/" in prog:
        path = Path(prog) if Path(prog).is_absolute() else Path(cwd) / prog
        if not path.exists():
            return f"file not found: {path}"
        if path.is_dir() or not os.access(path, os.X_OK):
            return f"not executable: {path}" + (" is a directory" if path.is_dir() else " (chmod +x it?)")
        return None
    if shutil.which(prog, path=env.get("PATH", environment.get("PATH") or os.defpath)) is None:
        return f"file not found: {prog!r} is not on the PATH"
    return None


def _classify(log_path: Path, code: int | None, tail: str) -> str:
    """Why a started participant exited before its hello, from its exit and its output."""
    try:
        text = log_path.read_text(errors="replace")
    except OSError:
        text = ""
    m = re.search(r"unknown bot '([^']*)': use a built-in name \(([^)]*)\)", text)
    if m:
        return f"unknown built-in bot {m.group(1)!r} (known: {m.group(2)}; or package.module:Class, path/file.py:Class)"
    m = re.search(r"no such file (\S+)", text)
    if m:
        return f"file not found: {m.group(1)}"
    m = re.search(r"# could not start: (.*)", text)
    if m:
        why = m.group(1)
        if "Permission denied" in why or "Errno 13" in why:
            return f"not executable: {why}"
        if "No such file" in why or "Errno 2" in why:
            return f"file not found: {why}"
        return f"could not start: {why}"
    return f"crashed: exited with status {code} before its hello" + (f"; stderr: {tail}" if tail else " (no output)")


async def check(bots: BotLauncher, slot: Slot, p: Participant, timeout: float | None = None,
                hold: list[Held] | None = None) -> str | None:
    """Start ``p`` once at a reserved preflight table; None if it took its seat in time
    (``timeout``, default :data:`HELLO_TIMEOUT_S`, read at the call so tests may lower it).

    With ``hold``, a bot that passed is not ended: its table and process are appended to
    it, for the participants' nonces (.entropy), and the caller ends them (:func:`release`)."""
    timeout = HELLO_TIMEOUT_S if timeout is None else timeout
    cfg = bots.cfg
    table = f"{cfg.name}-preflight-{p.name}-{secrets.token_hex(3)}"
    sg = ScheduledGame(index=-1, pairing=("preflight", p.name), deal=0, seating=0, seats=(p.name,), seed="")
    if p.kind == "command":
        cwd = str(cfg.resolve_path(p.cwd)) if p.cwd else cfg.config_dir
        argv = bots.bot_argv(p, slot.endpoint, table, sg)
        problem = program_problem(argv, cwd, {**os.environ, **dict(p.env)})
        if problem:
            return problem
    try:
        reply = await slot.link.request({"type": "create_table", "table": table, "variant": cfg.rules.variant,
                                         "rules": cfg.rules.to_dict(), "reserved": True,
                                         **bots.door_request(slot.endpoint)}, timeout=15.0)
    except (RefereeGone, RequestFailed) as e:
        raise RuntimeError(f"preflight: the referee refused a preflight table: {e}") from None
    q: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    bot = None
    ok = False
    held = False
    try:
        token = next(iter(reply.get("seat_tokens") or [""]))
        bot = await bots.launch(p, 0, slot.endpoint, token, table, sg, 1, q,
                                  door=next(iter(reply.get("doors") or [None])))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while loop.time() < deadline:
            with contextlib.suppress(TimeoutError):
                msg = await asyncio.wait_for(q.get(), POLL_S)
                if msg.get("type") == "_exit":
                    # It may have said hello just before exiting: the seat decides.
                    if await _seated(slot, table):
                        ok = True
                        return None
                    bot.log.flush()
                    return _classify(bot.log_path, msg.get("code"), bots.log_tail(bot.log_path))
            if await _seated(slot, table):
                ok = True
                if hold is not None:
                    hold.append(Held(p.name, slot, table, bot))
                    held = True
                return None
        return f"no hello: it did not take its seat within {timeout:g} s" + (
            f"; its output: {tail}" if (tail := bots.log_tail(bot.log_path)) else "")
    finally:
        if not held:
            await _end(bots, slot, table, bot, ok)


@dataclass
class Held:
    """A participant that passed, kept seated at its preflight table for its nonce."""

    name: str
    slot: Slot
    table: str
    bot: LaunchedBot


async def _end(bots: BotLauncher, slot: Slot, table: str, bot: LaunchedBot | None, ok: bool) -> None:
    with contextlib.suppress(RefereeGone, RequestFailed):
        await slot.link.request({"type": "close_table", "table": table}, timeout=10.0)
    if bot is not None:
        bot.discard = ok  # its log is deleted once the bot and its output have ended
        await bots.end([bot], natural=False)


async def release(bots: BotLauncher, held: list[Held]) -> None:
    """Close the held preflight tables and end their bots."""
    await asyncio.gather(*(_end(bots, h.slot, h.table, h.bot, True) for h in held), return_exceptions=True)


async def _seated(slot: Slot, table: str) -> bool:
    try:
        snap = await slot.link.request({"type": "watch", "table": table}, timeout=5.0)
    except (RefereeGone, RequestFailed):
        return False
    players = snap.get("players") or []
    return bool(players) and players[0] is not None


async def preflight(bots: BotLauncher, pool: RefereePool, log: EventLog, concurrency: int,
                    nonces: NonceRound | None) -> None:
    """Check every local participant (``concurrency`` at a time) on a referee of ``pool``;
    raise :class:`PreflightFailed`. ``nonces``: the participants' nonce round, when the
    event collects nonces (.entropy): the bots that passed stay seated for it."""
    local = [p for p in bots.cfg.participants if p.kind != "remote"]
    if not local:
        if nonces is not None:
            await nonces([])  # remote participants only
        return
    slot = pool.first_alive()
    if slot is None:
        raise RuntimeError("preflight: no referee is available")
    gate = asyncio.Semaphore(max(1, concurrency))
    # Bots that passed stay seated until the participants' nonces are in (.entropy),
    # unless the event has them already (resumed), began before them or has a fixed secret.
    hold: list[Held] | None = [] if nonces is not None else None

    async def one(p: Participant) -> str | None:
        async with gate:
            return await check(bots, slot, p, hold=hold)

    try:
        results = await asyncio.gather(*(one(p) for p in local))
        failures = [(p.name, why) for p, why in zip(local, results, strict=True) if why]
        if failures:
            log.log_event("preflight", "; ".join(f"{n}: {w}" for n, w in failures))
            raise PreflightFailed(failures)
        if hold is not None and nonces is not None:
            seats = [await entropy.referee_seat(h.slot, h.name, h.table) for h in hold]
            await nonces(seats)
    finally:
        if hold:
            await release(bots, hold)


def all_crashed(store: ResultsStore) -> str | None:
    """A summary if some participant lost every one of its games to a crash, else None:
    such a run finished, but it measured nothing about that participant (exit 1)."""
    by: dict[str, list[tuple[str, str | None, str]]] = {}
    for g in store.games():
        for name in g.seats:
            by.setdefault(name, []).append((g.termination, g.culprit, g.reason))
    bad = []
    for name, games in by.items():
        if games and all(t == "crash" and c == name for t, c, _ in games):
            bad.append(f"{name} lost all {len(games)} of its games to crashes (last: {games[-1][2]})")
    return "; ".join(bad) if bad else None
