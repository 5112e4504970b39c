"""``okgin bot``: built-in and user bots as real processes against a real referee."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from clients.match_referee import RefereeProcess
from clients.sdk import Client, GameEnd


def finish(p: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = p.communicate(timeout=120)
    return p.returncode, out, err


def test_user_bot_file_against_simple_on_a_named_table(referee: RefereeProcess, spawn_bot: Callable[..., subprocess.Popen[str]], tmp_path: Path) -> None:
    f = tmp_path / "lastlegal.py"
    f.write_text("from clients.bot import Bot\n\n\nclass LastLegal(Bot):\n    def choose(self, view, legal):\n        return legal[-1]\n")
    mine = spawn_bot(f"{f}:LastLegal", "--connect", referee.endpoint, "--table", "cli", "--games", "2", "--name", "mine")
    theirs = spawn_bot("simple", "--connect", referee.endpoint, "--table", "cli", "--games", "2")
    (rc1, out1, err1), (rc2, out2, err2) = finish(mine), finish(theirs)
    assert rc1 == rc2 == 0, err1 + err2
    assert out1.count("cli game") == out2.count("cli game") == 2
    assert "(normal)" in out1 and not err1 and not err2


def test_quick_match_queue_box(referee: RefereeProcess, spawn_bot: Callable[..., subprocess.Popen[str]]) -> None:
    procs = [spawn_bot(b, "--connect", referee.endpoint, "--variant", "box", "--games", "2", "--seed", str(i)) for i, b in enumerate(["simple", "random", "simple"])]
    results = [finish(p) for p in procs]
    assert all(rc == 0 for rc, _, _ in results), [err for _, _, err in results]
    assert all(out.count("game 1:") == 2 for _, out, _ in results)  # two quick tables, one game each


def test_reserved_seat_tokens(referee: RefereeProcess, spawn_bot: Callable[..., subprocess.Popen[str]]) -> None:
    with Client(referee.endpoint, "organiser", "admin", admin_key=referee.admin_key) as admin:
        admin.connect()
        t = admin.create_table(table="final", seed=871, reserved=True)
        assert t.seat_tokens is not None and len(t.seat_tokens) == 2
        admin.watch("final")
        procs = [spawn_bot(b, "--connect", referee.endpoint, "--token", tok) for b, tok in zip(["random", "simple"], t.seat_tokens, strict=True)]
        end = admin.recv(timeout=60)
        while not isinstance(end, GameEnd):
            end = admin.recv(timeout=60)
    assert end.table == "final" and end.seed == 871 and end.winner == 1
    assert all(finish(p)[0] == 0 for p in procs)


def test_bad_bot_spec_is_refused(referee: RefereeProcess) -> None:
    r = subprocess.run([sys.executable, "-m", "okgin", "bot", "nobody", "--connect", referee.endpoint], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "unknown bot 'nobody'" in r.stderr


def test_bad_rule_is_refused() -> None:
    r = subprocess.run([sys.executable, "-m", "okgin", "bot", "simple", "--rule", "gin_bonus=x"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "gin_bonus takes a whole number" in r.stderr
