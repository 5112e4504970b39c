"""The top line: game, hand number, target, scores, and the connection state."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from okgin.wording import variant_words

from ..model import CONNECTING, ENDED, LOST, TableState
from ..names import column_names


class TopBar(Widget):
    DEFAULT_CSS = """
    TopBar { height: 1; background: $panel; }
    """

    state: reactive[TableState] = reactive(TableState(), always_update=True)

    def scores_line(self, width: int) -> Text:
        """Game, hand, target and every score, in the longest form that fits ``width``:
        at 80 columns three players' names and scores must all show (the third score was
        cut off), so the game's name goes first, then the names are shortened."""
        st = self.state
        v = st.view
        assert v is not None
        names = [st.name(s) for s in range(v.num_seats)]
        forms = [
            (f" {variant_words(v.variant)} · hand {v.hand_number + 1} · to {v.target_score} · ", names),
            (f" hand {v.hand_number + 1} · to {v.target_score} · ", names),
            (f" hand {v.hand_number + 1} · to {v.target_score} · ", column_names(names, 8)),
            (f" h{v.hand_number + 1} · ", column_names(names, 6)),
        ]
        t = Text()
        for head, shown in forms:
            t = Text(head)
            for s in range(v.num_seats):
                if s:
                    t.append(" · ")
                t.append(f"{shown[s]} ", style="bold" if s == v.seat else "")
                t.append(str(v.scores[s]), style="bold")
            if t.cell_len <= width:
                break
        return t

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
            t.append_text(self.scores_line(self.size.width - t.cell_len - self.status_width()))
            if st.table and t.cell_len + len(st.table) + 9 + self.status_width() <= self.size.width:
                t.append(f" · table {st.table}", style="dim")
        t.append_text(self.status())
        return t

    def status_width(self) -> int:
        return self.status().cell_len

    def status(self) -> Text:
        st = self.state
        t = Text()
        if st.connection == LOST:
            t.append("  [connection lost]", style="bold red")
        elif st.connection == ENDED:
            t.append("  [disconnected]", style="bold red")
        elif st.connection == CONNECTING:
            t.append("  [connecting]", style="bold yellow")
        return t
