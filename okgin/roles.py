"""Gin in the Box roles (docs/rules.md §4 "Roles", "Rotation after a hand").

Each player draws a card; king high, ace low. Highest is **in the box**, middle is the
**captain**, lowest **sits out**. Ties are redrawn among the tied players only
([resolved]), from the same shuffled deck, so the draw is a pure function of the seed.
"""

from __future__ import annotations

from .cards import Card
from .rng import SeedStream

__all__ = ["BOX", "CAPTAIN", "ROLE_NAMES", "SITTER", "Roles", "draw_roles", "rotate"]

BOX, CAPTAIN, SITTER = "box", "captain", "sitter"
ROLE_NAMES = (BOX, CAPTAIN, SITTER)

Roles = tuple[int, int, int]
"""Seats in the order (box, captain, sitter)."""


def draw_roles(seed: str) -> tuple[Roles, list[list[tuple[int, Card]]]]:
    """Draw for roles. Returns (box, captain, sitter) seats and every round of draws.

    >>> roles, rounds = draw_roles("7")
    >>> sorted(roles)
    [0, 1, 2]
    """
    deck: list[Card] = []
    decks = 0
    rounds: list[list[tuple[int, Card]]] = []

    def draw(seats: list[int]) -> dict[int, Card]:
        nonlocal deck, decks
        if len(deck) < len(seats):
            deck = SeedStream(seed, f"roles/deck/{decks}").shuffle(list(range(52)))
            decks += 1
        got = {s: deck.pop() for s in seats}
        rounds.append(sorted(got.items()))
        return got

    def order(seats: list[int]) -> list[int]:
        """Seats from highest to lowest draw, ties redrawn among the tied."""
        if len(seats) == 1:
            return seats
        got = draw(seats)
        by_rank: dict[int, list[int]] = {}
        for s, c in got.items():
            by_rank.setdefault(c % 13, []).append(s)
        out: list[int] = []
        for r in sorted(by_rank, reverse=True):
            group = sorted(by_rank[r])
            out.extend(group if len(group) == 1 else order(group))
        return out

    o = order([0, 1, 2])
    return (o[0], o[1], o[2]), rounds


def rotate(roles: Roles, box_won: bool | None) -> Roles:
    """Roles for the next hand. ``box_won`` None: drawn hand (or an unscored tie), unchanged.

    >>> rotate((0, 1, 2), True)    # box stays; captain and sitter swap
    (0, 2, 1)
    >>> rotate((0, 1, 2), False)   # box sits out, captain into the box, sitter captains
    (1, 2, 0)
    """
    box, captain, sitter = roles
    if box_won is None:
        return roles
    if box_won:
        return (box, sitter, captain)
    return (captain, sitter, box)
