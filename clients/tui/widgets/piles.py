"""The middle of the table: stock, discard pile, knock limit and the discard history.

Drawn by one widget so the piles keep their places when the window resizes. A click on
the stock or the discard pile selects it; a double click asks for the move (draw from
the stock, take the upcard or the top discard) through :class:`PilesWidget.Activated`.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual import events
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget

from okgin import View

from ..options import DisplayOptions
from .cards import box_chars, card_box, card_label, card_text, hstack, join_lines

STOCK, DISCARD = "stock", "discard"


class PilesWidget(Widget):
    """Stock and discard pile with the hand's knock limit beside them."""

    # A double click plays a card (or draws from a pile): Textual's text selection, on by
    # default, left a blue block over the hand after it (issue 28).
    ALLOW_SELECT = False

    DEFAULT_CSS = """
    PilesWidget { height: 5; }
    """

    class Activated(Message):
        """A pile was clicked: ``pile`` is ``stock`` or ``discard``; ``double`` for a double click."""

        def __init__(self, pile: str, double: bool) -> None:
            super().__init__()
            self.pile = pile
            self.double = double

    view: reactive[View | None] = reactive(None, always_update=True)
    options: reactive[DisplayOptions] = reactive(DisplayOptions())
    highlight: reactive[str | None] = reactive(None)  # pile the current move would use

    CARD_W = 5
    STOCK_X = 0
    DISCARD_X = 10

    def render(self) -> Text:
        v = self.view
        opts = self.options
        if v is None:
            return Text("")
        labels = Text("Stock".ljust(self.DISCARD_X) + ("Upcard" if v.phase == "offer" else "Discard").ljust(9))
        st_frame = Style(bold=True, color="yellow") if self.highlight == STOCK else Style()
        dc_frame = Style(bold=True, color="yellow") if self.highlight == DISCARD else Style()
        stock = card_box(None, opts, frame=st_frame, box=box_chars(opts, self.highlight == STOCK), back=v.stock_size > 0)
        count = Text(f"{v.stock_size:>2} left", style="bold")
        top = v.top_discard
        discard = card_box(top, opts, frame=dc_frame, box=box_chars(opts, self.highlight == DISCARD))
        side = self._side(v, opts)
        stock_col = [*stock, count]
        disc_col = [*discard, Text(f"{len(v.discard_pile):>2} card{'s' if len(v.discard_pile) != 1 else ''}".ljust(8))]
        body = hstack([stock_col, disc_col], gap=3)
        lines = [labels]
        for i, line in enumerate(body):
            line.append("  ")
            if i < len(side):
                line.append_text(side[i])
            lines.append(line)
        for extra in side[len(body):]:
            lines.append(Text(" " * 20).append_text(extra))
        return join_lines(lines[: max(self.size.height, 1)])

    def _side(self, v: View, opts: DisplayOptions) -> list[Text]:
        """Knock limit (with its reason), doubling, and the discard pile under the top."""
        kl = Text()
        if v.knock_limit == 0:
            kl.append("Gin only this hand", style="bold")
            kl.append(" (ace upcard)" if v.upcard % 13 == 0 else "", style="dim")
        else:
            kl.append(f"Knock limit {v.knock_limit}", style="bold")
            if v.variant == "oklahoma":
                kl.append(" (upcard ", style="dim")
                kl.append_text(card_text(v.upcard, opts))
                kl.append(")", style="dim")
        out = [kl]
        if v.doubled:
            out.append(Text("Spade upcard: points doubled (x2)", style="bold"))
        width = max(self.size.width - 20, 20)
        under = list(v.discard_pile[:-1])
        hist = Text("Below: ", style="dim")
        if not under:
            hist.append("nothing", style="dim")
        else:
            shown: list[int] = []
            used = 7
            for c in reversed(under):
                w = len(card_label(c, opts)) + 1
                if used + w > width - 2:
                    break
                shown.append(c)
                used += w
            if len(shown) < len(under):
                hist.append("… ", style="dim")
            for i, c in enumerate(reversed(shown)):
                if i:
                    hist.append(" ")
                hist.append_text(card_text(c, opts))
        out.append(hist)
        return out

    def on_click(self, event: events.Click) -> None:
        x = event.x
        pile = (
            STOCK
            if self.STOCK_X <= x < self.STOCK_X + self.CARD_W + 1
            else DISCARD
            if self.DISCARD_X - 1 <= x < self.DISCARD_X + self.CARD_W + 1
            else None
        )
        if pile is None or event.y == 0:
            return
        self.post_message(self.Activated(pile, event.chain >= 2))
