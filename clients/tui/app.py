"""The Textual application: one app for playing, watching and replaying.

The app holds two reactive values, the :class:`TableState` (what the referee told us)
and the :class:`DisplayOptions` (how the person wants it drawn); screens watch them.
Moves go out through a :class:`Backend`; news comes back as messages posted by the
backend's worker (an async ``@work`` worker on the app's own loop, never a thread).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from textual import work
from textual.app import App
from textual.binding import Binding
from textual.reactive import reactive
from textual.timer import Timer

from okgin import Action, HandResult

from .backend import Backend
from .messages import Bell, ConnectionChanged, GameEnded, HandEnded, Notice, RefereeError, RefereeMessage, StateChanged
from .model import CONNECTED, ENDED, LOST, TableState
from .options import DisplayOptions

if TYPE_CHECKING:
    from clients.sdk.curve import CurveKeys

CSS_PATH = Path(__file__).with_name("okgin.tcss")


class OkginApp(App[int]):
    """``OkginApp(backend, state=..., options=...)``; ``run()`` returns an exit code."""

    CSS_PATH = CSS_PATH
    TITLE = "okgin"
    ENABLE_COMMAND_PALETTE = False
    # Ctrl+C quits (asking first at a game): a priority binding, since every screen's own
    # Ctrl+C copies a text selection, which a card table has none of (text fields keep it).
    BINDINGS = [Binding("ctrl+c", "help_quit", "Quit", show=False, priority=True)]

    state: reactive[TableState] = reactive(TableState(), always_update=True)
    options: reactive[DisplayOptions] = reactive(DisplayOptions())

    def __init__(
        self,
        backend: Backend | None = None,
        state: TableState | None = None,
        options: DisplayOptions | None = None,
        start: str = "table",
        summaries: bool = True,
        cursor_blink: bool = True,
        lobby: dict | None = None,
        theme: str | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        super().__init__()
        # The monotonic clock the countdowns (another seat's forfeit, the clocks) are read
        # against. Injectable so a snapshot of "seat forfeits in 38 s" is reproducible
        # without sleeping; it must run on the timeline of RefereeMessage.received.
        self.clock: Callable[[], float] = clock or time.monotonic
        if theme:
            if theme not in self.available_themes:
                raise ValueError(f"unknown theme {theme!r}; known: {', '.join(sorted(self.available_themes))}")
            self.theme = theme
        self.lobby_args = lobby or {}
        self.arena_args: dict | None = None  # okgin tui --arena: endpoint, account, key (start "arena")
        self.arena_lobby: object | None = None  # the ArenaLobbyScreen under the table, in arena mode
        self.exit_note: str | None = None  # printed after the app closes (how to resume)
        self.cursor_blink = cursor_blink  # off in snapshot tests: a blinking cursor is not reproducible
        self.backend = backend or Backend()
        self.start = start
        self.summaries = summaries  # show the hand summary after each hand
        # Seconds after which a hand's summary closes by itself; None: it waits for a key
        # (the default whenever a person plays: a summary that goes by unread is lost).
        self.auto_continue: float | None = None
        # Told True when the person can watch the table, False while a summary waits for
        # a key (okgin play's bots hold their moves meanwhile: clients.tui.house.Pacing).
        self.ready_hook: Callable[[bool, int], None] | None = None
        self._acked_hand = -1  # the last hand whose summary was closed (or had none to show)
        self._table_ready: tuple[bool, int] | None = None
        self.pace: float | None = None  # okgin play, Gin in the Box: the bots' seconds per move you watch
        self._pending_summaries: list[HandResult] = []
        self._seen_hands: set[tuple[object, int]] = set()  # (game, hand) shown being played
        self.outcome: dict | None = None
        #: okgin play: the referee runs in this process and stops with the app, so
        #: quitting offers resign / new game / quit (LocalQuitScreen), never "your seat
        #: is held". ``local_journal``: whether the game's journal is kept.
        self.local_game = False
        self.local_journal = False
        #: Misclick protection against bots (okgin play): a discard waits this many seconds
        #: on this side before it is sent, and ``u`` takes it back meanwhile (0: sent at
        #: once). The referee's clock keeps running: nothing is sent until the wait ends.
        self.undo_seconds = 0.0
        #: Ask "Discard 9♠?" before every discard (okgin play --confirm-discards).
        self.confirm_discards = False
        self._held: tuple[Action, int | None, tuple[Action, ...]] | None = None
        #: Games won by each player since the app started, across rematches (the game-over
        #: sheet shows the running score); the games counted, by table and game number.
        self.session_wins: dict[str, int] = {}
        self._counted: set[tuple[object, object]] = set()
        #: Count each game played to its end in the player's statistics (clients/tui/stats.py);
        #: ``stats_recorded`` says how many were written (tests wait on it).
        self.keep_stats = True
        self.stats_recorded = 0
        self._held_timer: Timer | None = None
        self._new_game_after_end = False  # "new game" chosen: rematch once the resignation's game_end is in
        from .ascii import AsciiFilter

        # made before any options are set: watch_options (which a test or a backend may
        # trigger at once) switches it
        self._ascii_filter = AsciiFilter(enabled=bool(options is not None and options.ascii))
        self._filters.append(self._ascii_filter)  # Textual applies it to every rendered line
        if state is not None:
            self.set_reactive(OkginApp.state, state)
        if options is not None:
            self.set_reactive(OkginApp.options, options)
        self._ascii_filter.enabled = self.options.ascii

    def watch_options(self, options: DisplayOptions) -> None:
        self.set_class(options.ascii, "-ascii")  # okgin.tcss: ASCII frames
        self._ascii_filter.enabled = options.ascii  # clients/tui/ascii.py: ASCII text
        self.refresh(repaint=True, layout=True)
        for screen in self.screen_stack:
            screen.refresh(repaint=True, layout=True)

    def on_mount(self) -> None:
        from .screens.table import TableScreen

        self.set_class(self.options.ascii, "-ascii")

        if self.start == "lobby":
            from .screens.lobby import LobbyScreen

            self.push_screen(LobbyScreen(**self.lobby_args))
            return
        if self.start == "arena":  # okgin tui --arena: the arena's lobby; games on the table screen above it
            from .screens.arena_lobby import ArenaLobbyScreen

            assert self.arena_args is not None
            self.arena_lobby = ArenaLobbyScreen(**self.arena_args)
            self.push_screen(self.arena_lobby)
            return
        if self.start == "sessions":  # okgin tui --resume with several saved seats
            from .screens.sessions import SessionsScreen

            self.push_screen(SessionsScreen())
            return
        self.push_screen(TableScreen())
        self.start_backend()

    def join_game(self, endpoint: str, name: str, seating: object) -> None:
        """From the lobby: connect to a referee and go to the table."""
        from .net import NetworkBackend
        from .screens.table import TableScreen
        from .seating import Seating

        assert isinstance(seating, Seating)
        self.backend = NetworkBackend(endpoint, name, seating)
        self.state = TableState(notice=f"Connecting to {endpoint}…", endpoint=endpoint)
        self.switch_screen(TableScreen())
        self.start_backend()

    def play_arena_game(self, ready: object, account: str, curve: CurveKeys | None = None) -> None:
        """From the arena's lobby: play the game of ``ready`` (a ``game_ready``) at its
        shard with its seat token, on a table screen above the lobby."""
        from clients.sdk.arena import shard_curve
        from clients.sdk.messages import GameReady

        from .net import NetworkBackend
        from .screens.table import TableScreen
        from .seating import Seating

        assert isinstance(ready, GameReady)
        self._reset_table()
        self.backend = NetworkBackend(ready.endpoint, account, Seating(mode="token", variant=ready.variant, table=ready.table),
                                      token=ready.token, curve=shard_curve(ready, curve))
        self.state = TableState(notice=f"Arena game {ready.game}: connecting to its table…", endpoint=ready.endpoint)
        self.push_screen(TableScreen())
        self.start_backend()

    @property
    def in_arena(self) -> bool:
        """Playing (or between games) under the arena's lobby (``okgin tui --arena``)."""
        return self.arena_lobby is not None

    def _reset_table(self) -> None:
        self._pending_summaries.clear()
        self._seen_hands.clear()
        self._acked_hand = -1
        self._table_ready = None
        self.outcome = None

    async def back_to_lobby(self) -> None:
        """Arena mode: leave the table (its game over, or given up) for the lobby."""
        from .screens.arena_lobby import ArenaLobbyScreen

        await self.backend.close()
        self.backend = Backend()
        self._reset_table()
        self.state = TableState()
        while len(self.screen_stack) > 1 and not isinstance(self.screen, ArenaLobbyScreen):
            self.pop_screen()
        if isinstance(self.arena_lobby, ArenaLobbyScreen):
            self.arena_lobby.back_from_game()

    def start_backend(self) -> None:
        self._backend_worker()

    @work(exclusive=True, group="backend", exit_on_error=False)
    async def _backend_worker(self) -> None:
        """The network (or replay) loop, on this app's event loop."""
        await self.backend.run(self)

    # ----------------------------------------------------------------- moves
    async def play(self, action: Action, confirmed: bool = False) -> None:
        """Send a move for the open prompt. A move the prompt did not list is refused
        here with the reason, so a mistyped key costs no round trip. A discard may be
        asked first (``confirm_discards``; ``confirmed`` once answered) and held for
        ``undo_seconds`` before it goes (:meth:`undo_discard` takes it back)."""
        st = self.state
        if not st.my_turn:
            self.notify("It is not your turn.", severity="warning", timeout=3)
            return
        if not st.is_legal(action):
            self.state = replace(st, error=f"{action} is not a legal move now.")
            return
        seq = st.seq
        if action.kind == "discard" and self.confirm_discards and not confirmed:
            from .screens.confirm_discard import ConfirmDiscardScreen

            def answered(yes: bool | None) -> None:
                if yes:
                    self.run_worker(self.play(action, confirmed=True), group="move")

            self.push_screen(ConfirmDiscardScreen(action), answered)
            return
        # Close the prompt locally: a second key press must not send a second move.
        self.state = replace(st, legal=(), error=None)
        if action.kind == "discard" and self.undo_seconds > 0:
            self._held = (action, seq, st.legal)
            self.state = replace(self.state, extra={**self.state.extra, "held_discard": action.card,
                                                    "undo_seconds": self.undo_seconds})
            self._held_timer = self.set_timer(self.undo_seconds, self._send_held)
            return
        await self._send(action, seq, st.legal)

    async def _send(self, action: Action, seq: int | None, legal: tuple[Action, ...]) -> None:
        try:
            await self.backend.act(action, seq)
        except Exception as e:  # the backend's sentence, where the player looks
            self.state = replace(self.state, legal=legal, seq=seq, error=str(e))

    def _drop_held(self) -> tuple[Action, int | None, tuple[Action, ...]] | None:
        held, self._held = self._held, None
        if self._held_timer is not None:
            self._held_timer.stop()
            self._held_timer = None
        extra = {k: v for k, v in self.state.extra.items() if k not in ("held_discard", "undo_seconds")}
        self.state = replace(self.state, extra=extra)
        return held

    async def _send_held(self) -> None:
        """The undo window is over: the held discard goes to the referee."""
        held = self._drop_held()
        if held is not None:
            await self._send(*held)

    def undo_discard(self) -> bool:
        """``u`` while a discard is held: take it back, the prompt is open again."""
        held = self._drop_held()
        if held is None:
            return False
        _action, seq, legal = held
        self.state = replace(self.state, legal=legal, seq=seq)
        return True

    async def advise(self, action: Action | None, text: str = "") -> None:
        try:
            await self.backend.advise(action, text)
        except Exception as e:
            self.state = replace(self.state, error=str(e))
            if str(e).lower().startswith("your captain already played"):  # advice_late (1.6): say so where one looks
                self.notify("Your captain already played: that advice came too late.", severity="warning", timeout=4)

    async def rematch(self) -> None:
        if self.in_arena:  # an arena game has no rematch: the lobby finds the next one
            await self.back_to_lobby()
            return
        try:
            await self.backend.rematch()
        except Exception as e:
            self.notify(str(e), severity="error")
            return
        while len(self.screen_stack) > 2:
            self.pop_screen()

    THEMES = ("textual-dark", "textual-light", "nord", "gruvbox", "tokyo-night", "solarized-light", "monokai")

    def action_next_theme(self) -> None:
        """Cycle through a few themes (light and dark); the cards keep their suit colours."""
        themes = [t for t in self.THEMES if t in self.available_themes]
        i = themes.index(self.theme) if self.theme in themes else -1
        self.theme = themes[(i + 1) % len(themes)]
        self.notify(f"Theme: {self.theme}", timeout=2)

    def request_quit(self) -> None:
        """``q``: at a game still running, ask first. At a network game the dialog says
        how long the seat is held (a slip of the finger must not cost the seat); at a
        local game (``okgin play``) it offers resign, new game or quit, since nothing
        holds a seat there once the app closes. Anywhere else, quit."""
        from .net import NetworkBackend

        st = self.state
        running = (st.view is not None and not st.game_over and not st.spectator and st.replay is None
                   and st.connection != ENDED)  # a seat taken by another terminal holds nothing to lose
        if self.local_game and running:
            from .screens.quit_confirm import LocalQuitScreen

            self.push_screen(LocalQuitScreen(self.local_journal), self._local_quit)
            return
        if self.in_arena and isinstance(self.backend, NetworkBackend):
            # At an arena's table, q goes back to the lobby (asking first while the game runs:
            # leaving it forfeits after the disconnect grace, and a forfeit is a rated loss).
            if not running:
                self.run_worker(self.back_to_lobby())
                return
            from .screens.quit_confirm import QuitConfirmScreen

            grace = st.extra.get("disconnect_grace_ms")
            self.push_screen(QuitConfirmScreen(grace if isinstance(grace, int) else None, None), self._leave_arena_game)
            return
        if isinstance(self.backend, NetworkBackend) and running:
            from .screens.quit_confirm import QuitConfirmScreen

            grace = st.extra.get("disconnect_grace_ms")
            self.push_screen(QuitConfirmScreen(grace if isinstance(grace, int) else None, self.backend.token),
                             lambda leave: self.exit(0) if leave else None)
            return
        self.exit(0)

    def _leave_arena_game(self, leave: bool | None) -> None:
        if leave:
            self.run_worker(self.back_to_lobby())

    def _local_quit(self, choice: str | None) -> None:
        if choice == "quit":
            self.exit(0)
        elif choice in ("resign", "new"):
            self._new_game_after_end = choice == "new"
            self.run_worker(self._resign(), group="resign")

    async def _resign(self) -> None:
        try:
            await self.backend.resign()
        except Exception as e:
            self._new_game_after_end = False
            self.notify(str(e), severity="error")

    def action_stats(self) -> None:
        """``S``: the player's statistics (clients/tui/screens/stats.py), over any screen."""
        from .screens.stats import StatsScreen

        if not isinstance(self.screen, StatsScreen):
            self.push_screen(StatsScreen())

    def action_help_quit(self) -> None:
        """Ctrl+C: people press it to leave, so it leaves, as ``q`` does (asking first
        at a game still running; a second Ctrl+C on that question quits). Textual's own
        answer was a toast saying to press Ctrl+Q. (In a text field Ctrl+C still copies.)"""
        from textual.widgets import Input

        from .screens.quit_confirm import LocalQuitScreen, QuitConfirmScreen

        focused = self.focused
        if isinstance(focused, Input) and not focused.selection.is_empty:
            focused.action_copy()  # a text field's selection: Ctrl+C copies it, as everywhere
            return
        if isinstance(self.screen, LocalQuitScreen):
            self.screen.dismiss("quit")  # the dialog's own "quit": the game and the bots stop
            return
        if isinstance(self.screen, QuitConfirmScreen):
            self.exit(0)
            return
        self.request_quit()

    async def action_quit(self) -> None:
        self.exit(0)

    # ---------------------------------------------------------------- replay
    def replay_step(self, delta: int) -> None:
        step = getattr(self.backend, "step", None)
        if step is not None:
            step(self, delta)

    def replay_jump(self, direction: int) -> None:
        jump = getattr(self.backend, "jump", None)
        if jump is not None:
            jump(self, direction)

    def replay_hand_step(self, delta: int) -> None:
        hs = getattr(self.backend, "hand_step", None)
        if hs is not None:
            hs(self, delta)

    # -------------------------------------------------------------- messages
    def on_state_changed(self, msg: StateChanged) -> None:
        self.state = msg.state

    def watch_state(self, state: TableState) -> None:
        """Remember the hands shown being played, and tell ``ready_hook`` when the table is up."""
        v = state.view
        if v is not None and v.phase in ("offer", "draw", "discard"):
            self._seen_hands.add((state.extra.get("game"), v.hand_number))
        self._update_ready()

    def _update_ready(self) -> None:
        from .screens.summary import HandSummaryScreen

        ready = self.state.view is not None and not self._pending_summaries and not any(
            isinstance(s, HandSummaryScreen) for s in self.screen_stack)
        if (ready, self._acked_hand) != self._table_ready:
            self._table_ready = (ready, self._acked_hand)
            if self.ready_hook is not None:
                self.ready_hook(ready, self._acked_hand)

    def on_hand_ended(self, msg: HandEnded) -> None:
        self.state = self.state.with_result(msg.result)
        if not self.summaries or (
            self.state.replay is None and (self.state.extra.get("game"), msg.result.hand_number) not in self._seen_hands):
            # No summaries, or a hand this client never saw being played (it came in
            # over a resume, or before the table was up): its result is in the log and
            # the hands list; opening on its summary would only confuse.
            self._ack(msg.result.hand_number)
            return
        if not self.screen_stack:
            # The app is closing (its screens already gone) as a hand's result comes in:
            # there is nothing to show it on. A fresh-clone run beside a CPU hog saw
            # ``self.screen`` raise ScreenStackError here as a spectator's test ended.
            return
        from .screens.summary import HandSummaryScreen

        if isinstance(self.screen, HandSummaryScreen):
            if self.state.spectator or self.auto_continue is not None:
                # A watcher away from the keyboard must not come back to a pile of
                # summaries: the newest replaces an unread one.
                self.pop_screen()
            else:
                # A player reads every summary, in order.
                self._pending_summaries.append(msg.result)
                return
        self._push_summary(msg.result)

    def _push_summary(self, result: HandResult) -> None:
        from .screens.summary import HandSummaryScreen

        self.push_screen(HandSummaryScreen(result, self.auto_continue), self._after_summary)
        self._update_ready()

    def _ack(self, hand_number: int) -> None:
        self._acked_hand = max(self._acked_hand, hand_number)
        self._update_ready()

    def _after_summary(self, result: object = None) -> None:
        """The next unread summary, else the last hand's summary first, then the
        game-over sheet (not both at once)."""
        from .screens.summary import HandSummaryScreen

        if isinstance(result, int):
            self._acked_hand = max(self._acked_hand, result)

        if self._pending_summaries:
            self._push_summary(self._pending_summaries.pop(0))
            return
        self._update_ready()
        if self.state.final is not None and not any(isinstance(s, HandSummaryScreen) for s in self.screen_stack):
            self._show_game_over()

    def on_game_ended(self, msg: GameEnded) -> None:
        self.state = replace(self.state, final=msg.final, legal=())
        self.outcome = msg.final
        self._count_game(msg.final)
        if self._new_game_after_end:  # "new game" from the local quit dialog: no game-over sheet
            self._new_game_after_end = False
            self.run_worker(self.rematch(), group="rematch")
            return
        from .screens.summary import HandSummaryScreen

        if not any(isinstance(s, HandSummaryScreen) for s in self.screen_stack):
            self._show_game_over()

    def _count_game(self, final: dict) -> None:
        """Add a finished game to the running score (once, however often its end is heard)."""
        st = self.state
        key = (st.table, st.extra.get("game"))
        if key in self._counted or st.spectator or st.replay is not None:
            return
        self._counted.add(key)
        for name in st.names:
            self.session_wins.setdefault(name, 0)
        winner = final.get("winner")
        if isinstance(winner, int) and winner < len(st.names):
            self.session_wins[st.names[winner]] = self.session_wins.get(st.names[winner], 0) + 1
        if self.keep_stats:
            from .stats import tally_game

            tally = tally_game(st, final)
            if tally is not None:
                self.run_worker(self._record_stats(tally), group="stats")

    async def _record_stats(self, tally: object) -> None:
        """Add the game to the player's statistics file (clients/tui/stats.py), off the
        event loop: the file's lock may be held a moment by another okgin finishing too."""
        import asyncio

        from .stats import GameTally, StatsStore

        assert isinstance(tally, GameTally)
        notice = await asyncio.to_thread(StatsStore().record, tally)
        self.stats_recorded += 1
        if notice:
            self.notify(notice, severity="warning", timeout=10)

    def running_score(self) -> str:
        """"Games this session: You 2, simple-bot 1", after a rematch ("" before)."""
        if len(self._counted) < 2:
            return ""
        st = self.state
        me = st.names[st.seat] if st.seat is not None and st.seat < len(st.names) else None
        parts = [f"{'You' if n == me else n} {w}" for n, w in self.session_wins.items()]
        return f"Games this session ({len(self._counted)} played): " + ", ".join(parts)

    def _show_game_over(self) -> None:
        from .screens.game_over import GameOverScreen

        if not any(isinstance(s, GameOverScreen) for s in self.screen_stack):
            self.push_screen(GameOverScreen())

    def on_bell(self, _msg: Bell) -> None:
        self.bell()

    def on_referee_error(self, msg: RefereeError) -> None:
        self.state = replace(self.state, error=msg.message)
        self.bell()

    def on_connection_changed(self, msg: ConnectionChanged) -> None:
        self.set_connection(msg.status, msg.detail)

    def on_referee_message(self, msg: RefereeMessage) -> None:
        """What the referee said, reduced here (the backend never writes the state)."""
        from .reducer import reduce

        state, effects = reduce(self.state, msg.message, msg.received)
        self.state = state
        for m in effects:
            self.post_message(m)

    def on_notice(self, msg: Notice) -> None:
        self.notify(msg.text, severity=msg.severity, timeout=8)  # type: ignore[arg-type]

    def set_connection(self, status: str, detail: str = "") -> None:
        """The connection's state and its sentence (the network worker calls this on the
        app's loop, in order with the state changes it makes)."""
        notice = detail or (None if status == CONNECTED else self.state.notice)
        self.state = replace(self.state, connection=status, notice=notice)
        if status == ENDED:  # nothing can be sent any more: no move keys, no buttons
            self.state = replace(self.state, legal=(), advice_legal=())
        if status == LOST:
            self.notify(detail or "Connection lost: reconnecting…", severity="warning", timeout=5)

    async def on_unmount(self) -> None:
        await self.backend.close()
