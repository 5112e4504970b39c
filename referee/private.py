"""Files and directories only their owner can read: journals, logs, run directories.

Why: on a shared host every other local user reads what the umask leaves open (0755
directories, 0644 files). A journal holds its game's seed, which decides every card of
each other seating of the same deal, still being played; a bot's log may hold what the
bot saw. Another local user read deal seeds from finished journals while other games of
those deals were still running (issue 24). So these are created 0700 / 0600 whatever the
umask, and a directory that already exists is narrowed to 0700 (a run resumed after an
older version made it 0755).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO

DIR_MODE = 0o700
FILE_MODE = 0o600


def private_dir(path: str | os.PathLike[str]) -> Path:
    """``path`` (and missing parents), mode 0700 for ``path`` itself even if it existed."""
    d = Path(path)
    d.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
    if d.stat().st_mode & 0o777 != DIR_MODE:
        os.chmod(d, DIR_MODE)
    return d


def open_private(path: str | os.PathLike[str], mode: str = "xb", buffering: int = -1) -> IO[bytes]:
    """Open a binary file readable by its owner alone: ``"xb"`` (new, FileExistsError if
    it exists), ``"ab"`` (append, made if missing) or ``"wb"``. An existing file opened
    to append or write is narrowed to 0600 too."""
    flags = {"xb": os.O_CREAT | os.O_EXCL, "ab": os.O_CREAT | os.O_APPEND, "wb": os.O_CREAT | os.O_TRUNC}[mode]
    fd = os.open(path, os.O_WRONLY | flags | getattr(os, "O_CLOEXEC", 0), FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)
        return os.fdopen(fd, mode.replace("x", "w") if mode == "xb" else mode, buffering=buffering)
    except BaseException:
        os.close(fd)
        raise
