"""``okgin tournament --dask``: a round robin played by the workers of a real Dask cluster.

A scheduler and two workers from the ``dask`` CLI on 127.0.0.1 (``conftest.py``); the
built-in ``random`` and ``simple`` bots and the C example bot, each game sandboxed on a
worker's own referee. Every run here is the same tournament (same participants, same
fixed event secret), so each must record exactly the games of one local run: the same
indices, seats, scores and byte-identical records, whatever the cluster went through
(a worker killed mid-game, the runner killed and resumed). Bad input is refused before
the first game with a sentence naming what is missing, and leaves no results file.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("distributed")

from daskkit import ROOT, DaskCluster, cluster_env, kill_group, python_shim, start_cluster, unfinished_journals, write_config
from tournament.test_tournament_languages import build_c_bot
from tournament.test_tournament_runner import table_of
from tournament.tourkit import PROTOBOT, alive, children_of, games_recorded

from competition.tournament.cli import main
from competition.tournament.store import ResultsStore

pytestmark = pytest.mark.timeout(600)

NAME = "dk"
RUN_S = 300.0  # bounds for a loaded machine, never asserted on
POLL_S = 0.02
SECTIONS: dict[str, dict[str, Any]] = {
    "tournament": {"name": NAME, "seed": "dask-16", "games_per_pairing": 2, "concurrency": 2},
    "rules": {"target_score": 40},
    "clock": {"move_ms": 10000},
}


@pytest.fixture(scope="module")
def c_bot() -> Path:
    return build_c_bot()


@pytest.fixture(scope="module")
def shim(tmp_path_factory: pytest.TempPathFactory) -> Path | None:
    return python_shim(tmp_path_factory.mktemp("pyshim"))


def participants(c_bot: Path, shim: Path | None, c_extra: dict[str, Any] | None = None,
                 c_program: str | None = None) -> list[dict[str, Any]]:
    """random, simple (built-in) and c-simple (the C bot, ``c_extra`` added to its table)."""
    def builtin(name: str) -> dict[str, Any]:
        return {"name": name, "bot": name, **({"env": {"PYTHONPATH": shim}, "dir": [shim]} if shim else {})}

    c = {"name": "c-simple", "command": [c_program or str(c_bot), "--connect", "{endpoint}",
                                         "--name", "{name}"], **(c_extra or {})}
    return [builtin("random"), builtin("simple"), c]


def rows(db: Path) -> list[tuple[Any, ...]]:
    """Every game as stored (the record as its JSON text, byte for byte)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT idx, key, seats, scores, winner, termination, record FROM games ORDER BY idx").fetchall()
    finally:
        conn.close()


def referees(db: Path) -> dict[int, str]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return dict(conn.execute("SELECT idx, referee FROM games").fetchall())
    finally:
        conn.close()


@pytest.fixture(scope="module")
def local_db(tmp_path_factory: pytest.TempPathFactory, c_bot: Path, shim: Path | None) -> Path:
    """The tournament played the ordinary way, on this host's processes."""
    cfg = write_config(tmp_path_factory.mktemp("local") / f"{NAME}.toml", participants(c_bot, shim), **SECTIONS)
    assert main([str(cfg), "--quiet"]) == 0
    db = cfg.with_suffix(".sqlite")
    assert len(rows(db)) == 6
    return db


def runner_process(cfg: Path, address: str, log: Path, *more: str) -> subprocess.Popen[bytes]:
    """``python3 -m okgin tournament CFG --dask ADDRESS`` as its own process."""
    with log.open("wb") as out:
        return subprocess.Popen([sys.executable, "-m", "okgin", "tournament", str(cfg), "--dask", address, "--quiet", *more],
                                cwd=ROOT, env=cluster_env(), stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)


def test_round_robin_over_dask_records_what_a_local_run_does(dask_cluster: DaskCluster, local_db: Path, c_bot: Path,
                                                               shim: Path | None, tmp_path: Path) -> None:
    # The C bot may only run where the licence is (resources = {LICENCE = 1}): the second worker.
    cfg = write_config(tmp_path / f"{NAME}.toml", participants(c_bot, shim, {"resources": {"LICENCE": 1}}), **SECTIONS)
    assert main([str(cfg), "--dask", dask_cluster.address, "--quiet"]) == 0
    db = cfg.with_suffix(".sqlite")
    assert rows(db) == rows(local_db)  # the same games, byte-identical records
    assert table_of(db) == table_of(local_db)
    licensed = [a for a, w in dask_cluster.info().items() if (w.get("resources") or {}).get("LICENCE")]
    assert len(licensed) == 1
    by = referees(db)
    c_games = [g for g in rows(db) if "c-simple" in g[2]]
    assert c_games and all(by[g[0]].endswith(f" on {licensed[0]}") for g in c_games), by
    assert main(["verify", str(db)]) == 0  # the workers' referees committed to the schedule's seeds


def _kill_a_worker_mid_game(dask_cluster: DaskCluster, proc: subprocess.Popen[bytes], before: set[Path]
                            ) -> tuple[Path, str, list[int]] | None:
    """Kill the worker of a game in progress (its referee's journal has no end yet) and
    return that game's journal, the worker's address and its children; ``None`` when
    the run ended before a game could be caught in progress.

    The worker, its referee and bots are frozen first and the journal looked at again:
    a game that ended between the look and the kill would be recorded from the killed
    worker (its result already sent), not replayed (seen once in a fresh-clone run).
    """
    roots = [w.directory for w in dask_cluster.workers]
    deadline = time.monotonic() + RUN_S
    while True:
        found: list[Path] = []
        while not found and time.monotonic() < deadline and proc.poll() is None:
            found = [p for r in roots for p in unfinished_journals(r, NAME, before)]
            time.sleep(POLL_S)
        if not found:
            return None
        owner = dask_cluster.worker_of(found[0])
        assert owner is not None, found[0]
        address, pid = owner
        kids = children_of(pid)
        frozen = [pid, *kids]
        for k in frozen:
            with contextlib.suppress(ProcessLookupError):
                os.kill(k, signal.SIGSTOP)
        if found[0] in [p for r in roots for p in unfinished_journals(r, NAME, before)]:
            os.kill(pid, signal.SIGKILL)  # its referee and bots die with it (PR_SET_PDEATHSIG), stopped or not
            return found[0], address, kids
        for k in frozen:  # it ended meanwhile: let it go on, and take the next game in progress
            with contextlib.suppress(ProcessLookupError):
                os.kill(k, signal.SIGCONT)
        before.add(found[0])


def test_a_worker_killed_mid_game_costs_only_that_game(dask_cluster: DaskCluster, local_db: Path, c_bot: Path,
                                                      shim: Path | None, tmp_path: Path) -> None:
    roots = [w.directory for w in dask_cluster.workers]
    # Six short games: on a busy machine every one of them can end between two looks (a
    # fresh-clone run saw it once), so a run that finished before a game was caught in
    # progress is played again, in a directory of its own, up to three times.
    for attempt in range(3):
        work = tmp_path / f"run{attempt}"
        work.mkdir()
        # journals without an end from before this run (a run again reuses the names)
        before = {p for r in roots for p in unfinished_journals(r, NAME, set())}
        cfg = write_config(work / f"{NAME}.toml", participants(c_bot, shim), **SECTIONS)
        db = cfg.with_suffix(".sqlite")
        proc = runner_process(cfg, dask_cluster.address, work / "runner.log")
        try:
            caught = _kill_a_worker_mid_game(dask_cluster, proc, before)
            if caught is None:
                assert proc.wait(RUN_S) == 0, (work / "runner.log").read_text()[-3000:]
                continue
            journal, killed, kids = caught
            index = int(journal.name.split("-g1-")[0].split("-")[-2])  # table NAME-INDEX-ATTEMPT
            assert proc.wait(RUN_S) == 0, (work / "runner.log").read_text()[-3000:]
            break
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(30)
    else:
        pytest.fail("in three runs no game was caught in progress on a worker")
    assert not referees(db)[index].endswith(f" on {killed}")  # the killed game was played again elsewhere
    # It is recorded as replayed: its attempts, an events row naming the lost worker, `report --games`.
    st = ResultsStore.open_existing(db)
    try:
        attempts = {g.index: g.attempts for g in st.games()}
        assert attempts[index] == 2
        # (Another game the killed worker was playing at that moment was replayed too.)
        for i, n in attempts.items():
            lost = [e for e in st.events(["replay"]) if e[2] == i]
            assert len(lost) == n - 1 and all(f"Dask worker {killed} was lost" in e[3] for e in lost), st.events()
    finally:
        st.close()
    report = subprocess.run([sys.executable, "-m", "okgin", "tournament", "report", str(db), "--games"], cwd=ROOT,
                            env=cluster_env(), capture_output=True, text=True, timeout=120)
    assert re.search(rf"^\s+{index} .*\(attempt 2\)$", report.stdout, re.M), report.stdout
    assert main(["verify", str(db)]) == 0
    assert rows(db) == rows(local_db)  # every game once, as the local run played it
    assert table_of(db) == table_of(local_db)
    # The dead worker's referee and bots died with it (PR_SET_PDEATHSIG).
    deadline = time.monotonic() + 30
    while any(alive(k) for k in kids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert kids and not any(alive(k) for k in kids)
    dask_cluster.wait_for_workers(2)  # its nanny started a new one, for the next tests


def test_the_runner_killed_then_resumed_on_the_same_cluster(dask_cluster: DaskCluster, local_db: Path, c_bot: Path,
                                                            shim: Path | None, tmp_path: Path) -> None:
    cfg = write_config(tmp_path / f"{NAME}.toml", participants(c_bot, shim), **SECTIONS)
    db = cfg.with_suffix(".sqlite")
    proc = runner_process(cfg, dask_cluster.address, tmp_path / "runner.log")
    try:
        deadline = time.monotonic() + RUN_S
        while games_recorded(db) < 2 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(POLL_S)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
    n_killed = games_recorded(db)
    assert 2 <= n_killed < 6, f"the kill must land mid-tournament: {(tmp_path / 'runner.log').read_text()[-2000:]}"
    assert main([str(cfg), "--resume", "--dask", dask_cluster.address, "--quiet"]) == 0
    assert rows(db) == rows(local_db)  # none lost, none twice
    assert table_of(db) == table_of(local_db)
    store = ResultsStore.open_existing(db)
    try:
        assert [e[1] for e in store.events()].count("resume") == 1
    finally:
        store.close()


def test_a_crash_on_a_worker_loses_the_game_and_its_log_comes_back(dask_cluster: DaskCluster, shim: Path | None,
                                                                   tmp_path: Path) -> None:
    # A bot that says hello (it passes the preflight) and exits: every game of it is a crash.
    quitter = {"name": "quitter", "command": [sys.executable, PROTOBOT, "{endpoint}", "--exit-after-hello"]}
    if shim:
        quitter |= {"env": {"PYTHONPATH": shim}, "dir": [shim, Path(PROTOBOT).parent]}
    simple = {"name": "simple", "bot": "simple", **({"env": {"PYTHONPATH": shim}, "dir": [shim]} if shim else {})}
    cfg = write_config(tmp_path / f"{NAME}.toml", [simple, quitter], **SECTIONS)
    assert main([str(cfg), "--dask", dask_cluster.address, "--quiet"]) == 1  # a participant lost every game to crashes
    store = ResultsStore.open_existing(cfg.with_suffix(".sqlite"))
    try:
        games = store.games()
        assert len(games) == 2 and all(g.termination == "crash" and g.culprit == "quitter" for g in games)
    finally:
        store.close()
    logs = sorted((tmp_path / f"{NAME}-run" / "logs").glob("*-quitter.log"))
    assert len(logs) == 2, logs  # the worker kept them (abnormal games) and sent them to the organiser
    assert all(p.read_text().startswith("# played on Dask worker tcp://127.0.0.1:") for p in logs)


def test_local_bots_on_dask_contribute_their_nonces_as_in_a_local_run(dask_cluster: DaskCluster, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 24 item 7 on Dask: the local bots' preflight runs on the workers, and they
    were ended there at once, so no local participant's nonce went into a Dask event's
    deals (``verify --nonce`` failed for every one). Now each bot stays seated on its
    worker for the round: a and c reveal, b commits and withholds (it forfeits, and the
    round does not wait for it longer than the reveal timeout), and a's own nonce checks
    with ``verify`` exactly as after a local run. (No fixed secret: a fixed one takes no
    nonces.)"""
    nonce_a, nonce_b, nonce_c = "a1" * 32, "b2" * 32, "c3" * 32
    # protobot.py with this checkout's okgin and this interpreter's msgpack and zmq, shown to
    # the sandbox and found by PYTHONPATH, run by the real interpreter: however the workers'
    # Python is installed (a venv, an editable install of another tree), the bot starts.
    import msgpack
    import zmq

    shim = python_shim(tmp_path / "pyshim", force=True)
    assert shim is not None
    libs = sorted({Path(m.__file__).resolve().parents[1] for m in (msgpack, zmq) if m.__file__})
    path = os.pathsep.join(map(str, [shim, *libs]))

    def bot(name: str, *extra: str, **more: Any) -> dict[str, Any]:
        return {"name": name, "command": [os.path.realpath(sys.executable), PROTOBOT, "{endpoint}", *extra],
                "env": {"PYTHONPATH": path}, "dir": [shim, Path(PROTOBOT).parent, *libs], **more}

    parts = [bot("a", "--random", "1", "--nonce", nonce_a),
             bot("b", "--random", "2", "--nonce", nonce_b, "--withhold"),
             bot("c", "--random", "3", "--nonce", nonce_c, resources={"LICENCE": 1})]
    sections = {**SECTIONS, "tournament": {k: v for k, v in SECTIONS["tournament"].items() if k != "seed"}}
    cfg = write_config(tmp_path / f"{NAME}.toml", parts, **sections)
    db = cfg.with_suffix(".sqlite")
    assert main([str(cfg), "--dask", dask_cluster.address, "--quiet"]) == 0
    store = ResultsStore.open_existing(db)
    try:
        rec = store.entropy()
        games = store.games()
    finally:
        store.close()
    assert rec is not None and rec["nonces"] == {"a": nonce_a, "c": nonce_c}, rec
    assert rec["withheld"] == ["b"] and rec["absent"] == [], rec
    assert len(games) == 6
    for g in games:
        if "b" in g.seats:
            assert g.termination == "withheld" and g.culprit == "b", g
        else:
            assert g.termination == "normal", g
    capsys.readouterr()
    assert main(["verify", str(db), "--nonce", f"a={nonce_a}"]) == 0
    assert "ok    nonce of a: your nonce went into every deal" in capsys.readouterr().out
    assert main(["verify", str(db), "--nonce", f"c={nonce_b}"]) == 1  # not c's nonce


def test_a_lost_scheduler_stops_the_run_for_a_resume(local_db: Path, c_bot: Path, shim: Path | None,
                                                     tmp_path: Path) -> None:
    cfg = write_config(tmp_path / f"{NAME}.toml", participants(c_bot, shim), **SECTIONS)
    db = cfg.with_suffix(".sqlite")
    log = tmp_path / "runner.log"
    (tmp_path / "doomed").mkdir()
    with start_cluster(tmp_path / "doomed") as doomed:  # a scheduler of its own, and one worker
        proc = runner_process(cfg, doomed.address, log, "--dask-timeout", "2")
        try:
            deadline = time.monotonic() + RUN_S
            while games_recorded(db) < 1 and time.monotonic() < deadline and proc.poll() is None:
                time.sleep(POLL_S)
            kill_group(doomed.scheduler)
            code = proc.wait(RUN_S)  # it stops by itself: no waiting for ever on a scheduler that is gone
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(30)
    out = log.read_text()
    assert code == 1 and f"lost the Dask scheduler at {doomed.address}" in out and "--resume" in out, out[-3000:]
    kept = rows(db)
    assert 1 <= len(kept) < 6 and set(kept) <= set(rows(local_db))  # what was recorded stands (resumed as above)


def test_dask_local_starts_a_cluster_on_this_machine(local_db: Path, c_bot: Path, shim: Path | None,
                                                    tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # simple v c-simple alone: the same deal 0 and the same game keys as that pairing in
    # the three-way run (indices 4 and 5 there), hence the same records.
    parts = participants(c_bot, shim)[1:]
    cfg = write_config(tmp_path / f"{NAME}.toml", parts, **SECTIONS)
    assert main([str(cfg), "--dask", "local"]) == 0
    assert "playing on the Dask scheduler at tcp://127.0.0.1:" in capsys.readouterr().out
    here = rows(cfg.with_suffix(".sqlite"))
    assert [r[1:] for r in here] == [r[1:] for r in rows(local_db)[4:6]]


# --------------------------------------------------------------------------- bad input
def test_an_unreachable_scheduler_is_named_with_the_timeout(c_bot: Path, shim: Path | None, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    cfg = write_config(tmp_path / f"{NAME}.toml", participants(c_bot, shim),
                       **SECTIONS, cluster={"scheduler": address, "timeout": 2})  # from the file, not the command line
    assert main([str(cfg), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"cannot reach the Dask scheduler at {address} within 2 s" in err, err
    assert not cfg.with_suffix(".sqlite").exists()


def test_a_participant_no_worker_can_run_is_refused(dask_cluster: DaskCluster, c_bot: Path, shim: Path | None,
                                                    tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = write_config(tmp_path / f"{NAME}.toml", participants(c_bot, shim, {"resources": {"GPU": 1}}), **SECTIONS)
    assert main([str(cfg), "--dask", dask_cluster.address, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"participant c-simple needs the Dask resources GPU=1, and no worker of the scheduler at {dask_cluster.address} " \
           "offers them" in err, err
    assert "--resources" in err
    assert not cfg.with_suffix(".sqlite").exists()


def test_a_worker_without_the_bots_program_is_named(dask_cluster: DaskCluster, c_bot: Path, shim: Path | None,
                                                    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    # The program is on the organiser's PATH, not on the workers' (built here, not there).
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "okgin-c-bot").symlink_to(c_bot)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    cfg = write_config(tmp_path / f"{NAME}.toml", participants(c_bot, shim, c_program="okgin-c-bot"), **SECTIONS)
    assert main([str(cfg), "--dask", dask_cluster.address, "--quiet"]) == 2
    err = capsys.readouterr().err
    for addr in dask_cluster.info():
        assert f"participant c-simple cannot run on Dask worker {addr}: file not found: 'okgin-c-bot' is not on the PATH" \
               in err, err
    assert not cfg.with_suffix(".sqlite").exists()
