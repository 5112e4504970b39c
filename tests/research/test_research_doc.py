"""Every ```python block of docs/research.md runs as written, from the clone's root.

Why a subprocess per block, run from the repository root: that is what a reader does
after ``pip install -e '.[research]'`` on a fresh clone (paste a block into ``python3``
there), so a block may not lean on another block's names or on this test's imports.
The MCP section's blocks are left to that work's own tests (tests/research/test_mcp*.py).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyspiel")
pytest.importorskip("pettingzoo")
pytest.importorskip("gymnasium")

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "research.md"
SKIP_SECTIONS = ("Language-model agents over MCP",)


def python_blocks(text: str) -> list[tuple[str, int, str]]:
    """(section heading, line number, code) of each ```python block outside the skipped sections."""
    blocks: list[tuple[str, int, str]] = []
    section = ""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r"^## (.+)$", line)
        if m:
            section = m.group(1).strip()
        if line.strip() == "```python":
            start = i + 1
            j = start
            while j < len(lines) and lines[j].strip() != "```":
                j += 1
            if not any(section.startswith(s) for s in SKIP_SECTIONS):
                blocks.append((section, start + 1, "\n".join(lines[start:j]) + "\n"))
            i = j
        i += 1
    return blocks


BLOCKS = python_blocks(DOC.read_text(encoding="utf-8"))


def test_the_doc_has_examples() -> None:
    sections = {s for s, _, _ in BLOCKS}
    assert {"OpenSpiel", "PettingZoo and Gymnasium"} <= sections
    assert any(s.startswith("Engine") for s in sections)


@pytest.mark.parametrize(("section", "line", "code"), BLOCKS, ids=[f"line{ln}" for _, ln, _ in BLOCKS])
def test_block_runs(section: str, line: int, code: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=240
    )
    assert proc.returncode == 0, f"docs/research.md line {line} ({section}) failed:\n{proc.stdout}\n{proc.stderr}"
