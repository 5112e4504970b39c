"""Small wordings of the web pages: how long ago, a clock, a result (the game's own wording
is :mod:`okgin.wording`)."""

from __future__ import annotations

import datetime as dt
from typing import Any

__all__ = ["ago", "clock_words", "result_words", "utc"]


def utc(ms: int | None) -> str:
    """A stored time as ``2026-12-02 16:05 UTC``."""
    if ms is None:
        return ""
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def ago(ms: int | None, now_ms: int) -> str:
    """``ms`` as a time ago, in the largest whole unit: "40 s ago", "3 min ago", "2 h ago",
    then the date.

    >>> ago(1_000, 41_000), ago(0, 3 * 60_000 + 5), ago(None, 1)
    ('40 s ago', '3 min ago', '')
    """
    if ms is None:
        return ""
    d = max(0, now_ms - ms) // 1000
    if d < 60:
        return f"{d} s ago"
    if d < 3600:
        return f"{d // 60} min ago"
    if d < 86400:
        return f"{d // 3600} h ago"
    return utc(ms)


def clock_words(clock: dict[str, Any] | None) -> str:
    """A stored clock (its wire form) in a few words: "60 s a move", "5 min + 2 s"."""
    if not clock:
        return ""
    bank, inc, move = clock.get("bank_ms"), clock.get("increment_ms"), clock.get("move_ms")
    if bank:
        return f"{int(bank) // 60000} min" + (f" + {int(inc) // 1000} s" if inc else "")
    if move:
        return f"{int(move) // 1000} s a move"
    return "untimed"


def result_words(result: str) -> str:
    return {"win": "won", "loss": "lost", "draw": "drew", "void": "void"}.get(result, result)
