"""okgin.journal: the one journal reader, and the four tools that read through it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clients.tui.replay import finished_journal as tui_read
from competition.tournament.records import journal_outcome as tournament_read
from okgin.journal import JournalError, parse_journal, read_journal
from referee.replay import Mismatch, check_entries, check_file
from referee.replay import numbered_entries as replay_read

JOURNALS13 = Path(__file__).resolve().parent / "journals13"  # written by the referee of protocol 1.3
OLD = sorted(JOURNALS13.glob("*.jsonl"))


def test_the_1_3_journals_read_and_check() -> None:
    assert len(OLD) == 2
    for path in OLD:
        j = read_journal(path)
        assert not j.torn and j.start["t"] == "start" and j.end is not None
        assert len(j.entries) == path.read_bytes().count(b"\n")
        assert j.lines == list(range(1, len(j.entries) + 1))
        assert check_file(path).termination == j.end["termination"]
        assert tui_read(path) == (j.start, j.end)
        assert tournament_read(path)[0] == j.end
        assert read_journal(path).record == j.end["record"]


def test_a_torn_last_line_is_left_out(tmp_path: Path) -> None:
    data = OLD[0].read_bytes()
    cut = data.rstrip(b"\n").rfind(b"\n") + 1
    path = tmp_path / "torn.jsonl"
    path.write_bytes(data[: cut + 40])  # the end line, cut off mid-write
    j = read_journal(path)
    assert j.torn and j.end is None and len(j.entries) == data[:cut].count(b"\n")
    # Each tool keeps its own verdict on an unfinished game.
    with pytest.raises(Mismatch, match="no 'end' line"):
        check_entries(replay_read(path), str(path))
    with pytest.raises(JournalError, match="cannot be replayed yet"):
        tui_read(path)
    assert tournament_read(path)[0] is None
    assert read_journal(path).record is None
    # A whole last entry whose newline has not landed yet is an entry, not a torn line.
    path.write_bytes(data.rstrip(b"\n"))
    assert not read_journal(path).torn and read_journal(path).end is not None


def test_lines_end_at_newline_only(tmp_path: Path) -> None:
    """A player named with U+2028 (and U+0085, U+2029) keeps its journal line whole."""
    lines = OLD[0].read_text(encoding="utf-8").split("\n")
    start = json.loads(lines[0])
    odd = ["zed\u2028one", "x\u0085y\u2029z"]
    start["players"] = odd
    text = "\n".join([json.dumps(start, ensure_ascii=False), *lines[1:]])
    path = tmp_path / "odd.jsonl"
    path.write_bytes(text.encode("utf-8"))
    assert len(text.splitlines()) > text.count("\n")  # what str.splitlines would have done
    j = read_journal(path)
    assert j.start["players"] == odd and len(j.entries) == text.count("\n")
    assert replay_read(path)[0]["players"] == odd and tui_read(path)[0]["players"] == odd
    check_file(path)  # the engine check still agrees with every line
    assert tournament_read(path)[0] is not None and read_journal(path).record is not None


def test_what_is_not_a_journal(tmp_path: Path) -> None:
    good = OLD[0].read_text(encoding="utf-8").split("\n")
    cases = {
        "not json\n": "line 1 is not JSON",
        "": "does not begin with a 'start' line",
        '{"t":"action"}\n': "does not begin with a 'start' line",
        "[1, 2]\n": "line 1 is not a journal entry",
        '{"t":"start","format":"chess","version":1}\n': "is not an okgin-journal v1 journal",
        "\n".join([good[0], "{torn in the middle", *good[1:]]): "line 2 is not JSON",
    }
    for text, message in cases.items():
        with pytest.raises(JournalError, match=message):
            parse_journal(text, "j.jsonl")
    with pytest.raises(JournalError, match="line 2") as err:
        parse_journal("\n".join([good[0], "{", *good[1:]]))
    assert err.value.line == 2
    with pytest.raises(JournalError, match="cannot read"):
        read_journal(tmp_path / "missing.jsonl")
    (tmp_path / "latin1.jsonl").write_bytes(b'{"t":"start","name":"\xe9"}\n')
    with pytest.raises(JournalError, match="not UTF-8"):
        read_journal(tmp_path / "latin1.jsonl")
    # The tournament falls back to the feed for a file that is no journal.
    (tmp_path / "junk.jsonl").write_text("not json\n")
    assert tournament_read(tmp_path / "junk.jsonl")[0] is None
