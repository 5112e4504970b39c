"""Checking an account's key at ``hello`` without stalling the arena's event loop.

Why not just ``Store.check_key``: a check is one scrypt (tens of milliseconds of CPU, by
design: arena/keys.py), and the front serves every connection on one loop. So:

- the stored hash is read on the loop (a short indexed query) and the scrypt runs in a
  worker thread (:data:`WORKERS` of them), against ``arena.keys.DUMMY_HASH`` for an
  unknown or revoked name so that every refusal costs the same;
- a key that passed is remembered, per process, as SHA-256 of the key beside the stored
  hash it matched: the same account saying ``hello`` again (a bot reconnecting, a client
  per game) is answered from memory. Keyed by the stored hash, so a rotated or revoked key
  (even by ``okgin arena account`` from another process) misses the cache at once;
- the work is bounded: at most :data:`MAX_WAITING` checks wait or run at once (more get
  ``limit_reached``), and an account that failed :data:`MAX_FAILURES` checks within
  :data:`FAILURE_WINDOW_MS` is answered ``auth_failed`` without hashing until the window
  passes (except for a key in the cache: its owner, signed in lately, is not locked out).
  Why per account and not only per connection: a flood of guesses from many connections
  against one account is the cheapest way to make the arena hash all day. The keys are 256
  random bits, so no guess succeeds; this bounds CPU, not luck.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from .keys import DUMMY_HASH, MAX_KEY_CHARS, verify_key
from .store import Account, Store

__all__ = ["CACHE_SIZE", "FAILURE_WINDOW_MS", "MAX_FAILURES", "MAX_WAITING", "WORKERS", "Busy", "KeyChecker"]

WORKERS = 1
MAX_WAITING = 32
MAX_FAILURES = 10
FAILURE_WINDOW_MS = 60_000
CACHE_SIZE = 10_000


class Busy(Exception):
    """Too many key checks are waiting: the caller answers ``limit_reached``."""


def _fast(key: str) -> bytes:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()


class KeyChecker:
    """Checks (account, key) pairs for the front. See the module docstring."""

    def __init__(self, store: Store, now_ms: Callable[[], int], workers: int = WORKERS) -> None:
        self.store = store
        self.now_ms = now_ms
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="arena-keys")
        self.waiting = 0
        #: account name (lower case) -> (the stored hash it matched, SHA-256 of the key)
        self.cache: OrderedDict[str, tuple[str, bytes]] = OrderedDict()
        #: account name (lower case) -> times of its recent failed checks
        self.failures: dict[str, list[int]] = {}
        self.hashed = 0  # scrypt checks run (for tests and the operator's figures)

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)

    async def check(self, name: str, key: str) -> Account | None:
        """The account if ``key`` is its live key, else None (unknown, wrong, revoked: one
        answer). A banned account is returned: the caller refuses it with its reason.
        Raises :class:`Busy` when too many checks wait."""
        lk = name.lower()
        acct = self.store.account(name)
        stored = self.store.key_hash(name) if acct is not None else None
        hit = self.cache.get(lk)
        if stored is not None and hit is not None and hit[0] == stored and hmac.compare_digest(hit[1], _fast(key)):
            self.cache.move_to_end(lk)
            return acct
        now = self.now_ms()
        recent = [t for t in self.failures.get(lk, ()) if now - t < FAILURE_WINDOW_MS]
        if len(recent) >= MAX_FAILURES:
            self.failures[lk] = recent
            return None
        if self.waiting >= MAX_WAITING:
            raise Busy()
        self.waiting += 1
        try:
            against = stored if stored is not None else DUMMY_HASH
            loop = asyncio.get_running_loop()
            ok = await loop.run_in_executor(self.pool, verify_key, key if len(key) <= MAX_KEY_CHARS else "", against)
            self.hashed += 1
        finally:
            self.waiting -= 1
        if not ok or stored is None or acct is None:
            recent.append(self.now_ms())
            self.failures[lk] = recent
            if len(self.failures) > CACHE_SIZE:  # bounded: forget the oldest entries
                for k in list(self.failures)[: len(self.failures) // 2]:
                    del self.failures[k]
            return None
        self.failures.pop(lk, None)
        self.cache[lk] = (stored, _fast(key))
        self.cache.move_to_end(lk)
        while len(self.cache) > CACHE_SIZE:
            self.cache.popitem(last=False)
        # the account may have changed while the hash ran (revoked, banned): read it again
        fresh = self.store.account(name)
        return fresh if fresh is not None and not fresh.revoked and self.store.key_hash(name) == stored else None

    def forget(self, name: str) -> None:
        """Drop a cached key (the account was revoked, rotated or banned here)."""
        self.cache.pop(name.lower(), None)
