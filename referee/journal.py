"""Journals: one append-only JSON Lines file per game (protocol.md §12).

Why JSON Lines flushed after every entry: a human can read it with ``less``, a crash
loses at most the entry being written, and ``okgin replay FILE --check`` can re-run it
through the engine. Lines use :func:`okgin.canonical_json` (sorted keys, no spaces) so
two journals of the same game differ only in times.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import IO, Any

from okgin import canonical_json
from okgin.journal import JOURNAL_FORMAT, JOURNAL_VERSION, journal_base  # the reader's (okgin.journal) and the writer's are one

from .private import open_private, private_dir

__all__ = ["JOURNAL_FORMAT", "JOURNAL_VERSION", "Journal", "iso_now"]


class Journal:
    """One game's journal file. ``write`` appends one line and flushes it."""

    def __init__(self, directory: str | os.PathLike[str], table: str, game: int) -> None:
        # 0700 / 0600 (.private): a journal holds its game's seed, which deals every
        # other seating of the deal too, and its hidden cards.
        d = Path(directory)
        if not d.is_dir():
            private_dir(d)
        base = journal_base(table, game, time.time())
        path = d / f"{base}.jsonl"
        k = 1
        while True:
            try:
                # unbuffered binary: each entry is one write(2), already on its way to disk
                # when write() returns (no text layer, no separate flush)
                self._f: IO[bytes] | None = open_private(path, "xb", buffering=0)  # lives as long as the game
                break
            except FileExistsError:
                k += 1
                path = d / f"{base}-{k}.jsonl"
        self.path = path

    @classmethod
    def reopen(cls, path: str | os.PathLike[str]) -> Journal:
        """Append to an existing journal again (crash recovery, :mod:`referee.recovery`)."""
        j = cls.__new__(cls)
        j.path = Path(path)
        j._f = open_private(j.path, "ab", buffering=0)  # lives as long as the game
        return j

    def write(self, t: str, **fields: Any) -> None:
        f = self._f
        if f is None:
            return
        f.write((canonical_json({"t": t, **fields}) + "\n").encode())

    def write_action(self, seat: int, action: Any, seq: int, ms: int, auto: bool, n: int) -> None:
        """``write("action", seat=, action=action.to_wire(), seq=, ms=, auto=, n=)``, byte
        for byte, without a sorted ``json.dumps`` per move: the keys' sorted order is fixed
        here and an action's JSON is cached (the referee's most frequent entry)."""
        f = self._f
        if f is None:
            return
        if action.melds is None:  # a few hundred distinct actions at most: cached
            aj = _ACTION_JSON.get(action)
            if aj is None:
                aj = _ACTION_JSON[action] = canonical_json(action.to_wire())
        else:
            aj = canonical_json(action.to_wire())
        f.write(
            f'{{"action":{aj},"auto":{"true" if auto else "false"},"ms":{int(ms)},"n":{int(n)},'
            f'"seat":{int(seat)},"seq":{int(seq)},"t":"action"}}\n'.encode()
        )

    @property
    def closed(self) -> bool:
        return self._f is None

    def close(self) -> None:
        if self._f is not None:
            self._f.close()
            self._f = None


_ACTION_JSON: dict[Any, str] = {}


def iso_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
