"""Where a run's files go, and what a replayed game leaves (issue 24, item 9).

``--db`` moves every output: two events of one config with two results files never
overwrite each other's CSV, JSON, chart or run directory (before, only the results file
moved and the CSV/JSON/chart of the second run silently replaced the first's). A game
played more than once is recorded with its attempt count, shown by ``report --games``
and in the JSON (the Dask case, a worker killed mid-game, is in
tests/cluster/test_tournament_dask.py).
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from competition.tournament.cli import main
from competition.tournament.config import load_config
from competition.tournament.store import GameResult, ResultsStore

from .tourkit import protobot, write_config

pytestmark = pytest.mark.timeout(240)

FAST_RULES = {"target_score": 40}


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(list(argv))
    return code, out.getvalue()


def test_db_moves_every_output(tmp_path: Path) -> None:
    parts = [{"name": "a", "command": protobot("--random", "1")}, {"name": "b", "command": protobot("--random", "2")}]
    cfg = write_config(tmp_path / "cup.toml", parts, tournament={"games_per_pairing": 2}, rules=FAST_RULES)
    code, out1 = run(str(cfg), "--quiet", "--db", str(tmp_path / "first.sqlite"))
    assert code == 0, out1
    first = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file() and p.name.startswith("first")}
    code, out2 = run(str(cfg), "--quiet", "--db", str(tmp_path / "later" / "second.sqlite"))
    assert code == 0, out2
    for stem, where in (("first", tmp_path), ("second", tmp_path / "later")):
        for suffix in (".sqlite", ".csv", ".json"):
            assert (where / f"{stem}{suffix}").stat().st_size > 0, (stem, suffix)
        assert (where / f"{stem}-run" / "logs").is_dir()
        assert list((where / f"{stem}-run").glob("journals-*/*.jsonl"))
    # Nothing was written under the config's name, and the first event's files are as it left them.
    assert not [p for p in tmp_path.rglob("cup.*") if p.suffix != ".toml"] and not (tmp_path / "cup-run").exists()
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file() and p.name.startswith("first")} == first
    assert "first.csv" in out1 and "second.csv" in out2
    # --output still wins, named after the results file.
    code, out3 = run(str(cfg), "--quiet", "--db", str(tmp_path / "third.sqlite"), "--output", str(tmp_path / "out"))
    assert code == 0 and (tmp_path / "out" / "third.json").is_file(), out3


def test_a_replayed_game_shows_its_attempts(tmp_path: Path) -> None:
    """The attempt count the runner stores (a referee lost mid-game: runner.settle) is
    what `report --games` and the JSON show."""
    cfg = load_config(write_config(tmp_path / "rp.toml", [{"name": "a", "bot": "random"}, {"name": "b", "bot": "random"}],
                                   tournament={"seed": "rp", "games_per_pairing": 2}))
    st = ResultsStore.for_run(cfg, tmp_path / "rp.sqlite", resume=False)
    try:
        for i, attempts in ((0, 1), (1, 3)):
            st.record_game(GameResult(index=i, key=f"d0-a-b-s{i}", deal=0, seating=i, seed="s", seats=("a", "b")[::1 - 2 * i],
                                      scores=(100, 0), winner="a", termination="normal", culprit=None, reason="r", hands=1,
                                      table_id=f"rp-{i}-{attempts}", attempts=attempts))
    finally:
        st.close()
    code, out = run("report", str(tmp_path / "rp.sqlite"), "--games", "--json", str(tmp_path / "rp.json"))
    assert code == 0, out
    lines = [x for x in out.splitlines() if "d0-a-b-s" in x]
    assert len(lines) == 2 and "attempt" not in lines[0] and lines[1].endswith("(attempt 3)"), out
    data = json.loads((tmp_path / "rp.json").read_text())
    assert data["replayed"] == [{"game": 1, "key": "d0-a-b-s1", "attempts": 3}]
