"""Connected accounts in an arena event: seated through the arena's front, not a gateway.

An event (:mod:`arena.events`) is a tournament, and an account without an active hosted bot
plays in it as the tournament's ``remote`` participant. A tournament seats a remote bot
through its gateway (:class:`competition.tournament.gateway.Gateway`), which the bot must
connect to with a token handed out beforehand. An arena account is already connected, to
the front, and its client (the SDK's ``ArenaClient``, ``okgin bot --arena``, the TUI) plays
whatever ``game_ready`` it is sent. So :class:`EventSeats` stands in for the gateway, with
its interface, in the event's runner (``RunOptions.gateway``):

- **present** (``is_connected``) = signed in at the front and in no game; an account away
  longer than the event's ``no_show_s`` (the arena's ``show_up_ms``) forfeits the game
  (termination ``no_show``), as in any tournament; an account in another game is not away;
- **attach** (a game's seat) = ``game_ready`` through the front (the event referee's
  endpoint, the seat token, unrated), sent on the arena's loop
  (:meth:`arena.desk.ArenaDesk.seat_for_event`); the client plays at that referee, on a
  connection of its own, as at a shard. An account plays one game at a time (its client
  does): a game that comes while it plays another (the runner plays several games at once)
  waits until that one ended, and the game's other seats wait at their table (no clock runs
  before every seat is taken). An account that is not signed in for ``no_show_s`` meanwhile
  has that seat resigned (:func:`competition.tournament.link.resign_seat`): it loses it.
  A game **claims** all its connected accounts at once before any of them is sent it
  (:attr:`EventSeats.claims`), and waits while one of them is claimed by another game:
  otherwise two games of the same two accounts, played at once, could each seat one of them
  and wait for ever for the other (each account busy in the other game, both signed in, so
  no no-show ever came);
- **detach** (the game ended) = ``game_over`` with the result read from the event referee's
  journal (:func:`arena.shards.result_from_journal`), no rating (event games are the event's).

Why safe: the client talks to the event's referee with its seat's token only, so it sees
what its seat may see, exactly as at a shard; the deals of its games are its own
(``remote_duplicate`` stays false: never a duplicate deal for a connected player), and the
event's secret and seeds are revealed only when the event ends.

The runner runs in a thread of its own (:func:`arena.events.in_thread`); the desk lives on
the arena's loop. Every call into the desk goes through that loop
(``call_soon_threadsafe``), except the presence checks, which are single dictionary reads.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import zmq.asyncio

from competition.tournament.gateway import Gateway
from competition.tournament.link import CurveClient, resign_seat
from competition.tournament.records import find_journal

from .shards import result_from_journal, seat_result

if TYPE_CHECKING:
    from .desk import ArenaDesk

__all__ = ["POLL_S", "EventSeats"]

POLL_S = 0.2  # how often a runner waiting for an account looks again


class EventSeats(Gateway):
    """The arena's stand-in for a tournament gateway (module doc). ``ready(name, table,
    endpoint, token, seat, seats)`` builds an account's ``game_ready``; ``journals`` is the
    event's run directory, whose ``journals-*`` hold its games' journals."""

    def __init__(self, ctx: zmq.asyncio.Context, tokens: dict[str, str], desk: ArenaDesk,
                 loop: asyncio.AbstractEventLoop, ready: Callable[..., dict[str, Any]], journals: Path,
                 no_show_s: float) -> None:
        super().__init__(ctx, "tcp://127.0.0.1:0", tokens)  # never bound: start() opens no socket
        self.desk = desk
        self.arena_loop = loop
        self.ready = ready
        self.journals = journals
        self.opened = time.monotonic()
        self.seen: dict[str, float] = {}  # name -> when it was last seen signed in
        self.attached: dict[tuple[str, str], tuple[int, int]] = {}  # (name, table) -> (seat, seats)
        self.busy: set[str] = set()  # accounts sent a game that has not ended (one at a time)
        self.no_show_s = no_show_s
        self.resigns: set[asyncio.Task[str]] = set()  # seats of accounts that were gone, being resigned
        self.claims: dict[str, str] = {}  # connected account -> the table (game) it is kept for

    async def start(self) -> str:
        return ""

    async def close(self, reason: str = "the event is over") -> None:
        for name, table in list(self.attached):
            await self.detach(name, table)
        for t in list(self.resigns):
            t.cancel()

    def is_connected(self, name: str) -> bool:
        if self.desk.is_online(name):
            self.seen[name] = time.monotonic()
        return name not in self.busy and self.desk.available(name)

    def absent_for(self, name: str) -> float:
        """0 while signed in (even in another game: that is no absence), else the seconds
        since it was last seen (or since the event's start)."""
        if self.desk.is_online(name):
            self.seen[name] = time.monotonic()
            return 0.0
        return time.monotonic() - self.seen.get(name, self.opened)

    async def wait_connected(self, name: str) -> None:
        while not self.is_connected(name):
            await asyncio.sleep(POLL_S)

    def on_arena(self, fn: Callable[..., Any], *args: Any) -> concurrent.futures.Future[Any]:
        """``fn(*args)`` on the arena's loop; its result as a future this thread can await."""
        fut: concurrent.futures.Future[Any] = concurrent.futures.Future()

        def run() -> None:
            try:
                fut.set_result(fn(*args))
            except BaseException as e:  # handed to the waiting thread
                fut.set_exception(e)

        self.arena_loop.call_soon_threadsafe(run)
        return fut

    async def attach(self, name: str, endpoint: str, seat_token: str, table: str,
                     curve: CurveClient | None = None, seat: int = 0, seats: Sequence[str] = ()) -> None:
        """Send ``name`` its event game's ``game_ready`` once it is free (module doc); if it
        is not signed in for ``no_show_s`` meanwhile, resign its seat."""
        msg = self.ready(name, table, endpoint, seat_token, seat, tuple(seats))
        connected = {s for s in seats if s in self.remotes} | {name}
        while True:
            self.claim(table, connected)
            if self.claims.get(name) == table and name not in self.busy and self.desk.available(name):
                self.busy.add(name)
                try:
                    ok = await asyncio.wrap_future(self.on_arena(self.desk.seat_for_event, name, msg))
                except RuntimeError:  # the arena's loop is closed: the arena stopped
                    ok = False
                if ok:
                    self.attached[(name, table)] = (seat, len(seats))
                    return
                self.busy.discard(name)
            if self.absent_for(name) >= self.no_show_s:
                self.release(name, table)
                task = asyncio.ensure_future(resign_seat(self.ctx, endpoint, seat_token, table, curve=curve))
                self.resigns.add(task)
                task.add_done_callback(self.resigns.discard)
                return
            await asyncio.sleep(POLL_S)

    def claim(self, table: str, accounts: set[str]) -> None:
        """Keep ``accounts`` for ``table`` if none of them is kept for another game: all or
        none, so that no two games each hold one account the other waits for (module doc).
        The runner's coroutines share one thread: no lock is needed."""
        if all(self.claims.get(a, table) == table for a in accounts):
            for a in accounts:
                self.claims[a] = table

    def release(self, name: str, table: str) -> None:
        if self.claims.get(name) == table:
            del self.claims[name]

    async def detach(self, name: str, table: str) -> None:
        """The game ended (or was stopped): free the account and tell it the result."""
        self.release(name, table)
        got = self.attached.pop((name, table), None)
        if got is None:
            return
        self.busy.discard(name)
        seat, n = got
        over = self.game_over(table, seat, n)
        try:
            await asyncio.wrap_future(self.on_arena(self.desk.unseat_from_event, name, table, over))
        except RuntimeError:
            pass

    def game_over(self, table: str, seat: int, n: int) -> dict[str, Any] | None:
        """``game_over`` for ``seat`` from the game's journal (None if it has no end: the
        client then stops waiting for one after a while)."""
        for d in sorted(self.journals.glob("journals-*")):
            path = find_journal(d, table)
            res = result_from_journal(path, int(time.time() * 1000)) if path is not None else None
            if res is not None and len(res.scores) == n:
                return {"type": "game_over", "game": table, "result": seat_result(res, seat, n),
                        "scores": list(res.scores), "termination": res.termination, "rating": None}
        return None
