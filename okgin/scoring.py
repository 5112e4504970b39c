"""Scoring a hand (docs/rules.md §3.5, §3.6) and the record of how a hand ended.

K = knocker's deadwood, D = defender's deadwood after layoffs.

- gin (K = 0): knocker scores ``gin_bonus`` + D; the defender scores nothing.
- big gin (option ``big_gin``): ``big_gin_bonus`` + D, no layoffs.
- knock, K < D: knocker scores D - K.
- undercut, K >= D (not gin): defender scores ``undercut_bonus`` + (K - D);
  with ``tie_is_undercut`` off a tie K = D scores nothing (outcome ``tie``).
- spade upcard with ``spade_upcard_doubles``: the hand's points doubled.
- drawn hand (stock down to 2 after a discard): no score (outcome ``drawn``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .cards import Card, card_str, parse_card
from .layoffs import Defence
from .melds import Arrangement
from .rules import RuleSet

__all__ = ["OUTCOMES", "HandResult", "score_knock"]

OUTCOMES = ("knock", "gin", "big_gin", "undercut", "tie", "drawn")


@dataclass(frozen=True)
class HandResult:
    """How one hand ended: who scored what, and both hands laid out (unless drawn).

    Everything here is public once the hand is over (docs/rules.md §5: at a knock both hands
    are laid out face up and the face-down discard is revealed; a drawn hand reveals
    nothing).
    """

    hand_number: int
    outcome: str
    winner: int | None
    points: int
    doubled: bool
    knock_limit: int
    upcard: Card
    dealer: int
    knocker: int | None = None
    defender: int | None = None
    knock_discard: Card | None = None
    knocker_layout: Arrangement | None = None
    defender_layout: Defence | None = None
    scores_after: tuple[int, ...] = field(default=())

    @property
    def knocker_deadwood(self) -> int | None:
        return None if self.knocker_layout is None else self.knocker_layout.deadwood

    @property
    def defender_deadwood(self) -> int | None:
        return None if self.defender_layout is None else self.defender_layout.deadwood

    def to_wire(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "hand_number": self.hand_number,
            "outcome": self.outcome,
            "winner": self.winner,
            "points": self.points,
            "doubled": self.doubled,
            "knock_limit": self.knock_limit,
            "upcard": card_str(self.upcard),
            "dealer": self.dealer,
            "knocker": self.knocker,
            "defender": self.defender,
            "knock_discard": None if self.knock_discard is None else card_str(self.knock_discard),
            "knocker_layout": None if self.knocker_layout is None else self.knocker_layout.to_wire(),
            "defender_layout": None if self.defender_layout is None else self.defender_layout.to_wire(),
            "scores_after": list(self.scores_after),
        }
        return d

    @staticmethod
    def from_wire(d: dict[str, Any]) -> HandResult:
        """Rebuild from the wire form (clients use this to get typed results)."""

        def arr(x: dict | None) -> Arrangement | None:
            if x is None:
                return None
            return Arrangement(
                tuple(tuple(parse_card(c) for c in m) for m in x["melds"]),
                tuple(parse_card(c) for c in x["deadwood_cards"]),
                int(x["deadwood"]),
            )

        dl = d.get("defender_layout")
        defence = None
        if dl is not None:
            a = arr(dl)
            assert a is not None
            defence = Defence(a, tuple((parse_card(x["card"]), int(x["meld"])) for x in dl.get("layoffs", [])))
        kd = d.get("knock_discard")
        return HandResult(
            hand_number=d["hand_number"],
            outcome=d["outcome"],
            winner=d["winner"],
            points=d["points"],
            doubled=d["doubled"],
            knock_limit=d["knock_limit"],
            upcard=parse_card(d["upcard"]),
            dealer=d["dealer"],
            knocker=d.get("knocker"),
            defender=d.get("defender"),
            knock_discard=None if kd is None else parse_card(kd),
            knocker_layout=arr(d.get("knocker_layout")),
            defender_layout=defence,
            scores_after=tuple(d.get("scores_after", ())),
        )


def score_knock(
    rules: RuleSet, knocker_deadwood: int, defender_deadwood: int, gin: bool, big_gin: bool, doubled: bool
) -> tuple[str, bool, int]:
    """Outcome, whether the knocker won, and points (docs/rules.md §3.5).

    >>> score_knock(RuleSet(), 5, 5, False, False, False)   # tie = undercut by default
    ('undercut', False, 10)
    >>> score_knock(RuleSet(tie_is_undercut=False), 5, 5, False, False, False)
    ('tie', False, 0)
    >>> score_knock(RuleSet(), 0, 0, True, False, True)     # gin vs no deadwood, spade doubled
    ('gin', True, 50)
    """
    k, d = knocker_deadwood, defender_deadwood
    if big_gin:
        outcome, knocker_won, pts = "big_gin", True, rules.big_gin_bonus + d
    elif gin:
        outcome, knocker_won, pts = "gin", True, rules.gin_bonus + d
    elif k < d:
        outcome, knocker_won, pts = "knock", True, d - k
    elif k == d and not rules.tie_is_undercut:
        return "tie", False, 0
    else:
        outcome, knocker_won, pts = "undercut", False, rules.undercut_bonus + (k - d)
    if doubled:
        pts *= 2
    return outcome, knocker_won, pts
