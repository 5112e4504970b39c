"""The machine-readable schema of protocol v1 (``protocol.schema.json``), built here.

Why build it in Python rather than edit the JSON by hand: the message definitions share
many pieces (cards, actions, views, clocks), and one builder keeps them consistent. The
JSON file beside ``protocol.md`` is what other languages read; a test checks that the
file equals :func:`build_schema` and that every message the referee sends or accepts
validates against it, so the text, the schema and the code cannot drift apart.

Regenerate: ``python -m okgin.protocol.schema > protocol.schema.json``.

The schema is permissive about unknown fields (``additionalProperties`` is left open),
because protocol.md §14 makes receivers ignore them; the referee's tests close every map
before validating so that the referee itself never sends an undocumented field.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from .catalogue import (
    CLIENT_TYPES,
    DIRECTIONS,
    MAX_ACCOUNT_KEY,
    MAX_CURSOR,
    MAX_ID,
    MAX_LEADERBOARD,
    MAX_PAGE,
    MAX_SEED_CHARS,
    MAX_SHARD_CAPACITY,
    MAX_TEXT,
    PROTOCOL_MAJOR,
    PROTOCOL_MINOR,
    TABLE_STATUSES,
)
from .errors import ERRORS
from .settings import MAX_MS
from .text import SCHEMA_PATTERN

__all__ = [
    "BOOL",
    "INT",
    "MS",
    "NNINT",
    "STR",
    "J",
    "arr",
    "build_schema",
    "closed",
    "nullable",
    "obj",
    "ref",
    "same_variant",
    "schema_json",
]

J = dict[str, Any]


def ref(name: str) -> J:
    return {"$ref": f"#/$defs/{name}"}


def nullable(s: J) -> J:
    return {"anyOf": [s, {"type": "null"}]}


INT: J = {"type": "integer"}
# 1.4: at most 2^63 - 1, as the referee has always checked (a uint64 above it is refused)
NNINT: J = {"type": "integer", "minimum": 0, "maximum": 2**63 - 1}
MS: J = {"type": "integer", "minimum": 0, "maximum": MAX_MS}  # a time setting: at most a week (okgin.protocol.settings)
STR: J = {"type": "string"}
BOOL: J = {"type": "boolean"}


def arr(items: J) -> J:
    return {"type": "array", "items": items}


def closed(o: J) -> J:
    """``o`` refusing fields it does not name: the maps of settings a request lays over
    defaults, where the referee refuses an unknown option rather than ignore it (a typo
    would otherwise silently play other rules, protocol.md 6.7)."""
    return {**o, "additionalProperties": False}


def same_variant(default: str | None) -> J:
    """A request's ``rules.variant``, if given, must be its ``variant`` (``bad_rules``
    otherwise); ``default``: the variant when the request names none (None: no check
    then, as ``join`` takes an existing table's or the rules' own)."""
    out = []
    for v in ("oklahoma", "box"):
        names_v: J = {"properties": {"variant": {"const": v}}, "required": ["variant"]}
        cond: J = {"anyOf": [names_v, {"not": {"required": ["variant"]}}]} if v == default else names_v
        out.append({"if": cond, "then": {"properties": {"rules": {"properties": {"variant": {"const": v}}}}}})
    return {"allOf": out}


def obj(props: J, required: list[str] | None = None) -> J:
    o: J = {"type": "object", "properties": props}
    if required is None:
        required = list(props)
    if required:
        o["required"] = required
    return o


# 1.6: a challenge as its named accounts are offered it (challenge_offer, lobby_state.challenges)
_OFFER: J = {"challenge": STR, "from": ref("ArenaPlayer"), "to": arr(STR), "variant": {"enum": ["oklahoma", "box"]},
             "clock": STR, "rated": BOOL, "expires_ms": NNINT}


def _defs() -> J:
    card = ref("Card")
    cards = arr(card)
    rules_props: J = {
        "variant": {"enum": ["oklahoma", "box"]},
        "knock_limit": {"anyOf": [{"const": "upcard"}, {"type": "integer", "minimum": 0, "maximum": 10}]},
        "ace_upcard_gin_only": BOOL,
        "spade_upcard_doubles": BOOL,
        "allow_discard_of_taken_card": BOOL,
        "big_gin": BOOL,
        "big_gin_bonus": {"type": "integer", "minimum": 0, "maximum": 1000},
        "gin_bonus": {"type": "integer", "minimum": 0, "maximum": 1000},
        "undercut_bonus": {"type": "integer", "minimum": 0, "maximum": 1000},
        "tie_is_undercut": BOOL,
        "target_score": {"type": "integer", "minimum": 1, "maximum": 100000},
        "classic_bonuses": BOOL,
        "max_pile_draws": {"type": "integer", "minimum": 1, "maximum": 1000},  # 1.4, okgin/rules.py
        "max_hands": {"type": "integer", "minimum": 0, "maximum": 10000},  # 1.5, okgin/rules.py; sent only when set
    }
    clock_props: J = {"move_ms": MS, "bank_ms": MS, "increment_ms": MS, "grace_ms": MS}
    policy_props: J = {
        "timeout": {"enum": ["forfeit", "default_move"]},
        "illegal": {"enum": ["reprompt", "forfeit"]},
        "illegal_limit": {"type": "integer", "minimum": 1, "maximum": 1000},
        "disconnect_grace_ms": MS,
        "away_clock": {"enum": ["run", "pause"]},  # 1.6, okgin/protocol/settings.py; sent only when "pause"
        "advice_window_ms": {"type": "integer", "minimum": 0, "maximum": 120000},  # 1.6; sent only when not 0
    }
    layout = obj({"melds": arr(cards), "deadwood_cards": cards, "deadwood": NNINT})
    defence = obj(
        {
            "melds": arr(cards),
            "deadwood_cards": cards,
            "deadwood": NNINT,
            "layoffs": arr(obj({"card": card, "meld": NNINT})),
        }
    )
    action_kinds = ["take", "pass", "draw_stock", "draw_discard", "discard", "knock", "big_gin"]
    d: J = {
        "Card": {"type": "string", "pattern": "^[A23456789TJQK][cdhs]$", "description": "rank A23456789TJQK then suit cdhs"},
        "Id": {"anyOf": [INT, {"type": "string", "maxLength": 64}], "description": "a request id chosen by the client"},
        "Seed": {"anyOf": [INT, {"type": "string", "maxLength": MAX_SEED_CHARS}]},
        "Salt": {"type": "string", "pattern": "^[0-9a-f]{32}$", "description": "16 random bytes in lowercase hex (1.4, "
            "protocol.md 5.10)"},
        "Hex32": {"type": "string", "pattern": "^[0-9a-f]{64}$", "maxLength": 64,
                  "description": "32 bytes in lowercase hex: a nonce, or a SHA-256 (1.5, protocol.md 5.27)"},
        "TableName": {"type": "string", "pattern": "^[A-Za-z0-9._-]{1,64}$"},
        "Action": {
            "type": "object",
            # 1.4: melds hold at most a hand (11 cards) and only knock and big_gin take
            # them, as the referee has always parsed them (okgin.actions.Action.from_wire)
            "properties": {
                "kind": {"enum": action_kinds}, "card": card, "melds": {**arr({**cards, "maxItems": 11}), "maxItems": 11},
            },
            "required": ["kind"],
            "allOf": [
                {"if": {"properties": {"kind": {"enum": ["discard", "knock"]}}}, "then": {"required": ["card"]}},
                {
                    "if": {"properties": {"kind": {"enum": ["take", "pass", "draw_stock", "draw_discard", "big_gin"]}}},
                    "then": {"not": {"required": ["card"]}},
                },
                {
                    "if": {"properties": {"kind": {"enum": ["take", "pass", "draw_stock", "draw_discard", "discard"]}}},
                    "then": {"not": {"required": ["melds"]}},
                },
            ],
        },
        "Move": obj({"seat": NNINT, "kind": STR, "card": nullable(card)}),
        "Advice": obj({"seat": NNINT, "action": nullable(ref("Action")), "text": STR}),
        # 1.3: an `event` held for a batched seat (hello.batch_events), minus table/game/view
        "HeldEvent": obj({"n": NNINT, "move": ref("Move"), "auto": BOOL}),
        "Layout": layout,
        "Defence": defence,
        "HandResult": obj(
            {
                "hand_number": NNINT,
                "outcome": {"type": "string", "description": "knock gin big_gin undercut tie drawn (open)"},
                "winner": nullable(NNINT),
                "points": NNINT,
                "doubled": BOOL,
                "knock_limit": NNINT,
                "upcard": card,
                "dealer": NNINT,
                "knocker": nullable(NNINT),
                "defender": nullable(NNINT),
                "knock_discard": nullable(card),
                "knocker_layout": nullable(ref("Layout")),
                "defender_layout": nullable(ref("Defence")),
                "scores_after": arr(INT),
            }
        ),
        "View": obj(
            {
                "seat": nullable(NNINT),
                "variant": {"enum": ["oklahoma", "box"]},
                "num_seats": {"enum": [2, 3]},
                "hand_number": NNINT,
                "phase": {"enum": ["offer", "draw", "discard", "game_over"]},
                "to_act": nullable(NNINT),
                "dealer": NNINT,
                "nondealer": NNINT,
                "roles": arr(STR),
                "hand": nullable(cards),
                "hand_of": nullable(NNINT),
                "upcard": card,
                "knock_limit": NNINT,
                "doubled": BOOL,
                "discard_pile": cards,
                "stock_size": NNINT,
                "hand_sizes": arr(NNINT),
                "known_cards": arr(cards),
                "taken_card": nullable(card),
                "events": arr(ref("Move")),
                "scores": arr(INT),
                "hands_won": arr(NNINT),
                "target_score": INT,
                "last_result": nullable(ref("HandResult")),
                "winner": nullable(NNINT),
                "advice": arr(ref("Advice")),
                "role_draws": arr(arr({"type": "array", "prefixItems": [NNINT, card], "minItems": 2, "maxItems": 2})),
                "all_hands": arr(cards),
                "stock": cards,
            },
            required=[
                "seat", "variant", "num_seats", "hand_number", "phase", "to_act", "dealer", "nondealer", "roles",
                "hand", "hand_of", "upcard", "knock_limit", "doubled", "discard_pile", "stock_size", "hand_sizes",
                "known_cards", "taken_card", "events", "scores", "hands_won", "target_score", "last_result", "winner",
                "advice", "role_draws",
            ],
        ),
        "Rules": obj(rules_props, required=[k for k in rules_props if k != "max_hands"]),  # sent only when set
        "RulesPartial": closed(obj(rules_props, required=[])),
        "Clock": obj(clock_props),
        "ClockPartial": closed(obj(clock_props, required=[])),
        "ClockState": obj(
            {"remaining_ms": nullable(NNINT), "move_ms": NNINT,
             "bank_ms": nullable(arr(INT)), "banks_ms": nullable(arr(INT)),  # 1.4
             "increment_ms": NNINT, "grace_ms": NNINT}
        ),
        # away_clock, advice_window_ms (1.6): sent only when not their defaults
        "Policies": obj(policy_props, required=[k for k in policy_props if k not in ("away_clock", "advice_window_ms")]),
        "PoliciesPartial": closed(obj(policy_props, required=[])),
        "Final": obj(
            {
                "scores": arr(INT),
                "hands_won": arr(NNINT),
                "winner": nullable(NNINT),
                "termination": STR,
                "classic_totals": arr(INT),
                "shutout": BOOL,
            },
            required=["scores", "hands_won", "winner", "termination"],
        ),
        "ErrorInfo": obj({"code": INT, "name": STR, "message": STR}),
        # 1.6: the arena (protocol.md §19)
        "AccountName": {"type": "string", "minLength": 1, "maxLength": 40, "pattern": SCHEMA_PATTERN},
        "ArenaId": {"type": "string", "minLength": 1, "maxLength": MAX_ID, "description": "a seek, challenge or game id"},
        "Kind": {"enum": ["human", "bot"]},
        "ArenaRating": obj({"rating": INT, "deviation": INT, "provisional": BOOL}),
        "ArenaPlayer": obj({"account": STR, "kind": ref("Kind"), "rating": INT}),
        "ChallengeOffer": obj(_OFFER),
        "TableInfo": obj(
            {
                "table": STR,
                "variant": {"enum": ["oklahoma", "box"]},
                "origin": STR,
                "status": STR,
                "game": NNINT,
                "players": arr(nullable(STR)),
                "spectators": NNINT,
                "rules": ref("Rules"),
                "clock": ref("Clock"),
                "policies": ref("Policies"),
                "full_feed": BOOL,
                "seated": arr(BOOL),  # 1.6
            },
            required=["table", "variant", "origin", "status", "game", "players", "spectators", "rules", "clock", "policies",
                      "full_feed"],
        ),
    }
    return d


def _messages() -> dict[str, J]:
    """Every message: its fields (besides ``type`` and ``id``) and which are required."""
    seat = NNINT
    table = ref("TableName")
    tname = STR  # in referee messages a table name is just a string
    view = ref("View")
    held = arr(ref("HeldEvent"))  # 1.3, only to batched seats
    game_fields: J = {"table": tname, "game": NNINT}
    table_desc: J = {
        "variant": {"enum": ["oklahoma", "box"]},
        "rules": ref("Rules"),
        "num_seats": {"enum": [2, 3]},
        "players": arr(nullable(STR)),
        "clock": ref("Clock"),
        "policies": ref("Policies"),
    }
    m: dict[str, tuple[J, list[str]]] = {
        # --- session
        "hello": (
            {
                "protocol": INT,
                "minor": NNINT,
                "role": {"enum": ["player", "spectator", "admin"]},
                "name": {"type": "string", "minLength": 1, "maxLength": 40, "pattern": SCHEMA_PATTERN},  # 1.4: §13 text rule
                "token": nullable(STR),
                "admin_key": STR,
                "events": BOOL,
                "batch_events": BOOL,
                "entropy_commit": ref("Hex32"),  # 1.5
                "account": ref("AccountName"),  # 1.6: the arena
                "key": {"type": "string", "minLength": 1, "maxLength": MAX_ACCOUNT_KEY},  # 1.6
                "advice_wait": BOOL,  # 1.6: a person or an agent (protocol.md §5.14)
            },
            ["protocol", "role", "name"],
        ),
        "welcome": (
            {
                "protocol": INT,
                "minor": NNINT,
                "token": STR,
                "role": {"enum": ["player", "spectator", "admin"]},
                "name": STR,
                "resumed": BOOL,
                "heartbeat_ms": NNINT,
                "liveness": NNINT,
                "max_message_bytes": NNINT,
                "referee": STR,
                "events": BOOL,
                "batch_events": BOOL,
                "advice_wait": {"const": True},  # 1.6: sent only when granted
                # 1.6: an arena's welcome only
                "arena": obj({"name": STR, "variants": arr({"enum": ["oklahoma", "box"]}),
                              "clocks": {"type": "object", "additionalProperties": ref("Clock")}}),
                "account": nullable(obj({"name": STR, "kind": ref("Kind"), "admin": BOOL})),
            },
            [
                "protocol", "minor", "token", "role", "name", "resumed", "heartbeat_ms", "liveness", "max_message_bytes",
                "referee", "events", "batch_events",
            ],
        ),
        "heartbeat": ({}, []),
        "ping": ({}, []),
        "pong": ({"time_ms": INT}, ["time_ms"]),
        "bye": ({}, []),
        # --- lobby
        "list_tables": (
            {"limit": {"type": "integer", "minimum": 1, "maximum": MAX_PAGE},
             "cursor": {"type": "string", "minLength": 1, "maxLength": MAX_CURSOR, "pattern": "^[0-9]+$"},
             "variant": {"enum": ["oklahoma", "box"]}, "status": {"enum": list(TABLE_STATUSES)}, "open": BOOL},
            [],
        ),
        "tables": ({"tables": arr(ref("TableInfo")), "next": nullable(STR), "total": NNINT}, ["tables"]),
        "queue": ({"variant": {"enum": ["oklahoma", "box"]}, "rules": ref("RulesPartial")}, []),
        "queued": (
            {"queue": STR, "variant": {"enum": ["oklahoma", "box"]}, "rules": ref("Rules"), "waiting": NNINT, "needed": NNINT},
            ["queue", "variant", "rules", "waiting", "needed"],
        ),
        "join": (
            {"table": table, "seat": NNINT, "variant": {"enum": ["oklahoma", "box"]}, "rules": ref("RulesPartial"),
             "any_rules": BOOL, "clock": ref("ClockPartial"), "policies": ref("PoliciesPartial")},  # clock, policies: 1.6
            ["table"],
        ),
        "seated": (
            {"table": tname, "seat": seat, **table_desc, "status": STR},
            ["table", "seat", *table_desc, "status"],
        ),
        "leave": ({"table": table}, []),
        # --- game
        "game_start": (
            {**game_fields, "n": NNINT, "seat": nullable(seat), **table_desc, "players": arr(STR), "seed_hash": STR,
             "view": view},
            ["table", "game", "n", "seat", *table_desc, "seed_hash", "view"],
        ),
        "prompt": (
            {**game_fields, "seq": NNINT, "seat": seat, "legal": arr(ref("Action")), "view": view, "clock": ref("ClockState"),
             "error": ref("ErrorInfo"), "events": held},
            ["table", "game", "seq", "seat", "legal", "view", "clock"],
        ),
        "act": ({"table": table, "seq": NNINT, "action": ref("Action"), "seat": NNINT}, ["table", "seq", "action"]),
        "event": (
            {**game_fields, "n": NNINT, "move": ref("Move"), "auto": BOOL, "view": nullable(view)},
            ["table", "game", "n", "move", "auto", "view"],
        ),
        "advise_prompt": (
            {**game_fields, "seq": NNINT, "captain": seat, "legal": arr(ref("Action")), "view": view, "events": held,
             "window_ms": NNINT},  # window_ms: 1.6, only while the captain's prompt waits for this sitter
            ["table", "game", "seq", "captain", "legal", "view"],
        ),
        "advise": (
            {"table": table, "seq": NNINT, "action": nullable(ref("Action")),
             "text": {"type": "string", "maxLength": 280, "pattern": SCHEMA_PATTERN}},
            ["table", "seq"],
        ),
        "advice": (
            {**game_fields, "seq": NNINT, "seat": seat, "action": nullable(ref("Action")), "text": STR},
            ["table", "game", "seq", "seat", "action", "text"],
        ),
        "hand_end": (
            {**game_fields, "n": NNINT, "result": ref("HandResult"), "view": view, "events": held},
            ["table", "game", "n", "result", "view"],
        ),
        "game_end": (
            {
                **game_fields,
                "n": NNINT,
                "final": ref("Final"),
                "termination": STR,
                "winner": nullable(seat),
                "at_fault": nullable(seat),
                "seed": nullable(ref("Seed")),  # null: the table defers the reveal (1.4)
                "salt": nullable(ref("Salt")),  # 1.4 (a 1.3 referee's had none); required since 1.6 said so
                "seed_hash": STR,
                "view": view,
                "events": held,
            },
            ["table", "game", "n", "final", "termination", "winner", "at_fault", "seed", "salt", "seed_hash", "view"],
        ),
        "resign": ({"table": table}, ["table"]),
        "rematch": ({"table": table}, ["table"]),
        "rematch_status": ({"table": tname, "ready": arr(BOOL), "game": NNINT}, ["table", "ready", "game"]),
        # --- spectators
        "watch": ({"table": table, "full": BOOL, "broadcast_token": STR, "events": BOOL}, ["table"]),
        "unwatch": ({"table": table}, ["table"]),
        "sync": ({"table": table}, ["table"]),
        "snapshot": (
            {
                "table": tname,
                "status": {"enum": ["waiting", "playing", "finished", "closed"]},
                "game": NNINT,
                "n": NNINT,
                "seat": nullable(seat),
                "full": BOOL,
                **table_desc,
                "seed_hash": nullable(STR),
                "clocks": nullable(arr(INT)),
                "view": nullable(view),
            },
            ["table", "status", "game", "n", "seat", "full", *table_desc, "seed_hash", "clocks", "view"],
        ),
        # --- admin
        "create_table": (
            {
                "table": table,
                "variant": {"enum": ["oklahoma", "box"]},
                "rules": ref("RulesPartial"),
                "seed": ref("Seed"),
                "clock": ref("ClockPartial"),
                "policies": ref("PoliciesPartial"),
                "reserved": BOOL,
                "players": arr({"type": "string", "minLength": 1, "maxLength": 40, "pattern": SCHEMA_PATTERN}),
                "full_feed_delay_ms": nullable(MS),
                "reveal": {"enum": ["game_end", "deferred"]},  # 1.4
                "doors": BOOL,  # 1.5
            },
            [],
        ),
        "table_created": ({"table": tname, "seat_tokens": nullable(arr(STR)), "broadcast_token": nullable(STR),
                           "doors": arr(STR)},  # 1.5: only when asked for
                          ["table", "seat_tokens"]),
        "close_table": ({"table": table}, ["table"]),
        "table_closed": ({"table": tname, "reason": STR}, ["table", "reason"]),
        # 1.4: a seat's connection went (held for forfeit_in_ms) or came back, to the others
        "seat_status": (
            {"table": tname, "seat": NNINT, "name": nullable(STR), "connected": BOOL, "forfeit_in_ms": nullable(NNINT)},
            ["table", "seat", "name", "connected", "forfeit_in_ms"],
        ),
        "reveal": ({"table": table, "game": NNINT}, ["table", "game"]),  # 1.4
        "revealed": (
            {"table": tname, "game": NNINT, "seed": ref("Seed"), "salt": nullable(ref("Salt")), "seed_hash": STR},
            ["table", "game", "seed", "salt", "seed_hash"],
        ),
        # 1.5: participants' nonces at a tournament's preflight
        "entropy": ({"table": table, "commitments_hash": ref("Hex32")}, ["table"]),
        "entropy_state": (
            {"table": tname, "commits": arr(nullable(ref("Hex32"))), "nonces": arr(nullable(ref("Hex32")))},
            ["table", "commits", "nonces"],
        ),
        "entropy_request": ({"table": tname, "commitments_hash": ref("Hex32")}, ["table", "commitments_hash"]),
        "entropy_reveal": ({"table": table, "nonce": ref("Hex32")}, ["table", "nonce"]),
        # --- 1.6: the arena (protocol.md §19)
        "seek": ({"variant": {"enum": ["oklahoma", "box"]}, "clock": ref("AccountName"), "rated": BOOL}, ["variant"]),
        "sought": ({"seek": STR}, ["seek"]),
        "challenge": (
            {"to": {**arr(ref("AccountName")), "minItems": 1, "maxItems": 2}, "variant": {"enum": ["oklahoma", "box"]},
             "clock": ref("AccountName"), "rated": BOOL},
            ["to", "variant"],
        ),
        "challenged": ({"challenge": STR}, ["challenge"]),
        "challenge_offer": (_OFFER, list(_OFFER)),
        "accept": ({"challenge": ref("ArenaId")}, ["challenge"]),
        "decline": ({"challenge": ref("ArenaId")}, ["challenge"]),
        "challenge_closed": (
            {"challenge": STR, "reason": {"enum": ["declined", "expired", "cancelled", "accepted_elsewhere"]},
             "by": nullable(STR)},
            ["challenge", "reason", "by"],
        ),
        "cancel": ({"seek": ref("ArenaId"), "challenge": ref("ArenaId")}, []),
        "lobby": ({}, []),
        "lobby_state": (
            {
                "online": arr(obj({"account": STR, "kind": ref("Kind"), "playing": BOOL,
                                   "ratings": {"type": "object", "additionalProperties": ref("ArenaRating")}})),
                "seeks": arr(obj({"seek": STR, "account": STR, "kind": ref("Kind"), "variant": {"enum": ["oklahoma", "box"]},
                                  "clock": STR, "rated": BOOL, "rating": INT})),
                "challenges": arr(ref("ChallengeOffer")),
                "me": nullable(obj({
                    "account": STR, "kind": ref("Kind"),
                    "ratings": {"type": "object", "additionalProperties": ref("ArenaRating")},
                    "recent": arr(obj({"game": STR, "variant": {"enum": ["oklahoma", "box"]}, "opponents": arr(STR),
                                       "result": {"enum": ["win", "loss", "draw", "void"]},
                                       "rating_change": nullable(INT), "finished_ms": NNINT})),
                })),
            },
            ["online", "seeks", "challenges", "me"],
        ),
        "leaderboard": (
            {"variant": {"enum": ["oklahoma", "box"]}, "offset": {"type": "integer", "minimum": 0, "maximum": 1_000_000},
             "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LEADERBOARD}},
            ["variant"],
        ),
        "leaderboard_page": (
            {"variant": {"enum": ["oklahoma", "box"]},
             "rows": arr(obj({"rank": NNINT, "account": STR, "kind": ref("Kind"), "rating": INT, "deviation": INT,
                              "provisional": BOOL, "games": NNINT}))},
            ["variant", "rows"],
        ),
        "ban": ({"account": ref("AccountName"), "reason": {"type": "string", "maxLength": MAX_TEXT, "pattern": SCHEMA_PATTERN}},
                ["account", "reason"]),
        "unban": ({"account": ref("AccountName")}, ["account"]),
        # --- 1.7: a shard joins a running arena (protocol.md §19.6); admin_key and join_key are secrets
        "shard_join": (
            {"endpoint": {"type": "string", "pattern": "^tcp://[A-Za-z0-9.:\\[\\]*_-]{1,250}$"},
             "server_key": nullable({"type": "string", "pattern": "^[0-9A-Za-z.:+=^!/*?&<>()\\[\\]{}@%$#-]{40}$"}),
             "capacity": {"type": "integer", "minimum": 1, "maximum": MAX_SHARD_CAPACITY},
             "admin_key": {"type": "string", "minLength": 1, "maxLength": MAX_ACCOUNT_KEY},
             "join_key": {"type": "string", "minLength": 1, "maxLength": MAX_ACCOUNT_KEY}},
            ["endpoint", "server_key", "capacity", "admin_key", "join_key"],
        ),
        "game_ready": (
            {"game": STR, "endpoint": STR, "server_key": nullable(STR), "table": STR, "token": STR, "seat": NNINT,
             "variant": {"enum": ["oklahoma", "box"]}, "clock": ref("Clock"), "rated": BOOL,
             "players": arr(ref("ArenaPlayer")), "show_up_ms": NNINT},
            ["game", "endpoint", "server_key", "table", "token", "seat", "variant", "clock", "rated", "players",
             "show_up_ms"],
        ),
        "game_over": (
            {"game": STR, "result": {"enum": ["win", "loss", "draw", "void"]}, "scores": arr(INT), "termination": STR,
             "rating": nullable(obj({"before": INT, "after": INT, "deviation": INT, "provisional": BOOL}))},
            ["game", "result", "scores", "termination", "rating"],
        ),
        # --- generic
        "ok": ({"request": STR, "table": tname}, ["request"]),  # 1.6: table, when the request concerned one
        "error": (
            {"code": INT, "name": STR, "message": STR, "request": nullable(STR), "table": nullable(STR),
             "retry_ms": NNINT},  # 1.6: with cooldown
            ["code", "name", "message", "request", "table"],
        ),
        "shutdown": ({"reason": STR}, ["reason"]),
    }
    # What the referee checks across fields (1.4: stated here, as it always refused them)
    extra: dict[str, J] = {
        "queue": same_variant("oklahoma"),
        "join": same_variant(None),
        "create_table": {"allOf": [
            same_variant("oklahoma"),
            # players: at most one name per seat of the variant
            {"if": {"properties": {"variant": {"const": "box"}}, "required": ["variant"]},
             "then": {"properties": {"players": {"maxItems": 3}}}, "else": {"properties": {"players": {"maxItems": 2}}}},
            # doors (1.5) are for reserved seats: doors true needs reserved true
            {"if": {"properties": {"doors": {"const": True}}, "required": ["doors"]},
             "then": {"properties": {"reserved": {"const": True}}, "required": ["reserved"]}},
        ]},
        # advice is a suggested action, a text, or both (bad_advice otherwise)
        "advise": {"anyOf": [
            {"properties": {"action": ref("Action")}, "required": ["action"]},
            {"properties": {"text": {"minLength": 1}}, "required": ["text"]},
        ]},
    }
    out: dict[str, J] = {}
    for name, (props, required) in m.items():
        full = {"type": {"const": name}, "id": ref("Id"), **props}
        out[name] = {
            "type": "object",
            "description": f"{name} ({DIRECTIONS[name]})",
            "properties": full,
            "required": ["type", *required],
            **extra.get(name, {}),
        }
    return out


def build_schema() -> J:
    """The whole schema as a JSON-ready dict (deterministic: same output every call)."""
    msgs = _messages()
    missing = set(DIRECTIONS) ^ set(msgs)
    if missing:  # the catalogue and the schema must name the same messages
        raise AssertionError(f"catalogue and schema disagree on {sorted(missing)}")
    defs = _defs()
    for name, s in msgs.items():
        defs[f"msg_{name}"] = s
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://okgin.invalid/protocol.schema.json",
        "title": f"okgin wire protocol {PROTOCOL_MAJOR}.{PROTOCOL_MINOR}",
        "description": "Every message of protocol.md. A message is a msgpack map; validate its decoded form. "
        "Pick the definition by the message's 'type' (see x-messages) or validate against the top-level oneOf.",
        "x-protocol": {"major": PROTOCOL_MAJOR, "minor": PROTOCOL_MINOR},
        "x-messages": {
            name: {"direction": DIRECTIONS[name], "client_may_send": name in CLIENT_TYPES, "$ref": f"#/$defs/msg_{name}"}
            for name in msgs
        },
        # every error code (protocol.md §9), so another language need not copy the table;
        # not an enum in msg_error: a client must accept codes a newer minor adds
        "x-errors": {name: {"code": code, "when": when} for name, (code, when) in sorted(ERRORS.items(), key=lambda e: e[1][0])},
        "oneOf": [ref(f"msg_{name}") for name in msgs],
        "$defs": defs,
    }


def schema_json() -> str:
    return json.dumps(build_schema(), indent=1, sort_keys=False, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    sys.stdout.write(schema_json())
