"""How a network client gets to a table (moved out of :mod:`clients.tui.net`, which is
about the connection, so the lobby and the command lines can name a seating without
importing ZeroMQ)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Seating:
    """What to do once connected: how this client gets to a table.

    ``mode``: ``quick`` (quick-match queue), ``join`` (a named table, created on first
    join), ``create`` (an admin creates ``table`` with a clock and rules, then we join
    it), ``watch`` (spectate), ``token`` (a reserved seat: the token in ``hello`` seats
    us at once; used by ``okgin play``).
    """

    mode: str = "quick"
    variant: str = "oklahoma"
    rules: dict[str, Any] = field(default_factory=dict)
    table: str | None = None
    seat: int | None = None
    clock: dict[str, int] | None = None
    admin_key: str | None = None
    full: bool = False
    broadcast_token: str | None = None  # with ``full``: the table's broadcast token (1.4)
