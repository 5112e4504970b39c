"""The event log: this hand's moves as sentences, newest at the bottom, and how the
previous hands ended. Built from the view's events (which already hide what this viewer
may not see), so it never needs its own memory of the game."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from okgin.wording import outcome_words

from ..describe import event_sentence, result_sentence
from ..model import TableState
from ..options import DisplayOptions
from .cards import join_lines


def log_lines(state: TableState, opts: DisplayOptions) -> list[Text]:
    lines: list[Text] = []
    for r in state.results[-3:]:
        lines.append(Text(result_sentence(state, r), style="dim"))
    v = state.view
    if v is not None and (v.phase != "game_over" or v.events):
        lines.append(Text(f"Hand {v.hand_number + 1}: {state.name(v.dealer)} dealt.", style="dim"))
        for ev in v.events:
            lines.append(Text(event_sentence(state, ev, opts), style="bold" if ev.seat == v.seat else ""))
        if v.advice:
            # One line per hand, however much advice flows: the moves stay in view.
            from ..describe import advice_phrase

            last = v.advice[-1]
            n = len(v.advice)
            t = Text(f"{state.name(last.seat)} advised" + (f" {n} times" if n > 1 else "") + ("; last: " if n > 1 else ": "),
                     style="italic")
            t.append(advice_phrase(last.action, last.text, opts, v.upcard, v.top_discard))
            lines.append(t)
    if state.error:
        lines.append(Text(state.error, style="bold red"))
    return lines


class EventLog(Widget):
    DEFAULT_CSS = """
    EventLog { height: 1fr; }
    """

    state: reactive[TableState] = reactive(TableState(), always_update=True)
    options: reactive[DisplayOptions] = reactive(DisplayOptions())

    def render(self) -> Text:
        lines = log_lines(self.state, self.options)
        h = max(self.size.height, 1)
        return join_lines(lines[-h:])


class HandsList(Widget):
    """The hands played so far, one line each (wide layout's side panel)."""

    DEFAULT_CSS = """
    HandsList { height: 1fr; }
    """

    state: reactive[TableState] = reactive(TableState(), always_update=True)

    def render(self) -> Text:
        st = self.state
        lines = [Text("Hands", style="bold")]
        if not st.results:
            lines.append(Text("none finished yet", style="dim"))
        for r in st.results:
            t = Text(f"{r.hand_number + 1:>2} ")
            t.append(outcome_words(r.outcome))
            if r.winner is not None:
                t.append(f" · {st.name(r.winner)} +{r.points}", style="bold")
            lines.append(t)
        h = max(self.size.height, 1)
        if len(lines) > h:
            lines = [lines[0], *lines[-(h - 1):]] if h > 1 else lines[:1]
        return join_lines(lines)
