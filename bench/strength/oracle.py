"""Analysis only: strong bots that see some of the opponent's hidden hand. They bound
what better opponent modelling could add (bench/strength.md, "what peeking is worth");
neither is ever a player (what they see is hidden information).

- ``oracle`` (:class:`OracleKnockBot`) peeks at the opponent's whole real hand wherever
  it asks for sampled opponent hands: its knock decision, and (with ``threat_samples``,
  e.g. ``oracle:threat_samples=1``) a discard's threat.
- ``peek:cards=K`` (:class:`PeekBot`) sees K of the opponent's hidden cards, as if the
  opponent had taken them from the discard pile, and plays ``strong`` on that view: its
  inference, discard safety and knock samples all start from the K cards. Where
  ``oracle`` asks what perfect knowledge is worth, this asks what each card of
  knowledge is worth, the curve a learned model of the opponent would climb
  (dangerfit.py ``--peek K`` gives the same views' Brier score).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from clients.bots.strong import StrongBot
from clients.bots.strong.knowledge import Knowledge, opponent_of
from clients.bots.strong.tables import bits
from okgin import Action, View


class OracleKnockBot(StrongBot):
    """StrongBot whose opponent hands are the opponent's true hand (set by the harness)."""

    peek: Callable[[], int] | None = None  # returns the opponent's hand mask, installed by the harness

    def opponent_hands(self, k: Knowledge, view: View, rng: random.Random, n: int) -> list[int]:
        assert self.peek is not None
        return [self.peek()] * n


def peek_view(
    view: View, opp_hand: int, cards: int, salt: str, keep: frozenset[int] = frozenset()
) -> tuple[View, frozenset[int]]:
    """``view`` with ``cards`` of the opponent's hidden cards (``opp_hand`` holds them all)
    shown as if known, and the set shown. The cards of ``keep`` (those shown at the
    viewer's last decision) stay shown while the opponent still hides them; the others
    are chosen by a fixed random order of the deck for the hand (``salt`` and the hand
    number), so knowledge is kept, and a card the opponent throws is replaced by the
    next hidden card in that order."""
    opp = opponent_of(view)
    known = view.known_cards[opp]
    hidden = [c for c in bits(opp_hand) if c not in known]

    def order(c: int) -> bytes:
        return hashlib.blake2b(f"{salt}/{view.hand_number}/{c}".encode(), digest_size=8).digest()

    ranked = sorted(hidden, key=lambda c: (c not in keep, order(c)))
    seen = tuple(ranked[:cards])
    shown = tuple(known + seen if s == opp else view.known_cards[s] for s in range(len(view.known_cards)))
    return replace(view, known_cards=shown), frozenset(seen)


class PeekBot(StrongBot):
    """StrongBot that sees ``cards`` of the opponent's hidden cards (:func:`peek_view`)."""

    peek: Callable[[], int] | None = None  # as OracleKnockBot's, installed by the harness
    rng_family = "StrongBot"  # the same random draws as strong: peek:cards=0 is strong

    def __init__(self, seed: int | str | None = None, cards: int = 1, **params: Any) -> None:
        super().__init__(seed, **params)
        self.cards = cards
        self.salt = str(seed)
        self.seen: frozenset[int] = frozenset()  # shown at the last decision of hand seen_in
        self.seen_in = -1

    def decide(self, view: View, legal: list[Action]) -> Action:
        assert self.peek is not None
        keep = self.seen if self.seen_in == view.hand_number else frozenset()
        shown, self.seen = peek_view(view, self.peek(), self.cards, self.salt, keep)
        self.seen_in = view.hand_number
        return super().decide(shown, legal)
