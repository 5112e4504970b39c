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
- **Error bars.** The covariance of the fitted ratings is the pseudo-inverse of the
  Fisher information at the fit (the normal approximation; the pseudo-inverse because
  only differences are identified). A rating's 95% interval is ``± 1.96`` standard
  errors, relative to the mean (or to the anchor, which then has none).
- **Likelihood of superiority** (LOS) of ``i`` over ``j``: ``Phi((r_i - r_j) / sd)``
  where ``sd`` is the standard error of the *difference* from the same covariance, so it
  is defined between any two rated players, even ones that never met.
- **Three-player games** (Gin in the Box): each game is read as its three pairwise
  results, from the final order of the seats: the winner first, a seat that forfeited
  last, the others by final score (equal scores are a draw). Each pairwise result has
  weight 1/2, so every player's game counts as one game's worth of evidence, as in a
  two-player game, instead of two correlated ones.
- A game nobody won (abandoned) counts as a draw between all its seats.

Two players, A won 3 of 4, no prior (checked in tests/tournament/test_ratings.py by
hand): ``r_A - r_B = 400 log10(3) = 190.8``; standard error of the difference
``400 / (ln 10 * sqrt(4 * 0.75 * 0.25)) = 200.6``; LOS ``Phi(190.8 / 200.6) = 0.829``.

>>> t = rate(["a", "b"], [PairResult("a", "b", 3.0, 4.0)], prior_draws=0)
>>> round(t.rating["a"] - t.rating["b"], 1), round(t.los("a", "b"), 3)
(190.8, 0.829)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

LN10_400 = math.log(10) / 400.0
Z95 = 1.959963984540054


class RatingError(ValueError):
    """The results do not determine finite ratings (e.g. a 100% score and no prior)."""


@dataclass(frozen=True)
class PairResult:
    """``a`` scored ``score`` (wins + draws/2, weighted) out of ``games`` against ``b``."""

    a: str
    b: str
    score: float
    games: float


def expected(diff: float) -> float:
    """Expected score of a player rated ``diff`` Elo above its opponent."""
    return 1.0 / (1.0 + 10.0 ** (-diff / 400.0))


def elo_of_score(score: float) -> float:
    """The Elo difference whose expected score is ``score`` (0 < score < 1)."""
    if not 0.0 < score < 1.0:
        raise ValueError(f"a score of {score} has no finite Elo difference")
    return -400.0 * math.log10(1.0 / score - 1.0)


def phi(x: float) -> float:
    """The standard normal cumulative distribution."""
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def game_pairs(seats: Sequence[str], scores: Sequence[int], winner: str | None, culprit: str | None = None) -> list[PairResult]:
    """The pairwise results one game stands for (see the module docstring).

    >>> game_pairs(["a", "b"], [100, 40], "a")
    [PairResult(a='a', b='b', score=1.0, games=1.0)]
    >>> [(p.a, p.b, p.score, p.games) for p in game_pairs(["a", "b", "c"], [20, 104, 20], "b")]
    [('a', 'b', 0.0, 0.5), ('a', 'c', 0.25, 0.5), ('b', 'c', 0.5, 0.5)]
    """
    n = len(seats)
    if n < 2:
        return []
    weight = 1.0 / (n - 1)

    def rank_key(s: int) -> tuple[int, int, int]:
        name = seats[s]
        if winner is not None and name == winner:
            return (0, 0, 0)
        if culprit is not None and name == culprit:
            return (2, 0, 0)
        return (1, -scores[s], 0)

    out = []
    for i in range(n):
        for j in range(i + 1, n):
            if winner is None and culprit is None:
                si = 0.5
            else:
                ki, kj = rank_key(i), rank_key(j)
                si = 1.0 if ki < kj else 0.0 if ki > kj else 0.5
            out.append(PairResult(seats[i], seats[j], si * weight, weight))
    return out


@dataclass
class RatingTable:
    """Fitted ratings: ``rating[name]``, ``se[name]`` (standard error), ``cov``."""

    names: list[str]
    rating: dict[str, float]
    se: dict[str, float]
    cov: dict[tuple[str, str], float]
    games: dict[str, float]
    groups: list[list[str]] = field(default_factory=list)  # connected groups of players that met

    def error95(self, name: str) -> float:
        return Z95 * self.se[name]

    def diff_se(self, a: str, b: str) -> float:
        if self.group_of(a) != self.group_of(b):
            return math.inf
        v = self.cov[(a, a)] + self.cov[(b, b)] - 2.0 * self.cov[(a, b)]
        return math.sqrt(max(v, 0.0))

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
        return phi(d / sd)

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
    for pr in results:
        if pr.a not in idx or pr.b not in idx:
            raise RatingError(f"result between unknown players {pr.a!r} and {pr.b!r}")
        i, j = idx[pr.a], idx[pr.b]
        if i == j:
            raise RatingError(f"{pr.a!r} cannot play itself")
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
        for a in grp:
            for b in grp:
                new_cov[(a, b)] = cov[(a, b)] - cov[(a, anchor)] - cov[(anchor, b)] + cov[(anchor, anchor)]
        cov = new_cov
    se = {nm: math.sqrt(max(cov[(nm, nm)], 0.0)) if math.isfinite(cov[(nm, nm)]) else math.inf for nm in names}
    return RatingTable(names, rating, se, cov, games, rated_groups)
