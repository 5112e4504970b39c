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

An account in an event plays through its active hosted bot (an Oklahoma Gin one: events are
Oklahoma Gin). Any other account plays **connected**: it is the tournament's ``remote``
participant, seated through the arena's front instead of a gateway
(:class:`arena.eventseats.EventSeats`): while the event runs, its seeks wait, and each of
its event games comes to it as a ``game_ready`` (unrated) when it is signed in and free; an
account away longer than ``show_up_ms`` forfeits its games (``no_show``), as in a
tournament. Its games have deals of their own (``remote_duplicate`` is false): a connected
bot never gets a duplicate deal. The event's referee then listens on the front's host, and
the event is played on this host (not on the Dask cluster: its referee must be reachable
by the accounts). An arena with CURVE keys cannot run events with connected accounts yet
(the event's referee would not encrypt): such an event fails, saying so.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import zmq.asyncio

from competition.tournament.config import ConfigError as TournamentConfigError
from competition.tournament.config import parse_config
from competition.tournament.executor import RunOptions
from competition.tournament.link import CurveClient
from competition.tournament.report import report_from_store
from competition.tournament.runner import run_tournament
from competition.tournament.store import ResultsStore
from competition.tournament.verify import verify
from referee.private import private_dir

from .config import ArenaConfig, ConfigError
from .eventseats import EventSeats
from .statedir import add_db_flags, open_store
from .store import ArenaEvent, Store, StoreError

if TYPE_CHECKING:
    from .desk import ArenaDesk

__all__ = ["event_config", "main", "run_event", "summarise"]


def connected_accounts(ev: ArenaEvent, store: Store) -> list[str]:
    """The accounts of ``ev`` that play connected: those with no active Oklahoma Gin hosted bot.
    StoreError naming an account that does not exist or is banned."""
    out = []
    for name in ev.accounts:
        acct = store.account(name)
        if acct is None:
            raise StoreError(f"no account named {name!r}")
        if acct.banned:
            raise StoreError(f"{name} is banned: {acct.banned}")
        if not [s for s in store.submissions("active", account=name) if s.variant == "oklahoma"]:
            out.append(name)
    return out


def event_config(ev: ArenaEvent, store: Store, cfg: ArenaConfig, where: Path) -> Any:
    """The tournament config of ``ev``: each account's active hosted bot, or a ``remote``
    participant for a connected account (seated through the front: arena.eventseats), the
    arena's rules and hosted clock. StoreError naming an account that cannot play."""
    parts: list[dict[str, Any]] = []
    connected = connected_accounts(ev, store)
    for name in ev.accounts:
        if name in connected:
            parts.append({"name": name, "remote": True})
            continue
        sub = next(s for s in store.submissions("active", account=name) if s.variant == "oklahoma")
        parts.append({"name": name, "command": list(sub.command), "cwd": sub.path, "dir": sub.path})
    clock = cfg.clocks[cfg.hosted_clock]
    t: dict[str, Any] = {"name": f"event-{ev.id}", "format": ev.format, "games_per_pairing": ev.games_per_pairing,
                         "concurrency": cfg.hosted_concurrency, "referees": 1, "database": str(where / "event.sqlite")}
    if connected:
        # Never bound: the arena seats connected accounts itself (RunOptions.gateway). A
        # connected account away this long forfeits the game, as a tournament's no-show.
        t["gateway"] = "tcp://127.0.0.1:1"
        t["no_show_s"] = max(1.0, cfg.show_up_ms / 1000)
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


def game_ready_maker(ev: ArenaEvent, store: Store, cfg: ArenaConfig, server_key: str | None = None) -> Any:
    """How a connected account's event game is announced: a ``game_ready`` (unrated, the
    hosted clock, the seat's token, the event referee's endpoint, and its CURVE public key
    ``server_key`` when the arena encrypts); built on the arena's loop."""
    clock = cfg.clocks[cfg.hosted_clock].to_wire()
    kinds = {a.lower(): (acct.name, acct.kind) for a in ev.accounts if (acct := store.account(a)) is not None}

    def ready(name: str, table: str, endpoint: str, token: str, seat: int, seats: tuple[str, ...]) -> dict[str, Any]:
        players = []
        for who in seats or (name,):
            acct_name, kind = kinds.get(who.lower(), (who, "bot"))
            players.append({"account": acct_name, "kind": kind, "rating": round(store.rating(acct_name, "oklahoma").rating)})
        return {"type": "game_ready", "game": table, "endpoint": endpoint, "server_key": server_key, "table": table,
                "token": token, "seat": seat, "variant": "oklahoma", "clock": clock, "rated": False, "players": players,
                "show_up_ms": cfg.show_up_ms}

    return ready


async def run_event(ev: ArenaEvent, store: Store, cfg: ArenaConfig, desk: ArenaDesk | None = None) -> ArenaEvent | None:
    """Run a due event to its end (the tournament in a thread: it has its own loop and
    processes) and store its standings and verify result; None if another front took it.
    ``desk``: the front's, which seats the event's connected accounts (without one, an event
    with a connected account fails)."""
    where = private_dir(Path(cfg.state) / "events" / str(ev.id))
    if not store.start_event(ev.id, str(where / "event.sqlite")):
        return None
    print(f"okgin arena: event #{ev.id} ({ev.name}) starts: {ev.format} of {', '.join(ev.accounts)}", file=sys.stderr,
          flush=True)
    try:
        tcfg = event_config(ev, store, cfg, where)
        connected = connected_accounts(ev, store)
        opts = RunOptions(progress=False, dask=cfg.dask, dask_tls=cfg.dask_tls, database=str(where / "event.sqlite"),
                          output=str(where))
        if connected:
            if desk is None:
                raise StoreError(f"{', '.join(connected)} would play connected, and this arena has no front to seat them")
            loop = asyncio.get_running_loop()
            curve = None
            if cfg.curve_keys:
                # The event's referee encrypts as the arena's shards do (the same key pair, any
                # client key): its connected accounts reach it over the network, told its
                # public key in game_ready; the runner is its CURVE client too.
                try:
                    curve = CurveClient.load(Path(cfg.curve_keys) / "server.key")
                except ValueError as e:
                    raise StoreError(f"the arena's CURVE keys: {e}") from None
                opts = replace(opts, referee_args=("--curve-keys", cfg.curve_keys, "--allow", "any"), referee_curve=curve)
            ready = game_ready_maker(ev, store, cfg, None if curve is None else curve.server_public.decode())
            run_dir = where / "event-run"  # the runner's (ResultsStore path's stem + "-run"): journals-*

            def gateway(tokens: dict[str, str]) -> EventSeats:
                assert desk is not None
                return EventSeats(zmq.asyncio.Context.instance(), tokens, desk, loop, ready, run_dir,
                                  max(1.0, cfg.show_up_ms / 1000))

            host = cfg.bind[len("tcp://"):].rsplit(":", 1)[0] if cfg.bind.startswith("tcp://") else "127.0.0.1"
            opts = replace(opts, dask=None, gateway=gateway, referee_bind=f"tcp://{host}:0")
            desk.reserved = frozenset(c.lower() for c in connected)
        code = await in_thread(lambda: run_tournament(tcfg, opts))
        if code not in (0, 1) or not (where / "event.sqlite").exists():
            raise RuntimeError(f"the tournament exited with status {code}")
        standings, checks = await asyncio.to_thread(summarise, where / "event.sqlite")
        for row in standings:  # how each account played: the web's events page shows it
            row["plays"] = "connected" if row["account"] in connected else "hosted bot"
        store.finish_event(ev.id, standings, checks)
    except asyncio.CancelledError:
        if desk is not None:
            desk.reserved = frozenset()
        store.finish_event(ev.id, [], [], "the arena stopped during the event (the games played so far are in its "
                           "results file)")
        raise
    except (StoreError, RuntimeError, OSError) as e:
        store.finish_event(ev.id, [], [], str(e) or type(e).__name__)
    finally:
        if desk is not None:
            desk.reserved = frozenset()
    done = store.event(ev.id)
    if done is not None:
        print(f"okgin arena: event #{ev.id} {done.status}" + (f": {done.error}" if done.error else
              f", verify {'ok' if done.verified else 'FAILED'}"), file=sys.stderr, flush=True)
    return done


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="okgin arena event", description=(
        "Events: a round robin or gauntlet of chosen accounts (through their hosted bots, or connected: seated by "
        "the front when signed in, a no-show forfeits), played by the running arena through the tournament machinery "
        "(secret committed deals, duplicate seatings for hosted bots only, verify)."))
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
