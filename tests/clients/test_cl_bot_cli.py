"""``okgin bot``: built-in and user bots as real processes against a real referee."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from clients.match_referee import RefereeProcess
from clients.sdk import Client, GameEnd


def finish(p: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = p.communicate(timeout=120)
    return p.returncode, out, err


def test_user_bot_file_against_simple_on_a_named_table(
    referee: RefereeProcess, spawn_bot: Callable[..., subprocess.Popen[str]], tmp_path: Path
) -> None:
    f = tmp_path / "lastlegal.py"
    f.write_text(
        "from clients.bot import Bot\n\n\nclass LastLegal(Bot):\n    def choose(self, view, legal):\n        return legal[-1]\n"
    )
    mine = spawn_bot(f"{f}:LastLegal", "--connect", referee.endpoint, "--table", "cli", "--games", "2", "--name", "mine")
    theirs = spawn_bot("simple", "--connect", referee.endpoint, "--table", "cli", "--games", "2")
    (rc1, out1, err1), (rc2, out2, err2) = finish(mine), finish(theirs)
    assert rc1 == rc2 == 0, err1 + err2
    assert out1.count("cli game") == out2.count("cli game") == 2
    assert "(normal)" in out1 and not err1 and not err2


def test_quick_match_queue_box(referee: RefereeProcess, spawn_bot: Callable[..., subprocess.Popen[str]]) -> None:
    procs = [
        spawn_bot(b, "--connect", referee.endpoint, "--variant", "box", "--games", "2", "--seed", str(i))
        for i, b in enumerate(["simple", "random", "simple"])
    ]
    results = [finish(p) for p in procs]
    assert all(rc == 0 for rc, _, _ in results), [err for _, _, err in results]
    assert all(out.count("game 1:") == 2 for _, out, _ in results)  # two quick tables, one game each


def test_reserved_seat_tokens(referee: RefereeProcess, spawn_bot: Callable[..., subprocess.Popen[str]]) -> None:
    with Client(referee.endpoint, "organiser", "admin", admin_key=referee.admin_key) as admin:
        admin.connect()
        t = admin.create_table(table="final", seed=871, reserved=True)
        assert t.seat_tokens is not None and len(t.seat_tokens) == 2
        admin.watch("final")
        procs = [
            spawn_bot(b, "--connect", referee.endpoint, "--token", tok)
            for b, tok in zip(["random", "simple"], t.seat_tokens, strict=True)
        ]
        end = admin.recv(timeout=60)
        while not isinstance(end, GameEnd):
            end = admin.recv(timeout=60)
    assert end.table == "final" and end.seed == 871 and end.winner == 1
    assert all(finish(p)[0] == 0 for p in procs)


def test_bad_bot_spec_is_refused(referee: RefereeProcess) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "okgin", "bot", "nobody", "--connect", referee.endpoint],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2 and "unknown bot 'nobody'" in r.stderr


def test_bad_rule_is_refused() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "okgin", "bot", "simple", "--rule", "gin_bonus=x"], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 2 and "gin_bonus takes a whole number" in r.stderr


def test_a_seat_token_from_the_environment_or_a_file_never_on_the_command_line(referee: RefereeProcess, tmp_path: Path) -> None:
    """Issue 24: a token on a command line is readable by every local user. ``okgin bot``
    takes it from ``$OKGIN_TOKEN`` (how a tournament passes it) or ``--token-file``."""
    with Client(referee.endpoint, "organiser", "admin", admin_key=referee.admin_key) as admin:
        admin.connect()
        t = admin.create_table(table="quiet", seed=872, reserved=True)
        assert t.seat_tokens is not None
        admin.watch("quiet")
        token_file = tmp_path / "seat1.token"
        token_file.write_text(t.seat_tokens[1] + "\n")
        token_file.chmod(0o600)
        base = [sys.executable, "-m", "okgin", "bot"]
        procs = [
            subprocess.Popen(
                [*base, "random", "--connect", referee.endpoint],
                env={**os.environ, "OKGIN_TOKEN": t.seat_tokens[0]},
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            ),
            subprocess.Popen(
                [*base, "simple", "--connect", referee.endpoint, "--token-file", str(token_file)],
                env={k: v for k, v in os.environ.items() if k != "OKGIN_TOKEN"},
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            ),
        ]
        try:
            for p in procs:
                cmdline = Path(f"/proc/{p.pid}/cmdline").read_bytes() if Path(f"/proc/{p.pid}").exists() else b""
                assert not any(tok.encode() in cmdline for tok in t.seat_tokens)
            end = admin.recv(timeout=60)
            while not isinstance(end, GameEnd):
                end = admin.recv(timeout=60)
        finally:
            results = [finish(p) for p in procs]
    assert end.table == "quiet" and end.seed == 872
    assert all(rc == 0 for rc, _, _ in results), results
    r = subprocess.run(
        [*base, "simple", "--connect", referee.endpoint, "--token-file", str(tmp_path / "none")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2 and "cannot read a token from" in r.stderr
