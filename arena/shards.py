"""The arena's referee shards, and one arena game from its table to its rating change.

A **shard** is an ``okgin referee`` process the arena starts (one per core by default), on
its own state directory (``STATE/shards/journals-sN``: journals, 0700), reached as an admin
over the protocol (:class:`competition.tournament.link.AdminLink`) with a random admin key
that lives only in the two processes' memory and the shard's environment. It is started by
:class:`competition.tournament.procs.LocalReferee` (the tournament runner's launcher: the
same command line from ``okgin.launch``, killed with the arena even by ``kill -9``,
children under umask 077).

**A game** (:meth:`ShardPool.play`), on the least busy live shard:

1. ``create_table``: reserved seats named after the accounts, the preset's clock, the
   arena's disconnect grace (a seat gone for longer forfeits: an abandoned game is a loss),
   ``reveal: "game_end"`` (the seed is revealed to the players at the end), a fresh random
   seed of the shard's own (nobody can choose or repeat a deal);
2. the game is written to the store as in play (:meth:`arena.store.Store.new_game`) before
   anyone is told of it, so a crash after this point leaves a row a restart settles;
3. the pool watches the table's public feed and sends each player ``game_ready`` with its
   seat token (through the front);
4. no ``game_start`` within ``show_up_ms``: the seats nobody took (``TableInfo.seated``,
   protocol 1.6) are the no-shows; the table is closed, the game void, the no-shows cool
   down;
5. at ``game_end``: the record is read from the shard's journal (the reference; its path is
   stored with the game), the result and the ratings are written in one transaction
   (:meth:`arena.store.Store.finish_game`, in a worker thread: it fsyncs), and each player
   gets ``game_over`` with its rating change; the table is closed.

**A shard that dies** (its process exits, it goes silent, it shuts down): its games whose
journal has an ``end`` line are recorded from it; the others are **void** (no rating change,
``game_over`` with termination ``shard_lost``), and a new shard takes its slot. Why void
rather than recover with ``--recover``: a restarted shard gets a new port, and its players
would have to be told where their game went; a void game costs a few minutes of play and
nobody's rating. The same journal reading settles, at the arena's restart, every game the
store still has in play (:func:`settle_from_journal`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import zmq
import zmq.asyncio

from competition.tournament.link import AdminLink, CurveClient, RefereeGone, RequestFailed
from competition.tournament.procs import LocalReferee
from competition.tournament.records import FeedRecorder, find_journal, journal_outcome
from okgin.protocol.settings import Clock
from okgin.rules import RuleSet
from referee.private import private_dir

from .config import ArenaConfig, RemoteShard, is_loopback
from .shardbots import SeatedBots
from .store import GameResult, NewGame, RatingChange, Store

__all__ = [
    "FORFEITS", "GameSpec", "HostedSeats", "Player", "Shard", "ShardPool", "public_key", "result_from_journal", "seat_result",
    "settle_from_journal",
]

log = logging.getLogger("okgin.arena")

FORFEITS = ("timeout", "illegal", "disconnect", "resigned")
MAX_RESTARTS = 5  # per slot: a shard that keeps dying is not restarted for ever
REJOINED = "the shard joined again"
MAX_JOINED = 64  # shards joined by shard_join at once (a re-join with the same endpoint replaces its entry)
JOIN_CONNECT_S = 10.0  # how long the front tries to reach a joining shard as its admin
MAX_FEED = 20_000  # feed messages kept per game of a remote shard (a game is bounded by max_pile_draws and the clock)


@dataclass(frozen=True)
class Player:
    account: str
    kind: str
    rating: int


@dataclass(frozen=True)
class GameSpec:
    """A game the front made (a pairing, or an accepted challenge): seats in order."""

    id: str
    variant: str
    clock_name: str
    clock: Clock
    rated: bool
    players: tuple[Player, ...]
    #: per seat, the hosted bot (submission id) that plays it, 0 for a connected account;
    #: empty when every seat is connected (arena.shardbots)
    hosted: tuple[int, ...] = ()

    @property
    def has_hosted(self) -> bool:
        return any(self.hosted)

    @property
    def accounts(self) -> tuple[str, ...]:
        return tuple(p.account for p in self.players)

    @property
    def table(self) -> str:
        return f"arena-{self.id}"


@dataclass
class Shard:
    label: str
    endpoint: str
    link: AdminLink
    local: LocalReferee | None
    journal_dir: Path | None
    server_key: str | None = None
    games: set[str] = field(default_factory=set)
    dead: bool = False
    restarts: int = 0
    exited: asyncio.Future[int] | None = None  # the process's exit (a kill -9 is seen at once, not after liveness)
    #: at most this many games at once (a joined shard says its own); None: no limit
    capacity: int | None = None
    joined: bool = False  # joined the running arena by itself (shard_join, protocol 1.7)


def result_from_journal(path: Path | None, finished_ms: int) -> GameResult | None:
    """A finished game's result from its shard's journal, or None if it has no ``end``
    line (or ended abandoned: then it is void)."""
    if path is None:
        return None
    end, _clocks = journal_outcome(path)
    if end is None:
        return None
    term = str(end.get("termination") or "normal")
    if term == "abandoned":
        return None
    final = end.get("final") or {}
    record = end.get("record") if isinstance(end.get("record"), dict) else None
    at_fault = None
    if term in FORFEITS and record is not None:
        resigns = [e for e in record.get("entries") or [] if isinstance(e, dict) and "resign" in e]
        if resigns and isinstance(resigns[-1].get("seat"), int):
            at_fault = resigns[-1]["seat"]
    return GameResult(
        winner=final.get("winner"), scores=tuple(int(x) for x in final.get("scores") or []), termination=term,
        finished_ms=finished_ms, at_fault=at_fault, record=record, journal=str(path),
        seed_hash=str(end.get("seed_hash") or ""), seed=str(end.get("seed") or ""), salt=str(end.get("salt") or ""),
    )


def settle_from_journal(store: Store, shards_dir: Path, now_ms: int) -> tuple[int, int]:
    """At the arena's start: each game the store has in play is recorded from its shard's
    journal when that has an end line, else voided. Returns (recorded, voided)."""
    recorded = voided = 0
    for g in store.games_in_play():
        path = find_journal(shards_dir / f"journals-{g.shard}", g.table)
        res = result_from_journal(path, now_ms)
        if res is not None and len(res.scores) == len(g.players):
            store.finish_hosted_game(g.id, res)  # finish_game, and a hosted seat's game count if it had one
            recorded += 1
        else:
            store.void_game(g.id, "arena_restarted", now_ms)
            voided += 1
    return recorded, voided


Notify = Callable[[str, dict[str, Any]], None]


class HostedSeats(Protocol):
    """Who plays a game's hosted seats (:class:`arena.hosted.HostedLeague`): fresh sandboxed
    processes at the seats' doors (:mod:`arena.shardbots`)."""

    async def seat(self, spec: GameSpec, endpoint: str, tokens: list[str], doors: list[str], table: str,
                   over: Callable[[], bool], ctx: zmq.asyncio.Context, curve: CurveClient | None) -> SeatedBots: ...

    async def unseat(self, seated: SeatedBots, natural: bool) -> None: ...


class ShardPool:
    """The arena's shards and the games on them. ``notify(account, message)`` sends to an
    account's arena session (if it is online); ``no_show(account)`` gives one a cooldown;
    ``ended(spec)`` tells the front the game is over (its players are free again)."""

    def __init__(self, cfg: ArenaConfig, store: Store, notify: Notify, no_show: Callable[[str], None],
                 ended: Callable[[GameSpec], None], now_ms: Callable[[], int]) -> None:
        self.cfg = cfg
        self.store = store
        self.notify = notify
        self.no_show = no_show
        self.ended = ended
        self.now_ms = now_ms
        self.dir = private_dir(cfg.state / "shards")
        self.ctx: zmq.asyncio.Context = zmq.asyncio.Context()
        self.admin_key = secrets.token_hex(16)
        self.shards: list[Shard] = []
        self.tasks: dict[str, asyncio.Task[None]] = {}  # game id -> its task
        self.specs: dict[str, GameSpec] = {}
        self.stopping = False
        self.replacing: set[asyncio.Task[None]] = set()  # shards being restarted
        self.over: set[str] = set()  # games whose players were told game_over (free to play again)
        self.curve: CurveClient | None = None
        self.joined_serial = 0  # labels of joined shards: j1, j2, ...
        self.closing: set[asyncio.Task[None]] = set()  # lost joined shards' links being closed
        #: a joined shard was lost for another reason than joining again: its endpoint (the desk
        #: ends its session there, so that it joins again; wired to ArenaDesk.shard_lost)
        self.joined_lost: Callable[[str], None] = lambda endpoint: None
        self.hosted: HostedSeats | None = None  # plays hosted bots' seats (wired by the arena)
        if cfg.curve_keys:
            self.curve = CurveClient.load(Path(cfg.curve_keys) / "server.key")

    # ------------------------------------------------------------ shards
    async def start(self) -> None:
        for i in range(self.cfg.shards):
            self.shards.append(await self.start_shard(f"s{i}"))
        for i, remote in enumerate(self.cfg.remote_shards):
            self.shards.append(await self.join_remote(f"r{i}", remote))

    async def join_remote(self, label: str, remote: RemoteShard) -> Shard:
        """A shard on another machine: reached as admin with the shared secret (its admin key),
        always over CURVE (the key and the games cross a network). Its games' records are
        rebuilt from the public feed (its journals are on its own machine)."""
        try:
            secret = Path(remote.admin_key_file).read_text().strip()
            curve = CurveClient.load(remote.server_key)
            server_key = public_key(Path(remote.server_key).read_text())
        except (OSError, ValueError) as e:
            raise RuntimeError(f"remote shard {remote.endpoint}: {e}") from None
        link = AdminLink(self.ctx, remote.endpoint, f"arena-{label}", secret, curve=curve)
        await link.connect(timeout=30.0)
        shard = Shard(label, remote.endpoint, link, None, None, server_key)
        link.on_gone(functools.partial(self.lost, shard))
        return shard

    async def join(self, endpoint: str, server_key: str | None, capacity: int, admin_key: str) -> Shard:
        """A shard that joined the running arena by itself (``shard_join``, its join key
        already checked by the desk): reached as admin with the admin key it sent, over CURVE
        with the public key it sent (required off loopback unless the arena is insecure), then
        placed in the pool. A shard joining again with the same endpoint replaces its entry:
        the old link is marked gone, so the old entry's games are settled or voided by the same
        path as any lost shard's (:meth:`lost`, :meth:`finish`). Raises ValueError (refused)
        or RefereeGone / RequestFailed (unreachable, or its admin key refused there)."""
        if server_key is None and not is_loopback(endpoint) and not self.cfg.insecure:
            raise ValueError(f"{endpoint} is not a loopback address: a joining shard there needs CURVE (server_key), "
                             "so that its admin key and its games never cross the network in clear")
        live = [s for s in self.shards if s.joined and not s.dead and s.endpoint != endpoint]
        if len(live) >= MAX_JOINED:
            raise ValueError(f"this arena has {MAX_JOINED} joined shards already")
        curve = None
        if server_key is not None:
            public, secret = zmq.curve_keypair()
            curve = CurveClient(server_key.encode(), public, secret)  # the shard runs --allow any; its admin key gates
        self.joined_serial += 1
        label = f"j{self.joined_serial}"
        link = AdminLink(self.ctx, endpoint, f"arena-{label}", admin_key, curve=curve)
        try:
            # bounded as a whole: a DEALER with no peer yet holds its first send until one comes
            await asyncio.wait_for(link.connect(timeout=JOIN_CONNECT_S), JOIN_CONNECT_S)
        except TimeoutError:
            await link.close()
            raise RefereeGone(f"{endpoint} did not answer within {JOIN_CONNECT_S:.0f} s") from None
        except (RefereeGone, RequestFailed):  # silent, or a wrong admin key: its socket is let go
            await link.close()
            raise
        if self.stopping:
            await link.close()
            raise ValueError("the arena is stopping")
        shard = Shard(label, endpoint, link, None, None, server_key, capacity=capacity, joined=True)
        link.on_gone(functools.partial(self.lost, shard))
        for old in [s for s in self.shards if s.joined and s.endpoint == endpoint]:
            old.link.mark_gone(REJOINED)
        self.shards = [s for s in self.shards if not (s.joined and s.dead)] + [shard]
        log.info("arena: shard %s joined at %s (capacity %d)", label, endpoint, capacity)
        return shard

    async def start_shard(self, label: str, restarts: int = 0) -> Shard:
        args: list[str] = ["--heartbeat-ms", str(self.cfg.heartbeat_ms),
                           "--max-connections-per-host", str(self.cfg.max_connections_per_host)]
        server_key = None
        if self.cfg.curve_keys:
            args += ["--curve-keys", self.cfg.curve_keys, "--allow", "any"]
            server_key = (Path(self.cfg.curve_keys) / "server.key").read_text()
            server_key = public_key(server_key)
        local = await LocalReferee.start(self.dir, label, admin_key=self.admin_key, args=args, bind=self.shard_bind())
        link = AdminLink(self.ctx, local.endpoint, f"arena-{label}", self.admin_key, curve=self.curve)
        try:
            await link.connect(timeout=30.0)
        except RefereeGone:
            await local.stop()
            raise
        shard = Shard(label, self.public(local.endpoint), link, local, local.journal_dir, server_key, restarts=restarts)
        link.on_gone(functools.partial(self.lost, shard))
        shard.exited = asyncio.ensure_future(local.proc.wait())
        shard.exited.add_done_callback(lambda f: None if f.cancelled() else link.mark_gone(f"exited with {f.result()}"))
        return shard

    def shard_bind(self) -> str:
        """Shards listen on the front's host, on a free port."""
        host = self.cfg.bind[len("tcp://"):].rsplit(":", 1)[0] if self.cfg.bind.startswith("tcp://") else "127.0.0.1"
        return f"tcp://{host}:0"

    def public(self, endpoint: str) -> str:
        return endpoint

    def pick(self, local: bool = False) -> Shard | None:
        """The least busy live shard (``local``: on this host, with doors a sandbox can be given)."""
        live = [s for s in self.shards if not s.dead and (not local or s.journal_dir is not None)
                and (s.capacity is None or len(s.games) < s.capacity)]
        return min(live, key=lambda s: (len(s.games), s.label)) if live else None

    def lost(self, shard: Shard, why: str) -> None:
        """A shard is gone: its games are settled from its journal or voided (their tasks see
        the link's ``_referee_gone``), and a new shard takes the slot."""
        if shard.dead:
            return
        shard.dead = True
        log.warning("arena: shard %s lost (%s)", shard.label, why)
        if shard.joined and not self.stopping:  # it rejoins by itself; its link's socket is let go now
            task = asyncio.get_running_loop().create_task(shard.link.close())
            self.closing.add(task)
            task.add_done_callback(self.closing.discard)
            if why != REJOINED:
                self.joined_lost(shard.endpoint)
        if self.stopping or shard.local is None:  # a remote shard is its operator's to restart
            return
        if shard.restarts < MAX_RESTARTS:
            task = asyncio.get_running_loop().create_task(self.replace(shard))
            self.replacing.add(task)
            task.add_done_callback(self.replacing.discard)

    async def replace(self, shard: Shard) -> None:
        if shard.exited is not None:
            shard.exited.cancel()
        if shard.local is not None:
            await shard.local.stop()
        await shard.link.close()
        try:
            new = await self.start_shard(shard.label, shard.restarts + 1)
        except (RuntimeError, RefereeGone, OSError) as e:
            log.error("arena: shard %s could not be restarted: %s", shard.label, e)
            return
        if self.stopping:
            await new.link.close()
            if new.local is not None:
                await new.local.stop()
            return
        self.shards = [new if s is shard else s for s in self.shards]

    async def stop(self) -> None:
        """Void every game in progress (``arena_stopped``), then stop the shards."""
        self.stopping = True
        for task in list(self.tasks.values()):
            task.cancel()
        for task in list(self.tasks.values()):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        for s in self.shards:
            if s.exited is not None:
                s.exited.cancel()
            await s.link.close()
            if s.local is not None:
                await s.local.stop()
        self.ctx.destroy(linger=0)

    # ------------------------------------------------------------ games
    def launch(self, spec: GameSpec) -> None:
        """Play ``spec`` in a task of its own."""
        self.specs[spec.id] = spec
        self.tasks[spec.id] = asyncio.get_running_loop().create_task(self.play(spec))

    async def play(self, spec: GameSpec) -> None:
        shard: Shard | None = None
        settled = False
        try:
            shard = self.pick(spec.has_hosted)
            if shard is None and self.replacing:  # every shard is being restarted: wait for one
                await asyncio.wait(set(self.replacing), timeout=60.0)
                shard = self.pick(spec.has_hosted)
            if shard is None or (spec.has_hosted and self.hosted is None):
                self.void(spec, "no_shard", stored=False)
                settled = True
                return
            shard.games.add(spec.id)
            settled = await self.run(spec, shard)
        except asyncio.CancelledError:
            if not settled:
                self.void(spec, "arena_stopped")
                settled = True
            raise
        except Exception:
            log.exception("arena: game %s failed", spec.id)
            if not settled:
                self.void(spec, "internal")
        finally:
            if shard is not None:
                shard.games.discard(spec.id)
            self.tasks.pop(spec.id, None)
            self.specs.pop(spec.id, None)
            self.release(spec)
            self.over.discard(spec.id)

    def release(self, spec: GameSpec) -> None:
        """The players are free again: before they hear game_over, so that a client that
        seeks at once on it is not told it is busy (the table is closed afterwards)."""
        if spec.id not in self.over:
            self.over.add(spec.id)
            self.ended(spec)

    def advice_policy(self, variant: str) -> dict[str, int]:
        """A Box table's advice window (the arena's ``advice_window_ms``); none for Oklahoma
        Gin, which has no sitter, or when the operator set 0."""
        w = self.cfg.advice_window_ms
        return {"advice_window_ms": w} if variant == "box" and w else {}

    async def run(self, spec: GameSpec, shard: Shard) -> bool:
        link = shard.link
        cfg = self.cfg
        table = spec.table
        asked = time.time()  # the game's journal is named by the second it starts: after this
        made = await link.request({
            "type": "create_table", "table": table, "variant": spec.variant, "clock": spec.clock.to_wire(),
            "policies": {"disconnect_grace_ms": cfg.disconnect_grace_ms, **self.advice_policy(spec.variant)},
            "reserved": True,
            "players": list(spec.accounts), "reveal": "game_end", "rules": {**cfg.rules, "variant": spec.variant},
            # A hosted bot's sandboxed process reaches its seat through its door only (arena.shardbots).
            **({"doors": True} if spec.has_hosted else {}),
        })
        tokens: list[str] = made["seat_tokens"]
        doors: list[str] = list(made.get("doors") or [])
        new = NewGame(spec.id, spec.variant, spec.rated, spec.accounts, spec.clock.to_wire(), shard.label, table,
                      self.now_ms())
        if spec.has_hosted:
            # Counted in the hosted budget; its own deal (a fresh seed): never a duplicate one.
            self.store.add_hosted_game(new, spec.hosted, f"single-{spec.id}")
        else:
            self.store.new_game(new)
        started = asyncio.Event()
        done: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        seen: list[dict[str, Any]] = []  # the public feed: a remote shard's game's record is rebuilt from it
        started_at: list[float] = []

        def feed(msg: dict[str, Any]) -> None:
            kind = msg.get("type")
            if shard.journal_dir is None and len(seen) < MAX_FEED:
                seen.append(msg)
            if kind == "game_start":
                started_at.append(time.time())
                started.set()
            elif kind in ("game_end", "table_closed", "_referee_gone") and not done.done():
                done.set_result(msg)

        link.subscribe(table, feed)
        seated: SeatedBots | None = None
        try:
            # A shard of our own has the journal, so its moves are of no use here (protocol 1.8:
            # events declined); a remote shard's record is rebuilt from its whole feed.
            await link.request({"type": "watch", "table": table,
                                **({} if shard.journal_dir is None else {"events": False})})
            for seat, p in enumerate(spec.players):
                self.notify(p.account, {
                    "type": "game_ready", "game": spec.id, "endpoint": shard.endpoint, "server_key": shard.server_key,
                    "table": table, "token": tokens[seat], "seat": seat, "variant": spec.variant,
                    "clock": spec.clock.to_wire(), "rated": spec.rated,
                    "players": [{"account": q.account, "kind": q.kind, "rating": q.rating} for q in spec.players],
                    "show_up_ms": cfg.show_up_ms,
                })
            if spec.has_hosted and self.hosted is not None:
                if len(doors) != len(tokens):
                    raise RuntimeError(f"shard {shard.label} gave {len(doors)} seat doors for {len(tokens)} seats")
                seated = await self.hosted.seat(spec, shard.endpoint, tokens, doors, table, done.done, self.ctx,
                                                self.curve)
            waiter: asyncio.Future[Any] = asyncio.ensure_future(started.wait())
            either: set[asyncio.Future[Any]] = {waiter, done}
            try:
                await asyncio.wait(either, timeout=cfg.show_up_ms / 1000, return_when=asyncio.FIRST_COMPLETED)
            finally:
                waiter.cancel()
            if not started.is_set() and not done.done():
                await self.no_shows(spec, shard)
                return True
            end = await done
            return await self.finish(spec, shard, end, seen, (asked, started_at[0] if started_at else time.time()))
        finally:
            if seated is not None and self.hosted is not None:
                await self.hosted.unseat(seated, natural=done.done())
            link.unsubscribe(table)
            if not shard.dead and not self.stopping:
                with contextlib.suppress(RefereeGone, RequestFailed):
                    await link.request({"type": "close_table", "table": table}, timeout=10.0)

    async def no_shows(self, spec: GameSpec, shard: Shard) -> None:
        seated: list[bool] = [False] * len(spec.players)
        with contextlib.suppress(RequestFailed):
            page = await shard.link.request({"type": "list_tables", "status": "waiting", "limit": 200})
            for info in page.get("tables") or []:
                if info.get("table") == spec.table and isinstance(info.get("seated"), list):
                    seated = [bool(x) for x in info["seated"]]
        absent = [p.account for p, here in zip(spec.players, seated, strict=False) if not here]
        for account in absent:
            self.no_show(account)
        self.void(spec, "no_show")

    async def finish(self, spec: GameSpec, shard: Shard, end: dict[str, Any], seen: list[dict[str, Any]],
                     started: tuple[float, float] | None = None) -> bool:
        """Record the game that ended (``started``: the UNIX times between which it started,
        which name its journal: :func:`find_journal`)."""
        kind = end.get("type")
        now = self.now_ms()
        path = find_journal(shard.journal_dir, spec.table, started) if shard.journal_dir is not None else None
        if kind != "game_end":
            # the shard went away (or closed the table): a journal that ended is still a game
            res = result_from_journal(path, now)
            if res is None:
                self.void(spec, "shard_lost")
                return True
        else:
            term = str(end.get("termination") or "normal")
            if term == "abandoned":
                self.void(spec, "shard_lost")
                return True
            from_journal = result_from_journal(path, now)
            final = end.get("final") or {}
            record = from_journal.record if from_journal is not None else _feed_record(seen, end)
            res = GameResult(
                winner=end.get("winner"), scores=tuple(int(x) for x in final.get("scores") or []), termination=term,
                finished_ms=now, at_fault=end.get("at_fault"), record=record,
                journal=str(path or "") if path is not None else f"{shard.endpoint} {spec.table}",
                seed_hash=str(end.get("seed_hash") or ""), seed=str(end.get("seed") or ""), salt=str(end.get("salt") or ""),
            )
        change = await asyncio.to_thread(self.store.finish_hosted_game if spec.has_hosted else self.store.finish_game,
                                         spec.id, res)
        self.game_over(spec, res, change)
        return True

    def game_over(self, spec: GameSpec, res: GameResult, change: RatingChange | None) -> None:
        self.release(spec)
        for seat, p in enumerate(spec.players):
            rating = None
            if change is not None and change.rated:
                b, a = change.before[seat], change.after[seat]
                rating = {"before": round(b.rating), "after": round(a.rating), "deviation": round(a.deviation),
                          "provisional": a.provisional}
            self.notify(p.account, {
                "type": "game_over", "game": spec.id, "result": seat_result(res, seat, len(spec.players)),
                "scores": list(res.scores), "termination": res.termination, "rating": rating,
            })

    def void(self, spec: GameSpec, reason: str, stored: bool = True) -> None:
        if stored:
            self.store.void_game(spec.id, reason, self.now_ms())
        self.release(spec)
        for p in spec.players:
            self.notify(p.account, {"type": "game_over", "game": spec.id, "result": "void",
                                    "scores": [0] * len(spec.players), "termination": reason, "rating": None})


def _feed_record(seen: list[dict[str, Any]], end: dict[str, Any]) -> dict[str, Any] | None:
    """A game's record rebuilt from its public feed (a remote shard's: its journal is on its
    own machine), checked by the engine against the referee's final scores
    (:class:`competition.tournament.records.FeedRecorder`); None if it cannot be."""
    start = next((m for m in seen if m.get("type") == "game_start"), None)
    if start is None or end.get("seed") is None:
        return None
    try:
        rec = FeedRecorder(RuleSet.from_dict(start["rules"]), str(end["seed"]))
        for m in seen:
            rec.feed(m)
        record, problem = rec.record()
    except Exception as e:  # a feed that does not replay is logged, never fatal
        log.warning("arena: no record from the feed of %s: %s", end.get("table"), e)
        return None
    if problem is not None:
        log.warning("arena: the feed of %s: %s", end.get("table"), problem)
    return record


def seat_result(res: GameResult, seat: int, n: int) -> str:
    """What ``res`` is for ``seat`` of ``n``: "win", "loss" or "draw" (a game_over's result)."""
    from .ratings import game_ranks

    ranks = game_ranks(res.scores or (0,) * n, res.winner, res.at_fault)
    if all(r == ranks[seat] for r in ranks):
        return "draw"
    return "win" if ranks[seat] == 1 else "loss"


def public_key(text: str) -> str:
    """The Z85 public key of a pyzmq certificate file's text."""
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("public-key"):
            return line.split("=", 1)[1].strip().strip('"')
    raise ValueError("no public-key in the CURVE certificate")

