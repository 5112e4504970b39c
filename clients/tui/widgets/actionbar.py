"""A row of buttons for the moves legal now, each labelled with its card and key.

The footer already lists the keys; the buttons are for the mouse, and they name the
card each move would use ("Discard 9♠"), so a newcomer sees what a click will do.
A button's ``name`` is the screen action it runs (``take``, ``discard``, ...).
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.reactive import reactive
from textual.widgets import Button

ButtonSpec = tuple[str, str, str]  # (action name, label, variant)


class ActionBar(Horizontal):
    DEFAULT_CSS = """
    ActionBar { height: 1; width: 1fr; }
    ActionBar Button { margin-right: 1; min-width: 6; }
    """

    specs: reactive[tuple[ButtonSpec, ...]] = reactive((), recompose=True)

    def compose(self) -> ComposeResult:
        for action, label, variant in self.specs:
            ident = "act-" + "".join(ch if ch.isalnum() or ch == "_" else "-" for ch in action).strip("-")
            b = Button(label, name=action, id=ident, compact=True, variant=variant)  # type: ignore[arg-type]
            b.can_focus = False  # the keyboard uses the move letters; Enter must stay "discard"
            yield b
