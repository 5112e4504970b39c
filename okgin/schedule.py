"""Duplicate deals and their seeds: the one scheme of ``okgin match`` and ``okgin tournament``.

Why it lives in the engine package: the match runner (``clients/``) and the tournament
runner (``referee/``) must deal exactly the same way, and both may import ``okgin``
while neither may import the other's side.

**Seeds.** An event has a 32-byte *secret*. Deal ``k`` (k = 0, 1, 2, ...) has the game
seed

    deal_seed(secret, k) = lowercase hex of HMAC-SHA256(key = secret, message = ASCII decimal of k)

(64 hex digits, e.g. deal 12's message is the two bytes ``b"12"``). A keyed hash, not
``"S/k"``: a bot that saw deal ``k``'s seed (revealed after the game) learns nothing
about deal ``k + 1``'s, because without the key HMAC outputs are unpredictable from one
another. The secret's public *commitment* is ``SHA-256(secret)`` in lowercase hex,
published before the first game; revealing the secret at the end lets anyone recompute
every deal and check that it is the secret committed to. (No salt: a random 256-bit
secret cannot be found from its hash by trying. A fixed secret made from a short text
can, which is why a fixed secret is not secret.)

- A tournament draws its secret from the operating system (:func:`new_secret`), unless
  the organiser fixes one for a reproducible event.
- ``okgin match`` is for self-play and evaluation, where reproducibility matters more
  than secrecy: its ``--seed S`` gives the fixed secret :func:`secret_from_seed`\\ ``(S)``
  = ``SHA-256(UTF-8 of the seed's text)``; a tournament with ``seed = S`` deals the same.

Bots get their own seeds (``bot_seed``), also derived with the key, so that a bot's seed
says nothing about the deals: ``HMAC-SHA256(secret, "bot/{deal}/{index}")``.

**Order.** Every deal is played in every seating of every group (a pair, or a triple
for Gin in the Box): ``index = (deal * groups + group) * seatings + seating``. The
seatings of one deal for one group are adjacent, and all the games of a deal come
before any game of the next deal, so a pool of workers taking games in index order
starts the seatings of a deal together, and a deal is finished (and its seed may be
revealed) as early as possible. Without duplicate deals every game has its own deal and
the seats rotate.

>>> s = DealSchedule(groups=1, seats=2, games_per_group=4)
>>> [s.slot(i) for i in range(4)]
[Slot(deal=0, group=0, seating=0, order=(0, 1)), Slot(deal=0, group=0, seating=1, order=(1, 0)), \
Slot(deal=1, group=0, seating=0, order=(0, 1)), Slot(deal=1, group=0, seating=1, order=(1, 0))]
>>> deal_seed(bytes(32), 0) == hmac.new(bytes(32), b"0", hashlib.sha256).hexdigest()
True
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import re
import secrets
from dataclasses import dataclass

from .rng import seed_text

SECRET_BYTES = 32
_HEX64 = re.compile(r"[0-9a-f]{64}\Z")


def new_secret() -> bytes:
    """A fresh event secret from the operating system's random source (256 bits)."""
    return secrets.token_bytes(SECRET_BYTES)


def secret_from_seed(seed: int | str) -> bytes:
    """The fixed secret of a seeded (reproducible, not secret) event: SHA-256 of the
    UTF-8 of the seed's text (``okgin match --seed 7`` hashes ``b"7"``)."""
    return hashlib.sha256(seed_text(seed).encode()).digest()


def parse_secret(text: str) -> bytes:
    """A secret written out: exactly 64 lowercase hex digits (32 bytes)."""
    if not isinstance(text, str) or not _HEX64.match(text):
        raise ValueError("a secret is 64 lowercase hex digits (32 bytes)")
    return bytes.fromhex(text)


def commitment(secret: bytes) -> str:
    """The secret's public commitment: lowercase hex SHA-256 of its 32 bytes."""
    return hashlib.sha256(secret).hexdigest()


def deal_seed(secret: bytes, deal: int) -> str:
    """Deal ``deal``'s game seed: hex HMAC-SHA256(secret, ASCII decimal of ``deal``)."""
    if deal < 0:
        raise ValueError("deal numbers start at 0")
    return hmac.new(secret, str(deal).encode("ascii"), hashlib.sha256).hexdigest()


def bot_seed(secret: bytes, deal: int, index: int) -> str:
    """The seed of bot ``index`` (its place in the match or group, not its seat) for
    deal ``deal``: the same in every seating, and unrelated to any deal's seed."""
    return hmac.new(secret, f"bot/{deal}/{index}".encode("ascii"), hashlib.sha256).hexdigest()


def seatings(num_seats: int) -> list[tuple[int, ...]]:
    """Every seating of ``num_seats`` players: ``seating[seat]`` is the player's index.

    >>> seatings(2)
    [(0, 1), (1, 0)]
    >>> len(seatings(3))
    6
    """
    return list(itertools.permutations(range(num_seats)))


@dataclass(frozen=True)
class Slot:
    """Where a game index falls: its deal, its group, which seating, and the order of
    the group's players in seats (``order[seat]`` = the player's index in the group)."""

    deal: int
    group: int
    seating: int
    order: tuple[int, ...]


class DealSchedule:
    """The game order of an event: ``groups`` groups of ``seats`` players, each playing
    ``games_per_group`` games, deal by deal (see the module doc). Computed from the
    index, so a resumed run plays exactly the games an uninterrupted one would have,
    and a long run never holds its schedule in memory."""

    def __init__(self, groups: int, seats: int, games_per_group: int, duplicate: bool = True) -> None:
        self.groups = groups
        self.seats = seats
        self.perms = seatings(seats)
        self.duplicate = duplicate
        self.per_deal = len(self.perms) if duplicate else 1  # games of one group sharing one deal
        self.games_per_group = -(-games_per_group // self.per_deal) * self.per_deal  # whole deals
        self.deals = self.games_per_group // self.per_deal
        self.total = self.games_per_group * groups

    def __len__(self) -> int:
        return self.total

    def slot(self, index: int) -> Slot:
        if not 0 <= index < self.total:
            raise IndexError(f"game index {index} is outside the schedule (0..{self.total - 1})")
        deal, r = divmod(index, self.groups * self.per_deal)
        group, seating = divmod(r, self.per_deal)
        if not self.duplicate:
            seating = deal % len(self.perms)  # one deal per game; the seats still rotate
        return Slot(deal, group, seating, self.perms[seating])

    def deal_games(self, deal: int) -> range:
        """The indices of every game that plays deal ``deal`` (contiguous)."""
        block = self.groups * self.per_deal
        return range(deal * block, min(self.total, (deal + 1) * block))
