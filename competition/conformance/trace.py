"""What the kit saw of one game: every message of the bot under test, both ways, in order.

The :class:`GameTrace` is filled while the game runs (by the proxy's frame handler and
the runner) and read afterwards by :mod:`.checks`; nothing in it is interpreted while
the game runs except what the kit's probes need to fire.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

C2R = "bot->referee"
R2C = "referee->bot"


@dataclass
class Record:
    """One frame of the bot's conversation."""

    index: int
    conn: int
    direction: str
    t: float  # monotonic seconds
    msg: dict[str, Any] | None  # None when the frame did not decode
    problem: str | None = None  # why it did not decode, or "multipart"
    relayed: bool = True  # False when the kit had silenced the connection
    replaced_by: dict[str, Any] | None = None  # what the kit relayed instead (illegal probe)
    raw: bytes = b""  # the frame itself, kept only when it did not decode

    @property
    def type(self) -> str | None:
        t = self.msg.get("type") if self.msg else None
        return t if isinstance(t, str) else None


@dataclass
class Fault:
    """A probe the kit fired in this game."""

    kind: str  # "illegal" | "silence"
    record: int  # index of the record that triggered it
    t: float
    act: int  # the bot's move count in the game when it fired
    detail: str = ""


@dataclass
class GameTrace:
    """One game played by the bot under test."""

    variant: str
    index: int  # 0-based within its variant
    table: str
    seat: int
    token: str
    seed: int
    records: list[Record] = field(default_factory=list)
    connections: list[int] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    acts: int = 0
    last_prompt: dict[str, Any] | None = None
    idle_window: tuple[float, float] | None = None
    started: float = 0.0
    game_end: dict[str, Any] | None = None  # as the kit's spectator connection saw it
    ended: float | None = None
    problem: str | None = None  # the game could not be run or did not end
    exit_code: int | None = None
    exited_by_itself: bool = False
    exit_after: float | None = None  # seconds from game_end to the bot's exit
    stopped_by_term: bool = False  # still running after game_end; SIGTERM ended it within the grace
    hello_after: float | None = None  # seconds from the bot's start to its first hello with the token
    stderr_tail: str = ""
    arena: Any = None  # --arena: the bot's visit to the kit's stand-in arena (.arenadesk.ArenaVisit)

    @property
    def label(self) -> str:
        return f"{self.variant} game {self.index + 1} (seat {self.seat}, table {self.table})"

    def add(self, conn: int, direction: str, t: float, msg: dict[str, Any] | None, **kw: Any) -> Record:
        rec = Record(len(self.records), conn, direction, t, msg, **kw)
        self.records.append(rec)
        return rec

    def fault(self, kind: str) -> Fault | None:
        return next((f for f in self.faults if f.kind == kind), None)


def _abbreviate(value: Any, depth: int = 0) -> Any:
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k in ("view", "rules", "clock", "policies") and isinstance(v, dict) and depth == 0:
                out[k] = "{…}"
            else:
                out[k] = _abbreviate(v, depth + 1)
        return out
    if isinstance(value, list):
        return [_abbreviate(v, depth + 1) for v in value]
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    return value


def show(msg: dict[str, Any] | None, limit: int = 600, raw: bytes = b"") -> str:
    """A message as one line of JSON, views abbreviated, cut at ``limit`` characters."""
    if msg is None:
        return (
            f"(not a message: {len(raw)} bytes {raw[:48].hex(' ')}{' …' if len(raw) > 48 else ''})" if raw else "(not a message)"
        )
    text = json.dumps(_abbreviate(msg), separators=(",", ":"), ensure_ascii=False, default=repr)
    return text if len(text) <= limit else text[: limit - 1] + "…"
