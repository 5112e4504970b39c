"""Sessions: who a client is, across connections (protocol.md §4.1, §10).

Identity is the referee-issued token, never the ZeroMQ routing id: libzmq accepts
duplicate routing ids silently and a reconnecting client gets a new one. A session keeps
its seats while its connection is gone (for the table's grace time) and is rebound to a
new routing id by a ``hello`` carrying its token.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field


def new_token() -> str:
    """128 random bits as 32 hex digits (protocol.md §13)."""
    return secrets.token_hex(16)


@dataclass(eq=False)
class Session:
    """One client identity. ``rid`` is None while disconnected."""

    token: str
    name: str
    role: str
    rid: bytes | None = None
    last_recv: float = 0.0
    last_sent: float = 0.0
    seats: dict[str, int] = field(default_factory=dict)  # table name -> seat
    watches: dict[str, bool] = field(default_factory=dict)  # table name -> full feed?
    queues: set[str] = field(default_factory=set)
    dropped: int = 0  # messages that could not be queued for this peer
    events: bool = True  # protocol 1.1: False = no `event` messages for this session's seats
    batch: bool = False  # protocol 1.3: events held and carried by the seat's next prompt/hand_end/...

    @property
    def batched(self) -> bool:
        """Whether this session's seats get their events batched (1.3; events=false wins)."""
        return self.batch and self.events

    @property
    def connected(self) -> bool:
        return self.rid is not None
