"""Nothing on disk or in a process list gives a seed or a token away (issue 24, item 3).

Reproduced on the old main: the run directory, journals and logs kept the umask's modes
(0755/0644), so another local user read deal seeds from the journals while other games
of the same deals were still being played; seat tokens were on command lines (bwrap's
``--setenv OKGIN_TOKEN``, ``okgin bot --token``), readable in /proc/PID/cmdline, and
another local user resigned a participant's game with one.

Here, as root, a real tournament with sandboxed bots runs in a directory any user can
enter (0755, like a home directory), and is stopped with deals unfinished: one bot
never moves in seat 1, so of each deal the seating where it sits in seat 0 ends and the
other does not. Meanwhile another local user (``setpriv`` to uid/gid 65534) searches the
organiser's directory (run directory, journals, logs, the runner's output), /tmp, and
every /proc/*/cmdline and /proc/*/environ it can read, for every deal seed in the
journals and every seat token in the live bots' environments (both taken as root).
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from competition.tournament.sandbox import probe

from .tourkit import protobot, write_config

SETPRIV = "/usr/bin/setpriv"
GREP = shutil.which("grep") or "/usr/bin/grep"
OTHER_UID = 65534
NAME = "leakcup"

pytestmark = [
    pytest.mark.timeout(300),
    pytest.mark.skipif(os.geteuid() != 0, reason="plays another local user with setpriv: needs root"),
    pytest.mark.skipif(not os.path.exists(SETPRIV), reason=f"{SETPRIV} is missing (util-linux)"),
    pytest.mark.skipif(probe() is not None, reason=f"no bubblewrap sandbox here: {probe()}"),
]


@pytest.fixture
def organiser() -> Iterator[Path]:
    """A directory every user may enter, as a home directory usually is (pytest's own
    temporary directories are 0700, which would hide everything whatever the runner does)."""
    d = Path(tempfile.mkdtemp(prefix="okgin-organiser-", dir="/tmp"))
    d.chmod(0o755)
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def _recorded(db: Path) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as c:
            return int(c.execute("SELECT COUNT(*) FROM games").fetchone()[0])
    except sqlite3.Error:
        return 0


def _live_tokens() -> dict[str, str]:
    """Seat token -> table of every bot of this event running now (read as root)."""
    out = {}
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        try:
            env = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        kv = dict(e.decode(errors="replace").split("=", 1) for e in env if b"=" in e)
        if kv.get("OKGIN_TABLE", "").startswith(f"{NAME}-") and kv.get("OKGIN_TOKEN"):
            out[kv["OKGIN_TOKEN"]] = kv["OKGIN_TABLE"]
    return out


def _journal_seeds(run: Path) -> set[str]:
    seeds = set()
    for path in run.glob("journals-*/*.jsonl"):
        seeds |= set(re.findall(r'"seed":"([0-9a-f]{16,})"', path.read_text(errors="replace")))
    return seeds


def _as_other_user(secrets: set[str], where: list[str]) -> str:
    """What uid 65534 finds of ``secrets`` (given on stdin, never in a file) in ``where``
    and in every /proc/*/cmdline and environ it can read: grep's ``FILE:MATCH`` lines."""
    script = (f'{GREP} -r -a -o -F -D skip --no-messages -f - "$@" /proc/[0-9]*/cmdline /proc/[0-9]*/environ; '
              "exit 0")
    proc = subprocess.run(
        [SETPRIV, "--reuid", str(OTHER_UID), "--regid", str(OTHER_UID), "--clear-groups", "--", "/bin/sh", "-c", script,
         "other-user", *where],
        input="\n".join(sorted(secrets)) + "\n", capture_output=True, text=True, timeout=180, cwd="/")
    return proc.stdout


def test_another_local_user_finds_no_seed_of_an_unfinished_deal_and_no_token(organiser: Path) -> None:
    parts = [{"name": "staller", "command": protobot("--stall-in-seat", "1")},
             {"name": "steady", "command": protobot("--random", "3")}]
    cfg = write_config(organiser / f"{NAME}.toml", parts,
                       tournament={"name": NAME, "games_per_pairing": 4, "concurrency": 4, "stall_timeout": 600},
                       rules={"target_score": 10})
    cfg.chmod(0o644)
    db = organiser / f"{NAME}.sqlite"
    run = organiser / f"{NAME}-run"
    # The runner's output in a file the organiser's umask leaves readable (a `> run.log`).
    out_path = organiser / "runner-output.log"
    with out_path.open("wb") as out:
        runner = subprocess.Popen([sys.executable, "-m", "okgin", "tournament", str(cfg), "--quiet"], cwd=organiser,
                                  stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 150
        # Two seatings end (the staller in seat 0), two never do (the staller in seat 1).
        while _recorded(db) < 2 or len(_live_tokens()) < 4:
            assert runner.poll() is None, out_path.read_text(errors="replace")
            assert time.monotonic() < deadline, ("the games never reached the state to attack",
                                                 _recorded(db), _live_tokens(), out_path.read_text(errors="replace"))
            time.sleep(0.2)
        tokens = _live_tokens()
        seeds = _journal_seeds(run)
        assert len(seeds) == 2 and len(tokens) >= 2, (seeds, tokens)  # two deals, both unfinished
        found = _as_other_user(seeds | set(tokens), [str(organiser), "/tmp"])
        # What the files say while the event runs: the run directory 0700, the rest 0600.
        modes = {str(p.relative_to(organiser)): stat.S_IMODE(p.stat().st_mode) for p in run.rglob("*")}
        modes["."] = stat.S_IMODE(run.stat().st_mode)
    finally:
        if runner.poll() is None:
            runner.send_signal(2)  # SIGINT: the run stops with games unplayed, as an organiser's ^C
            try:
                runner.wait(timeout=60)
            except subprocess.TimeoutExpired:
                runner.kill()
                runner.wait(timeout=30)
    assert not found, f"another local user found secrets:\n{found[:3000]}"
    wrong = {p: oct(m) for p, m in modes.items() if m != (0o700 if (p == "." or (organiser / p).is_dir()) else 0o600)}
    assert not wrong, wrong
