"""Referee crash recovery (issue 9 §3; referee/recovery.py, protocol.md §10.1).

``kill -9`` the referee while 20 games are live, restart it with ``--recover`` on the
same journal directory and endpoint: every client resumes with its token, every game
finishes, and each game's record equals the record of the same seed and the same
(deterministic) choices played straight on the engine — or, for the SDK bots, played
again on a referee that never crashed. The outage is longer than a move's time limit,
so a single second of it charged to a seat would forfeit that seat on time.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from referee.recovery import STATE_DIR
from referee.replay import check_file

from .hkit import (
    Raw,
    RefProc,
    Seats,
    admin,
    error_of,
    expected_record,
    journal_end,
    journal_entries,
    journal_of,
    reserved_table,
    seat_all,
)

pytestmark = pytest.mark.timeout(600)

MOVE_CLOCK = {"move_ms": 4000, "grace_ms": 1000}
BANK_CLOCK = {"bank_ms": 600000, "increment_ms": 100, "grace_ms": 1000}
OUTAGE_S = 6.0  # longer than MOVE_CLOCK's limit plus grace


def resuming(seats: Seats, log: dict[str, Any]) -> None:
    """Make the driver resume a session when the referee no longer knows its connection."""

    def on(table: str, seat: int, c: Raw, m: dict[str, Any]) -> None:
        if m["type"] == "error" and m["name"] == "hello_first":
            old = c.token
            w = c.resume()
            assert w["resumed"] is True and w["token"] == old, w
            log.setdefault("resumed", []).append((table, seat))
            log.setdefault("after", {})[(table, seat)] = []
        elif "after" in log and (table, seat) in log["after"]:
            log["after"][(table, seat)].append(m)
        if m["type"] == "prompt" and m.get("table") == table:
            log.setdefault("prompts", {}).setdefault(table, []).append(m["seq"])
            if log.get("crashed"):
                log.setdefault("first_after", {}).setdefault(table, m["seq"])

    seats.on_message = on


def _entries(journal_dir: Path, table: str) -> list[dict[str, Any]]:
    files = sorted(journal_dir.glob(f"{table}-g1-*.jsonl"))
    return journal_entries(files[0]) if files else []


def bot_process(endpoint: str, token: str, tmp: Path, name: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "okgin", "bot", "simple", "--connect", endpoint, "--token", token, "--name", name, "-q"],
        stdout=subprocess.DEVNULL, stderr=open(tmp / f"{name}.log", "wb"), stdin=subprocess.DEVNULL,
    )


def test_kill9_with_20_live_games_then_recover(tmp_path: Path) -> None:
    ref = RefProc(tmp_path, "--recover", label="first")
    adm = admin(ref.endpoint, validate="errors")
    tables: dict[str, dict[str, Any]] = {}
    seats = Seats()
    # two real SDK bot processes (okgin bot simple) on one table, started first (they are slower)
    # long enough not to end before the crash even while 20 other tables are set up on a loaded machine
    sdk_rules = {"variant": "oklahoma", "target_score": 500}
    sdk_toks = reserved_table(adm, "sdk", 4242, rules=sdk_rules)
    bots = [bot_process(ref.endpoint, tok, tmp_path, f"sdk{i}") for i, tok in enumerate(sdk_toks)]
    deadline = time.monotonic() + 120
    while sum(1 for e in _entries(ref.journal_dir, "sdk") if e["t"] == "action") < 6:
        assert time.monotonic() < deadline, "the SDK bots did not start playing"
        time.sleep(0.05)
    for k in range(20):
        variant = "box" if k % 4 == 3 else "oklahoma"
        clock = MOVE_CLOCK if k % 2 == 0 else BANK_CLOCK
        rules = {"variant": variant, "target_score": 60}
        name = f"live{k}"
        toks = reserved_table(adm, name, 5000 + k, variant, rules=rules, clock=clock)
        tables[name] = {"rules": rules, "seed": 5000 + k, "clock": clock, "tokens": toks}
        seat_all(ref.endpoint, name, toks, seats, validate="errors")
    # a spectator
    spect = Raw(ref.endpoint, validate="errors")
    spect.hello("watcher", role="spectator")
    spect.request({"type": "watch", "table": "live0"}, "snapshot")
    log: dict[str, Any] = {}
    resuming(seats, log)
    seats.drive(until=lambda: all(len(log.get("prompts", {}).get(t, [])) >= 12 for t in tables), keepalive=[spect])
    assert not seats.ends, f"games ended before the crash: {sorted(seats.ends)}"
    # --- the crash
    ref.kill9()
    log["crashed"] = True
    before = {t: journal_entries(journal_of(ref.journal_dir, t)) for t in [*tables, "sdk"]}
    assert all(e[-1]["t"] != "end" for e in before.values()), "a game was over at the crash"
    time.sleep(OUTAGE_S)
    ref2 = RefProc(tmp_path, "--recover", port=ref.port, label="second")
    assert "recovered 21 running game(s)" in ref2.stderr(), ref2.stderr()
    try:
        w = spect.resume()  # the spectator's session survived too
        assert w["resumed"] is True
        seats.drive(keepalive=[spect])  # clients notice (hello_first), resume with their tokens, play on
        assert sorted(set(log["resumed"])) == sorted((t, s) for t, s, _ in seats.clients)
        for name, info in tables.items():
            end = journal_end(ref2.journal_dir, name)
            assert end["termination"] == "normal", f"{name}: {end['termination']}"
            assert end["record"] == expected_record(info["rules"], info["seed"]), f"{name}: the record differs from the engine's"
            entries = journal_entries(journal_of(ref2.journal_dir, name))
            rec = [e for e in entries if e["t"] == "recover"]
            assert len(rec) == 1
            # the prompt in progress was sent again with the same seq
            assert log["first_after"][name] == rec[0]["seq"], (name, log["first_after"][name], rec[0])
            check_file(journal_of(ref2.journal_dir, name))
            if info["clock"] is BANK_CLOCK:
                check_banks(name, before[name], log, info)
        # the spectator watches again (watches are not restored)
        snap = spect.request({"type": "watch", "table": "live0"}, "snapshot")
        assert snap["status"] == "finished" and snap["view"]["hand"] is None
        # the SDK bots resumed by themselves and finished; same game as without a crash
        for b in bots:
            assert b.wait(120) == 0, (tmp_path / "sdk0.log").read_text()[-2000:]
        crashed = journal_end(ref2.journal_dir, "sdk")
        assert crashed["termination"] == "normal"
        toks = reserved_table(adm2 := admin(ref2.endpoint, validate="errors"), "sdk-again", 4242, rules=sdk_rules)
        again = [bot_process(ref2.endpoint, tok, tmp_path, f"again{i}") for i, tok in enumerate(toks)]
        for b in again:
            assert b.wait(120) == 0
        assert journal_end(ref2.journal_dir, "sdk-again")["record"] == crashed["record"]
        adm2.close()
        assert ref2.internal_errors() == []
    finally:
        seats.close()
        spect.close()
        adm.close()
        for b in bots:
            if b.poll() is None:
                b.kill()
                b.wait(30)
        ref2.stop()


def check_banks(name: str, pre: list[dict[str, Any]], log: dict[str, Any], info: dict[str, Any]) -> None:
    """After the restart, every bank is what the journal says it was: the outage (six
    seconds, during which the seat to act was prompted) was charged to nobody."""
    n_seats = len(info["tokens"])
    banks = [BANK_CLOCK["bank_ms"]] * n_seats
    for e in pre:
        if e["t"] == "action":
            banks[e["seat"]] = max(0, banks[e["seat"]] - e["ms"]) + BANK_CLOCK["increment_ms"]
    # the first seat of this table to resume got its snapshot before any move after the
    # restart (the seat to act cannot move before it has resumed): compare that one
    first = next(ts for ts in log["resumed"] if ts[0] == name)
    snap = next(m for m in log["after"][first] if m["type"] == "snapshot" and m["table"] == name)
    to_act = snap["view"]["to_act"]
    for s in range(n_seats):
        if s != to_act:  # the seat to act: its bank shows the (uncharged) instants since it resumed
            assert snap["clocks"][s] == banks[s], (name, first, snap["clocks"], banks)


def test_restart_without_recover_closes_what_was_left(tmp_path: Path) -> None:
    ref = RefProc(tmp_path, label="first")
    adm = admin(ref.endpoint, validate="errors")
    seats = Seats()
    clients = []
    for k, variant in enumerate(("oklahoma", "box")):
        toks = reserved_table(adm, f"left{k}", 70 + k, variant)
        clients += seat_all(ref.endpoint, f"left{k}", toks, seats, validate="errors")
    count = [0]

    def on(t: str, s: int, c: Raw, m: dict[str, Any]) -> None:
        count[0] += m["type"] == "prompt"

    seats.on_message = on
    seats.drive(until=lambda: count[0] >= 10)
    ref.kill9()
    ref2 = RefProc(tmp_path, port=ref.port, label="second")
    try:
        assert "closed 2 unfinished game(s)" in ref2.stderr()
        for k in range(2):
            end = journal_end(ref2.journal_dir, f"left{k}")
            assert end["termination"] == "abandoned" and end["seed"] == 70 + k
            check_file(journal_of(ref2.journal_dir, f"left{k}"))
        for c in clients:
            c.reopen()
            rid = c.next_id()
            c.send({"type": "hello", "id": rid, "protocol": 1, "role": "player", "name": "x", "token": c.token})
            error_of(c.wait_for(lambda m, rid=rid: m.get("id") == rid), "bad_token")
        assert not list((ref2.journal_dir / STATE_DIR / "tables").glob("*.json"))
    finally:
        seats.close()
        ref2.stop()


def test_one_referee_per_journal_directory(tmp_path: Path) -> None:
    a = RefProc(tmp_path, label="a")
    b = RefProc(tmp_path, journal_dir=a.journal_dir, label="b")
    try:
        assert "another referee is using" in b.stderr()
        adm = admin(a.endpoint, validate="errors")
        reserved_table(adm, "mine", 1)
        assert (a.journal_dir / STATE_DIR / "tables" / "mine.json").exists()
        adm.close()
        assert b.stop() == 0
        assert (a.journal_dir / STATE_DIR / "tables" / "mine.json").exists(), "the second referee touched the first one's state"
    finally:
        a.stop()


def test_state_is_private_and_holds_no_token(tmp_path: Path) -> None:
    ref = RefProc(tmp_path, label="r")
    adm = admin(ref.endpoint, validate="errors")
    toks = reserved_table(adm, "p", 99)
    seats = Seats()
    clients = seat_all(ref.endpoint, "p", toks, seats, validate="errors")
    c0 = clients[0]
    c0.wait_for(lambda m: m["type"] == "game_start")
    root = ref.journal_dir / STATE_DIR
    files = [p for p in root.rglob("*") if p.is_file()]
    assert files
    assert stat.S_IMODE(os.stat(root).st_mode) == 0o700
    text = ""
    for p in files:
        assert stat.S_IMODE(os.stat(p).st_mode) == 0o600, p
        text += p.read_text()
    for tok in [*toks, adm.token]:
        assert tok not in text, "a token in clear in the recovery state"
    state = json.loads((root / "tables" / "p.json").read_text())
    assert state["seed"] == 99 and state["status"] == "playing"  # the secret the journal lacks
    seats.close()
    adm.close()
    assert ref.stop() == 0
    assert not (root / "sessions.log").exists() and not list((root / "tables").iterdir()), "a clean stop leaves no state"


def test_a_torn_journal_line_is_cut_off(tmp_path: Path) -> None:
    ref = RefProc(tmp_path, "--recover", label="first")
    adm = admin(ref.endpoint, validate="errors")
    toks = reserved_table(adm, "torn", 31, rules={"target_score": 40})
    seats = Seats()
    seat_all(ref.endpoint, "torn", toks, seats, validate="errors")
    log: dict[str, Any] = {}
    resuming(seats, log)
    seats.drive(until=lambda: len(log.get("prompts", {}).get("torn", [])) >= 8)
    ref.kill9()
    path = journal_of(ref.journal_dir, "torn")
    with open(path, "ab") as f:  # what a crash in the middle of a write leaves
        f.write(b'{"action":{"kind":"dis')
    ref2 = RefProc(tmp_path, "--recover", port=ref.port, label="second")
    try:
        assert b'{"action":{"kind":"dis' not in path.read_bytes()
        seats.drive()
        end = journal_end(ref2.journal_dir, "torn")
        assert end["record"] == expected_record({"variant": "oklahoma", "target_score": 40}, 31)
        check_file(path)
    finally:
        seats.close()
        ref2.stop()
