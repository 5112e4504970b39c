"""The static checks CI runs, inside the one test command: ``ruff check`` on the whole repo
and ``mypy`` on every package pyproject.toml's ``[tool.mypy] files`` lists (okgin, referee,
clients, competition, arena, and bench/'s scripts), both as configured there. A package is
listed once it is clean; MYPY_PACKAGES below is the floor, so a package cannot be dropped from
the list unnoticed. mypy keeps its cache in .mypy_cache, so a rerun takes a second."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# The packages that must stay mypy-clean (issue 25 item 4: every Python package), and the
# benchmark scripts (bench/, bench/strength/), which import the packages and go stale with them.
MYPY_PACKAGES = ("okgin", "referee", "clients", "competition", "arena", "bench")


def _run(*args: str) -> None:
    try:
        p = subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=240)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"{' '.join(args)} took over {e.timeout} s")
    if p.returncode != 0:
        pytest.fail(f"{' '.join(args)} exited {p.returncode}:\n{p.stdout}{p.stderr}", pytrace=False)


def test_ruff_check() -> None:
    _run("ruff", "check", ".")


def _mypy_files() -> list[str]:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return list(tomllib.load(f)["tool"]["mypy"]["files"])


def test_mypy_covers_the_packages() -> None:
    missing = sorted(set(MYPY_PACKAGES) - set(_mypy_files()))
    assert not missing, f"pyproject.toml [tool.mypy] files lacks {missing}"


@pytest.mark.parametrize("package", _mypy_files())
def test_mypy(package: str) -> None:
    _run("mypy", package)
