"""``okgin tournament verify`` checks everything, and says what it checked (issue 24, item 6).

A real (small) round robin is played once; each test tampers with a copy of its results
file (and of its run directory's journals) with sqlite3, as an organiser with the file
could, and verify must exit 1 naming the check that failed. Before this, every one of
these tamperings (but the score edit) verified clean: exit 0.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from competition.tournament.chain import chain_head
from competition.tournament.cli import main
from okgin import Game

from .tourkit import protobot, write_config

pytestmark = pytest.mark.timeout(240)

FAST_RULES = {"target_score": 40}


def play(d: Path, name: str, tournament: dict[str, Any], n: int = 3) -> tuple[Path, str]:
    parts = [{"name": x, "command": protobot("--random", str(i))} for i, x in enumerate("abc"[:n], 1)]
    cfg = write_config(d / f"{name}.toml", parts, tournament=tournament, rules=FAST_RULES)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main([str(cfg), "--quiet"])
    assert code == 0, out.getvalue()
    return d / f"{name}.sqlite", out.getvalue()


@pytest.fixture(scope="module")
def event(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """6 games: a v b, a v c, b v c, one deal each in both seatings; concurrency 2."""
    return play(tmp_path_factory.mktemp("verify"), "vf", {"games_per_pairing": 2, "concurrency": 2})


@pytest.fixture(scope="module")
def fixed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """An event whose secret the organiser fixed (tournament.seed)."""
    return play(tmp_path_factory.mktemp("fixed"), "fx", {"seed": "chosen", "games_per_pairing": 2}, n=2)


def copy_event(db: Path, to: Path, journals: bool = True) -> Path:
    """The results file (and its run directory's journals) somewhere else."""
    to.mkdir(parents=True, exist_ok=True)
    out = to / db.name
    for side in ("", "-wal", "-shm"):
        if db.with_name(db.name + side).exists():
            shutil.copy(db.with_name(db.name + side), out.with_name(out.name + side))
    if journals:
        run = db.with_name(db.stem + "-run")
        for j in run.glob("journals-*"):
            shutil.copytree(j, to / f"{db.stem}-run" / j.name)
    return out


def sql(db: Path, *statements: str, args: tuple[Any, ...] = ()) -> None:
    conn = sqlite3.connect(db)
    try:
        for s in statements:
            conn.execute(s, args if "?" in s else ())
        conn.commit()
    finally:
        conn.close()


def verify(db: Path, *more: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["verify", str(db), *more])
    return code, out.getvalue()


def run_report(db: Path) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["report", str(db)])
    return code, out.getvalue()


def failed(out: str) -> set[str]:
    return {m.group(1) for m in re.finditer(r"^FAIL  ([a-z ]+):", out, re.M)}


def row(db: Path, idx: int) -> dict[str, Any]:
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        return dict(conn.execute("SELECT * FROM games WHERE idx = ?", (idx,)).fetchone())
    finally:
        conn.close()


# ---------------------------------------------------------------- the clean event
def test_a_clean_event_verifies_and_says_what_it_checked(event: tuple[Path, str]) -> None:
    db, run_out = event
    code, out = verify(db)
    assert code == 0, out
    names = re.findall(r"^ok    ([a-z ]+):", out, re.M)
    assert names == ["file", "secret", "secret origin", "nonces", "games", "deals", "binding", "commitments", "records",
                     "terminations", "journals", "chain"], out
    assert "6 of 6 scheduled game(s) present" in out and "6 of 6 game(s) agree with their referee journal" in out
    # The commitment and chain head it prints are the ones the run printed (to publish).
    com = re.search(r"^commitment  ([0-9a-f]{64})$", out, re.M)
    head = re.search(r"^chain head  ([0-9a-f]{64}) \(6 game\(s\)\)$", out, re.M)
    assert com and head, out
    assert f"commitment is {com.group(1)}" in run_out
    assert f"results chain head {head.group(1)} over 6 game(s)" in run_out


def test_the_chain_is_over_schedule_order_not_finishing_order(event: tuple[Path, str], tmp_path: Path) -> None:
    """Games finish out of order with concurrency 2; the head depends only on the rows."""
    db, _ = event
    copy = copy_event(db, tmp_path, journals=False)
    conn = sqlite3.connect(copy)
    try:
        before = chain_head(conn)
        # The same rows inserted in another order give the same head.
        rows = conn.execute("SELECT * FROM games ORDER BY finished DESC").fetchall()
        conn.execute("DELETE FROM games")
        marks = ",".join("?" * len(rows[0]))
        for r in rows:
            conn.execute(f"INSERT INTO games VALUES ({marks})", r)
        conn.commit()
        assert chain_head(conn) == before and before.games == 6
    finally:
        conn.close()


# --------------------------------------------------------------------- tampering
def _swap_seatings(db: Path) -> None:
    """Swap the records of deal 0's two a-v-b seatings, with everything that follows
    from them (scores, winner, hands, termination, clocks), consistently: games 0 and 1
    keep their seats, so the record's winner is now the other participant."""
    r0, r1 = row(db, 0), row(db, 1)
    for mine, other in ((r0, r1), (r1, r0)):
        rec = json.loads(other["record"])
        w = Game.from_record(rec).winner
        seats = json.loads(mine["seats"])
        sql(db, "UPDATE games SET record = ?, scores = ?, winner = ?, hands = ?, termination = ?, clocks = ? WHERE idx = ?",
            args=(other["record"], other["scores"], None if w is None else seats[w], other["hands"], other["termination"],
                  other["clocks"], mine["idx"]))


def _relabel(db: Path) -> None:
    r = row(db, 2)
    loser = next(s for s in json.loads(r["seats"]) if s != r["winner"])
    sql(db, "UPDATE games SET termination = 'timeout', culprit = ?, reason = ? WHERE idx = 2",
        args=(loser, f"{loser} ran out of time"))


def _journal_edit(db: Path) -> None:
    """The journal of game 4 says another final than the record (a copy of game 5's)."""
    run = db.with_name(db.stem + "-run")
    path = next(run.glob(f"journals-*/{row(db, 4)['table_id']}-g1-*.jsonl"))
    lines = path.read_text().split("\n")
    end = json.loads(lines[-2])
    end["record"] = json.loads(row(db, 5)["record"])
    lines[-2] = json.dumps(end, sort_keys=True, separators=(",", ":"))
    path.write_text("\n".join(lines))


def _insert(db: Path) -> None:
    cols = "deal, seating, seed, seats, scores, winner, termination, culprit, reason, hands, clocks, record, referee, " \
           "table_id, attempts, started, finished"
    sql(db, f"INSERT INTO games (idx, key, {cols}) SELECT 6, key || '-again', {cols} FROM games WHERE idx = 0")


def _swap_salts(db: Path) -> None:
    conn = sqlite3.connect(db)
    try:
        (h0, s0), (h1, s1) = conn.execute("SELECT seed_hash, salt FROM commitments WHERE idx IN (0, 1) ORDER BY idx").fetchall()
        conn.execute("UPDATE commitments SET seed_hash = ?, salt = ? WHERE idx = 0", (h1, s1))
        conn.execute("UPDATE commitments SET seed_hash = ?, salt = ? WHERE idx = 1", (h0, s0))
        conn.commit()
    finally:
        conn.close()


TAMPERINGS = {
    # what was done: (the change, the checks that must name it)
    "delete a game": (lambda db: sql(db, "DELETE FROM games WHERE idx = 3", "DELETE FROM commitments WHERE idx = 3"),
                      {"games", "chain"}),
    "swap a deal's two seatings": (_swap_seatings, {"journals", "chain"}),
    "relabel a normal game a timeout forfeit": (_relabel, {"terminations", "chain"}),
    "edit a score": (lambda db: sql(db, "UPDATE games SET scores = '[40, 39]' WHERE idx = 3"), {"records", "chain"}),
    "edit a game's reason and clocks": (lambda db: sql(db, "UPDATE games SET reason = 'x', clocks = '{}' WHERE idx = 4"),
                                        {"chain"}),
    "insert an extra game": (_insert, {"games", "chain"}),
    "edit the chain head": (lambda db: sql(db, "UPDATE meta SET value = '" + "ab" * 32 + "' WHERE key = 'chain_head'"),
                            {"chain"}),
    "delete the chain head": (lambda db: sql(db, "DELETE FROM meta WHERE key IN ('chain_head', 'chain_games')"),
                              {"chain"}),
    "a journal that disagrees with its record": (_journal_edit, {"journals"}),
    "swap two seatings' salts and seed hashes": (_swap_salts, {"journals", "chain"}),
    "mark an unfinished event finished": (lambda db: sql(db, "DELETE FROM games WHERE idx = 5"), {"games", "chain"}),
    "reveal a deal nobody played": (lambda db: sql(db, "INSERT INTO deals VALUES (7, 'cafe', 0)"), {"deals"}),
    "reuse a salt": (lambda db: sql(db, "UPDATE commitments SET salt = (SELECT salt FROM commitments WHERE idx = 0), "
                                    "seed_hash = (SELECT seed_hash FROM commitments WHERE idx = 0) WHERE idx = 1"),
                     {"commitments", "journals", "chain"}),
    "rename a game's table": (lambda db: sql(db, "UPDATE games SET table_id = 'vf-9-1' WHERE idx = 2"),
                              {"binding", "chain"}),
}


@pytest.mark.parametrize("what", list(TAMPERINGS))
def test_each_tampering_exits_1_naming_what_failed(event: tuple[Path, str], tmp_path: Path, what: str) -> None:
    db, _ = event
    copy = copy_event(db, tmp_path)
    change, checks = TAMPERINGS[what]
    change(copy)
    code, out = verify(copy)
    assert code == 1, out
    assert checks <= failed(out), out
    assert "MISMATCH" in out and "okgin tournament verify: FAILED: " in out
    if what == "delete a game":  # the report no longer calls it finished without a word
        code, rep = run_report(copy)
        assert code == 0 and "WARNING: the file says the event finished, but 1 of its 6 games are missing" in rep, rep


def test_a_consistent_swap_without_journals_is_caught_by_the_chain(event: tuple[Path, str], tmp_path: Path) -> None:
    """With no journal at hand, the published chain head is what still catches it."""
    db, _ = event
    copy = copy_event(db, tmp_path, journals=False)
    _swap_seatings(copy)
    code, out = verify(copy)
    assert code == 1 and failed(out) == {"chain"}, out
    assert "skip  journals" in out


# --------------------------------------------------------------- the secret's origin
def test_an_organiser_chosen_secret_is_said_and_cannot_be_hidden(fixed: tuple[Path, str], tmp_path: Path) -> None:
    db, _ = fixed
    code, out = verify(db)
    assert code == 0, out
    assert "ok    secret origin: CHOSEN BY THE ORGANISER" in out
    # The flag cleared (or deleted): the stored config still says the secret was fixed.
    for i, change in enumerate(("UPDATE meta SET value = '0' WHERE key = 'secret_fixed'",
                                "DELETE FROM meta WHERE key = 'secret_fixed'")):
        copy = copy_event(db, tmp_path / str(i))
        sql(copy, change)
        code, out = verify(copy)
        assert code == 1 and {"secret origin", "chain"} <= failed(out), out
    # The config's seed removed too: its fingerprint no longer matches.
    copy = copy_event(db, tmp_path / "cfg")
    conn = sqlite3.connect(copy)
    cfg = json.loads(conn.execute("SELECT value FROM meta WHERE key = 'config'").fetchone()[0])
    cfg["seed"] = cfg["secret"] = None
    conn.execute("UPDATE meta SET value = ? WHERE key = 'config'", (json.dumps(cfg, sort_keys=True),))
    conn.execute("UPDATE meta SET value = '0' WHERE key = 'secret_fixed'")
    conn.commit()
    conn.close()
    code, out = verify(copy)
    assert code == 1 and {"file", "chain"} <= failed(out), out


# ------------------------------------------------------------------ unfinished
def test_an_unfinished_event_names_what_is_missing_unless_partial(event: tuple[Path, str], tmp_path: Path) -> None:
    """As the file is while the event runs: games 4 and 5 (deal 0 of b v c) not played,
    deal 0 and the secret not revealed, no chain head yet."""
    db, _ = event
    copy = copy_event(db, tmp_path)
    sql(copy, "DELETE FROM games WHERE idx >= 4", "DELETE FROM commitments WHERE idx >= 4", "DELETE FROM deals",
        "DELETE FROM meta WHERE key IN ('finished', 'secret_revealed', 'chain_head', 'chain_games')")
    code, out = verify(copy)
    assert code == 1 and {"games", "secret"} <= failed(out), out
    assert "2 scheduled game(s) missing: 4, 5" in out
    code, out = verify(copy, "--partial")
    assert code == 0, out
    assert "4 of 6 scheduled game(s) present" in out and "not complete" in out
    assert re.search(r"^skip  chain: over the 4 game\(s\) recorded so far", out, re.M), out


def test_an_unreadable_file_exits_2(tmp_path: Path) -> None:
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database" * 100)
    assert verify(junk)[0] == 2
    assert verify(tmp_path / "missing.sqlite")[0] == 2


def test_an_sprt_event_holds_exactly_the_games_its_decision_counted(tmp_path: Path) -> None:
    """An SPRT stops at its decision: games in progress then are dropped, so the file
    holds a prefix of the schedule with gaps, as many games as the decision counted."""
    parts = [{"name": "greedy", "command": protobot("--random", "5")}, {"name": "passive", "command": protobot("--never-knock")}]
    cfg = write_config(tmp_path / "ab.toml", parts, rules=FAST_RULES,
                       tournament={"format": "sprt", "concurrency": 2},
                       sprt={"candidate": "greedy", "baseline": "passive", "elo0": 0, "elo1": 200, "max_games": 400})
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([str(cfg), "--quiet"]) == 0, out.getvalue()
    db = tmp_path / "ab.sqlite"
    code, text = verify(db)
    assert code == 0, text
    assert "as many as the SPRT decision counted" in text
    copy = copy_event(db, tmp_path / "t")
    sql(copy, "DELETE FROM games WHERE idx = (SELECT MAX(idx) FROM games)")
    code, text = verify(copy)
    assert code == 1 and {"games", "chain"} <= failed(text), text


def test_a_resumed_event_gets_its_chain_when_complete(event: tuple[Path, str], tmp_path: Path) -> None:
    """The file as a killed run leaves it (games 4 and 5 unplayed, nothing revealed), then
    --resume: the chain is computed over schedule order once the event is complete."""
    db, _ = event
    copy = copy_event(db, tmp_path)
    sql(copy, "DELETE FROM games WHERE idx >= 4", "DELETE FROM commitments WHERE idx >= 4", "DELETE FROM deals",
        "DELETE FROM meta WHERE key IN ('finished', 'secret_revealed', 'chain_head', 'chain_games')")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([str(db.with_suffix(".toml")), "--resume", "--quiet", "--db", str(copy)]) == 0, out.getvalue()
    assert re.search(r"results chain head [0-9a-f]{64} over 6 game\(s\)", out.getvalue()), out.getvalue()
    code, text = verify(copy)
    assert code == 0, text


def test_a_forfeit_is_backed_by_its_record(tmp_path: Path) -> None:
    """The runner's own labels (a crash: it resigned the seat of a bot that exited) verify;
    the same forfeit blamed on the other participant, or relabelled, does not."""
    parts = [{"name": "good", "command": protobot()}, {"name": "gone", "command": protobot("--exit-after-hello")}]
    cfg = write_config(tmp_path / "cr.toml", parts, tournament={"games_per_pairing": 2}, rules=FAST_RULES)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([str(cfg), "--quiet"]) == 1, out.getvalue()  # gone lost every game to crashes
    db = tmp_path / "cr.sqlite"
    code, text = verify(db)
    assert code == 0 and "(2 crash)" in text, text
    for i, change in enumerate(("UPDATE games SET culprit = 'good', winner = 'gone' WHERE idx = 0",
                                "UPDATE games SET termination = 'illegal' WHERE idx = 1",
                                # a resignation relabelled a withheld nonce that nobody withheld
                                "UPDATE games SET termination = 'withheld' WHERE idx = 1")):
        copy = copy_event(db, tmp_path / str(i))
        sql(copy, change)
        code, text = verify(copy)
        assert code == 1 and "terminations" in failed(text), text
