"""A table's ``status`` (protocol.md §6.10)."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["CLOSED", "FINISHED", "PLAYING", "WAITING", "TableStatus"]


class TableStatus(StrEnum):
    """A table's ``status`` (protocol.md): each member is its wire string."""

    WAITING = "waiting"
    PLAYING = "playing"
    FINISHED = "finished"
    CLOSED = "closed"


WAITING, PLAYING, FINISHED, CLOSED = TableStatus.WAITING, TableStatus.PLAYING, TableStatus.FINISHED, TableStatus.CLOSED
