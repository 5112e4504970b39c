"""Journals and the run's files are their owner's alone, whatever the umask (issue 24)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from referee.journal import Journal
from referee.private import open_private, private_dir


def _mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


def test_a_journal_is_0600_in_a_0700_directory_under_a_lax_umask(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        j = Journal(tmp_path / "journals", "t1", 1)
        j.write("game_start", seed="s3cr3t")
        j.close()
        again = Journal.reopen(j.path)  # a journal an older version left 0644 is narrowed too
        again.close()
    finally:
        os.umask(old)
    assert _mode(tmp_path / "journals") == 0o700
    assert _mode(j.path) == 0o600


def test_an_existing_directory_and_file_are_narrowed(tmp_path: Path) -> None:
    d = tmp_path / "run"
    d.mkdir(mode=0o755)
    d.chmod(0o755)
    f = d / "referee.log"
    f.write_text("old\n")
    f.chmod(0o644)
    private_dir(d)
    with open_private(f, "ab") as out:
        out.write(b"new\n")
    assert _mode(d) == 0o700 and _mode(f) == 0o600 and f.read_text() == "old\nnew\n"
