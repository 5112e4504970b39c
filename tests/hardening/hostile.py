"""Hostile frames for fuzzing the referee (protocol.md §2, §3, §5, §13).

Two families, both from a seeded :class:`random.Random` so that any failure replays:

- :func:`garbage` frames are wrong *by construction* — not msgpack, truncated, trailing
  bytes, not a map, non-string keys, too large, nested deep, invalid UTF-8, ``bin`` for
  ``str``, a missing or ill-typed field (chosen with the referee's own field checks so it
  is certainly ill-typed), an unknown type, an id of the wrong kind, two frames in one
  message. Each gets **exactly one** ``error`` from the referee, which lets a fuzz run
  count replies exactly.
- :func:`structured` messages are well-formed maps of every client type with random
  values of the right shapes (random tables, seats, seqs, actions, rules, clocks,
  policies): they reach the handlers, which must refuse or serve them without fault.
"""

from __future__ import annotations

import math
import random
from typing import Any

import msgpack

from okgin.protocol import CLIENT_TYPES, MAX_MESSAGE_BYTES
from okgin.protocol.catalogue import FIELDS

CARDS = [r + s for s in "cdhs" for r in "A23456789TJQK"]
KINDS = ["take", "pass", "draw_stock", "draw_discard", "discard", "knock", "big_gin"]
RULE_KEYS = [
    "knock_limit",
    "ace_upcard_gin_only",
    "spade_upcard_doubles",
    "allow_discard_of_taken_card",
    "big_gin",
    "big_gin_bonus",
    "gin_bonus",
    "undercut_bonus",
    "tie_is_undercut",
    "target_score",
    "classic_bonuses",
    "max_pile_draws",
    "variant",
]


def pack(obj: Any) -> bytes:
    return msgpack.packb(obj, use_bin_type=True)


def nested(depth: int, leaf: Any = None, as_map: bool = False) -> Any:
    x = leaf
    for _ in range(depth):
        x = {"k": x} if as_map else [x]
    return x


def scalar(rng: random.Random) -> Any:
    """Any msgpack value of any type (for fields that should get the wrong one)."""
    k = rng.randrange(17)
    if k == 0:
        return None
    if k == 1:
        return rng.random() < 0.5
    if k == 2:
        return rng.randrange(-(2**63), 2**63)
    if k == 3:
        return rng.choice([0, -1, 2**64 - 1, -(2**63), 2**63, 2**32, 1])
    if k == 4:
        return rng.choice([math.nan, math.inf, -math.inf, 0.5, -0.0, 1e308])
    if k == 5:
        return "".join(chr(rng.randrange(0x20, 0x3000)) for _ in range(rng.randrange(0, 30)))
    if k == 6:
        return "x" * rng.choice([0, 41, 65, 281, 5000])
    if k == 7:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(0, 20)))
    if k == 8:
        return [scalar(rng) for _ in range(rng.randrange(0, 4))]
    if k == 9:
        return {str(rng.randrange(100)): scalar(rng) for _ in range(rng.randrange(0, 4))}
    if k == 10:
        return msgpack.ExtType(rng.randrange(0, 128), bytes(rng.randrange(256) for _ in range(rng.randrange(0, 9))))
    if k == 11:
        return nested(rng.randrange(1, 500), rng.choice([None, 1, "x"]), as_map=rng.random() < 0.5)  # msgpack packs <= 511 levels
    if k == 12:
        return rng.choice([*CARDS, "", "1s", "Ax", "as", "10h", "A", "AsAs"])
    if k == 13:
        return rng.choice([*KINDS, "fly", "", "KNOCK"])
    if k == 14:
        return {
            "kind": rng.choice([*KINDS, "fly"]),
            "card": scalar(rng) if rng.random() < 0.3 else rng.choice(CARDS),
            **({"melds": scalar(rng)} if rng.random() < 0.3 else {}),
        }
    if k == 15:
        return rng.choice(["oklahoma", "box", "gin", "Box"])
    return msgpack.Timestamp(rng.randrange(0, 2**33), rng.randrange(0, 10**9))


def _wrong_value(rng: random.Random, check: Any) -> Any:
    for _ in range(200):
        v = scalar(rng)
        if check(v) is not None:
            return v
    return msgpack.ExtType(5, b"x")  # no field check accepts an ext value


def bad_field_map(rng: random.Random) -> dict[str, Any]:
    """A known client type with a field made certainly wrong (or a required one missing)."""
    t = rng.choice(sorted(t for t in CLIENT_TYPES if FIELDS[t] and t != "hello"))
    fields = FIELDS[t]
    msg: dict[str, Any] = {"type": t}
    for name, (check, required) in fields.items():
        if required or rng.random() < 0.3:
            msg[name] = _good_value(rng, name, check)
    victim = rng.choice(sorted(fields))
    required = [n for n, (_, req) in fields.items() if req]
    if required and rng.random() < 0.25:
        msg.pop(rng.choice(required), None)
    else:
        msg[victim] = _wrong_value(rng, fields[victim][0])
    return msg


def _good_value(rng: random.Random, name: str, check: Any) -> Any:
    candidates = {
        "table": lambda: rng.choice(["g", "t1", "q1", "fuzz", "honest-0", "x" * 64]),
        "seq": lambda: rng.randrange(0, 50),
        "seat": lambda: rng.randrange(0, 4),
        "action": lambda: {"kind": rng.choice(KINDS), "card": rng.choice(CARDS)},
        "variant": lambda: rng.choice(["oklahoma", "box"]),
        "rules": lambda: {},
        "full": lambda: False,
        "text": lambda: "hi",
        "protocol": lambda: 1,
        "role": lambda: "player",
        "name": lambda: "fz",
    }
    make = candidates.get(name)
    for _ in range(20):
        v = make() if make else scalar(rng)
        if check(v) is None:
            return v
    return None


def garbage(rng: random.Random, welcomed: bool = True, max_bytes: int = MAX_MESSAGE_BYTES) -> list[bytes]:
    """One hostile message (a list of frames) that must earn exactly one error.

    ``welcomed``: the connection has a session (then a second ``hello`` is hostile too;
    on a connection without one it would be a real hello, so it is not sent there).

    Every frame fits ``max_bytes`` (cut to it: still garbage): since 1.4 a bigger frame
    never reaches the referee's Python side, libzmq closes that connection instead
    (tests/referee/test_ref_limits_codec.py shows it), so it earns no error to count."""
    return [f[:max_bytes] for f in _garbage(rng, welcomed, max_bytes)]


def _garbage(rng: random.Random, welcomed: bool, max_bytes: int) -> list[bytes]:
    k = rng.randrange(20 if welcomed else 19)
    if k == 0:  # random bytes (never a valid map: a map byte first would be luck; force a non-map lead)
        b = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 64)))
        lead = rng.choice([b"\xc1", b"\x91", b"\xa1", b"\x00", b"\xd4", b"\xc7"])
        return [lead + b]
    if k == 1:  # a valid message truncated
        full = pack(
            {"type": "act", "table": "g", "seq": rng.randrange(100), "action": {"kind": "discard", "card": rng.choice(CARDS)}}
        )
        return [full[: rng.randrange(0, len(full))]]
    if k == 2:  # bytes after the map
        return [pack({"type": "ping"}) + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 8)))]
    if k == 3:  # not a map
        return [pack(rng.choice([None, 1, "hello", [1, 2], True, 1.5, b"bin", [{"type": "ping"}]]))]
    if k == 4:  # non-str keys
        return [pack({rng.choice([1, b"type", None, 1.5, True]): "ping", "type": "ping"})]
    if k == 5 and rng.random() < 0.05:  # near the size limit, full of cheap objects (1.4: refused by count, built nothing)
        return [pack({"type": "ping", "id": rng.randrange(1000), "pad": [{}] * rng.randrange(100, max_bytes - 64)})]
    if k in (5, 6):  # deep nesting: too deep for the unpacker, a deep non-map, or a deep map without a type
        d = rng.choice([rng.randrange(1, 900), rng.randrange(1000, 20000)])
        return [(b"\x91" if rng.random() < 0.7 else b"\x81\xa1k") * d + b"\xc0"]
    if k == 7:  # deep nesting inside the type field
        return [b"\x81\xa4type" + b"\x91" * rng.randrange(1, 3000) + b"\xa4ping"]
    if k == 8:  # invalid UTF-8 in a str
        bad = b"\xa4\xff\xfe\xfd\xfc"
        return [b"\x81\xa4type" + bad]
    if k == 9:  # bin where str is required
        return [pack({"type": rng.choice([b"ping", b"act"]), "id": 1})]
    if k == 10:  # type missing or not a string
        m = {"kind": "ping"} if rng.random() < 0.5 else {"type": scalar(rng)}
        if isinstance(m.get("type"), str):
            m["type"] = 5
        return [pack(m)]
    if k == 11:  # unknown or referee-only type
        t = rng.choice(["dance", "welcome", "prompt", "event", "error", "", "x" * 300, "ACT", "act "])
        return [pack({"type": t, "id": rng.randrange(1000)})]
    if k in (12, 13, 14, 15):  # a known type with a wrong field
        return [pack(bad_field_map(rng))]
    if k == 16:  # an id of the wrong kind
        t = rng.choice(["ping", "list_tables", "heartbeat"])
        return [pack({"type": t, "id": rng.choice([1.5, True, "i" * 65, [1], {"a": 1}, b"id", -0.0])})]
    if k == 17:  # two or three frames
        return [pack({"type": "ping"})] * rng.randrange(2, 4) if rng.random() < 0.5 else [b"", pack({"type": "ping"})]
    if k == 18:  # ext types and timestamps
        return (
            [pack(msgpack.ExtType(rng.randrange(-128, 128) & 0x7F, b"abc"))]
            if rng.random() < 0.5
            else [pack(msgpack.Timestamp(1, 2))]
        )
    # a second hello on a welcomed connection
    return [pack({"type": "hello", "protocol": 1, "role": "player", "name": "again"})]


def structured(rng: random.Random, tables: list[str], max_bytes: int = MAX_MESSAGE_BYTES) -> dict[str, Any]:
    """A well-formed message of a random client type with random values of the right shape,
    packed within ``max_bytes`` (since 1.4 libzmq closes a connection that sends a bigger
    frame, and what was queued behind it is lost: that is test_ref_limits_codec's case)."""
    while True:
        msg = _structured(rng, tables)
        if len(pack(msg)) <= max_bytes:
            return msg


def _structured(rng: random.Random, tables: list[str]) -> dict[str, Any]:
    t = rng.choice(sorted(CLIENT_TYPES - {"hello", "bye"}) + ["act"] * 4)
    table = rng.choice([*tables, "nope", "fuzz-x"])
    msg: dict[str, Any] = {"type": t}
    if rng.random() < 0.7:
        msg["id"] = rng.choice([rng.randrange(2**63), "id-" + str(rng.randrange(10**6))])
    if t in ("join", "resign", "rematch", "watch", "unwatch", "sync", "close_table", "act", "advise"):
        msg["table"] = table
    if t == "leave" and rng.random() < 0.5:
        msg["table"] = table
    if t in ("act", "advise"):
        msg["seq"] = rng.randrange(0, 200)
        msg["action"] = {"kind": rng.choice(KINDS), **({"card": rng.choice(CARDS)} if rng.random() < 0.7 else {})}
        if rng.random() < 0.1:
            msg["action"]["melds"] = [[rng.choice(CARDS) for _ in range(rng.randrange(0, 5))] for _ in range(rng.randrange(0, 4))]
        if rng.random() < 0.2:
            msg["action"] = rng.choice(
                [
                    {},
                    {"kind": None},
                    {"kind": "discard"},
                    {"kind": "discard", "card": "Zz"},
                    {"kind": "knock", "card": "As", "melds": "As"},
                    {"kind": "pass", "card": "As"},
                    {"kind": "knock", "card": "As", "melds": [[1, 2, 3]]},
                    nested(50, None, True),
                ]
            )
        if t == "act" and rng.random() < 0.2:
            msg["seat"] = rng.randrange(0, 4)
        if t == "advise":
            if rng.random() < 0.3:
                msg["action"] = None
            if rng.random() < 0.5:
                msg["text"] = rng.choice(["", "psst", "bell\x07", "é" * 280, "x" * 280])
    if t in ("queue", "join") and rng.random() < 0.7:
        msg["variant"] = rng.choice(["oklahoma", "box"])
    if t in ("queue", "join", "create_table") and rng.random() < 0.6:
        msg["rules"] = {rng.choice(RULE_KEYS): scalar(rng) for _ in range(rng.randrange(0, 4))}
    if t == "join" and rng.random() < 0.3:
        msg["seat"] = rng.randrange(0, 5)
    if t == "watch" and rng.random() < 0.3:
        msg["full"] = True
    if t == "create_table":
        if rng.random() < 0.5:
            msg["clock"] = {rng.choice(["move_ms", "bank_ms", "increment_ms", "grace_ms", "tempo"]): scalar(rng)}
        if rng.random() < 0.5:
            msg["policies"] = {rng.choice(["timeout", "illegal", "illegal_limit", "disconnect_grace_ms", "x"]): scalar(rng)}
        if rng.random() < 0.3:
            msg["seed"] = rng.choice([rng.randrange(-(2**63), 2**63), "s" * rng.randrange(0, 200)])
    return msg
