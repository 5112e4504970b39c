"""Fixtures of the conformance tests: the four example bots, built once per session."""

from __future__ import annotations

import pytest
from botbuild import LANGUAGES, BuiltBot, build


@pytest.fixture(scope="session")
def built_bots() -> dict[str, BuiltBot]:
    """Every example bot, built with its native tools (fails with the tool's output)."""
    return {lang: build(lang) for lang in LANGUAGES}
