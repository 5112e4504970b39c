"""The table: where a game is played, watched or replayed.

Every widget is a function of the app's :class:`TableState`; this screen passes the
state down and turns keys, clicks and buttons into moves. Which keys work depends on
the phase: each move is an action whose ``check_action`` asks the state whether the
referee listed that move in its prompt, so the footer shows exactly the moves legal
now. The sitter of Gin in the Box presses the same keys to *suggest* a move to its
captain (the footer then says "Suggest ...").
"""

from __future__ import annotations

import math
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Footer, Static

from okgin import Action
from okgin.cards import Card

from ..describe import best_discard, hand_info, status_line, what_now
from ..model import ENDED, LOST, TableState
from ..options import DisplayOptions
from ..widgets.actionbar import ActionBar, ButtonSpec
from ..widgets.advice import AdvicePanel
from ..widgets.cards import card_label
from ..widgets.hand import HandWidget
from ..widgets.log import EventLog, HandsList
from ..widgets.piles import DISCARD, STOCK, PilesWidget
from ..widgets.players import LOW_TIME_S, OpponentsWidget, Scoreboard, clock_of, remaining_ms, time_level
from ..widgets.topbar import TopBar
from .base import OkginScreen

# The move kinds a key can ask for: ``move(KIND)`` plays it, ``move(KIND, True)`` suggests
# it to the captain (the sitter). The kind is the referee's action kind.
MOVE_KINDS = ("take", "pass", "draw_stock", "draw_discard", "discard", "knock", "big_gin")


#: What ``o`` says it did, per order (options.SORTS); "manual" is not a way of sorting.
SORT_NOTES = {
    "melds": "Hand sorted melds first",
    "suit": "Hand sorted by suit",
    "rank": "Hand sorted by rank",
    "manual": "Your own order: Shift+←/→ moves the selected card",
}


def advice_wait_s(st: TableState, now: float) -> int | None:
    """The whole seconds the captain still waits for our advice (protocol 1.6), while we
    may advise; None when it does not wait (a window over, or none)."""
    until = st.extra.get("advice_until")
    if not isinstance(until, int | float) or not st.can_advise or now >= until:
        return None
    return math.ceil(until - now)


def away_text(st: TableState, now: float) -> str:
    """"ann disconnected — seat forfeits in 38 s" for each other seat whose connection is
    gone (``now`` on the reducer's monotonic clock); "" when everyone is here."""
    parts = []
    for _seat, (name, deadline) in sorted((st.extra.get("away") or {}).items()):
        if deadline is None:
            parts.append(f"{name} disconnected")
        else:
            parts.append(f"{name} disconnected — seat forfeits in {max(0, math.ceil(deadline - now))} s")
    return " · ".join(parts)


def move_action(kind: str, advice: bool = False) -> str:
    """The action string of a move key or button (one place spells it)."""
    return f"move('{kind}', True)" if advice else f"move('{kind}')"


class TableScreen(OkginScreen[None]):
    """The game table for both variants and every role (player, sitter, spectator, replay)."""

    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (112, "-wide")]

    BINDINGS = [
        Binding("left,h", "cursor(-1)", "Select", key_display="←→", show=True),
        Binding("right,l", "cursor(1)", "Select", show=False),
        Binding("shift+left,H", "shift(-1)", "Move card", show=False),
        Binding("shift+right,L", "shift(1)", "Move card", show=False),
        Binding("t", move_action("take"), "Take upcard"),
        Binding("p", move_action("pass"), "Pass"),
        Binding("s", move_action("draw_stock"), "Draw stock"),
        Binding("d", move_action("draw_discard"), "Draw discard"),
        Binding("enter,x", move_action("discard"), "Discard", key_display="⏎"),
        Binding("k", move_action("knock"), "Knock"),
        Binding("g", move_action("big_gin"), "Big gin"),
        # The sitter: same keys, suggestions to the captain.
        Binding("t", move_action("take", True), "Suggest take"),
        Binding("p", move_action("pass", True), "Suggest pass"),
        Binding("s", move_action("draw_stock", True), "Suggest stock"),
        Binding("d", move_action("draw_discard", True), "Suggest discard pile"),
        Binding("enter,x", move_action("discard", True), "Suggest discard", key_display="⏎"),
        Binding("k", move_action("knock", True), "Suggest knock"),
        Binding("m", "advise_note", "Write a note"),
        Binding("u", "undo", "Undo discard"),
        # Replay.
        Binding("left,h", "step(-1)", "Back", key_display="←"),
        Binding("right,l", "step(1)", "Forward", key_display="→"),
        Binding("home", "jump(-1)", "Start", show=False),
        Binding("end", "jump(1)", "End", show=False),
        Binding("pageup", "hand_step(-1)", "Prev hand", show=False),
        Binding("pagedown", "hand_step(1)", "Next hand", show=False),
        # Always.
        Binding("o", "sort", "Sort"),
        Binding("i", "hints", "Hints", show=False),
        Binding("a", "ascii", "ASCII", show=False),
        Binding("f", "four_colour", "4 colours", show=False),
        Binding("T", "app.next_theme", "Theme", show=False),
        Binding("S", "app.stats", "Statistics", show=False),
        Binding("r", "rematch", "Rematch"),
        Binding("r", "lobby", "Back to lobby"),  # an arena game (okgin tui --arena): no rematch, the lobby
        Binding("question_mark,f1", "help", "Help", key_display="?"),
        Binding("q", "quit_table", "Quit"),
        Binding("ctrl+t", "show_token", "Session token", show=False),
    ]

    def compose(self) -> ComposeResult:
        yield TopBar(id="topbar")
        yield Static("", id="banner")
        with Horizontal(id="main"):
            with Vertical(id="table"):
                yield OpponentsWidget(id="opponents")
                yield PilesWidget(id="piles")
                with Vertical(id="handbox"):
                    yield HandWidget(id="hand")
                yield Static("", id="whatnow")
                yield ActionBar(id="actions")
                yield EventLog(id="log-narrow", classes="log")
            with Vertical(id="side"):
                yield Scoreboard(id="scoreboard")
                yield AdvicePanel(id="advice")
                yield HandsList(id="hands-list")
        yield Footer()

    # ------------------------------------------------------------------ state
    @property
    def state(self) -> TableState:
        return self.okgin_app.state

    @property
    def options(self) -> DisplayOptions:
        return self.okgin_app.options

    def on_mount(self) -> None:
        self.watch(self.app, "state", self._state_changed, init=False)
        self.watch(self.app, "options", self._options_changed, init=False)
        self._last_hand: tuple[int, int, int | None, Any | None] | None = None
        #: the low-time warning given for the open prompt: (its seq, the level warned of)
        self._time_warned: tuple[int | None, int] = (None, 0)
        self._render_state()
        self.set_interval(1.0, self._tick)
        self.query_one(HandWidget).focus()

    def _state_changed(self, _state: TableState) -> None:
        self._render_state()

    def _options_changed(self, _opts: DisplayOptions) -> None:
        self._render_state()

    def _render_state(self) -> None:
        st = self.state
        opts = self.options
        v = st.view
        kinds: tuple[type[OpponentsWidget | Scoreboard | AdvicePanel | EventLog], ...] = (
            OpponentsWidget, Scoreboard, AdvicePanel, EventLog,
        )
        for kind in kinds:
            for w in self.query(kind):
                w.options = opts  # first: setting the state redraws the widget with them
                w.state = st
        self.query_one(HandsList).state = st
        self.query_one(TopBar).state = st
        piles = self.query_one(PilesWidget)
        piles.options = opts
        piles.view = v
        hand = self.query_one(HandWidget)
        hand.options = opts
        hand_cards = () if v is None or v.hand is None else v.hand
        new_card = None
        if (
            v is not None
            and v.events
            and v.events[-1].kind in ("draw_stock", "draw_discard", "take")
            and v.events[-1].seat == v.hand_of
        ):
            new_card = v.events[-1].card
        key = None if v is None else (v.hand_number, len(v.events), st.seq, st.extra.get("advice_seq"))
        hand.taken_card = v.taken_card if v is not None else None
        hand.new_card = new_card
        if hand_cards != hand.cards:
            hand.cards = hand_cards
        hand.show_cursor = bool(hand_cards) and st.replay is None and self._choosing()
        self.query_one("#handbox").display = bool(hand_cards)
        # A new turn to discard: put the cursor on the hint's best discard (or the new card).
        if key != self._last_hand and v is not None and v.phase == "discard" and (st.my_turn or st.can_advise):
            pick = best_discard(st) if opts.hints else new_card
            if pick is not None and pick in hand_cards:
                hand.selected = pick
        self._last_hand = key
        box = self.query_one("#handbox")
        box.border_title = self._hand_title()
        self._warn_low_time()
        self._update_prompt()
        self._update_banner()
        self._refresh_keys()

    def _keys_signature(self) -> tuple:
        st = self.state
        return (
            st.my_turn,
            tuple(sorted(st.legal_kinds())),
            st.can_advise,
            tuple(sorted({a.kind for a in st.advice_legal})),
            self._choosing(),
            st.game_over,
            st.replay is not None,
            st.spectator,
            bool(st.view and st.view.hand),
            st.extra.get("held_discard"),
        )

    def _refresh_keys(self) -> None:
        """Refresh the footer only when the moves on offer change: rebuilding it on every
        message (or cursor move) costs more than everything else on the screen."""
        sig = self._keys_signature()
        if sig != getattr(self, "_keys_sig", None):
            self._keys_sig = sig
            self.refresh_bindings()

    def _choosing(self) -> bool:
        """A card is to be chosen now: our discard, or the sitter advising one."""
        st = self.state
        v = st.view
        if v is None or v.phase != "discard":
            return False
        return (st.my_turn and "discard" in st.legal_kinds()) or (
            st.can_advise and any(a.kind == "discard" for a in st.advice_legal)
        )

    def _hand_title(self) -> str:
        st = self.state
        v = st.view
        if v is None:
            return ""
        if st.spectator or v.hand is None:
            return "Spectating" if st.spectator else ""
        if st.is_sitter:
            wait = advice_wait_s(st, self.okgin_app.clock())
            if wait is not None:  # 1.6: the captain waits for our advice; the seconds go down
                return f"{st.name(v.hand_of)}'s hand (your captain) · waits {wait} s for your advice"
            pace = self.okgin_app.pace  # okgin play: the bots' pace while you watch
            return f"{st.name(v.hand_of)}'s hand (your captain)" + (f" · a move every {pace:g} s" if pace else "")
        title = f"Your hand ({st.role and {'dealer': 'dealer', 'nondealer': 'non-dealer'}.get(st.role, st.role)})"
        mine = clock_of(st, v.seat, self.okgin_app.clock()) if v.seat is not None else None
        if mine:
            title += f" · your time {mine}"
        return title

    def _update_banner(self, now: float | None = None) -> None:
        """Our connection lost, or another seat's (seat_status, protocol 1.4) with the
        seconds left before its seat is forfeited, counted down by :meth:`_tick`."""
        st = self.state
        banner = self.query_one("#banner", Static)
        if st.connection == LOST:
            banner.update(f"Connection lost: reconnecting… {st.notice or ''}".strip())
            banner.display = True
            return
        if st.connection == ENDED:
            banner.update(st.notice or "Disconnected from the referee. Press q to close this window.")
            banner.display = True
            return
        text = away_text(st, self.okgin_app.clock() if now is None else now)
        banner.update(text)
        banner.display = bool(text)  # a refused move is told on the prompt line, by the hand

    def _tick(self) -> None:
        """Count the clocks down between the referee's messages (its clock is the authority)."""
        st = self.state
        if st.extra.get("away"):
            self._update_banner()
        if st.extra.get("advice_until") and st.can_advise:
            self.query_one("#handbox").border_title = self._hand_title()
        if any(c is not None and c.running for c in st.clocks):
            self.query_one("#handbox").border_title = self._hand_title()
            self._warn_low_time()
            self.query_one(OpponentsWidget).refresh()

    def my_time_ms(self) -> int | None:
        """What is left of the player's running move, now (None: not our move, or no clock)."""
        st = self.state
        v = st.view
        if v is None or v.seat is None or not st.my_turn or v.seat >= len(st.clocks):
            return None
        clock = st.clocks[v.seat]
        if clock is None or not clock.running:
            return None
        return remaining_ms(clock, self.okgin_app.clock())

    def _warn_low_time(self) -> None:
        """The hand's frame in yellow under 30 s to move and red under 10 s, with the bell
        and a toast as each is crossed (issue 28: "your time 0:04" used to be the only
        sign). The level a move starts at colours at once but rings only if critical, so
        a table of 20 s moves does not ring at every move."""
        level = time_level(self.my_time_ms())
        box = self.query_one("#handbox")
        box.set_class(level == 1, "-low-time")
        box.set_class(level == 2, "-critical-time")
        seq = self.state.seq
        warned_seq, warned = self._time_warned
        if seq != warned_seq:
            self._time_warned = (seq, min(level, 1))  # a fresh move: its starting level is no news
            warned = min(level, 1)
        if level > warned:
            self._time_warned = (seq, level)
            self.app.bell()
            limit = LOW_TIME_S[level - 1]
            self.notify(f"Less than {limit} s left to move!", severity="error" if level == 2 else "warning", timeout=4)

    def _update_prompt(self) -> None:
        st = self.state
        opts = self.options
        hand = self.query_one(HandWidget)
        sel = hand.selected
        line = status_line(st, sel, opts)
        self.query_one("#handbox").border_subtitle = line.plain if st.view is not None and st.view.hand else ""
        self.query_one("#whatnow", Static).update(what_now(st, sel, opts))
        self.query_one(ActionBar).set_specs(self._buttons())
        piles = self.query_one(PilesWidget)
        kinds = st.legal_kinds() if st.my_turn else ({a.kind for a in st.advice_legal} if st.can_advise else set())
        piles.highlight = STOCK if kinds == {"draw_stock"} else DISCARD if "take" in kinds else None

    def on_hand_widget_selected(self, _msg: HandWidget.Selected) -> None:
        self._update_prompt()

    # ---------------------------------------------------------------- buttons
    def _buttons(self) -> tuple[ButtonSpec, ...]:
        st = self.state
        opts = self.options
        v = st.view
        sel = self.query_one(HandWidget).selected
        out: list[ButtonSpec] = []
        if st.replay is not None:
            return (("step(-1)", "← Back", "default"), ("step(1)", "Forward →", "primary"))
        if st.game_over:
            if st.spectator:  # only the players can ask for a rematch
                return (("quit_table", "Quit (q)", "default"),)
            if self.okgin_app.in_arena:
                return (("lobby", "Back to lobby (r)", "primary"),)
            return (("rematch", "Rematch (r)", "primary"), ("quit_table", "Quit (q)", "default"))
        if v is None:
            return ()
        if st.extra.get("held_discard") is not None:
            return (("undo", "Undo discard (u)", "warning"),)
        if st.my_turn:
            legal, advice = st.legal, False
        elif st.can_advise:
            legal, advice = st.advice_legal, True
        else:
            return ()
        kinds = {a.kind for a in legal}
        word = "Suggest " if advice else ""
        up = v.top_discard
        if "take" in kinds:
            out.append(
                (move_action("take", advice), f"{word}Take {card_label(up, opts) if up is not None else ''} (t)", "primary")
            )
        if "pass" in kinds:
            out.append((move_action("pass", advice), f"{word}Pass (p)", "default"))
        if "draw_stock" in kinds:
            out.append((move_action("draw_stock", advice), f"{word}Draw stock (s)", "primary"))
        if "draw_discard" in kinds:
            out.append(
                (
                    move_action("draw_discard", advice),
                    f"{word}Take {card_label(up, opts) if up is not None else ''} (d)",
                    "default",
                )
            )
        if "discard" in kinds and sel is not None:
            out.append((move_action("discard", advice), f"{word}Discard {card_label(sel, opts)} (⏎)", "primary"))
        if "knock" in kinds:
            knock_ok = Action("knock", sel) in legal if sel is not None else False
            label = f"{word}Knock with {card_label(sel, opts)} (k)" if knock_ok and sel is not None else f"{word}Knock… (k)"
            out.append((move_action("knock", advice), label, "success"))
        if "big_gin" in kinds and not advice:
            out.append((move_action("big_gin"), "Big gin (g)", "success"))
        if advice:
            out.append(("advise_note", "Note (m)", "default"))
        return tuple(out)

    @on(Button.Pressed, "ActionBar Button")
    async def _button(self, event: Button.Pressed) -> None:
        name = event.button.name or ""
        await self.run_action(name)

    # ---------------------------------------------------------------- actions
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        st = self.state
        replay = st.replay is not None
        if action in ("step", "jump", "hand_step"):
            return replay
        if action in ("cursor", "shift"):
            if replay or not self._choosing():
                return False
            return bool(self.query_one(HandWidget).order)
        if action == "move":
            kind, advice = (*parameters, False)[:2]
            if advice:
                return st.can_advise and kind in {a.kind for a in st.advice_legal}
            return st.my_turn and kind in st.legal_kinds()
        if action == "advise_note":
            return st.can_advise
        if action == "undo":
            return st.extra.get("held_discard") is not None
        if action == "rematch":
            return st.game_over and st.replay is None and not st.spectator and not self.okgin_app.in_arena
        if action == "lobby":
            return st.game_over and self.okgin_app.in_arena
        if action == "sort":
            return bool(self.query_one(HandWidget).order)
        return True

    def _hand(self) -> HandWidget:
        return self.query_one(HandWidget)

    def action_cursor(self, delta: int) -> None:
        self._hand().move_cursor(delta)

    def action_shift(self, delta: int) -> None:
        if self.options.sort != "manual":
            self.okgin_app.options = DisplayOptions(self.options.ascii, self.options.four_colour, self.options.hints, "manual")
            self.notify("Sorting switched to manual: Shift+←/→ moves the selected card.", timeout=3)
        self._hand().move_selected(delta)

    def action_sort(self) -> None:
        new = self.options.next_sort()
        self.okgin_app.options = new
        self.notify(SORT_NOTES.get(new.sort, f"Hand sorted by {new.sort}"), timeout=2)

    def action_hints(self) -> None:
        o = self.options
        self.okgin_app.options = DisplayOptions(o.ascii, o.four_colour, not o.hints, o.sort)

    def action_ascii(self) -> None:
        o = self.options
        self.okgin_app.options = DisplayOptions(not o.ascii, o.four_colour, o.hints, o.sort)

    def action_four_colour(self) -> None:
        o = self.options
        self.okgin_app.options = DisplayOptions(o.ascii, not o.four_colour, o.hints, o.sort)

    async def _play(self, action: Action) -> None:
        await self.okgin_app.play(action)

    async def action_move(self, kind: str, advice: bool = False) -> None:
        """Every move key and button: play ``kind`` (or, with ``advice``, suggest it to the
        captain). Discard and knock take the selected card; knock without a card that can
        knock moves the cursor to one instead (press again to confirm)."""
        if kind not in MOVE_KINDS:
            return
        card: Card | None = None
        if kind == "discard":
            card = self._hand().selected
            if card is None:
                return
        elif kind == "knock":
            card = self._knock_choice(self.state.advice_legal if advice else self.state.legal)
            if card is None:
                return
        action = Action(kind, card)
        if advice:
            await self._advise(action)
        else:
            await self._play(action)

    def _knock_choice(self, legal: tuple[Action, ...]) -> Card | None:
        """The card to throw face down: the selected one if it can knock, else None
        (and the cursor jumps to the best knocking card, to confirm with k again)."""
        hand = self._hand()
        sel = hand.selected
        if sel is not None and Action("knock", sel) in legal:
            return sel
        info = hand_info(self.state, sel)
        if info is not None and info.knock_cards:
            hand.selected = info.knock_cards[0]
            self._update_prompt()
            self.notify(
                f"To knock, throw {card_label(info.knock_cards[0], self.options)} face down: press k again.",
                title="Knock",
                timeout=4,
            )
        return None

    # ---- the sitter's advice
    async def _advise(self, action: Action | None, text: str = "") -> None:
        await self.okgin_app.advise(action, text)

    def action_undo(self) -> None:
        """Take back the discard still held (``okgin play``'s undo window)."""
        if self.okgin_app.undo_discard():
            self.notify("Discard taken back: choose again.", timeout=3)

    def action_advise_note(self) -> None:
        from .advice_note import AdviceNoteScreen

        def sent(text: str | None) -> None:
            if text:
                self.run_worker(self._advise(None, text), group="advice")

        self.app.push_screen(AdviceNoteScreen(), sent)

    # ---- replay, help, rematch, quit
    def action_step(self, delta: int) -> None:
        self.okgin_app.replay_step(delta)

    def action_jump(self, direction: int) -> None:
        self.okgin_app.replay_jump(direction)

    def action_hand_step(self, delta: int) -> None:
        self.okgin_app.replay_hand_step(delta)

    def action_help(self) -> None:
        from .help import HelpScreen

        self.app.push_screen(HelpScreen())

    async def action_rematch(self) -> None:
        await self.okgin_app.rematch()

    async def action_lobby(self) -> None:
        await self.okgin_app.back_to_lobby()

    def action_show_token(self) -> None:
        """The session token, with its warning (the token is the seat)."""
        from .quit_confirm import token_text

        token = getattr(self.okgin_app.backend, "token", None)
        self.notify(token_text(token), title="Your session", severity="warning", timeout=15)

    def action_quit_table(self) -> None:
        self.okgin_app.request_quit()

    # ------------------------------------------------------------------- mouse
    async def on_hand_widget_activated(self, msg: HandWidget.Activated) -> None:
        """Double click on a card: discard it (or suggest it, for the sitter)."""
        self._update_prompt()
        st = self.state
        if st.my_turn and "discard" in st.legal_kinds():
            await self._play(Action("discard", msg.card))
        elif st.can_advise and any(a.kind == "discard" for a in st.advice_legal):
            await self._advise(Action("discard", msg.card))

    async def on_piles_widget_activated(self, msg: PilesWidget.Activated) -> None:
        """Click on a pile shows what it would do; a double click does it."""
        st = self.state
        kinds = st.legal_kinds() if st.my_turn else set()
        if msg.pile == STOCK:
            act = "draw_stock" if "draw_stock" in kinds else None
        else:
            act = "take" if "take" in kinds else "draw_discard" if "draw_discard" in kinds else None
        if act is None:
            return
        if msg.double:
            await self._play(Action(act))
        else:
            self.notify(
                "Double-click to "
                + ("draw from the stock" if act == "draw_stock" else "take that card")
                + f" (or press {'s' if act == 'draw_stock' else 't' if act == 'take' else 'd'}).",
                timeout=3,
            )
