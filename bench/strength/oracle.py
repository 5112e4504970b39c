"""Analysis only: a strong bot that peeks at the opponent's real hand wherever it asks
for sampled opponent hands: its knock decision, and (with ``threat_samples``, e.g.
``oracle:threat_samples=1``) a discard's threat. It bounds what better opponent
modelling could add there (bench/strength.md, "what peeking is worth"); it is never a
player (the hand it sees is hidden information)."""

from __future__ import annotations

import random

from clients.bots.strong import StrongBot
from clients.bots.strong.knowledge import Knowledge
from okgin import View


class OracleKnockBot(StrongBot):
    """StrongBot whose opponent hands are the opponent's true hand (set by the harness)."""

    peek = None  # callable returning the opponent's hand mask, installed by the harness

    def opponent_hands(self, k: Knowledge, view: View, rng: random.Random, n: int) -> list[int]:
        assert self.peek is not None
        return [self.peek()] * n
