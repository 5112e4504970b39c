"""The schedule: which games a tournament plays, in which order, with which seeds.

It is a pure function of the config (format, participants in file order, games per
pairing, duplicate, seed), computed arithmetically from a game's index, so that:

- a resumed run plays exactly the games an uninterrupted run would have played, with the
  same seats and the same seeds (the index is the game's identity in the results file);
- a long SPRT run does not hold millions of games in memory.

Duplicate deals (GUIDE §6): deal ``k`` has the seed ``"{seed}/{k}"`` and is played in
every seating of the pairing (2 for two players, seats swapped; 6 for a triple), so luck
of the cards cancels out. Every pairing plays the same deals, in the same order, so the
whole field faces the same cards. The order is deal by deal, then pairing by pairing, so
standings stay balanced while a run is in progress and the seatings of one deal are
played side by side.

>>> from referee.tournament.config import parse_config
>>> cfg = parse_config({"tournament": {"seed": "s"}, "participant": [
...     {"name": "a", "bot": "random"}, {"name": "b", "bot": "simple"}, {"name": "c", "bot": "simple"}]})
>>> [(g.seats, g.seed) for g in Schedule(cfg)]
[(('a', 'b'), 's/0'), (('b', 'a'), 's/0'), (('a', 'c'), 's/0'), (('c', 'a'), 's/0'), (('b', 'c'), 's/0'), (('c', 'b'), 's/0')]
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass

from .config import TournamentConfig


@dataclass(frozen=True)
class ScheduledGame:
    """One game of the schedule. ``index`` is its identity in the results file."""

    index: int
    pairing: tuple[str, ...]  # the participants, in file order
    deal: int
    seating: int  # which permutation of the pairing sits down
    seats: tuple[str, ...]  # participant at seat 0, 1 (, 2)
    seed: str

    @property
    def key(self) -> str:
        """A readable, unique name: ``d3-alice-bob-s1`` (deal 3, seating 1)."""
        return f"d{self.deal}-{'-'.join(self.pairing)}-s{self.seating}"


def pairings(cfg: TournamentConfig) -> list[tuple[str, ...]]:
    """Who meets whom, in file order: pairs (round robin, gauntlet, SPRT) or triples (box)."""
    names = [p.name for p in cfg.participants]
    if cfg.format == "gauntlet":
        assert cfg.champion is not None
        return [(cfg.champion, n) for n in names if n != cfg.champion]
    if cfg.format == "sprt":
        assert cfg.sprt is not None
        return [(cfg.sprt.candidate, cfg.sprt.baseline)]
    return list(itertools.combinations(names, cfg.seats))


class Schedule:
    """The tournament's games, indexable and iterable, computed on demand."""

    def __init__(self, cfg: TournamentConfig) -> None:
        self.cfg = cfg
        self.pairings = pairings(cfg)
        self.perms = list(itertools.permutations(range(cfg.seats)))
        self.per_deal = cfg.seatings_per_deal  # games sharing one seed, per pairing
        if cfg.sprt is not None:
            per_pairing = -(-cfg.sprt.max_games // self.per_deal) * self.per_deal
        else:
            per_pairing = cfg.games_per_pairing
        self.games_per_pairing = per_pairing
        self.total = per_pairing * len(self.pairings)

    def __len__(self) -> int:
        return self.total

    def __getitem__(self, index: int) -> ScheduledGame:
        if not 0 <= index < self.total:
            raise IndexError(f"game index {index} is outside the schedule (0..{self.total - 1})")
        block = len(self.pairings) * self.per_deal
        deal, r = divmod(index, block)
        p, seating = divmod(r, self.per_deal)
        if not self.cfg.duplicate:
            # One seed per game; the seats still rotate through every seating.
            seating = deal % len(self.perms)
        pairing = self.pairings[p]
        seats = tuple(pairing[i] for i in self.perms[seating])
        return ScheduledGame(index, pairing, deal, seating, seats, f"{self.cfg.seed}/{deal}")

    def __iter__(self) -> Iterator[ScheduledGame]:
        for i in range(self.total):
            yield self[i]
