"""``q`` at a running game: leave for real?

At a network game (:class:`QuitConfirmScreen`) it says how long the referee holds the
seat and how to come back, and can show the session token (which *is* the seat). At a
game of ``okgin play`` (:class:`LocalQuitScreen`), where the referee dies with the app,
it offers what leaving can really mean there: resign, a new game, or quit."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static


def held_for(grace_ms: int | None) -> str:
    if grace_ms is None:
        return "for the table's grace time"
    s = grace_ms // 1000
    return f"for {s} s" if s < 120 else f"for {s // 60} min {s % 60} s" if s % 60 else f"for {s // 60} min"


class QuitConfirmScreen(ModalScreen[bool]):
    """Dismissed with True (leave) or False (stay)."""

    BINDINGS = [
        Binding("y,q", "leave", "Leave"),
        Binding("n,escape", "stay", "Stay"),
        Binding("t", "token", "Show token"),
    ]

    def __init__(self, grace_ms: int | None, token: str | None) -> None:
        super().__init__()
        self.grace_ms = grace_ms
        self.token = token

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="quit-dialog"):
            yield Static("Leave this game?", classes="dialog-title")
            yield Static(
                f"The game goes on without you: the referee holds your seat {held_for(self.grace_ms)}, your clock"
                " running, then forfeits it. Run the same okgin tui command again within that time to take it back.",
                id="quit-text",
            )
            yield Static("", id="quit-token")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Leave (y)", id="leave", variant="error", compact=True)
                yield Button("Stay (n)", id="stay", variant="primary", compact=True)
                yield Button("Show token (t)", id="token", compact=True)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        {"leave": self.action_leave, "stay": self.action_stay, "token": self.action_token}[event.button.id or "stay"]()

    def action_leave(self) -> None:
        self.dismiss(True)

    def action_stay(self) -> None:
        self.dismiss(False)

    def action_token(self) -> None:
        self.query_one("#quit-token", Static).update(token_text(self.token))


def token_text(token: str | None) -> str:
    """The token with its warning: whoever has it can take your seat."""
    if not token:
        return "No session token yet."
    return f"Session token: {token}\nKeep it secret: whoever has it can play your seat (okgin tui --token TOKEN resumes it)."


#: What each choice of the local dialog does, as it says it (tests read these).
LOCAL_CHOICES = (
    ("resign", "Resign this game (r)", "the bots win it; you stay at the table, where r deals a new game"),
    ("new", "New game (n)", "resign this game and deal a new one at once"),
    ("quit", "Quit (q)", "close okgin play: the game and the bots stop here"),
)


class LocalQuitScreen(ModalScreen[str | None]):
    """``q`` at a game of ``okgin play``: resign, new game, quit, or stay.

    Why not the network dialog: at ``okgin play`` the referee runs inside this very
    process, so nothing holds the seat once the app closes; the network dialog's
    "the referee holds your seat for 30 s, run the same command again" was untrue here
    (issue 28 item 1). Dismissed with ``"resign"``, ``"new"``, ``"quit"`` or None (stay).
    """

    BINDINGS = [
        Binding("r", "choose('resign')", "Resign"),
        Binding("n", "choose('new')", "New game"),
        Binding("q,y", "choose('quit')", "Quit"),
        Binding("escape", "choose('stay')", "Stay"),
    ]

    def __init__(self, journal: bool = False) -> None:
        super().__init__()
        self.journal = journal

    def compose(self) -> ComposeResult:
        kept = "its journal keeps what was played" if self.journal else "nothing of it is kept"
        lines = [
            f"This game runs on this computer, against the bots: leaving ends it ({kept}).",
            *(f"  {label}: {what}." for _id, label, what in LOCAL_CHOICES),
            "  Stay (Esc): back to the game.",
        ]
        with Vertical(classes="dialog", id="quit-dialog"):
            yield Static("Leave this game?", classes="dialog-title")
            yield Static("\n".join(lines), id="quit-text")
            with Horizontal(classes="dialog-buttons"):
                for choice, label, _what in LOCAL_CHOICES:
                    yield Button(label, id=choice, variant="error" if choice == "quit" else "default", compact=True)
                yield Button("Stay (Esc)", id="stay", variant="primary", compact=True)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.action_choose(event.button.id or "stay")

    def action_choose(self, choice: str) -> None:
        self.dismiss(None if choice == "stay" else choice)
