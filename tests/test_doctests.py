"""Run the engine's doctests: the examples in okgin's docstrings must stay true.

Collected here (rather than with ``--doctest-modules``) so that pytest's doctest
collection never imports the test tree's conftest files a second time.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import okgin

MODULES = sorted(m.name for m in pkgutil.walk_packages(okgin.__path__, "okgin.") if not m.name.endswith("__main__"))


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} doctest(s) failed in {name}"
