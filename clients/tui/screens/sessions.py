"""``okgin tui --resume`` with several saved sessions: pick the seat to take back.

Why a screen and not only a printed list: after a crash the person wants the seat back
before its grace runs out; choosing with the arrows and Enter is quicker than reading a
list, quitting and typing ``--resume N``. The printed list stays for ``--resume`` when
standard output is not a terminal (scripts), and ``--resume N`` resumes directly.

Each line says who, where and at which table, and when it was saved (UTC, so the
screen is the same wherever it is drawn); ``d`` forgets a seat that is no longer
wanted (the referee forfeits it after its grace anyway).
"""

from __future__ import annotations

import time

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from okgin.protocol.settings import Policies

from ..saved_sessions import SavedSession, SessionStore
from .base import OkginScreen


def session_line(s: SavedSession) -> str:
    """``ann · table t1 · tcp://127.0.0.1:7117 · 01 Dec 17:40 UTC`` (fits 80 columns)."""
    where = f"table {s.table}" if s.table else "quick match"
    when = time.strftime("%d %b %H:%M UTC", time.gmtime(s.saved_at)) if s.saved_at else "saved at an unknown time"
    return f"{s.name} · {where} · {s.endpoint} · {when}"


class SessionsScreen(OkginScreen[None]):
    """The saved sessions, newest first; Enter resumes the highlighted one."""

    BINDINGS = [
        # priority: the list would take Enter first (and its binding is not in the footer)
        Binding("enter", "resume", "Resume", key_display="⏎", priority=True),
        Binding("d", "forget", "Forget"),
        Binding("q,escape", "app.quit", "Quit"),
    ]

    def __init__(self, store: SessionStore | None = None) -> None:
        super().__init__()
        self.store = store or SessionStore()
        self.sessions: list[SavedSession] = self.store.all()

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static("okgin — resume a saved seat", classes="dialog-title")
            grace_s = Policies().disconnect_grace_ms // 1000  # the referee's default; a table may say otherwise
            yield Static(
                f"The referee holds a seat for a while after its player's connection goes ({grace_s} s by default),"
                " then forfeits it. Choose the game to go back to:",
                id="sessions-intro",
            )
            yield OptionList(*self._options(), id="sessions")
            yield Static("", id="sessions-status")
        yield Footer()

    def _options(self) -> list[Option]:
        return [Option(f"{i}. {session_line(s)}", id=s.key) for i, s in enumerate(self.sessions, 1)]

    def on_mount(self) -> None:
        ol = self.query_one("#sessions", OptionList)
        if self.sessions:
            ol.highlighted = 0
        ol.focus()
        self._status()

    def _status(self, text: str | None = None) -> None:
        if text is None:
            n = len(self.sessions)
            text = (f"{n} saved session{'s' if n != 1 else ''}, newest first. Enter resumes, d forgets one."
                    if n else "No saved sessions left. q quits.")
        self.query_one("#sessions-status", Static).update(text)

    def _highlighted(self) -> SavedSession | None:
        i = self.query_one("#sessions", OptionList).highlighted
        return self.sessions[i] if i is not None and 0 <= i < len(self.sessions) else None

    @on(OptionList.OptionSelected, "#sessions")
    def _selected(self, _event: OptionList.OptionSelected) -> None:
        self.action_resume()  # a click on a line

    def action_resume(self) -> None:
        s = self._highlighted()
        if s is None:
            return
        from ..seating import Seating

        seating = Seating(mode="join", table=s.table) if s.table else Seating(mode="quick")
        # The backend finds the saved token by endpoint, name and table: the same lookup
        # as running the original command again.
        self.okgin_app.join_game(s.endpoint, s.name, seating)

    def action_forget(self) -> None:
        s = self._highlighted()
        if s is None:
            return
        self.store.remove(s.endpoint, s.name, s.table, s.token)
        self.sessions = self.store.all()
        ol = self.query_one("#sessions", OptionList)
        ol.clear_options()
        ol.add_options(self._options())
        if self.sessions:
            ol.highlighted = 0
        self._status(f"Forgot {s.name}'s seat at {s.table or 'the quick-match queue'} ({s.endpoint}).")
