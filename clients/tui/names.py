"""Seats' names cut to fit a column or a header line, still told apart.

Why its own module: the score sheet's column heads and the top line both cut names, and
a plain cut makes the built-in bots' names ("strong-bot-1", "strong-bot-2") the same.
"""

from __future__ import annotations

__all__ = ["COLUMN_NAME_WIDTH", "column_names"]

#: The widest a seat's name is written as a score sheet's column head.
COLUMN_NAME_WIDTH = 12


def column_names(names: list[str], width: int = COLUMN_NAME_WIDTH) -> list[str]:
    """Names cut to ``width`` for column heads, each still told apart from the others:
    the built-in bots' names differ only at the end ("strong-bot-1", "strong-bot-2"), so a
    plain cut would print the same head twice; a name that must be cut keeps its end.

    >>> column_names(["You", "strong-bot-1", "strong-bot-2"], 10)
    ['You', 'strong…t-1', 'strong…t-2']
    >>> column_names(["a-very-long-name", "bob"], 10)
    ['a-very-lo…', 'bob']
    """
    cut = [n if len(n) <= width else n[: width - 1] + "…" for n in names]
    if len(set(cut)) == len(cut):
        return cut
    out = []
    for n in names:
        if len(n) <= width:
            out.append(n)
            continue
        tail = min(3, width - 2)
        out.append(n[: width - 1 - tail] + "…" + n[-tail:])
    return out
