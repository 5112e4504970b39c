"""TUI tests: a clean environment, so a developer's NO_COLOR or OKGIN_ASCII cannot change
what the colour snapshots see (the tests that want them set them themselves)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _clean_display_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("NO_COLOR", "OKGIN_ASCII", "OKGIN_FOUR_COLOUR", "TEXTUAL_THEME"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture(autouse=True)
def _private_state_dir(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Saved session tokens (clients.tui.saved_sessions) go to a test's own directory,
    never the developer's ~/.local/state."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))
