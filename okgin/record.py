"""Game records: rules + seed + every action = the whole game (docs/rules.md §6).

A record is a JSON-ready map. ``canonical_json`` serialises it byte-for-byte the same
way every time (sorted keys, no spaces), so two plays of the same seed and actions give
identical bytes. Replaying re-runs every entry through the engine and, with ``verify``,
checks that each hand result and the final scores equal the recorded ones.

>>> from okgin import Game
>>> g = Game(seed=5); g.apply(g.legal_actions()[1])
>>> Game.from_record(g.to_record()).to_record() == g.to_record()
True
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .actions import Action
from .errors import IllegalAction
from .rules import RuleSet

if TYPE_CHECKING:
    from .game import Game

__all__ = [
    "RECORD_FORMAT", "RECORD_VERSION", "RecordMismatch", "apply_entry", "canonical_json",
    "entry_to_wire", "game_from_record", "game_to_record",
]

RECORD_FORMAT = "okgin-record"
RECORD_VERSION = 1


class RecordMismatch(ValueError):
    """A replayed record disagrees with what it recorded (results or final scores)."""


def entry_to_wire(entry: tuple[Any, ...]) -> dict[str, Any]:
    kind = entry[0]
    if kind == "action":
        return {"seat": entry[1], "action": entry[2].to_wire()}
    if kind == "advice":
        return {"seat": entry[1], "advice": None if entry[2] is None else entry[2].to_wire(), "text": entry[3]}
    if kind == "resign":
        return {"seat": entry[1], "resign": entry[2]}
    return {"abandon": entry[1]}


def game_to_record(game: Game) -> dict[str, Any]:
    if getattr(game, "resampled", False):
        # Game.resample redealt the hidden cards: replaying the seed and the moves would
        # give the original deal, so a record of it would describe another game.
        raise ValueError("a resampled game (Game.resample) has no record: its seed does not deal its cards")
    rec: dict[str, Any] = {
        "format": RECORD_FORMAT,
        "version": RECORD_VERSION,
        "rules": game.rules.to_dict(),
        "seed": game.seed_value,
        "entries": [entry_to_wire(e) for e in game.log],
        "results": [r.to_wire() for r in game.results],
        "final": game.final_scores() if game.over else None,
    }
    if game.position is not None:
        # A constructed start (okgin.position, tests and analysis): the seed alone
        # would replay a different first hand, so the record carries the position.
        rec["position"] = dict(game.position)
    return rec


def apply_entry(game: Game, e: dict[str, Any]) -> None:
    """Apply one wire entry to a game (raises IllegalAction / ValueError if it cannot)."""
    if "action" in e:
        game.apply(Action.from_wire(e["action"]), seat=e["seat"])
    elif "advice" in e:
        a = e["advice"]
        game.advise(e["seat"], None if a is None else Action.from_wire(a), e.get("text", ""))
    elif "resign" in e:
        game.resign(e["seat"], e["resign"])
    elif "abandon" in e:
        game.abandon(e["abandon"])
    else:
        raise ValueError(f"unknown record entry {e!r}")


def game_from_record(record: dict[str, Any], verify: bool = True) -> Game:
    from .game import Game

    if record.get("format") != RECORD_FORMAT:
        raise ValueError(f"not an okgin record (format {record.get('format')!r})")
    if record.get("version") != RECORD_VERSION:
        raise ValueError(f"record version {record.get('version')!r} is not supported (this engine reads {RECORD_VERSION})")
    rules = RuleSet.from_dict(dict(record["rules"]))
    if record.get("position") is not None:
        from .position import game_from_wire_position

        game = game_from_wire_position(rules, record["seed"], record["position"])
    else:
        game = Game(rules, record["seed"])
    for i, e in enumerate(record["entries"]):
        try:
            apply_entry(game, e)
        except IllegalAction as err:
            raise RecordMismatch(f"entry {i} ({e}) is illegal on replay: {err}") from None
    if verify:
        got = [r.to_wire() for r in game.results]
        want = record.get("results", [])
        for i, (a, b) in enumerate(zip(got, want, strict=False)):
            if a != b:
                raise RecordMismatch(f"hand {i} replays to {a}, recorded {b}")
        if len(got) != len(want):
            raise RecordMismatch(f"replay gives {len(got)} hand results, the record has {len(want)}")
        final = game.final_scores() if game.over else None
        if final != record.get("final"):
            raise RecordMismatch(f"final replays to {final}, recorded {record.get('final')}")
    return game


def canonical_json(obj: Any) -> str:
    """Byte-stable JSON: sorted keys, compact separators, UTF-8 text."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
