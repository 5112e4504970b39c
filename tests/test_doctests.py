"""Run every package's doctests: the examples in docstrings must stay true.

Every package of the repository is searched (okgin, referee, clients, competition, bench), not only
okgin: an example in a bot's docstring that nobody ran had gone wrong (issue 18:
``clients/bots/strong/fastdw.py`` said 21 where the code, rightly, gives 26). Only
modules whose source holds a ``>>>`` are imported, so collecting costs nothing for the
rest (and never imports a module only to find no example in it).

Collected here (rather than with ``--doctest-modules``) so that pytest's doctest
collection never imports the test tree's conftest files a second time.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("okgin", "referee", "clients", "competition", "arena", "bench")


def _modules() -> list[str]:
    names = []
    for pkg in PACKAGES:
        for m in pkgutil.walk_packages([str(ROOT / pkg)], f"{pkg}."):
            if m.name.endswith("__main__"):
                continue
            path = ROOT / (m.name.replace(".", "/") + ("/__init__.py" if m.ispkg else ".py"))
            if path.exists() and ">>>" in path.read_text(encoding="utf-8"):
                names.append(m.name)
    return sorted(names)


MODULES = _modules()


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} doctest(s) failed in {name}"
