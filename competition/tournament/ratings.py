"""Ratings: Elo with 95% error bars and likelihood of superiority, from game results.

The model (Bradley-Terry on the Elo scale, as BayesElo and Ordo use): player ``i`` scores
against ``j`` with probability ``p_ij = 1 / (1 + 10 ** ((r_j - r_i) / 400))``. Ratings
are the maximum-likelihood fit over *all* games at once, so a player's rating reflects
the strength of the opponents it met (a gauntlet's opponents are rated through the
champion they all played). Only differences are defined; the table puts the mean at 0,
or holds one participant (``anchor``) at a given rating.

- **Prior.** ``prior_draws`` virtual draws are added to every pair that met. Without it,
  a player that won every game has an infinite rating; with 1 (the default) a 3-0 record
  is read as 3.5-0.5. Set it to 0 for the pure maximum-likelihood fit.
- **Error bars, clustered by deal.** Every game of a duplicate deal holds the same
  cards: both seatings of a pairing, and every *other* pairing that played the deal, so
  the games of one deal are not independent trials (a deal that favours seat 0 helps
  whoever sat there, in every pairing). Results carry the *unit* they belong to
  (:attr:`PairResult.unit`: the deal, :func:`deal_key`, across the whole event), and the
  covariance is the cluster-robust ("sandwich") one, ``C = F^+ B F^+``: ``F`` is the
  Fisher information of the fit (prior included), ``B`` the spread of the units' score
  vectors ``g_u`` (the gradient of the log-likelihood contributed by the games of unit
  ``u``) at the fit, ``^+`` the pseudo-inverse (only differences are identified). With
  ``G`` deals, ``B = G/(G-1) (sum_u (g_u - gbar)(g_u - gbar)^T + F_games/G)``: the
  factor is the small-sample correction (CR1), the scores are centred (a prior's pull
  is the same in every deal, not a spread between them) and ``F_games/G`` is one
  virtual deal whose games are independent with the fitted probabilities (the model's
  own information of an average deal), so that deals that all came out alike do not
  claim a zero-width interval (:mod:`okgin.stats`). For two players and no prior this is the
  interval of :class:`okgin.stats.Paired` on the Elo scale: ``sd(d) = se_mu / (c mu (1 -
  mu))`` with ``c = ln 10 / 400``. Results without a unit are independent games: they
  add their expected information to ``B``, so with no units at all ``C = F^+`` (the
  classical inverse Fisher information). A rating's 95% interval is ``± q`` standard
  errors, relative to the mean (or to the anchor, which then has none), with ``q`` 1.96
  from 30 deals and Student's t quantile (``G - 1`` degrees of freedom) below; one deal
  gives no interval (infinite).
- **Likelihood of superiority** (LOS) of ``i`` over ``j``: ``P(T < (r_i - r_j) / sd)``
  where ``sd`` is the standard error of the *difference* from the same covariance, so it
  is defined between any two rated players, even ones that never met (``T`` normal, or
  Student's t below 30 deals).
- **Three-player games** (Gin in the Box) are not Bradley-Terry pairs: they are rated
  by comparing the seatings of each deal with each other, :class:`BoxDuplicate`.
- A game nobody won (abandoned) counts as a draw between all its seats.

Two players, A won 3 of 4, no prior (checked in tests/tournament/test_ratings.py by
hand): ``r_A - r_B = 400 log10(3) = 190.8``; standard error of the difference
``400 / (ln 10 * sqrt(4 * 0.75 * 0.25)) = 200.6``; LOS ``Phi(190.8 / 200.6) = 0.829``.

>>> t = rate(["a", "b"], [PairResult("a", "b", 3.0, 4.0)], prior_draws=0)
>>> round(t.rating["a"] - t.rating["b"], 1), round(t.los("a", "b"), 3)
(190.8, 0.829)

The same 3 of 4 as two duplicate deals, one won twice and one split: the pair scores
per game are 1 and 1/2 around the mean 3/4 (squares summing to 1/8), and the virtual
deal (two independent games at 3/4) adds 3/32, so ``se_mu^2 = (1/8 + 3/32) / (2 * 1)``
and ``sd = sqrt(7/64) / (c * 3/4 * 1/4) = 306.4``: two deals say little, and the 95%
quantile is then t(1) = 12.7.

>>> u = [PairResult("a", "b", 1.0, 1.0, unit=0), PairResult("a", "b", 1.0, 1.0, unit=0),
...      PairResult("a", "b", 1.0, 1.0, unit=1), PairResult("a", "b", 0.0, 1.0, unit=1)]
>>> round(rate(["a", "b"], u, prior_draws=0).diff_se("a", "b"), 1)
306.4
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field

from okgin.stats import (
    FAIR_VAR,
    LN10_400,
    SMALL_SAMPLE,
    Z95,
    cluster_diff_los,
    cluster_mean,
    critical,
    expected,
    phi,
    superiority,
)

__all__ = ["LN10_400", "SMALL_SAMPLE", "Z95", "BoxDuplicate", "BoxEntry", "LiveRatings", "PairResult", "RatingError",
           "RatingTable", "deal_key", "elo_of_score", "expected", "finish_ranks", "finish_scores", "game_pairs", "phi",
           "rate"]


class RatingError(ValueError):
    """The results do not determine finite ratings (e.g. a 100% score and no prior)."""


@dataclass(frozen=True)
class PairResult:
    """``a`` scored ``score`` (wins + draws/2) out of ``games`` against ``b``.

    ``unit``: any hashable naming the group of correlated games this belongs to (the
    deal, :func:`deal_key`, whatever the pairing); ``None`` for independent games. It only
    changes the error bars (the module docstring), never the ratings.
    """

    a: str
    b: str
    score: float
    games: float
    unit: Hashable | None = None


def elo_of_score(score: float) -> float:
    """The Elo difference whose expected score is ``score`` (0 < score < 1)."""
    if not 0.0 < score < 1.0:
        raise ValueError(f"a score of {score} has no finite Elo difference")
    return -400.0 * math.log10(1.0 / score - 1.0)


def finish_ranks(seats: Sequence[str], scores: Sequence[int], winner: str | None, culprit: str | None = None) -> list[int]:
    """Each seat's place in a game, 1 the best: the winner first, a seat that forfeited
    (``culprit``) last, the others by final score; equal places for equal scores. A game
    nobody won and nobody lost by fault puts every seat first (a draw).

    >>> finish_ranks(["a", "b", "c"], [20, 104, 20], "b")
    [2, 1, 2]
    >>> finish_ranks(["a", "b", "c"], [90, 30, 10], "b", culprit="a")
    [3, 1, 2]
    """
    if winner is None and culprit is None:
        return [1] * len(seats)

    def key(s: int) -> tuple[int, int]:
        name = seats[s]
        if winner is not None and name == winner:
            return (0, 0)
        if culprit is not None and name == culprit:
            return (2, 0)
        return (1, -scores[s])

    keys = [key(s) for s in range(len(seats))]
    # Standard competition ranking: 1 + the number of seats strictly ahead.
    return [1 + sum(1 for k in keys if k < mine) for mine in keys]


def finish_scores(seats: Sequence[str], scores: Sequence[int], winner: str | None, culprit: str | None = None) -> list[float]:
    """Each seat's share of the opponents it finished ahead of (ties count half): the
    table's descriptive "score" for a game of any size (1 a win, 0 a loss with two seats)."""
    ranks = finish_ranks(seats, scores, winner, culprit)
    n = len(seats)
    if n < 2:
        return [0.5] * n
    return [sum(1.0 if ranks[i] < ranks[j] else 0.5 if ranks[i] == ranks[j] else 0.0 for j in range(n) if j != i) / (n - 1)
            for i in range(n)]


def game_pairs(seats: Sequence[str], scores: Sequence[int], winner: str | None, culprit: str | None = None,
               unit: Hashable | None = None) -> list[PairResult]:
    """The Bradley-Terry result a two-player game stands for (1, 0, or 1/2 if nobody won).

    Games of three are rated from their finishing order by :class:`BoxDuplicate` instead:
    splitting them into pairs would read one finishing order as correlated pairwise games.

    >>> game_pairs(["a", "b"], [100, 40], "a", unit=("ab", 3))
    [PairResult(a='a', b='b', score=1.0, games=1.0, unit=('ab', 3))]
    """
    if len(seats) != 2:
        raise ValueError(f"game_pairs rates two-player games; a game of {len(seats)} is rated with BoxDuplicate")
    score = 0.5 if winner is None else 1.0 if winner == seats[0] else 0.0
    return [PairResult(seats[0], seats[1], score, 1.0, unit)]


@dataclass
class RatingTable:
    """Fitted ratings: ``rating[name]``, ``se[name]`` (standard error), ``cov``."""

    names: list[str]
    rating: dict[str, float]
    se: dict[str, float]
    cov: dict[tuple[str, str], float]
    games: dict[str, float]
    groups: list[list[str]] = field(default_factory=list)  # connected groups of players that met
    clusters: int = 0  # deals the error bars are clustered by (0: independent games, the normal quantile)

    def error95(self, name: str) -> float:
        """Half the 95% interval: Student's t quantile below 30 deals (:func:`okgin.stats.critical`)."""
        q = critical(self.clusters) if self.clusters else Z95
        se = self.se[name]
        return math.inf if not math.isfinite(q * se) else q * se

    def diff_se(self, a: str, b: str) -> float:
        if self.group_of(a) != self.group_of(b):
            return math.inf
        v = self.cov[(a, a)] + self.cov[(b, b)] - 2.0 * self.cov[(a, b)]
        return math.sqrt(max(v, 0.0)) if math.isfinite(v) else math.inf

    def group_of(self, name: str) -> int:
        for i, g in enumerate(self.groups):
            if name in g:
                return i
        return -1

    def los(self, a: str, b: str) -> float:
        """Likelihood that ``a`` is stronger than ``b`` (0.5 if nothing links them)."""
        sd = self.diff_se(a, b)
        d = self.rating[a] - self.rating[b]
        if not math.isfinite(sd):
            return 0.5
        if sd == 0.0:
            return 1.0 if d > 0 else 0.0 if d < 0 else 0.5
        return superiority(d / sd, self.clusters) if self.clusters else phi(d / sd)

    @property
    def comparable(self) -> bool:
        """True if every rated player is linked to every other by games."""
        return len(self.groups) <= 1


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """Gaussian elimination with partial pivoting (the systems are tiny: one row per player)."""
    n = len(b)
    m = [[*row, b[i]] for i, row in enumerate(a)]
    for col in range(n):
        piv = max(range(col, n), key=lambda r: abs(m[r][col]))
        if abs(m[piv][col]) < 1e-300:
            raise RatingError("singular system while fitting ratings")
        m[col], m[piv] = m[piv], m[col]
        for r in range(n):
            if r != col and m[r][col] != 0.0:
                f = m[r][col] / m[col][col]
                for c in range(col, n + 1):
                    m[r][c] -= f * m[col][c]
    return [m[i][n] / m[i][i] for i in range(n)]


def _inverse(a: list[list[float]]) -> list[list[float]]:
    n = len(a)
    cols = [_solve(a, [1.0 if i == j else 0.0 for i in range(n)]) for j in range(n)]
    return [[cols[j][i] for j in range(n)] for i in range(n)]


def _groups(names: list[str], n: dict[tuple[int, int], float]) -> list[list[int]]:
    parent = list(range(len(names)))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for (i, j), g in n.items():
        if g > 0:
            parent[find(i)] = find(j)
    out: dict[int, list[int]] = {}
    for i in range(len(names)):
        out.setdefault(find(i), []).append(i)
    return list(out.values())


def _check_finite(members: list[int], s: dict[tuple[int, int], float], n: dict[tuple[int, int], float], names: list[str]) -> None:
    """The fit is finite iff every group of players scored something against the rest
    and conceded something to it (the "beats" graph is strongly connected)."""
    inside = set(members)
    # Directed edge i -> j when i took points from j (a win or a draw).
    edges: dict[int, set[int]] = {i: set() for i in members}
    for (i, j), g in n.items():
        if i in inside and g > 0:
            if s[(i, j)] > 1e-12:
                edges[i].add(j)
            if g - s[(i, j)] > 1e-12:
                edges[j].add(i)

    def reach(start: int, fwd: bool) -> set[int]:
        seen = {start}
        stack = [start]
        while stack:
            x = stack.pop()
            nxt = edges[x] if fwd else {y for y in members if x in edges[y]}
            for y in nxt:
                if y not in seen:
                    seen.add(y)
                    stack.append(y)
        return seen

    if len(members) > 1 and (reach(members[0], True) != inside or reach(members[0], False) != inside):
        best = [names[i] for i in members if all(s[(i, j)] >= n[(i, j)] - 1e-12 for (a, j) in n if a == i) and
                all(s[(j, i)] <= 1e-12 for (j, a) in n if a == i)]
        who = f" ({', '.join(best)} lost no point)" if best else ""
        raise RatingError(
            f"the results do not give finite ratings{who}: some players won or lost every game against the rest; "
            "use ratings.prior_draws > 0"
        )


def _unit_spread(x: list[float], pos: dict[int, int], units: dict[Hashable, dict[tuple[int, int], list[float]]],
                 loose: dict[tuple[int, int], float]) -> list[list[float]] | None:
    """``B`` of the sandwich: the sum over units (deals) of the outer product of the
    unit's score vector (its games' log-likelihood gradient at the fit ``x``, centred on
    the units' mean), plus one virtual unit whose games are independent with the fitted
    probabilities (the model's expected information of an average deal), times
    ``G/(G-1)`` (:mod:`okgin.stats`: the small-sample correction, and no zero-width
    interval when every deal came out alike); plus
    the expected information of the games that belong to no unit (independent games, as
    in ``F``). None if fewer than two units tie this group together (no spread to
    estimate: the error bars are infinite)."""
    k = len(x)
    b = [[0.0] * k for _ in range(k)]
    fair = [[0.0] * k for _ in range(k)]
    scores: list[dict[int, float]] = []
    for per_pair in units.values():
        g: dict[int, float] = {}
        for (i, j), (sc, gm) in per_pair.items():
            if i not in pos or j not in pos:
                continue
            a, bb = pos[i], pos[j]
            gr = LN10_400 * (sc - gm * expected(x[a] - x[bb]))
            g[a] = g.get(a, 0.0) + gr
            g[bb] = g.get(bb, 0.0) - gr
            pf = expected(x[a] - x[bb])
            w = LN10_400 * LN10_400 * gm * pf * (1.0 - pf)
            fair[a][a] += w
            fair[bb][bb] += w
            fair[a][bb] -= w
            fair[bb][a] -= w
        if g:
            scores.append(g)
    g_units = len(scores)
    if g_units == 1:
        return None
    # Centred on the units' mean score: with a prior the data's gradient does not sum to
    # 0 at the fit (the prior pulls it), and that pull is the same in every deal, not a
    # spread between deals (uncentred, a bot that lost all its 120 games got an interval
    # 1.7 times as wide). Without a prior the mean is 0 and nothing changes.
    mean = [0.0] * k
    for g in scores:
        for a, ga in g.items():
            mean[a] += ga / max(g_units, 1)
    for g in scores:
        d = [g.get(a, 0.0) - mean[a] for a in range(k)]
        for a in range(k):
            if d[a] != 0.0:
                for bb in range(k):
                    b[a][bb] += d[a] * d[bb]
    if g_units >= 2:
        f = g_units / (g_units - 1.0)
        b = [[f * (b[a][bb] + fair[a][bb] / g_units) for bb in range(k)] for a in range(k)]
    for (i, j), gm in loose.items():
        if i not in pos or j not in pos:
            continue
        a, bb = pos[i], pos[j]
        p = expected(x[a] - x[bb])
        w = LN10_400 * LN10_400 * gm * p * (1.0 - p)
        b[a][a] += w
        b[bb][bb] += w
        b[a][bb] -= w
        b[bb][a] -= w
    return b


def _sandwich(c: list[list[float]], b: list[list[float]]) -> list[list[float]]:
    """``C B C`` (``C`` the pseudo-inverse of the Fisher information)."""
    k = len(c)
    cb = [[sum(c[a][m] * b[m][bb] for m in range(k)) for bb in range(k)] for a in range(k)]
    return [[sum(cb[a][m] * c[m][bb] for m in range(k)) for bb in range(k)] for a in range(k)]


def rate(
    names: Sequence[str],
    results: Iterable[PairResult],
    prior_draws: float = 1.0,
    anchor: str | None = None,
    anchor_rating: float = 0.0,
    tol: float = 1e-10,
) -> RatingTable:
    """Fit ratings (see the module docstring). Players without games get rating 0, se inf."""
    names = list(names)
    idx = {nm: i for i, nm in enumerate(names)}
    # s[(i, j)]: i's score against j; n[(i, j)]: games between them (i < j stored both ways).
    s: dict[tuple[int, int], float] = {}
    n: dict[tuple[int, int], float] = {}
    # For the sandwich: each unit's results by (i, j), i < j, as [score of i, games]; and
    # the games between i < j that belong to no unit.
    units: dict[Hashable, dict[tuple[int, int], list[float]]] = {}
    loose: dict[tuple[int, int], float] = {}
    for pr in results:
        if pr.a not in idx or pr.b not in idx:
            raise RatingError(f"result between unknown players {pr.a!r} and {pr.b!r}")
        i, j = idx[pr.a], idx[pr.b]
        if i == j:
            raise RatingError(f"{pr.a!r} cannot play itself")
        lo_hi, sc = ((i, j), pr.score) if i < j else ((j, i), pr.games - pr.score)
        if pr.unit is None:
            loose[lo_hi] = loose.get(lo_hi, 0.0) + pr.games
        else:
            acc = units.setdefault(pr.unit, {}).setdefault(lo_hi, [0.0, 0.0])
            acc[0] += sc
            acc[1] += pr.games
        s[(i, j)] = s.get((i, j), 0.0) + pr.score
        s[(j, i)] = s.get((j, i), 0.0) + (pr.games - pr.score)
        n[(i, j)] = n.get((i, j), 0.0) + pr.games
        n[(j, i)] = n.get((j, i), 0.0) + pr.games
    if prior_draws > 0:
        for key in list(n):
            s[key] += prior_draws / 2.0
            n[key] += prior_draws
    games = {nm: sum(g for (i, _), g in n.items() if i == idx[nm]) - (prior_draws * sum(1 for (i, _) in n if i == idx[nm]))
             for nm in names}

    r = [0.0] * len(names)
    cov: dict[tuple[str, str], float] = {(a, b): (math.inf if a == b else 0.0) for a in names for b in names}
    groups = _groups(names, n)
    rated_groups: list[list[str]] = []
    for members in groups:
        if len(members) == 1:
            continue  # no games: nothing to fit
        _check_finite(members, s, n, names)
        pos = {p: k for k, p in enumerate(members)}
        k = len(members)
        x = [0.0] * k

        def fisher_and_grad(x: list[float], members: list[int] = members, pos: dict[int, int] = pos, k: int = k
                            ) -> tuple[list[list[float]], list[float], float]:
            f = [[0.0] * k for _ in range(k)]
            g = [0.0] * k
            ll = 0.0
            for (i, j), gm in n.items():
                if i not in pos or j not in pos or i > j:
                    continue
                a, b = pos[i], pos[j]
                p = expected(x[a] - x[b])
                sij = s[(i, j)]
                ll += sij * math.log(max(p, 1e-300)) + (gm - sij) * math.log(max(1.0 - p, 1e-300))
                gr = LN10_400 * (sij - gm * p)
                g[a] += gr
                g[b] -= gr
                w = LN10_400 * LN10_400 * gm * p * (1.0 - p)
                f[a][a] += w
                f[b][b] += w
                f[a][b] -= w
                f[b][a] -= w
            return f, g, ll

        # Damped Newton on the centred problem: (F + J/k) is invertible on a connected group.
        f, g, ll = fisher_and_grad(x)
        for _ in range(200):
            fj = [[f[a][b] + 1.0 / k for b in range(k)] for a in range(k)]
            step = _solve(fj, g)
            t = 1.0
            while True:
                cand = [x[a] + t * step[a] for a in range(k)]
                mean = sum(cand) / k
                cand = [c - mean for c in cand]
                f2, g2, ll2 = fisher_and_grad(cand)
                if ll2 >= ll - 1e-12 or t < 1e-6:
                    break
                t /= 2.0
            moved = max(abs(cand[a] - x[a]) for a in range(k))
            x, f, g, ll = cand, f2, g2, ll2
            if moved < tol:
                break
        inv = _inverse([[f[a][b] + 1.0 / k for b in range(k)] for a in range(k)])
        c = [[inv[a][b] - 1.0 / k for b in range(k)] for a in range(k)]
        if units:
            spread = _unit_spread(x, pos, units, loose)
            c = [[math.inf] * k for _ in range(k)] if spread is None else _sandwich(c, spread)
        for a, i in enumerate(members):
            r[i] = x[a]
            for b, j in enumerate(members):
                cov[(names[i], names[j])] = c[a][b]
        rated_groups.append([names[i] for i in members])

    rating = {nm: r[i] for i, nm in enumerate(names)}
    if anchor is not None:
        if anchor not in idx:
            raise RatingError(f"anchor {anchor!r} is not a player")
        shift = anchor_rating - rating[anchor]
        grp = next((g for g in rated_groups if anchor in g), [anchor])
        for nm in grp:
            rating[nm] += shift
        # Relative to the anchor: Var(r_i - r_anchor); the anchor itself is exact.
        new_cov = dict(cov)
        for p in grp:
            for q in grp:
                new_cov[(p, q)] = cov[(p, q)] - cov[(p, anchor)] - cov[(anchor, q)] + cov[(anchor, anchor)]
        cov = new_cov
    se = {nm: math.sqrt(max(cov[(nm, nm)], 0.0)) if math.isfinite(cov[(nm, nm)]) else math.inf for nm in names}
    return RatingTable(names, rating, se, cov, games, rated_groups, len(units))


def deal_key(deal: int, seed: str = "") -> str:
    """The identity of a deal: its seed when the game carries one, else its index.

    Why the seed: games dealt from one seed hold the same cards, whatever their pairing
    or deal index, and games with different seeds do not; an event whose pairings with a
    remote participant get deals of their own (one seed per game) then simply shows
    clusters of one game. Results without seeds (tests, old files) fall back to the
    schedule's deal index, which every pairing shares."""
    return f"seed:{seed}" if seed else f"deal:{deal}"


@dataclass(frozen=True)
class BoxEntry:
    """One Gin in the Box participant: its finishes against the deals' par (see
    :class:`BoxDuplicate`), with the 95% interval clustered by deal."""

    par: float
    low95: float
    high95: float
    games: int
    deals: int


class BoxDuplicate:
    """Gin in the Box ratings that compare the seatings of one deal with each other.

    Why: in a three-player game the cards decide a lot, and a sequential rating of raw
    finishing orders (OpenSkill, used before) reads a deal that favours seat 0 as skill
    of whoever sat there first: a 48-game event over 2 deals ranked the strongest bot
    last. With duplicate deals every seat of a deal holds the same cards in every
    seating, so the fair question is how a participant did *with those cards* compared
    with the others who held them.

    Method, for each game: a seat's *finish* is its share of the opponents it finished
    ahead of (:func:`finish_scores`: 1 a win, 0 last, ties half). The seat's *par* is the
    mean finish of the same seat in the deal's other games (the other seatings and the
    other triples that played the deal); a seat no other game of the deal had (a deal
    played once: ``duplicate = false``, remote pairings, a run in progress) takes the
    event's mean finish at that seat instead. A participant's figure is its mean
    ``finish - par`` per game: positive means it did better with the same cards than
    the others did. Its 95% interval is clustered by deal (:func:`okgin.stats.
    cluster_mean`: every game of a deal is one observation, Student's t below 30 deals,
    a virtual deal of a fair coin's spread, 1/4 per game, so that it is never zero-width), and the LOS of
    one participant over another uses the per-deal difference of the two, so the
    deals they shared count once. The figures are a function of the set of games (their
    order does not matter), so a resumed run gives the same table.

    >>> b = BoxDuplicate(["a", "b", "c"])
    >>> for s in (("a", "b", "c"), ("b", "c", "a"), ("c", "a", "b")):
    ...     b.add(0, "", s, [90, 10, 5], s[0])  # seat 0 always wins: the cards, not a player
    >>> [round(b.table()[n].par, 6) for n in "abc"]
    [0.0, 0.0, 0.0]
    """

    def __init__(self, names: Sequence[str]) -> None:
        self.names = list(names)
        # deal key -> the deal's games, each as ((seat, participant, finish), ...)
        self._deals: dict[str, list[tuple[tuple[int, str, float], ...]]] = {}
        self.games = {n: 0 for n in names}

    def add(self, deal: int, seed: str, seats: Sequence[str], scores: Sequence[int], winner: str | None,
            culprit: str | None = None) -> None:
        shares = finish_scores(seats, scores, winner, culprit)
        self._deals.setdefault(deal_key(deal, seed), []).append(
            tuple((s, who, shares[s]) for s, who in enumerate(seats)))
        for who in seats:
            self.games[who] += 1

    @property
    def deals(self) -> int:
        return len(self._deals)

    def residuals(self) -> dict[str, dict[str, tuple[float, float]]]:
        """Per participant, per deal: (sum of ``finish - par``, games)."""
        seat_tot: dict[int, list[float]] = {}
        for games in self._deals.values():
            for g in games:
                for s, _, f in g:
                    acc = seat_tot.setdefault(s, [0.0, 0.0])
                    acc[0] += f
                    acc[1] += 1.0
        seat_mean = {s: t / n for s, (t, n) in seat_tot.items()}
        out: dict[str, dict[str, tuple[float, float]]] = {n: {} for n in self.names}
        for key in sorted(self._deals):
            games = self._deals[key]
            at: dict[int, list[float]] = {}
            for g in games:
                for s, _, f in g:
                    acc = at.setdefault(s, [0.0, 0.0])
                    acc[0] += f
                    acc[1] += 1.0
            for g in games:
                for s, who, f in g:
                    tot, n = at[s]
                    par = (tot - f) / (n - 1.0) if n > 1 else seat_mean[s]
                    y, m = out[who].get(key, (0.0, 0.0))
                    out[who][key] = (y + f - par, m + 1.0)
        return out

    def table(self) -> dict[str, BoxEntry]:
        """Each participant that played: its mean finish above par and 95% interval."""
        res = self.residuals()
        out = {}
        for n in self.names:
            if not res[n]:
                continue
            cm = cluster_mean(list(res[n].values()), FAIR_VAR)  # residuals around 0: a fair coin's spread
            lo, hi = cm.interval(-1.0, 1.0)
            out[n] = BoxEntry(cm.mean, lo, hi, self.games[n], cm.clusters)
        return out

    def los(self, a: str, b: str, residuals: dict[str, dict[str, tuple[float, float]]] | None = None) -> float:
        """Likelihood that ``a`` does better than ``b`` with the same cards: the difference
        of their figures over its clustered standard error (deals they share count once)."""
        res = self.residuals() if residuals is None else residuals
        return cluster_diff_los(res[a], res[b])


class LiveRatings:
    """The running ratings the live progress shows, updated game by game.

    Two-player games: the Bradley-Terry fit (:func:`rate`) on head-to-head totals, kept
    aggregated so that a redraw costs one small fit, not a pass over every game (the
    progress shows no error bars, so the deal units are not needed). Gin in the Box: the
    mean finish above the deal's par (:class:`BoxDuplicate`, in percent), as the report
    ranks. ``label`` names the figure for a column header.
    """

    def __init__(self, names: Sequence[str], prior_draws: float = 1.0) -> None:
        self.names = list(names)
        self.prior = prior_draws
        self._h2h: dict[tuple[str, str], list[float]] = {}
        self._box: BoxDuplicate | None = None
        self.label = "Elo"

    def add(self, seats: Sequence[str], scores: Sequence[int], winner: str | None, culprit: str | None = None,
            deal: int = 0, seed: str = "") -> None:
        if len(seats) != 2:
            if self._box is None:
                self._box = BoxDuplicate(self.names)
                self.label = "par%"
            self._box.add(deal, seed, seats, scores, winner, culprit)
            return
        (pr,) = game_pairs(seats, scores, winner, culprit)
        acc = self._h2h.setdefault((pr.a, pr.b), [0.0, 0.0])
        acc[0] += pr.score
        acc[1] += pr.games

    def current(self) -> dict[str, float] | None:
        """Each player's current figure (higher is better), or None if there is none yet."""
        if self._box is not None:
            table = self._box.table()
            return {n: 100.0 * table[n].par if n in table else 0.0 for n in self.names}
        if not self._h2h:
            return None
        try:
            t = rate(self.names, [PairResult(a, b, v[0], v[1]) for (a, b), v in self._h2h.items()], prior_draws=self.prior)
        except RatingError:
            return None
        return t.rating
