"""Helpers for the tournament tests: config files, bot commands, process inspection."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

PROTOBOT = str(Path(__file__).with_name("protobot.py"))
REPO = Path(__file__).resolve().parents[2]


def protobot(*extra: str) -> list[str]:
    """A ``command`` participant running the test bot that speaks the protocol directly."""
    return [sys.executable, PROTOBOT, "{endpoint}", *extra]


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(v)


def write_config(path: Path, participants: list[dict[str, Any]], **sections: dict[str, Any]) -> Path:
    """A TOML file from plain dicts (tomllib reads TOML but cannot write it)."""
    lines = []
    for name, table in sections.items():
        lines.append(f"[{name}]")
        lines += [f"{k} = {_toml_value(v)}" for k, v in table.items()]
        lines.append("")
    for p in participants:
        lines.append("[[participant]]")
        lines += [f"{k} = {_toml_value(v)}" for k, v in p.items()]
        lines.append("")
    path.write_text("\n".join(lines))
    return path


def children_of(pid: int) -> list[int]:
    """Direct children of ``pid`` (from /proc)."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(d))
    return out


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def games_recorded(db: Path) -> int:
    """Games in a results file another process is writing (0 while it is being created)."""
    from competition.tournament.store import ResultsStore, StoreError

    if not db.exists():
        return 0
    try:
        st = ResultsStore.open_existing(db)
    except StoreError:
        return 0
    try:
        return st.count_games()
    finally:
        st.close()
