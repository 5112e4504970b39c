"""docs/tournaments.md's "A complete example" runs as written (issue 15 item 5/4: an
example that does not run is worse than none)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from competition.tournament.cli import main
from competition.tournament.store import ResultsStore

from .tourkit import REPO

pytestmark = pytest.mark.timeout(300)


def example_toml() -> str:
    text = (REPO / "docs" / "tournaments.md").read_text(encoding="utf-8")
    section = text.split("\n## A complete example\n", 1)[1].split("\n## ", 1)[0]
    m = re.search(r"```toml\n(.*?)```", section, re.S)
    assert m, "the complete example has no TOML block"
    return m.group(1)


def test_the_complete_example_runs_as_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = example_toml()
    data = tomllib.loads(text)
    name = data["tournament"]["name"]
    assert all("bot" in p for p in data["participant"])  # built-ins only: nothing to build
    cfg = tmp_path / f"{name}.toml"
    cfg.write_text(text, encoding="utf-8")
    assert main([str(cfg), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "12/12 games, finished" in out and "secret " in out
    st = ResultsStore.open_existing(tmp_path / f"{name}.sqlite")
    try:
        assert st.count_games() == 12 and {g.termination for g in st.games()} == {"normal"}
    finally:
        st.close()
    assert main(["verify", str(tmp_path / f"{name}.sqlite")]) == 0
