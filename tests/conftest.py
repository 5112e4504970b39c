"""Shared pytest setup for the whole suite. Keep it minimal: fixtures live beside their tests.

- ``@pytest.mark.slow`` tests run only when ``OKGIN_SLOW=1`` (long fuzz, load, strength runs).
- Hypothesis runs without a deadline: tests never assert on wall-clock time, and the
  machine's two cores are shared, so a per-example deadline would only make tests flaky.
- Every ``timeout`` (the ini default and each ``@pytest.mark.timeout``) is a guard against a
  hang, not a speed check, so it is multiplied by ``OKGIN_TIMEOUT_SCALE`` (default 3): on a
  busy CI machine a CPU-bound test may take several times its quiet duration (the strength
  test took over 300 s at a load average of 11 on two cores), and a hang still ends the run.
"""

from __future__ import annotations

import pytest
from hypothesis import settings

from okgin import env

settings.register_profile("okgin", deadline=None)
settings.load_profile("okgin")


def _scaled_timeouts(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Give each test its timeout times ``OKGIN_TIMEOUT_SCALE``, as the closest marker."""
    raw = env.get("OKGIN_TIMEOUT_SCALE") or "3"
    try:
        scale = float(raw)
    except ValueError:
        raise pytest.UsageError(f"OKGIN_TIMEOUT_SCALE must be a number, not {raw!r}") from None
    if not scale > 0:
        raise pytest.UsageError(f"OKGIN_TIMEOUT_SCALE must be above 0, not {raw!r}")
    default = float(config.getini("timeout") or 0)
    for item in items:
        marker = item.get_closest_marker("timeout")
        if marker is None:
            base = default
        else:
            base = float(marker.args[0] if marker.args else marker.kwargs.get("timeout", default))
        if base > 0:  # 0 means "no timeout": leave it so
            item.add_marker(pytest.mark.timeout(base * scale), append=False)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    _scaled_timeouts(config, items)
    if env.get("OKGIN_SLOW") == "1":
        return
    skip = pytest.mark.skip(reason="slow: set OKGIN_SLOW=1 to run")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
