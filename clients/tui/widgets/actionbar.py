"""A row of buttons for the moves legal now, each labelled with its card and key.

The footer already lists the keys; the buttons are for the mouse, and they name the
card each move would use ("Discard 9♠"), so a newcomer sees what a click will do.
A button's ``name`` is the screen action it runs (``move('take')``, ``rematch``, ...).

Buttons are rebuilt only when the set of moves changes; a new card under the cursor
only relabels them (mounting widgets on every cursor move would make the keys lag).
"""

from __future__ import annotations

from textual.actions import parse
from textual.containers import Horizontal
from textual.widgets import Button

ButtonSpec = tuple[str, str, str]  # (action name, label, variant)


def _ident(action: str) -> str:
    """A CSS class naming the action and its parameters: ``move('pass')`` -> ``act-move-pass``,
    ``move('take', True)`` -> ``act-move-take-True`` (tests and styles find buttons by it)."""
    _dest, name, params = parse(action)
    return "act-" + "-".join([name, *("".join(ch if ch.isalnum() or ch == "_" else "-" for ch in str(x)) for x in params)])


class ActionBar(Horizontal):
    DEFAULT_CSS = """
    ActionBar { height: 1; width: 1fr; }
    ActionBar Button { margin-right: 1; min-width: 6; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.specs: tuple[ButtonSpec, ...] = ()

    def set_specs(self, specs: tuple[ButtonSpec, ...]) -> None:
        if specs == self.specs:
            return
        same_moves = [s[0] for s in specs] == [s[0] for s in self.specs]
        self.specs = specs
        if same_moves and self.is_mounted:
            for (_action, label, variant), button in zip(specs, self.query(Button), strict=False):
                button.label = label
                button.variant = variant
            return
        self.remove_children()
        buttons = []
        for action, label, variant in specs:
            # A class, not an id: the old buttons are removed asynchronously, so the new
            # ones may briefly coexist with them.
            b = Button(label, name=action, classes=_ident(action), compact=True, variant=variant)  # type: ignore[arg-type]
            b.can_focus = False  # the keyboard uses the move letters; Enter must stay "discard"
            buttons.append(b)
        if buttons:
            self.mount_all(buttons)
