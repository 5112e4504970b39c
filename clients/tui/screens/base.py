"""The screens' shared base: the app they run in, typed once.

Why: Textual types ``Screen.app`` as a plain :class:`textual.app.App`, so every use of
the okgin app's state, options and backend calls needed a ``type: ignore``. Each screen
here derives from :class:`OkginScreen` or :class:`OkginModalScreen` and reaches the app
through :attr:`okgin_app`, which is an :class:`~clients.tui.app.OkginApp` (the only app
these screens are ever mounted in; the cast is the one place that says so).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar, cast

from textual.screen import ModalScreen, Screen

if TYPE_CHECKING:
    from ..app import OkginApp

ResultT = TypeVar("ResultT")

__all__ = ["OkginModalScreen", "OkginScreen"]


class OkginScreen(Screen[ResultT]):
    """A full screen of the okgin app."""

    @property
    def okgin_app(self) -> OkginApp:
        return cast("OkginApp", self.app)


class OkginModalScreen(ModalScreen[ResultT]):
    """A modal screen of the okgin app."""

    @property
    def okgin_app(self) -> OkginApp:
        return cast("OkginApp", self.app)
