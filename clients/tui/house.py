"""The house behind ``okgin play``: an embedded referee and the built-in bots, in-process.

Why threads here, and only here: the TUI's event loop must stay free for the screen,
so the referee runs on its own event loop in one background thread (``Referee`` is
embeddable on any loop), and each bot runs the SDK's blocking driver in its own thread
(the SDK already thinks in a worker thread and keeps heartbeats meanwhile). The human's
TUI connects to the referee over loopback TCP like any other client, with the token of
its reserved seat: no back door, the same protocol a remote player speaks.

Everything stops with :meth:`House.stop`: the referee abandons the game, closes its
journal and sends ``shutdown``; the bots see it and return; the threads are joined.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from okgin import Action, Advice, RuleSet, View

STRENGTH_ORDER = ("strong", "simple", "random")

#: The human's seat at the house table (its reserved token is the first).
HUMAN_SEAT = 0
#: Seconds per move of a hand the human watches (it sits out): a person can follow it.
DEFAULT_PACE = 0.8
#: Seconds a captain's prompt waits for its human sitter's advice (the table's advice
#: window, protocol 1.6: the referee holds the prompt, and the TUI counts it down); the
#: advice cuts it short. 2 s was too short for a person (issue 28: 29 of 74 got in).
DEFAULT_ADVICE_WINDOW = 5.0


@dataclass
class Pacing:
    """How the bots keep to the human's pace (Gin in the Box, issue 17).

    Why at the house and not in the TUI: the referee plays a hand between two bots in
    milliseconds, so a hand the human sits out would be over (and its summary on screen)
    before the human saw a move. Slowing the bots themselves keeps the TUI a plain
    protocol client that shows every move as it comes, and the journal unchanged.

    ``ready`` is set while the human is at the table with nothing to dismiss (the app
    clears it while a hand's summary waits for a key): no bot moves until then, in either
    game, so no hand is played behind a summary (not even its first move: the README
    says the bots wait), and the game never opens on a hand the human did not see. ``pace`` is the pause before each of
    those moves; ``advice_window`` is how long a bot captain waits for its human
    sitter's note (cut short when the note arrives). ``on_wait`` (tests) hears each
    pause: ("ready"|"pace"|"advice", seat).
    """

    pace: float = DEFAULT_PACE
    advice_window: float = DEFAULT_ADVICE_WINDOW
    ready: threading.Event = field(default_factory=threading.Event)
    stop: threading.Event = field(default_factory=threading.Event)
    on_wait: Any = None

    def __post_init__(self) -> None:
        # Open until an app says otherwise: a house nobody watches (a test, a tool) must
        # not wait for ever. ``okgin play`` closes it before the game starts.
        self.ready.set()

    #: The last hand whose summary the human has closed (or that had none): the bots
    #: of hand N wait for N - 1, since the referee deals hand N before the TUI has even
    #: drawn hand N - 1's summary.
    acked_hand: int = -1

    #: Set once an app reports (``set_ready``): only then is a hand's summary read, and
    #: worth waiting for. A house nobody watches never waits for one.
    watched: bool = False

    def set_ready(self, ready: bool, acked_hand: int | None = None) -> None:
        """The app's hook: True when the human can watch the table, False while a summary waits."""
        self.watched = True
        if acked_hand is not None:
            self.acked_hand = acked_hand
        if ready:
            self.ready.set()
        else:
            self.ready.clear()

    def may_move(self, view: View) -> bool:
        return self.ready.is_set() and (
            not self.watched or self.acked_hand >= view.hand_number - 1 or view.hand_number == 0)

    @staticmethod
    def human_sits_out(view: View) -> bool:
        return view.variant == "box" and HUMAN_SEAT < len(view.roles) and view.roles[HUMAN_SEAT] == "sitter"


class HouseBot:
    """A built-in bot at the house table: the bot itself, plus a captain's ear for its
    human sitter. The captain follows a legal move its human partner suggests (docs/rules.md
    §4: the captain decides, and this one decides to trust its partner) so that
    advising is worth the human's while; otherwise the bot plays its own game."""

    def __init__(self, bot: Any) -> None:
        self.bot = bot
        self.name = getattr(bot, "name", "bot")
        self._advice: Advice | None = None
        self.followed: list[Action] = []  # the human's suggestions this captain played (tests)

    def __getattr__(self, name: str) -> Any:  # anything else is the bot's own
        return getattr(self.bot, name)

    # The driver calls a hook only if the bot's class defines it, so each is spelt out.
    def on_game_start(self, seat: int, rules: RuleSet, num_seats: int) -> None:
        self.bot.on_game_start(seat, rules, num_seats)

    def on_hand_start(self, view: View) -> None:
        self.bot.on_hand_start(view)

    def on_hand_end(self, result: Any, view: View) -> None:
        self.bot.on_hand_end(result, view)

    def on_game_end(self, final: dict[str, Any], view: View) -> None:
        self.bot.on_game_end(final, view)

    def advise(self, view: View, captain_legal: list[Action]) -> Any:
        return self.bot.advise(view, captain_legal)

    def on_advice(self, advice: Advice, view: View) -> None:
        if advice.seat == HUMAN_SEAT:
            self._advice = advice
        hook = getattr(self.bot, "on_advice", None)
        if hook is not None:
            hook(advice, view)

    def choose(self, view: View, legal: list[Action]) -> Action:
        adv, self._advice = self._advice, None
        if adv is not None and adv.action is not None and adv.action in legal:
            self.followed.append(adv.action)
            return adv.action
        return self.bot.choose(view, legal)


def best_available_bot() -> str:
    """The strongest built-in bot that loads in this installation."""
    from clients.bots import BotNotFound, bot_class

    for name in STRENGTH_ORDER:
        try:
            bot_class(name)
        except BotNotFound:
            continue
        return name
    raise RuntimeError("no built-in bot could be loaded")


@dataclass
class House:
    """A referee with one reserved table: seat 0 for the human, the others for bots."""

    rules: RuleSet
    bots: list[str]
    human: str = "you"
    seed: int | str | None = None
    journal_dir: str | None = None
    endpoint: str | None = None
    human_token: str | None = None
    table: str = "play"
    errors: list[str] = field(default_factory=list)
    _loop: asyncio.AbstractEventLoop | None = None
    _thread: threading.Thread | None = None
    _ready: threading.Event = field(default_factory=threading.Event)
    _stopped: asyncio.Event | None = None
    _bot_threads: list[threading.Thread] = field(default_factory=list)
    pacing: Pacing = field(default_factory=Pacing)
    house_bots: list[HouseBot] = field(default_factory=list)

    # ------------------------------------------------------------------ public
    def start(self, timeout: float = 30.0) -> str:
        """Start the referee and the bots; return the endpoint (loopback, port chosen by the OS)."""
        from clients.bots import bot_class

        classes = [bot_class(b) for b in self.bots]  # fail here, with a sentence, on a bad name
        self._started = time.time()
        import zmq

        self._bot_ctx = zmq.Context()
        need = self.rules.num_players - 1
        if len(classes) != need:
            raise ValueError(f"{self.rules.variant} needs {need} bot(s), got {len(classes)}")
        self._thread = threading.Thread(target=self._referee_thread, name="okgin-play-referee", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout) or self.endpoint is None:
            raise RuntimeError("; ".join(self.errors) or "the embedded referee did not start")
        assert self._tokens is not None
        self.human_token = self._tokens[0]
        for i, (cls, bname) in enumerate(zip(classes, self.bot_names(), strict=True), start=1):
            bot = HouseBot(cls(seed=f"play/{self.seed}/{i}"))
            self.house_bots.append(bot)
            t = threading.Thread(
                target=self._bot_thread, args=(bot, self._tokens[i], bname), name=f"okgin-play-bot-{i}", daemon=True
            )
            t.start()
            self._bot_threads.append(t)
        return self.endpoint

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the referee (which tells everyone), then wait for every thread.

        A bot blocked on its socket when the referee goes (its ``shutdown`` can be lost:
        the referee does not linger) is released by terminating the bots' ZeroMQ
        context, which makes every blocking call in it return ETERM (zmq_ctx_term).
        """
        self._closing = True
        self.pacing.stop.set()
        loop, stopped = self._loop, self._stopped
        if loop is not None and stopped is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(stopped.set)
            except RuntimeError:
                pass  # the loop already ended
        if self._thread is not None:
            self._thread.join(timeout)
        for t in self._bot_threads:
            t.join(min(timeout, 2.0))
        if self._bot_ctx is not None and any(t.is_alive() for t in self._bot_threads):
            threading.Thread(target=self._bot_ctx.term, name="okgin-play-zmq-term", daemon=True).start()
            for t in self._bot_threads:
                t.join(timeout)  # daemon threads: a bot still deep in thought cannot hold the exit

    def bot_names(self) -> list[str]:
        """``simple-bot``, or ``simple-bot-1`` and ``simple-bot-2`` when two play."""
        names = []
        for i, b in enumerate(self.bots):
            dup = self.bots.count(b) > 1
            names.append(f"{b}-bot-{self.bots[: i + 1].count(b)}" if dup else f"{b}-bot")
        return names

    def journals(self) -> list[Path]:
        """The journals written by this house's referee (newest last)."""
        if self.journal_dir is None:
            return []
        mine = [p for p in Path(self.journal_dir).glob(f"{self.table}-g*.jsonl") if p.stat().st_mtime >= self._started]
        return sorted(mine, key=lambda p: p.stat().st_mtime)

    # ----------------------------------------------------------------- threads
    _tokens: list[str] | None = None
    _started: float = 0.0
    _closing: bool = False
    _bot_ctx: Any = None

    def _referee_thread(self) -> None:
        try:
            asyncio.run(self._serve())
        except Exception as e:  # reported by start(); the TUI is not running yet
            self.errors.append(f"the embedded referee failed: {e}")
            self._ready.set()

    async def _serve(self) -> None:
        from referee.config import RefereeConfig
        from referee.server import Referee

        self._loop = asyncio.get_running_loop()
        self._stopped = asyncio.Event()
        ref = Referee(RefereeConfig(bind="tcp://127.0.0.1:0", journal_dir=self.journal_dir))
        self.endpoint = await ref.start()
        try:
            names = [self.human, *self.bot_names()]
            # Gin in the Box: the captain's prompt waits for the human sitter's advice (the TUI
            # says advice_wait in its hello); a bot sitter never holds a captain up.
            window = int(self.pacing.advice_window * 1000) if self.rules.variant == "box" else 0
            t = ref.create_table(
                table=self.table, variant=self.rules.variant, rules=self.rules, seed=self.seed, reserved=True, players=names,
                policies={"advice_window_ms": window} if window else None,
            )
            self._tokens = t.reserved_tokens
            self._ready.set()
            await self._stopped.wait()
        finally:
            await ref.stop("the game was closed (okgin play ended)")

    def _bot_thread(self, bot: object, token: str, name: str) -> None:
        """Play games at the reserved seat until the referee shuts down; agree to every rematch."""
        import zmq

        from clients.sdk import Client, ConnectionLost, SDKError
        from clients.sdk.runner import BotDriver

        assert self.endpoint is not None
        client = Client(self.endpoint, name, "player", token=token, context=self._bot_ctx)
        try:
            client.connect()
            while True:
                driver = BotDriver(bot, on_error=lambda e: self.errors.append(f"bot: {e.message}"))  # type: ignore[arg-type]
                ends = _paced_drive(client, driver, self.pacing)
                if driver.closed or not ends or ends[-1].termination == "abandoned" or self._closing:
                    return  # the referee is stopping (it abandons the game first)
                client.rematch(ends[-1].table)  # ready for another game if the human wants one
        except (ConnectionLost, SDKError, OSError, zmq.ZMQError):
            return  # the referee stopped (or stop() ended the context): the game is over for the bots too
        finally:
            with contextlib.suppress(Exception):
                client.close(bye=False)


def _paced_drive(client: Any, driver: Any, pacing: Pacing) -> list[Any]:
    """:func:`clients.sdk.runner.drive` for one game, at the human's pace.

    Before this bot answers any prompt it waits until the human is at the table
    (``pacing.ready``: no summary waiting for a key). In a hand the human sits out it
    then waits, as the captain of a human sitter, up to ``advice_window`` for the advice
    of that prompt, or else ``pace``. Every wait
    reads the socket (the SDK's :class:`~clients.sdk.runner.Inbox` keeps the heartbeats
    going and holds the messages that arrive for after the move), so a bot that waits is
    never taken for dead, and ``stop`` ends any wait at once.
    """
    from clients.sdk.messages import Prompt
    from clients.sdk.runner import Inbox, drive

    def before_prompt(msg: Prompt, inbox: Inbox) -> None:
        seat, seq, view = msg.seat, msg.seq, msg.view
        if not pacing.may_move(view):
            if pacing.on_wait:
                pacing.on_wait("ready", seat)
            inbox.hold(lambda: pacing.may_move(view), None)
        if not pacing.human_sits_out(view):
            return
        captain = view.roles[seat] == "captain"
        if captain and pacing.advice_window > 0:
            # The referee held this prompt for the advice window (the advice, if any, is in):
            # the waiting is done.
            if pacing.on_wait:
                pacing.on_wait("advice", seat)
            inbox.hold(lambda: driver.has_advice(seq) or inbox.has_advice(seq), 0)
        elif pacing.pace > 0:
            if pacing.on_wait:
                pacing.on_wait("pace", seat)
            inbox.hold(lambda: False, pacing.pace)

    return drive(client, driver, 1, threaded=True, before_prompt=before_prompt, stop=pacing.stop)
