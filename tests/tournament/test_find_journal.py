"""find_journal: a game's journal found by the names of the seconds it can have started in
(what an arena's front does for every game), and by listing the directory otherwise."""

from __future__ import annotations

import time
from pathlib import Path

from competition.tournament.records import find_journal
from okgin.journal import journal_base
from referee.journal import Journal


def test_the_writers_name_is_found_from_the_start_window_and_by_listing(tmp_path: Path) -> None:
    before = time.time()
    j = Journal(tmp_path, "t7", 1)  # the writer names the file
    after = time.time()
    other = Journal(tmp_path, "t70", 1)  # a table whose name starts the same: never taken for t7
    j.close()
    other.close()
    assert find_journal(tmp_path, "t7", (before, after)) == j.path
    assert find_journal(tmp_path, "t7") == j.path
    assert find_journal(tmp_path, "t8", (before, after)) is None


def test_a_start_window_that_misses_falls_back_to_the_listing(tmp_path: Path) -> None:
    t = 1_700_000_000.0
    path = tmp_path / f"{journal_base('g5', 1, t)}.jsonl"
    path.write_text("")
    assert find_journal(tmp_path, "g5", (t - 3600, t - 3500)) == path  # another clock: still found
    assert find_journal(tmp_path, "g5", (t - 10**6, t)) == path  # too wide a window: the listing
    assert find_journal(tmp_path, "g5", (t, t)) == path
