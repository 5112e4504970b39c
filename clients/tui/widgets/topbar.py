"""The top line: game, hand number, target, scores, and the connection state."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from okgin.wording import variant_words

from ..model import CONNECTING, LOST, TableState


class TopBar(Widget):
    DEFAULT_CSS = """
    TopBar { height: 1; background: $panel; }
    """

    state: reactive[TableState] = reactive(TableState(), always_update=True)

    def render(self) -> Text:
        st = self.state
        v = st.view
        t = Text()
        t.append(" okgin ", style="bold reverse")
        if v is None:
            # The notice itself (connecting, retrying, waiting for players) is told once,
            # wrapped, on the table's prompt line; cut to one line here it lost its end.
            t.append(f"  table {st.table}" if st.table else "  not at a table")
        else:
            t.append(f" {variant_words(v.variant)} · hand {v.hand_number + 1} · to {v.target_score} · ")
            for s in range(v.num_seats):
                if s:
                    t.append(" · ")
                t.append(f"{st.name(s)} ", style="bold" if s == v.seat else "")
                t.append(str(v.scores[s]), style="bold")
            if st.table and t.cell_len + len(st.table) + 9 <= self.size.width:
                t.append(f" · table {st.table}", style="dim")
        if st.connection == LOST:
            t.append("  [connection lost]", style="bold red")
        elif st.connection == CONNECTING:
            t.append("  [connecting]", style="bold yellow")
        return t
