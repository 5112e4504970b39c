"""Exceptions of the Python SDK.

A refused request surfaces as :class:`RefereeError` carrying exactly what the referee
said (numeric ``code``, stable ``name``, human ``message``, the request ``id``), so a
program can branch on the code and a person can read the sentence. Connection trouble
is kept apart (:class:`ConnectionLost`): it is not the referee's verdict on a request.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ConnectionLost", "RefereeError", "SDKError", "SessionTaken", "Timeout"]


class SDKError(Exception):
    """Base of every SDK exception."""


class RefereeError(SDKError):
    """The referee answered a request with ``error`` (protocol.md §5.23, §9)."""

    def __init__(
        self, code: int, name: str, message: str, request: str | None = None, table: str | None = None, id: Any = None,
        retry_ms: int | None = None,
    ) -> None:
        super().__init__(f"{name} ({code}): {message}")
        self.code = code
        self.name = name
        self.message = message
        self.request = request
        self.table = table
        self.id = id
        self.retry_ms = retry_ms  # 1.6, an arena's ``cooldown``: how long until it lets this account play again

    @property
    def group(self) -> str:
        """The hundreds group (protocol.md §9): framing, session, table, game, referee."""
        return {1: "framing", 2: "session", 3: "table", 4: "game", 5: "referee"}.get(self.code // 1000, "unknown")

    @classmethod
    def from_wire(cls, msg: dict[str, Any]) -> RefereeError:
        return cls(
            int(msg.get("code", 0)),
            str(msg.get("name", "unknown")),
            str(msg.get("message", "")),
            msg.get("request"),
            msg.get("table"),
            msg.get("id"),
            msg.get("retry_ms") if isinstance(msg.get("retry_ms"), int) else None,
        )


class ConnectionLost(SDKError):
    """The referee could not be reached again within the reconnection time, or the
    session it held for our token is gone (``bad_token`` on resume)."""


class SessionTaken(ConnectionLost):
    """Another connection resumed this session with its token: the referee answered
    ``session_taken`` (protocol 1.4, §10.1). The client does not resume on its own:
    two live processes sharing one token would otherwise take the seat from each other
    for ever. The newer one keeps the session; this one must stop (``okgin bot`` exits
    with status 3). A program that really wants the session back makes a new client
    with the token, knowingly."""

    def __init__(self, message: str) -> None:
        super().__init__(f"session_taken (2008): {message}")
        self.message = message


class Timeout(SDKError):
    """A reply did not arrive in time."""
