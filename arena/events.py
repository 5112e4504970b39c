"""The arena's events (issue 27 item 3): a scheduled round robin or gauntlet of chosen accounts.

An admin schedules one (``okgin arena event add``, or :meth:`arena.store.Store.add_event`);
the running arena starts it when its time comes (:meth:`arena.hosted.HostedLeague.tick`
calls :func:`run_event`). The event **is** a tournament: its config is built from the
accounts' active hosted bots (each a ``command`` participant named after its account, in
the tournament's sandbox), and :func:`competition.tournament.runner.run_tournament` plays
it with its secret, committed deals, duplicate seatings, results file and report, on this
host or on the arena's Dask cluster. Afterwards the event's standings
(:func:`competition.tournament.report.report_from_store`) and the result of ``okgin
tournament verify`` (:func:`competition.tournament.verify.verify`) are stored with it
(:meth:`arena.store.Store.finish_event`), where ``okgin arena event show`` and the web read
them. Event games are the event's own: they do not change arena ratings.

An account in an event plays through its active hosted bot. Connected accounts (bots on
their authors' machines) would be the tournament's ``remote`` participants, reached through
its gateway; the arena does not hand them a gateway seat yet, so an event naming an account
with no active hosted bot fails, saying which.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from competition.tournament.config import ConfigError as TournamentConfigError
from competition.tournament.config import parse_config
from competition.tournament.executor import RunOptions
from competition.tournament.report import report_from_store
from competition.tournament.runner import run_tournament
from competition.tournament.store import ResultsStore
from competition.tournament.verify import verify
from referee.private import private_dir

from .config import ArenaConfig, ConfigError
from .statedir import add_db_flags, open_store
from .store import ArenaEvent, Store, StoreError

__all__ = ["event_config", "main", "run_event", "summarise"]


def event_config(ev: ArenaEvent, store: Store, cfg: ArenaConfig, where: Path) -> Any:
    """The tournament config of ``ev``: each account's active hosted bot, the arena's rules
    and hosted clock. StoreError naming an account with no active hosted bot."""
    parts = []
    for name in ev.accounts:
        active = store.submissions("active", account=name)
        if not active:
            raise StoreError(f"{name} has no active hosted bot (an event's accounts play through their hosted bots: "
                             "okgin arena submit)")
        sub = active[0]
        parts.append({"name": name, "command": list(sub.command), "cwd": sub.path, "dir": sub.path})
    clock = cfg.clocks[cfg.hosted_clock]
    t: dict[str, Any] = {"name": f"event-{ev.id}", "format": ev.format, "games_per_pairing": ev.games_per_pairing,
                         "concurrency": cfg.hosted_concurrency, "referees": 1, "database": str(where / "event.sqlite")}
    if ev.champion:
        t["champion"] = ev.champion
    data = {"tournament": t, "participant": parts, "rules": {**cfg.rules, "variant": "oklahoma"},
            "clock": {"move_ms": clock.move_ms, "bank_ms": clock.bank_ms, "increment_ms": clock.increment_ms,
                      "grace_ms": clock.grace_ms}}
    try:
        return parse_config(data, where)
    except TournamentConfigError as e:
        raise StoreError(f"the event's tournament config: {e}") from None


def summarise(path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The standings and the verify checks of a finished event's results file."""
    with contextlib.closing(ResultsStore.open_existing(path)) as rs:
        rep = report_from_store(rs)
        checks, _ = verify(rs)
    standings = [{k: v for k, v in asdict(s).items() if k in (
        "rank", "games", "wins", "losses", "draws", "score", "elo", "err95", "forfeits", "points_for")} | {"account": s.name}
        for s in rep.standings]
    return standings, [{"name": c.name, "status": c.status, "summary": c.summary, "problems": list(c.problems)[:20]}
                       for c in checks]


async def in_thread(fn: Callable[[], Any]) -> Any:
    """``fn()`` in a daemon thread of its own, awaited: a tournament runs its own event loop
    and processes there. Daemon, unlike ``asyncio.to_thread``'s pool, so that an arena
    stopped during an event exits at once (the event's processes die with it) instead of
    waiting for the event to end; the event is then marked failed."""
    loop = asyncio.get_running_loop()
    fut: asyncio.Future[Any] = loop.create_future()

    def settle(ok: bool, value: Any) -> None:
        if not fut.done():
            (fut.set_result if ok else fut.set_exception)(value)

    def work() -> None:
        try:
            out: tuple[bool, Any] = (True, fn())
        except BaseException as e:  # handed to the awaiting task
            out = (False, e)
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody waits
            loop.call_soon_threadsafe(settle, *out)

    threading.Thread(target=work, daemon=True, name="okgin-arena-event").start()
    return await fut


async def run_event(ev: ArenaEvent, store: Store, cfg: ArenaConfig) -> ArenaEvent | None:
    """Run a due event to its end (the tournament in a thread: it has its own loop and
    processes) and store its standings and verify result; None if another front took it."""
    where = private_dir(Path(cfg.state) / "events" / str(ev.id))
    if not store.start_event(ev.id, str(where / "event.sqlite")):
        return None
    print(f"okgin arena: event #{ev.id} ({ev.name}) starts: {ev.format} of {', '.join(ev.accounts)}", file=sys.stderr,
          flush=True)
    try:
        tcfg = event_config(ev, store, cfg, where)
        opts = RunOptions(progress=False, dask=cfg.dask, dask_tls=cfg.dask_tls, database=str(where / "event.sqlite"),
                          output=str(where))
        code = await in_thread(lambda: run_tournament(tcfg, opts))
        if code not in (0, 1) or not (where / "event.sqlite").exists():
            raise RuntimeError(f"the tournament exited with status {code}")
        standings, checks = await asyncio.to_thread(summarise, where / "event.sqlite")
        store.finish_event(ev.id, standings, checks)
    except asyncio.CancelledError:
        store.finish_event(ev.id, [], [], "the arena stopped during the event (the games played so far are in its "
                           "results file)")
        raise
    except (StoreError, RuntimeError, OSError) as e:
        store.finish_event(ev.id, [], [], str(e) or type(e).__name__)
    done = store.event(ev.id)
    if done is not None:
        print(f"okgin arena: event #{ev.id} {done.status}" + (f": {done.error}" if done.error else
              f", verify {'ok' if done.verified else 'FAILED'}"), file=sys.stderr, flush=True)
    return done


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="okgin arena event", description=(
        "Events: a round robin or gauntlet of chosen accounts' hosted bots, played by the running arena through the "
        "tournament machinery (secret committed deals, duplicate seatings, verify)."))
    sub = p.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("add", help="schedule an event")
    a.add_argument("name")
    a.add_argument("--format", choices=("round_robin", "gauntlet"), default="round_robin")
    a.add_argument("--accounts", required=True, help="comma-separated account names")
    a.add_argument("--champion", help="a gauntlet's champion (one of the accounts)")
    a.add_argument("--games", type=int, default=2, help="games per pairing (even: both seatings of each deal)")
    a.add_argument("--in-minutes", type=float, default=0.0, help="start this many minutes from now (default: at once)")
    a.add_argument("--by", default="admin", help="who scheduled it (kept with the event)")
    add_db_flags(a)
    ls = sub.add_parser("list", help="the events, the latest first")
    add_db_flags(ls)
    sh = sub.add_parser("show", help="an event's standings and verify result")
    sh.add_argument("id", type=int)
    add_db_flags(sh)
    return p


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    try:
        with open_store(args, create=args.cmd == "add") as store:
            if args.cmd == "add":
                if args.games < 2 or args.games % 2:
                    raise StoreError("--games must be even and at least 2 (duplicate deals: both seatings)")
                start = int(time.time() * 1000 + args.in_minutes * 60_000)
                ev = store.add_event(args.name, args.format, [a.strip() for a in args.accounts.split(",") if a.strip()],
                                     start, args.by, args.champion, args.games)
                print(f"event #{ev.id} ({ev.name}) scheduled: {ev.format} of {', '.join(ev.accounts)}, "
                      f"{time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime(ev.start_ms / 1000))}")
            elif args.cmd == "list":
                for ev in store.events():
                    print(f"#{ev.id:<4} {ev.status:<9} {ev.format:<11} {ev.name}  ({', '.join(ev.accounts)})"
                          + (f"  verify {'ok' if ev.verified else 'FAILED'}" if ev.verify else "")
                          + (f"  {ev.error}" if ev.error else ""))
            else:
                got = store.event(args.id)
                if got is None:
                    raise StoreError(f"no event #{args.id}")
                print(f"event #{got.id} {got.name}: {got.format}, {got.status}" + (f": {got.error}" if got.error else ""))
                for row in got.standings:
                    print(f"  {row['rank']:>2}. {row['account']:<20} {row['games']:>3} games  {row['wins']}-{row['losses']}"
                          f"-{row['draws']}  score {row['score']:.2f}")
                for c in got.verify:
                    print(f"  verify {c['status']:<4} {c['name']}: {c['summary']}")
    except (StoreError, ConfigError) as e:
        print(f"okgin arena event: {e}", file=sys.stderr)
        return 2
    return 0
