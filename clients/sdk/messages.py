"""Typed messages: every referee message of protocol.md §5 as a small frozen dataclass.

Why typed: a client (a bot runner, the TUI) should match on classes and read fields
with the engine's own types (``View``, ``Action``, ``HandResult``, ``RuleSet``), built
with their ``from_wire`` so a view over the network is the very object a bot gets
in-process. Every message keeps its ``raw`` map too: fields a newer minor version adds
(protocol.md §14) are never lost, only not yet typed. Unknown types parse as
:class:`Unknown` and are otherwise ignored.

Two messages are the SDK's own, never on the wire: :class:`Disconnected` and
:class:`Reconnected`, so a user interface can show the connection's state in the same
stream of events.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from okgin import Action, Advice, Event, HandResult, RuleSet, View

from .errors import RefereeError

__all__ = [
    "AdviceReceived", "AdvisePrompt", "ChallengeClosed", "ChallengeOffer", "Challenged", "Disconnected",
    "EntropyRequest", "ErrorMessage", "GameEnd", "GameOver", "GameReady", "GameStart", "HandEnd", "Heartbeat",
    "Leaderboard", "LobbyState", "MalformedMessage", "Message", "MoveEvent", "Ok", "Pong", "Prompt", "Queued",
    "Reconnected", "RematchStatus", "SeatStatus", "Seated", "Shutdown", "Snapshot", "Sought", "TableClosed",
    "TableCreated", "Tables", "Unknown", "Welcome", "parse_message",
]


@dataclass(frozen=True)
class Message:
    """Base: ``type`` as on the wire, the request ``id`` echoed (if any), the raw map."""

    type: str
    id: Any = field(default=None, kw_only=True)
    raw: dict[str, Any] = field(default_factory=dict, kw_only=True, repr=False, compare=False)


@dataclass(frozen=True)
class Welcome(Message):
    token: str
    role: str
    name: str
    resumed: bool
    heartbeat_ms: int
    liveness: int
    max_message_bytes: int
    referee: str
    protocol: int
    minor: int
    events: bool = True  # 1.1: whether this session's seats receive event messages
    arena: dict[str, Any] | None = None  # 1.6, at an arena: {name, variants, clocks}
    account: dict[str, Any] | None = None  # 1.6, at an arena: {name, kind, admin}


@dataclass(frozen=True)
class Heartbeat(Message):
    pass


@dataclass(frozen=True)
class Pong(Message):
    time_ms: int


@dataclass(frozen=True)
class Ok(Message):
    request: str | None
    table: str | None = None  # 1.6: the table the request concerned, when it named one


@dataclass(frozen=True)
class ErrorMessage(Message):
    code: int
    name: str
    message: str
    request: str | None
    table: str | None

    def exception(self) -> RefereeError:
        retry = self.raw.get("retry_ms")
        return RefereeError(
            self.code, self.name, self.message, self.request, self.table, self.id,
            retry if isinstance(retry, int) and not isinstance(retry, bool) else None,
        )


@dataclass(frozen=True)
class Tables(Message):
    tables: list[dict[str, Any]]
    next: str | None = None  # 1.4: the cursor of the next page (None: this was the last)
    total: int | None = None  # 1.4: tables matching the filters, on every page


@dataclass(frozen=True)
class Queued(Message):
    queue: str
    variant: str
    rules: RuleSet
    waiting: int
    needed: int


@dataclass(frozen=True)
class Seated(Message):
    table: str
    seat: int
    variant: str
    rules: RuleSet
    num_seats: int
    players: list[str | None]
    clock: dict[str, Any]
    policies: dict[str, Any]
    status: str


@dataclass(frozen=True)
class GameStart(Message):
    table: str
    game: int
    n: int
    seat: int | None
    variant: str
    rules: RuleSet
    num_seats: int
    players: list[str | None]
    seed_hash: str
    clock: dict[str, Any]
    policies: dict[str, Any]
    view: View


@dataclass(frozen=True)
class Prompt(Message):
    """Your seat is to act: answer with ``act`` echoing ``seq``."""

    table: str
    game: int
    seq: int
    seat: int
    legal: list[Action]
    view: View
    clock: dict[str, Any]
    error: dict[str, Any] | None  # on a re-prompt after an illegal action: why


@dataclass(frozen=True)
class MoveEvent(Message):
    """A move was made (wire type ``event``); ``view`` is None when it ended the hand."""

    table: str
    game: int
    n: int
    move: Event
    auto: bool
    view: View | None


@dataclass(frozen=True)
class AdvisePrompt(Message):
    """Gin in the Box, to the sitter: the captain is to act; you may ``advise``."""

    table: str
    game: int
    seq: int
    captain: int
    legal: list[Action]
    view: View
    #: 1.6: the captain's prompt waits this long for your advice (you are a person or an
    #: agent, ``hello.advice_wait``, at a table with an advice window); None: it does not wait
    window_ms: int | None = None


@dataclass(frozen=True)
class AdviceReceived(Message):
    """Gin in the Box, to the captain: the sitter's advice (wire type ``advice``)."""

    table: str
    game: int
    seq: int
    advice: Advice


@dataclass(frozen=True)
class HandEnd(Message):
    table: str
    game: int
    n: int
    result: HandResult
    view: View


@dataclass(frozen=True)
class GameEnd(Message):
    table: str
    game: int
    n: int
    final: dict[str, Any]
    termination: str
    winner: int | None
    at_fault: int | None
    seed: int | str | None  # None at a table that defers the reveal (1.4)
    seed_hash: str
    view: View | None
    salt: str | None = None  # 1.4: seed_hash = SHA-256(salt || seed text) (protocol.md 12.1)


@dataclass(frozen=True)
class RematchStatus(Message):
    table: str
    ready: list[bool]
    game: int


@dataclass(frozen=True)
class Snapshot(Message):
    table: str
    status: str
    game: int
    n: int
    seat: int | None
    full: bool
    variant: str
    rules: RuleSet
    num_seats: int
    players: list[str | None]
    clock: dict[str, Any]
    policies: dict[str, Any]
    seed_hash: str | None
    clocks: list[int] | None
    view: View | None


@dataclass(frozen=True)
class SeatStatus(Message):
    """1.4: another seat's connection went (held for ``forfeit_in_ms``, None: no limit) or came back."""

    table: str
    seat: int
    name: str | None
    connected: bool
    forfeit_in_ms: int | None


@dataclass(frozen=True)
class TableCreated(Message):
    table: str
    seat_tokens: list[str] | None
    broadcast_token: str | None = None  # 1.4: the table's full feed, for its broadcaster


@dataclass(frozen=True)
class TableClosed(Message):
    table: str
    reason: str


@dataclass(frozen=True)
class Shutdown(Message):
    reason: str


@dataclass(frozen=True)
class EntropyRequest(Message):
    """1.5: reveal this bot's nonce (clients.sdk.entropy; protocol.md 5.27)."""

    table: str
    commitments_hash: str


# ------------------------------------------------------------------ the arena (1.6, §19)
@dataclass(frozen=True)
class Sought(Message):
    """The arena took a ``seek``: its id (for ``cancel``)."""

    seek: str


@dataclass(frozen=True)
class Challenged(Message):
    """The arena sent a ``challenge`` to the named accounts: its id."""

    challenge: str


@dataclass(frozen=True)
class ChallengeOffer(Message):
    """Someone challenges this account (``accept`` or ``decline`` it before ``expires_ms``)."""

    challenge: str
    sender: dict[str, Any]  # the wire's ``from``: {account, kind, rating}
    to: list[str]
    variant: str
    clock: str
    rated: bool
    expires_ms: int | None


@dataclass(frozen=True)
class ChallengeClosed(Message):
    """A challenge to or from this account ended without a game: ``reason`` declined,
    expired, cancelled, or accepted_elsewhere (an account it needs went into another game)."""

    challenge: str
    reason: str
    by: str | None


@dataclass(frozen=True)
class LobbyState(Message):
    """Who is online, the open seeks, this account's challenges, ratings and recent games."""

    online: list[dict[str, Any]]
    seeks: list[dict[str, Any]]
    challenges: list[dict[str, Any]]
    me: dict[str, Any] | None


@dataclass(frozen=True)
class Leaderboard(Message):
    """The reply to ``leaderboard`` (wire type ``leaderboard_page``): ranked rows, best first."""

    variant: str
    rows: list[dict[str, Any]]


@dataclass(frozen=True)
class GameReady(Message):
    """A game for this account: connect to ``endpoint`` with ``token`` (a secret) within
    ``show_up_ms``, as at any referee's reserved seat."""

    game: str
    endpoint: str
    server_key: str | None
    table: str
    token: str = field(repr=False)
    seat: int
    variant: str
    clock: Any
    rated: bool
    players: list[dict[str, Any]]
    show_up_ms: int | None


@dataclass(frozen=True)
class GameOver(Message):
    """An arena game of this account ended: its result for this account and the rating."""

    game: str
    result: str
    scores: list[int]
    termination: str
    rating: dict[str, Any] | None


@dataclass(frozen=True)
class Unknown(Message):
    """A message type this SDK does not know (a newer minor version): ignore it."""


@dataclass(frozen=True)
class Disconnected(Message):
    """SDK-local: the connection went silent; the client is reconnecting."""

    reason: str


@dataclass(frozen=True)
class Reconnected(Message):
    """SDK-local: the session was resumed with its token; snapshots and prompts follow."""

    welcome: Welcome


# --------------------------------------------------------------------------- parsing
def _view(d: Any) -> View | None:
    return None if d is None else View.from_wire(d)


def _rules(d: Any) -> RuleSet:
    return RuleSet.from_dict(dict(d))


def _opt_map(d: Any) -> dict[str, Any] | None:
    return None if d is None else dict(d)


def _actions(xs: Any) -> list[Action]:
    return [Action.from_wire(a) for a in xs]


_PARSERS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "welcome": lambda m: {
        "token": m["token"], "role": m["role"], "name": m["name"], "resumed": bool(m.get("resumed", False)),
        "heartbeat_ms": int(m["heartbeat_ms"]), "liveness": int(m.get("liveness", 3)),
        "max_message_bytes": int(m.get("max_message_bytes", 65536)), "referee": str(m.get("referee", "")),
        "protocol": int(m.get("protocol", 1)), "minor": int(m.get("minor", 0)), "events": bool(m.get("events", True)),
        "arena": _opt_map(m.get("arena")), "account": _opt_map(m.get("account")),
    },
    "heartbeat": lambda m: {},
    "pong": lambda m: {"time_ms": int(m.get("time_ms", 0))},
    "ok": lambda m: {"request": m.get("request"), "table": m.get("table")},
    "error": lambda m: {
        "code": int(m.get("code", 0)), "name": str(m.get("name", "unknown")), "message": str(m.get("message", "")),
        "request": m.get("request"), "table": m.get("table"),
    },
    "tables": lambda m: {"tables": list(m.get("tables", []))},
    "queued": lambda m: {
        "queue": m["queue"], "variant": m["variant"], "rules": _rules(m["rules"]), "waiting": m["waiting"], "needed": m["needed"],
    },
    "seated": lambda m: {
        "table": m["table"], "seat": m["seat"], "variant": m["variant"], "rules": _rules(m["rules"]),
        "num_seats": m["num_seats"], "players": list(m["players"]), "clock": m.get("clock", {}),
        "policies": m.get("policies", {}), "status": m.get("status", ""),
    },
    "game_start": lambda m: {
        "table": m["table"], "game": m["game"], "n": m.get("n", 0), "seat": m.get("seat"), "variant": m["variant"],
        "rules": _rules(m["rules"]), "num_seats": m["num_seats"], "players": list(m.get("players", [])),
        "seed_hash": m.get("seed_hash", ""), "clock": m.get("clock", {}), "policies": m.get("policies", {}),
        "view": View.from_wire(m["view"]),
    },
    "prompt": lambda m: {
        "table": m["table"], "game": m["game"], "seq": m["seq"], "seat": m["seat"], "legal": _actions(m["legal"]),
        "view": View.from_wire(m["view"]), "clock": m.get("clock", {}), "error": m.get("error"),
    },
    "event": lambda m: {
        "table": m["table"], "game": m["game"], "n": m["n"], "move": Event.from_wire(m["move"]),
        "auto": bool(m.get("auto", False)), "view": _view(m.get("view")),
    },
    "advise_prompt": lambda m: {
        "table": m["table"], "game": m["game"], "seq": m["seq"], "captain": m["captain"],
        "legal": _actions(m["legal"]), "view": View.from_wire(m["view"]), "window_ms": m.get("window_ms"),
    },
    "advice": lambda m: {
        "table": m["table"], "game": m["game"], "seq": m["seq"],
        "advice": Advice.from_wire({"seat": m["seat"], "action": m.get("action"), "text": m.get("text", "")}),
    },
    "hand_end": lambda m: {
        "table": m["table"], "game": m["game"], "n": m["n"], "result": HandResult.from_wire(m["result"]),
        "view": View.from_wire(m["view"]),
    },
    "game_end": lambda m: {
        "table": m["table"], "game": m["game"], "n": m["n"], "final": dict(m["final"]), "termination": m["termination"],
        "winner": m.get("winner"), "at_fault": m.get("at_fault"), "seed": m.get("seed"), "seed_hash": m.get("seed_hash", ""),
        "view": _view(m.get("view")), "salt": m.get("salt"),
    },
    "rematch_status": lambda m: {"table": m["table"], "ready": list(m["ready"]), "game": m["game"]},
    "snapshot": lambda m: {
        "table": m["table"], "status": m["status"], "game": m.get("game", 0), "n": m.get("n", 0), "seat": m.get("seat"),
        "full": bool(m.get("full", False)), "variant": m["variant"], "rules": _rules(m["rules"]),
        "num_seats": m["num_seats"], "players": list(m.get("players", [])), "clock": m.get("clock", {}),
        "policies": m.get("policies", {}), "seed_hash": m.get("seed_hash"), "clocks": m.get("clocks"),
        "view": _view(m.get("view")),
    },
    "table_created": lambda m: {
        "table": m["table"], "seat_tokens": m.get("seat_tokens"), "broadcast_token": m.get("broadcast_token"),
    },
    "seat_status": lambda m: {
        "table": m["table"], "seat": m["seat"], "name": m.get("name"), "connected": bool(m.get("connected")),
        "forfeit_in_ms": m.get("forfeit_in_ms"),
    },
    "table_closed": lambda m: {"table": m["table"], "reason": m.get("reason", "")},
    "shutdown": lambda m: {"reason": m.get("reason", "")},
    "entropy_request": lambda m: {"table": str(m["table"]), "commitments_hash": str(m["commitments_hash"])},
    # the arena (1.6)
    "sought": lambda m: {"seek": str(m["seek"])},
    "challenged": lambda m: {"challenge": str(m["challenge"])},
    "challenge_offer": lambda m: {
        "challenge": str(m["challenge"]), "sender": dict(m["from"]), "to": [str(a) for a in m.get("to", [])],
        "variant": str(m["variant"]), "clock": str(m.get("clock", "standard")), "rated": bool(m.get("rated", True)),
        "expires_ms": m.get("expires_ms"),
    },
    "challenge_closed": lambda m: {"challenge": str(m["challenge"]), "reason": str(m.get("reason", "")), "by": m.get("by")},
    "lobby_state": lambda m: {
        "online": list(m.get("online") or []), "seeks": list(m.get("seeks") or []),
        "challenges": list(m.get("challenges") or []), "me": _opt_map(m.get("me")),
    },
    "leaderboard_page": lambda m: {"variant": str(m["variant"]), "rows": list(m.get("rows") or [])},
    "game_ready": lambda m: {
        "game": str(m["game"]), "endpoint": str(m["endpoint"]), "server_key": m.get("server_key"), "table": str(m["table"]),
        "token": str(m["token"]), "seat": int(m["seat"]), "variant": str(m["variant"]), "clock": m.get("clock"),
        "rated": bool(m.get("rated", True)), "players": list(m.get("players") or []), "show_up_ms": m.get("show_up_ms"),
    },
    "game_over": lambda m: {
        "game": str(m["game"]), "result": str(m["result"]), "scores": list(m.get("scores") or []),
        "termination": str(m.get("termination", "")), "rating": _opt_map(m.get("rating")),
    },
}

_CLASSES: dict[str, type[Message]] = {
    "welcome": Welcome, "heartbeat": Heartbeat, "pong": Pong, "ok": Ok, "error": ErrorMessage, "tables": Tables,
    "queued": Queued, "seated": Seated, "game_start": GameStart, "prompt": Prompt, "event": MoveEvent,
    "advise_prompt": AdvisePrompt, "advice": AdviceReceived, "hand_end": HandEnd, "game_end": GameEnd,
    "rematch_status": RematchStatus, "seat_status": SeatStatus, "snapshot": Snapshot, "table_created": TableCreated,
    "table_closed": TableClosed, "shutdown": Shutdown, "entropy_request": EntropyRequest,
    "sought": Sought, "challenged": Challenged, "challenge_offer": ChallengeOffer, "challenge_closed": ChallengeClosed,
    "lobby_state": LobbyState, "leaderboard_page": Leaderboard, "game_ready": GameReady, "game_over": GameOver,
}


class MalformedMessage(ValueError):
    """A referee message that does not have the shape protocol.md gives it."""


def parse_message(raw: dict[str, Any]) -> Message:
    """A decoded wire map to its typed message (unknown types: :class:`Unknown`).

    Raises :class:`MalformedMessage` saying which message and why, when a known type
    lacks a field or carries a bad card (a referee bug, or not an okgin referee).
    """
    t = raw.get("type")
    if not isinstance(t, str):
        raise MalformedMessage(f"a message without a string 'type': {sorted(raw)!r}")
    parser = _PARSERS.get(t)
    if parser is None:
        return Unknown(t, id=raw.get("id"), raw=raw)
    try:
        fields = parser(raw)
    except (KeyError, ValueError, TypeError) as e:
        raise MalformedMessage(f"malformed {t!r} message from the referee: {type(e).__name__}: {e}") from None
    return _CLASSES[t](t, id=raw.get("id"), raw=raw, **fields)
