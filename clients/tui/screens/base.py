"""The screens' shared base: the app they run in, typed once.

Why: Textual types ``Screen.app`` as a plain :class:`textual.app.App`, so every use of
the okgin app's state, options and backend calls needed a ``type: ignore``. Each screen
here derives from :class:`OkginScreen` or :class:`OkginModalScreen` and reaches the app
through :attr:`okgin_app`, which is an :class:`~clients.tui.app.OkginApp` (the only app
these screens are ever mounted in; the cast is the one place that says so).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar, cast

from textual import events
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

if TYPE_CHECKING:
    from ..app import OkginApp

ResultT = TypeVar("ResultT")

__all__ = ["MIN_HEIGHT", "MIN_WIDTH", "OkginModalScreen", "OkginScreen", "too_small_text"]

#: The smallest terminal the screens are laid out for. Below it the table's parts overlap
#: (40x14 read as garbage), so every screen says how big the terminal must be instead.
MIN_WIDTH, MIN_HEIGHT = 60, 18


def too_small_text(width: int, height: int) -> str:
    return (f"The terminal is {width}×{height}: okgin needs at least {MIN_WIDTH}×{MIN_HEIGHT}.\n\n"
            "Make the terminal bigger (or the font smaller); the game goes on meanwhile. q quits.")


class TooSmallGuard:
    """Every okgin screen: below :data:`MIN_WIDTH` x :data:`MIN_HEIGHT` its widgets are
    hidden and one notice says to make the terminal bigger (okgin.tcss, ``-too-small``).

    Why on each screen rather than one screen on top: a hand's summary or the game-over
    sheet may be pushed while the terminal is small, and it must carry the notice too.
    Textual calls this class's handlers besides the screen's own."""

    def on_mount(self) -> None:
        screen = cast("Screen[object]", self)
        screen.mount(Static("", id="too-small"))
        self._check_size(screen.app.size.width, screen.app.size.height)

    def on_resize(self, event: events.Resize) -> None:
        self._check_size(event.size.width, event.size.height)

    def _check_size(self, width: int, height: int) -> None:
        screen = cast("Screen[object]", self)
        small = width < MIN_WIDTH or height < MIN_HEIGHT
        screen.set_class(small, "-too-small")
        if small:
            for notice in screen.query("#too-small").results(Static):
                notice.update(too_small_text(width, height))


class OkginScreen(TooSmallGuard, Screen[ResultT]):
    """A full screen of the okgin app."""

    @property
    def okgin_app(self) -> OkginApp:
        return cast("OkginApp", self.app)


class OkginModalScreen(TooSmallGuard, ModalScreen[ResultT]):
    """A modal screen of the okgin app."""

    @property
    def okgin_app(self) -> OkginApp:
        return cast("OkginApp", self.app)
