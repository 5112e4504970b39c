"""Secret deals (issue 15 item 2): HMAC seeds, deferred reveals, a private results file,
and ``okgin tournament verify`` on a finished event and on tampered copies of it."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import io
import json
import shutil
import sqlite3
import stat
from pathlib import Path

import pytest

from clients.match import game_seed
from competition.tournament.cli import main
from competition.tournament.config import load_config
from competition.tournament.runner import Runner, RunOptions
from competition.tournament.store import ResultsStore
from okgin.rng import seed_hash
from okgin.schedule import bot_seed, commitment, deal_seed, secret_from_seed

from .tourkit import protobot, write_config

pytestmark = pytest.mark.timeout(240)

FAST_RULES = {"target_score": 40}


# ------------------------------------------------------------------ the scheme itself
def test_deal_seed_is_hmac_of_the_decimal_deal_index() -> None:
    secret = bytes(range(32))
    assert deal_seed(secret, 12) == hmac.new(secret, b"12", hashlib.sha256).hexdigest()
    assert commitment(secret) == hashlib.sha256(secret).hexdigest()
    assert bot_seed(secret, 3, 1) == hmac.new(secret, b"bot/3/1", hashlib.sha256).hexdigest()
    # okgin match --seed S and a tournament with seed = S deal the same.
    assert game_seed("cup", 4) == deal_seed(secret_from_seed("cup"), 4) == deal_seed(hashlib.sha256(b"cup").digest(), 4)


def test_deal_k_says_nothing_of_deal_k_plus_1() -> None:
    """A bot that saw deal k's seed cannot predict deal k+1's: the old scheme
    ("SEED/k") made it a string edit; HMAC outputs share nothing."""
    secret = secret_from_seed("spring-2025")
    seeds = [deal_seed(secret, k) for k in range(50)]
    assert len(set(seeds)) == 50
    for k in range(49):
        seen, nxt = seeds[k], seeds[k + 1]
        assert "/" not in seen
        guesses = {f"{seen}/{k + 1}", seen.rsplit("/", 1)[0] + f"/{k + 1}", seen[:-1] + str(k + 1)}
        assert nxt not in guesses
        # No prefix in common beyond chance (64 hex digits each).
        assert sum(a == b for a, b in zip(seen, nxt, strict=True)) < 20


def test_reveal_waits_for_every_game_of_a_deal(tmp_path: Path) -> None:
    parts = [{"name": n, "command": protobot()} for n in ("a", "b", "c")]
    cfg = load_config(write_config(tmp_path / "r.toml", parts, tournament={"games_per_pairing": 4}))
    store = ResultsStore.for_run(cfg, tmp_path / "r.sqlite", resume=False)
    try:
        runner = Runner(cfg, RunOptions(progress=False), store)
        deal0 = list(runner.schedule.deal_games(0))
        assert len(deal0) == 6 and {runner.schedule[i].deal for i in deal0} == {0}  # 3 pairs x 2 seatings, adjacent
        for i in deal0[:-1]:
            runner.done.add(i)
            runner._reveal_finished_deals({0})
            assert store.revealed_deals() == {}
        runner.done.add(deal0[-1])
        runner._reveal_finished_deals({0, 1})
        assert store.revealed_deals() == {0: deal_seed(store.secret() or b"", 0)}
        assert store.secret_revealed() is None
    finally:
        store.close()


# ---------------------------------------------------------------- a whole event
@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """A small round robin of recording bots, played to the end."""
    d = tmp_path_factory.mktemp("secret")
    parts = [{"name": n, "command": protobot("--random", str(i), "--record")}
             for i, n in enumerate(("a", "b", "c"), 1)]
    # bot_log_kb: every recorded message is read back whole; a recording past the default
    # 1 MB per game is cut (head and tail kept), which split a JSON line in a fresh-clone run
    cfg = write_config(d / "sd.toml", parts, tournament={"games_per_pairing": 4, "concurrency": 2, "bot_log_kb": 65536},
                       rules=FAST_RULES)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main([str(cfg), "--quiet", "--keep-logs"])
    assert code == 0, out.getvalue()
    return d, d / "sd.sqlite", out.getvalue()


def test_bots_see_no_seed_until_the_end(finished: tuple[Path, Path, str]) -> None:
    d, _, _ = finished
    files = sorted((d / "sd-run" / "logs").glob("d*.log"))
    assert len(files) == 12 * 2  # 12 games, two bots each
    ends = starts = 0
    for f in files:
        for line in f.read_text().splitlines():
            if not line.startswith("protobot-recv "):
                continue
            m = json.loads(line.split(" ", 1)[1])
            if m.get("type") == "game_end":
                ends += 1
                assert m["seed"] is None and m["salt"] is None, m
            if m.get("type") == "game_start":
                starts += 1
                assert len(m["seed_hash"]) == 64
    assert ends == starts == 24


def test_results_file_is_private_and_the_secret_revealed_at_the_end(finished: tuple[Path, Path, str]) -> None:
    _, db, out = finished
    for f in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
        if f.exists():
            assert stat.S_IMODE(f.stat().st_mode) == 0o600, f
    st = ResultsStore.open_existing(db)
    try:
        secret = st.secret()
        assert secret is not None and len(secret) == 32
        com = st.get_meta("secret_commitment")
        assert com == commitment(secret) and com in out.splitlines()[0]  # printed at the start
        assert st.secret_revealed() == secret.hex() and secret.hex() in out
        games = st.games(with_records=True)
        assert st.revealed_deals() == {k: deal_seed(secret, k) for k in range(2)}
        commits = st.commitments()
        for g in games:
            assert g.seed == deal_seed(secret, g.deal) == g.record["seed"]
            h, salt = commits[g.index]
            assert h == seed_hash(g.seed, salt)
        # The seatings of one deal share one seed, every pairing included.
        assert len({g.seed for g in games if g.deal == 0}) == 1
    finally:
        st.close()


def test_verify_a_finished_event(finished: tuple[Path, Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    _, db, _ = finished
    assert main(["verify", str(db)]) == 0
    assert "12 game(s)" in capsys.readouterr().out


@pytest.mark.parametrize("tamper", [
    "UPDATE games SET scores = '[40, 39]' WHERE idx = 3",
    "UPDATE games SET winner = (CASE WHEN winner = 'a' THEN 'b' ELSE 'a' END) WHERE idx = 0",
    "UPDATE commitments SET salt = '00000000000000000000000000000000' WHERE idx = 5",
    "UPDATE deals SET seed = 'cafe' WHERE deal = 1",
    "UPDATE meta SET value = '" + "ab" * 32 + "' WHERE key = 'secret_revealed'",
    "UPDATE games SET seats = '[\"b\", \"a\"]' WHERE idx = 0",
])
def test_verify_finds_tampering(finished: tuple[Path, Path, str], tmp_path: Path, tamper: str,
                                capsys: pytest.CaptureFixture[str]) -> None:
    _, db, _ = finished
    copy = tmp_path / "t.sqlite"
    shutil.copy(db, copy)
    for side in ("-wal", "-shm"):
        if db.with_name(db.name + side).exists():
            shutil.copy(db.with_name(db.name + side), copy.with_name(copy.name + side))
    conn = sqlite3.connect(copy)
    conn.execute(tamper)
    conn.commit()
    conn.close()
    assert main(["verify", str(copy)]) == 1
    assert "MISMATCH" in capsys.readouterr().out


def test_verify_cannot_check_an_unfinished_or_unreadable_file(finished: tuple[Path, Path, str], tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    _, db, _ = finished
    copy = tmp_path / "u.sqlite"
    shutil.copy(db, copy)
    conn = sqlite3.connect(copy)
    conn.execute("DELETE FROM meta WHERE key = 'secret_revealed'")  # as during the event
    conn.commit()
    conn.close()
    # A complete event whose secret is not revealed is a failure, not an unreadable file.
    assert main(["verify", str(copy)]) == 1
    assert "FAIL  secret: not revealed" in capsys.readouterr().out
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database at all" * 100)
    assert main(["verify", str(junk)]) == 2
    assert main(["verify", str(tmp_path / "missing.sqlite")]) == 2


def test_a_fixed_seed_is_reproducible_and_said_not_secret(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    parts = [{"name": "a", "command": protobot()}, {"name": "b", "command": protobot("--random", "2")}]
    cfg = write_config(tmp_path / "fx.toml", parts, tournament={"seed": "fixed", "games_per_pairing": 2}, rules=FAST_RULES)
    assert main([str(cfg), "--quiet"]) == 0
    captured = capsys.readouterr()
    assert "NOT secret" in captured.err
    st = ResultsStore.open_existing(tmp_path / "fx.sqlite")
    try:
        assert st.secret() == secret_from_seed("fixed")
        assert {g.seed for g in st.games()} == {game_seed("fixed", 0)}  # what okgin match --seed fixed deals
    finally:
        st.close()


def test_resume_keeps_the_secret_and_keeps_it_secret(tmp_path: Path) -> None:
    parts = [{"name": "a", "command": protobot()}, {"name": "b", "command": protobot()}]
    cfg = load_config(write_config(tmp_path / "rs.toml", parts, tournament={"games_per_pairing": 2}))
    db = tmp_path / "rs.sqlite"
    first = ResultsStore.for_run(cfg, db, resume=False)
    secret = first.secret()
    first.close()
    again = ResultsStore.for_run(cfg, db, resume=True)
    try:
        assert again.secret() == secret and again.secret_revealed() is None
        assert stat.S_IMODE(db.stat().st_mode) == 0o600
    finally:
        again.close()
