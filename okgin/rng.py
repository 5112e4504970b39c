"""Deterministic randomness from a game's seed (RULES.md §6 "Reproducibility").

Why not ``random.Random``: its algorithms are a CPython detail and other languages
cannot reproduce them. Here every random draw is a SHA-256 counter stream over a
labelled seed, with rejection sampling, so a deal is a pure function of
``(seed, label)`` that anyone can recompute, in any language, in any Python version.
"""

from __future__ import annotations

import hashlib
from typing import TypeVar

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
        """Fisher-Yates shuffle in place; returns the list for convenience."""
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]
        return items


def seed_text(seed: int | str) -> str:
    """The canonical text of a seed: ints and strings are both allowed in records."""
    if isinstance(seed, bool) or not isinstance(seed, int | str):
        raise ValueError(f"a seed is an integer or a string, got {seed!r}")
    return str(seed)


def seed_hash(seed: int | str) -> str:
    """The SHA-256 of a seed's text, published at a game's start, before the seed itself."""
    return hashlib.sha256(seed_text(seed).encode()).hexdigest()
