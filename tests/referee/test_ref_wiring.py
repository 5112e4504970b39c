"""No part of the referee is handed the whole referee (issue 25 item 1).

Each part gets what it uses (the sends, a clock, the loop, one callable of another part),
and :class:`referee.server.Referee` only wires them. A part holding the referee could reach
anything through it again (``self.hub.lobby.tables...``): this test looks at every
attribute of every part of a started referee with a table, and fails if one of them is the
referee itself. Crash recovery and a table's own parts are looked at too.
"""

from __future__ import annotations

import asyncio
from typing import Any

from referee.config import RefereeConfig
from referee.server import Referee


def _attributes(obj: Any) -> dict[str, Any]:
    names = set(getattr(obj, "__dict__", {}))
    for cls in type(obj).__mro__:
        names.update(getattr(cls, "__slots__", ()))
    return {n: getattr(obj, n) for n in names if hasattr(obj, n)}


def test_no_part_holds_the_referee(tmp_path):
    async def main() -> dict[str, list[str]]:
        ref = Referee(RefereeConfig(bind="tcp://127.0.0.1:0", journal_dir=str(tmp_path), admin_key="k",
                                    rate_limit_per_s=100, rate_limit_burst=100, watcher_drop_limit=5,
                                    recovery_state=True))
        await ref.start()
        try:
            table = ref.create_table("t", seed=1)
            parts = {name: getattr(ref, name, None) for name in (
                "desk", "lobby", "watching", "admin", "entropy", "dispatcher", "doors", "transport",
                "limiter", "lag", "table_host")}
            parts["sender"] = getattr(ref.transport, "sender", None)
            parts["table"] = table
            for name in ("seating", "feed", "flow", "secrets"):
                parts[f"table.{name}"] = getattr(table, name, None)
            parts["recovery"] = ref.recovery
            parts["recovery.parts"] = getattr(ref.recovery, "parts", None)
            assert ref.recovery is not None
            assert sum(p is not None for p in parts.values()) >= 9
            holders: dict[str, list[str]] = {}
            for name, part in parts.items():
                if part is None:
                    continue
                for attr, value in _attributes(part).items():
                    if value is ref or getattr(value, "__self__", None) is ref:  # the referee, or a method of it
                        holders.setdefault(name, []).append(attr)
            return holders
        finally:
            await ref.stop()

    assert asyncio.run(main()) == {}
