"""docs/research.md, section "Language-model agents over MCP": its examples run as written.

The research doc's own test skips this section (it is the MCP work's); this one runs the
section's ``python`` blocks, each in a fresh interpreter at the repository root (as a reader
would paste them), checks that the JSON host configuration parses and that its arguments
are ones ``okgin mcp`` accepts, and that every tool the section names is one the server has.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEADING = "## Language-model agents over MCP"


def section() -> str:
    text = (ROOT / "docs" / "research.md").read_text(encoding="utf-8")
    assert HEADING in text
    body = text.split(HEADING, 1)[1]
    return re.split(r"^## ", body, flags=re.M)[0]


def blocks(lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", section(), flags=re.M | re.S)


@pytest.mark.parametrize("index", range(len(blocks("python"))))
def test_python_examples_run(index: int) -> None:
    code = blocks("python")[index]
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip()


def test_there_are_examples() -> None:
    assert len(blocks("python")) >= 2 and len(blocks("json")) >= 1


def test_host_configuration_is_what_okgin_mcp_accepts() -> None:
    pytest.importorskip("mcp")
    from clients.mcp.cli import build_parser

    for block in blocks("json"):
        config = json.loads(block)
        for server in config["mcpServers"].values():
            assert server["command"] == "okgin" and server["args"][0] == "mcp"
            args = build_parser().parse_args(server["args"][1:])
            assert args.table and args.connect


def test_the_tools_named_are_the_servers() -> None:
    pytest.importorskip("mcp")
    from clients.mcp.server import build_server

    named = set(re.findall(r"^\| `(\w+)` \|", section(), flags=re.M))

    class NoSeat:  # build_server only closes over the seat; listing tools never calls it
        rules = None

    server = build_server(NoSeat())  # type: ignore[arg-type]
    tools = asyncio.run(server.list_tools())
    assert named == {t.name for t in tools} == {
        "state", "legal_moves", "play", "advise", "history", "rules", "resign", "rematch"
    }
