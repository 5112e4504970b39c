"""The sitter writes a short note to its captain (docs/rules.md §4: advice is a suggested
action and/or a short text; the captain alone decides)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

MAX_TEXT = 280  # okgin.game.MAX_ADVICE_TEXT


class AdviceNoteScreen(ModalScreen[str | None]):
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static("A note to your captain (Enter sends, Esc cancels)", classes="dialog-title")
            yield Input(placeholder="e.g. keep the hearts, they are live", max_length=MAX_TEXT, id="note")

    def on_mount(self) -> None:
        inp = self.query_one(Input)
        inp.cursor_blink = getattr(self.app, "cursor_blink", True)
        inp.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
