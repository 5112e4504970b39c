"""Protocol error codes (protocol.md §9): numeric code, stable name, default sentence.

Codes and names are permanent: a minor version may add codes, never change one. The
hundreds group them (1xxx framing, 2xxx session, 3xxx table, 4xxx game, 5xxx referee)
so a client can handle a code it does not know; 6xxx (1.6) are the arena's.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CODES", "ERRORS", "ProtocolError"]

# name: (code, when)
ERRORS: dict[str, tuple[int, str]] = {
    "bad_frame": (1001, "not exactly one frame, not msgpack, or bytes after the map"),
    "not_a_map": (1002, "the frame is msgpack but not a map with string keys"),
    "bad_message": (1003, "type missing, a required field missing, or a field of the wrong type or out of range"),
    "unknown_type": (1004, "the type is not a message this referee accepts"),
    "too_large": (1005, "the frame is larger than max_message_bytes"),
    "version_mismatch": (2001, "hello with a major version other than the referee's"),
    "hello_first": (2002, "a message other than hello on a connection without a session"),
    "bad_token": (2003, "hello with a token the referee does not hold"),
    "forbidden": (2004, "the session's role may not send this"),
    "auth_failed": (2005, "role admin without the right admin_key"),
    "already_welcomed": (2006, "a second hello on a connection that has a session"),
    "rate_limited": (2007, "the connection sent over the referee's rate; the excess was dropped unread (1.2)"),
    "session_taken": (2008, "a newer connection resumed this connection's session: stop, do not resume (1.4)"),
    "bad_identity": (2009, "the connection set its own routing id (ZMQ_ROUTING_ID / identity): refused (1.4)"),
    "seat_only": (
        2010,
        "a seat door or tournament gateway carries only its seat's play: this hello or request is refused there (1.5)",
    ),
    "no_such_table": (3001, "no table of that name"),
    "table_full": (3002, "every seat is taken"),
    "bad_rules": (3003, "unknown rule option or bad value"),
    "rules_mismatch": (3004, "join with a variant or rules unlike the existing table's (1.4: naming none asks for the defaults)"),
    "already_seated": (3005, "already at this table or in this queue"),
    "table_exists": (3006, "create_table with a name in use"),
    "not_seated": (3007, "a table request from a session with no seat there (or not watching)"),
    "bad_seat": (3008, "the requested seat does not exist or is taken"),
    "game_in_progress": (3009, "the request needs a finished table"),
    "no_full_feed": (3010, "watch with full on a table without a full-visibility feed"),
    "limit_reached": (3011, "too many tables, seats or watches"),
    "not_queued": (3012, "leave without table while in no queue"),
    "lagging": (3013, "too many messages to this session could not be delivered: its watches were dropped (1.2)"),
    "broadcast_only": (3014, "watch with full without a broadcast credential, or by a player of that table (1.4)"),
    "no_such_game": (3015, "reveal of a game the table has not played, or no longer keeps (1.4)"),
    "not_your_turn": (4001, "act with no prompt pending for your seat"),
    "stale_seq": (4002, "act or advise whose seq is not the pending prompt's"),
    "bad_action": (4003, "an action that is not a valid Action map"),
    "illegal_action": (4004, "a well-formed action the rules refuse now"),
    "no_game": (4005, "no game is running at that table"),
    "bad_advice": (4006, "advice refused"),
    "wrong_seat": (4007, "act naming a seat that is not yours"),
    "advice_late": (4008, "advice for a move the captain has already made (1.6; before, stale_seq)"),
    "internal": (5001, "the referee failed on this request; state unchanged"),
    # 1.6: the arena (protocol.md §19)
    "not_an_arena": (6001, "an arena request sent to a plain referee (1.6)"),
    "no_such_account": (6002, "a challenge naming an account that is unknown or not online (1.6)"),
    "cooldown": (6003, "a seek or challenge while the account is cooling down after a no-show (1.6)"),
    "busy": (6004, "a seek, challenge or accept while the account is in a game (1.6)"),
    "no_such_seek": (6005, "cancel of a seek that is not open (1.6)"),
    "no_such_challenge": (6006, "accept, decline or cancel of a challenge that is not open to this account (1.6)"),
    "banned": (6007, "hello with a banned account's key (1.6)"),
    "shard_unreachable": (6008, "shard_join: the arena could not reach the shard's endpoint as its admin (1.7)"),
}
CODES: dict[int, str] = {code: name for name, (code, _) in ERRORS.items()}
assert len(CODES) == len(ERRORS)


class ProtocolError(Exception):
    """A request the referee refuses: becomes one ``error`` message, changes nothing."""

    def __init__(
        self, name: str, message: str, request: str | None = None, table: str | None = None, **extra: Any
    ) -> None:
        if name not in ERRORS:
            raise ValueError(f"unknown protocol error name {name!r}")
        super().__init__(message)
        self.name = name
        self.code = ERRORS[name][0]
        self.message = message
        self.request = request
        self.table = table
        #: more fields of the error frame (1.6: ``retry_ms`` of a ``cooldown``)
        self.extra = extra

    def to_wire(self, request_id: Any = None) -> dict[str, Any]:
        d: dict[str, Any] = {
            "type": "error",
            "code": self.code,
            "name": self.name,
            "message": self.message,
            "request": self.request,
            "table": self.table,
        }
        if self.extra:
            d.update(self.extra)
        if request_id is not None:
            d["id"] = request_id
        return d

    def info(self) -> dict[str, Any]:
        """The ``ErrorInfo`` form carried inside a re-prompt."""
        return {"code": self.code, "name": self.name, "message": self.message}
