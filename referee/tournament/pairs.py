"""Paired statistics for duplicate deals: the pentanomial model of fishtest and fastchess.

With duplicate deals (the default) a deal is played in both seatings of a pairing, so
luck of the cards cancels out. It also makes the two games of a deal *correlated*: a
strong hand for seat 0 is a strong hand in both games, and one bot may win both because
it is stronger or split them because the deal decided. Treating the games as
independent trials then gets the variance wrong. So the unit of analysis is a **pair**:
the games of one deal in every seating of one pairing (two games, seats swapped). The
player's score in a pair is 0, 1/2, 1, 3/2 or 2 points: the five cells of the
*pentanomial*. A gin game always has a winner (a forfeit included), so in practice only
0, 1 and 2 occur; a game nobody won (abandoned) is half a point each and fills the
half-point cells, which is why the general model is kept.

Everything below works for any number ``m`` of games per unit with ``2m + 1`` cells
(the score in half points): ``m = 2`` is the pentanomial; ``m = 1`` (``duplicate =
false``: every game has its own deal, so games *are* independent) is the trinomial
loss/draw/win. Scores are put on the per-game scale: cell ``k`` is worth ``a_k = k / 2m``.

With ``N`` complete units and frequencies ``p_k = n_k / N``:

- mean score ``mu = sum p_k a_k``, per-unit variance ``var = sum p_k (a_k - mu)^2``,
  standard error of the mean ``se = sqrt(var / N)`` (the normal approximation, as
  fishtest's ``get_elo``);
- **Elo difference** ``E(mu)`` with ``E(s) = -400 log10(1/s - 1)``, its 95% interval
  ``[E(mu - 1.96 se), E(mu + 1.96 se)]`` (asymmetric; infinite where the bound leaves
  (0, 1));
- **LOS** (likelihood of superiority) ``Phi((mu - 1/2) / se)``;
- the **GSPRT** log-likelihood ratio of fishtest/fastchess: for each hypothesis score
  ``s``, the maximum-likelihood distribution on the cells with mean ``s`` is
  ``q_k = p_k / (1 + x (a_k - s))``, where ``x`` solves ``sum p_k (a_k - s) / (1 + x (a_k
  - s)) = 0`` (a Lagrange multiplier; the root is unique), and ``LLR = sum n_k ln(q1_k /
  q0_k)``. An empty *extreme* cell (no pair lost twice, or none won twice) is given
  1e-3 of a pair, as fishtest regularises, so that every hypothesis in (0, 1) is
  reachable; empty inner cells stay empty (their maximum-likelihood weight is 0 under
  both hypotheses, so they contribute nothing). So with no draws and ``m = 1`` the LLR is
  exactly Wald's Bernoulli ``W ln(s1/s0) + L ln((1-s1)/(1-s0))``.

**Games that are not in a complete unit** (a deal whose other seating was not played:
a run in progress, an SPRT that stopped in the middle of a deal, a game that could not
be played) are left out of the pair statistics and counted as ``unpaired``; their
result would otherwise be read without the seating that balances its luck. They still
count in the standings' W/L and in the rating fit (see :mod:`.ratings`).

The 120 pairs of the issue (33 lost twice, 29 split, 58 won twice), checked in
tests/tournament/test_paired_stats.py against scipy and a simulation:

>>> p = Paired((33, 0, 29, 0, 58), games=(95, 0, 145))
>>> round(p.mean(), 4), round(p.se(), 4), round(p.naive_se(), 4), round(p.se() / p.naive_se(), 3)
(0.6042, 0.0386, 0.0316, 1.223)
>>> round(p.elo(), 1), [round(e, 1) for e in p.elo_interval()], round(p.los(), 4)
(73.5, [19.8, 130.8], 0.9965)

With ``elo0 = 0, elo1 = 25`` the per-game model's LLR was 2.977 (above ln 19 = 2.944,
"H1 accepted"); on pairs it is 1.968, still undecided:

>>> round(p.llr(0.5, 1 / (1 + 10 ** (-25 / 400))), 3)
1.968
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from .ratings import Z95, phi

EPSILON = 1e-3  # pairs given to an empty extreme cell (fishtest's regularisation)


class GameLike(Protocol):
    """What the pair statistics read from a game (a :class:`.store.GameResult`)."""

    deal: int
    seats: tuple[str, ...]
    winner: str | None


def score_to_elo(s: float) -> float:
    """The Elo difference whose expected score is ``s``; infinite at 0 and 1."""
    if s <= 0.0:
        return -math.inf
    if s >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / s - 1.0)


@dataclass(frozen=True)
class Paired:
    """One player's results against another, unit by unit (see the module docstring).

    ``counts[k]``: complete units in which the player scored ``k/2`` points; ``games``:
    the same games one by one as (losses, draws, wins), for the naive comparison;
    ``unpaired``: games left out because their unit is incomplete.
    """

    counts: tuple[float, ...]
    games: tuple[int, int, int] = (0, 0, 0)
    unpaired: int = 0

    def __post_init__(self) -> None:
        if len(self.counts) < 3 or len(self.counts) % 2 == 0:
            raise ValueError(f"a unit of m games has 2m + 1 cells, not {len(self.counts)}")

    @property
    def per_unit(self) -> int:
        """Games in one unit (2 for a duplicate pair)."""
        return (len(self.counts) - 1) // 2

    @property
    def units(self) -> float:
        return float(sum(self.counts))

    def values(self) -> list[float]:
        """Each cell's score per game, 0..1."""
        top = len(self.counts) - 1
        return [k / top for k in range(len(self.counts))]

    def mean(self) -> float:
        """Mean score per game over the complete units (0.5 if there are none)."""
        n = self.units
        if n <= 0:
            return 0.5
        return sum(c * a for c, a in zip(self.counts, self.values(), strict=True)) / n

    def variance(self) -> float:
        """Variance of one unit's score per game (the spread the pairing leaves)."""
        n = self.units
        if n <= 0:
            return 0.0
        mu = self.mean()
        return sum(c * (a - mu) ** 2 for c, a in zip(self.counts, self.values(), strict=True)) / n

    def se(self) -> float:
        """Standard error of :meth:`mean`, from the units (infinite without any)."""
        n = self.units
        return math.sqrt(self.variance() / n) if n > 0 else math.inf

    def naive_se(self) -> float:
        """The standard error if the same games were independent trials (what the
        per-game model reported): ``sqrt(var_game / games)``. Only for comparison."""
        lo, dr, w = self.games
        n = lo + dr + w
        if n <= 0:
            return math.inf
        mu = (w + dr / 2) / n
        var = (lo * mu**2 + dr * (0.5 - mu) ** 2 + w * (1 - mu) ** 2) / n
        return math.sqrt(var / n)

    def elo(self) -> float:
        """The Elo difference player - opponent, from the mean score."""
        return score_to_elo(self.mean())

    def elo_interval(self, z: float = Z95) -> tuple[float, float]:
        """The Elo difference at ``mean -/+ z se`` (95% by default)."""
        mu, se = self.mean(), self.se()
        if not math.isfinite(se):
            return (-math.inf, math.inf)
        return (score_to_elo(mu - z * se), score_to_elo(mu + z * se))

    def los(self) -> float:
        """Likelihood that the player is the stronger: ``Phi((mu - 1/2) / se)``."""
        mu, se = self.mean(), self.se()
        if not math.isfinite(se):
            return 0.5
        if se == 0.0:
            return 1.0 if mu > 0.5 else 0.0 if mu < 0.5 else 0.5
        return phi((mu - 0.5) / se)

    def llr(self, s0: float, s1: float) -> float:
        """The GSPRT log-likelihood ratio of mean score ``s1`` against ``s0``."""
        return gsprt_llr(self.counts, s0, s1)

    def to_dict(self) -> dict[str, object]:
        lo, hi = self.elo_interval()
        return {
            "cells": list(self.counts), "units": self.units, "unpaired": self.unpaired,
            "score": self.mean(), "se": self.se(), "naive_se": self.naive_se(),
            "elo_diff": self.elo(), "elo_diff_low95": lo, "elo_diff_high95": hi, "los": self.los(),
        }


def _multiplier(support: Sequence[tuple[float, float]], s: float) -> float:
    """The root ``x`` of ``f(x) = sum p (a - s) / (1 + x (a - s))`` (see the docstring).

    ``f`` falls strictly from +inf to -inf on ``(-1/(a_max - s), 1/(s - a_min))`` (every
    ``1 + x (a - s)`` stays positive there), so bisection finds the unique root; 200
    halvings reach the limit of double precision."""
    a_min = min(a for a, _ in support)
    a_max = max(a for a, _ in support)
    if not a_min < s < a_max:
        raise ValueError(f"a mean of {s} is outside the observed scores [{a_min}, {a_max}]")
    lo, hi = -1.0 / (a_max - s), 1.0 / (s - a_min)

    def f(x: float) -> float:
        return sum(p * (a - s) / (1.0 + x * (a - s)) for a, p in support)

    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if f(mid) > 0.0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def gsprt_llr(counts: Sequence[float], s0: float, s1: float) -> float:
    """``sum n_k ln(q1_k / q0_k)`` with ``q_s`` the maximum-likelihood cell distribution
    of mean ``s`` (the module docstring); 0 before any unit."""
    if not (0.0 < s0 < 1.0 and 0.0 < s1 < 1.0):
        raise ValueError("hypothesis scores must lie strictly between 0 and 1")
    if sum(counts) <= 0:
        return 0.0
    c = [float(x) for x in counts]
    for k in (0, len(c) - 1):
        if c[k] <= 0.0:
            c[k] = EPSILON
    n = sum(c)
    top = len(c) - 1
    support = [(k / top, ck / n) for k, ck in enumerate(c) if ck > 0.0]
    x0, x1 = _multiplier(support, s0), _multiplier(support, s1)
    return sum(ck * (math.log1p(x0 * (k / top - s0)) - math.log1p(x1 * (k / top - s1)))
               for k, ck in enumerate(c) if ck > 0.0)


def game_score(g: GameLike, player: str) -> float:
    """The player's points in one game: 1 a win, 0 a loss, 1/2 if nobody won."""
    if g.winner is None:
        return 0.5
    return 1.0 if g.winner == player else 0.0


@dataclass
class PairTracker:
    """Builds a :class:`Paired` game by game (the runner's SPRT, and reports).

    A unit is the games of one deal between ``player`` and ``opponent``; it is complete
    when ``per_unit`` of them are in (every seating). Games of other pairings are ignored.
    """

    player: str
    opponent: str
    per_unit: int = 2
    counts: list[int] = field(default_factory=list)
    games: list[int] = field(default_factory=lambda: [0, 0, 0])
    recorded: int = 0  # games of this pairing added, complete units or not
    _open: dict[int, list[float]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.per_unit < 1:
            raise ValueError("a unit has at least one game")
        if not self.counts:
            self.counts = [0] * (2 * self.per_unit + 1)

    def add(self, g: GameLike) -> bool:
        """Count one game; True if it completed a unit (the statistics changed)."""
        if set(g.seats) != {self.player, self.opponent}:
            return False
        self.recorded += 1
        scores = self._open.setdefault(g.deal, [])
        scores.append(game_score(g, self.player))
        if len(scores) < self.per_unit:
            return False
        del self._open[g.deal]
        self.counts[round(2 * sum(scores))] += 1
        for s in scores:
            self.games[round(2 * s)] += 1
        return True

    @property
    def unpaired(self) -> int:
        return sum(len(v) for v in self._open.values())

    def result(self) -> Paired:
        lo, dr, w = self.games
        return Paired(tuple(self.counts), (lo, dr, w), self.unpaired)


def paired(games: Iterable[GameLike], player: str, opponent: str, per_unit: int = 2) -> Paired:
    """The pair statistics of ``player`` against ``opponent`` from a list of games."""
    t = PairTracker(player, opponent, per_unit)
    for g in games:
        t.add(g)
    return t.result()
