"""The files of crash recovery's state directory, ``JOURNAL_DIR/.okgin-state/`` (0700).

What is in them and why is :mod:`referee.recovery`'s docstring; this module only reads
and writes them: the ``flock`` that admits one referee per directory, ``sessions.log``
(appended, rewritten when it grows), ``tables/NAME.json`` (replaced atomically), all
0600, and a game's journal read back with a torn last line cut off.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from okgin.journal import JournalError, parse_journal

__all__ = ["STATE_DIR", "STATE_VERSION", "RecoveryError", "StateDir", "read_journal_entries", "token_hash", "write_private"]

STATE_DIR = ".okgin-state"
STATE_VERSION = 1


class RecoveryError(Exception):
    """A table's state cannot be restored (it is then skipped and reported)."""


def token_hash(token: str) -> str:
    """What the state keeps of a token: its SHA-256 (tokens are 128 random bits)."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def write_private(path: Path, text: str) -> None:
    """Replace ``path`` atomically by ``text``, readable by the owner only."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def read_journal_entries(path: Path) -> list[dict[str, Any]]:
    """A journal's entries; a torn last line (no newline: the process died mid-write,
    nobody was told of it) is cut off, in the file too. Parsed by
    :func:`okgin.journal.parse_journal`, the one journal reader's parser; recovery adds the
    cut: what follows the last newline was never acted on, even when it parses."""
    data = path.read_bytes()
    good = data.rfind(b"\n") + 1
    try:
        journal = parse_journal(data[:good].decode("utf-8"), str(path))
    except (JournalError, UnicodeDecodeError) as e:
        raise RecoveryError(str(e)) from None
    if good < len(data):
        with open(path, "r+b") as f:
            f.truncate(good)
    return journal.entries


def _line(entry: dict[str, Any]) -> str:
    return json.dumps(entry, separators=(",", ":")) + "\n"


class StateDir:
    """One referee's state directory (see the module docstring)."""

    def __init__(self, journal_dir: str | os.PathLike[str]) -> None:
        self.root = Path(journal_dir) / STATE_DIR
        self.tables_dir = self.root / "tables"
        self.log_path = self.root / "sessions.log"
        self._lock_fd: int | None = None
        self._log: Any = None
        self.log_lines = 0

    def acquire(self) -> bool:
        """Take the directory's lock; False if another live referee holds it."""
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(self.root, 0o700)
        fd = os.open(self.root / "lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._lock_fd = fd
        self.tables_dir.mkdir(exist_ok=True, mode=0o700)
        return True

    def load(self) -> tuple[dict[str, tuple[str, str]], list[dict[str, Any]], list[str]]:
        """The sessions (token hash -> (name, role)), the tables' states, and what could not be read."""
        sessions: dict[str, tuple[str, str]] = {}
        if self.log_path.exists():
            # "\n" only, as every journal reader (protocol.md §12); this log is ASCII (json.dumps escapes)
            for ln in self.log_path.read_text(encoding="utf-8", errors="replace").split("\n"):
                try:
                    e = json.loads(ln)
                except json.JSONDecodeError:
                    continue  # a torn last line
                if e.get("t") == "session":
                    sessions[e["h"]] = (e["name"], e["role"])
                elif e.get("t") == "forget":
                    sessions.pop(e["h"], None)
        states, failed = [], []
        for p in sorted(self.tables_dir.glob("*.json")):
            try:
                st = json.loads(p.read_text(encoding="utf-8"))
                if st.get("v") != STATE_VERSION:
                    raise ValueError(f"state version {st.get('v')}")
                states.append(st)
            except (OSError, ValueError) as e:
                failed.append(f"{p.name}: {e}")
        return sessions, states, failed

    def tidy(self, tables: set[str]) -> None:
        """After a restore: temporary files go; a table's file that was not restored is
        kept aside (``NAME.json.failed``) for a look."""
        for p in self.tables_dir.glob("*.tmp"):
            p.unlink(missing_ok=True)
        for p in self.tables_dir.glob("*.json"):
            if p.stem not in tables:
                p.rename(p.with_name(f"{p.name}.failed"))

    def append(self, entry: dict[str, Any]) -> None:
        """One line of ``sessions.log`` (nothing before :meth:`rewrite_log` opened it)."""
        if self._log is None:
            return
        self._log.write(_line(entry))
        self._log.flush()
        self.log_lines += 1

    def rewrite_log(self, entries: list[dict[str, Any]]) -> None:
        """Replace ``sessions.log`` by ``entries`` and keep appending to it."""
        if self._log is not None:
            self._log.close()
        write_private(self.log_path, "".join(_line(e) for e in entries))
        self._log = open(self.log_path, "a", encoding="utf-8")  # lives as long as the referee
        self.log_lines = len(entries)

    def write_table(self, name: str, state: dict[str, Any]) -> None:
        write_private(self.tables_dir / f"{name}.json", json.dumps({"v": STATE_VERSION, **state}, separators=(",", ":")))

    def remove_table(self, name: str) -> None:
        (self.tables_dir / f"{name}.json").unlink(missing_ok=True)

    def clear(self) -> None:
        """A clean stop: nothing is left to recover; the lock is let go."""
        if self._log is not None:
            self._log.close()
            self._log = None
        for p in self.tables_dir.glob("*"):
            p.unlink(missing_ok=True)
        self.log_path.unlink(missing_ok=True)
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None
