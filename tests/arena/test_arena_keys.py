"""arena.keys and Store.check_key: a key works until it is revoked or rotated, and every
refusal (unknown name, wrong key, revoked key) costs the same scrypt work."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from arena import keys
from arena.store import Store


@pytest.fixture
def store() -> Store:
    s = Store.open("sqlite://:memory:")
    yield s
    s.close()


def test_a_key_is_stored_only_as_a_salted_scrypt_hash(store: Store) -> None:
    key = store.add_account("alice", "human")
    assert key.startswith("okga_") and len(key) == 48
    stored = store.conn.execute("SELECT key_hash FROM accounts").fetchone()[0]
    assert key not in stored and stored.startswith(f"scrypt${2**14}$8$1$")
    salt = stored.split("$")[4]
    assert len(bytes.fromhex(salt)) == 16
    # the same key hashed twice differs (the salt), and both verify
    a, b = keys.hash_key(key, n=16), keys.hash_key(key, n=16)
    assert a != b and keys.verify_key(key, a) and keys.verify_key(key, b)


def test_the_right_key_the_wrong_key_the_wrong_name(store: Store) -> None:
    key = store.add_account("alice", "human")
    acct = store.check_key("alice", key)
    assert acct is not None and acct.name == "alice" and acct.kind == "human"
    assert store.check_key("ALICE", key) == acct  # names are one account in any case
    assert store.check_key("alice", key[:-1] + ("A" if key[-1] != "A" else "B")) is None
    assert store.check_key("bob", key) is None
    assert store.check_key("alice", "") is None
    assert store.check_key("alice", key + "x" * 200) is None  # too long: refused, and bounded work
    assert store.check_key("no such/name", key) is None
    assert store.check_key(None, key) is None  # type: ignore[arg-type]
    assert store.check_key("alice", None) is None  # type: ignore[arg-type]


def test_revoked_and_rotated_keys_stop_at_once(store: Store) -> None:
    old = store.add_account("bot1", "bot")
    store.revoke("bot1")
    assert store.check_key("bot1", old) is None
    assert store.account("bot1").revoked
    new = store.rotate("bot1")
    assert new != old
    assert store.check_key("bot1", old) is None
    assert store.check_key("bot1", new) is not None and not store.account("bot1").revoked
    newer = store.rotate("bot1")
    assert store.check_key("bot1", new) is None and store.check_key("bot1", newer) is not None
    assert [w for _, w, _, _ in store.account_log("bot1")] == ["add", "revoke", "rotate", "rotate"]


def test_a_banned_account_still_authenticates_so_it_can_be_told_why(store: Store) -> None:
    key = store.add_account("carol", "human")
    store.ban("carol", "abuse", by="admin")
    acct = store.check_key("carol", key)
    assert acct is not None and acct.banned == "abuse"
    store.unban("carol", by="admin")
    assert store.check_key("carol", key).banned is None


def test_every_refusal_takes_the_constant_cost_path(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """Counted, not timed: each check runs exactly one scrypt with the default parameters,
    whether the name is unknown, the key wrong, the account revoked, or the key right."""
    key = store.add_account("dave", "bot")
    store.add_account("erin", "bot")
    store.revoke("erin")
    calls: list[tuple[int, int, int]] = []
    real = keys.hashlib.scrypt

    def counting(password: bytes, **kw: int) -> bytes:
        calls.append((kw["n"], kw["r"], kw["p"]))
        return real(password, **kw)

    monkeypatch.setattr(keys.hashlib, "scrypt", counting)
    for name, k in [("dave", key), ("dave", "okga_wrong"), ("nobody", key), ("erin", key), ("bad name!", key),
                    ("dave", "x" * 1000)]:
        calls.clear()
        store.check_key(name, k)
        assert calls == [(keys.N, keys.R, keys.P)], (name, calls)


def test_a_tampered_hash_cannot_make_a_check_expensive() -> None:
    assert not keys.verify_key("k", f"scrypt${2**24}$8$1${'00' * 16}${'00' * 32}")
    assert not keys.verify_key("k", "scrypt$1000$8$1$00$00")  # n not a power of two
    assert not keys.verify_key("k", "plain")
    assert not keys.verify_key("k", "scrypt$16$1$1$zz$00")


def test_key_files_are_0600_new_and_refused_when_others_can_read(tmp_path: Path) -> None:
    f = tmp_path / "alice.key"
    old = os.umask(0)
    try:
        keys.write_key_file(f, "okga_abc")
    finally:
        os.umask(old)
    assert stat.S_IMODE(f.stat().st_mode) == 0o600
    assert keys.read_key_file(f) == "okga_abc"
    with pytest.raises(FileExistsError):
        keys.write_key_file(f, "okga_other")
    os.chmod(f, 0o644)
    with pytest.raises(ValueError, match="owner alone"):
        keys.read_key_file(f)
    g = tmp_path / "big.key"
    g.write_text("x" * 500)
    os.chmod(g, 0o600)
    with pytest.raises(ValueError, match="at most"):
        keys.read_key_file(g)


def test_key_hash_is_the_live_keys_hash_or_none(store: Store) -> None:
    key = store.add_account("fay", "bot")
    h = store.key_hash("fay")
    assert h is not None and keys.verify_key(key, h)
    assert store.key_hash("nobody") is None and store.key_hash("bad name") is None
    store.revoke("fay")
    assert store.key_hash("fay") is None
    new = store.rotate("fay")
    assert store.key_hash("fay") != h and keys.verify_key(new, store.key_hash("fay"))
    assert not keys.verify_key(key, keys.DUMMY_HASH) and not keys.verify_key("", keys.DUMMY_HASH)
