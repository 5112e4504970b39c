"""The suite's timeouts are hang guards scaled by OKGIN_TIMEOUT_SCALE (tests/conftest.py)."""

from __future__ import annotations

import pytest

from okgin import env


def _scale() -> float:
    return float(env.get("OKGIN_TIMEOUT_SCALE") or "3")


@pytest.mark.timeout(7)
def test_a_marked_timeout_is_scaled(request: pytest.FixtureRequest) -> None:
    marker = request.node.get_closest_marker("timeout")
    assert marker is not None and marker.args[0] == pytest.approx(7 * _scale())


def test_the_default_timeout_is_scaled(request: pytest.FixtureRequest) -> None:
    marker = request.node.get_closest_marker("timeout")
    default = float(request.config.getini("timeout"))
    assert marker is not None and marker.args[0] == pytest.approx(default * _scale())
