"""Statistics for duplicate deals: Elo scale, Student's t, clustered means, the pentanomial.

Why it lives in the engine package: ``okgin match`` (``clients/``) and ``okgin
tournament`` (``referee/``) report the same figures on the same kind of games, and both
may import ``okgin`` while neither may import the other. Pure maths, standard library
only.

**The unit of evidence is the deal.** With duplicate deals a deal is played in every
seating (and, in a tournament, by every pairing): the same cards in every game, so the
games of one deal are correlated (a deal that favours seat 0 favours it in every game).
Intervals therefore treat a *deal* as one observation (a cluster) and its games as
parts of it, never the games as independent trials.

**Few deals.** With ``G`` clusters, a standard error estimated from the clusters has
``G - 1`` degrees of freedom; below :data:`SMALL_SAMPLE` clusters the 95% quantile is
Student's t with ``G - 1`` degrees of freedom instead of the normal 1.96 (12.7 for 2
deals, 3.18 for 4, 2.05 for 29), and the reports print a warning. One cluster gives
no interval at all (infinite).

**Never a zero-width interval.** Four pairs that all split have a sample variance of
0, but that says little about the true spread: it only says four draws from it came out
alike. So every clustered variance here gets *one virtual cluster* with the spread its
games would have as independent trials at the observed mean (``p (1 - p)`` per game on
the 0..1 score scale, :func:`virtual_var`; at a mean of exactly 0 or 1, which has no
spread, the mean moved half a unit towards 1/2):
``se^2 = G/(G-1) * (S + v nbar) / n^2`` where ``S`` is the sum of squared cluster
residuals, ``nbar`` the mean games per cluster and ``n`` the games. Its weight fades
like ``1/G``: on the 120 pairs of issue 15 it and the factor widen the standard error
by 0.6%; on 4 split pairs it is the whole variance, and the interval is honestly wide.
The factor ``G/(G-1)`` is the usual small-sample correction of a cluster-robust
variance (CR1). The ratings' sandwich does the same with the model's own information
(:mod:`competition.tournament.ratings`).

**The pentanomial** (fishtest, fastchess): for two players a deal's unit is its games in
both seatings, a *pair*, and the player's score in it is 0, 1/2, 1, 3/2 or 2 points
(``2m + 1`` cells for ``m`` games per unit; ``m = 1`` is the trinomial of independent
games). :class:`Paired` holds the cell counts; its :meth:`Paired.se` is fishtest's
plain pentanomial standard error, its intervals and LOS use the clustered rule above.

**SPRT log-likelihood ratios**, as fishtest's ``LLRcalc.py`` and fastchess's
``sprt.cpp`` compute them: every empty cell is given :data:`EPSILON` (1e-3) units
before anything else, so that every hypothesis is reachable and no cell is impossible;
then

- *logistic* (:func:`gsprt_llr`): hypotheses are expected scores ``s``; the maximum-
  likelihood cell distribution with mean ``s`` is ``q_k = p_k / (1 + x (a_k - s))``
  with ``x`` the root of ``sum p_k (a_k - s) / (1 + x (a_k - s)) = 0``;
- *normalized* (:func:`normalized_llr`): hypotheses are normalized Elo ``nElo``,
  i.e. a t-value ``t = (mu - 1/2) / sigma`` per game with ``nElo = t * 800 / ln 10``;
  per unit of ``m`` games the t-value is ``t sqrt(m)``. The maximum-likelihood
  distribution with that t-value is found by the fixed-point iteration of Van den
  Bergh's "Comments on normalized Elo" (section 4.1), as fishtest and fastchess do;

and ``LLR = sum n_k ln(q1_k / q0_k)`` over the regularised counts.

>>> round(t_quantile(0.975, 3), 6), round(critical(4), 6), round(critical(30), 6)
(3.182446, 3.182446, 1.959964)
>>> p = Paired((0, 0, 4, 0, 0))  # four pairs, every one split
>>> p.se(), [round(e) for e in p.elo_interval()]
(0.0, [-269, 269])
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

__all__ = [
    "EPSILON", "FAIR_VAR", "LN10_400", "NELO_PER_T", "SMALL_SAMPLE", "Z95", "ClusterMean", "Paired",
    "betainc", "cluster_diff", "cluster_diff_los", "cluster_mean", "critical", "degrees_of_freedom",
    "expected", "gsprt_llr", "mle_mean", "mle_t_value", "normalized_llr", "phi", "regularize",
    "score_to_elo", "small_sample_warning", "superiority", "t_cdf", "t_quantile", "virtual_var",
]

Z95 = 1.959963984540054
LN10_400 = math.log(10) / 400.0
NELO_PER_T = 800.0 / math.log(10)  # normalized Elo of a per-game t-value of 1 (347.4...)
SMALL_SAMPLE = 30  # fewer clusters (deals) than this: Student's t and a printed warning
EPSILON = 1e-3  # units given to every empty cell before an SPRT likelihood (fishtest, fastchess)
FAIR_VAR = 0.25  # per-game variance of a fair coin
# A cluster's key (a deal); both sides of a cluster_diff key their clusters alike.
# A TypeVar, not Hashable: Mapping is invariant in its key, so a dict[str, ...] is no Mapping[Hashable, ...].
ClusterKey = TypeVar("ClusterKey", bound=Hashable)


def virtual_var(mean: float, clusters: float) -> float:
    """The per-game variance of the virtual cluster for values on 0..1 (module docstring):
    ``p (1 - p)`` at the observed mean ``p``; at 0 or 1 (no spread to take) the mean with
    the virtual cluster counted as half a point, ``(G p + 1/2) / (G + 1)``.

    >>> virtual_var(0.5, 4), round(virtual_var(1.0, 3), 4)
    (0.25, 0.1094)
    """
    if 0.0 < mean < 1.0:
        return mean * (1.0 - mean)
    m = (clusters * min(max(mean, 0.0), 1.0) + 0.5) / (clusters + 1.0)
    return m * (1.0 - m)


# ------------------------------------------------------------------ Elo scale
def expected(diff: float) -> float:
    """Expected score of a player rated ``diff`` Elo above its opponent."""
    return 1.0 / (1.0 + 10.0 ** (-diff / 400.0))


def score_to_elo(s: float) -> float:
    """The Elo difference whose expected score is ``s``; infinite at 0 and 1."""
    if s <= 0.0:
        return -math.inf
    if s >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / s - 1.0)


def phi(x: float) -> float:
    """The standard normal cumulative distribution."""
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


# ----------------------------------------------------------- Student's t
def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10_000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-16:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function ``I_x(a, b)``."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    ln = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(ln) * _betacf(a, b, x) / a
    return 1.0 - math.exp(ln) * _betacf(b, a, 1.0 - x) / b


def t_cdf(x: float, df: float) -> float:
    """Student's t cumulative distribution with ``df`` degrees of freedom (normal if inf)."""
    if math.isinf(df):
        return phi(x)
    if df <= 0:
        raise ValueError("a t distribution needs at least one degree of freedom")
    if math.isinf(x):
        return 1.0 if x > 0 else 0.0
    tail = 0.5 * betainc(df / 2.0, 0.5, df / (df + x * x))
    return 1.0 - tail if x > 0 else tail


def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t (bisection on :func:`t_cdf`, to double precision)."""
    if not 0.0 < p < 1.0:
        raise ValueError("a quantile needs 0 < p < 1")
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        lo, hi = hi, 2.0 * hi
        if hi > 1e12:
            return math.inf
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def degrees_of_freedom(clusters: float) -> float:
    """The degrees of freedom of a clustered estimate: ``G - 1`` below :data:`SMALL_SAMPLE`
    clusters, infinite (the normal) from there on; 0 with fewer than two."""
    if clusters >= SMALL_SAMPLE:
        return math.inf
    return max(clusters - 1.0, 0.0)


def critical(clusters: float, level: float = 0.95) -> float:
    """The two-sided ``level`` quantile for ``clusters`` clusters (inf below two)."""
    df = degrees_of_freedom(clusters)
    if df <= 0:
        return math.inf
    if math.isinf(df) and level == 0.95:
        return Z95
    return t_quantile(0.5 + level / 2.0, df)


def superiority(z: float, clusters: float) -> float:
    """``P(T < z)`` for the statistic ``z = estimate / se`` of ``clusters`` clusters (the
    LOS): Student's t below :data:`SMALL_SAMPLE` clusters, the normal from there on."""
    df = degrees_of_freedom(clusters)
    if df <= 0:
        return 0.5
    return t_cdf(z, df)


def small_sample_warning(deals: int) -> str:
    """The line the reports print below :data:`SMALL_SAMPLE` deals ('' from there on)."""
    if deals >= SMALL_SAMPLE:
        return ""
    if deals < 2:
        return f"only {deals} deal{'' if deals == 1 else 's'}: no interval (a spread needs 2 deals or more)"
    df = deals - 1
    return (f"only {deals} deal{'' if deals == 1 else 's'}: intervals are rough "
            f"(Student's t, {df} degree{'' if df == 1 else 's'} of freedom; {SMALL_SAMPLE}+ deals for normal ones)")


# ------------------------------------------------------------ clustered mean
@dataclass(frozen=True)
class ClusterMean:
    """A mean per game over clustered games, with its clustered standard error."""

    mean: float
    se: float
    clusters: int
    games: float

    def interval(self, lo_bound: float = -math.inf, hi_bound: float = math.inf) -> tuple[float, float]:
        """The 95% interval (Student's t below :data:`SMALL_SAMPLE` clusters), clipped to
        the range the figure can take."""
        h = critical(self.clusters) * self.se
        if not math.isfinite(h):
            return (lo_bound, hi_bound)
        return (max(lo_bound, self.mean - h), min(hi_bound, self.mean + h))


def cluster_mean(clusters: Sequence[tuple[float, float]], game_var: float | None = None) -> ClusterMean:
    """The mean per game of clustered games and its cluster-robust standard error.

    ``clusters``: per cluster (a deal), the sum of the games' values and the number of
    games. ``game_var``: the per-game variance of the virtual cluster (module docstring);
    None for values on 0..1 (scores, rates): :func:`virtual_var` at the mean."""
    cl = [(float(y), float(n)) for y, n in clusters if n > 0]
    g = len(cl)
    n_tot = sum(n for _, n in cl)
    if g == 0:
        return ClusterMean(0.0, math.inf, 0, 0.0)
    r = sum(y for y, _ in cl) / n_tot
    if g < 2:
        return ClusterMean(r, math.inf, g, n_tot)
    s = sum((y - r * n) ** 2 for y, n in cl)
    v = virtual_var(r, g) if game_var is None else game_var
    var = g / (g - 1.0) * (s + v * n_tot / g) / (n_tot * n_tot)
    return ClusterMean(r, math.sqrt(var), g, n_tot)


# ---------------------------------------------------------------- pentanomial
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
        """fishtest's pentanomial standard error of :meth:`mean`, ``sqrt(var / N)`` (0 when
        every unit came out alike: see :meth:`interval_se` for the one intervals use)."""
        n = self.units
        return math.sqrt(self.variance() / n) if n > 0 else math.inf

    def interval_se(self) -> float:
        """The standard error the intervals and the LOS use: the clustered rule of the
        module docstring, ``sqrt((N var + v / m) / (N (N - 1)))`` with ``v`` =
        :func:`virtual_var` of the mean, so that units that all came out alike still
        leave an honest spread; infinite below two units."""
        n = self.units
        if n < 2:
            return math.inf
        v = virtual_var(self.mean(), n)
        return math.sqrt((n * self.variance() + v / self.per_unit) / (n * (n - 1.0)))

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

    @property
    def small(self) -> bool:
        """Fewer units (deals) than :data:`SMALL_SAMPLE`: Student's t, and a warning."""
        return self.units < SMALL_SAMPLE

    def elo(self) -> float:
        """The Elo difference player - opponent, from the mean score."""
        return score_to_elo(self.mean())

    def elo_interval(self) -> tuple[float, float]:
        """The 95% interval: the Elo difference at ``mean -/+ q interval_se`` with ``q``
        Student's t quantile (``N - 1`` degrees of freedom) below 30 units, 1.96 above."""
        mu, se, q = self.mean(), self.interval_se(), critical(self.units)
        if not math.isfinite(se * q):
            return (-math.inf, math.inf)
        return (score_to_elo(mu - q * se), score_to_elo(mu + q * se))

    def los(self) -> float:
        """Likelihood that the player is the stronger: ``P(T < (mu - 1/2) / interval_se)``."""
        mu, se = self.mean(), self.interval_se()
        if not math.isfinite(se):
            return 0.5
        return superiority((mu - 0.5) / se, self.units)

    def llr(self, s0: float, s1: float) -> float:
        """The GSPRT log-likelihood ratio of mean score ``s1`` against ``s0``."""
        return gsprt_llr(self.counts, s0, s1)

    def to_dict(self) -> dict[str, object]:
        lo, hi = self.elo_interval()
        return {
            "cells": list(self.counts), "units": self.units, "unpaired": self.unpaired,
            "score": self.mean(), "se": self.se(), "interval_se": self.interval_se(), "naive_se": self.naive_se(),
            "elo_diff": self.elo(), "elo_diff_low95": lo, "elo_diff_high95": hi, "los": self.los(),
            "small_sample": self.small,
        }


# ---------------------------------------------------------------------- SPRT
def regularize(counts: Sequence[float]) -> list[float]:
    """Every empty cell gets :data:`EPSILON` units (fishtest's ``regularize``, fastchess's)."""
    return [float(c) if c > 0 else EPSILON for c in counts]


def _root(f_of: Sequence[tuple[float, float]]) -> float:
    """The root ``x`` of ``sum p_k d_k / (1 + x d_k)`` for weights ``p_k > 0`` and values
    ``d_k`` of both signs: the sum falls strictly from +inf to -inf on ``(-1/max d,
    -1/min d)``, so bisection finds the unique root; 200 halvings reach double precision."""
    d_min = min(d for d, _ in f_of)
    d_max = max(d for d, _ in f_of)
    if not d_min < 0.0 < d_max:
        raise ValueError("the hypothesis is outside what the observed cells can reach")
    lo, hi = -1.0 / d_max, -1.0 / d_min

    def f(x: float) -> float:
        return sum(p * d / (1.0 + x * d) for d, p in f_of)

    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if f(mid) > 0.0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def _pdf(counts: Sequence[float]) -> tuple[float, list[float], list[float]]:
    """``(N, values a_k, frequencies p_k)`` of the regularised counts."""
    c = regularize(counts)
    n = sum(c)
    top = len(c) - 1
    return n, [k / top for k in range(len(c))], [x / n for x in c]


def mle_mean(values: Sequence[float], p: Sequence[float], s: float) -> list[float]:
    """The maximum-likelihood cell distribution with mean ``s`` given frequencies ``p``."""
    x = _root([(a - s, pk) for a, pk in zip(values, p, strict=True)])
    return [pk / (1.0 + x * (a - s)) for a, pk in zip(values, p, strict=True)]


def mle_t_value(values: Sequence[float], p: Sequence[float], t: float, ref: float = 0.5) -> list[float]:
    """The maximum-likelihood cell distribution with ``(mu - ref) / sigma = t`` given
    frequencies ``p``: Van den Bergh's fixed point (start uniform; each step solves the
    secular equation with ``phi_k = a_k - ref - t sigma (1 + ((a_k - mu)/sigma)^2) / 2``
    at the previous step's ``mu, sigma``), iterated to 1e-13."""
    q = [1.0 / len(values)] * len(values)
    for _ in range(10_000):
        mu = sum(a * qk for a, qk in zip(values, q, strict=True))
        sigma = math.sqrt(sum(qk * (a - mu) ** 2 for a, qk in zip(values, q, strict=True)))
        ph = [a - ref - 0.5 * t * sigma * (1.0 + ((a - mu) / sigma) ** 2) for a in values]
        x = _root(list(zip(ph, p, strict=True)))
        new = [pk / (1.0 + x * d) for d, pk in zip(ph, p, strict=True)]
        moved = max(abs(a - b) for a, b in zip(new, q, strict=True))
        q = new
        if moved < 1e-13:
            break
    return q


def gsprt_llr(counts: Sequence[float], s0: float, s1: float) -> float:
    """The logistic GSPRT LLR of mean score ``s1`` against ``s0`` (module docstring); 0
    before any unit."""
    if not (0.0 < s0 < 1.0 and 0.0 < s1 < 1.0):
        raise ValueError("hypothesis scores must lie strictly between 0 and 1")
    if sum(counts) <= 0:
        return 0.0
    n, a, p = _pdf(counts)
    q0, q1 = mle_mean(a, p, s0), mle_mean(a, p, s1)
    return n * sum(pk * (math.log(x1) - math.log(x0)) for pk, x0, x1 in zip(p, q0, q1, strict=True))


def normalized_llr(counts: Sequence[float], nelo0: float, nelo1: float) -> float:
    """The normalized-Elo GSPRT LLR of ``nelo1`` against ``nelo0`` (module docstring):
    per unit of ``m`` games the t-value is ``nelo / (800 / ln 10) * sqrt(m)``; 0 before
    any unit."""
    if sum(counts) <= 0:
        return 0.0
    m = (len(counts) - 1) // 2
    n, a, p = _pdf(counts)
    t0, t1 = (e / NELO_PER_T * math.sqrt(m) for e in (nelo0, nelo1))
    q0, q1 = mle_t_value(a, p, t0), mle_t_value(a, p, t1)
    return n * sum(pk * (math.log(x1) - math.log(x0)) for pk, x0, x1 in zip(p, q0, q1, strict=True))


def cluster_diff(a: Mapping[ClusterKey, tuple[float, float]], b: Mapping[ClusterKey, tuple[float, float]],
                 game_var: float = FAIR_VAR) -> tuple[float, float, int]:
    """The difference of two clustered means per game (``a``'s minus ``b``'s), its
    standard error and the number of clusters: ``(d, se, G)``.

    ``a`` and ``b`` map a cluster (a deal) to (sum of values, games). Clusters both
    played are one observation of the difference, so what the deal did to both cancels
    (the linearised per-cluster difference ``(y_a - r_a n_a)/N_a - (y_b - r_b n_b)/N_b``),
    with the CR1 factor and a virtual cluster of ``game_var`` per game as in :func:`cluster_mean`."""
    na = sum(n for _, n in a.values())
    nb = sum(n for _, n in b.values())
    if na <= 0 or nb <= 0:
        return (0.0, math.inf, 0)
    ra = sum(y for y, _ in a.values()) / na
    rb = sum(y for y, _ in b.values()) / nb
    keys = sorted(set(a) | set(b), key=repr)
    g = len(keys)
    if g < 2:
        return (ra - rb, math.inf, g)
    s = 0.0
    for k in keys:
        ya, ma = a.get(k, (0.0, 0.0))
        yb, mb = b.get(k, (0.0, 0.0))
        s += ((ya - ra * ma) / na - (yb - rb * mb) / nb) ** 2
    var = g / (g - 1.0) * (s + game_var * (1.0 / na + 1.0 / nb) / g)
    return (ra - rb, math.sqrt(var), g)


def cluster_diff_los(a: Mapping[ClusterKey, tuple[float, float]], b: Mapping[ClusterKey, tuple[float, float]]) -> float:
    """Likelihood that ``a``'s true mean is above ``b``'s (:func:`cluster_diff`, :func:`superiority`)."""
    d, se, g = cluster_diff(a, b)
    if not math.isfinite(se):
        return 0.5
    return superiority(d / se, g)
