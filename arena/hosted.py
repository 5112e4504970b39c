"""Hosted bots: the arena plays submitted bots itself, as a tournament plays its participants.

A submission (:mod:`arena.submissions`) is a tournament ``command`` participant, and its
games are tournament games: each is played by the tournament's own executor
(:class:`competition.tournament.local.LocalExecutor` on this host, or
:class:`competition.cluster.tournament.DaskExecutor` on a Dask cluster with ``okgin arena
--dask ADDRESS``), so a hosted bot runs exactly as a participant does: a fresh process in a
fresh bubblewrap sandbox per game, at its seat's door, no network, a cgroup over the whole
sandbox, its log bounded and its token redacted. There is no second sandbox and no second
game loop here: this module decides **which** games are played and records them in the
arena's store.

:class:`HostedLeague`, one per arena, on the arena's event loop:

1. **Validation.** A pending submission plays one game against itself (its two seats are
   two processes of the same bot, in two sandboxes), unrated and not stored as an arena
   game. It becomes "active" if that game ended normally; otherwise "failed" with the
   reason (:func:`failure`: crash, illegal move, timeout, protocol error), which
   ``okgin arena submissions`` and :meth:`arena.store.Store.submissions` show.
2. **Rated games.** Active bots that are not playing are paired by rating with
   :func:`arena.matching.pair`, exactly as connected players' seeks are (the gap widens
   with the wait). A pair plays one deal in **both seatings** (duplicate deals): two rated
   games with the same seed, seats swapped, recorded after both ended. Why hosted bots may
   have them and connected bots never do: a hosted bot starts fresh in a new sandbox for
   each game and has no channel out (no network, no file that outlives its game), so it
   cannot carry the first seating's cards into the second; a connected bot could.
3. **Budget.** At most ``hosted_games_per_hour`` hosted games are seated in any trailing
   hour (counted in the store, :meth:`arena.store.Store.count_hosted_games`, so a restart
   does not reset it), and at most ``hosted_concurrency`` games run at once.
4. **Connected accounts.** Idle active bots also seek connected accounts (:meth:`HostedLeague.seeks`,
   read by the desk's pairing pass: rated, in every clock preset the arena offers); a
   connected account paired with one plays it at a shard, where a fresh process of the bot
   in a fresh sandbox takes the hosted seat through its door (:mod:`arena.shardbots`,
   :meth:`HostedLeague.seat`). Such a game has a fresh deal of the shard's own, never a
   duplicate one, and counts in the budget and the concurrency like any hosted game.
5. **Failures.** An attempt that was not played to its end (a referee died; a Dask worker
   was lost, which Dask itself replays and the executor counts) is played again, up to
   :data:`MAX_ATTEMPTS`; the game's stored attempts say how many it took. A game that
   never ends is void (no rating change), as is a game in progress when the arena stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from competition.cluster.tournament import DaskExecutor
from competition.tournament.config import ConfigError as TournamentConfigError
from competition.tournament.config import TournamentConfig, parse_config
from competition.tournament.executor import NoReferee, Outcome, RunOptions, StartError, StopRun
from competition.tournament.local import LocalExecutor
from competition.tournament.schedule import ScheduledGame
from competition.tournament.store import GameResult as TournamentResult
from okgin.rng import new_seed
from referee.private import private_dir

from .config import ArenaConfig
from .events import run_event
from .matching import Seek, pair
from .shardbots import SeatedBots, ShardBots
from .store import GameResult, NewGame, Store, StoreError, Submission

if TYPE_CHECKING:
    import zmq.asyncio

    from competition.tournament.link import CurveClient

    from .desk import ArenaDesk
    from .shards import GameSpec

__all__ = ["HOUR_MS", "MAX_ATTEMPTS", "VALIDATION_BASE", "HostedLeague", "failure", "participant_name", "to_arena_result"]

log = logging.getLogger("okgin.arena.hosted")

HOUR_MS = 3_600_000
MAX_ATTEMPTS = 3  # a game not played to its end is tried this many times, then void
VALIDATION_BASE = 1_000_000_000  # validation games' schedule indices (table names): above every deal's
SEATS = {"oklahoma": 2, "box": 3}
#: The seatings a deal between hosted bots is played in (``order[seat]`` = the bot's index in
#: the group): Oklahoma Gin's two; for Gin in the Box the three rotations, so that each bot
#: holds every seat of the deal once (the tournament's six seatings would cost twice the budget
#: for the same balance of seats).
DEAL_SEATINGS = {"oklahoma": ((0, 1), (1, 0)), "box": ((0, 1, 2), (1, 2, 0), (2, 0, 1))}
LABELS = {"crash": "crash", "illegal": "illegal move", "timeout": "timeout", "disconnect": "protocol error"}


def participant_name(sub: Submission, twin: int = 0) -> str:
    """A submission's name as a participant (tournament names: 40 characters of
    ``[A-Za-z0-9_.+-]``): ``ACCOUNT+N``, and ``ACCOUNT+N+v`` (``ACCOUNT+N+w``) for its second
    (third) seat when it plays its validation game against itself."""
    base = f"{sub.account[:30]}+{sub.id}"
    return base + ("", "+v", "+w")[int(twin)]


def failure(g: TournamentResult) -> str | None:
    """Why a validation game failed the bot, or None if it passed (an end nobody caused): one of
    crash, illegal move, timeout, protocol error (or the termination), then the
    runner's own sentence (the exit status and the bot's last words for a crash)."""
    if g.culprit is None and g.termination in ("normal", "hand_limit"):
        return None  # played to its end: a score reached, or the game limit (docs/rules.md §3.7.1)
    label = LABELS.get(g.termination, g.termination)
    if g.termination == "timeout" and g.hands == 0 and "made no move" in g.reason:
        label = "protocol error"  # it never took its seat: no hello the referee accepted
        return f"{label}: it never took its seat (no valid hello within the start allowance): {g.reason}"
    return f"{label}: {g.reason}"


def to_arena_result(g: TournamentResult) -> GameResult:
    """A tournament game's result as the arena stores it (seats instead of names)."""
    return GameResult(
        winner=None if g.winner is None else g.seats.index(g.winner), scores=tuple(g.scores), termination=g.termination,
        finished_ms=int(g.finished * 1000), at_fault=None if g.culprit is None else g.seats.index(g.culprit),
        record=g.record or None, journal=f"{g.referee} {g.table_id}".strip(), seed_hash=g.seed_hash, seed=g.seed,
        salt=g.salt)


class HostedLog:
    """The executors' event log (:class:`competition.tournament.executor.EventLog`): the
    arena has no results file; events go to its log and the last ones are kept for tests
    and operators. ``path`` names a file the sandbox hides (it never exists)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.events: list[tuple[str, str, int | None]] = []

    def log_event(self, kind: str, detail: str, game: int | None = None) -> None:
        self.events = [*self.events[-199:], (kind, detail, game)]
        log.info("hosted %s: %s", kind, detail)
        if kind in ("replay", "referee-died", "dask"):
            print(f"okgin arena: hosted {kind}: {detail}", file=sys.stderr, flush=True)


class HostedLeague:
    """The arena's hosted bots (module doc). ``start`` it on the arena's loop; ``stop``
    voids the games in progress."""

    def __init__(self, cfg: ArenaConfig, store: Store, now_ms: Callable[[], int]) -> None:
        self.cfg = cfg
        self.store = store
        self.now_ms = now_ms
        self.workdir = private_dir(Path(cfg.state) / "hosted")
        self.log = HostedLog(self.workdir / "events")
        # One executor per variant (a tournament config has one variant), made when first needed.
        self.executors: dict[str, LocalExecutor | DaskExecutor] = {}
        self.rosters: dict[str, tuple[int, ...]] = {}  # submission ids in each executor's config
        self.variant_of: dict[int, str] = {}  # submission id -> its variant (of those playing)
        self.playing: dict[int, int] = {}  # submission id -> its games in progress
        self.idle_since: dict[int, int] = {}  # submission id -> when it last finished a game (its seek's age)
        self.running = 0  # games in progress
        self.tasks: set[asyncio.Task[None]] = set()
        self.loop_task: asyncio.Task[None] | None = None
        self.wake = asyncio.Event()
        self.stopping = False
        self.blocked: set[str] = set()  # what the budget held back ("a deal", "a connected seek"): said once per stretch
        self.deals = itertools.count(1)
        self.error: str | None = None
        self.event_task: asyncio.Task[Any] | None = None  # the event running now (arena.events), one at a time
        self.shard_bots = ShardBots(self.workdir)  # hosted seats of games against connected accounts
        self.desk_games: set[str] = set()  # those games, seated by the desk and not over
        self.desk: ArenaDesk | None = None  # the front's, which seats events' connected accounts (wired by the arena)

    # -- life -----------------------------------------------------------------------------------

    async def start(self) -> None:
        """Settle what a previous run left (a validation in progress is pending again),
        then start pairing. A sandbox that cannot start here turns hosted games off, said
        on stderr (hosted bots never run unconfined)."""
        for sub in self.store.submissions("validating"):
            self.store.set_submission(sub.id, "pending", "the arena restarted during its validation", self.now_ms())
        # Deal numbers name tables and logs: never one a previous run used.
        self.deals = itertools.count(self.store.count_hosted_games(0) + 1)
        await asyncio.to_thread(self.shard_bots.start)
        if self.shard_bots.error is not None:
            print(f"okgin arena: hosted bots play no connected account: {self.shard_bots.error}", file=sys.stderr,
                  flush=True)
        self.loop_task = asyncio.ensure_future(self.run())

    async def stop(self) -> None:
        self.stopping = True
        self.wake.set()
        for ex in self.executors.values():
            ex.abort("the arena is stopping")
        if self.event_task is not None and not self.event_task.done():
            self.event_task.cancel()  # marked failed (arena.events)
            with contextlib.suppress(BaseException):
                await self.event_task
        if self.loop_task is not None:
            self.loop_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.loop_task
        if self.tasks:
            await asyncio.gather(*list(self.tasks), return_exceptions=True)
        for ex in self.executors.values():
            with contextlib.suppress(Exception):
                await ex.close()
        self.executors.clear()

    async def run(self) -> None:
        while not self.stopping:
            try:
                await self.tick()
            except (StartError, StopRun) as e:
                self.error = str(e)
                print(f"okgin arena: hosted bots are off: {e}", file=sys.stderr, flush=True)
                return
            except Exception:
                log.exception("hosted: a pairing pass failed")
            self.wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.wake.wait(), max(0.05, self.cfg.match_every_ms / 1000))

    # -- the executor and its participants -------------------------------------------------------

    def tournament_config(self, subs: Sequence[Submission], variant: str = "oklahoma") -> TournamentConfig:
        """The tournament config every hosted game of ``variant`` is played with: each
        submission once per seat of the variant (itself and its validation twins), the arena's
        rules, the hosted clock preset."""
        clock = self.cfg.clocks[self.cfg.hosted_clock]
        parts: list[dict[str, Any]] = []
        for sub in subs:
            for twin in range(SEATS[variant]):
                parts.append({"name": participant_name(sub, twin), "command": list(sub.command), "cwd": sub.path,
                              "dir": sub.path})
        data = {
            # Table and journal names: "hosted-INDEX-ATTEMPT" (and "hostedbox-...") as before the Box.
            "tournament": {"name": "hosted" if variant == "oklahoma" else f"hosted{variant}",
                           "concurrency": self.cfg.hosted_concurrency, "referees": 1,
                           **({"format": "box"} if variant == "box" else {})},
            "rules": {**self.cfg.rules, "variant": variant},
            "clock": {"move_ms": clock.move_ms, "bank_ms": clock.bank_ms, "increment_ms": clock.increment_ms,
                      "grace_ms": clock.grace_ms},
            "participant": parts,
        }
        try:
            return parse_config(data, self.workdir)
        except TournamentConfigError as e:  # a stored command the tournament parser refuses now
            raise StoreError(str(e)) from None

    async def ensure(self, subs: Sequence[Submission], variant: str = "oklahoma") -> LocalExecutor | DaskExecutor:
        """The executor of ``variant``, playing with a config that holds ``subs`` and every
        submission of that variant in a game now (a game in progress looks its participants up)."""
        for s in subs:
            self.variant_of[s.id] = variant
        ids = tuple(sorted({s.id for s in subs} | {i for i in self.playing if self.variant_of.get(i) == variant}))
        executor = self.executors.get(variant)
        if executor is not None and set(ids) <= set(self.rosters.get(variant, ())):
            return executor
        known = {s.id: s for s in subs}
        for sid in ids:
            if sid not in known:
                got = self.store.submission(sid)
                if got is not None:
                    known[sid] = got
        cfg = self.tournament_config([known[i] for i in sorted(known)], variant)
        if executor is None:
            opts = RunOptions(referees=1, progress=False, concurrency=self.cfg.hosted_concurrency,
                              dask=self.cfg.dask, dask_tls=self.cfg.dask_tls)
            run = private_dir(self.workdir / f"run-{variant}-{self.now_ms()}")
            if self.cfg.dask:
                dx = DaskExecutor(cfg, opts, self.log, run)
                await dx.connect()
                executor = dx
            else:
                lx = LocalExecutor(cfg, opts, self.log, run)
                try:
                    await lx.start()
                except BaseException:
                    await lx.close()
                    raise
                executor = lx
            self.executors[variant] = executor
        else:
            executor.use_config(cfg)
        self.rosters[variant] = tuple(sorted(known))
        return executor

    # -- what to play next ----------------------------------------------------------------------

    def free(self) -> int:
        return max(0, self.cfg.hosted_concurrency - self.running)

    def seated(self, now: int) -> int:
        """Hosted games seated in the trailing hour: the store's count, and the desk's games
        not stored yet (their shard has not made the table)."""
        unstored = sum(1 for g in self.desk_games if self.store.game(g) is None)
        return self.store.count_hosted_games(now - HOUR_MS) + unstored

    def over_budget(self, now: int, games: int, what: str = "a deal") -> bool:
        """Whether seating ``games`` more now would pass ``hosted_games_per_hour`` (said once
        per stretch on stderr, saying ``what`` waits)."""
        seated = self.seated(now)
        if seated + games <= self.cfg.hosted_games_per_hour:
            self.blocked.discard(what)
            return False
        if what not in self.blocked:
            self.blocked.add(what)
            print(f"okgin arena: hosted budget reached: {seated} hosted game(s) seated in the last hour, "
                  f"{self.cfg.hosted_games_per_hour} allowed (hosted_games_per_hour): {what} waits", file=sys.stderr,
                  flush=True)
        return True

    # -- games against connected accounts (the desk pairs them; arena.shardbots plays the seat) ----

    def seeks(self, now: int) -> dict[str, tuple[Seek, int]]:
        """A rated seek of every idle active bot in every clock preset, by seek id, with its
        submission id; none when hosted bots are off, the budget or the concurrency is spent,
        or there is no sandbox to run them in."""
        if self.stopping or self.error is not None or not self.shard_bots.ready or self.free() < 1 \
                or self.cfg.hosted_games_per_hour <= 0 or self.over_budget(now, 1, "a connected account's seek"):
            return {}
        out: dict[str, tuple[Seek, int]] = {}
        for sub in self.store.submissions("active"):
            acct = self.store.account(sub.account)
            if sub.id in self.playing or acct is None or acct.banned:
                continue
            rating = self.store.rating(sub.account, sub.variant).rating
            since = self.idle_since.get(sub.id, sub.updated_ms)
            for clock in self.cfg.clocks:
                key = f"h{sub.id}-{clock}"
                out[key] = (Seek(key, sub.account, sub.variant, clock, True, rating, since), sub.id)
        return out

    def take(self, game: str, sids: Sequence[int]) -> bool:
        """The desk seats these bots in ``game``, if the concurrency and the budget allow."""
        if self.stopping or self.free() < 1 or any(s in self.playing for s in sids) \
                or self.over_budget(self.now_ms(), 1, "a connected account's seek"):
            return False
        self.running += 1
        for sid in sids:
            self.playing[sid] = self.playing.get(sid, 0) + 1
        self.desk_games.add(game)
        return True

    def done(self, game: str, sids: Sequence[int]) -> None:
        if game not in self.desk_games:
            return
        self.desk_games.discard(game)
        self.running -= 1
        now = self.now_ms()
        for sid in sids:
            n = self.playing.get(sid, 0) - 1
            if n > 0:
                self.playing[sid] = n
            else:
                self.playing.pop(sid, None)
            self.idle_since[sid] = now
        self.wake.set()

    async def seat(self, spec: GameSpec, endpoint: str, tokens: list[str], doors: list[str], table: str,
                   over: Callable[[], bool], ctx: zmq.asyncio.Context, curve: CurveClient | None) -> SeatedBots:
        """Start the hosted bots of ``spec``'s hosted seats at the shard (arena.shardbots)."""
        subs = {seat: self.store.submission(sid) for seat, sid in enumerate(spec.hosted) if sid}
        missing = [seat for seat, sub in subs.items() if sub is None]
        if missing:
            raise StoreError(f"game {spec.id}: no submission for seat(s) {missing}")
        known = [sub for sub in subs.values() if sub is not None]
        cfg = self.tournament_config(known, spec.variant)
        names = {seat: participant_name(sub) for seat, sub in subs.items() if sub is not None}
        return await self.shard_bots.seat(cfg, names, endpoint, tokens, doors, table, over, ctx, curve)

    async def unseat(self, seated: SeatedBots, natural: bool) -> None:
        await self.shard_bots.end(seated, natural)

    def need(self, variant: str) -> int:
        """Games a deal of ``variant`` needs at once (its seatings; a validation needs one), or
        the whole concurrency if smaller."""
        return min(len(DEAL_SEATINGS[variant]), self.cfg.hosted_concurrency)

    async def tick(self) -> None:
        """One pass: start a due event, validate pending submissions, then pair active bots
        within the budget."""
        if self.stopping:
            return
        if self.event_task is None or self.event_task.done():
            due = [e for e in self.store.events("scheduled") if e.start_ms <= self.now_ms()]
            if due:
                self.event_task = asyncio.ensure_future(run_event(min(due, key=lambda e: (e.start_ms, e.id)), self.store,
                                                                  self.cfg, self.desk))
        for sub in reversed(self.store.submissions("pending")):  # the oldest first
            if self.free() < self.need(sub.variant):
                break
            await self.ensure([sub], sub.variant)
            self.store.set_submission(sub.id, "validating", None, self.now_ms())
            self.spawn(self.validate(sub), [sub.id] * SEATS[sub.variant], self.need(sub.variant))
        if self.cfg.hosted_games_per_hour <= 0 or self.free() < min(self.need(v) for v in SEATS):
            return
        now = self.now_ms()
        seeks = []
        for sub in self.store.submissions("active"):
            acct = self.store.account(sub.account)
            if sub.id in self.playing or acct is None or acct.banned:
                continue
            rating = self.store.rating(sub.account, sub.variant).rating
            seeks.append(Seek(str(sub.id), sub.account, sub.variant, self.cfg.hosted_clock, True, rating,
                              self.idle_since.get(sub.id, sub.updated_ms)))
        pairings = pair(seeks, now, self.cfg.widen_every_ms)
        if not pairings:
            self.blocked.discard("a deal")
            return
        for p in pairings:
            deal = DEAL_SEATINGS[p.variant]
            if self.free() < self.need(p.variant):
                continue
            if self.over_budget(now, len(deal)):
                return
            subs = [s for s in (self.store.submission(int(x.id)) for x in p.seeks) if s is not None]
            if len(subs) != SEATS[p.variant]:
                continue
            await self.ensure(subs, p.variant)
            self.seat_deal(subs, now, p.variant)

    def spawn(self, coro: Any, sids: Sequence[int], games: int) -> None:
        self.running += games
        for sid in sids:
            self.playing[sid] = self.playing.get(sid, 0) + 1
        task = asyncio.ensure_future(coro)
        self.tasks.add(task)

        def done(t: asyncio.Task[None]) -> None:
            self.tasks.discard(t)
            self.running -= games
            now = self.now_ms()
            for sid in sids:
                n = self.playing.get(sid, 0) - 1
                if n > 0:
                    self.playing[sid] = n
                else:
                    self.playing.pop(sid, None)
                self.idle_since[sid] = now
            if not t.cancelled() and t.exception() is not None:
                log.error("hosted: a game task failed", exc_info=t.exception())
            self.wake.set()

        task.add_done_callback(done)

    # -- playing --------------------------------------------------------------------------------

    async def attempts(self, sg: ScheduledGame, variant: str = "oklahoma") -> TournamentResult | str:
        """Play ``sg`` (a game of ``variant``) until it is played to its end
        (:data:`MAX_ATTEMPTS` at most): its result, or why it could not be played."""
        why = "not played"
        for attempt in range(1, MAX_ATTEMPTS + 1):
            executor = self.executors.get(variant)
            if self.stopping or executor is None:
                return "the arena is stopping"
            try:
                out, where = await executor.play_attempt(sg, attempt, None)
            except (NoReferee, StopRun) as e:
                return str(e)
            except Exception as e:  # a bot that could not even be launched, a link that broke
                log.exception("hosted: %s attempt %d", sg.key, attempt)
                return f"{type(e).__name__}: {e}"
            if isinstance(out, TournamentResult):
                return out
            assert isinstance(out, Outcome)
            why = out.why
            self.log.log_event("replay" if out.replay else "stopped", f"{sg.key} attempt {attempt} on {where}: {why}",
                               game=sg.index)
            if not out.replay:
                return why
        return f"not played to its end in {MAX_ATTEMPTS} attempts: {why}"

    async def validate(self, sub: Submission) -> None:
        """The submission's validation game against itself (a process of it at every seat of
        its variant); then active or failed."""
        names = tuple(participant_name(sub, twin) for twin in range(SEATS[sub.variant]))
        sg = ScheduledGame(index=VALIDATION_BASE + sub.id, pairing=names, deal=0, seating=0, seats=names, seed=new_seed())
        out = await self.attempts(sg, sub.variant)
        now = self.now_ms()
        if isinstance(out, str):
            if not self.stopping:  # not the bot's fault: it waits for another try
                self.store.set_submission(sub.id, "pending", f"its validation game could not be played: {out}", now)
            else:
                self.store.set_submission(sub.id, "pending", "the arena stopped during its validation", now)
            return
        why = failure(out)
        if why is None:
            self.store.set_submission(sub.id, "active", None, now)
            print(f"okgin arena: hosted bot #{sub.id} of {sub.account} passed its validation game", file=sys.stderr,
                  flush=True)
        else:
            self.store.set_submission(sub.id, "failed", why, now)
            print(f"okgin arena: hosted bot #{sub.id} of {sub.account} failed its validation game: {why}", file=sys.stderr,
                  flush=True)

    def seat_deal(self, subs: Sequence[Submission], now: int, variant: str = "oklahoma") -> None:
        """Seat one deal of ``subs`` in each of :data:`DEAL_SEATINGS` (stored as games in play
        at once, so the budget counts them) and play it."""
        deal = next(self.deals)
        seed = new_seed()
        names = tuple(participant_name(s) for s in subs)
        clock = self.cfg.clocks[self.cfg.hosted_clock].to_wire()
        games: list[tuple[str, ScheduledGame, tuple[int, ...]]] = []
        for seating, order in enumerate(DEAL_SEATINGS[variant]):
            sg = ScheduledGame(index=len(subs) * deal + seating, pairing=names, deal=deal, seating=seating,
                               seats=tuple(names[i] for i in order), seed=seed)
            game_id = f"hosted-{deal}-{seating + 1}"
            seat_subs = tuple(subs[i].id for i in order)
            self.store.add_hosted_game(NewGame(game_id, variant, True, tuple(subs[i].account for i in order), clock, "hosted",
                                               f"hosted-{sg.index}", now), seat_subs, str(deal))
            games.append((game_id, sg, seat_subs))
        self.spawn(self.play_deal(games, variant), [s.id for s in subs], len(games))

    async def play_deal(self, games: list[tuple[str, ScheduledGame, tuple[int, ...]]], variant: str = "oklahoma") -> None:
        """Every seating of one deal at once; each recorded once all have ended (the deal's
        seed is in each game's record)."""
        outs = await asyncio.gather(*(self.attempts(sg, variant) for _, sg, _ in games), return_exceptions=True)
        for (game_id, sg, _), out in zip(games, outs, strict=True):
            now = self.now_ms()
            if isinstance(out, TournamentResult):
                change = self.store.finish_hosted_game(game_id, to_arena_result(out), out.attempts)
                if change is not None:
                    log.info("hosted %s: %s", game_id, out.reason)
            else:
                why = out if isinstance(out, str) else f"{type(out).__name__}: {out}"
                self.store.void_game(game_id, why[:200], now)
                self.log.log_event("void", f"{game_id} ({sg.key}): {why}", game=sg.index)
