"""``okgin referee`` as a real process: endpoint printed after binding (port 0), a
one-table referee with reserved seats, clean shutdown on SIGTERM/SIGINT closing every
journal, and the protocol.md-only raw bot playing whole games of both variants."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from bounded import readline
from refharness import Client, play_until_end

from okgin.rng import seed_hash
from referee.replay import check_file
from referee.replay import main as replay_main

HERE = Path(__file__).resolve().parent


class RefereeProcess:
    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "okgin", "referee", "--bind", "tcp://127.0.0.1:0", *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
        )
        assert self.proc.stdout is not None
        first = readline(self.proc.stdout, 60, "the referee, its endpoint line")
        m = re.match(r"okgin referee listening on (tcp://127\.0\.0\.1:(\d+))$", first.strip())
        assert m, (
            f"first line should give the endpoint, got {first!r} (stderr: "
            f"{self.proc.stderr.read() if self.proc.poll() is not None else ''})"
        )
        assert int(m.group(2)) > 0
        self.endpoint = m.group(1)

    def readline(self) -> str:
        assert self.proc.stdout is not None
        return readline(self.proc.stdout, 60, "the referee").strip()

    def stop(self, sig: int = signal.SIGTERM) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(20)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(20)


@pytest.fixture
def spawn() -> Iterator:
    procs: list[RefereeProcess] = []

    def make(*args: str) -> RefereeProcess:
        p = RefereeProcess(*args)
        procs.append(p)
        return p

    yield make
    for p in procs:
        p.stop(signal.SIGKILL)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_one_table_referee_and_clean_shutdown(spawn, tmp_path, sig):
    rp = spawn(
        "--table",
        "final",
        "--reserved",
        "--seed",
        "871",
        "--rule",
        "target_score=500",
        "--journal-dir",
        str(tmp_path),
        "--player",
        "north",
        "--player",
        "south",
    )
    assert rp.readline() == "table final"
    toks = []
    for s in range(2):
        m = re.match(r"seat (\d) token ([0-9a-f]{32})$", rp.readline())
        assert m and int(m.group(1)) == s
        toks.append(m.group(2))
    clients = {}
    for s, tok in enumerate(toks):
        c = Client(rp.endpoint)
        c.hello(f"bot{s}", token=tok)
        assert c.expect("seated")["players"][s] == f"bot{s}"
        clients[s] = c
    start = clients[0].expect("game_start")
    # 1.4: salted, so not the bare SHA-256 of "871" (062f...bdb4) that anyone could find
    assert re.fullmatch(r"[0-9a-f]{64}", start["seed_hash"]) and start["seed_hash"] != seed_hash(871)
    # a few moves, then stop the referee mid-game
    moves = 0
    while moves < 6:
        for c in clients.values():
            if c.sock.poll(10):
                m = c.recv()
                if m["type"] == "prompt":
                    c.send(
                        {
                            "type": "act",
                            "table": "final",
                            "seq": m["seq"],
                            "action": m["legal"][-1] if m["legal"][0]["kind"] != "take" else {"kind": "pass"},
                        }
                    )
                    moves += 1
    assert rp.stop(sig) == 0
    for c in clients.values():
        end = c.wait_for(lambda m: m["type"] == "game_end")
        assert end["termination"] == "abandoned" and end["seed"] == 871
        assert seed_hash(871, end["salt"]) == start["seed_hash"] == end["seed_hash"]
        assert c.wait_for(lambda m: m["type"] == "shutdown")["reason"]
        c.close()
    journal = next(tmp_path.glob("final-g1-*.jsonl"))
    lines = [json.loads(x) for x in journal.read_text().splitlines()]
    assert lines[0]["t"] == "start" and lines[-1]["t"] == "end" and lines[-2]["t"] == "abandon"
    assert check_file(journal).termination == "abandoned"


def test_bad_arguments_and_busy_port(spawn, capsys):
    rp = spawn("--no-journal")
    port_taken = subprocess.run(
        [sys.executable, "-m", "okgin", "referee", "--bind", rp.endpoint, "--no-journal"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert port_taken.returncode == 1 and "cannot bind" in port_taken.stderr
    bad_rule = subprocess.run(
        [sys.executable, "-m", "okgin", "referee", "--bind", "tcp://127.0.0.1:0", "--rule", "knock_limit=99"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad_rule.returncode == 2 and "knock_limit" in bad_rule.stderr


def test_replay_check_cli(spawn, tmp_path, capsys):
    r = spawn("--journal-dir", str(tmp_path), "--table", "x", "--seed", "7", "--rule", "target_score=25")
    r.readline()
    a, b = Client(r.endpoint), Client(r.endpoint)
    a.hello("a")
    b.hello("b")
    a.request({"type": "join", "table": "x", "rules": {"target_score": 25}}, "seated")
    b.request({"type": "join", "table": "x", "rules": {"target_score": 25}}, "seated")
    play_until_end({0: a, 1: b}, "x")
    a.close()
    b.close()
    r.stop()
    journal = next(tmp_path.glob("x-g1-*.jsonl"))
    assert replay_main([str(journal), "--check"]) == 0
    assert "OK" in capsys.readouterr().out
    # through the real command too
    done = subprocess.run(
        [sys.executable, "-m", "okgin", "replay", str(tmp_path), "--check"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and "seed verified" in done.stdout
    # tampering is caught: a hand's points, then the seed
    lines = journal.read_text().splitlines()
    i = next(k for k, x in enumerate(lines) if '"t":"hand_end"' in x)
    entry = json.loads(lines[i])
    entry["result"]["points"] += 1
    bad = tmp_path / "bad" / "points.jsonl"
    bad.parent.mkdir()
    bad.write_text("\n".join([*lines[:i], json.dumps(entry), *lines[i + 1 :]]) + "\n")
    assert replay_main([str(bad), "--check"]) == 1
    assert "MISMATCH" in capsys.readouterr().err
    end = json.loads(lines[-1])
    end["seed"] = 8
    bad.write_text("\n".join([*lines[:-1], json.dumps(end)]) + "\n")
    assert replay_main([str(bad), "--check"]) == 1
    assert "seed" in capsys.readouterr().err
    bad.write_text("\n".join(lines[:-1]) + "\n")  # no end line, last line whole: still being played
    assert replay_main([str(bad), "--check"]) == 3
    assert "IN PROGRESS" in capsys.readouterr().err
    cut = "\n".join(lines)
    bad.write_text(cut[: cut.rfind("\n") + 20])  # the end line torn mid-write: incomplete
    assert replay_main([str(bad), "--check"]) == 1
    assert "MISMATCH" in capsys.readouterr().err
    # a directory with a game in progress and a mismatch: the mismatch (1) wins
    both = tmp_path / "both"
    both.mkdir()
    (both / "a-live.jsonl").write_text("\n".join(lines[:-1]) + "\n")
    (both / "b-bad.jsonl").write_text("\n".join([*lines[:i], json.dumps(entry), *lines[i + 1 :]]) + "\n")
    assert replay_main([str(both), "--check"]) == 1
    (both / "b-bad.jsonl").unlink()
    (both / "c-ok.jsonl").write_text("\n".join(lines) + "\n")
    live = subprocess.run(
        [sys.executable, "-m", "okgin", "replay", str(both), "--check"], capture_output=True, text=True, timeout=60
    )
    assert live.returncode == 3 and "IN PROGRESS" in live.stderr and "OK" in live.stdout
    helptext = subprocess.run([sys.executable, "-m", "okgin", "replay", "--help"], capture_output=True, text=True, timeout=60)
    assert "3 when a game is still in progress" in " ".join(helptext.stdout.split())
    bad.write_text("not json\n")
    assert replay_main([str(bad), "--check"]) == 2


@pytest.mark.parametrize("variant,n,games", [("oklahoma", 2, 2), ("box", 3, 1)])
def test_raw_bot_plays_complete_games(spawn, variant, n, games):
    """The issue's "done when": a bot written from protocol.md alone plays whole games."""
    rp = spawn("--no-journal", "--heartbeat-ms", "1000")
    bots = [
        subprocess.Popen(
            [
                sys.executable,
                str(HERE / "raw_bot.py"),
                "--endpoint",
                rp.endpoint,
                "--name",
                f"raw{i}",
                "--queue",
                variant,
                "--rule",
                "target_score=40",
                "--games",
                str(games),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(n)
    ]
    results = []
    for b in bots:
        out, err = b.communicate(timeout=240)
        assert b.returncode == 0, f"bot failed: {err}"
        results.extend(json.loads(x) for x in out.splitlines())
    assert len(results) == n * games
    assert all(r["termination"] == "normal" for r in results)
    assert all(max(r["scores"]) >= 40 for r in results)


def test_door_dir_and_door_cap(spawn, tmp_path):
    """``--door-dir`` (protocol 1.5): seat doors are bound there, in a 0700 directory a
    tournament runner of the same user can read, and are gone once the referee stops."""
    doors = tmp_path / "doors"
    rp = spawn("--no-journal", "--admin-key", "k" * 32, "--door-dir", str(doors), "--max-door-connections", "2")
    admin = Client(rp.endpoint)
    try:
        admin.hello("organiser", role="admin", admin_key="k" * 32)
        made = admin.request({"type": "create_table", "table": "t", "reserved": True, "doors": True}, "table_created")
        paths = [Path(d[len("ipc://") :]) for d in made["doors"]]
        assert all(p.parent == doors and p.is_socket() for p in paths)
        assert (doors.stat().st_mode & 0o777) == 0o700
    finally:
        admin.close()
    assert rp.stop() == 0
    assert not any(p.exists() for p in paths)
