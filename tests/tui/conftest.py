"""TUI tests: a clean environment, so a developer's NO_COLOR or OKGIN_ASCII cannot change
what the colour snapshots see (the tests that want them set them themselves)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _clean_display_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("NO_COLOR", "OKGIN_ASCII", "OKGIN_FOUR_COLOUR", "TEXTUAL_THEME"):
        monkeypatch.delenv(var, raising=False)
