"""API keys of arena accounts: made once, shown once, kept only as slow salted hashes.

Why scrypt with these parameters (n=2**14, r=8, p=1, 16-byte salt): a stolen database must
not give away keys, and a key is checked once per connection, not per message, so a check
may cost tens of milliseconds of CPU and 16 MiB (128 * r * n bytes) of memory; that is the
cost an attacker pays per guess, too. The keys themselves are 256 random bits
(``secrets.token_urlsafe(32)``), so no guessing succeeds anyway; the hash protects the keys
of a database that leaks, and the salt keeps two equal hashes from showing.

A hash is stored as ``scrypt$n$r$p$salt_hex$hash_hex``, so a later version may raise the cost
and still check old hashes. :func:`verify_key` reads only parameters within
:data:`MAX_N`/:data:`MAX_R`/:data:`MAX_P` (a tampered row cannot make a check take minutes)
and compares digests in constant time. :func:`burn` spends the same work for an unknown
account, so a wrong name, a wrong key and a revoked key cost the same (no name can be told
from the time a refusal takes).

>>> k = new_key()
>>> k.startswith(PREFIX) and len(k) == len(PREFIX) + 43
True
>>> h = hash_key(k, n=2**4)
>>> verify_key(k, h), verify_key(k + "x", h)
(True, False)
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

__all__ = [
    "DUMMY_HASH",
    "KEY_BYTES",
    "MAX_KEY_CHARS",
    "MAX_N",
    "MAX_P",
    "MAX_R",
    "PREFIX",
    "SALT_BYTES",
    "N",
    "P",
    "R",
    "burn",
    "hash_key",
    "new_key",
    "read_key_file",
    "verify_key",
    "write_key_file",
]

PREFIX = "okga_"  #: every arena key starts so: a leaked key is recognisable (secret scanners, logs)
KEY_BYTES = 32
SALT_BYTES = 16
N, R, P = 2**14, 8, 1
MAX_N, MAX_R, MAX_P = 2**16, 8, 2  # at most 128 MiB and a second or so per check, even from a tampered row
MAX_KEY_CHARS = 100  #: the wire's bound on ``hello.key``; longer inputs are refused before any hashing
_DKLEN = 32


def new_key() -> str:
    """A fresh API key: ``okga_`` and 43 URL-safe characters (256 random bits)."""
    return PREFIX + secrets.token_urlsafe(KEY_BYTES)


def _scrypt(key: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return hashlib.scrypt(key.encode("utf-8", "surrogatepass"), salt=salt, n=n, r=r, p=p,
                          maxmem=256 * r * n + (1 << 20), dklen=_DKLEN)


def hash_key(key: str, n: int = N, r: int = R, p: int = P) -> str:
    """The stored form of ``key``: ``scrypt$n$r$p$salt_hex$hash_hex`` with a new random salt."""
    salt = os.urandom(SALT_BYTES)
    return f"scrypt${n}${r}${p}${salt.hex()}${_scrypt(key, salt, n, r, p).hex()}"


def _parse(stored: str) -> tuple[bytes, int, int, int, bytes] | None:
    parts = stored.split("$")
    if len(parts) != 6 or parts[0] != "scrypt":
        return None
    try:
        n, r, p = int(parts[1]), int(parts[2]), int(parts[3])
        salt, digest = bytes.fromhex(parts[4]), bytes.fromhex(parts[5])
    except ValueError:
        return None
    if not (2 <= n <= MAX_N and n & (n - 1) == 0 and 1 <= r <= MAX_R and 1 <= p <= MAX_P and salt and len(digest) == _DKLEN):
        return None
    return salt, n, r, p, digest


#: What :func:`burn` hashes against: the default parameters, so an unknown name costs what a known one does.
DUMMY_HASH = f"scrypt${N}${R}${P}${'00' * SALT_BYTES}${'00' * _DKLEN}"


def verify_key(key: str, stored: str) -> bool:
    """True if ``key`` is the key ``stored`` was made from. A key longer than
    :data:`MAX_KEY_CHARS` and a malformed ``stored`` are False; the digest comparison takes the
    same time wherever the digests differ (``hmac.compare_digest``)."""
    parsed = _parse(stored)
    if parsed is None:
        return False
    salt, n, r, p, digest = parsed
    candidate = key[:MAX_KEY_CHARS] if isinstance(key, str) else ""
    ok = hmac.compare_digest(_scrypt(candidate, salt, n, r, p), digest)
    return ok and isinstance(key, str) and len(key) <= MAX_KEY_CHARS


def burn(key: str) -> bool:
    """Spend what checking ``key`` against a real hash costs, and return False: the path for
    an unknown or revoked account."""
    verify_key(key, DUMMY_HASH)
    return False


def write_key_file(path: str | os.PathLike[str], key: str) -> Path:
    """Write ``key`` to a new file readable by its owner alone (0600 whatever the umask);
    FileExistsError if it exists (a key file is never overwritten by mistake)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, (key + "\n").encode("ascii"))
    finally:
        os.close(fd)
    return Path(path)


def read_key_file(path: str | os.PathLike[str]) -> str:
    """The key in ``path`` (its first line, stripped). ValueError if the file is larger than a
    key could be, empty, or readable by others than its owner (group or world bits set): a
    key in such a file is no longer only its owner's."""
    p = Path(path)
    with open(p, "rb") as f:
        mode = os.fstat(f.fileno()).st_mode
        data = f.read(MAX_KEY_CHARS + 3)
    if mode & 0o077:
        raise ValueError(f"{p}: a key file must be readable by its owner alone (chmod 600 {p})")
    lines = data.decode("utf-8", "replace").splitlines()
    key = lines[0].strip() if lines else ""
    if not key or len(key) > MAX_KEY_CHARS:
        raise ValueError(f"{p}: no key of at most {MAX_KEY_CHARS} characters on its first line")
    return key
