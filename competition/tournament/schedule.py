"""The schedule: which games a tournament plays, in which order, with which seeds.

The order and the seeds are :mod:`okgin.schedule`'s, shared with ``okgin match``: deal
``k``'s seed is HMAC-SHA256(event secret, ASCII decimal of ``k``), every pairing plays
every deal in every seating (2 for two players, seats swapped; 6 for a triple), the
seatings of a deal are adjacent and a deal's games all come before the next deal's.
It is a pure function of the config (format, participants in file order and which of
them are remote, games per pairing, duplicate, remote_duplicate) and of the event secret (kept in the results file), computed from
a game's index, so that:

- a resumed run plays exactly the games an uninterrupted run would have played, with the
  same seats and the same seeds (the index is the game's identity in the results file);
- a long SPRT run does not hold millions of games in memory;
- the worker pool, taking games in index order, starts the seatings of a deal together,
  and a deal is over (its seeds may be revealed) as early as possible.

A pairing with a remote participant gets a deal per game unless the config says
``remote_duplicate = true``: a remote bot could remember one seating's cards at the
other. Those deals are numbered after the shared ones (:mod:`okgin.schedule`,
*Independent groups*), so the shared deals are the same with or without them.

>>> from competition.tournament.config import parse_config
>>> cfg = parse_config({"tournament": {}, "participant": [
...     {"name": "a", "bot": "random"}, {"name": "b", "bot": "simple"}, {"name": "c", "bot": "simple"}]})
>>> [(g.seats, g.deal) for g in Schedule(cfg, bytes(32))][:3]
[(('a', 'b'), 0), (('b', 'a'), 0), (('a', 'c'), 0)]
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from okgin.schedule import DealSchedule, deal_key, deal_seed

from .config import TournamentConfig


@dataclass(frozen=True)
class ScheduledGame:
    """One game of the schedule. ``index`` is its identity in the results file."""

    index: int
    pairing: tuple[str, ...]  # the participants, in file order
    deal: int
    seating: int  # which permutation of the pairing sits down
    seats: tuple[str, ...]  # participant at seat 0, 1 (, 2)
    seed: str  # the deal's seed: secret until every game of the deal has ended

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
    """The tournament's games, indexable and iterable, computed on demand.

    ``secret`` is the event's 32-byte secret; without one (reading a schedule's shape
    only) every seed is the empty string. ``nonces`` are the participants' revealed
    nonces (name -> 32 bytes) once the preflight collected them, None for an event from
    before nonces: every seed is dealt from :func:`okgin.schedule.deal_key` of the two.
    """

    def __init__(self, cfg: TournamentConfig, secret: bytes | None = None,
                 nonces: Mapping[str, bytes] | None = None) -> None:
        self.cfg = cfg
        self.secret = secret
        self.nonces = nonces
        self.key = None if secret is None else deal_key(secret, nonces)
        self.pairings = pairings(cfg)
        per_pairing = cfg.sprt.max_games if cfg.sprt is not None else cfg.games_per_pairing
        # Pairings with a participant who could remember a deal across its seatings
        # (a remote one) get a deal per game: okgin.schedule's independent groups.
        indep = cfg.independent_names
        self.independent = [i for i, p in enumerate(self.pairings) if indep & set(p)]
        self.deals = DealSchedule(len(self.pairings), cfg.seats, per_pairing, cfg.duplicate, self.independent)
        self.per_deal = self.deals.per_deal  # games sharing one seed, per pairing
        self.games_per_pairing = self.deals.games_per_group
        self.total = len(self.deals)

    def __len__(self) -> int:
        return self.total

    def seed(self, deal: int) -> str:
        return "" if self.key is None else deal_seed(self.key, deal)

    def __getitem__(self, index: int) -> ScheduledGame:
        s = self.deals.slot(index)
        pairing = self.pairings[s.group]
        seats = tuple(pairing[i] for i in s.order)
        return ScheduledGame(index, pairing, s.deal, s.seating, seats, self.seed(s.deal))

    def deal_games(self, deal: int) -> Sequence[int]:
        """The indices of every game (all pairings, all seatings) that plays ``deal``."""
        return self.deals.deal_games(deal)

    def __iter__(self) -> Iterator[ScheduledGame]:
        for i in range(self.total):
            yield self[i]
