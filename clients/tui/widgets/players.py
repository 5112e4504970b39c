"""The other players: one line each (name, role, cards held, cards known to be in the
hand, score), and a fuller scoreboard for wide terminals and the game-over screen.

Whose turn it is shows as a ``▶`` marker and the words "to play", never by colour alone.
"""

from __future__ import annotations

import time

from rich.text import Text
from textual.geometry import Size
from textual.reactive import reactive
from textual.widget import Widget

from okgin.wording import role_words

from ..model import ClockReading, TableState
from ..names import column_names
from ..options import DisplayOptions
from .cards import cards_text, join_lines


def remaining_ms(clock: ClockReading | None, now: float | None = None) -> int | None:
    """A seat's time left at ``now``, counted down locally while the referee says it runs
    (None: no clock)."""
    if clock is None or clock.remaining_ms is None:
        return None
    ms = clock.remaining_ms
    if clock.running and clock.received:
        ms -= int(((now if now is not None else time.monotonic()) - clock.received) * 1000)
    return max(ms, 0)


def format_clock(clock: ClockReading | None, now: float | None = None) -> str | None:
    """``m:ss`` of a seat's bank, counted down locally while the referee says it runs."""
    ms = remaining_ms(clock, now)
    if ms is None:
        return None
    s = ms // 1000
    return f"{s // 60}:{s % 60:02d}"


#: Seconds left to move at which the table warns its player (issue 28): the hand's frame
#: turns yellow below the first and red below the second, and the terminal's bell rings
#: as each is crossed (docs/rules.md §7.1).
LOW_TIME_S = (30, 10)


def time_level(ms: int | None) -> int:
    """0: time enough (or no clock); 1: low (under 30 s); 2: critical (under 10 s)."""
    if ms is None:
        return 0
    return sum(ms < s * 1000 for s in LOW_TIME_S)


def open_hand_text(cards: tuple[int, ...], opts: DisplayOptions) -> Text:
    """A hand shown face up (replays, full feeds): melds in brackets, then deadwood."""
    from okgin import best_melds

    t = Text()
    if not cards:
        return t
    arr = best_melds(list(cards)) if len(cards) <= 11 else None
    if arr is None:
        return cards_text(cards, opts)
    for m in arr.melds:
        t.append("[")
        t.append_text(cards_text(m, opts))
        t.append("] ")
    t.append_text(cards_text(arr.deadwood_cards, opts, empty=""))
    t.append(f" ({arr.deadwood})", style="dim")
    return t


def clock_of(state: TableState, seat: int, now: float | None = None) -> str | None:
    """``m:ss`` of ``seat``'s clock at ``now`` (the app's clock; None: the monotonic clock)."""
    return format_clock(state.clocks[seat], now) if seat < len(state.clocks) else None


def app_now(widget: Widget) -> float:
    """The okgin app's clock (OkginApp.clock, frozen in snapshot tests), else monotonic."""
    clock = getattr(widget.app, "clock", None)
    return clock() if callable(clock) else time.monotonic()


def last_move_text(st: TableState, seat: int, opts: DisplayOptions) -> Text:
    """The card ``seat`` just took or threw, highlighted on its line until the next move
    ("took 7♦", "threw 9♠"): a card that changes hands is easy to miss in the log."""
    from .cards import card_text

    v = st.view
    if v is None or not v.events or seat == v.seat:
        return Text("")
    ev = v.events[-1]
    if ev.seat != seat or ev.card is None or ev.kind not in ("take", "draw_discard", "discard"):
        return Text("")
    t = Text("  ")
    t.append("threw " if ev.kind == "discard" else "took ", style="bold yellow")
    t.append_text(card_text(ev.card, opts))
    return t


class OpponentsWidget(Widget):
    """One line per seat other than ours."""

    DEFAULT_CSS = """
    OpponentsWidget { height: auto; }
    """

    state: reactive[TableState] = reactive(TableState(), always_update=True, layout=True)
    options: reactive[DisplayOptions] = reactive(DisplayOptions())

    def seats(self) -> list[int]:
        st = self.state
        if st.view is None:
            return []
        if st.spectator:
            return list(range(st.view.num_seats))
        return st.opponents()

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return max(len(self.seats()), 1)

    def render(self) -> Text:
        st = self.state
        v = st.view
        if v is None:
            return Text("")  # the notice is on the prompt line (describe.what_now), once
        lines = []
        for s in self.seats():
            lines.append(self.seat_line(s))
        return join_lines(lines)

    def seat_line(self, s: int) -> Text:
        st = self.state
        v = st.view
        assert v is not None
        opts = self.options
        t = Text()
        turn = v.to_act == s
        t.append(("> " if opts.ascii else "▶ ") if turn else "  ", style="bold yellow")
        t.append(st.plain_name(s) if st.spectator else st.name(s), style="bold")
        role = v.roles[s] if s < len(v.roles) else ""
        if role:
            t.append(f" ({role_words(role)})", style="dim")
        if role == "sitter":
            t.append(f" advises {st.name(v.nondealer)}", style="dim")  # the captain is the box's non-dealer
        else:
            n = v.hand_sizes[s] if s < len(v.hand_sizes) else 0
            if v.all_hands is not None and s < len(v.all_hands):
                t.append("  ")
                t.append_text(open_hand_text(v.all_hands[s], opts))
            else:
                t.append(f"  {n} cards ")
                known = v.known_cards[s] if s < len(v.known_cards) else ()
                t.append(("#" if opts.ascii else "░") * min(n, 11), style="dim")
                if known:
                    t.append("  holds ")
                    t.append_text(cards_text(known, opts))
        t.append_text(last_move_text(st, s, opts))
        t.append(f"  score {v.scores[s]}")
        clock = clock_of(st, s, app_now(self))
        if clock:
            t.append(f"  {clock}", style="bold" if turn else "")
        if turn:
            t.append("  to play", style="bold yellow")
        return t


class Scoreboard(Widget):
    """Every seat's score against the target, with hands won (wide layout)."""

    DEFAULT_CSS = """
    Scoreboard { height: auto; }
    """

    state: reactive[TableState] = reactive(TableState(), always_update=True, layout=True)
    options: reactive[DisplayOptions] = reactive(DisplayOptions())

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        v = self.state.view
        return 1 + (v.num_seats if v else 0)

    def render(self) -> Text:
        st = self.state
        v = st.view
        if v is None:
            return Text("")
        width = max(self.size.width, 20)
        lines = [Text(f"Scores (first to {v.target_score})", style="bold")]
        full = [st.name(s) for s in range(v.num_seats)]
        # Hands won in words: "0 ···· 0w" read as a riddle (issue 28). The longest form
        # that fits the panel: "3 hands won", then "3 won" with names cut to fit.
        won = [f" {n} hand{'' if n == 1 else 's'} won" for n in v.hands_won]
        names = column_names(full)
        if width - max(len(n) for n in names) - 6 - max(len(w) for w in won) < 3:
            won = [f" {n} won" for n in v.hands_won]
            names = column_names(full, max(min(12, width - 6 - max(len(w) for w in won) - 3), 3))
        name_w = max(len(n) for n in names)
        won_w = max(len(w) for w in won)
        bar_w = max(width - name_w - 6 - won_w, 1)
        for s in range(v.num_seats):
            t = Text()
            t.append(names[s].ljust(name_w))
            t.append(f" {v.scores[s]:>4} ", style="bold")
            filled = min(bar_w, v.scores[s] * bar_w // max(v.target_score, 1))
            t.append(("=" if self.options.ascii else "█") * filled, style="green")
            t.append(("." if self.options.ascii else "·") * (bar_w - filled), style="dim")
            t.append(won[s].ljust(won_w), style="dim")
            lines.append(t)
        return join_lines(lines)
