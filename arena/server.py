"""``okgin arena``: the front (a referee with the arena's desk), its shards, its store.

:class:`Arena` is embeddable (tests start one on port 0); :func:`main` is the command. It
prints ``okgin arena listening on ENDPOINT`` first (standard output's first line, as a
referee prints its own), then runs until Ctrl+C or SIGTERM.

Start: the store is opened (SQLite in the state directory by default), every game the
store still has in play (the arena was killed) is recorded from its shard's journal when
that game ended, else voided (:func:`arena.shards.settle_from_journal`), the shards are
started, then the front binds. A front on a non-loopback address requires CURVE
(``[curve] keys``: the key pair's directory, as ``okgin referee --gen-keys`` makes it) unless
``--insecure``, which is printed as a warning: API keys must never cross a network in clear.

Stop (Ctrl+C, SIGTERM, :meth:`Arena.stop`): games in progress are **voided** (no rating
change; each player gets ``game_over`` ``void``, termination ``arena_stopped``), the shards
are stopped, then the front says ``shutdown`` to every client. Why void rather than wait
for the games: a game may last many minutes, and an operator who stops the arena wants it
stopped; a void game costs nobody rating.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from okgin.launch import ARENA_PREFIX, endpoint_line
from referee.config import RefereeConfig
from referee.private import private_dir
from referee.server import Referee

from .auth import KeyChecker
from .config import DEFAULT_WEB, ArenaConfig, ConfigError, is_loopback, is_loopback_host, load_config, parse_web
from .desk import ArenaDesk
from .hosted import HostedLeague
from .keys import read_key_file
from .shards import ShardPool, settle_from_journal
from .statedir import DEFAULT_STATE
from .store import Store, StoreError, state_db_url

if TYPE_CHECKING:
    from .web.serve import WebFace

__all__ = ["Arena", "build_parser", "main"]


def now_ms() -> int:
    """Wall-clock milliseconds (stored with games; cooldowns and challenges compare them)."""
    return int(time.time() * 1000)


class Arena:
    """The arena on the running loop: ``await Arena(cfg).start()`` returns the endpoint."""

    def __init__(self, cfg: ArenaConfig) -> None:
        if not is_loopback(cfg.bind) and not cfg.curve_keys and not cfg.insecure:
            raise ConfigError(f"{cfg.bind} is not a loopback address: an arena there needs CURVE ([curve] keys = DIR) so "
                              "that API keys never cross the network in clear, or --insecure")
        if cfg.web is not None and not is_loopback_host(parse_web(cfg.web)[0]) and not cfg.insecure:
            raise ConfigError(f"--web {cfg.web} is not a loopback address: admin keys would cross the network in clear. "
                              "Serve the web on loopback behind a TLS proxy (docs/arena.md, The web), or --insecure")
        self.cfg = cfg
        join_key = None
        if cfg.join_key_file is not None:  # shards may join the running arena (protocol 1.7 shard_join)
            try:  # the account keys' reader: owner-only file, bounded (a readable join key lets a shard in)
                join_key = read_key_file(cfg.join_key_file)
            except OSError as e:
                raise ConfigError(f"join_key_file {cfg.join_key_file}: {e.strerror}") from None
            except ValueError as e:
                raise ConfigError(f"join_key_file: {e}") from None
            if len(join_key) < 16:
                raise ConfigError(f"join_key_file {cfg.join_key_file}: the join key must be at least 16 characters")
        private_dir(cfg.state)
        self.store = Store.open(cfg.db or state_db_url(cfg.state))
        self.checker = KeyChecker(self.store, now_ms)
        self.desk = ArenaDesk(cfg, self.store, self.checker, now_ms)
        self.pool = ShardPool(cfg, self.store, self.desk.send, self.desk.no_show, self.desk.ended, now_ms)
        self.desk.launch = self.pool.launch
        if join_key is not None:
            self.desk.join_key = join_key
            self.desk.join_shard = self.pool.join
            self.pool.joined_lost = self.desk.shard_lost
        rcfg = RefereeConfig(
            bind=cfg.bind, journal_dir=None, heartbeat_ms=cfg.heartbeat_ms, liveness=cfg.liveness,
            curve_keys=cfg.curve_keys, curve_allow="any" if cfg.curve_keys else None,
            max_connections_per_host=cfg.max_connections_per_host,
        )
        self.front = Referee(rcfg, self.desk)
        # Hosted bots (arena.hosted): played by the tournament's executors, recorded here.
        self.hosted = HostedLeague(cfg, self.store, now_ms)
        # Hosted bots seek connected accounts at the desk, and play those games at the shards.
        self.desk.hosted = self.hosted
        self.pool.hosted = self.hosted
        self.hosted.desk = self.desk  # events seat their connected accounts through the front
        self.settled = (0, 0)
        self.stopped = asyncio.Event()
        self.web: WebFace | None = None
        self.web_store: Store = self.store
        self.web_url: str | None = None

    @property
    def endpoint(self) -> str | None:
        return self.front.endpoint

    async def start(self) -> str:
        self.settled = settle_from_journal(self.store, self.pool.dir, now_ms())
        await self.pool.start()
        try:
            endpoint = await self.front.start()
        except BaseException:
            await self.pool.stop()
            raise
        self.desk.start()
        await self.hosted.start()
        if self.cfg.web:
            try:
                self.web_url = await self.start_web(self.cfg.web)
            except BaseException:
                await self.stop()
                raise
        return endpoint

    async def start_web(self, address: str) -> str:
        """The web face on ``address``, reading the database through a connection of its own
        (SQLite's WAL lets it read while the arena writes); its address."""
        try:
            from .web.serve import WebFace  # Starlette and uvicorn only when the web is served
        except ImportError as e:
            raise ConfigError(f"the web pages need okgin[arena-web] ({e.name} is missing), or run with --no-web") from None
        url = self.cfg.db or state_db_url(self.cfg.state)
        self.web_store = self.store if url.endswith(":memory:") else Store.open(url)
        self.web = WebFace(self.web_store, self.checker, address, self.cfg.name, poll_ms=self.cfg.web_poll_ms,
                           on_ban=self.desk.banned)
        return await self.web.start()

    async def stop(self, reason: str = "the arena is stopping") -> None:
        if self.stopped.is_set():
            return
        self.stopped.set()
        if self.web is not None:  # first: its event streams end, so nothing waits on them
            await self.web.stop()
            self.web = None
        if self.web_store is not self.store:
            self.web_store.close()
            self.web_store = self.store
        await self.hosted.stop()  # voids the hosted games in progress
        self.desk.stop()
        await self.pool.stop()  # voids the games in progress, tells their players
        self.hosted.shard_bots.close()
        await self.front.stop(reason)
        self.checker.close()
        self.store.close()

    async def serve_forever(self) -> None:
        await self.stopped.wait()


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="okgin arena", description=(
        "Run the arena: a standing place where accounts seek and challenge, and play rated games on referee shards "
        "(docs/arena.md). Also: okgin arena account ..., okgin arena ratings ..."))
    p.add_argument("--config", metavar="FILE", help="an arena.toml (docs/arena.md lists every setting)")
    p.add_argument("--state", metavar="DIR", help=f"state directory: database, shards' journals (default ./{DEFAULT_STATE})")
    p.add_argument("--db", metavar="URL", help="database URL instead of DIR/arena.db (sqlite:///PATH or postgresql://...)")
    p.add_argument("--shards", type=int, metavar="N", help="referee shard processes (default: one per core)")
    p.add_argument("--bind", metavar="ENDPOINT", help="the front's endpoint (default tcp://127.0.0.1:7118)")
    p.add_argument("--curve-keys", metavar="DIR", help="encrypt with the key pair DIR/server.key_secret (front and shards)")
    p.add_argument("--insecure", action="store_true", default=None,
                   help="allow a non-loopback endpoint without CURVE (API keys then cross the network in clear)")
    p.add_argument("--hosted-games-per-hour", type=int, metavar="N",
                   help="rated games between hosted bots per hour, at most (default 60; 0: none)")
    p.add_argument("--dask", metavar="ADDRESS", help="play hosted bots' games on the workers of this Dask scheduler "
                                                     "(as okgin tournament --dask; 'local' for an in-process cluster)")
    p.add_argument("--dask-tls", metavar="DIR", help="okgin cluster certs's directory, for a TLS Dask cluster")
    web = p.add_mutually_exclusive_group()
    web.add_argument("--web", metavar="HOST:PORT",
                     help="serve the web pages here (default 127.0.0.1:7119, loopback; port 0 picks a free one)")
    web.add_argument("--no-web", action="store_true", help="serve no web pages")
    p.add_argument("-v", "--verbose", action="store_true", help="log to stderr")
    return p


async def run(args: argparse.Namespace) -> int:
    try:
        cfg = load_config(args.config, state=args.state, db=args.db, shards=args.shards, bind=args.bind,
                          curve_keys=args.curve_keys, insecure=args.insecure,
                          hosted_games_per_hour=args.hosted_games_per_hour, dask=args.dask, dask_tls=args.dask_tls)
        if not args.no_web:
            cfg = replace(cfg, web=args.web or cfg.web or DEFAULT_WEB)
        arena = Arena(cfg)
    except (ConfigError, StoreError) as e:
        print(f"okgin arena: {e}", file=sys.stderr)
        return 2
    try:
        endpoint = await arena.start()
    except Exception as e:
        print(f"okgin arena: cannot start: {e}", file=sys.stderr)
        await arena.stop()
        return 1
    loop = asyncio.get_running_loop()
    stopping: list[asyncio.Task[None]] = []

    def on_signal(name: str) -> None:
        stopping.append(loop.create_task(arena.stop(f"the arena received {name}: games in progress are void")))

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, on_signal, sig.name)
    print(endpoint_line(endpoint, ARENA_PREFIX), flush=True)
    if arena.web_url:
        from .web.serve import web_line

        print(web_line(arena.web_url), flush=True)
    if not is_loopback(cfg.bind) and not cfg.curve_keys:
        print("okgin arena: WARNING: --insecure: API keys and games cross the network in clear", file=sys.stderr, flush=True)
    recorded, voided = arena.settled
    if recorded or voided:
        print(f"okgin arena: after a restart, {recorded} game(s) recorded from their journals, {voided} voided",
              file=sys.stderr, flush=True)
    print(f"okgin arena: {cfg.shards} shard(s), state {Path(cfg.state).resolve()}", file=sys.stderr, flush=True)
    await arena.serve_forever()
    for t in stopping:
        await t
    return 0


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    if args.verbose:
        logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(name)s %(message)s")
    return asyncio.run(run(args))
