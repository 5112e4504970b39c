"""The sandbox of local participants (issue 15 item 1), with real bubblewrap sandboxes.

A hostile participant (``spy_bot.py``) sits beside the config, the results file and the
run directory (its ``dir`` is the config's directory, so the runner's own files there
must be covered), plays legal moves, and first tries every attack of the issue. Each
fails, and every game completes normally. Then: each exhausted limit is named in the
forfeit, ``sandbox = false`` marks the event, and the referee's extra ipc bind.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from bounded import readline

from competition.tournament import cgroups
from competition.tournament.cli import main
from competition.tournament.config import load_config
from competition.tournament.report import report_from_store
from competition.tournament.sandbox import AS_FACTOR, Limits, limit_hit, private_dirs, probe
from competition.tournament.store import ResultsStore

from .tourkit import write_config

SPY = Path(__file__).with_name("spy_bot.py")
MARK = "spy-bait-5c1e"  # in the config: a bot that can read the config would see it

pytestmark = pytest.mark.skipif(probe() is not None, reason=f"no bubblewrap sandbox here: {probe()}")


def spy_lines(logdir: Path) -> list[dict]:
    out = []
    for log in sorted(logdir.glob("*-spy.log")):
        for line in log.read_text(errors="replace").splitlines():
            if line.startswith("{") and '"spy"' in line:
                out.append(json.loads(line))
    return out


def games(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as c:
        return c.execute("SELECT idx, termination, culprit, reason FROM games ORDER BY idx").fetchall()


def test_a_hostile_participant_learns_nothing_and_every_game_completes(tmp_path: Path) -> None:
    cup = tmp_path / "cup"
    cup.mkdir(mode=0o755)
    cup.chmod(0o755)  # the bot runs as another uid: its own directory must be readable by others
    shutil.copy(SPY, cup / "spy_bot.py")
    (cup / "spy_bot.py").chmod(0o644)
    listener = socket.create_server(("127.0.0.1", 0))  # a host port the spy must not reach
    port = listener.getsockname()[1]
    cfg_path = cup / "cup.toml"
    db = cup / "cup.sqlite"
    run = cup / "cup-run"
    attacks = [
        "--read", str(cfg_path), "--read", str(db), "--read", f"{db}-wal",
        "--read", str(run / "journals-r0" / ".okgin-state" / "admin.key"), "--read", str(run / "referee-r0.log"),
        "--list", str(run), "--list", str(run / "journals-r0"), "--list", str(Path.home()),
        "--list", str(SPY.parent),  # another participant's directory (protobot's)
        "--write", str(cup / "planted.txt"), "--write", "planted.txt", "--write", "/planted.txt",
        "--write", str(Path.home() / "planted.txt"),
        "--tcp", f"127.0.0.1:{port}", "--tcp", "1.1.1.1:53",
        "--fork", "200",
    ]
    backend, _ = cgroups.probe()
    if backend is None:  # rlimits: the allocation fails (MemoryError) and the spy plays on
        attacks += ["--alloc-mb", str((AS_FACTOR + 1) * 1024)]
    else:  # a cgroup: the OOM killer ends it, a forfeit (tests/tournament/test_cgroups.py)
        backend.close()
    parts = [
        {"name": "spy", "command": [sys.executable, "spy_bot.py", "{endpoint}", *attacks], "dir": ".",
         "limits_processes": 24},
        {"name": "proto", "command": [sys.executable, str(SPY.with_name("protobot.py")), "{endpoint}"]},
    ]
    text = write_config(cfg_path, [], tournament={"name": "cup", "games_per_pairing": 4, "concurrency": 2},
                        rules={"target_score": 10}, limits={"memory_mb": 1024}).read_text()
    # limits per participant as an inline table (write_config writes flat keys only)
    body = "\n".join(
        "[[participant]]\n"
        f"name = {json.dumps(p['name'])}\ncommand = {json.dumps(p['command'])}\n"
        + (f"dir = {json.dumps(p['dir'])}\nlimits = {{ processes = {p['limits_processes']} }}\n" if "dir" in p else "")
        for p in parts)
    cfg_path.write_text(f"# {MARK}\n{text}\n{body}")
    try:
        code = main([str(cfg_path), "--quiet", "--keep-logs"])
    finally:
        listener.close()
    assert code == 0
    rows = games(db)
    assert len(rows) == 4 and all(t == "normal" for _, t, _, _ in rows), rows
    seen = spy_lines(run / "logs")
    by_game = len([s for s in seen if s["spy"] == "note"])
    assert by_game == 4, seen  # one report per game (preflight logs are not kept)
    worked = [s for s in seen if s["ok"]]
    assert not worked, worked
    for s in seen:
        if s["spy"] == "fork":
            assert s["forked"] < 24, s  # the processes limit, not the spy's own 200
        if s["spy"] == "env":
            assert not any(k.startswith(("OKGIN_ADMIN", "PYTEST")) for k in s["keys"]), s
    # Nothing was planted, and the runner's files are intact.
    assert not (cup / "planted.txt").exists() and not (Path.home() / "planted.txt").exists()
    assert MARK in cfg_path.read_text()
    assert report_from_store(ResultsStore.open_existing(db)).games_played == 4


def test_each_limit_is_named_in_the_forfeit(tmp_path: Path) -> None:
    spy = [sys.executable, str(SPY), "{endpoint}", "--hog"]
    # Only the CPU hog gets the tight CPU limit, as its own: the others must reach their
    # own limit first, and starting Python and filling 768 MB took 2.1 CPU-s of a
    # 2-CPU-s budget in a fresh-clone run at a load of 25-37 (cgroup accounting charges
    # the page faults of a thrashing machine too). The target is one no single hand can
    # reach: a hog does its work at its first prompt, and simple, when it acts first, may
    # take the upcard and knock at once, which to 10 ends the game before the hog is prompted.
    lines = [
        "[tournament]", 'format = "gauntlet"', 'champion = "simple"', "games_per_pairing = 2", "concurrency = 2",
        "[rules]", "target_score = 150",
        "[limits]", "cpu_s = 120", "file_mb = 8", "memory_mb = 768", "processes = 32",
        "[[participant]]", 'name = "simple"', 'bot = "simple"',
    ]
    for kind in ("cpu", "file", "memory", "fork"):
        lines += ["[[participant]]", f'name = "{kind}-hog"', f"command = {json.dumps([*spy, kind])}"]
        if kind == "cpu":
            lines.append("limits = { cpu_s = 2 }")
    cfg = tmp_path / "hogs.toml"
    cfg.write_text("\n".join(lines) + "\n")
    assert main([str(cfg), "--quiet"]) == 1  # every hog lost every game to crashes
    want = {"cpu-hog": "hit the CPU limit of 2 s", "file-hog": "the file size limit of 8 MB",
            "memory-hog": "the memory limit of 768 MB", "fork-hog": "the limit of 32 processes"}
    rows = games(tmp_path / "hogs.sqlite")
    assert len(rows) == 8
    for _, term, culprit, reason in rows:
        assert term == "crash" and culprit in want, (term, culprit, reason)
        assert want[culprit] in reason, reason


def test_sandbox_false_marks_the_event_unsandboxed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = write_config(tmp_path / "open.toml", [{"name": "a", "bot": "random"}, {"name": "b", "bot": "simple"}],
                       tournament={"sandbox": False, "games_per_pairing": 2}, rules={"target_score": 10})
    assert main([str(cfg), "--quiet"]) == 0
    out = capsys.readouterr()
    assert "UNSANDBOXED" in out.out and "unconfined" in out.err
    st = ResultsStore.open_existing(tmp_path / "open.sqlite")
    assert st.get_meta("unsandboxed") == "1"
    assert "UNSANDBOXED" in report_from_store(st).to_text()


def test_a_tcp_referee_endpoint_is_refused_for_sandboxed_bots(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = write_config(tmp_path / "far.toml", [{"name": "a", "bot": "random"}, {"name": "b", "bot": "simple"}],
                       tournament={"referee_endpoints": ["tcp://127.0.0.1:9"]})
    assert main([str(cfg), "--quiet"]) == 2
    assert "ipc://" in capsys.readouterr().err
    assert not (tmp_path / "far.sqlite").exists()


def test_config_keys(tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "k.toml", [{"name": "a", "bot": "random", "dir": ["bots", "lib"]},
                                             {"name": "j", "command": ["java", "-jar", "x.jar"], "network": "host"},
                                             {"name": "k", "command": ["java", "-jar", "x.jar"], "network": "tcp"}],
                       limits={"cpu_s": 5})
    c = load_config(cfg)
    assert c.sandbox and c.limits == Limits(cpu_s=5) and c.config_file == str(cfg.resolve())
    # "host", the old name, means "tcp" now: no participant shares the host's network
    assert c.participants[0].dirs == ("bots", "lib") and [p.network for p in c.participants] == ["none", "tcp", "tcp"]


def test_limit_phrases() -> None:
    lim = Limits(cpu_s=3, file_mb=4, memory_mb=100, processes=7)
    assert limit_hit(152, "", lim) == "hit the CPU limit of 3 s"
    assert limit_hit(153, "", lim) == "hit the file size limit of 4 MB"
    assert limit_hit(1, "MemoryError", lim) == "probably hit the memory limit of 100 MB"
    hit = limit_hit(1, "BlockingIOError: [Errno 11] Resource temporarily unavailable", lim)
    assert hit == "probably hit the limit of 7 processes"
    assert limit_hit(1, "KeyError: 'x'", lim) is None


def test_the_referee_binds_an_extra_ipc_endpoint(tmp_path: Path) -> None:
    sock = tmp_path / "r.sock"
    proc = subprocess.Popen([sys.executable, "-m", "okgin", "referee", "--bind", "tcp://127.0.0.1:0", "--no-journal",
                             "--open-admin", "--also-bind", f"ipc://{sock}"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        first = readline(proc.stdout, 60, "the referee")
        assert "tcp://127.0.0.1:" in first and sock.exists()
        from clients.sdk import Client

        c = Client(f"ipc://{sock}", "probe", "player")
        try:
            assert c.connect(timeout=10.0) is not None  # welcome, over the ipc socket
        finally:
            c.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_the_sandbox_shows_no_host_path_of_the_organiser_and_no_token(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """Issue 24: inside the sandbox, /proc/1/cmdline (bwrap's arguments) showed the config
    directory, the run directory and the socket, and bwrap's --setenv carried the seat
    token; and /proc/self/mountinfo named the host path of the seat's door (its bind
    mount's source). The spy (in a directory of its own) reads /proc/1/cmdline and
    environ, the mounts, its working directory, its environment and every process's
    arguments, environment, mounts and open files it can see."""
    organiser = tmp_path / "organiser-home"
    bots = tmp_path / "bots"
    # The referee's door directory (TMPDIR for its okgin-doors-*): short, beside tmp_path
    # rather than in it, since a socket's path may hold at most 107 bytes and pytest-xdist's
    # tmp_path (.../popen-gw1/test_the_sandbox_shows_no_host0/) leaves too few of them.
    doors = Path(tempfile.mkdtemp(prefix="okd-", dir="/tmp"))
    request.addfinalizer(lambda: shutil.rmtree(doors, ignore_errors=True))
    for d in (organiser, bots):
        d.mkdir()
    for d in (organiser, bots, doors):
        d.chmod(0o755)
    shutil.copy(SPY, bots / "spy_bot.py")
    (bots / "spy_bot.py").chmod(0o644)
    cfg = write_config(organiser / "cup.toml", [
        {"name": "spy", "command": [sys.executable, str(bots / "spy_bot.py"), "{endpoint}"]},
        {"name": "simple", "bot": "simple"},
    ], tournament={"name": "cup", "games_per_pairing": 2}, rules={"target_score": 10})
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TMPDIR", str(doors))  # the referees the runner starts make their door directory here
        assert main([str(cfg), "--quiet", "--keep-logs"]) == 0
    seen = [s for s in spy_lines(organiser / "cup-run" / "logs") if s["spy"] == "introspect"]
    assert len(seen) == 2, seen
    host_paths = (str(organiser), str(doors), "okgin-doors", str(organiser / "cup-run"))
    for s in seen:
        assert not s["ok"], s  # its seat token shows nowhere but in its own environment
        assert "--args" in s["cmdline1"] and "--setenv" not in s["cmdline1"], s["cmdline1"]
        assert s["cwd"] == "/tmp", s["cwd"]
        for field in ("cmdline1", "environ1", "mountinfo", "cwd", "cmdline", "env", "processes", "fds"):
            for path in host_paths:
                assert path not in s[field], (field, path, s[field])
        # No mount's source is a socket of the host (the door was bound in: its path showed)
        for line in s["mountinfo"].splitlines():
            root, point = line.split()[3:5]
            assert not root.endswith(".sock") and point != "/run/okgin/referee.sock", line


def test_private_dirs_keep_what_two_participants_share() -> None:
    venv = Path("/opt/venv")
    mine = [venv, Path("/opt/src/okgin")]  # the Python installation every Python bot sees
    theirs = [venv / "bin", Path("/home/ann/bot"), venv, Path("/opt/src/okgin")]
    assert private_dirs(mine, theirs) == [Path("/home/ann/bot")]
    assert private_dirs([Path("/cfg")], [Path("/cfg/b")]) == [Path("/cfg/b")]  # not shared: hidden


def test_one_participants_command_never_empties_another_ones_python(tmp_path: Path) -> None:
    """Issue 24: a command run by ``VENV/bin/python`` named ``VENV/bin`` among its own
    directories, and every other participant's sandbox hid it: the built-in ``simple``
    (whose interpreter is there) failed its preflight with status 127. The same with a
    participant whose ``dir`` lies inside the Python installation (here the standard
    library's directory), which works in any installation, venv or not."""
    stdlib = Path(os.__file__).resolve().parent
    if str(stdlib).startswith(("/usr/", "/lib")):
        pytest.skip(f"the standard library is in a system directory ({stdlib}), which is never hidden")
    protobot = SPY.with_name("protobot.py")
    cfg = write_config(tmp_path / "mixed.toml", [
        {"name": "venv-python", "command": [sys.executable, str(protobot), "{endpoint}", "--random", "1"]},
        {"name": "in-stdlib", "command": [sys.executable, str(protobot), "{endpoint}", "--random", "2"],
         "dir": [str(stdlib), str(protobot.parent)]},
        {"name": "simple", "bot": "simple"},
    ], tournament={"games_per_pairing": 2, "concurrency": 3}, rules={"target_score": 10})
    assert main([str(cfg), "--quiet"]) == 0
    rows = games(tmp_path / "mixed.sqlite")
    assert len(rows) == 6 and all(t == "normal" for _, t, _, _ in rows), rows
