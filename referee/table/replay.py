"""A running game rebuilt from its journal, for crash recovery (:mod:`referee.recovery`).

The journal holds every move, advice, refusal, timeout and resignation of a game, each
written before anyone was told of it. Re-dealing from the seed and re-applying them
gives the game as it stood, and the table's counters with it: ``n``, the last ``seq``,
the illegal-move counts, and each seat's bank, charged by the same
:class:`referee.table.clock.SeatClock` arithmetic as during play (the outage is charged
to nobody: only the recorded move times count, protocol.md §7).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from okgin import Action, Game, HandResult, RuleSet
from okgin.protocol.settings import Clock

from .clock import GameClocks

__all__ = ["Replayed", "replay"]


@dataclass
class Replayed:
    """What a journal says of its game, for :meth:`referee.table.table.Table.restore_game`."""

    game: Game
    n: int
    seq: int
    banks: list[int] | None
    illegal: list[int]
    decisions: int
    #: the seat that resigned (the game is then over), or None
    at_fault: int | None
    #: the result of a hand whose last move is journaled but its ``hand_end`` line is not
    missing_hand_end: HandResult | None


def replay(rules: RuleSet, clock: Clock, seed: int | str, entries: list[dict[str, Any]], seq: int) -> Replayed:
    """Re-apply a journal's ``entries`` (its start line first) to a game dealt from ``seed``;
    ``seq`` is the table's ``seq`` before the game's first prompt."""
    game = Game(rules, seed)
    clocks = GameClocks.fresh(clock, rules.num_players)
    illegal = [0] * rules.num_players
    n = decisions = 0
    at_fault: int | None = None
    missing_hand_end = None
    for e in entries[1:]:
        k = e["t"]
        if k == "action":
            seat = e["seat"]
            result = game.apply(Action.from_wire(e["action"]), seat=seat)
            n, seq = e["n"], max(seq, e["seq"])
            decisions += 1
            if e.get("auto"):
                clocks.seats[seat].charge_timeout()
            else:
                clocks.seats[seat].charge(int(e["ms"]))
            missing_hand_end = result
        elif k == "hand_end":
            n = e["n"]
            missing_hand_end = None
        elif k == "advice":
            a = e.get("action")
            game.advise(e["seat"], None if a is None else Action.from_wire(a), e.get("text", ""))
        elif k == "illegal":
            illegal[e["seat"]] = int(e["count"])
            if e.get("seq") is not None:
                seq = max(seq, e["seq"])
        elif k == "timeout":
            seq = max(seq, e["seq"])
        elif k == "resign":
            game.resign(e["seat"], e["reason"])
            at_fault = e["seat"]
        elif k == "abandon":
            game.abandon(e["reason"])
    return Replayed(game, n, seq, clocks.banks(), illegal, decisions, at_fault, missing_hand_end)
