"""Reading a referee's journal (protocol.md §12): the one reader every tool uses.

A journal is JSON Lines: one JSON object per line, each with its type in ``"t"``, the
first a ``start`` line (``format`` okgin-journal, ``version`` 1) and, once the game is
over, an ``end`` line with the revealed seed and the engine's record. The replay checker
(``okgin replay --check``), the TUI's replay, the tournament runner and ``okgin match
--via-referee`` all read journals through :func:`read_journal`, so they agree on what a
journal is; each keeps its own checks on the entries.

Two rules every reader needs and is easy to get wrong:

- **Lines end at "\\n" only.** ``str.splitlines`` (and text-mode files with universal
  newlines) also end lines at U+2028, U+2029, U+0085 and "\\r", which a JSON string may
  hold raw (``canonical_json`` keeps non-ASCII as it is): a player named with U+2028
  would split its line in two.
- **A torn last line is no error.** The referee writes each entry with one write and
  its newline; a referee killed mid-write, or a journal read while its game is being
  played, may end in a partial line. Such a line (no newline after it, not a JSON
  entry) is left out and reported as ``torn``; a bad line anywhere else is corruption
  and raises :class:`JournalError`.

This module is the engine's side (``okgin`` imports nothing of ``referee``); the writer
is ``referee.journal``.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "JOURNAL_FORMAT", "JOURNAL_VERSION", "JournalError", "JournalFile", "journal_base", "parse_journal",
    "read_journal",
]

JOURNAL_FORMAT = "okgin-journal"
JOURNAL_VERSION = 1


def journal_base(table: str, game: int, started: float) -> str:
    """A journal's file name without ``.jsonl``: ``TABLE-gGAME-STAMP``, STAMP the UTC second
    the game started (``20261203T091500Z``). Here, beside the reader, because the writer
    (``referee.journal``) names files with it and the tools that look a game's journal up
    by its table (``competition.tournament.records.find_journal``) must name them the same."""
    return f"{table}-g{game}-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime(started))}"


class JournalError(ValueError):
    """The file is not a readable journal; the message names the file and the line."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


@dataclass(frozen=True)
class JournalFile:
    """A journal's entries, in order, as parsed (never changed by the reader)."""

    path: str
    entries: list[dict[str, Any]]
    lines: list[int]  # the 1-based line number of each entry (blank lines are skipped)
    torn: bool = False  # the last line was cut off mid-write and is left out

    @property
    def start(self) -> dict[str, Any]:
        return self.entries[0]

    @property
    def end(self) -> dict[str, Any] | None:
        """The ``end`` line, or None while the game has not ended (or never will)."""
        last = self.entries[-1]
        return last if last.get("t") == "end" else None

    @property
    def record(self) -> dict[str, Any] | None:
        """The engine's game record from the ``end`` line (for
        :meth:`okgin.Game.from_record`), or None while the game has not ended."""
        end = self.end
        record = None if end is None else end.get("record")
        return record if isinstance(record, dict) else None


def _entry(line: str) -> dict[str, Any] | None:
    try:
        e = json.loads(line)
    except json.JSONDecodeError:
        return None
    return e if isinstance(e, dict) and isinstance(e.get("t"), str) else None


def parse_journal(text: str, path: str = "<journal>") -> JournalFile:
    """The journal in ``text`` (raises :class:`JournalError`); see the module's rules."""
    pieces = text.split("\n")  # "\n" only (protocol.md §12)
    torn = False
    if pieces and pieces[-1].strip() and _entry(pieces[-1]) is None:
        pieces.pop()  # no newline after it and not an entry: cut off mid-write
        torn = True
    entries: list[dict[str, Any]] = []
    numbers: list[int] = []
    for i, line in enumerate(pieces, 1):
        if not line.strip():
            continue
        try:
            e = json.loads(line)
        except json.JSONDecodeError as err:
            raise JournalError(f"{path} line {i} is not JSON: {err}", i) from None
        if not isinstance(e, dict) or not isinstance(e.get("t"), str):
            raise JournalError(f"{path} line {i} is not a journal entry (a JSON object with 't')", i)
        entries.append(e)
        numbers.append(i)
    if not entries or entries[0]["t"] != "start":
        raise JournalError(f"{path} does not begin with a 'start' line", numbers[0] if entries else None)
    s = entries[0]
    if s.get("format") != JOURNAL_FORMAT or s.get("version") != JOURNAL_VERSION:
        raise JournalError(f"{path} is not an {JOURNAL_FORMAT} v{JOURNAL_VERSION} journal", numbers[0])
    return JournalFile(path, entries, numbers, torn)


def read_journal(path: str | Path) -> JournalFile:
    """Read and parse the journal at ``path`` (raises :class:`JournalError`).

    Read as bytes and decoded: a text-mode read would translate "\\r" into a line end."""
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except OSError as e:
        raise JournalError(f"cannot read {path}: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise JournalError(f"cannot read {path}: not UTF-8 ({e})") from None
    return parse_journal(text, str(path))
