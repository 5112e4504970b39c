"""The event log: this hand's moves as sentences, newest at the bottom, and how the
previous hands ended. Built from the view's events (which already hide what this viewer
may not see), so it never needs its own memory of the game."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from okgin.wording import outcome_words, role_draw_sentence

from ..describe import event_sentence, result_sentence
from ..model import TableState
from ..options import DisplayOptions
from .cards import card_label, join_lines

MOVES_UNDER_DRAW = 4  # rows the pinned role draw leaves to the latest moves, at least


def role_draw_lines(state: TableState, opts: DisplayOptions) -> list[Text]:
    """Gin in the Box, first hand: the draw for roles (the view's public ``role_draws``)
    and who got which role, so nobody wonders why they sit out the first hand."""
    v = state.view
    if v is None or v.variant != "box" or v.hand_number != 0 or not v.role_draws or v.phase == "game_over":
        return []
    if not all(r in v.roles for r in ("box", "captain", "sitter")):
        return []
    roles = (v.roles.index("box"), v.roles.index("captain"), v.roles.index("sitter"))
    lines = role_draw_sentence(v.role_draws, roles, state.name, lambda c: card_label(c, opts))
    return [Text(line, style="italic") for line in lines]


def log_lines(state: TableState, opts: DisplayOptions) -> list[Text]:
    lines: list[Text] = []
    for r in state.results[-3:]:
        lines.append(Text(result_sentence(state, r), style="dim"))
    v = state.view
    if v is not None and (v.phase != "game_over" or v.events):
        lines.append(Text(f"Hand {v.hand_number + 1}: {state.name(v.dealer)} dealt.", style="dim"))
        ended = next((r for r in state.results if r.hand_number == v.hand_number), None)
        for i, ev in enumerate(v.events):
            final = i == len(v.events) - 1
            lines.append(Text(event_sentence(state, ev, opts, ended.outcome if ended is not None and final else None),
                              style="bold" if ev.seat == v.seat else ""))
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
        w = max(self.size.width, 1)
        # The role draw stays in view through the first hand (the moves scroll under it)
        # while it leaves room for the last few moves. Its sentences wrap on a narrow
        # screen, so it is measured in rows: at 80x24 the draw's four rows once left the
        # log no row for the player's own last move.
        pinned = role_draw_lines(self.state, self.options)
        rows = sum(max(1, -(-t.cell_len // w)) for t in pinned)
        if pinned and rows + MOVES_UNDER_DRAW <= h:
            return join_lines([*pinned, *lines[-(h - rows):]])
        # Too little room to pin it: the draw opens the log and scrolls away under the moves.
        return join_lines([*pinned, *lines][-h:])


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
