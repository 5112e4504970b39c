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

from okgin import RuleSet

STRENGTH_ORDER = ("strong", "simple", "random")


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
            bot = cls(seed=f"play/{self.seed}/{i}")
            t = threading.Thread(target=self._bot_thread, args=(bot, self._tokens[i], bname), name=f"okgin-play-bot-{i}", daemon=True)
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
            t = ref.create_table(table=self.table, variant=self.rules.variant, rules=self.rules, seed=self.seed,
                                 reserved=True, players=names)
            self._tokens = t.reserved_tokens
            self._ready.set()
            await self._stopped.wait()
        finally:
            await ref.stop("the game was closed (okgin play ended)")

    def _bot_thread(self, bot: object, token: str, name: str) -> None:
        """Play games at the reserved seat until the referee shuts down; agree to every rematch."""
        import zmq

        from clients.sdk import Client, ConnectionLost, SDKError
        from clients.sdk.runner import BotDriver, drive

        assert self.endpoint is not None
        client = Client(self.endpoint, name, "player", token=token, context=self._bot_ctx)
        try:
            client.connect()
            while True:
                driver = BotDriver(bot, on_error=lambda e: self.errors.append(f"bot: {e.message}"))  # type: ignore[arg-type]
                ends = drive(client, driver, 1)
                if driver.closed or not ends or ends[-1].termination == "abandoned" or self._closing:
                    return  # the referee is stopping (it abandons the game first)
                client.rematch(ends[-1].table)  # ready for another game if the human wants one
        except (ConnectionLost, SDKError, OSError, zmq.ZMQError):
            return  # the referee stopped (or stop() ended the context): the game is over for the bots too
        finally:
            with contextlib.suppress(Exception):
                client.close(bye=False)
