"""Limits for the whole sandbox (issue 24 item 4): a cgroup per bot per game.

Real tournaments with real sandboxed bots (``hog_bot.py``) that spread their use of
memory, CPU and processes over children, on whatever cgroup version this machine offers
(v1 on the machines this was written on); the v2 code path against a fake cgroupfs (its
files and their parsing); the per-process fallback when no cgroup can be made; and no
group left behind, after a finished run and after an interrupted one.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from competition.tournament import cgroups
from competition.tournament.cli import main
from competition.tournament.config import load_config
from competition.tournament.report import report_from_store
from competition.tournament.sandbox import Limits, probe
from competition.tournament.store import ResultsStore
from okgin.protocol.settings import Clock

from .tourkit import write_config

HOG = str(Path(__file__).with_name("hog_bot.py"))
BACKEND, WHY = cgroups.probe()
if BACKEND is not None:
    BACKEND.close()
needs_sandbox = pytest.mark.skipif(probe() is not None, reason=f"no bubblewrap sandbox here: {probe()}")
needs_cgroups = pytest.mark.skipif(BACKEND is None, reason=f"no cgroup can be made here: {WHY}")


def hog(*args: str | int) -> list[str]:
    return [sys.executable, HOG, "{endpoint}", *map(str, args)]


def games(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as c:
        return c.execute("SELECT idx, termination, culprit, reason FROM games ORDER BY idx").fetchall()


def runner_dirs(pid: int) -> list[Path]:
    """Every ``okgin-PID`` directory of runner ``pid``, in every hierarchy."""
    v2, v1 = cgroups.own_cgroups()
    found = []
    for mount in Path(cgroups.CGROUP_FS).iterdir():
        for path in {"/", *(v1.values()), *([v2] if v2 else [])}:
            d = mount / path.lstrip("/") / f"okgin-{pid}"
            if d.is_dir():
                found.append(d)
    return found


def event(tmp_path: Path, name: str, command: list[str], limits: dict[str, int], **extra: dict) -> Path:
    """A two-game event of ``simple`` against the hog. The target score is high enough that
    no game can end in its first hand: ``simple``, first to act, may take the upcard and go
    gin before the hog is ever prompted (a fresh-clone run saw it: 93-0 on one move), and
    the hog does its work only at its first prompt."""
    return write_config(tmp_path / f"{name}.toml", [{"name": "simple", "bot": "simple"}, {"name": "hog", "command": command}],
                        tournament={"games_per_pairing": 2, **extra.pop("tournament", {})},
                        rules=extra.pop("rules", {"target_score": 150}), limits=limits, **extra)


# ------------------------------------------------------------------ real sandboxes
@needs_sandbox
@needs_cgroups
def test_eight_children_of_120_mb_under_256_mb_forfeit_naming_the_limit(tmp_path: Path) -> None:
    """Each child fits a per-process limit of 256 MB; the eight together do not."""
    cfg = event(tmp_path, "mem", hog("memory", 8, 120), {"memory_mb": 256})
    assert main([str(cfg), "--quiet"]) == 1  # the hog crashed in every game
    rows = games(tmp_path / "mem.sqlite")
    assert len(rows) == 2
    for _, term, culprit, reason in rows:
        assert (term, culprit) == ("crash", "hog"), reason
        assert f"hit the memory limit of 256 MB for the whole sandbox ({BACKEND.mechanism})" in reason, reason
    assert runner_dirs(os.getpid()) == []
    st = ResultsStore.open_existing(tmp_path / "mem.sqlite")
    assert st.get_meta("limits_by") == BACKEND.mechanism
    assert f"enforced by {BACKEND.mechanism} for each sandbox as a whole" in report_from_store(st).to_text()


@needs_sandbox
@needs_cgroups
def test_busy_children_use_at_most_the_sandboxs_cpu_seconds(tmp_path: Path) -> None:
    """Four spinning children, each under the per-process CPU limit for a while, the bot
    itself waiting: the sandbox's total ends it, and the forfeit says how much it used.
    (Per process, the children die at 2 s each and the bot loses by the stall_timeout.)"""
    cfg = event(tmp_path, "cpu", hog("spin", 4), {"cpu_s": 2}, tournament={"stall_timeout": 600})
    assert main([str(cfg), "--quiet"]) == 1
    rows = games(tmp_path / "cpu.sqlite")
    assert len(rows) == 2
    for _, term, culprit, reason in rows:
        assert (term, culprit) == ("crash", "hog"), reason
        assert f"hit the CPU limit of 2 s for the whole sandbox ({BACKEND.mechanism}: " in reason, reason
    assert runner_dirs(os.getpid()) == []


@needs_sandbox
@needs_cgroups
def test_a_fork_bomb_is_contained_and_the_bot_plays_on(tmp_path: Path) -> None:
    """Forks beyond ``processes`` fail (EAGAIN); the bot is not ended for trying, its games
    end normally, and nothing it forked outlives them."""
    cfg = event(tmp_path, "fork", hog("forkbomb"), {"processes": 24})
    assert main([str(cfg), "--quiet", "--keep-logs"]) == 0
    rows = games(tmp_path / "fork.sqlite")
    assert len(rows) == 2 and all(term != "crash" for _, term, _, _ in rows), rows
    logs = sorted((tmp_path / "fork-run" / "logs").glob("*-hog.log"))
    reports = [json.loads(line) for log in logs for line in log.read_text().splitlines() if line.startswith('{"hog"')]
    assert len(reports) == 2
    for r in reports:
        assert 0 < r["forked"] < 24 and r["error"] == "Resource temporarily unavailable", r
    assert runner_dirs(os.getpid()) == []


@needs_cgroups
def test_a_sandbox_gets_at_most_its_cpu_share() -> None:
    """Three spinning processes in one group of ``cpus = 1``: the group's CPU usage never
    exceeds one CPU's worth of the time it ran (the kernel's accounting, no timing)."""
    backend, _ = cgroups.probe()
    assert backend is not None
    group = backend.group("share", Limits(cpus=1))
    code = "import os\nfor _ in range(2):\n    os.fork()\nwhile True:\n    pass\n"  # 4 processes
    try:
        if backend.mechanism == cgroups.V1 and "cpu" not in group.dirs:
            pytest.skip("no cpu hierarchy")
        quota = (group.dirs.get("cpu") or group.dirs[""])
        if backend.mechanism == cgroups.V1:
            assert (quota / "cpu.cfs_quota_us").read_text().strip() == "100000"
        else:
            assert (quota / "cpu.max").read_text().split() == ["100000", "100000"]
        t0 = time.monotonic()
        proc = subprocess.Popen([sys.executable, "-c", code], preexec_fn=group.preexec())
        try:
            used = 0.0
            while used < 1.5 and time.monotonic() - t0 < 120:
                time.sleep(0.1)
                used = group.usage().cpu_s or 0.0
            elapsed = time.monotonic() - t0
            assert used >= 1.5 and len(group.pids()) == 4
            assert used <= elapsed * 1.05 + 0.1, (used, elapsed)
        finally:
            proc.kill()
    finally:
        assert asyncio.run(group.remove())
        backend.close()
    assert group.pids() == [] and not any(d.exists() for d in group.dirs.values())


@needs_sandbox
def test_without_cgroups_the_rlimits_are_used_and_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """A cgroupfs that cannot be written (here: hierarchies without the kernel's control
    files): the run falls back to per-process rlimits and says so."""
    fake = tmp_path / "cgroupfs"
    for c in ("memory", "pids"):
        (fake / c).mkdir(parents=True)
        (fake / c / "cgroup.procs").write_text("")
    backend, why = cgroups.probe(fake)
    assert backend is None and "cgroup v1" in why
    monkeypatch.setattr(cgroups, "CGROUP_FS", fake)
    cfg = write_config(tmp_path / "rl.toml", [{"name": "a", "bot": "random"}, {"name": "b", "bot": "simple"}],
                       tournament={"games_per_pairing": 2}, rules={"target_score": 10})
    assert main([str(cfg)]) == 0
    out = capsys.readouterr().out
    assert "sandbox limits enforced by rlimits (per process)" in out
    st = ResultsStore.open_existing(tmp_path / "rl.sqlite")
    assert st.get_meta("limits_by") == cgroups.RLIMITS
    assert "enforced by rlimits (per process)" in report_from_store(st).to_text()
    assert json.loads(report_from_store(st).to_json())["sandbox_limits"] == cgroups.RLIMITS
    assert not list(fake.glob("*/okgin-*"))  # the probe left nothing in the fake tree either


@needs_sandbox
@needs_cgroups
def test_an_interrupted_run_leaves_no_cgroup_behind(tmp_path: Path) -> None:
    cfg = event(tmp_path, "int", hog("busy", 2), {"cpu_s": 600}, tournament={"games_per_pairing": 4})
    proc = subprocess.Popen([sys.executable, "-m", "okgin", "tournament", str(cfg), "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        deadline = time.monotonic() + 120
        groups: list[Path] = []
        while time.monotonic() < deadline and proc.poll() is None:
            groups = [g for d in runner_dirs(proc.pid) for g in d.iterdir() if g.is_dir() and (g / "cgroup.procs").read_text()]
            if groups:
                break
            time.sleep(0.05)
        assert groups, "a sandbox's group with its processes"
        os.kill(proc.pid, signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 1 and "--resume to continue" in out
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
    assert runner_dirs(proc.pid) == []


# ------------------------------------------------------------------ config
def test_defaults_fit_a_game_and_cpu_grows_with_the_clock(tmp_path: Path) -> None:
    assert (Limits().memory_mb, Limits().processes, Limits().cpus) == (1024, 64, 1)
    assert cgroups.default_cpu_s(Clock()) == cgroups.CPU_NO_CLOCK_S
    assert cgroups.default_cpu_s(Clock(move_ms=10)) == cgroups.CPU_FLOOR_S
    assert cgroups.default_cpu_s(Clock(move_ms=1000)) == 400  # 2 x 200 moves x 1 s
    assert cgroups.default_cpu_s(Clock(bank_ms=60_000, increment_ms=500)) == 320  # 2 x (60 s + 200 x 0.5 s)
    parts = [{"name": "a", "bot": "random"}, {"name": "b", "bot": "simple"}]
    c = load_config(write_config(tmp_path / "c.toml", parts, clock={"move_ms": 1000}))
    assert c.limits == Limits(cpu_s=400)
    c = load_config(write_config(tmp_path / "d.toml", parts, clock={"move_ms": 1000}, limits={"cpu_s": 7, "cpus": 2}))
    assert c.limits == Limits(cpu_s=7, cpus=2)
    for bad in ({"processes": 2}, {"memory_mb": 8}, {"cpus": 0}):
        with pytest.raises(Exception, match=next(iter(bad))):
            load_config(write_config(tmp_path / "e.toml", parts, limits=bad))


# ------------------------------------------------------------------ v2, on a fake cgroupfs
def fake_v2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, offered: str = "cpu memory pids") -> tuple[Path, Path]:
    """A cgroup2 mount at ``fs/unified`` whose process sits in ``/svc``; new directories get
    the control files the kernel would make."""
    fs = tmp_path / "fs"
    own = fs / "unified" / "svc"
    own.mkdir(parents=True)
    (fs / "unified" / "cgroup.controllers").write_text(offered + "\n")
    for name, text in (("cgroup.controllers", offered), ("cgroup.subtree_control", ""), ("cgroup.procs", "")):
        (own / name).write_text(text + "\n")
    files = ("cgroup.controllers", "cgroup.subtree_control", "cgroup.procs", "cgroup.kill", "memory.max", "memory.swap.max",
             "pids.max", "cpu.max", "cpu.stat", "memory.events", "pids.events")

    def mkdir(path: Path, exist_ok: bool = False) -> None:
        path.mkdir(exist_ok=exist_ok)
        for f in files:
            if not (path / f).exists():
                (path / f).write_text("")

    def rmdir(path: Path) -> None:
        if any(p.is_dir() for p in path.iterdir()):
            raise OSError(16, "Device or resource busy", str(path))
        shutil.rmtree(path)

    monkeypatch.setattr(cgroups, "_mkdir", mkdir)
    monkeypatch.setattr(cgroups, "_rmdir", rmdir)
    selfcg = tmp_path / "self-cgroup"
    selfcg.write_text("0::/svc\n")
    return fs, selfcg


def test_v2_limits_usage_and_cleanup_on_a_fake_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fs, selfcg = fake_v2(tmp_path, monkeypatch)
    backend, why = cgroups.probe(fs, selfcg)
    assert backend is not None and backend.mechanism == cgroups.V2, why
    own = fs / "unified" / "svc"
    base = own / f"okgin-{os.getpid()}"
    assert (own / "cgroup.subtree_control").read_text().split() == ["+memory", "+pids", "+cpu"]
    assert (base / "cgroup.subtree_control").read_text().split() == ["+memory", "+pids", "+cpu"]
    assert [d.name for d in base.iterdir() if d.is_dir()] == []  # the probe's trial group is gone
    g = backend.group("game-a1-s0", Limits(memory_mb=256, processes=32, cpu_s=5, cpus=2))
    d = g.dirs[""]
    assert d.parent == base
    assert (d / "memory.max").read_text() == str(256 << 20)
    assert (d / "memory.swap.max").read_text() == "0"
    assert (d / "pids.max").read_text() == "32"
    assert (d / "cpu.max").read_text() == "200000 100000"
    assert g.usage() == cgroups.Usage(cpu_s=None) and g.verdict() is None
    (d / "cpu.stat").write_text("usage_usec 4500000\nuser_usec 4000000\nsystem_usec 500000\n")
    (d / "pids.events").write_text("max 3\n")
    assert g.usage() == cgroups.Usage(cpu_s=4.5, oom_kills=0, pid_refusals=3)
    assert g.verdict() == "hit the limit of 32 processes for the whole sandbox (cgroup v2: 3 fork(s) refused)"
    (d / "cpu.stat").write_text("usage_usec 5200000\n")
    assert g.exceeded() == "hit the CPU limit of 5 s for the whole sandbox (cgroup v2: 5.2 CPU-s used)"
    (d / "memory.events").write_text("low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\n")
    assert g.verdict() == "hit the memory limit of 256 MB for the whole sandbox (cgroup v2)"
    # The enforcer ends the sandbox at once, through the runner's stop and cgroup.kill.
    stopped: list[bool] = []
    assert asyncio.run(cgroups.enforce(g, lambda: stopped.append(True), poll=0.01)).startswith("hit the memory limit")
    assert stopped == [True] and (d / "cgroup.kill").read_text() == "1"
    assert asyncio.run(g.remove()) and not d.exists()
    backend.close()
    assert not base.exists()


def test_v2_falls_back_when_its_controllers_are_not_delegated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fs, selfcg = fake_v2(tmp_path, monkeypatch, offered="cpu io")
    backend, why = cgroups.probe(fs, selfcg)
    assert backend is None and "memory and pids controllers are not delegated" in why, why


def test_v1_parsing(tmp_path: Path) -> None:
    """v1 reports: cpuacct.usage (ns), memory.oom_control's oom_kill, pids.events."""
    dirs = {c: tmp_path / c for c in ("memory", "pids", "cpu", "cpuacct")}
    for d in dirs.values():
        d.mkdir()
    (dirs["cpuacct"] / "cpuacct.usage").write_text("2500000000\n")
    (dirs["memory"] / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 2\n")
    (dirs["pids"] / "pids.events").write_text("max 0\n")
    g = cgroups.Group(cgroups.V1, "g", Limits(memory_mb=100, cpu_s=9), dirs)
    assert g.usage() == cgroups.Usage(cpu_s=2.5, oom_kills=2, pid_refusals=0)
    assert g.verdict() == "hit the memory limit of 100 MB for the whole sandbox (cgroup v1)"
    selfcg = tmp_path / "self"
    selfcg.write_text("12:cpu,cpuacct:/a\n4:memory:/b/c\n2:pids:/\n0::/init.scope\n")
    assert cgroups.own_cgroups(selfcg) == ("/init.scope", {"cpu": "/a", "cpuacct": "/a", "memory": "/b/c", "pids": "/"})
