"""Where the app's game comes from: a referee over the network, or a journal replayed.

The app talks to one :class:`Backend`; it never sees sockets. ``run`` is the body of
the app's async worker: it runs on the app's own event loop (ZeroMQ through
``zmq.asyncio``, created inside the worker) and reports to the app with the messages
of :mod:`clients.tui.messages`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from okgin import Action

if TYPE_CHECKING:
    from .app import OkginApp


class Backend:
    """Base: a source that cannot be played (a state injected by a test)."""

    #: Shown in the lobby and the help screen.
    description = "no connection"

    async def run(self, app: OkginApp) -> None:
        """The worker body: report to ``app`` until :meth:`close` or the app quits."""

    async def act(self, action: Action, seq: int | None) -> None:
        """Send our move for prompt ``seq``."""
        raise RuntimeError("this table cannot be played from here")

    async def advise(self, action: Action | None, text: str) -> None:
        """The sitter's advice to its captain."""
        raise RuntimeError("this table cannot be played from here")

    async def resign(self) -> None:
        """Resign the running game (its ``game_end`` follows)."""
        raise RuntimeError("this table cannot be played from here")

    async def rematch(self) -> None:
        """Ask for another game with the same players and rules."""
        raise RuntimeError("no rematch from here")

    async def close(self) -> None:
        """Leave the table and release the connection (called when the app quits)."""
