"""Gin in the Box: the advice between the sitter and its captain (docs/rules.md §4).

The captain sees what its partner suggests; the sitter sees what it has sent. Advice
never moves the game: the captain alone decides.
"""

from __future__ import annotations

from rich.text import Text
from textual.geometry import Size
from textual.reactive import reactive
from textual.widget import Widget

from ..describe import action_phrase, card_codes_to_labels
from ..model import TableState
from ..options import DisplayOptions
from .cards import join_lines


class AdvicePanel(Widget):
    DEFAULT_CSS = """
    AdvicePanel { height: auto; }
    """

    state: reactive[TableState] = reactive(TableState(), always_update=True, layout=True)
    options: reactive[DisplayOptions] = reactive(DisplayOptions())

    def lines(self) -> list[Text]:
        st = self.state
        v = st.view
        if v is None or v.variant != "box":
            return []
        role = st.role
        if role == "captain":
            head = Text("Advice from your partner", style="bold")
        elif role == "sitter":
            head = Text(f"Your advice to {st.name(v.hand_of)}", style="bold")
        else:
            return [Text("The captain and the sitter talk in private.", style="dim")]
        out = [head]
        if not v.advice:
            out.append(Text("none yet this hand", style="dim"))
        for a in v.advice[-4:]:
            t = Text("• ")
            if a.action is not None:
                t.append(action_phrase(a.action, self.options, v.upcard, v.top_discard), style="bold")
            if a.text:
                t.append(
                    (" — " if a.action is not None else "") + f'"{card_codes_to_labels(a.text, self.options)}"', style="italic"
                )
            out.append(t)
        return out

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        # Each line's wrapped height: a note is longer than the side panel is wide, and
        # cut at the panel's edge it lost its end (the log keeps only the last one).
        if width <= 0:
            return len(self.lines())
        return sum(len(t.wrap(self.app.console, width)) for t in self.lines())

    def render(self) -> Text:
        return join_lines(self.lines())
