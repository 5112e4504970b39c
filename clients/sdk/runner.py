"""Drive a :class:`~clients.bot.Bot` over the network, hook for hook like in-process.

:class:`BotDriver` is the protocol-to-bot translation, with no I/O of its own: it takes
the typed messages of one table and returns the messages to send. It calls the bot's
hooks in the order :func:`clients.local.play_local` calls them, so a bot plays the same
moves through a referee as in-process for the same seeds (``okgin match
--via-referee`` is checked against that by a test):

=================  ===========================================================
referee sends      the bot sees
=================  ===========================================================
``game_start``     ``on_game_start(seat, rules, num_seats)``, ``on_hand_start(view)``
``prompt``         ``choose(view, legal)`` -> ``act`` (a re-sent prompt, same
                   ``seq``, gets the same answer without asking the bot again)
``advise_prompt``  ``advise(view, captain_legal)`` -> ``advise`` (once per ``seq``)
``advice``         ``on_advice(advice, view)`` (before ``choose`` of that ``seq``)
``hand_end``       ``on_hand_end(result, view)``, then ``on_hand_start(view)`` of
                   the next deal unless the game is over
``game_end``       ``on_game_end(final, view)``
=================  ===========================================================

Advice order: in-process the sitter advises before the captain chooses; over the
network the captain's prompt and the sitter's ``advise_prompt`` leave together and the
advice arrives later. A captain whose bot overrides ``on_advice`` therefore waits up to
``advice_wait`` seconds for the advice of that ``seq`` before choosing (and sees it in
``view.advice``, as in-process). Bots that ignore advice never wait.

:func:`run_bot` is the blocking runner behind ``okgin bot``: it connects, sits down (a
named table, the quick-match queue, or a reserved seat token), and plays ``games``
games. The bot's thinking runs in a worker thread while this thread keeps the socket's
heartbeats going, so a slow bot is never mistaken for a dead connection.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import itertools
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import zmq

from okgin import Action, RuleSet, View

from ..bot import Bot
from ..local import overrides
from . import requests as rq
from .client import Client
from .entropy import Entropy
from .errors import ConnectionLost, SDKError, SessionTaken
from .messages import (
    AdviceReceived,
    AdvisePrompt,
    EntropyRequest,
    ErrorMessage,
    GameEnd,
    GameStart,
    HandEnd,
    Message,
    Prompt,
    Seated,
    Shutdown,
    Snapshot,
    TableClosed,
)

__all__ = [
    "BotDriver", "BotFactory", "BotWorker", "ErrorHook", "Inbox", "PromptHook", "drive", "play_reserved", "run_bot", "serve",
]

ErrorHook = Callable[[ErrorMessage], None]


def _print_error(e: ErrorMessage) -> None:
    print(f"okgin bot: the referee refused a request: {e.name} ({e.code}): {e.message}", file=sys.stderr)


class BotDriver:
    """Translate one seat's messages into a bot's hook calls and answers (no I/O)."""

    def __init__(self, bot: Bot, on_error: ErrorHook | None = _print_error) -> None:
        self.bot = bot
        self.on_error = on_error
        self.table: str | None = None
        self.seat: int | None = None
        self.rules: RuleSet | None = None
        self.num_seats = 0
        self.game = 0
        self.games_done = 0
        self.last_end: GameEnd | None = None
        self.closed = False
        self._hand_started: tuple[int, int] | None = None
        self._answered: dict[int, Action] = {}
        self._advised: set[int] = set()
        self._advice_seen: dict[int, AdviceReceived] = {}
        self.wants_advice = overrides(bot, "on_advice")
        self._want_start = overrides(bot, "on_hand_start")
        self._want_end = overrides(bot, "on_hand_end")

    # ------------------------------------------------------------------ helpers
    def _hand_start(self, view: View | None) -> None:
        if view is None or view.phase == "game_over":
            return
        key = (self.game, view.hand_number)
        if key != self._hand_started:
            self._hand_started = key
            if self._want_start:
                self.bot.on_hand_start(view)

    def mine(self, msg: Message) -> bool:
        """Is ``msg`` for this driver? Messages without a table are; a table's messages
        only once the driver knows its table, so the tail of a previous table
        (``table_closed`` after everyone left, say) never reaches the driver of the next
        game. What tells it the table: ``seated``, ``game_start``, or the snapshot of a
        seat of ours, which is all a session resumed by a new process gets (a bot
        restarted with its reserved token: the welcome, the snapshot, the pending
        prompt; no ``seated``, no ``game_start``)."""
        t = getattr(msg, "table", None)
        if t is None:
            return True
        if self.table is None:
            return isinstance(msg, Seated | GameStart) or (isinstance(msg, Snapshot) and msg.seat is not None)
        return t == self.table

    # ------------------------------------------------------------------ messages
    def handle(self, msg: Message) -> list[dict[str, Any]]:
        """React to one message; returns the messages to send (possibly none)."""
        if not self.mine(msg):
            return []
        if isinstance(msg, Seated):
            self.table, self.seat = msg.table, msg.seat
        elif isinstance(msg, GameStart):
            self.table, self.seat, self.rules, self.num_seats, self.game = msg.table, msg.seat, msg.rules, msg.num_seats, msg.game
            self._hand_started = None
            self._answered.clear()
            self._advised.clear()
            self._advice_seen.clear()
            assert msg.seat is not None
            self.bot.on_game_start(msg.seat, msg.rules, msg.num_seats)
            self._hand_start(msg.view)
        elif isinstance(msg, Snapshot):
            if msg.seat is not None:
                self.table, self.seat = msg.table, msg.seat
            # A game met first through a snapshot (a session resumed by a new process,
            # or a gateway's sync): start it for the bot as game_start would have.
            if self.rules is None and msg.status == "playing" and msg.seat is not None and msg.view is not None:
                self.rules, self.num_seats, self.game = msg.rules, msg.num_seats, msg.game
                self.bot.on_game_start(msg.seat, msg.rules, msg.num_seats)
                self._hand_start(msg.view)
        elif isinstance(msg, Prompt):
            return self._on_prompt(msg)
        elif isinstance(msg, AdvisePrompt):
            self._hand_start(msg.view)
            if msg.seq in self._advised:
                return []
            self._advised.add(msg.seq)
            adv = self.bot.advise(msg.view, msg.legal)
            if adv is None:
                return []
            action, text = adv
            return [rq.advise(msg.table, msg.seq, action, text or None)]
        elif isinstance(msg, AdviceReceived):
            self._advice_seen[msg.seq] = msg
        elif isinstance(msg, HandEnd):
            if self._want_end:
                self.bot.on_hand_end(msg.result, msg.view)
            self._hand_start(msg.view)
        elif isinstance(msg, GameEnd):
            self.bot.on_game_end(msg.final, msg.view if msg.view is not None else _empty_view(msg))
            self.games_done += 1
            self.last_end = msg
        elif isinstance(msg, ErrorMessage):
            # Races the protocol allows are not worth a word: an answer to a prompt
            # already withdrawn (stale_seq / not_your_turn), or advice that arrived
            # after the captain moved (stale_seq, or forbidden once the roles rotated).
            benign = msg.name in ("stale_seq", "not_your_turn") or (
                msg.request == "advise" and msg.name in ("forbidden", "no_game")
            )
            if self.on_error is not None and not benign:
                self.on_error(msg)
        elif isinstance(msg, TableClosed | Shutdown):
            self.closed = True
        return []

    def _on_prompt(self, msg: Prompt) -> list[dict[str, Any]]:
        self._hand_start(msg.view)
        if msg.error is None and msg.seq in self._answered:
            return [rq.act(msg.table, msg.seq, self._answered[msg.seq])]
        view = msg.view
        adv = self._advice_seen.pop(msg.seq, None)
        if adv is not None:
            # As in-process: the advice is recorded before the captain chooses, so the
            # view the captain chooses with shows it.
            # (A prompt re-sent after a resume may already show it, as its last entry;
            # an equal advice earlier in the hand is another seq's and does not count.)
            if not view.advice or view.advice[-1] != adv.advice:
                view = dataclasses.replace(view, advice=(*view.advice, adv.advice))
            if self.wants_advice:
                self.bot.on_advice(adv.advice, view)
        action = self.bot.choose(view, msg.legal)
        if not isinstance(action, Action):
            raise SDKError(f"bot {self.bot.name!r}: choose() returned {action!r}, not an okgin.Action")
        self._answered[msg.seq] = action
        return [rq.act(msg.table, msg.seq, action)]

    def answered(self, seq: int) -> bool:
        """Has the bot already chosen its answer to the prompt ``seq``?"""
        return seq in self._answered

    def has_advice(self, seq: int) -> bool:
        """Has the sitter's advice for the prompt ``seq`` reached this driver?"""
        return seq in self._advice_seen

    def waits_for_advice(self, msg: Message) -> bool:
        """Should the runner hold this prompt briefly for the sitter's advice?"""
        return (
            self.wants_advice
            and isinstance(msg, Prompt)
            and msg.view.variant == "box"
            and msg.seq not in self._advice_seen
            and msg.seq not in self._answered
            and msg.view.roles[msg.seat] == "captain"
        )


def _empty_view(msg: GameEnd) -> View:  # pragma: no cover - the referee always sends a view
    raise SDKError(f"game_end of table {msg.table} carries no view")


# ---------------------------------------------------------------------- blocking runner
class BotWorker:
    """Run bot code in a worker thread (``threaded``), or in the caller's.

    Either way the client's heartbeats go on meanwhile: they run on its own loop thread
    (:mod:`clients.sdk.client`). The worker still checks every beat that the session is
    not taken, so a bot deep in thought learns it at its next answer at the latest."""

    def __init__(self, client: Client, threaded: bool) -> None:
        self.client = client
        self.pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="okgin-bot") if threaded else None

    def call(self, fn: Callable[[Message], list[dict[str, Any]]], msg: Message) -> list[dict[str, Any]]:
        if self.pool is None:
            return fn(msg)
        fut = self.pool.submit(fn, msg)
        beat = max(0.01, min(1.0, self.client.heartbeat_s / 2))
        while True:
            try:
                return fut.result(timeout=beat)
            except concurrent.futures.TimeoutError:
                self.client.pump()

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)


class Inbox:
    """One connection's messages in order, with those read ahead while a bot waits held
    for later.

    Why: a bot that waits before it answers (for its sitter's advice, or for a person to
    catch up, as ``okgin play``'s house does) must keep reading the socket, or it would be
    taken for dead; what it reads meanwhile is handed out afterwards, in order. With a
    ``stop`` event every read and every wait ends within ``poll`` seconds of it being set.
    """

    def __init__(self, client: Client, stop: threading.Event | None = None, poll: float = 0.5) -> None:
        self.client = client
        self.stop = stop
        self.poll = poll
        self.held: list[Message] = []

    def stopped(self) -> bool:
        return self.stop is not None and self.stop.is_set()

    def next(self) -> Message | None:
        """The next message: a held one first, else one from the socket (None when none came)."""
        if self.held:
            return self.held.pop(0)
        return self.client.recv(timeout=None if self.stop is None else self.poll)

    def hold(self, until: Callable[[], bool], seconds: float | None) -> None:
        """Read and keep messages until ``until()`` is true, ``seconds`` have passed (None:
        no limit) or ``stop`` is set."""
        deadline = None if seconds is None else time.monotonic() + seconds
        while not self.stopped() and not until():
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return
            if self.stop is not None:
                left = min(0.1, self.poll) if left is None else min(0.1, left)
            m = self.client.recv(timeout=left)
            if m is not None:
                self.held.append(m)

    def has_advice(self, seq: int) -> bool:
        """Is the advice for the prompt ``seq`` among the held messages?"""
        return any(isinstance(m, AdviceReceived) and m.seq == seq for m in self.held)

    def take_advice(self, seq: int) -> list[AdviceReceived]:
        """Take the held advice for the prompt ``seq`` out of the queue (in order)."""
        got = [m for m in self.held if isinstance(m, AdviceReceived) and m.seq == seq]
        for a in got:
            self.held.remove(a)
        return got


#: Called before the bot answers a prompt of its own (once per ``seq``) with the prompt
#: and the :class:`Inbox`; it may wait there (``inbox.hold``). The advice for that prompt
#: held by then reaches the bot before it chooses.
PromptHook = Callable[[Prompt, Inbox], None]


def drive(
    client: Client,
    driver: BotDriver,
    games: int,
    threaded: bool = True,
    advice_wait: float = 0.25,
    entropy: Entropy | None = None,
    *,
    before_prompt: PromptHook | None = None,
    stop: threading.Event | None = None,
) -> list[GameEnd]:
    """Feed ``client``'s messages to ``driver`` until it has finished ``games`` games
    (or its table closed, or the referee shut down, or ``stop`` was set); returns the
    ``game_end`` messages. An ``entropy_request`` is answered from ``entropy`` (ignored
    without one).

    ``before_prompt`` replaces the wait of up to ``advice_wait`` seconds for a sitter's
    advice (see :class:`BotDriver`): a launcher that paces its bots (``okgin play``)
    decides there how long each waits, and for what."""
    worker = BotWorker(client, threaded)
    inbox = Inbox(client, stop)
    ends: list[GameEnd] = []
    try:
        while driver.games_done < games and not driver.closed and not inbox.stopped():
            msg = inbox.next()
            if msg is None:
                continue
            if isinstance(msg, EntropyRequest):
                if entropy is not None:
                    client.send(entropy.reveal(msg.table, msg.commitments_hash))
                continue
            if before_prompt is not None:
                if isinstance(msg, Prompt) and driver.mine(msg) and not driver.answered(msg.seq):
                    before_prompt(msg, inbox)
                    _pass_advice(driver, inbox, msg)
            else:
                _wait_for_advice(driver, inbox, msg, advice_wait)
            for out in worker.call(driver.handle, msg):
                client.send(out)
            if isinstance(msg, GameEnd) and driver.mine(msg):
                ends.append(msg)
    finally:
        worker.close()
    return ends


def serve(
    client: Client,
    make: Callable[[], Bot],
    games: int = 0,
    threaded: bool = True,
    advice_wait: float = 0.25,
    on_error: ErrorHook | None = _print_error,
    entropy: Entropy | None = None,
) -> list[GameEnd]:
    """Play every table this session is seated at, several at once, until ``shutdown``
    (or ``games`` games, if positive); returns the ``game_end`` messages.

    For a session that does not choose its tables: a tournament gateway seats a remote
    participant at one table after another, and at several at a time when the runner
    plays games concurrently (docs/tournaments.md). Each table gets its own driver and a
    fresh bot from ``make``; a table's messages after its game ended (``table_closed``,
    a late error) are ignored. The bot code runs one message at a time, as in
    :func:`drive`.
    """
    worker = BotWorker(client, threaded)
    inbox = Inbox(client)
    drivers: dict[str, BotDriver] = {}
    finished: set[str] = set()
    ends: list[GameEnd] = []
    try:
        while games <= 0 or len(ends) < games:
            msg = inbox.next()
            if msg is None:
                continue
            if isinstance(msg, Shutdown):
                break
            if isinstance(msg, EntropyRequest):
                if entropy is not None:
                    client.send(entropy.reveal(msg.table, msg.commitments_hash))
                continue
            table = getattr(msg, "table", None)
            if table is None:
                if isinstance(msg, ErrorMessage) and on_error is not None:
                    on_error(msg)
                continue
            if table in finished:
                continue
            driver = drivers.get(table)
            if driver is None:
                driver = drivers[table] = BotDriver(make(), on_error)
                driver.table = table  # every message of this table is for it, seated or not
            _wait_for_advice(driver, inbox, msg, advice_wait)
            for out in worker.call(driver.handle, msg):
                client.send(out)
            if isinstance(msg, GameEnd):
                ends.append(msg)
            if isinstance(msg, GameEnd) or driver.closed:
                finished.add(table)
                del drivers[table]
    finally:
        worker.close()
    return ends


def _wait_for_advice(driver: BotDriver, inbox: Inbox, msg: Message, wait: float) -> None:
    """A prompt the driver holds for its sitter's advice (:meth:`BotDriver.waits_for_advice`):
    hold messages for up to ``wait`` s or until that advice arrives, and pass it on."""
    if isinstance(msg, Prompt) and driver.waits_for_advice(msg):
        seq = msg.seq
        inbox.hold(lambda: inbox.has_advice(seq), wait)
        _pass_advice(driver, inbox, msg)


def _pass_advice(driver: BotDriver, inbox: Inbox, prompt: Prompt) -> None:
    """The held advice for ``prompt`` reaches the driver before the prompt itself does."""
    for a in inbox.take_advice(prompt.seq):
        driver.handle(a)


BotFactory = Callable[[], Bot]


def run_bot(
    bot: Bot | BotFactory,
    endpoint: str,
    *,
    name: str | None = None,
    table: str | None = None,
    seat: int | None = None,
    variant: str | None = None,
    rules: rq.Rules = None,
    games: int = 1,
    token: str | None = None,
    threaded: bool = True,
    context: zmq.Context | None = None,
    on_error: ErrorHook | None = _print_error,
) -> list[GameEnd]:
    """Play ``games`` games with ``bot`` against a referee; returns their ``game_end``.

    Where to sit: ``token`` (a reserved seat from ``create_table``: hello itself seats
    the bot), else ``table`` (a named table, joined once; further games by ``rematch``;
    ``variant`` and ``rules`` only matter if the join creates it), else the quick-match
    queue of ``variant``/``rules`` (default Oklahoma Gin; queued again after each game).
    ``bot`` may be a factory: then each game gets a fresh bot.

    ``games`` <= 0 means no limit: play game after game until the referee says
    ``shutdown`` (or the table closes, or the connection is lost for good). With a token
    and ``games`` other than 1 the session is served (:func:`serve`): this is how a bot
    is a remote tournament participant. A tournament gateway (docs/tournaments.md) seats
    the session at one new table after another, several at once when games run
    concurrently, with no request from the bot, and says ``shutdown`` when the
    tournament is over.
    """
    make: BotFactory = bot if not isinstance(bot, Bot) and callable(bot) else (lambda: bot)
    first = make()
    # A bot decides from each prompt alone: no event messages (protocol 1.1), which are
    # most of a game's traffic.
    client = Client(endpoint, name or first.name, "player", token=token, context=context, events=False)
    # 1.5: a nonce for a tournament's deals, committed in hello, revealed when asked (.entropy)
    entropy = Entropy() if token is not None else None
    if entropy is not None:
        client.session.hello_fields.update(entropy.hello_fields())
    ends: list[GameEnd] = []
    try:
        client.connect()
        if token is not None and games != 1:
            # A session seated for it, game after game (a tournament gateway): serve it.
            fresh = iter([first])
            return serve(client, lambda: next(fresh, None) or make(), games, threaded, on_error=on_error, entropy=entropy)
        current = first
        for k in itertools.count() if games <= 0 else range(games):
            if k > 0 and not isinstance(bot, Bot):
                current = make()
            driver = BotDriver(current, on_error)
            if token is not None:
                pass  # the reserved seat is taken by hello itself
            elif table is not None:
                if k == 0:
                    driver.handle(client.join(table, seat, variant, rules))
                else:
                    driver.table, driver.seat = table, seat
                    client.rematch(table)
            else:
                if k > 0 and ends:
                    client.leave(ends[-1].table)
                got = _queue_and_play(
                    client, driver, variant or (rules.variant if isinstance(rules, RuleSet) else "oklahoma"), rules, threaded
                )
                ends.extend(got)
                if driver.closed or not got:
                    break
                continue
            got = drive(client, driver, 1, threaded, entropy=entropy)
            ends.extend(got)
            if driver.closed or token is not None or not got:
                break
    finally:
        client.close()
    return ends


def _queue_and_play(
    client: Client, driver: BotDriver, variant: str, rules: rq.Rules, threaded: bool, attempts: int = 3
) -> list[GameEnd]:
    """Queue and play one game. A session lost while still waiting in the queue is
    forgotten by the referee (protocol.md §10: queue places are dropped, and a session
    holding no seat is forgotten), so resuming gets ``bad_token``: then start a fresh
    session and queue again. Once seated, a lost session is final, and so is
    :class:`SessionTaken` at any time: another process plays with this token."""
    for attempt in range(attempts):
        client.queue(variant, rules)
        try:
            return drive(client, driver, 1, threaded)
        except SessionTaken:
            raise
        except ConnectionLost:
            if driver.table is not None or attempt == attempts - 1:
                raise
            client.close(bye=False)
            client.forget_session()
            client.connect()
    return []


def play_reserved(
    endpoint: str,
    seats: Sequence[tuple[str, Bot]],
    name: str = "python-bot",
    threaded: bool = False,
    context: zmq.Context | None = None,
    on_error: ErrorHook | None = _print_error,
) -> list[GameEnd]:
    """Play one game per (reserved seat token, bot), in order, one connection each.

    For launchers (``okgin match --via-referee``, tournaments) that created the tables
    with ``reserved: true`` and hand each bot process its seats.
    """
    ctx = context or zmq.Context.instance()
    ends: list[GameEnd] = []
    for tok, bot in seats:
        client = Client(endpoint, name, "player", token=tok, context=ctx, events=False)
        try:
            client.connect()
            ends.extend(drive(client, BotDriver(bot, on_error), 1, threaded))
        finally:
            client.close()
    return ends
