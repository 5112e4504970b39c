"""The static checks CI runs, inside the one test command: ``ruff check`` on the whole repo
and ``mypy`` on ``okgin/`` (the pure engine and the protocol core, okgin/protocol/), both as
configured in pyproject.toml. mypy keeps its cache in .mypy_cache, so a rerun takes a second."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> None:
    try:
        p = subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=240)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"{' '.join(args)} took over {e.timeout} s")
    if p.returncode != 0:
        pytest.fail(f"{' '.join(args)} exited {p.returncode}:\n{p.stdout}{p.stderr}", pytrace=False)


def test_ruff_check() -> None:
    _run("ruff", "check", ".")


def test_mypy_okgin() -> None:
    _run("mypy", "okgin")
