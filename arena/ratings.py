"""Arena ratings: Glicko-2 for Oklahoma Gin (two players), OpenSkill for Gin in the Box (three).

Pure functions of (ratings before, a game's result) -> ratings after; the store
(:mod:`arena.store`) applies them to each finished rated game in one transaction, keeps the
history, and replays them in finish order to rebuild (``okgin arena ratings --rebuild``): the
same games in the same order give bit-identical numbers, since nothing here reads a clock or
draws a random number.

**Oklahoma Gin: Glicko-2** (Glickman, "Example of the Glicko-2 system", 2013), as lichess
rates its games: every game is a rating period of its own, and each player is updated
against the other's rating *before* the game. Start 1500, deviation 350, volatility 0.06,
system constant tau 0.5 (the paper's values; :func:`glicko2` reproduces its worked example,
1500/200/0.06 against 1400/30 won, 1550/100 lost, 1700/300 lost -> 1464.06/151.52/0.05999,
whose 1464.06 is mu' rounded to four places before converting back; unrounded it is 1464.05).
Unlike lichess we do not grow an idle player's deviation with the time since its last game:
a rating is then a function of the games alone (``--rebuild`` needs no clock), at the price of
a returning player's rating moving more slowly than lichess's would.

**Gin in the Box: OpenSkill** (Weng-Lin, Plackett-Luce model, the ``openskill`` package), which
rates a finishing order of any number of players. Its parameters are the package's defaults
scaled by 42 so that its mu and sigma read like Glicko numbers (mu 25 -> 1500 is only a
shift; sigma 25/3 -> 350, beta 25/6 -> 175, tau 25/300 -> 3.5), and one provisional rule
serves both. The places of a game are :func:`competition.tournament.ratings.finish_ranks`'s
(the winner first, a seat at fault last, the others by score), the same that tournaments use.
(Tournaments rate the Box by comparing the seatings of duplicate deals instead; the arena's
deals are all different, so a sequential rating is the fair one here.)

**Provisional** while the deviation is above :data:`PROVISIONAL_DEVIATION` = 110 (lichess's
threshold): about 10 games against settled opponents in Glicko-2.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from competition.tournament.ratings import finish_ranks

if TYPE_CHECKING:
    from openskill.models import PlackettLuce

__all__ = ["BOX_BETA", "BOX_SIGMA", "BOX_TAU", "DEVIATION", "MODELS", "PROVISIONAL_DEVIATION", "SCALE", "START", "TAU",
           "VARIANTS", "VOLATILITY", "Glicko", "Rating", "after_game", "game_ranks", "glicko2", "initial", "openskill_model",
           "rate_box"]

START = 1500.0
DEVIATION = 350.0
VOLATILITY = 0.06
TAU = 0.5
SCALE = 173.7178  #: Glicko-2's factor between the Glicko scale and its own (400 / ln 10)
EPSILON = 0.000001  #: the convergence tolerance of the volatility iteration (the paper's)
PROVISIONAL_DEVIATION = 110.0
BOX_SIGMA, BOX_BETA, BOX_TAU = 350.0, 175.0, 3.5
MODELS = {"oklahoma": "glicko2", "box": "openskill"}
VARIANTS = tuple(MODELS)


@dataclass(frozen=True)
class Glicko:
    """One player's Glicko-2 state on the Glicko scale."""

    rating: float = START
    deviation: float = DEVIATION
    volatility: float = VOLATILITY


@dataclass(frozen=True)
class Rating:
    """An account's rating in one variant. ``rating`` and ``deviation`` are on the Glicko
    scale for both models (OpenSkill's mu and sigma, scaled); ``volatility`` is Glicko-2's
    (None for the Box). ``games``: rated games counted."""

    variant: str
    rating: float = START
    deviation: float = DEVIATION
    games: int = 0
    volatility: float | None = VOLATILITY

    @property
    def provisional(self) -> bool:
        return self.deviation > PROVISIONAL_DEVIATION

    @property
    def model(self) -> str:
        return MODELS[self.variant]

    @property
    def mu(self) -> float:
        """OpenSkill's mu (the Box; on the scale above), the same number as ``rating``."""
        return self.rating

    @property
    def sigma(self) -> float:
        """OpenSkill's sigma (the Box), the same number as ``deviation``."""
        return self.deviation


def initial(variant: str) -> Rating:
    """The rating of an account with no rated game in ``variant``."""
    if variant not in MODELS:
        raise ValueError(f"unknown variant {variant!r}; the arena rates {', '.join(VARIANTS)}")
    if MODELS[variant] == "glicko2":
        return Rating(variant, START, DEVIATION, 0, VOLATILITY)
    return Rating(variant, START, BOX_SIGMA, 0, None)


def _g(phi: float) -> float:
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / (math.pi * math.pi))


def glicko2(player: Glicko, results: Sequence[tuple[Glicko, float]], tau: float = TAU) -> Glicko:
    """One Glicko-2 rating period: ``player`` after ``results`` (opponent before, score 1/0.5/0),
    step by step as in Glickman's paper (the volatility by the Illinois algorithm).

    >>> p = glicko2(Glicko(1500, 200, 0.06), [(Glicko(1400, 30), 1), (Glicko(1550, 100), 0), (Glicko(1700, 300), 0)])
    >>> round((p.rating - START) / SCALE, 4), round(p.deviation / SCALE, 4), round(p.volatility, 5)
    (-0.2069, 0.8722, 0.06)
    >>> round(p.rating, 2), round(p.deviation, 2)
    (1464.05, 151.52)

    The paper prints 1464.06 and 0.05999: it converts back from mu' rounded to -0.2069
    (-0.2069 * 173.7178 + 1500 = 1464.06); unrounded, mu' is -0.20694 and sigma' 0.0599960.
    """
    mu = (player.rating - START) / SCALE
    phi = player.deviation / SCALE
    sigma = player.volatility
    if not results:  # no game in the period: only the deviation grows (step 6)
        return Glicko(player.rating, math.sqrt(phi * phi + sigma * sigma) * SCALE, sigma)
    v_inv = 0.0
    gain = 0.0
    for opp, score in results:
        mu_j = (opp.rating - START) / SCALE
        g = _g(opp.deviation / SCALE)
        e = 1.0 / (1.0 + math.exp(-g * (mu - mu_j)))
        v_inv += g * g * e * (1.0 - e)
        gain += g * (score - e)
    v = 1.0 / v_inv
    delta = v * gain
    a = math.log(sigma * sigma)

    def f(x: float) -> float:
        ex = math.exp(x)
        return ex * (delta * delta - phi * phi - v - ex) / (2.0 * (phi * phi + v + ex) ** 2) - (x - a) / (tau * tau)

    big_a = a
    if delta * delta > phi * phi + v:
        big_b = math.log(delta * delta - phi * phi - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        big_b = a - k * tau
    f_a, f_b = f(big_a), f(big_b)
    while abs(big_b - big_a) > EPSILON:
        c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(c)
        if f_c * f_b <= 0:
            big_a, f_a = big_b, f_b
        else:
            f_a /= 2.0
        big_b, f_b = c, f_c
    new_sigma = math.exp(big_a / 2.0)
    phi_star = math.sqrt(phi * phi + new_sigma * new_sigma)
    new_phi = 1.0 / math.sqrt(1.0 / (phi_star * phi_star) + 1.0 / v)
    new_mu = mu + new_phi * new_phi * gain
    return Glicko(new_mu * SCALE + START, new_phi * SCALE, new_sigma)


def openskill_model() -> PlackettLuce:
    """The Box's OpenSkill model (Plackett-Luce, the scaled parameters above)."""
    from openskill.models import PlackettLuce

    return PlackettLuce(mu=START, sigma=BOX_SIGMA, beta=BOX_BETA, tau=BOX_TAU)


def rate_box(before: Sequence[tuple[float, float]], ranks: Sequence[int]) -> list[tuple[float, float]]:
    """Each seat's (mu, sigma) after a game of the Box finished in places ``ranks`` (1 the best,
    equal places tie), by OpenSkill's Plackett-Luce model."""
    model = openskill_model()
    teams = [[model.rating(mu=mu, sigma=sigma)] for mu, sigma in before]
    out = model.rate(teams, ranks=[float(r) for r in ranks])
    return [(float(t[0].mu), float(t[0].sigma)) for t in out]


def game_ranks(scores: Sequence[int], winner: int | None, at_fault: int | None) -> list[int]:
    """Each seat's place (1 the best): the winner first, the seat at fault (forfeit, abandon)
    last, the others by final score (:func:`competition.tournament.ratings.finish_ranks`).

    >>> game_ranks([20, 104, 20], 1, None)
    [2, 1, 2]
    """
    seats = [str(s) for s in range(len(scores))]
    return finish_ranks(seats, list(scores), None if winner is None else seats[winner],
                        None if at_fault is None else seats[at_fault])


def after_game(before: Sequence[Rating], ranks: Sequence[int]) -> list[Rating]:
    """The seats' ratings after one rated game, from their ratings before it (all of one
    variant, in seat order) and their places. Two players: Glicko-2, each against the other's
    rating before the game (score 1, 1/2 or 0 from the places). Three: OpenSkill."""
    if len(before) != len(ranks) or len(before) < 2:
        raise ValueError("one place per seat, and at least two seats")
    variant = before[0].variant
    if any(r.variant != variant for r in before):
        raise ValueError("a game's ratings are all of one variant")
    if MODELS[variant] == "glicko2":
        if len(before) != 2:
            raise ValueError(f"{variant} is rated for two players")
        a, b = before
        sa = 1.0 if ranks[0] < ranks[1] else 0.5 if ranks[0] == ranks[1] else 0.0
        ga = Glicko(a.rating, a.deviation, a.volatility if a.volatility is not None else VOLATILITY)
        gb = Glicko(b.rating, b.deviation, b.volatility if b.volatility is not None else VOLATILITY)
        na, nb = glicko2(ga, [(gb, sa)]), glicko2(gb, [(ga, 1.0 - sa)])
        return [replace(a, rating=na.rating, deviation=na.deviation, volatility=na.volatility, games=a.games + 1),
                replace(b, rating=nb.rating, deviation=nb.deviation, volatility=nb.volatility, games=b.games + 1)]
    after = rate_box([(r.rating, r.deviation) for r in before], ranks)
    return [replace(r, rating=mu, deviation=sigma, volatility=None, games=r.games + 1)
            for r, (mu, sigma) in zip(before, after, strict=True)]
