"""Faults (issue 9 §2), with real processes: a bot SIGKILLed mid-hand, a bot frozen
(SIGSTOP) past its clock under each timeout policy, reconnection storms, and a
spectator that never reads. Each ends as its table's policy says, with the right
termination reason, and the games at the other tables end exactly as on the engine.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from bounded import readline

from referee.replay import check_file

from .hkit import (
    Raw,
    RefProc,
    Seats,
    admin,
    bot_process,
    error_of,
    expected_record,
    journal_end,
    journal_entries,
    journal_of,
    reserved_table,
    seat_all,
)

pytestmark = pytest.mark.timeout(300)
HERE = Path(__file__).resolve().parent
FAST_BEATS = ("--heartbeat-ms", "200", "--liveness", "10")  # a silent peer is gone after 2 s


def wait_journal(ref: RefProc, table: str, pred, timeout_s: float = 60.0, meanwhile: Seats | None = None) -> list[dict[str, Any]]:
    """Poll a table's journal until ``pred(entries)`` (progress of processes we do not
    drive), driving the ``meanwhile`` clients (an honest table) in the meantime."""
    deadline = time.monotonic() + timeout_s
    found: list[list[dict[str, Any]]] = []
    last = [0.0]

    def ready() -> bool:
        now = time.monotonic()
        assert now < deadline, f"{table}: the journal never got there"
        if now - last[0] < 0.02:
            return False
        last[0] = now
        files = sorted(ref.journal_dir.glob(f"{table}-g1-*.jsonl"))
        entries = journal_entries(files[0]) if files else []
        if entries and pred(entries):
            found.append(entries)
            return True
        return False

    if meanwhile is not None:
        meanwhile.drive(until=lambda: ready() or meanwhile.done())
    while not found:
        if not ready():
            time.sleep(0.02)
    return found[0]


def actions(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in entries if e["t"] == "action"]


def calm_table(ref: RefProc, adm: Raw, name: str, seed: int, seats: Seats | None = None) -> tuple[Seats, dict[str, Any]]:
    """An honest game at another table: it must end exactly as on the engine."""
    rules = {"variant": "oklahoma", "target_score": 60}
    seats = seats or Seats()
    seat_all(ref.endpoint, name, reserved_table(adm, name, seed, rules=rules), seats, validate="errors")
    return seats, rules


def reap(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in procs:
        if p.poll() is None:
            os.kill(p.pid, signal.SIGCONT)
            p.kill()
        p.wait(30)


def test_bot_killed_mid_hand_forfeits_by_disconnect(tmp_path: Path) -> None:
    ref = RefProc(tmp_path, *FAST_BEATS, label="kill")
    bots: list[subprocess.Popen[bytes]] = []
    try:
        adm = admin(ref.endpoint, validate="errors")
        # a game that cannot end before the kill lands, however late a loaded machine runs
        # this test (a 200-point game of two simple bots once ended first: 693 moves)
        toks = reserved_table(adm, "victim", 71, rules={"target_score": 100000}, policies={"disconnect_grace_ms": 500})
        bots = [bot_process(ref.endpoint, tok, tmp_path, f"bot{i}") for i, tok in enumerate(toks)]
        calm, rules = calm_table(ref, adm, "calm", 72)
        # mid-hand: some moves made in the current hand, no hand ended yet at this moment
        entries = wait_journal(ref, "victim", lambda es: len(actions(es)) >= 6 and es[-1]["t"] == "action", meanwhile=calm)
        assert entries[-1]["t"] == "action"
        os.kill(bots[0].pid, signal.SIGKILL)
        calm.drive()
        end = journal_end(ref.journal_dir, "victim")
        assert end["termination"] == "disconnect" and end["final"]["winner"] == 1
        es = journal_entries(journal_of(ref.journal_dir, "victim"))
        assert {"t": "resign", "seat": 0, "reason": "disconnect"} in es and any(
            e["t"] == "disconnect" and e["seat"] == 0 for e in es
        )
        assert bots[1].wait(60) == 0, (tmp_path / "bot1.log").read_text()[-2000:]  # the survivor got its game_end and left
        check_file(journal_of(ref.journal_dir, "victim"))
        assert journal_end(ref.journal_dir, "calm")["record"] == expected_record(rules, 72)
        calm.close()
        assert ref.internal_errors() == []
    finally:
        reap(bots)
        ref.stop()


def test_frozen_bot_times_out_under_forfeit(tmp_path: Path) -> None:
    ref = RefProc(tmp_path, *FAST_BEATS, label="freeze")
    bots: list[subprocess.Popen[bytes]] = []
    try:
        adm = admin(ref.endpoint, validate="errors")
        toks = reserved_table(
            adm,
            "frozen",
            81,
            rules={"target_score": 100000},  # cannot end before the freeze lands (200 once did, on CI)
            clock={"move_ms": 400, "grace_ms": 200},
            policies={"timeout": "forfeit"},
        )
        bots = [bot_process(ref.endpoint, tok, tmp_path, f"bot{i}") for i, tok in enumerate(toks)]
        calm, rules = calm_table(ref, adm, "calm", 82)
        wait_journal(ref, "frozen", lambda es: len(actions(es)) >= 4, meanwhile=calm)
        os.kill(bots[1].pid, signal.SIGSTOP)
        calm.drive()
        end = journal_end(ref.journal_dir, "frozen")
        assert end["termination"] == "timeout", end["termination"]
        es = journal_entries(journal_of(ref.journal_dir, "frozen"))
        assert any(e["t"] == "timeout" and e["seat"] == 1 and e["policy"] == "forfeit" for e in es)
        assert {"t": "resign", "seat": 1, "reason": "timeout"} in es
        assert bots[0].wait(60) == 0
        check_file(journal_of(ref.journal_dir, "frozen"))
        assert journal_end(ref.journal_dir, "calm")["record"] == expected_record(rules, 82)
        calm.close()
        assert ref.internal_errors() == []
    finally:
        reap(bots)
        ref.stop()


def test_frozen_bot_gets_default_moves_then_comes_back(tmp_path: Path) -> None:
    """Policy default_move: while frozen the referee plays for it (auto moves); thawed
    within the disconnect grace, the bot resumes its session (hello_first -> resume) and
    the game ends normally."""
    ref = RefProc(tmp_path, *FAST_BEATS, label="thaw")
    bots: list[subprocess.Popen[bytes]] = []
    try:
        adm = admin(ref.endpoint, validate="errors")
        toks = reserved_table(
            adm,
            "thaw",
            91,
            # long enough that the freeze lands in it on a loaded machine (a 200-point game
            # once ended before a freeze), short enough to finish after the thaw
            rules={"target_score": 1000},
            clock={"move_ms": 300, "grace_ms": 100},
            policies={"timeout": "default_move", "disconnect_grace_ms": 30000},
        )
        bots = [bot_process(ref.endpoint, tok, tmp_path, f"bot{i}") for i, tok in enumerate(toks)]
        wait_journal(ref, "thaw", lambda es: len(actions(es)) >= 4)
        os.kill(bots[0].pid, signal.SIGSTOP)
        # frozen past several move limits, and past the liveness: the referee holds its seat
        wait_journal(
            ref,
            "thaw",
            lambda es: (
                sum(1 for e in actions(es) if e["auto"] and e["seat"] == 0) >= 3
                and any(e["t"] == "disconnect" and e["seat"] == 0 for e in es)
            ),
        )
        os.kill(bots[0].pid, signal.SIGCONT)
        for b in bots:
            assert b.wait(120) == 0, (tmp_path / "bot0.log").read_text()[-2000:]
        end = journal_end(ref.journal_dir, "thaw")
        es = journal_entries(journal_of(ref.journal_dir, "thaw"))
        assert end["termination"] == "normal"
        assert any(e["t"] == "timeout" and e["seat"] == 0 and e["policy"] == "default_move" for e in es)
        assert any(e["t"] == "reconnect" and e["seat"] == 0 for e in es)
        assert any(not e["auto"] and e["seat"] == 0 for e in actions(es)[-10:]), "the thawed bot never played again"
        check_file(journal_of(ref.journal_dir, "thaw"))
    finally:
        reap(bots)
        ref.stop()


def test_reconnection_storms(tmp_path: Path) -> None:
    """Seats that drop their connection and resume with their token over and over, also
    while a prompt is pending, play the same game as without; hundreds of clients that
    say hello and vanish are forgotten (the session limit is not used up for good)."""
    ref = RefProc(tmp_path, *FAST_BEATS, "--max-sessions", "200", label="storm")
    try:
        adm = admin(ref.endpoint, validate="errors")
        seats = Seats()
        games = {}
        for k, variant in enumerate(("oklahoma", "box")):
            rules = {"variant": variant, "target_score": 50}
            seat_all(
                ref.endpoint,
                f"storm{k}",
                reserved_table(adm, f"storm{k}", 100 + k, variant, rules=rules),
                seats,
                validate="errors",
            )
            games[f"storm{k}"] = rules
        _, calm_rules = calm_table(ref, adm, "calm", 109, seats)
        resumes = [0]

        def churn(table: str, seat: int, c: Raw, m: dict[str, Any]) -> None:
            if (
                table.startswith("storm")
                and m["type"] == "prompt"
                and m["table"] == table
                and m["seq"] % 3 == 0
                and resumes[0] < 300
            ):
                for _ in range(2):  # drop the connection and resume, twice, before answering
                    c.resume()
                    resumes[0] += 1

        seats.on_message = churn
        seats.drive()
        assert resumes[0] >= 100
        for table, rules in games.items():
            seed = 100 + int(table[-1])
            assert journal_end(ref.journal_dir, table)["record"] == expected_record(rules, seed)
        # a storm of hellos that vanish without a word
        ghosts = []
        for i in range(400):
            g = Raw(ref.endpoint, validate="none")
            g.send({"type": "hello", "protocol": 1, "role": "player", "name": f"ghost{i}", "id": 1})
            ghosts.append(g)
        limited = 0
        for g in ghosts:
            m = g.recv()
            if m["type"] == "error":
                error_of(m, "limit_reached")
                limited += 1
            g.close()
        assert limited > 0  # the limit held during the storm; the referee forgets the ghosts once silent
        deadline = time.monotonic() + 30
        while True:
            c = Raw(ref.endpoint, validate="none")
            m = c.request({"type": "hello", "protocol": 1, "role": "player", "name": "after"})
            c.close()
            if m["type"] == "welcome":
                break
            assert time.monotonic() < deadline, "the vanished sessions were never forgotten"
            time.sleep(0.2)
        assert journal_end(ref.journal_dir, "calm")["record"] == expected_record(calm_rules, 109)
        seats.close()
        assert ref.internal_errors() == []
    finally:
        ref.stop()


def test_a_spectator_that_never_reads(tmp_path: Path) -> None:
    """Its feed is not queued without bound (cut off after 50 undeliverable messages in a
    row, then told ``lagging``) and the games it watches are not slowed: they end, and
    end exactly as on the engine."""
    ref = RefProc(tmp_path, "--watcher-drop-limit", "50", label="deaf")
    flag = tmp_path / "read-now"
    deaf = None
    try:
        adm = admin(ref.endpoint, validate="errors")
        seats = Seats()
        games = {}
        for k in range(6):
            rules = {"variant": "box" if k % 2 else "oklahoma", "target_score": 150}
            seat_all(
                ref.endpoint,
                f"busy{k}",
                reserved_table(adm, f"busy{k}", 120 + k, rules["variant"], rules=rules),
                seats,
                validate="errors",
            )
            games[f"busy{k}"] = rules
        deaf = subprocess.Popen(
            [
                sys.executable,
                str(HERE / "deaf_spectator.py"),
                ref.endpoint,
                *[a for t in games for a in ("--watch", t)],
                "--until",
                str(flag),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert deaf.stdout is not None
        assert json.loads(readline(deaf.stdout, 60, "the deaf spectator"))["ready"]
        feed = [0]
        watcher = Raw(ref.endpoint, validate="errors")  # a reading spectator, to count the feed
        watcher.hello("reader", role="spectator")
        for t in games:
            watcher.request({"type": "watch", "table": t}, "snapshot")
        seats.add("busy0", -1, watcher)  # driven (read) with the players; it is never prompted
        seats.on_message = lambda t, s, c, m: (
            feed.__setitem__(0, feed[0] + 1) if c is watcher and m["type"] in ("event", "hand_end") else None
        )
        seats.drive(until=lambda: all((t, s) in seats.ends for t, s, c in seats.clients if c is not watcher))
        for t, rules in games.items():
            assert journal_end(ref.journal_dir, t)["record"] == expected_record(rules, 120 + int(t[-1]))
        flag.touch()
        out, _ = deaf.communicate(timeout=120)
        report = json.loads(out.strip().splitlines()[-1])
        got = sum(report["got"].values())
        assert report["lagging"], f"never told it was cut off: {report}"
        # What it does get is what the kernel's socket buffers and ZeroMQ's pipe held before
        # the referee saw the watcher as undeliverable: a share that grows with the machine's
        # load (half was exceeded once on a busy CI run), but never the whole feed.
        assert got < feed[0] * 0.8, f"it received {got} of {feed[0]} feed messages: they were queued for it"
        seats.close()
        assert ref.internal_errors() == []
    finally:
        if deaf is not None and deaf.poll() is None:
            deaf.kill()
            deaf.wait(30)
        ref.stop()
