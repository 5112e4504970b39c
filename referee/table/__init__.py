"""One table of the referee, in parts that each own their state (see :mod:`referee.table.table`).

The rest of the referee imports :class:`Table`, the statuses and
the reveal modes from here.
"""

from .deals import REVEAL_AT_END, REVEAL_DEFERRED, REVEAL_HISTORY
from .status import CLOSED, FINISHED, PLAYING, WAITING, TableStatus
from .table import Table

__all__ = [
    "CLOSED", "FINISHED", "PLAYING", "REVEAL_AT_END", "REVEAL_DEFERRED", "REVEAL_HISTORY", "WAITING", "Table", "TableStatus",
]
