"""Messages from the network worker (or a replay) to the app.

Why messages and not direct calls: the worker runs on the app's own event loop but
knows nothing about screens; it reports what the referee said and the app decides what
to show. Tests post the same messages to drive the UI without a socket.
"""

from __future__ import annotations

from typing import Any

from textual.message import Message

from clients.sdk.messages import Message as Received
from okgin import HandResult

from .model import TableState


class StateChanged(Message):
    """A new picture of the table (after a prompt, an update or a reconnect snapshot)."""

    def __init__(self, state: TableState) -> None:
        super().__init__()
        self.state = state


class HandEnded(Message):
    """A hand finished: show the summary with both hands laid out."""

    def __init__(self, result: HandResult) -> None:
        super().__init__()
        self.result = result


class GameEnded(Message):
    """The game is over: final scores, winner, termination reason, seed reveal."""

    def __init__(self, final: dict[str, Any]) -> None:
        super().__init__()
        self.final = final


class RefereeError(Message):
    """The referee refused a request: show its sentence where the player looks."""

    def __init__(self, message: str, name: str = "", code: int | None = None) -> None:
        super().__init__()
        self.message = message
        self.name = name
        self.code = code


class ConnectionChanged(Message):
    """connecting / connected / lost / offline, with a sentence for the banner."""

    def __init__(self, status: str, detail: str = "") -> None:
        super().__init__()
        self.status = status
        self.detail = detail


class RefereeMessage(Message):
    """One message from the referee, typed by the SDK, for the app to reduce into its state.

    Why the app reduces and not the backend: the backend must never write the app's
    state (issue 17 item 6); it forwards what the referee said, in order, and the app
    turns each into a new :class:`TableState` (and the effects the reducer asks for)."""

    def __init__(self, message: Received, received: float) -> None:
        super().__init__()
        self.message = message
        self.received = received  # monotonic time of arrival (clocks and countdowns start from it)


class Notice(Message):
    """A sentence for the player that is not the referee's (a stale saved session, ...)."""

    def __init__(self, text: str, severity: str = "information") -> None:
        super().__init__()
        self.text = text
        self.severity = severity


class Bell(Message):
    """Ring the terminal's bell (a replay stepped past its end): the backend asks, the
    app rings, as for every other effect a backend wants (issue 17 item 6)."""
