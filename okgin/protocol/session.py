"""One protocol session, without I/O: what every Python client of a referee must do.

Why sans-IO: the SDK's asyncio and blocking clients, the tournament's admin link and the
conformance kit's organiser all speak the same session rules (protocol.md §4.1, §10),
and each used to re-implement them, and drift. This module is those rules once, as a
state machine that is handed every message it must read and the time, and answers with
the messages to send; it never touches a socket, a thread, an event loop or a clock, so
it is tested without a referee and shared by drivers of any shape.

What it keeps:

- ``hello`` (with the session ``token`` once known: a reserved seat, or a resume), and
  the ``welcome``'s token, heartbeat interval and liveness;
- request ids: every request gets a fresh one, and a reply is matched to it;
- deadlines: a ``heartbeat`` is due after ``heartbeat_ms`` without sending; the referee
  is silent after ``liveness × heartbeat_ms`` without hearing from it. No heartbeat is
  due while the hello is unanswered: the referee would answer it ``hello_first``;
- the difference between the two errors that end a connection's session:
  ``hello_first`` after a welcome means the referee forgot this connection (it restarted,
  or the network dropped and ZeroMQ reconnected underneath) — resume with the token;
  ``session_taken`` means another connection resumed this session with the token —
  stop, never resume, or the two would take the seat from each other for ever (§10.1).

A driver's loop, in short (``wire`` stands for its socket)::

    s = Session("me")
    wire.send(s.hello(now))
    for msg in incoming:                    # decoded maps, as they arrive
        got = s.receive(msg, now)           # got.kind: REPLY, PROMPT, EVENT, ERROR, ...
    match s.due(now):                       # at s.wakeup(now) at the latest
        case Due.HEARTBEAT: wire.send(s.heartbeat(now))
        case Due.SILENT | Due.RESUME:  new socket; wire.send(s.hello(now))

>>> s = Session("ann")
>>> h = s.hello(0.0)
>>> h["type"], h["role"], h["name"], h["id"], "token" in h
('hello', 'player', 'ann', 1, False)
>>> got = s.receive({"type": "welcome", "id": 1, "token": "t" * 32, "heartbeat_ms": 1000, "liveness": 3}, 0.1)
>>> got.kind, s.token == "t" * 32, s.heartbeat_s, s.ready
(<Kind.WELCOME: 'welcome'>, True, 1.0, True)
>>> s.due(0.5) is None, s.due(1.1)
(True, <Due.HEARTBEAT: 'heartbeat'>)
>>> s.heartbeat(1.1)
{'type': 'heartbeat'}
>>> s.receive({"type": "error", "name": "hello_first", "code": 2001}, 1.2).kind, s.due(1.2)
(<Kind.LOST: 'lost'>, <Due.RESUME: 'resume'>)
>>> s.hello(1.3)["token"] == "t" * 32
True
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from .catalogue import PROTOCOL_MAJOR, PROTOCOL_MINOR, request_id

__all__ = ["PROMPT_TYPES", "Due", "Incoming", "Kind", "RequestId", "Session"]

RequestId = int | str

PROMPT_TYPES = frozenset({"prompt", "advise_prompt"})


class Kind(StrEnum):
    """What an incoming message is to the program (see :meth:`Session.receive`)."""

    HEARTBEAT = "heartbeat"  # the referee's heartbeat: it is alive; nothing to deliver
    WELCOME = "welcome"  # the answer to this session's hello (the session's state is updated)
    REPLY = "reply"  # the answer to a pending request: its reply, or an error refusing it
    PROMPT = "prompt"  # prompt or advise_prompt: the referee waits for this seat
    EVENT = "event"  # anything else unasked: moves, snapshots, hand and game ends, shutdown...
    ERROR = "error"  # an error that answers no pending request (a refused act, say)
    LOST = "lost"  # hello_first after a welcome, nobody waiting on it: resume with the token
    TAKEN = "session_taken"  # another connection took this session: stop, never resume


class Due(StrEnum):
    """What a driver must do now (see :meth:`Session.due`)."""

    HEARTBEAT = "heartbeat"  # send :meth:`Session.heartbeat`
    SILENT = "silent"  # the referee said nothing for liveness beats: resume (or give up)
    RESUME = "resume"  # the referee forgot this connection (hello_first): resume at once


@dataclass(frozen=True)
class Incoming:
    """One classified incoming message: its ``kind``, the map itself, and for a reply
    the id of the request it answers."""

    kind: Kind
    msg: dict[str, Any]
    request: RequestId | None = None

    @property
    def is_error(self) -> bool:
        return self.msg.get("type") == "error"

    @property
    def error_name(self) -> str | None:
        return str(self.msg.get("name")) if self.is_error else None


class Session:
    """The state of one protocol session. See the module docstring.

    ``grace_s`` is added to the liveness limit, for a driver that must not mistake its own
    scheduling delays for the referee's silence (the tournament's admin link allows 1 s).
    ``hello_fields`` are sent in every hello (``batch_events``, say). ``account`` and
    ``key`` (protocol 1.6) authenticate the session at an arena.
    """

    def __init__(
        self,
        name: str,
        role: str = "player",
        *,
        token: str | None = None,
        admin_key: str | None = None,
        events: bool = True,
        hello_fields: dict[str, Any] | None = None,
        grace_s: float = 0.0,
        account: str | None = None,
        key: str | None = None,
    ) -> None:
        self.name = name
        self.role = role
        self.token = token
        self.admin_key = admin_key
        # 1.6, at an arena (protocol.md §19): the account and its API key, sent in every
        # hello (a resume authenticates again). The key is a secret: it is never shown.
        self.account = account
        self.key = key
        self.events = events
        self.hello_fields = dict(hello_fields or {})
        self.grace_s = grace_s
        self.welcome: dict[str, Any] | None = None  # the last welcome, as on the wire
        self.heartbeat_s = 5.0
        self.liveness = 3
        self.resumes = 0  # welcomes with resumed: true after this session's first welcome
        self.taken: str | None = None  # the referee's sentence, once session_taken came
        self.lost: str | None = None  # why to resume at once (hello_first after a welcome)
        self._next_id = 1
        self._pending: dict[RequestId, str] = {}  # request id -> its type
        self._hello: RequestId | None = None  # the id of the unanswered hello, if any
        self._last_sent = 0.0
        self._last_heard = 0.0

    # ------------------------------------------------------------------ state
    @property
    def handshaking(self) -> bool:
        """A hello is out and not yet answered."""
        return self._hello is not None

    @property
    def ready(self) -> bool:
        """Welcomed, not waiting for a hello's answer, not taken: requests may be sent."""
        return self.welcome is not None and self._hello is None and self.taken is None

    def pending(self) -> dict[RequestId, str]:
        """The requests sent and not answered yet (id -> type), a copy."""
        return dict(self._pending)

    def forget(self, rid: RequestId) -> None:
        """Stop waiting for ``rid`` (its caller gave up): a late answer is then unasked."""
        self._pending.pop(rid, None)

    def restart(self) -> None:
        """Forget the session entirely (token included): the next hello starts a new one.

        For a program whose session the referee dropped (``bad_token`` on resume, e.g. a
        player who was only queued, protocol.md §10)."""
        self.token = None
        self.welcome = None
        self.lost = None
        self._hello = None
        self._pending.clear()

    # ------------------------------------------------------------------ out
    def hello(self, now: float) -> dict[str, Any]:
        """The ``hello`` to send on a new connection: a new session, or with ``token`` a
        reserved seat or a resume. Clears a pending :attr:`lost` and restarts the
        deadlines (a new connection has heard nothing and sent nothing yet)."""
        if self.taken is not None:
            raise RuntimeError("session_taken: this session belongs to another connection; do not resume it")
        msg: dict[str, Any] = {
            "type": "hello", "protocol": PROTOCOL_MAJOR, "minor": PROTOCOL_MINOR, "role": self.role, "name": self.name,
        }
        for field, value in (
            ("token", self.token), ("admin_key", self.admin_key), ("events", None if self.events else False),
            ("account", self.account), ("key", self.key),
        ):
            if value is not None:
                msg[field] = value
        msg.update(self.hello_fields)
        self.lost = None
        self._last_heard = now
        msg = self.request(msg, now)
        self._hello = msg["id"]
        return msg

    def request(self, msg: dict[str, Any], now: float) -> dict[str, Any]:
        """``msg`` with a fresh ``id``, remembered until its reply comes (or :meth:`forget`)."""
        out = self.tag(msg, now)
        self._pending[out["id"]] = str(msg.get("type"))
        return out

    def tag(self, msg: dict[str, Any], now: float) -> dict[str, Any]:
        """``msg`` with a fresh ``id`` nobody waits on (``act``: its success is the event
        that follows, a refusal arrives as an :attr:`Kind.ERROR`)."""
        rid = self._next_id
        self._next_id += 1
        self.sent(now)
        return {**msg, "id": rid}

    def heartbeat(self, now: float) -> dict[str, Any]:
        self.sent(now)
        return {"type": "heartbeat"}

    def sent(self, now: float) -> None:
        """Something went out at ``now`` (any message counts as a heartbeat, §4.2)."""
        self._last_sent = now

    # ------------------------------------------------------------------ in
    def receive(self, msg: dict[str, Any], now: float) -> Incoming:
        """Classify one decoded message from the referee and update the session by it.

        Every message counts as a sign of life. A reply is matched to its request by
        ``id`` (and the request is then no longer pending); ``welcome`` answering our
        hello updates the token, the heartbeat interval and the liveness.
        """
        self._last_heard = now
        kind = msg.get("type")
        rid = request_id(msg)
        asked = rid is not None and rid in self._pending
        if kind == "heartbeat":
            return Incoming(Kind.HEARTBEAT, msg)
        if kind == "error" and msg.get("name") == "session_taken":
            # Not hello_first: resuming now would take the seat back from the newer
            # connection, which would do the same (protocol.md §10.1). Stop.
            self.taken = str(msg.get("message", "another connection took this session"))
            self._pending.clear()
            self._hello = None
            return Incoming(Kind.TAKEN, msg, rid if asked else None)
        if kind == "error" and msg.get("name") == "hello_first" and self.welcome is not None and self._hello is None:
            # The referee no longer knows this connection; its answers are traffic, so
            # silence would never be noticed: resume at once (protocol 1.2, §10.1).
            self.lost = "the referee no longer knows this connection (hello_first): it restarted, or the network dropped"
            if not asked:
                return Incoming(Kind.LOST, msg)
        if asked:
            assert rid is not None
            self._pending.pop(rid)
            if rid == self._hello:
                self._hello = None
                if kind == "welcome":
                    self._welcomed(msg)
                    return Incoming(Kind.WELCOME, msg, rid)
            return Incoming(Kind.REPLY, msg, rid)
        if kind == "error":
            return Incoming(Kind.ERROR, msg)
        if kind in PROMPT_TYPES:
            return Incoming(Kind.PROMPT, msg)
        return Incoming(Kind.EVENT, msg)

    def _welcomed(self, msg: dict[str, Any]) -> None:
        if self.welcome is not None and msg.get("resumed"):
            self.resumes += 1
        self.welcome = msg
        self.token = str(msg.get("token", self.token or ""))
        self.heartbeat_s = max(0.01, int(msg.get("heartbeat_ms", 5000)) / 1000)
        self.liveness = max(1, int(msg.get("liveness", 3)))

    # ------------------------------------------------------------------ time
    def due(self, now: float) -> Due | None:
        """What the driver must do at ``now``, if anything: resume first, then silence,
        then a heartbeat. Nothing while handshaking, before the first welcome, or once
        the session was taken."""
        if not self.ready:
            return None
        if self.lost is not None:
            return Due.RESUME
        if now - self._last_heard > self.silence_s:
            return Due.SILENT
        if now - self._last_sent >= self.heartbeat_s:
            return Due.HEARTBEAT
        return None

    @property
    def silence_s(self) -> float:
        """How long the referee may be silent before it counts as gone."""
        return self.heartbeat_s * self.liveness + self.grace_s

    def silent_for(self, now: float) -> float:
        return now - self._last_heard

    def wakeup(self, now: float) -> float | None:
        """The latest time at which :meth:`due` may next answer something (``now`` if it
        does already; None while it cannot: handshaking, not welcomed, or taken)."""
        if not self.ready:
            return None
        if self.lost is not None:
            return now
        return min(self._last_heard + self.silence_s, self._last_sent + self.heartbeat_s)
