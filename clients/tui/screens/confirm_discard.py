"""Confirm a discard (``okgin play --confirm-discards``): misclick protection for those who
want every discard asked, not only a few seconds to undo it."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Footer, Static

from okgin import Action

from ..widgets.cards import card_label
from .base import OkginModalScreen


class ConfirmDiscardScreen(OkginModalScreen[bool]):
    """"Discard 9♠?": Enter or y discards, Esc or n goes back to choose again."""

    BINDINGS = [
        Binding("enter,y,x", "answer(True)", "Discard", key_display="⏎"),
        Binding("escape,n", "answer(False)", "Back"),
    ]

    def __init__(self, action: Action) -> None:
        super().__init__()
        self.action_to_confirm = action

    def compose(self) -> ComposeResult:
        card = self.action_to_confirm.card
        label = card_label(card, self.okgin_app.options) if card is not None else "?"
        with Vertical(classes="dialog"):
            yield Static(f"Discard {label}?", classes="dialog-title", id="confirm-question")
            with Horizontal(classes="dialog-buttons"):
                yield Button(f"Discard {label} (Enter)", id="yes", variant="primary", compact=True)
                yield Button("Back (Esc)", id="no", compact=True)
        yield Footer()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
