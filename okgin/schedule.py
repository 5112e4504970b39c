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

**Participants' nonces** (a tournament's preflight, protocol 1.5; docs/tournaments.md,
*Deals nobody can choose*). The organiser's secret alone would let an organiser try
secrets offline until the deals favour someone. So each participant may contribute a
random 32-byte *nonce*: first its commitment :func:`nonce_commitment` (SHA-256 of
``b"okgin-entropy-nonce-v1\0"`` + nonce), then, once every commitment is in and their
list is fixed (:func:`commitments_hash`), the nonce itself. The deals are then dealt
from the *deal key*

    deal_key(secret, nonces) = HMAC-SHA256(key = secret,
        message = b"okgin-deal-key-v1\0" + SHA-256(b"okgin-entropy-nonces-v1\0" + for each
        (name, nonce) sorted by name: 2-byte big-endian length of the name's UTF-8, the
        name's UTF-8, the 32 nonce bytes))

and deal ``k``'s seed is ``deal_seed(deal key, k)``, bot seeds ``bot_seed(deal key, ...)``.
The secret was committed before any nonce was known and every nonce before any was
revealed, so neither a secret tried offline nor a nonce chosen late can aim at a deal.
No nonce at all (``None``: an event from before nonces, and ``okgin match``; or an
empty mapping: no participant contributed, 1.4 bots say) gives the secret itself: the
old derivation, unchanged, so such an event deals exactly as before.

**Order.** Every deal is played in every seating of every group (a pair, or a triple
for Gin in the Box): ``index = (deal * groups + group) * seatings + seating``. The
seatings of one deal for one group are adjacent, and all the games of a deal come
before any game of the next deal, so a pool of workers taking games in index order
starts the seatings of a deal together, and a deal is finished (and its seed may be
revealed) as early as possible. Without duplicate deals every game has its own deal and
the seats rotate.

**Independent groups.** A duplicate schedule may name groups whose games must each have
a deal of their own (a tournament's pairings with a remote participant, who could
remember a deal from one seating to the other: docs/tournaments.md). Their games keep
their places in the order above, but their deals are numbered in a separate space after
the ``deals`` shared ones: the ``j``-th such game in index order plays deal ``deals + j``
(its seed is :func:`deal_seed` of that number, like any deal's), and no other game
plays it. So the shared deals keep their numbers and seeds, with or without such groups.

>>> s = DealSchedule(groups=2, seats=2, games_per_group=4, independent={1})
>>> [(s.slot(i).deal, s.slot(i).group, s.slot(i).seating) for i in range(8)]
[(0, 0, 0), (0, 0, 1), (2, 1, 0), (3, 1, 1), (1, 0, 0), (1, 0, 1), (4, 1, 0), (5, 1, 1)]
>>> list(s.deal_games(0)), list(s.deal_games(3))
([0, 1], [3])

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
import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from .rng import seed_text

__all__ = [
    "COMMITMENTS_PREFIX", "DEAL_KEY_PREFIX", "NONCES_PREFIX", "NONCE_BYTES", "NONCE_PREFIX",
    "SECRET_BYTES", "DealSchedule", "Slot", "bot_seed", "commitment", "commitments_hash",
    "deal_key", "deal_seed", "new_nonce", "new_secret", "nonce_commitment", "parse_hex32",
    "parse_secret", "seatings", "secret_from_seed",
]

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


NONCE_BYTES = 32
NONCE_PREFIX = b"okgin-entropy-nonce-v1\0"
COMMITMENTS_PREFIX = b"okgin-entropy-commitments-v1\0"
NONCES_PREFIX = b"okgin-entropy-nonces-v1\0"
DEAL_KEY_PREFIX = b"okgin-deal-key-v1\0"


def new_nonce() -> bytes:
    """A participant's fresh nonce (256 bits from the operating system)."""
    return secrets.token_bytes(NONCE_BYTES)


def parse_hex32(text: object) -> bytes:
    """A nonce or commitment written out: exactly 64 lowercase hex digits (32 bytes)."""
    if not isinstance(text, str) or not _HEX64.match(text):
        raise ValueError("expected 64 lowercase hex digits (32 bytes)")
    return bytes.fromhex(text)


def nonce_commitment(nonce: bytes) -> str:
    """A participant's public commitment to its nonce: lowercase hex
    SHA-256(``b"okgin-entropy-nonce-v1\0"`` + the 32 nonce bytes). The prefix keeps the
    hash apart from every other SHA-256 of the project (the secret's commitment, seed hashes).

    >>> nonce_commitment(bytes(32))[:16]
    'df4cd06631e0d33b'
    """
    if len(nonce) != NONCE_BYTES:
        raise ValueError(f"a nonce is {NONCE_BYTES} bytes")
    return hashlib.sha256(NONCE_PREFIX + nonce).hexdigest()


def _named(items: Mapping[str, bytes]) -> bytes:
    """The canonical bytes of a name -> 32-byte value mapping, sorted by name."""
    out = bytearray()
    for name in sorted(items):
        raw = name.encode("utf-8")
        if len(raw) > 0xFFFF or len(items[name]) != NONCE_BYTES:
            raise ValueError(f"bad entry for {name!r}")
        out += struct.pack(">H", len(raw)) + raw + items[name]
    return bytes(out)


def commitments_hash(secret_commitment: str, commitments: Mapping[str, str]) -> str:
    """The fixed list of nonce commitments, as one hash: SHA-256 of
    ``b"okgin-entropy-commitments-v1\0"``, the organiser's secret commitment (32 bytes)
    and every (name, commitment) sorted by name (encoded as in :func:`deal_key`). Sent to
    each participant with the request to reveal, stored in the results file: it binds the
    reveals to one list and one event."""
    body = _named({n: parse_hex32(c) for n, c in commitments.items()})
    return hashlib.sha256(COMMITMENTS_PREFIX + parse_hex32(secret_commitment) + body).hexdigest()


def deal_key(secret: bytes, nonces: Mapping[str, bytes] | None = None) -> bytes:
    """The key every deal and bot seed is derived from (see the module doc): the secret
    itself without nonces (``None`` or empty), else HMAC-SHA256(secret, prefix + SHA-256 of the
    sorted (name, nonce) list). The one derivation: the runner, the Dask driver and
    ``okgin tournament verify`` all call it."""
    if not nonces:
        return secret
    digest = hashlib.sha256(NONCES_PREFIX + _named(nonces)).digest()
    return hmac.new(secret, DEAL_KEY_PREFIX + digest, hashlib.sha256).digest()


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

    def __init__(self, groups: int, seats: int, games_per_group: int, duplicate: bool = True,
                 independent: Iterable[int] = ()) -> None:
        self.groups = groups
        self.seats = seats
        self.perms = seatings(seats)
        self.duplicate = duplicate
        self.per_deal = len(self.perms) if duplicate else 1  # games of one group sharing one deal
        self.games_per_group = -(-games_per_group // self.per_deal) * self.per_deal  # whole deals
        self.deals = self.games_per_group // self.per_deal
        self.total = self.games_per_group * groups
        # Groups whose every game has a deal of its own (module doc); only meaningful
        # with duplicate deals (without them every game already has its own).
        self.independent = sorted({g for g in independent if 0 <= g < groups}) if duplicate else []
        self._rank = {g: r for r, g in enumerate(self.independent)}
        # Every deal number in use is below this: the shared ones, then one per game of an
        # independent group.
        self.deal_count = self.deals + len(self.independent) * self.games_per_group

    def __len__(self) -> int:
        return self.total

    def slot(self, index: int) -> Slot:
        if not 0 <= index < self.total:
            raise IndexError(f"game index {index} is outside the schedule (0..{self.total - 1})")
        deal, r = divmod(index, self.groups * self.per_deal)
        group, seating = divmod(r, self.per_deal)
        if not self.duplicate:
            seating = deal % len(self.perms)  # one deal per game; the seats still rotate
        elif group in self._rank:
            deal = self.deals + (deal * len(self.independent) + self._rank[group]) * self.per_deal + seating
        return Slot(deal, group, seating, self.perms[seating])

    def is_independent(self, group: int) -> bool:
        """Does every game of ``group`` have a deal of its own?"""
        return not self.duplicate or group in self._rank

    def deal_games(self, deal: int) -> Sequence[int]:
        """The indices of every game that plays deal ``deal`` (ascending)."""
        block = self.groups * self.per_deal
        if not self.independent or not self.duplicate:
            return range(deal * block, min(self.total, (deal + 1) * block))
        if deal < self.deals:
            return [i for i in range(deal * block, min(self.total, (deal + 1) * block))
                    if (i % block) // self.per_deal not in self._rank]
        j = deal - self.deals
        k, r = divmod(j, len(self.independent) * self.per_deal)
        rank, seating = divmod(r, self.per_deal)
        index = (k * self.groups + self.independent[rank]) * self.per_deal + seating
        return range(index, index + 1) if index < self.total else range(0)
