"""Bot logs within bounds: per bot and game, and for the whole event; seat tokens redacted.

Why: a bot's standard output and error went straight into its log file, bounded only by
``RLIMIT_FSIZE`` (``file_mb``, 64 MB by default) and with no total: a crashing bot kept
64 MB of log per game, and 4 games took 268 MB (issue 24). Now the runner reads the bot's
output through a pipe and writes it itself:

- **per game** (``tournament.bot_log_kb``, default 1024): the first part is kept as it
  comes; past it, only the last :data:`TAIL_BYTES` (or a quarter of the limit) are kept,
  so a crash's last words (the traceback the forfeit's reason quotes) survive a bot that
  spewed before it; a line says how many bytes were dropped between.
- **per event** (``tournament.bot_logs_total_mb``, default 256): every log kept counts
  (a normal game's log, deleted at its end, gives its bytes back); once it is spent, new
  output is dropped and each log says so in one line.
- the bot's **own seat token** never reaches the file: it is replaced by ``[seat token]``,
  also when it is split across two reads.

Reading costs the runner about what writing costs the bot, and the bot's CPU time is
limited (``cpu_s``); nothing of the output is held in memory but the tail (at most
:data:`TAIL_BYTES`) and one read.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from typing import IO

READ_BYTES = 64 * 1024
TAIL_BYTES = 64 * 1024
REDACTED = b"[seat token]"


class LogBudget:
    """The bytes every bot log of this event may still take (``tournament.bot_logs_total_mb``)."""

    def __init__(self, total: int, used: int = 0) -> None:
        self.total = total
        self.left = max(0, total - used)
        self.exhausted = 0  # logs that found it spent

    def take(self, n: int) -> int:
        grant = max(0, min(n, self.left))
        self.left -= grant
        return grant

    def give_back(self, n: int) -> None:
        self.left = min(self.total, self.left + max(0, n))


class Redactor:
    """Replaces secrets in a byte stream, also one split across two chunks: the last
    ``len(longest) - 1`` bytes wait for the next chunk (or :meth:`flush`)."""

    def __init__(self, secrets: Sequence[bytes]) -> None:
        self.secrets = [s for s in secrets if s]
        self.keep = max((len(s) for s in self.secrets), default=1) - 1
        self.carry = b""

    def feed(self, chunk: bytes) -> bytes:
        data = self.carry + chunk
        for s in self.secrets:
            data = data.replace(s, REDACTED)
        if self.keep and len(data) > self.keep:
            data, self.carry = data[:-self.keep], data[-self.keep:]
        elif self.keep:
            data, self.carry = b"", data
        return data

    def flush(self) -> bytes:
        data, self.carry = self.carry, b""
        return data


class BoundedLog:
    """Writes one bot's output into its (already open) log file within both bounds."""

    def __init__(self, log: IO[bytes], limit: int, budget: LogBudget, secrets: Sequence[bytes] = ()) -> None:
        self.log = log
        self.limit = max(0, limit)
        self.tail_max = min(TAIL_BYTES, self.limit // 4)
        self.head_max = self.limit - self.tail_max
        self.budget = budget
        self.redactor = Redactor(secrets)
        self.head = 0  # bytes written from the start of the output
        self.tail = bytearray()  # the last bytes once the head is full
        self.dropped = 0  # output bytes between the head and the tail, dropped
        self.starved = 0  # output bytes dropped for the event's total
        self.written = 0  # bytes this log took from the budget

    def _write(self, data: bytes) -> None:
        if not data:
            return
        grant = self.budget.take(len(data))
        if grant:
            self.log.write(data[:grant])
            self.written += grant
        if grant < len(data):
            if not self.starved:
                self.budget.exhausted += 1
            self.starved += len(data) - grant

    def feed(self, chunk: bytes) -> None:
        self._route(self.redactor.feed(chunk))

    def _route(self, data: bytes) -> None:
        room = self.head_max - self.head
        if room > 0:
            self._write(data[:room])
            self.head += min(room, len(data))
            data = data[room:]
        if data and self.tail_max:
            self.tail += data
            if len(self.tail) > self.tail_max:
                cut = len(self.tail) - self.tail_max
                self.dropped += cut
                del self.tail[:cut]
        elif data:
            self.dropped += len(data)

    def close(self) -> None:
        """The end of the output: the rest of a split token, the tail, and what was dropped."""
        self._route(self.redactor.flush())
        if self.dropped:
            self.log.write(f"\n# ... {self.dropped} bytes of output dropped here (the log keeps {self.limit} bytes "
                           f"per bot and game: tournament.bot_log_kb) ...\n".encode())
        self._write(bytes(self.tail))
        self.tail.clear()
        if self.starved:
            self.log.write(f"\n# {self.starved} bytes of output dropped: the event's bot logs reached their limit of "
                           f"{self.budget.total} bytes (tournament.bot_logs_total_mb)\n".encode())
        with contextlib.suppress(ValueError, OSError):
            self.log.flush()


async def copy_output(stream: asyncio.StreamReader, out: BoundedLog) -> None:
    """Copy a bot's output pipe into its bounded log until end of file."""
    try:
        while True:
            chunk = await stream.read(READ_BYTES)
            if not chunk:
                return
            out.feed(chunk)
    finally:
        out.close()
