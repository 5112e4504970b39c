"""Session tokens kept on disk, so a crashed terminal gets its seat back.

Why: the referee holds a disconnected seat for the table's grace (30 s by default, okgin.protocol.settings.Policies) and
gives it back to whoever presents the session's token. A TUI killed with its terminal
used to lose the token with it, so running the same command again found "every seat is
taken" and the seat was forfeited. Each token is saved here, keyed by endpoint, name and
table (empty for the quick-match queue), as soon as the referee welcomes us, and removed
when the game is over or the referee no longer knows it (``bad_token``).

The file is ``$XDG_STATE_HOME/okgin/sessions.json`` (default ``~/.local/state``), mode
0600 in a 0700 directory: a token *is* the seat, anyone holding it can play for you.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from okgin import env


@dataclass(frozen=True)
class SavedSession:
    endpoint: str
    name: str
    table: str  # "" for the quick-match queue
    token: str
    saved_at: float = 0.0

    @property
    def key(self) -> str:
        return session_key(self.endpoint, self.name, self.table)


def session_key(endpoint: str, name: str, table: str | None) -> str:
    return f"{endpoint} {name} {table or ''}"


def state_dir() -> Path:
    """okgin's directory of the player's own state: ``$XDG_STATE_HOME/okgin`` (default
    ``~/.local/state/okgin``), for the saved sessions and the statistics."""
    base = env.get("XDG_STATE_HOME") or ""
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".local" / "state"
    return root / "okgin"


def state_path() -> Path:
    return state_dir() / "sessions.json"


class SessionStore:
    """Read and write the saved sessions (every write replaces the file atomically)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or state_path()

    def _read(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {}
        return data.get("sessions", {}) if isinstance(data, dict) and isinstance(data.get("sessions"), dict) else {}

    def _write(self, sessions: dict[str, dict[str, Any]]) -> None:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            with os.fdopen(fd, "w") as f:
                json.dump({"format": "okgin-tui-sessions", "version": 1, "sessions": sessions}, f, indent=1, sort_keys=True)
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise

    def all(self) -> list[SavedSession]:
        out = []
        for entry in self._read().values():
            with contextlib.suppress(TypeError, KeyError):
                out.append(SavedSession(entry["endpoint"], entry["name"], entry.get("table") or "", entry["token"],
                                        float(entry.get("saved_at", 0.0))))
        return sorted(out, key=lambda s: -s.saved_at)

    def get(self, endpoint: str, name: str, table: str | None) -> SavedSession | None:
        key = session_key(endpoint, name, table)
        return next((s for s in self.all() if s.key == key), None)

    def save(self, endpoint: str, name: str, table: str | None, token: str) -> None:
        sessions = self._read()
        entry = SavedSession(endpoint, name, table or "", token, time.time())
        if sessions.get(entry.key, {}).get("token") == token:
            return
        sessions[entry.key] = asdict(entry)
        self._write(sessions)

    def remove(self, endpoint: str, name: str, table: str | None, token: str | None = None) -> bool:
        """Forget an entry (only if it still holds ``token``, when given)."""
        sessions = self._read()
        key = session_key(endpoint, name, table)
        if key not in sessions or (token is not None and sessions[key].get("token") != token):
            return False
        del sessions[key]
        self._write(sessions)
        return True
