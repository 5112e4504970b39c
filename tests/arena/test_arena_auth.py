"""arena/auth.py: the front's key checks, bounded, against a real store (no arena process)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import arena.auth as auth
from arena.auth import MAX_FAILURES, Busy, KeyChecker
from arena.store import Store


def test_checks_are_cached_by_stored_hash_and_failures_are_bounded(tmp_path: Path) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'a.db'}")
    key = store.add_account("ann", "bot")
    now = [0]
    checker = KeyChecker(store, lambda: now[0])

    async def run() -> None:
        assert (await checker.check("ann", key)).name == "ann"  # type: ignore[union-attr]
        assert checker.hashed == 1
        assert (await checker.check("ANN", key)) is not None and checker.hashed == 1  # from memory
        for _ in range(MAX_FAILURES):
            assert await checker.check("ann", "okga_wrong") is None
        hashed = checker.hashed
        assert await checker.check("ann", "okga_wrong") is None and checker.hashed == hashed  # refused unhashed
        assert await checker.check("ann", key) is not None  # its owner, verified lately, still gets in
        now[0] += auth.FAILURE_WINDOW_MS
        assert await checker.check("ann", "okga_wrong") is None and checker.hashed == hashed + 1
        new = store.rotate("ann")
        assert await checker.check("ann", key) is None  # the cached old key misses: the stored hash changed
        assert await checker.check("ann", new) is not None
        store.revoke("ann")
        assert await checker.check("ann", new) is None
        assert await checker.check("nobody", key) is None  # the same answer, after the same work

    try:
        asyncio.run(run())
    finally:
        checker.close()
        store.close()


def test_too_many_waiting_checks_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'a.db'}")
    keys = {n: store.add_account(n, "bot") for n in ("a", "b", "c")}
    monkeypatch.setattr(auth, "MAX_WAITING", 2)
    checker = KeyChecker(store, lambda: 0)

    async def run() -> list[object]:
        return await asyncio.gather(*(checker.check(n, k) for n, k in keys.items()), return_exceptions=True)

    try:
        got = asyncio.run(run())
        assert sum(isinstance(g, Busy) for g in got) == 1 and sum(g is not None and not isinstance(g, Busy) for g in got) == 2
    finally:
        checker.close()
        store.close()
