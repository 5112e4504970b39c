"""The engine's exceptions: one for illegal moves, one for bad rule settings.

Both derive from ``ValueError`` so that a caller catching bad input in general catches
them too, while the referee can tell an illegal move (answered with an error message,
the game untouched) from a bad table configuration (refused before any game starts).
"""

from __future__ import annotations

__all__ = ["IllegalAction", "RuleError"]


class IllegalAction(ValueError):
    """An action the rules do not allow now. The message is one sentence saying why.

    The engine validates before it mutates, so a state that raised this is unchanged.
    """


class RuleError(ValueError):
    """A ``RuleSet`` option with an unknown name or a value out of range."""
