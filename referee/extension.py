"""The referee's one extension point: a service built on it (the arena, protocol 1.6).

Why a referee with a plug rather than a server of its own: the arena's endpoint must
face the same hostile clients as a referee (bounded decoding, rate and byte budgets,
connection caps, CURVE, watchers that do not read, client-chosen routing ids), and
every one of those checks lives in the referee's dispatcher, transport and session desk.
An :class:`Extension` adds to that path, and changes nothing of it:

- **handlers** by message type, for the requests of protocol.md §19 (``seek``,
  ``lobby``, ...). The dispatcher has already checked framing, shape, session and role
  (``okgin.protocol.catalogue.ROLES``) when it calls one; a handler refuses by raising
  :class:`okgin.protocol.ProtocolError`, exactly as the referee's own handlers do. A
  plain referee answers those types ``not_an_arena``.
- **hello**: every ``hello`` of a new connection goes to :meth:`Extension.hello`
  instead of the referee's own session rules (tokens, ``admin_key``). It authenticates
  the account, possibly later (a slow key hash runs off the loop), and then calls
  :attr:`ExtensionParts.admit`, which opens the session under the referee's own caps and
  sends the ``welcome`` with the extension's fields. A plain referee refuses a ``hello``
  carrying ``account`` or ``key`` with ``bad_message``.
- **gone**: called when a session's connection is gone (``bye``, silence, or a newer
  session taking it), before the referee forgets the session.

The extension is handed :class:`ExtensionParts` (what it may use of the referee: the
sends, the clock and loop, opening, taking and closing sessions), never the referee
itself (``tests/referee/test_ref_wiring.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from okgin.protocol import ProtocolError, encode

if TYPE_CHECKING:
    from .sessions import Session
    from .tablehost import Host

__all__ = ["Extension", "ExtensionParts", "Handler", "refuse_plain_hello"]

#: A request handler: (the sender's session, the validated message, its request id).
Handler = Callable[["Session", dict[str, Any], Any], None]


@dataclass(frozen=True)
class ExtensionParts:
    """What an extension may use of the referee it is plugged into.

    ``admit(rid, msg, rqid, name, role, welcome)`` opens a session for the connection
    ``rid`` (the referee's caps apply: ``limit_reached``) and sends its ``welcome`` with
    the extra fields ``welcome``; it returns the session. ``refuse(rid, error, rqid)``
    answers a connection that has no session (a refused ``hello``, decided later).
    ``take(session)`` tells a live session's connection ``session_taken`` and closes the
    session (a newer one of the same account won). ``close(session)`` ends a session as
    if its connection said ``bye``."""

    host: Host
    admit: Callable[[bytes, dict[str, Any], Any, str, str, dict[str, Any]], Session]
    refuse: Callable[[bytes, ProtocolError, Any], None]
    take: Callable[[Session], None]
    close: Callable[[Session], None]


class Extension(Protocol):
    """A service on the referee's socket. See the module docstring."""

    def attach(self, parts: ExtensionParts) -> Mapping[str, Handler]:
        """Called once, when the referee is built: keep ``parts``, return the handlers."""

    def hello(self, rid: bytes, msg: dict[str, Any], rqid: Any) -> None:
        """A ``hello`` on a connection without a session (its shape and major version
        checked): admit it (``parts.admit``), now or later, or raise/``parts.refuse``."""

    def gone(self, sess: Session) -> None:
        """``sess``'s connection is gone; the referee forgets it after this returns."""


def refuse_plain_hello(msg: dict[str, Any]) -> None:
    """A plain referee's answer to a ``hello`` carrying an arena account or key."""
    if "account" in msg or "key" in msg:
        raise ProtocolError(
            "bad_message",
            "hello: 'account' and 'key' are for an arena (protocol.md §19); this is a plain referee: leave them out",
            request="hello",
        )


def refusal(error: ProtocolError, rqid: Any) -> bytes:
    """The packed ``error`` frame answering a request (for :attr:`ExtensionParts.refuse`)."""
    return encode(error.to_wire(rqid))
