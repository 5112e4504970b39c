"""Crash recovery keeps what a deal's check needs (protocol 1.4, issue 14 item 1).

A ``kill -9`` must lose neither the running game's salt (without it the game's
``seed_hash`` could never be checked) nor the seeds a deferred table keeps for an
admin's ``reveal``: both live in the private recovery state, beside the seed.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

import pytest

from referee.recovery import STATE_DIR
from referee.replay import check_file

from .hkit import RefProc, Seats, admin, error_of, journal_of, reserved_table, seat_all

pytestmark = pytest.mark.timeout(300)


def commitment(seed: str | int, salt: str) -> str:
    return hashlib.sha256(bytes.fromhex(salt) + str(seed).encode()).hexdigest()


def test_salt_and_deferred_seeds_survive_kill9(tmp_path: Path) -> None:
    ref = RefProc(tmp_path, "--recover", label="first")
    adm = admin(ref.endpoint)
    toks = reserved_table(adm, "sec", 77, reveal="deferred", rules={"target_score": 30})
    seats = Seats()
    c0, c1 = seat_all(ref.endpoint, "sec", toks, seats, validate="errors")
    c0.wait_for(lambda m: m["type"] == "game_start")
    c0.request({"type": "resign", "table": "sec"}, "ok")
    assert c1.wait_for(lambda m: m["type"] == "game_end")["seed"] is None
    r1 = adm.request({"type": "reveal", "table": "sec", "game": 1}, "revealed")
    assert r1["seed"] == 77 and commitment(77, r1["salt"]) == r1["seed_hash"]
    for c in (c0, c1):
        c.request({"type": "rematch", "table": "sec"}, "ok")
    g2 = c1.wait_for(lambda m: m["type"] == "game_start" and m["game"] == 2)
    state_path = ref.journal_dir / STATE_DIR / "tables" / "sec.json"
    state = json.loads(state_path.read_text())
    assert stat.S_IMODE(os.stat(state_path).st_mode) == 0o600
    assert state["reveal"] == "deferred" and state["status"] == "playing"
    assert commitment(state["seed"], state["salt"]) == g2["seed_hash"]  # the running game's secret pair
    assert [1, 77, r1["salt"], r1["seed_hash"]] in state["deals"]
    ref.kill9()
    ref2 = RefProc(tmp_path, "--recover", port=ref.port, label="second")
    try:
        assert "recovered 1 running game(s)" in ref2.stderr(), ref2.stderr()
        adm2 = admin(ref2.endpoint)
        r1b = adm2.request({"type": "reveal", "table": "sec", "game": 1}, "revealed")
        assert (r1b["seed"], r1b["salt"], r1b["seed_hash"]) == (r1["seed"], r1["salt"], r1["seed_hash"])
        error_of(adm2.request({"type": "reveal", "table": "sec", "game": 2}), "game_in_progress")
        seats.drive()  # the players resume (hello_first) and finish game 2
        ends = {s: m for (_, s), m in seats.ends.items()}
        assert all(e["game"] == 2 and e["seed"] is None and e["seed_hash"] == g2["seed_hash"] for e in ends.values())
        r2 = adm2.request({"type": "reveal", "table": "sec", "game": 2}, "revealed")
        assert r2["seed"] == state["seed"] and commitment(r2["seed"], r2["salt"]) == g2["seed_hash"]
        assert check_file(journal_of(ref2.journal_dir, "sec", 2)).termination == "normal"
    finally:
        seats.close()
        adm.close()
        ref2.stop()


def test_a_restart_without_recover_still_checks(tmp_path: Path) -> None:
    """Closing a crashed referee's games writes their end lines with seed and salt."""
    ref = RefProc(tmp_path, "--recover", label="first")
    adm = admin(ref.endpoint, validate="errors")
    toks = reserved_table(adm, "gone", 12)
    seats = Seats()
    c0, _ = seat_all(ref.endpoint, "gone", toks, seats, validate="errors")
    g = c0.wait_for(lambda m: m["type"] == "game_start")
    ref.kill9()
    ref2 = RefProc(tmp_path, port=ref.port, label="second")
    try:
        assert "closed 1 unfinished game(s)" in ref2.stderr()
        path = journal_of(ref2.journal_dir, "gone")
        end = json.loads(path.read_text().splitlines()[-1])
        assert end["t"] == "end" and commitment(12, end["salt"]) == g["seed_hash"]
        check_file(path)
    finally:
        seats.close()
        adm.close()
        ref2.stop()
