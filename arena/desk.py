"""The arena's desk: its ``hello``, its requests, and who is online (protocol.md §19).

The desk is the :class:`referee.extension.Extension` of the front's referee: the referee
reads, decodes, bounds, rate-limits and shape-checks every frame, and the desk sees only
valid requests from sessions of the right role. It owns:

- **sign-in**: an account's ``hello`` is checked by :class:`arena.auth.KeyChecker` off the
  loop, then admitted (``welcome`` with ``arena`` and ``account``); one live session per
  account (the older one gets ``session_taken``); a banned account gets ``banned``;
- **who is online**, their ratings (read at sign-in and after each game, so ``lobby``
  costs no query per account), their open seeks, and the open challenges
  (:class:`arena.matching.ChallengeBook`);
- **per-account limits**: 2 open seeks, 4 open challenges made, :data:`RATE_PER_WINDOW`
  requests of the game-finding kind per :data:`RATE_WINDOW_MS`, one game at a time,
  cooldowns after a no-show (30 s, doubling, from the store);
- **pairing**: every ``match_every_ms`` the open seeks go through
  :func:`arena.matching.pair`, expired challenges close, and each game made is handed to
  the shards (:meth:`arena.shards.ShardPool.launch`), seats in a random order. Idle hosted
  bots seek too (:meth:`arena.hosted.HostedLeague.seeks`: rated, in every clock preset, within
  the hosted budget), so a connected account is paired with a hosted bot of similar rating
  like with anyone; a pairing of hosted bots only is left to the league (it plays them
  duplicate deals), and the pass is made again without them.

The referee's own lobby requests (``join``, ``queue``, ``watch``, ``create_table`` ...)
are refused at the front (``forbidden``): an arena plays no game itself.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import secrets
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from okgin.protocol import ProtocolError
from referee.extension import ExtensionParts, Handler

from .auth import Busy, KeyChecker
from .config import ArenaConfig
from .matching import ChallengeBook, Pairing, Seek, pair
from .shards import GameSpec, Player
from .store import Account, Store, StoreError, UnknownAccount
from .window import SlidingWindow

if TYPE_CHECKING:
    from referee.sessions import Session
    from referee.tablehost import Host

__all__ = ["MAX_CHALLENGES", "MAX_LOBBY", "MAX_SEEKS", "RATE_PER_WINDOW", "RATE_WINDOW_MS", "ArenaDesk", "Online"]

log = logging.getLogger("okgin.arena")

MAX_SEEKS = 2
MAX_CHALLENGES = 4
MAX_LOBBY = 200
RATE_WINDOW_MS = 10_000
RATE_PER_WINDOW = 20
RATED_TYPES = ("seek", "challenge", "accept", "decline", "cancel", "lobby")
#: The referee's own lobby and admin requests: not served at an arena's front.
REFUSED_HERE = ("queue", "join", "leave", "list_tables", "watch", "unwatch", "sync", "create_table", "close_table",
                "reveal", "entropy", "entropy_reveal")
AUTH_FAILED = "unknown account, wrong key or revoked key"
#: shard_join (1.7): wrong join keys the front takes per window (then rate_limited), and joins being connected at once
JOIN_FAILS_PER_WINDOW = 5
JOIN_WINDOW_MS = 10_000
MAX_JOINING = 4
MAX_PASSES = 8  # a pairing pass made again without the hosted-only pairings it found, at most this often


class HostedSeeks(Protocol):
    """The hosted bots that seek connected accounts (:class:`arena.hosted.HostedLeague`)."""

    def seeks(self, now_ms: int) -> dict[str, tuple[Seek, int]]:
        """Seeks of idle hosted bots by seek id, each with its submission id."""
        ...

    def take(self, game: str, sids: Sequence[int]) -> bool:
        """Seat these bots in ``game`` (busy, counted as running and in the budget); False
        when the budget or the concurrency has no room for it now."""
        ...

    def done(self, game: str, sids: Sequence[int]) -> None:
        """Their game is over."""
        ...


@dataclass(eq=False)
class Online:
    """A signed-in account: its session and what the desk keeps for it."""

    account: Account
    sess: Session
    ratings: dict[str, dict[str, Any]] = field(default_factory=dict)
    seeks: dict[str, Seek] = field(default_factory=dict)
    #: its rate-limited requests (seeks, challenges, answers, lobby)
    recent: SlidingWindow = field(default_factory=lambda: SlidingWindow(RATE_PER_WINDOW, RATE_WINDOW_MS))

    @property
    def key(self) -> str:
        return self.account.name.lower()


class ArenaDesk:
    """The front's extension (see the module docstring)."""

    def __init__(self, cfg: ArenaConfig, store: Store, checker: KeyChecker, now_ms: Callable[[], int]) -> None:
        self.cfg = cfg
        self.store = store
        self.checker = checker
        self.now_ms = now_ms
        self.parts: ExtensionParts | None = None
        self.online: dict[str, Online] = {}  # account (lower case) -> Online
        self.by_sess: dict[Session, Online] = {}
        self.pending: set[bytes] = set()  # connections whose key is being checked
        self.book = ChallengeBook()
        self.playing: dict[str, str] = {}  # account (lower case) -> game id
        self.launch: Callable[[GameSpec], None] = lambda spec: None  # wired to ShardPool.launch
        self.hosted: HostedSeeks | None = None  # hosted bots seek here too (wired to the HostedLeague)
        #: connected accounts of the event running now (arena.eventseats): their seeks wait,
        #: and they are seated in their event games instead
        self.reserved: frozenset[str] = frozenset()
        self.tasks: set[asyncio.Task[None]] = set()
        #: shard_join (1.7): the operator's join key (None: joins refused), the pool's join
        #: (wired to ShardPool.join), recent wrong keys, joins in progress
        self.join_key: str | None = None
        self.join_shard: Callable[[str, str | None, int, str], Awaitable[Any]] | None = None
        self.join_fails = SlidingWindow(JOIN_FAILS_PER_WINDOW, JOIN_WINDOW_MS)  # wrong join keys, from anyone
        self.joining = 0
        self.joined: dict[str, Session] = {}  # a joined shard's endpoint -> its session here
        self.ticker: asyncio.TimerHandle | None = None
        self.serial = 0
        self.arena_info = {
            "name": cfg.name, "variants": list(cfg.variants),
            "clocks": {k: c.to_wire() for k, c in cfg.clocks.items()},
        }

    # ------------------------------------------------------------------ the extension
    def attach(self, parts: ExtensionParts) -> Mapping[str, Handler]:
        self.parts = parts
        routes: dict[str, Handler] = dict.fromkeys(REFUSED_HERE, self.refused_here)
        routes.update({
            "seek": self.on_seek, "challenge": self.on_challenge, "accept": self.on_accept, "decline": self.on_decline,
            "cancel": self.on_cancel, "lobby": self.on_lobby, "leaderboard": self.on_leaderboard, "ban": self.on_ban,
            "unban": self.on_unban, "shard_join": self.on_shard_join,
        })
        return routes

    @property
    def host(self) -> Host:
        assert self.parts is not None
        return self.parts.host

    def start(self) -> None:
        """Begin pairing (the referee's loop is running)."""
        self.schedule()

    def stop(self) -> None:
        if self.ticker is not None:
            self.ticker.cancel()
            self.ticker = None
        for t in list(self.tasks):
            t.cancel()

    def hello(self, rid: bytes, msg: dict[str, Any], rqid: Any) -> None:
        role, account, key = msg["role"], msg.get("account"), msg.get("key")
        if rid in self.pending:
            raise ProtocolError("limit_reached", "a hello of this connection is being checked already: wait for its answer")
        if account is None and key is None and role == "spectator":
            assert self.parts is not None
            self.parts.admit(rid, msg, rqid, msg["name"], role, {"arena": self.arena_info, "account": None})
            return
        if not isinstance(account, str) or not isinstance(key, str):
            raise ProtocolError("auth_failed", f"at an arena, role {role} needs hello.account and hello.key (protocol.md §19)")
        self.pending.add(rid)
        task = asyncio.get_running_loop().create_task(self.sign_in(rid, msg, rqid, account, key))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def sign_in(self, rid: bytes, msg: dict[str, Any], rqid: Any, name: str, key: str) -> None:
        parts = self.parts
        assert parts is not None
        try:
            try:
                acct = await self.checker.check(name, key)
            except Busy:
                raise ProtocolError("limit_reached", "too many key checks are waiting: try again in a moment") from None
            if acct is None:
                raise ProtocolError("auth_failed", AUTH_FAILED)
            if acct.banned is not None:
                raise ProtocolError("banned", f"account {acct.name} is banned: {acct.banned}")
            role = msg["role"]
            if role == "admin" and not acct.admin:
                raise ProtocolError("forbidden", f"account {acct.name} is not an admin of this arena")
            welcome = {"arena": self.arena_info, "account": {"name": acct.name, "kind": acct.kind, "admin": acct.admin}}
            old = self.online.get(acct.name.lower())
            sess = parts.admit(rid, msg, rqid, acct.name, role, welcome)
        except ProtocolError as e:
            e.request = "hello"
            parts.refuse(rid, e, rqid)
            return
        except Exception:
            log.exception("arena: sign-in of %s failed", name)
            parts.refuse(rid, ProtocolError("internal", "the arena failed on this hello (logged)", request="hello"), rqid)
            return
        finally:
            self.pending.discard(rid)
        if old is not None:
            parts.take(old.sess)  # one live session per account: the newer wins (gone() forgets the old)
        log.info("arena: %s signed in (%s)", acct.name, msg["role"])
        entry = Online(acct, sess)
        self.refresh_ratings(entry)
        self.online[entry.key] = entry
        self.by_sess[sess] = entry

    def gone(self, sess: Session) -> None:
        for ep in [ep for ep, s in self.joined.items() if s is sess]:
            del self.joined[ep]
        entry = self.by_sess.pop(sess, None)
        if entry is None:
            return
        if self.online.get(entry.key) is entry:
            del self.online[entry.key]
        entry.seeks.clear()
        for c in self.book.drop(entry.account.name):
            self.tell_closed(c.accounts, c.id, "cancelled", entry.account.name, skip=entry.key)

    # ------------------------------------------------------------------ helpers
    def me(self, sess: Session) -> Online:
        entry = self.by_sess.get(sess)
        if entry is None:
            raise ProtocolError("forbidden", "sign in with an account (hello.account, hello.key) to do this")
        return entry

    def charge(self, entry: Online) -> None:
        now = self.now_ms()
        if entry.recent.full(now):
            raise ProtocolError("rate_limited", f"at most {RATE_PER_WINDOW} seeks, challenges, answers and lobby requests "
                                                f"per {RATE_WINDOW_MS // 1000} s per account: wait a moment")
        entry.recent.add(now)

    def ready_to_play(self, entry: Online) -> None:
        """Refuse an account that is in a game or cooling down."""
        if entry.key in self.playing:
            raise ProtocolError("busy", f"{entry.account.name} is in a game (one game at a time)")
        acct = self.store.account(entry.account.name)
        now = self.now_ms()
        if acct is not None and acct.cooldown_until_ms > now:
            left = acct.cooldown_until_ms - now
            raise ProtocolError("cooldown", f"{entry.account.name} cools down for {left // 1000 + 1} s after not showing up "
                                            "for a game", retry_ms=left)

    def clock(self, msg: dict[str, Any]) -> str:
        name = msg.get("clock", "standard")
        if name not in self.cfg.clocks:
            raise ProtocolError("bad_message", f"{msg['type']}: no clock preset {name!r} here "
                                               f"(welcome.arena.clocks: {', '.join(sorted(self.cfg.clocks))})")
        return str(name)

    def new_id(self, prefix: str) -> str:
        self.serial += 1
        return f"{prefix}{self.serial}-{secrets.token_hex(4)}"

    def refresh_ratings(self, entry: Online) -> None:
        for v in self.cfg.variants:
            r = self.store.rating(entry.account.name, v)
            entry.ratings[v] = {"rating": round(r.rating), "deviation": round(r.deviation), "provisional": r.provisional}

    def send(self, account: str, msg: dict[str, Any]) -> None:
        """To an account's session, if it is online (else the message is dropped)."""
        entry = self.online.get(account.lower())
        if entry is not None:
            self.host.send(entry.sess, msg)

    def tell_closed(self, accounts: tuple[str, ...], cid: str, reason: str, by: str | None, skip: str | None = None) -> None:
        for a in accounts:
            if a.lower() != skip:
                self.send(a, {"type": "challenge_closed", "challenge": cid, "reason": reason, "by": by})

    def player(self, name: str, variant: str, hosted: bool = False) -> Player:
        entry = self.online.get(name.lower())
        kind = "bot" if hosted else entry.account.kind if entry is not None else "human"
        return Player(name, kind, round(self.store.rating(name, variant).rating))

    # ------------------------------------------------------------------ shards joining (1.7)
    def on_shard_join(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        """A referee shard joins the running arena (protocol.md §19.6). The join key is
        compared in constant time; wrong keys are rate-limited for the whole front (a guesser
        may use many connections) and logged without the key. The shard is then reached as
        admin off the request path (:meth:`arena.shards.ShardPool.join`), and answered ``ok``
        or ``shard_unreachable``."""
        if self.join_key is None or self.join_shard is None:
            raise ProtocolError("forbidden", "this arena takes no shard joins: its operator sets join_key_file in "
                                             "arena.toml to allow them (docs/arena.md, Scaling)")
        now = self.now_ms()
        if self.join_fails.full(now):
            raise ProtocolError("rate_limited", f"too many wrong join keys: at most {JOIN_FAILS_PER_WINDOW} per "
                                                f"{JOIN_WINDOW_MS // 1000} s: wait a moment")
        if not hmac.compare_digest(msg["join_key"].encode(), self.join_key.encode()):
            self.join_fails.add(now)
            log.warning("arena: shard_join of %s refused: wrong join key", msg["endpoint"])
            raise ProtocolError("auth_failed", "wrong join key (the arena's join_key_file)")
        if self.joining >= MAX_JOINING:
            raise ProtocolError("limit_reached", f"{MAX_JOINING} shards are joining already: try again in a moment")
        self.joining += 1
        task = asyncio.get_running_loop().create_task(self.shard_join(sess, msg, rqid))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def shard_join(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        assert self.join_shard is not None
        endpoint = msg["endpoint"]
        try:
            await self.join_shard(endpoint, msg["server_key"], msg["capacity"], msg["admin_key"])
        except ValueError as e:
            self.host.send(sess, ProtocolError("bad_message", f"shard_join: {e}", request="shard_join").to_wire(rqid))
        except Exception as e:  # RefereeGone, RequestFailed (a wrong admin key), a socket error
            log.warning("arena: shard_join of %s: could not reach it as admin: %s", endpoint, type(e).__name__)
            self.host.send(sess, ProtocolError("shard_unreachable", f"the arena could not reach {endpoint} as its admin "
                                                                    f"({type(e).__name__}: is that endpoint reachable from "
                                                                    "the arena, with that server_key and admin_key?)",
                                               request="shard_join").to_wire(rqid))
        else:
            self.joined[endpoint] = sess
            self.host.reply_ok(sess, "shard_join", rqid, None)
        finally:
            self.joining -= 1

    def shard_lost(self, endpoint: str) -> None:
        """The pool lost a joined shard while its session here may still be alive (only the
        arena's link to it failed): that session is ended, so the shard, whose heartbeats are
        then answered ``hello_first``, joins again by itself."""
        sess = self.joined.pop(endpoint, None)
        if sess is not None and self.parts is not None:
            self.parts.close(sess)

    # ------------------------------------------------------------------ requests
    def refused_here(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        raise ProtocolError("forbidden", f"an arena plays no game itself: {msg['type']} is refused here; seek or challenge, "
                                         "then play at the endpoint of your game_ready (protocol.md §19)")

    def on_seek(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        entry = self.me(sess)
        self.charge(entry)
        clock = self.clock(msg)
        self.ready_to_play(entry)
        if len(entry.seeks) >= MAX_SEEKS:
            raise ProtocolError("limit_reached", f"at most {MAX_SEEKS} open seeks per account: cancel one first")
        variant = msg["variant"]
        sid = self.new_id("k")
        entry.seeks[sid] = Seek(sid, entry.account.name, variant, clock, msg.get("rated", True),
                                float(entry.ratings[variant]["rating"]), self.now_ms())
        self.host.reply(sess, {"type": "sought", "seek": sid}, rqid)
        self.host.loop.call_soon(self.match)

    def on_challenge(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        entry = self.me(sess)
        self.charge(entry)
        clock = self.clock(msg)
        self.ready_to_play(entry)
        if len(self.book.made_by(entry.account.name)) >= MAX_CHALLENGES:
            raise ProtocolError("limit_reached", f"at most {MAX_CHALLENGES} open challenges per account: cancel one first")
        names = []
        for name in msg["to"]:
            other = self.online.get(name.lower())
            if other is None or other is entry:
                raise ProtocolError("no_such_account", f"no account {name!r} is online here")
            names.append(other.account.name)
        c = self.book.make(self.new_id("c"), entry.account.name, names, msg["variant"], clock, msg.get("rated", True),
                           self.now_ms())
        self.host.reply(sess, {"type": "challenged", "challenge": c.id}, rqid)
        offer = self.offer(c)
        for name in c.to:
            self.send(name, {"type": "challenge_offer", **offer})

    def offer(self, c: Any) -> dict[str, Any]:
        maker = self.online.get(c.by.lower())
        rating = maker.ratings[c.variant]["rating"] if maker is not None else 1500
        return {"challenge": c.id, "from": {"account": c.by, "kind": maker.account.kind if maker else "human",
                                            "rating": rating},
                "to": list(c.to), "variant": c.variant, "clock": c.clock, "rated": c.rated,
                "expires_ms": max(0, c.expires_ms - self.now_ms())}

    def on_accept(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        entry = self.me(sess)
        self.charge(entry)
        self.book.get(msg["challenge"], entry.account.name)
        self.ready_to_play(entry)
        c = self.book.accept(msg["challenge"], entry.account.name)
        self.host.reply_ok(sess, "accept", rqid, None)
        if c is None:
            return
        for name in c.accounts:
            if name.lower() in self.playing or name.lower() not in self.online:
                self.tell_closed(c.accounts, c.id, "accepted_elsewhere", None)
                return
        self.start_game(c.accounts, c.variant, c.clock, c.rated, shuffle=False)

    def on_decline(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        entry = self.me(sess)
        self.charge(entry)
        c = self.book.decline(msg["challenge"], entry.account.name)
        self.host.reply_ok(sess, "decline", rqid, None)
        self.tell_closed(c.accounts, c.id, "declined", entry.account.name)

    def on_cancel(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        entry = self.me(sess)
        self.charge(entry)
        if ("seek" in msg) == ("challenge" in msg):
            raise ProtocolError("bad_message", "cancel takes exactly one of 'seek' and 'challenge'")
        if "seek" in msg:
            if entry.seeks.pop(msg["seek"], None) is None:
                raise ProtocolError("no_such_seek", f"you have no open seek {msg['seek']!r}")
            self.host.reply_ok(sess, "cancel", rqid, None)
            return
        c = self.book.cancel(msg["challenge"], entry.account.name)
        self.host.reply_ok(sess, "cancel", rqid, None)
        self.tell_closed(c.to, c.id, "cancelled", entry.account.name)

    def on_lobby(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        entry = self.by_sess.get(sess)
        if entry is not None:
            self.charge(entry)
        ranked = sorted(self.online.values(), key=lambda e: (-max(r["rating"] for r in e.ratings.values()), e.key))
        online = [{"account": e.account.name, "kind": e.account.kind, "playing": e.key in self.playing,
                   "ratings": e.ratings} for e in ranked[:MAX_LOBBY]]
        seeks = sorted((s for e in self.online.values() for s in e.seeks.values()), key=lambda s: (s.since_ms, s.id))
        seek_rows = [{"seek": s.id, "account": s.account, "kind": self.online[s.account.lower()].account.kind,
                      "variant": s.variant, "clock": s.clock, "rated": s.rated, "rating": round(s.rating)}
                     for s in seeks[:MAX_LOBBY]]
        me = None
        challenges: list[dict[str, Any]] = []
        if entry is not None:
            challenges = [self.offer(c) for c in self.book.involving(entry.account.name)]
            recent = []
            for g in self.store.recent_games(entry.account.name, 10):
                seat = [p.lower() for p in g.players].index(entry.key)
                change = None
                if g.status == "finished" and g.rated and seat < len(g.after) and g.after[seat] is not None \
                        and g.before[seat] is not None:
                    change = round(g.after[seat]) - round(g.before[seat])  # type: ignore[arg-type]
                recent.append({"game": g.id, "variant": g.variant,
                               "opponents": [p for i, p in enumerate(g.players) if i != seat],
                               "result": g.result_for(g.players[seat]), "rating_change": change,
                               "finished_ms": g.finished_ms or 0})
            me = {"account": entry.account.name, "kind": entry.account.kind, "ratings": entry.ratings, "recent": recent}
        self.host.reply(sess, {"type": "lobby_state", "online": online, "seeks": seek_rows, "challenges": challenges,
                               "me": me}, rqid)

    def on_leaderboard(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        entry = self.by_sess.get(sess)
        if entry is not None:
            self.charge(entry)
        variant, offset, limit = msg["variant"], msg.get("offset", 0), msg.get("limit", 50)
        rows = [{"rank": offset + i + 1, "account": a.name, "kind": a.kind, "rating": round(r.rating),
                 "deviation": round(r.deviation), "provisional": r.provisional, "games": r.games}
                for i, (a, r) in enumerate(self.store.leaderboard(variant, offset, limit))]
        self.host.reply(sess, {"type": "leaderboard_page", "variant": variant, "rows": rows}, rqid)

    def on_ban(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        admin = self.me(sess)
        try:
            self.store.ban(msg["account"], msg["reason"], admin.account.name)
        except (UnknownAccount, StoreError):
            raise ProtocolError("no_such_account", f"no account {msg['account']!r} here") from None
        self.host.reply_ok(sess, "ban", rqid, None)
        self.banned(msg["account"], msg["reason"])

    def banned(self, name: str, reason: str) -> None:
        """After a ban is stored (an admin session's ``ban`` here, or the web's admin form):
        the account's cached key is dropped, so its next ``hello`` reads the ban, and its
        session, if one is open, is told why and closed. One place for both ways to ban."""
        self.checker.forget(name)
        entry = self.online.get(name.lower())
        if entry is not None:
            err = ProtocolError("banned", f"account {entry.account.name} was banned: {reason or 'banned'}")
            self.host.send(entry.sess, err.to_wire())
            assert self.parts is not None
            self.parts.close(entry.sess)

    def on_unban(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        admin = self.me(sess)
        try:
            self.store.unban(msg["account"], admin.account.name)
        except (UnknownAccount, StoreError):
            raise ProtocolError("no_such_account", f"no account {msg['account']!r} here") from None
        self.host.reply_ok(sess, "unban", rqid, None)

    # ------------------------------------------------------------------ pairing and games
    def schedule(self) -> None:
        self.ticker = self.host.loop.call_later(self.cfg.match_every_ms / 1000, self.tick)

    def tick(self) -> None:
        try:
            now = self.now_ms()
            for c in self.book.expire(now):
                self.tell_closed(c.accounts, c.id, "expired", None)
            self.match()
        finally:
            self.schedule()

    def match(self) -> None:
        now = self.now_ms()
        if not any(e.seeks for e in self.online.values() if e.key not in self.playing and e.key not in self.reserved):
            return  # nobody connected seeks: no look at the hosted bots
        hosted = self.hosted.seeks(now) if self.hosted is not None else {}
        for _ in range(MAX_PASSES):
            seeks = [s for e in self.online.values() if e.key not in self.playing and e.key not in self.reserved
                     for s in e.seeks.values()]
            if not seeks:
                return
            offered = [s for s, _ in hosted.values() if s.account.lower() not in self.playing]
            again = False
            for p in pair(seeks + offered, now, self.cfg.widen_every_ms):
                if all(s.id in hosted for s in p.seeks):
                    # Hosted bots only: the league's to play (duplicate deals); look again without them.
                    gone = {s.account for s in p.seeks}
                    hosted = {k: v for k, v in hosted.items() if v[0].account not in gone}
                    again = True
                    continue
                self.start_pairing(p, {s.account: hosted[s.id][1] for s in p.seeks if s.id in hosted})
            if not again:
                return

    def start_pairing(self, p: Pairing, hosted: dict[str, int] | None = None) -> None:
        self.start_game(p.accounts, p.variant, p.clock, p.rated, shuffle=True, hosted=hosted)

    def start_game(self, accounts: tuple[str, ...], variant: str, clock: str, rated: bool, shuffle: bool,
                   hosted: dict[str, int] | None = None) -> None:
        """Seat a game and hand it to the shards. ``hosted``: the accounts whose hosted bot
        (submission id) plays their seat; a connected account's seat is played by its session."""
        hosted = hosted or {}
        gid = self.new_id("g")
        if hosted and (self.hosted is None or not self.hosted.take(gid, list(hosted.values()))):
            return  # no room for a hosted game now: the connected seeks stay open
        order = list(accounts)
        if shuffle:
            secrets.SystemRandom().shuffle(order)  # nobody chooses a seat (the deal's first offer goes to seat 0)
        for name in order:
            k = name.lower()
            self.playing[k] = gid
            entry = self.online.get(k)
            if entry is not None:
                entry.seeks.clear()  # one game at a time: the account's other seeks go
            for c in self.book.drop(name):
                self.tell_closed(c.accounts, c.id, "accepted_elsewhere", None)
        spec = GameSpec(gid, variant, clock, self.cfg.clocks[clock], rated,
                        tuple(self.player(n, variant, n in hosted) for n in order),
                        tuple(hosted.get(n, 0) for n in order) if hosted else ())
        self.launch(spec)

    def ended(self, spec: GameSpec) -> None:
        """A game is over (played, void or failed): its players are free again."""
        for name in spec.accounts:
            k = name.lower()
            if self.playing.get(k) == spec.id:
                del self.playing[k]
            entry = self.online.get(k)
            if entry is not None:
                self.refresh_ratings(entry)
        if spec.has_hosted and self.hosted is not None:
            self.hosted.done(spec.id, [sid for sid in spec.hosted if sid])

    # ------------------------------------------------------------------ events (arena.eventseats)
    def available(self, name: str) -> bool:
        """Whether ``name`` is signed in and in no game: an event may seat it now. Read from
        the event's thread too (one dictionary look-up each)."""
        k = name.lower()
        return k in self.online and k not in self.playing

    def is_online(self, name: str) -> bool:
        return name.lower() in self.online

    def seat_for_event(self, name: str, ready: dict[str, Any]) -> bool:
        """Send ``name`` the ``game_ready`` of its event game (its seeks and challenges go: one
        game at a time); False if it is gone or in another game."""
        k = name.lower()
        entry = self.online.get(k)
        if entry is None or k in self.playing:
            return False
        self.playing[k] = ready["game"]
        entry.seeks.clear()
        for c in self.book.drop(entry.account.name):
            self.tell_closed(c.accounts, c.id, "accepted_elsewhere", None)
        self.host.send(entry.sess, ready)
        return True

    def unseat_from_event(self, name: str, game: str, over: dict[str, Any] | None) -> None:
        """``name``'s event game is over: free again (before it hears ``game_over``)."""
        k = name.lower()
        if self.playing.get(k) == game:
            del self.playing[k]
        if over is not None:
            self.send(name, over)

    def no_show(self, name: str) -> None:
        """A cooldown for an account that did not come to its game: 30 s, doubling for each
        further no-show (counted in the store, so a restart of the arena forgets none)."""
        try:
            self.store.no_show(name, self.now_ms(), self.cfg.cooldown_ms, self.cfg.max_cooldown_ms)
        except StoreError:
            log.warning("arena: no cooldown for %s (no such account)", name)
