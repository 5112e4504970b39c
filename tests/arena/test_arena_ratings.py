"""arena.ratings: Glicko-2 against Glickman's published worked example, OpenSkill against the
openskill library itself, the provisional rule, and a game's places."""

from __future__ import annotations

import math
import random

import pytest
from openskill.models import PlackettLuce

from arena.ratings import (
    BOX_SIGMA,
    PROVISIONAL_DEVIATION,
    SCALE,
    START,
    Glicko,
    Rating,
    after_game,
    game_ranks,
    glicko2,
    initial,
    rate_box,
)

PAPER = [(Glicko(1400, 30), 1.0), (Glicko(1550, 100), 0.0), (Glicko(1700, 300), 0.0)]


def test_glicko2_reproduces_glickmans_worked_example() -> None:
    """Glickman, "Example of the Glicko-2 system" (2013): 1500/200/0.06, tau 0.5, against
    1400/30 (won), 1550/100 (lost), 1700/300 (lost): mu' = -0.2069, phi' = 0.8722,
    sigma' = 0.05999, i.e. 1464.06 / 151.52 / 0.05999 (the paper's 1464.06 is mu' rounded
    to four places, times 173.7178, plus 1500)."""
    p = glicko2(Glicko(1500, 200, 0.06), PAPER, tau=0.5)
    assert round((p.rating - START) / SCALE, 4) == -0.2069
    assert round(p.deviation / SCALE, 4) == 0.8722
    assert abs(p.volatility - 0.05999) < 1e-5
    assert round(-0.2069 * SCALE + 1500, 2) == 1464.06 and abs(p.rating - 1464.06) < 0.02
    assert round(p.deviation, 2) == 151.52
    # the paper's intermediate quantities, v = 1.7785 and delta = -0.4834, computed there from g
    # and E rounded to four places (unrounded: 1.7790, -0.4839)
    mu, phi = 0.0, 200 / SCALE
    gs = [1 / math.sqrt(1 + 3 * (o.deviation / SCALE) ** 2 / math.pi**2) for o, _ in PAPER]
    es = [1 / (1 + math.exp(-g * (mu - (o.rating - START) / SCALE))) for g, (o, _) in zip(gs, PAPER, strict=True)]
    v = 1 / sum(g * g * e * (1 - e) for g, e in zip(gs, es, strict=True))
    delta = v * sum(g * (s - e) for g, e, (_, s) in zip(gs, es, PAPER, strict=True))
    assert abs(v - 1.7785) < 1e-3 and abs(delta - -0.4834) < 1e-3
    assert phi > p.deviation / SCALE


def test_glicko2_two_players_are_symmetric_and_a_draw_between_equals_moves_nothing() -> None:
    a, b = initial("oklahoma"), initial("oklahoma")
    wa, lb = after_game([a, b], [1, 2])
    assert wa.rating - START == pytest.approx(START - lb.rating) and wa.deviation == lb.deviation
    assert wa.games == lb.games == 1 and wa.rating > START
    da, db = after_game([a, b], [1, 1])
    assert da.rating == db.rating == START and da.deviation < a.deviation
    # an upset moves more than the expected result
    strong = Rating("oklahoma", 1800, 80, 10, 0.06)
    weak = Rating("oklahoma", 1400, 80, 10, 0.06)
    up = after_game([weak, strong], [1, 2])[0].rating - 1400
    exp = after_game([strong, weak], [1, 2])[0].rating - 1800
    assert up > 5 * exp > 0


def test_openskill_is_the_library_scaled() -> None:
    """rate_box is openskill's PlackettLuce with mu 1500, sigma 350, beta 175, tau 3.5: the
    library's defaults scaled by 42 (mu shifted). So it must equal the library called directly
    with those parameters, and, scaled back, the library at its own defaults."""
    rng = random.Random(5)
    for _ in range(50):
        before = [(rng.uniform(1000, 2000), rng.uniform(40, 350)) for _ in range(3)]
        ranks = [rng.randint(1, 3) for _ in range(3)]
        got = rate_box(before, ranks)
        direct = PlackettLuce(mu=1500, sigma=350, beta=175, tau=3.5)
        want = direct.rate([[direct.rating(mu=m, sigma=s)] for m, s in before], ranks=ranks)
        assert got == [(t[0].mu, t[0].sigma) for t in want]
        default = PlackettLuce()
        k = BOX_SIGMA / default.sigma
        scaled = default.rate([[default.rating(mu=25 + (m - 1500) / k, sigma=s / k)] for m, s in before], ranks=ranks)
        for (mu, sigma), t in zip(got, scaled, strict=True):
            assert mu == pytest.approx(1500 + (t[0].mu - 25) * k, rel=1e-9)
            assert sigma == pytest.approx(t[0].sigma * k, rel=1e-9)


def test_box_places_and_openskill_updates() -> None:
    box = [initial("box")] * 3
    after = after_game(box, game_ranks([10, 104, 30], 1, None))
    assert after[1].rating > after[2].rating > after[0].rating
    assert all(r.games == 1 and r.volatility is None for r in after)
    # a forfeit puts the seat at fault last, whatever its score
    assert game_ranks([120, 5, 30], 2, 0) == [3, 2, 1]
    assert game_ranks([0, 0], None, None) == [1, 1]


def test_provisional_until_the_deviation_is_110_or_less() -> None:
    assert PROVISIONAL_DEVIATION == 110
    assert initial("oklahoma").provisional and initial("box").provisional
    assert not Rating("oklahoma", 1500, 110, 20).provisional
    assert Rating("oklahoma", 1500, 110.01, 20).provisional
    # between equals, alternating results: Glicko-2 settles below 110 after a handful of games
    a = b = initial("oklahoma")
    n = 0
    while a.provisional:
        a, b = after_game([a, b], [1, 2] if n % 2 else [2, 1])
        n += 1
    assert 5 <= n <= 15, n


def test_bad_inputs() -> None:
    with pytest.raises(ValueError):
        initial("poker")
    with pytest.raises(ValueError):
        after_game([initial("oklahoma")], [1])
    with pytest.raises(ValueError):
        after_game([initial("oklahoma"), initial("box")], [1, 2])
    with pytest.raises(ValueError):
        after_game([initial("oklahoma")] * 3, [1, 2, 3])
