"""SPRT: a sequential test between two bots on *pairs* of games (the pentanomial GSPRT).

Why pairs: with duplicate deals the two games of a deal (seats swapped, same cards) are
correlated, so counting them as independent Bernoulli trials overstates the evidence
(on the 120 pairs of issue 15 the per-game LLR was 2.977, "H1 accepted", where the
paired LLR is 1.968). The test therefore reads complete pairs only, as fishtest and
fastchess do (:mod:`.pairs`): the candidate scores 0, 1/2, 1, 3/2 or 2 points in a pair.

The hypotheses are Elo differences candidate - baseline turned into expected scores
with the logistic curve, ``s(e) = 1 / (1 + 10 ** (-e / 400))``: H0 ``s = s(elo0)``,
H1 ``s = s(elo1)``. The log-likelihood ratio is the generalised one (GSPRT) of fishtest's
``LLR_logistic`` and fastchess: the likelihood of the observed pair frequencies under the
most likely pair distribution with mean ``s1``, over the same with mean ``s0`` (formula in
:mod:`.pairs`). The test stops as soon as ``LLR >= ln((1 - beta) / alpha)`` (accept H1)
or ``LLR <= ln(beta / (1 - alpha))`` (accept H0). The LLR only moves when a pair
completes; a game whose other seating is not played yet waits for it. With
``duplicate = false`` every game is its own unit (loss/draw/win).

As in fishtest and fastchess, every empty cell is first given 1e-3 of a unit, so that no
hypothesis is out of reach of the observed cells (:func:`okgin.stats.regularize`).

**Two models** (``sprt.model``), as fishtest and fastchess offer them:

- ``"logistic"`` (the default, kept for existing configs): ``elo0``/``elo1`` are
  logistic Elo, turned into expected scores as above;
- ``"normalized"``: ``elo0``/``elo1`` are *normalized* Elo (fishtest's default since
  2021): ``nElo = (mu - 1/2) / sigma_game * 800 / ln 10``, the score excess in units of
  the per-game spread. It does not depend on how drawish or how lucky the game is, so
  one pair of bounds means the same resolution whatever the deals' variance; gin, with
  its large luck, needs far more games per logistic Elo than chess, and the same
  ``[0, 5]`` nElo bounds mean the same statistical effort in both. The LLR is the
  t-value GSPRT of :func:`okgin.stats.normalized_llr`.

>>> t = Sprt(elo0=0, elo1=20, alpha=0.05, beta=0.05)
>>> round(t.upper, 4), round(t.lower, 4)
(2.9444, -2.9444)
>>> round(t.llr((20, 0, 10, 0, 30)), 3), t.decide((20, 0, 10, 0, 30))
(0.572, None)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from okgin.stats import expected, normalized_llr

from .pairs import GameLike, Paired, PairTracker, gsprt_llr, paired

MODELS = ("logistic", "normalized")


@dataclass(frozen=True)
class Sprt:
    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05
    model: str = "logistic"  # or "normalized" (elo0, elo1 in normalized Elo): the module docstring

    def __post_init__(self) -> None:
        if self.model not in MODELS:
            raise ValueError(f"an SPRT model is one of {', '.join(MODELS)}, not {self.model!r}")
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

    def llr(self, counts: Sequence[float]) -> float:
        """The GSPRT LLR of unit frequencies ``counts`` (cell k: the candidate scored k/2)."""
        if self.model == "normalized":
            return normalized_llr(counts, self.elo0, self.elo1)
        return gsprt_llr(counts, expected(self.elo0), expected(self.elo1))

    def decide_llr(self, llr: float) -> str | None:
        if llr >= self.upper:
            return "H1"
        if llr <= self.lower:
            return "H0"
        return None

    def decide(self, counts: Sequence[float]) -> str | None:
        """``"H1"``, ``"H0"`` or ``None`` (go on playing)."""
        return self.decide_llr(self.llr(counts))


@dataclass(frozen=True)
class SprtStatus:
    """The test after some games: what the progress line and the report show."""

    llr: float
    lower: float
    upper: float
    decision: str | None
    paired: Paired


@dataclass
class SprtMonitor:
    """The SPRT of one run: ``candidate`` against ``baseline``, ``per_unit`` games a pair.

    The runner feeds it every recorded game (:meth:`add`, incremental); the progress line
    calls :meth:`figures` with the games so far; the report calls :func:`status_of`. All
    three are the same computation on the same complete pairs.
    """

    test: Sprt
    candidate: str
    baseline: str
    per_unit: int = 2
    tracker: PairTracker = field(init=False)

    def __post_init__(self) -> None:
        self.tracker = PairTracker(self.candidate, self.baseline, self.per_unit)

    def add(self, g: GameLike) -> str | None:
        """Count a game; the decision if the test has one now."""
        self.tracker.add(g)
        return self.test.decide(self.tracker.counts)

    def status(self) -> SprtStatus:
        p = self.tracker.result()
        llr = self.test.llr(p.counts)
        return SprtStatus(llr, self.test.lower, self.test.upper, self.test.decide_llr(llr), p)

    def figures(self, games: Iterable[GameLike]) -> tuple[float, float, float]:
        """``(llr, lower, upper)`` after ``games`` (the progress line's ``SprtFigures``)."""
        st = status_of(self.test, games, self.candidate, self.baseline, self.per_unit)
        return st.llr, st.lower, st.upper


def status_of(test: Sprt, games: Iterable[GameLike], candidate: str, baseline: str, per_unit: int = 2) -> SprtStatus:
    """The test after ``games`` (any order: a pair is complete once all its games are in)."""
    p = paired(games, candidate, baseline, per_unit)
    llr = test.llr(p.counts)
    return SprtStatus(llr, test.lower, test.upper, test.decide_llr(llr), p)


def format_status(st: SprtStatus) -> str:
    """The SPRT on one line: ``LLR 1.97 [-2.94, 2.94] 120 pairs`` (plus the decision)."""
    text = f"LLR {st.llr:.2f} [{st.lower:.2f}, {st.upper:.2f}] {st.paired.units:g} pairs"
    return text + (f" {st.decision} accepted" if st.decision else "")
