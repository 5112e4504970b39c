"""SPRT: Wald's sequential probability ratio test for A/B tests between two bots.

A gin game always has a winner (a forfeit included), so each game is a Bernoulli trial:
the candidate wins with probability ``p``. The hypotheses are Elo differences turned into
expected scores with the logistic Elo curve, ``s(e) = 1 / (1 + 10 ** (-e / 400))``:
H0: ``p = s(elo0)``, H1: ``p = s(elo1)``. After W wins and L losses the log-likelihood
ratio is exactly::

    LLR = W * ln(s1 / s0) + L * ln((1 - s1) / (1 - s0))

and the test stops as soon as ``LLR >= ln((1 - beta) / alpha)`` (accept H1: the
candidate is at least elo1 stronger) or ``LLR <= ln(beta / (1 - alpha))`` (accept H0).
A game nobody won counts as half a win and half a loss.

Why the exact Bernoulli form and not the normal approximation chess tools use for
win/draw/loss: with no draws it *is* the likelihood ratio, and it never divides by an
observed variance (which is 0 after a streak of wins and would stop the test at once).
Known simplification: the two games of a duplicate deal are correlated and treated as
independent (a pentanomial model would account for it).

>>> t = Sprt(elo0=0, elo1=20, alpha=0.05, beta=0.05)
>>> round(t.upper, 4), round(t.lower, 4)
(2.9444, -2.9444)
>>> t.llr(60, 40) > t.upper, t.decide(60, 40)
(False, None)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .ratings import expected


@dataclass(frozen=True)
class Sprt:
    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        if not self.elo1 > self.elo0:
            raise ValueError("elo1 must be greater than elo0")
        if not (0 < self.alpha < 1 and 0 < self.beta < 1):
            raise ValueError("alpha and beta must lie strictly between 0 and 1")

    @property
    def upper(self) -> float:
        """Accept H1 at or above this log-likelihood ratio."""
        return math.log((1.0 - self.beta) / self.alpha)

    @property
    def lower(self) -> float:
        """Accept H0 at or below this log-likelihood ratio."""
        return math.log(self.beta / (1.0 - self.alpha))

    def llr(self, wins: float, losses: float, draws: float = 0.0) -> float:
        s0, s1 = expected(self.elo0), expected(self.elo1)
        w = wins + draws / 2.0
        lo = losses + draws / 2.0
        return w * math.log(s1 / s0) + lo * math.log((1.0 - s1) / (1.0 - s0))

    def decide(self, wins: float, losses: float, draws: float = 0.0) -> str | None:
        """``"H1"``, ``"H0"`` or ``None`` (go on playing)."""
        v = self.llr(wins, losses, draws)
        if v >= self.upper:
            return "H1"
        if v <= self.lower:
            return "H0"
        return None
