"""The results file: atomic per game, never counted twice, refuses the wrong tournament."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from competition.tournament.config import parse_config
from competition.tournament.store import GameResult, ResultsStore, StoreError

DATA = {
    "tournament": {"seed": "s", "gateway": "tcp://127.0.0.1:7200"},
    "participant": [{"name": "a", "bot": "random"}, {"name": "b", "bot": "simple"}, {"name": "far", "remote": True}],
}


def result(i: int, winner: str = "a") -> GameResult:
    return GameResult(index=i, key=f"g{i}", deal=i // 2, seating=i % 2, seed=f"s/{i // 2}", seats=("a", "b"),
                      scores=(104, 20) if winner == "a" else (20, 104), winner=winner, termination="normal", culprit=None,
                      reason="a player reached the target score", hands=4, clocks={"ms": [10, 12]},
                      record={"format": "okgin-record", "seed": f"s/{i // 2}"}, referee="tcp://127.0.0.1:1", table_id="t1",
                      attempts=1, started=1.0, finished=2.0)


def test_games_round_trip_and_resume(tmp_path: Path) -> None:
    cfg = parse_config(DATA)
    db = tmp_path / "t.sqlite"
    st = ResultsStore.for_run(cfg, db, resume=False)
    st.record_game(result(0))
    st.record_game(result(3, "b"))
    token = st.tokens()["far"]
    assert len(token) >= 16
    st.close()

    st = ResultsStore.for_run(cfg, db, resume=True)
    assert st.done_indices() == {0, 3}
    g = st.games(with_records=True)
    assert g[1] == result(3, "b")
    assert st.tokens()["far"] == token  # a resumed run hands out the same token
    assert st.record_of(0) == {"format": "okgin-record", "seed": "s/0"}
    assert [e[1] for e in st.events()] == ["start", "resume"]


def test_a_game_cannot_be_counted_twice(tmp_path: Path) -> None:
    st = ResultsStore.for_run(parse_config(DATA), tmp_path / "t.sqlite", resume=False)
    st.record_game(result(1))
    with pytest.raises(sqlite3.IntegrityError):
        st.record_game(replace(result(1), winner="b"))
    assert st.count_games() == 1 and st.games()[0].winner == "a"


def test_refuses_to_mix_tournaments(tmp_path: Path) -> None:
    db = tmp_path / "t.sqlite"
    ResultsStore.for_run(parse_config(DATA), db, resume=False).close()
    with pytest.raises(StoreError, match="already exists: add --resume"):
        ResultsStore.for_run(parse_config(DATA), db, resume=False)
    other = parse_config({**DATA, "tournament": {"seed": "other", "gateway": "tcp://127.0.0.1:7200"}})
    with pytest.raises(StoreError, match=r"different tournament \(changed: secret, seed\)"):
        ResultsStore.for_run(other, db, resume=True)
    with pytest.raises(StoreError, match="nothing to resume"):
        ResultsStore.for_run(other, tmp_path / "none.sqlite", resume=True)


def test_open_existing_checks_the_file(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no such results file"):
        ResultsStore.open_existing(tmp_path / "x.sqlite")
    junk = tmp_path / "junk.sqlite"
    junk.write_text("not a database at all, just text" * 100)
    with pytest.raises(StoreError, match="not a tournament results file"):
        ResultsStore.open_existing(junk)


def test_a_write_that_fails_leaves_nothing(tmp_path: Path) -> None:
    st = ResultsStore.for_run(parse_config(DATA), tmp_path / "t.sqlite", resume=False)
    bad = replace(result(2), clocks={"x": object()})  # not JSON: fails inside the transaction
    with pytest.raises(TypeError):
        st.record_game(bad)
    assert st.count_games() == 0
    st.record_game(result(2))
    assert st.done_indices() == {2}
