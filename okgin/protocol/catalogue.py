"""The message catalogue of protocol v1: names, directions, and client-message checks.

Why hand-written checks rather than a JSON-Schema validator at run time: the referee
validates every incoming frame, and a few dict lookups are far cheaper than a generic
validator; they also give the exact one-sentence error protocol.md promises
("field 'seq' must be a non-negative integer, got str"). The schema in
``protocol.schema.json`` (built by :mod:`okgin.protocol.schema`) describes the same
messages for other languages; tests check the two agree.

Only the *shape* is checked here (types, presence, lengths). Meaning (is this card in
your hand, is this rule option known) is the referee's and the engine's business.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from .errors import ProtocolError
from .settings import MAX_MS
from .text import check_text

__all__ = [
    "ANY_ROLE",
    "ARENA_CLIENT_TYPES",
    "ARENA_TYPES",
    "BOTH",
    "C2R",
    "CLIENT_TYPES",
    "DEFAULT_PAGE",
    "DIRECTIONS",
    "FIELDS",
    "HEX32_RE",
    "MAX_ACCOUNT_KEY",
    "MAX_ARRAY_LEN",
    "MAX_BIN_BYTES",
    "MAX_CURSOR",
    "MAX_EXT_BYTES",
    "MAX_ID",
    "MAX_LEADERBOARD",
    "MAX_MAP_LEN",
    "MAX_MESSAGE_BYTES",
    "MAX_NAME",
    "MAX_OBJECTS",
    "MAX_PAGE",
    "MAX_SEED_CHARS",
    "MAX_SHARD_CAPACITY",
    "MAX_STR_BYTES",
    "MAX_TEXT",
    "PROTOCOL_MAJOR",
    "PROTOCOL_MINOR",
    "R2C",
    "REFEREE_TYPES",
    "ROLES",
    "TABLE_NAME_RE",
    "TABLE_STATUSES",
    "TEXT_FIELDS",
    "Check",
    "largest_legal_messages",
    "request_id",
    "validate",
]

PROTOCOL_MAJOR = 1
PROTOCOL_MINOR = 8

MAX_NAME = 40
MAX_ID = 64
MAX_TEXT = 280

# Structural limits of a decoded frame (okgin.protocol.codec), fitted to the schema, not
# to the frame size. Why: decoding cost follows the number of objects a frame makes, not
# its bytes (a 64 KiB frame of 65,520 empty maps cost ~2.5 ms), so what a frame may hold
# is bounded by what a legal message holds, with headroom for the unknown fields a newer
# minor version may add (protocol.md 14). The figures are checked against
# largest_legal_messages() by tests/referee/test_ref_limits_codec.py.
MAX_STR_BYTES = 4 * MAX_TEXT  # the longest legal string: 280 characters of 4-byte UTF-8
MAX_BIN_BYTES = MAX_ID  # no field is bin; short ones are decoded so the field check names the mistake
MAX_ARRAY_LEN = 16  # legal: 11 (a big_gin's one meld), players 3
MAX_MAP_LEN = 32  # legal: 13 (a full RulesPartial); the rest is room for newer fields
MAX_EXT_BYTES = 0  # no extension type is legal
MAX_OBJECTS = 128  # every key, value, item and container counts; legal: 70 (a full create_table)
# The largest legal client message is a hello of 3,431 bytes (1.6: with an arena account and key), then a create_table of
# 2,172 (largest_legal_messages()); the frame limit is that rounded up to a power of two.
MAX_MESSAGE_BYTES = 4096
# match() anchors at the start, \Z at the very end ($ would let a trailing newline through, the schema's pattern not)
TABLE_NAME_RE = re.compile(r"[A-Za-z0-9._-]{1,64}\Z")

C2R, R2C, BOTH = "client to referee", "referee to client", "both ways"

DIRECTIONS: dict[str, str] = {
    "hello": C2R, "welcome": R2C, "heartbeat": BOTH, "ping": C2R, "pong": R2C, "bye": C2R,
    "list_tables": C2R, "tables": R2C, "queue": C2R, "queued": R2C, "join": C2R, "seated": R2C,
    "leave": C2R, "game_start": R2C, "prompt": R2C, "act": C2R, "event": R2C,
    "advise_prompt": R2C, "advise": C2R, "advice": R2C, "hand_end": R2C, "game_end": R2C,
    "resign": C2R, "rematch": C2R, "rematch_status": R2C, "watch": C2R, "unwatch": C2R,
    "sync": C2R, "snapshot": R2C, "create_table": C2R, "table_created": R2C,
    "close_table": C2R, "table_closed": R2C, "ok": R2C, "error": R2C, "shutdown": R2C,
    "reveal": C2R, "revealed": R2C, "seat_status": R2C,
    "entropy": C2R, "entropy_state": R2C, "entropy_request": R2C, "entropy_reveal": C2R,  # 1.5
    # 1.6: the arena (protocol.md §19); a plain referee answers the requests not_an_arena
    "seek": C2R, "sought": R2C, "challenge": C2R, "challenged": R2C, "challenge_offer": R2C,
    "accept": C2R, "decline": C2R, "challenge_closed": R2C, "cancel": C2R, "lobby": C2R, "lobby_state": R2C,
    "leaderboard": C2R, "leaderboard_page": R2C, "ban": C2R, "unban": C2R, "game_ready": R2C, "game_over": R2C,
    "shard_join": C2R,  # 1.7: a referee shard joins a running arena (protocol.md §19)
}
#: The arena's messages (1.6, protocol.md §19): only an arena sends or accepts them.
ARENA_TYPES = frozenset({
    "seek", "sought", "challenge", "challenged", "challenge_offer", "accept", "decline", "challenge_closed", "cancel",
    "lobby", "lobby_state", "leaderboard", "leaderboard_page", "ban", "unban", "game_ready", "game_over",
    "shard_join",  # 1.7
})
CLIENT_TYPES = frozenset(t for t, d in DIRECTIONS.items() if d in (C2R, BOTH))
REFEREE_TYPES = frozenset(t for t, d in DIRECTIONS.items() if d in (R2C, BOTH))
ARENA_CLIENT_TYPES = ARENA_TYPES & CLIENT_TYPES

# Which roles may send which client messages (protocol.md §5).
ANY_ROLE = frozenset({"player", "spectator", "admin"})
ROLES: dict[str, frozenset[str]] = {
    "heartbeat": ANY_ROLE, "ping": ANY_ROLE, "bye": ANY_ROLE, "list_tables": ANY_ROLE,
    "watch": ANY_ROLE, "unwatch": ANY_ROLE, "sync": ANY_ROLE,
    "queue": frozenset({"player"}), "join": frozenset({"player"}), "leave": frozenset({"player"}),
    "act": frozenset({"player"}), "advise": frozenset({"player"}), "resign": frozenset({"player"}),
    "rematch": frozenset({"player"}),
    "create_table": frozenset({"admin"}), "close_table": frozenset({"admin"}), "reveal": frozenset({"admin"}),
    "entropy": frozenset({"admin"}), "entropy_reveal": frozenset({"player"}),
    "hello": ANY_ROLE,
    # 1.6: the arena
    "seek": frozenset({"player"}), "challenge": frozenset({"player"}), "accept": frozenset({"player"}),
    "decline": frozenset({"player"}), "cancel": frozenset({"player"}), "lobby": ANY_ROLE, "leaderboard": ANY_ROLE,
    "ban": frozenset({"admin"}), "unban": frozenset({"admin"}),
    "shard_join": ANY_ROLE,  # 1.7: a shard signs in as a spectator without an account; the join key is what counts
}

Check = Callable[[Any], str | None]  # returns None if fine, else what was expected


def _tn(v: Any) -> str:
    if v is None:
        return "nil"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, bytes):
        return "bin (strings must be msgpack str)"
    return {int: "int", str: "str", dict: "map", list: "list", float: "float"}.get(type(v), type(v).__name__)


def _int(v: Any) -> str | None:
    return None if isinstance(v, int) and not isinstance(v, bool) else "an integer"


def _nnint(v: Any) -> str | None:
    return None if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**63 else "a non-negative integer"


def _str(v: Any) -> str | None:
    return None if isinstance(v, str) else "a string"


def _bool(v: Any) -> str | None:
    return None if isinstance(v, bool) else "true or false"


def _map(v: Any) -> str | None:
    return None if isinstance(v, dict) else "a map"


def _name(v: Any) -> str | None:
    return None if isinstance(v, str) and 1 <= len(v) <= MAX_NAME else f"a string of 1-{MAX_NAME} characters"


def _table(v: Any) -> str | None:
    return None if isinstance(v, str) and TABLE_NAME_RE.match(v) else "a table name (1-64 of A-Z a-z 0-9 . _ -)"


def _variant(v: Any) -> str | None:
    return None if v in ("oklahoma", "box") and isinstance(v, str) else "'oklahoma' or 'box'"


def _role(v: Any) -> str | None:
    return None if isinstance(v, str) and v in ANY_ROLE else "'player', 'spectator' or 'admin'"


def _opt_str(v: Any) -> str | None:
    return None if v is None or isinstance(v, str) else "a string or nil"


def _opt_map(v: Any) -> str | None:
    return None if v is None or isinstance(v, dict) else "a map or nil"


def _opt_nnint(v: Any) -> str | None:
    return None if v is None else _nnint(v)


MAX_SEED_CHARS = 200


def _seed(v: Any) -> str | None:
    if isinstance(v, str) and len(v) <= MAX_SEED_CHARS:
        return None
    if isinstance(v, int) and not isinstance(v, bool):
        return None
    return f"an integer or a string (at most {MAX_SEED_CHARS} characters)"


def _text(v: Any) -> str | None:
    return None if isinstance(v, str) and len(v) <= MAX_TEXT else f"a string of at most {MAX_TEXT} characters"


def _reveal(v: Any) -> str | None:
    return None if v in ("game_end", "deferred") else "'game_end' or 'deferred'"


HEX32_RE = re.compile(r"[0-9a-f]{64}\Z")


def _hex32(v: Any) -> str | None:
    return None if isinstance(v, str) and HEX32_RE.match(v) else "64 lowercase hex digits (32 bytes)"


def _names(v: Any) -> str | None:
    ok = isinstance(v, list) and len(v) <= 3 and all(isinstance(x, str) and len(x) <= MAX_NAME for x in v)
    return None if ok else f"a list of names (strings of at most {MAX_NAME} characters)"


#: list_tables (1.4): at most this many tables per page (and the page size when none is asked).
MAX_PAGE = 200
DEFAULT_PAGE = 50
MAX_CURSOR = 32
TABLE_STATUSES = ("waiting", "playing", "finished")


def _page(v: Any) -> str | None:
    ok = isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= MAX_PAGE
    return None if ok else f"a whole number from 1 to {MAX_PAGE}"


def _cursor(v: Any) -> str | None:
    if isinstance(v, str) and 1 <= len(v) <= MAX_CURSOR:
        return None
    return f"the 'next' string of a tables reply (1-{MAX_CURSOR} characters)"


def _status(v: Any) -> str | None:
    return None if isinstance(v, str) and v in TABLE_STATUSES else "'waiting', 'playing' or 'finished'"


#: hello.key (1.6): an arena account's API key is at most this many characters.
MAX_ACCOUNT_KEY = 100
#: leaderboard (1.6): at most this many rows per page.
MAX_LEADERBOARD = 100


def _key(v: Any) -> str | None:
    return None if isinstance(v, str) and 1 <= len(v) <= MAX_ACCOUNT_KEY else f"a string of 1-{MAX_ACCOUNT_KEY} characters"


#: shard_join (1.7): at most this many seats' games at once on one joined shard.
MAX_SHARD_CAPACITY = 1000
Z85_KEY_RE = re.compile(r"[0-9A-Za-z.\-:+=^!/*?&<>()\[\]{}@%$#]{40}\Z")


ENDPOINT_RE = re.compile(r"tcp://[A-Za-z0-9.:\[\]*_-]{1,250}\Z")


def _endpoint(v: Any) -> str | None:
    ok = isinstance(v, str) and ENDPOINT_RE.match(v)
    return None if ok else "a tcp://HOST:PORT endpoint (letters, digits and . : [ ] * _ -, at most 256 characters)"


def _z85_key(v: Any) -> str | None:
    return None if v is None or (isinstance(v, str) and Z85_KEY_RE.match(v)) else "nil or a Z85 CURVE public key (40 characters)"


def _capacity(v: Any) -> str | None:
    ok = isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= MAX_SHARD_CAPACITY
    return None if ok else f"a whole number from 1 to {MAX_SHARD_CAPACITY}"


def _ident(v: Any) -> str | None:
    return None if isinstance(v, str) and 1 <= len(v) <= MAX_ID else f"a string of 1-{MAX_ID} characters"


def _accounts(v: Any) -> str | None:
    ok = isinstance(v, list) and 1 <= len(v) <= 2 and all(isinstance(x, str) and 1 <= len(x) <= MAX_NAME for x in v)
    return None if ok else f"a list of 1 or 2 account names (strings of 1-{MAX_NAME} characters)"


def _rows(v: Any) -> str | None:
    ok = isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= MAX_LEADERBOARD
    return None if ok else f"a whole number from 1 to {MAX_LEADERBOARD}"


def _offset(v: Any) -> str | None:
    ok = isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 1_000_000
    return None if ok else "a whole number from 0 to 1000000"


# type -> {field: (check, required)}. ``id`` and ``type`` are checked by validate().
FIELDS: dict[str, dict[str, tuple[Check, bool]]] = {
    "hello": {"protocol": (_int, True), "minor": (_nnint, False), "role": (_role, True), "name": (_name, True),
              "token": (_opt_str, False), "admin_key": (_str, False), "events": (_bool, False),
              "batch_events": (_bool, False), "entropy_commit": (_hex32, False),
              "account": (_name, False), "key": (_key, False),  # 1.6: the arena
              "advice_wait": (_bool, False)},  # 1.6: a person or an agent, whose advice a captain waits for
    "heartbeat": {}, "ping": {}, "bye": {},
    "list_tables": {"limit": (_page, False), "cursor": (_cursor, False), "variant": (_variant, False), "status": (_status, False),
                    "open": (_bool, False)},
    "queue": {"variant": (_variant, False), "rules": (_map, False)},
    "join": {"table": (_table, True), "seat": (_nnint, False), "variant": (_variant, False), "rules": (_map, False),
             "any_rules": (_bool, False), "clock": (_map, False), "policies": (_map, False)},  # clock, policies: 1.6
    "leave": {"table": (_table, False)},
    "act": {"table": (_table, True), "seq": (_nnint, True), "action": (_map, True), "seat": (_nnint, False)},
    "advise": {"table": (_table, True), "seq": (_nnint, True), "action": (_opt_map, False), "text": (_text, False)},
    "resign": {"table": (_table, True)},
    "rematch": {"table": (_table, True)},
    "watch": {"table": (_table, True), "full": (_bool, False), "broadcast_token": (_str, False),
              "events": (_bool, False)},  # events: 1.8
    "unwatch": {"table": (_table, True)},
    "sync": {"table": (_table, True)},
    "create_table": {"table": (_table, False), "variant": (_variant, False), "rules": (_map, False), "seed": (_seed, False),
                     "clock": (_map, False), "policies": (_map, False), "reserved": (_bool, False),
                     "players": (_names, False), "full_feed_delay_ms": (_opt_nnint, False), "reveal": (_reveal, False),
                     "doors": (_bool, False)},
    "close_table": {"table": (_table, True)},
    "reveal": {"table": (_table, True), "game": (_nnint, True)},
    "entropy": {"table": (_table, True), "commitments_hash": (_hex32, False)},
    "entropy_reveal": {"table": (_table, True), "nonce": (_hex32, True)},
    # 1.6: the arena (protocol.md §19)
    "seek": {"variant": (_variant, True), "clock": (_name, False), "rated": (_bool, False)},
    "challenge": {"to": (_accounts, True), "variant": (_variant, True), "clock": (_name, False), "rated": (_bool, False)},
    "accept": {"challenge": (_ident, True)},
    "decline": {"challenge": (_ident, True)},
    "cancel": {"seek": (_ident, False), "challenge": (_ident, False)},
    "lobby": {},
    "leaderboard": {"variant": (_variant, True), "offset": (_offset, False), "limit": (_rows, False)},
    "ban": {"account": (_name, True), "reason": (_text, True)},
    "unban": {"account": (_name, True)},
    # 1.7: a shard joins a running arena; admin_key and join_key are secrets (CURVE or loopback only)
    "shard_join": {"endpoint": (_endpoint, True), "server_key": (_z85_key, True), "capacity": (_capacity, True),
                   "admin_key": (_key, True), "join_key": (_key, True)},
}
assert set(FIELDS) == CLIENT_TYPES, set(FIELDS) ^ CLIENT_TYPES
# Fields shown to people and written to journals: checked by okgin.protocol.text (protocol.md §13).
TEXT_FIELDS: dict[str, tuple[str, ...]] = {
    "hello": ("name", "account"), "advise": ("text",), "create_table": ("players",),
    "seek": ("clock",), "challenge": ("to", "clock"), "ban": ("account", "reason"), "unban": ("account",),  # 1.6
}


def request_id(msg: dict[str, Any]) -> Any:
    """The message's ``id`` if it is a valid one (int or short string), else None."""
    i = msg.get("id")
    if isinstance(i, bool):
        return None
    if isinstance(i, int) and -(2**63) <= i < 2**64:
        return i
    if isinstance(i, str) and len(i) <= MAX_ID:
        return i
    return None


def validate(msg: dict[str, Any]) -> str:
    """Check a decoded client message's shape; return its type or raise ProtocolError.

    Raises ``bad_message`` for a missing/ill-typed field, ``unknown_type`` for a type the
    referee does not accept (including referee-only types sent by a client).
    """
    t = msg.get("type")
    if t == "act" and len(msg) == 4:
        # The answer to a prompt, nearly every message a referee reads: exactly the four
        # fields every client sends, checked inline (the same checks as the table below).
        tb, sq, ac = msg.get("table"), msg.get("seq"), msg.get("action")
        if (
            tb.__class__ is str and TABLE_NAME_RE.match(tb)
            and sq.__class__ is int and 0 <= sq < 2**63
            and ac.__class__ is dict
        ):
            return t
    if not isinstance(t, str):
        raise ProtocolError("bad_message", f"every message needs a string 'type' field, got {_tn(t)}")
    if t not in CLIENT_TYPES:
        shown = t if len(t) <= 40 else t[:40] + "..."
        raise ProtocolError(
            "unknown_type", f"unknown message type {shown!r}; nothing was done", request=t if len(t) <= 40 else None
        )
    if "id" in msg and request_id(msg) is None:  # 1.4: nil too (the schema's Id never allowed it)
        raise ProtocolError("bad_message", f"'id' must be an integer or a string of at most {MAX_ID} characters", request=t)
    for field, (check, required) in FIELDS[t].items():
        if field not in msg:
            if required:
                raise ProtocolError("bad_message", f"{t} needs a '{field}' field", request=t)
            continue
        want = check(msg[field])
        if want is not None:
            raise ProtocolError("bad_message", f"{t}: field '{field}' must be {want}, got {_tn(msg[field])}", request=t)
    texts = TEXT_FIELDS.get(t)
    if texts is not None:  # 1.4: names and advice text hold no control/format/separator character
        for field in texts:
            if field in msg:
                check_text(t, field, msg[field])
    return t


_WIDE = "\U0001d11e"  # MUSICAL SYMBOL G CLEF: 4 bytes of UTF-8, the most a character takes
_BIG_NNINT = 2**63 - 1  # the largest non-negative integer validate() accepts: 9 bytes of msgpack
_BIG_INT = -(2**63)  # 9 bytes of msgpack too


def _largest_value(s: dict[str, Any]) -> Any:
    """The value of a scalar schema fragment (an enum, const, integer, boolean, string
    with a maxLength, or anyOf of those) that takes the most msgpack bytes; used for the
    rules/clock/policies maps and for every scalar field the builder does not name, so a
    field added to the schema is counted here without a change."""
    import msgpack

    if "anyOf" in s:
        return max((_largest_value(a) for a in s["anyOf"]), key=lambda v: len(msgpack.packb(v)))
    if "enum" in s:
        return max(s["enum"], key=lambda v: len(msgpack.packb(v)))
    if "const" in s:
        return s["const"]
    t = s.get("type")
    if t == "boolean":
        return True
    if t == "string" and s.get("pattern") == "^[0-9]+$":  # list_tables' cursor (1.4): digits
        return "9" * s["maxLength"]
    if t == "string" and "maxLength" in s:
        return _WIDE * s["maxLength"]
    if t == "integer":
        if "maximum" in s:
            return s["maximum"]
        return _BIG_NNINT if s.get("minimum", -1) >= 0 else _BIG_INT
    raise ValueError(f"no largest value for the schema fragment {s}")


def largest_legal_messages() -> dict[str, dict[str, Any]]:
    """The largest legal message of each client type: the measure of ``MAX_MESSAGE_BYTES``.

    Why built rather than estimated: the frame limit must never refuse a legal message,
    and it should be no larger than one needs (every byte admitted is a byte decoded).
    "Largest" means every optional field present and every value at its longest: names
    of 40 and texts of 280 four-byte characters, ids of 64 of them, table names of 64,
    integers of 9 bytes, every rules/clock/policies field of the schema, three players, a
    knock laying out ten cards in three melds. Strings with no documented maximum
    (``token``, ``admin_key``) are given the longest string the decoder accepts
    (``MAX_STR_BYTES``).
    """
    from .schema import build_schema

    defs = build_schema()["$defs"]

    def partial(name: str) -> dict[str, Any]:
        return {k: _largest_value(v) for k, v in defs[name]["properties"].items()}

    rid = _WIDE * MAX_ID
    table = "T" * 64
    longest_str = _WIDE * (MAX_STR_BYTES // 4)
    name = _WIDE * MAX_NAME
    variant = max(("oklahoma", "box"), key=len)
    melds = [["Ac", "2c", "3c"], ["4d", "5d", "6d"], ["7h", "8h", "9h", "Th"]]  # ten cards: at most three melds
    knock = {"kind": "knock", "card": "Qs", "melds": melds}
    big: dict[str, dict[str, Any]] = {
        "hello": {"protocol": _BIG_INT, "minor": _BIG_NNINT, "role": "spectator", "name": name, "token": longest_str,
                  "admin_key": longest_str, "events": True, "batch_events": True, "entropy_commit": "f" * 64,
                  "account": name, "key": _WIDE * MAX_ACCOUNT_KEY, "advice_wait": True},
        "heartbeat": {}, "ping": {}, "bye": {}, "list_tables": {},
        "queue": {"variant": variant, "rules": partial("RulesPartial")},
        "join": {"table": table, "seat": _BIG_NNINT, "variant": variant, "rules": partial("RulesPartial"), "any_rules": True,
                 "clock": partial("ClockPartial"), "policies": partial("PoliciesPartial")},  # clock, policies: 1.6
        "leave": {"table": table},
        "act": {"table": table, "seq": _BIG_NNINT, "action": knock, "seat": _BIG_NNINT},
        "advise": {"table": table, "seq": _BIG_NNINT, "action": knock, "text": _WIDE * MAX_TEXT},
        "resign": {"table": table}, "rematch": {"table": table},
        "watch": {"table": table, "full": True, "broadcast_token": longest_str, "events": True},
        "unwatch": {"table": table}, "sync": {"table": table},
        # three players' names need the box (1.4: at most one per seat), and its rules say so
        "create_table": {"table": table, "variant": "box", "rules": {**partial("RulesPartial"), "variant": "box"},
                         "seed": _WIDE * MAX_SEED_CHARS, "clock": partial("ClockPartial"), "policies": partial("PoliciesPartial"),
                         "reserved": True, "players": [name] * 3, "full_feed_delay_ms": MAX_MS, "reveal": "deferred"},
        "close_table": {"table": table},
        "reveal": {"table": table, "game": _BIG_NNINT},
        "entropy": {"table": table, "commitments_hash": "f" * 64},
        "entropy_reveal": {"table": table, "nonce": "f" * 64},
        # 1.6: the arena
        "seek": {"variant": variant, "clock": name, "rated": True},
        "challenge": {"to": [name] * 2, "variant": variant, "clock": name, "rated": True},
        "accept": {"challenge": rid}, "decline": {"challenge": rid}, "cancel": {"seek": rid, "challenge": rid},
        "lobby": {}, "leaderboard": {"variant": variant, "offset": 1_000_000, "limit": MAX_LEADERBOARD},
        "ban": {"account": name, "reason": _WIDE * MAX_TEXT}, "unban": {"account": name},
        # 1.7
        "shard_join": {"endpoint": "tcp://" + "9" * 250, "server_key": "Z" * 40, "capacity": MAX_SHARD_CAPACITY,
                       "admin_key": _WIDE * MAX_ACCOUNT_KEY, "join_key": _WIDE * MAX_ACCOUNT_KEY},
    }
    assert set(big) == CLIENT_TYPES, set(big) ^ CLIENT_TYPES
    for t, fields in big.items():  # fields the schema has and the table above does not name
        for k, s in defs[f"msg_{t}"]["properties"].items():
            if k not in fields and k not in ("type", "id"):
                fields[k] = _largest_value(defs[s["$ref"].rsplit("/", 1)[1]] if "$ref" in s else s)
    return {t: {"type": t, "id": rid, **fields} for t, fields in big.items()}
