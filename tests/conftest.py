"""Shared pytest setup for the whole suite. Keep it minimal: fixtures live beside their tests.

- ``@pytest.mark.slow`` tests run only when ``OKGIN_SLOW=1`` (long fuzz, load, strength runs).
- Hypothesis runs without a deadline: tests never assert on wall-clock time, and the
  machine's two cores are shared, so a per-example deadline would only make tests flaky.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

settings.register_profile("okgin", deadline=None)
settings.load_profile("okgin")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("OKGIN_SLOW") == "1":
        return
    skip = pytest.mark.skip(reason="slow: set OKGIN_SLOW=1 to run")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
