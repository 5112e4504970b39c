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
half-point cells, which is why the general model is kept. With ``duplicate = false``
every game is its own unit (``m = 1``, the trinomial loss/draw/win).

The maths (:class:`Paired`, the clustered intervals, Student's t below 30 pairs, the
virtual unit that keeps an interval from collapsing to zero width, the SPRT's
log-likelihood ratios) is :mod:`okgin.stats`', shared with ``okgin match``; this module
groups a tournament's games into pairs.

**Games that are not in a complete unit** (a deal whose other seating was not played:
a run in progress, an SPRT that stopped in the middle of a deal, a game that could not
be played) are left out of the pair statistics and counted as ``unpaired``; their
result would otherwise be read without the seating that balances its luck. They still
count in the standings' W/L and in the rating fit (see :mod:`.ratings`).

The 120 pairs of issue 15 (33 lost twice, 29 split, 58 won twice), checked in
tests/tournament/test_paired_stats.py against scipy and a simulation. ``se`` is
fishtest's pentanomial standard error; the interval uses the clustered one (0.6% wider
here: ``sqrt((N var + mu (1 - mu) / 2) / (N (N - 1)))``):

>>> p = Paired((33, 0, 29, 0, 58), games=(95, 0, 145))
>>> round(p.mean(), 4), round(p.se(), 4), round(p.naive_se(), 4), round(p.se() / p.naive_se(), 3)
(0.6042, 0.0386, 0.0316, 1.223)
>>> round(p.elo(), 1), [round(e, 1) for e in p.elo_interval()], round(p.los(), 4)
(73.5, [19.5, 131.2], 0.9963)

With ``elo0 = 0, elo1 = 25`` the per-game model's LLR was 2.977 (above ln 19 = 2.944,
"H1 accepted"); on pairs it is below, still undecided:

>>> round(p.llr(0.5, 1 / (1 + 10 ** (-25 / 400))), 3)
1.968
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

from okgin.stats import EPSILON, Paired, gsprt_llr, normalized_llr, score_to_elo

from .ratings import deal_key

__all__ = ["EPSILON", "GameLike", "PairTracker", "Paired", "game_score", "gsprt_llr", "normalized_llr", "paired",
           "score_to_elo"]


class GameLike(Protocol):
    """What the pair statistics read from a game (a :class:`.store.GameResult`). Read-only
    properties, so that a frozen dataclass fits."""

    @property
    def deal(self) -> int: ...
    @property
    def seed(self) -> str: ...
    @property
    def seats(self) -> tuple[str, ...]: ...
    @property
    def winner(self) -> str | None: ...


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
    _open: dict[str, list[float]] = field(default_factory=dict)  # by deal_key: the deal's seed, else its index

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
        key = deal_key(g.deal, g.seed)  # games of one pair share their cards: the same seed
        scores = self._open.setdefault(key, [])
        scores.append(game_score(g, self.player))
        if len(scores) < self.per_unit:
            return False
        del self._open[key]
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
