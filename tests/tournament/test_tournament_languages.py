"""A tournament among the built-in ``random`` and ``simple`` bots and the C example bot.

The built-ins run as ``okgin bot NAME`` processes (the runner never imports clients/);
the C bot is a ``command`` participant, built here with its Makefile the way its README
tells a user to. Bots are seeded from the game's key, so the games, and this table,
are the same on every run.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from competition.tournament.cli import main
from competition.tournament.report import report_from_store
from competition.tournament.store import ResultsStore
from okgin import Game

from .tourkit import REPO, write_config

pytestmark = pytest.mark.timeout(300)


def build_c_bot() -> Path:
    if shutil.which("make") is None or shutil.which("pkg-config") is None:
        pytest.skip("make or pkg-config missing: cannot build clients/c")
    sys.path.insert(0, str(REPO / "tests" / "conformance"))
    try:
        from botbuild import build
    finally:
        sys.path.pop(0)
    return Path(build("c").command[0])


def test_random_simple_and_c(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    c_bot = build_c_bot()
    parts = [
        {"name": "random", "bot": "random"},
        {"name": "simple", "bot": "simple"},
        {"name": "c-simple", "command": [str(c_bot), "--connect", "{endpoint}", "--name", "{name}"]},
    ]
    cfg = write_config(tmp_path / "langs.toml", parts, clock={"move_ms": 10000},
                       tournament={"seed": "langs", "games_per_pairing": 2, "concurrency": 2, "referees": 2})
    assert main([str(cfg), "--quiet"]) == 0
    st = ResultsStore.open_existing(tmp_path / "langs.sqlite")
    games = st.games(with_records=True)
    assert len(games) == 6 and all(g.termination == "normal" for g in games)
    assert len({g.referee for g in games}) == 2  # both referees played
    for g in games:
        Game.from_record(g.record, verify=True)
    rep = report_from_store(st)
    assert [s.games for s in rep.standings] == [4, 4, 4]
    assert rep.standings[-1].name == "random" and rep.standings[-1].wins == 0
    assert "Tournament langs: round robin, 6/6 games, finished" in capsys.readouterr().out
