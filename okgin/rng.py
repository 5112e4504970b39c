"""Deterministic randomness from a game's seed (docs/rules.md §6 "Reproducibility").

Why not ``random.Random``: its algorithms are a CPython detail and other languages
cannot reproduce them. Here every random draw is a SHA-256 counter stream over a
labelled seed, with rejection sampling, so a deal is a pure function of
``(seed, label)`` that anyone can recompute, in any language, in any Python version.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import struct
from operator import mod
from typing import TypeVar

__all__ = [
    "SALT_BYTES", "SEED_BYTES", "SeedStream", "is_salt", "new_salt", "new_seed", "seed_hash",
    "seed_text",
]

T = TypeVar("T")


class SeedStream:
    """An endless, reproducible stream of uniform integers for one purpose of one seed.

    >>> SeedStream("42", "deal/0").below(52) == SeedStream("42", "deal/0").below(52)
    True
    """

    __slots__ = ("_counter", "_key", "_vals")

    def __init__(self, seed: str, label: str) -> None:
        self._key = f"okgin/{label}/{seed}".encode()
        self._counter = 0
        self._vals: list[int] = []

    def _u64(self) -> int:
        """The next 8 bytes of the stream SHA-256(key # 0) || SHA-256(key # 1) || ...,
        read big-endian (each digest gives four values, first bytes first)."""
        if not self._vals:
            d = int.from_bytes(hashlib.sha256(self._key + b"#" + str(self._counter).encode()).digest(), "big")
            self._counter += 1
            m = 0xFFFFFFFFFFFFFFFF
            self._vals = [d & m, (d >> 64) & m, (d >> 128) & m, d >> 192]
        return self._vals.pop()

    def below(self, n: int) -> int:
        """A uniform integer in ``[0, n)`` (rejection sampling: no modulo bias)."""
        if n <= 0:
            raise ValueError("below() needs n >= 1")
        limit = (1 << 64) - ((1 << 64) % n)
        while True:
            v = self._u64()
            if v < limit:
                return v % n

    def shuffle(self, items: list[T]) -> list[T]:
        """Fisher-Yates shuffle in place; returns the list for convenience.

        Exactly ``j = self.below(i + 1)`` for i from the last index down to 1, but the
        stream is read in bulk: the digests the shuffle needs are hashed up front and
        unpacked in one call (each digest is four big-endian 8-byte values, first bytes
        first, as :meth:`_u64` reads it). Every hand is dealt by one shuffle and the
        per-value calls cost more than the hashing. A value is rejected (``v >= limit``)
        with probability below 2**-57 for a deck; then just enough digests more are read
        that the stream's state afterwards (counter, unread values of the last digest)
        is what the value-by-value reading leaves. A golden test pins the deals.
        """
        n = len(items)
        if n < 2:
            return items
        sha = hashlib.sha256
        key = self._key + b"#"
        counter = self._counter
        vals = self._vals[::-1]  # unread values of the current digest, in stream order
        need = n - 1 - len(vals)
        if need > 0:
            k = (need + 3) // 4
            data = b"".join([sha(key + str(c).encode()).digest() for c in range(counter, counter + k)])
            vals.extend(struct.unpack(f">{4 * k}Q", data))
            counter += k
        if n < _NLIMITS and max(vals[: n - 1]) < _NO_REJECT:
            # No value is rejected (nearly always): the indices all at once, v % (i + 1)
            # for i = n - 1 .. 1, then only the swaps.
            for i, j in zip(range(n - 1, 0, -1), map(mod, vals, range(n, 1, -1)), strict=True):
                items[i], items[j] = items[j], items[i]
            self._vals = vals[n - 1 :][::-1]
            self._counter = counter
            return items
        limits = _LIMITS
        pos = 0
        for i in range(n - 1, 0, -1):
            m = i + 1
            v = vals[pos]
            pos += 1
            limit = limits[m] if m < _NLIMITS else _TWO64 - _TWO64 % m
            while v >= limit:  # rejected: read on, hashing only what is still needed
                while len(vals) - pos < i:
                    vals.extend(struct.unpack(">4Q", sha(key + str(counter).encode()).digest()))
                    counter += 1
                v = vals[pos]
                pos += 1
            j = v % m
            items[i], items[j] = items[j], items[i]
        self._vals = vals[pos:][::-1]
        self._counter = counter
        return items


_TWO64 = 1 << 64
_NLIMITS = 257
#: below(n)'s rejection limit per n (values at or above it are redrawn).
_LIMITS: list[int] = [0] + [_TWO64 - _TWO64 % n for n in range(1, _NLIMITS)]
#: Below every one of those limits: a value under it is never rejected.
_NO_REJECT = min(_LIMITS[1:])


def seed_text(seed: int | str) -> str:
    """The canonical text of a seed: ints and strings are both allowed in records."""
    if isinstance(seed, bool) or not isinstance(seed, int | str):
        raise ValueError(f"a seed is an integer or a string, got {seed!r}")
    return str(seed)


SEED_BYTES = 32
"""A referee's own seeds: 256 bits from the OS's secure source (protocol.md §5.10)."""
SALT_BYTES = 16
"""A commitment's salt: 128 bits, fresh for every game (protocol.md §5.10)."""
_SALT_RE = re.compile(r"[0-9a-f]{32}\Z")


def new_seed() -> str:
    """A fresh seed: 64 lowercase hex digits of ``secrets.token_bytes(32)``.

    Why so wide: a seed fixes every hand and the stock, so a bot that could guess it
    would see its opponent's cards. 256 bits cannot be enumerated; being text, it goes
    through :func:`seed_text` and :class:`SeedStream` like any admin's seed."""
    return secrets.token_bytes(SEED_BYTES).hex()


def new_salt() -> str:
    """A fresh salt: 32 lowercase hex digits of ``secrets.token_bytes(16)``.

    Why a salt at all: an admin may fix a small seed (``871``), and an unsalted hash of
    a small seed is found by trying numbers. The salt makes the commitment unguessable
    whatever the seed, and revealing it with the seed lets anyone check the deal."""
    return secrets.token_bytes(SALT_BYTES).hex()


def is_salt(salt: object) -> bool:
    """True for a salt as the referee writes them: exactly 32 lowercase hex digits."""
    return isinstance(salt, str) and _SALT_RE.match(salt) is not None


def seed_hash(seed: int | str, salt: str | None = None) -> str:
    """The commitment to a seed, published at a game's start, before the seed itself.

    Protocol 1.4 (``salt`` given): lowercase hex of ``SHA-256(salt_bytes || seed_bytes)``
    where ``salt_bytes`` are the 16 bytes the 32 hex digits of ``salt`` spell and
    ``seed_bytes`` the UTF-8 of :func:`seed_text`. Without a salt (referees before 1.4,
    old journals): ``SHA-256(seed_bytes)``, kept so that old journals still check.

    >>> seed_hash("abc") == hashlib.sha256(b"abc").hexdigest()
    True
    >>> seed_hash(871, "00" * 16) == hashlib.sha256(bytes(16) + b"871").hexdigest()
    True
    """
    text = seed_text(seed).encode()
    if salt is None:
        return hashlib.sha256(text).hexdigest()
    if not is_salt(salt):
        raise ValueError(f"a salt is 32 lowercase hex digits, got {salt!r}")
    return hashlib.sha256(bytes.fromhex(salt) + text).hexdigest()
