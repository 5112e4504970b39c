"""arena.store.Store on SQLite and on a real PostgreSQL server (tests/arena/conftest.py): the
same tests through the same code. Games, idempotent finishing, voiding, ratings and their
history in one transaction, rebuild to the bit, the schema version, concurrent finishes."""

from __future__ import annotations

import itertools
import json
import random
import stat
import threading
from pathlib import Path

import pytest

from arena.ratings import initial
from arena.store import (
    NO_SHOW_MEMORY_MS,
    SCHEMA_VERSION,
    AccountExists,
    GameResult,
    NewGame,
    Store,
    StoreError,
    UnknownAccount,
    state_db_url,
)


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return state_db_url(tmp_path)
    return request.getfixturevalue("pg_url")


@pytest.fixture
def store(url: str) -> Store:
    s = Store.open(url)
    yield s
    s.close()


def seat(store: Store, gid: str, variant: str, players: tuple[str, ...], rated: bool = True, t: int = 0) -> None:
    store.new_game(NewGame(gid, variant, rated, players, {"move_ms": 5000}, "shard-0", f"t-{gid}", t))


def result(winner: int | None, scores: tuple[int, ...], t: int, at_fault: int | None = None) -> GameResult:
    return GameResult(winner, scores, "at_fault" if at_fault is not None else "score", t, at_fault,
                      {"moves": ["x"] * 3, "winner": winner}, f"journals/{t}.jsonl", "h" * 64, "s" * 32, "a" * 32)


def test_accounts(store: Store) -> None:
    store.add_account("Alice", "human", admin=True, created_ms=5)
    store.add_account("bot_1", "bot")
    with pytest.raises(AccountExists):
        store.add_account("alice", "bot")
    with pytest.raises(StoreError, match="ASCII"):
        store.add_account("al ice", "human")
    with pytest.raises(StoreError, match="ASCII"):
        store.add_account("a" * 41, "human")
    with pytest.raises(StoreError):
        store.add_account("x", "robot")
    with pytest.raises(UnknownAccount):
        store.revoke("nobody")
    a = store.account("ALICE")
    assert a is not None and a.name == "Alice" and a.admin and a.kind == "human" and a.created_ms == 5
    assert [x.name for x in store.accounts()] == ["Alice", "bot_1"]
    store.set_cooldown("bot_1", 12345, "no-show")
    b = store.account("bot_1")
    assert b.cooldown_until_ms == 12345 and b.cooldown_reason == "no-show" and not b.admin
    store.ban("bot_1", "cheating", by="Alice", at_ms=7)
    assert store.account("bot_1").banned == "cheating"
    assert store.account_log("bot_1")[-1] == (7, "ban", "Alice", "cheating")
    assert store.account("no such") is None


def test_a_game_from_seating_to_the_record(store: Store) -> None:
    for n in ("a", "b"):
        store.add_account(n, "bot")
    seat(store, "g1", "oklahoma", ("a", "b"), t=10)
    assert [g.id for g in store.games_in_play()] == ["g1"]
    with pytest.raises(StoreError, match="exists"):
        seat(store, "g1", "oklahoma", ("a", "b"))
    with pytest.raises(StoreError):
        seat(store, "g2", "oklahoma", ("a", "a"))
    with pytest.raises(StoreError):
        seat(store, "g2", "box", ("a", "b"))
    with pytest.raises(UnknownAccount):
        seat(store, "g2", "oklahoma", ("a", "zed"))
    change = store.finish_game("g1", result(1, (40, 125), 20))
    assert change is not None and change.rated and change.players == ("a", "b")
    assert change.before == (initial("oklahoma"), initial("oklahoma"))
    assert change.after[1].rating > 1500 > change.after[0].rating and change.after[0].games == 1
    assert store.finish_game("g1", result(0, (125, 0), 30)) is None  # idempotent: nothing changes
    assert store.void_game("g1", "late") is False
    g = store.game("g1")
    assert g is not None and g.status == "finished" and g.winner == 1 and g.scores == (40, 125)
    assert g.record == {"moves": ["x", "x", "x"], "winner": 1} and g.journal == "journals/20.jsonl"
    assert (g.seed_hash, g.seed, g.salt, g.finished_ms) == ("h" * 64, "s" * 32, "a" * 32, 20)
    assert g.before == (1500.0, 1500.0) and g.after == (change.after[0].rating, change.after[1].rating)
    assert g.result_for("a") == "loss" and g.result_for("b") == "win"
    assert store.games_in_play() == []
    assert store.rating("a", "oklahoma") == change.after[0]
    assert store.rating("A", "oklahoma") == change.after[0]
    assert store.rating("a", "box") == initial("box")
    hist = store.history("b", "oklahoma")
    assert len(hist) == 1 and hist[0].game_id == "g1" and hist[0].rating == change.after[1].rating
    assert [r.rating for _, r in store.leaderboard("oklahoma")] == [change.after[1].rating, change.after[0].rating]
    assert store.finish_game("nope", result(0, (1, 0), 1)) is None


def test_void_and_unrated_games_change_no_rating(store: Store) -> None:
    for n in ("a", "b", "c"):
        store.add_account(n, "human")
    seat(store, "v", "oklahoma", ("a", "b"))
    assert store.void_game("v", "arena stopped", at_ms=9) is True
    assert store.void_game("v", "again") is False
    assert store.finish_game("v", result(0, (100, 0), 10)) is None
    g = store.game("v")
    assert g.status == "void" and g.void_reason == "arena stopped" and g.result_for("a") == "void"
    seat(store, "u", "box", ("a", "b", "c"), rated=False)
    ch = store.finish_game("u", result(2, (1, 2, 3), 11))
    assert ch is not None and not ch.rated and ch.after == ch.before
    assert store.rating("c", "box").games == 0 and store.history("c", "box") == []
    assert [g.id for g in store.recent_games("a")] == ["u", "v"]


def test_a_bad_result_changes_nothing(store: Store) -> None:
    for n in ("a", "b"):
        store.add_account(n, "bot")
    seat(store, "g", "oklahoma", ("a", "b"))
    with pytest.raises(StoreError):
        store.finish_game("g", result(2, (1, 0), 5))
    with pytest.raises(StoreError):
        store.finish_game("g", result(0, (1, 0, 3), 5))
    assert store.game("g").status == "playing" and store.rating("a", "oklahoma").games == 0


def play_random_games(store: Store, n: int, seed: int) -> None:
    rng = random.Random(seed)
    names = [f"p{i}" for i in range(6)]
    for nm in names:
        store.add_account(nm, "bot")
    for i in range(n):
        box = rng.random() < 0.4
        players = tuple(rng.sample(names, 3 if box else 2))
        gid = f"g{i:03d}"
        seat(store, gid, "box" if box else "oklahoma", players, rated=rng.random() < 0.9, t=i)
        if rng.random() < 0.1:
            store.void_game(gid, "no-show", at_ms=i)
            continue
        scores = tuple(rng.randrange(0, 130) for _ in players)
        winner = None if rng.random() < 0.05 else rng.randrange(len(players))
        fault = rng.randrange(len(players)) if winner is not None and rng.random() < 0.1 else None
        if fault == winner:
            fault = None
        store.finish_game(gid, result(winner, scores, 1000 + i, fault))


def test_rebuild_gives_the_same_numbers_to_the_bit(store: Store) -> None:
    play_random_games(store, 120, seed=26)
    before = store.ratings_snapshot()
    assert len(before) > 100
    games = store.rebuild_ratings()
    after = store.ratings_snapshot()
    assert after == before  # floats compared exactly: the same bits
    assert [(type(x), x) for row in after for x in row] == [(type(x), x) for row in before for x in row]
    # and a tampered rating is put right by the rebuild
    store.conn.execute(store.dialect.sql("UPDATE ratings SET rating = ? WHERE name_key = ?"), (9999.0, "p1"))
    assert store.ratings_snapshot() != before
    assert store.rebuild_ratings() == games
    assert store.ratings_snapshot() == before


def test_rebuild_counts_the_finished_rated_games(store: Store) -> None:
    play_random_games(store, 40, seed=3)
    rows = store.conn.execute("SELECT COUNT(*) FROM games WHERE status = 'finished' AND rated = 1").fetchone()
    assert store.rebuild_ratings() == rows[0] > 0


def test_the_history_chains(store: Store) -> None:
    play_random_games(store, 60, seed=7)
    for nm in ("p0", "p3"):
        for v in ("oklahoma", "box"):
            hist = store.history(nm, v)
            assert [h.n for h in hist] == list(range(1, len(hist) + 1))
            for prev, cur in itertools.pairwise(hist):
                assert cur.before == prev.rating
            if hist:
                assert hist[0].before == 1500.0 and store.rating(nm, v).rating == hist[-1].rating
                assert store.rating(nm, v).games == len(hist)


def test_a_newer_schema_is_refused(url: str) -> None:
    s = Store.open(url)
    assert s.schema_version == SCHEMA_VERSION
    s.conn.execute(s.dialect.sql("UPDATE schema_version SET version = ?"), (SCHEMA_VERSION + 1,))
    s.close()
    with pytest.raises(StoreError, match="newer"):
        Store.open(url)


def test_data_survive_reopening(url: str) -> None:
    with Store.open(url) as s:
        key = s.add_account("keep", "bot")
        s.add_account("other", "bot")
        seat(s, "g", "oklahoma", ("keep", "other"))
        s.finish_game("g", result(0, (100, 3), 5))
        snap = s.ratings_snapshot()
    with Store.open(url) as s:
        assert s.check_key("keep", key) is not None and s.ratings_snapshot() == snap


def test_the_no_show_doubling_survives_reopening(url: str) -> None:
    """The no-shows behind a cooldown's doubling are in the database, not in a front's
    memory: a reopened store (a restarted arena) doubles on from where the last one was."""
    first, top = 30_000, 3_600_000
    with Store.open(url) as s:
        s.add_account("late", "bot")
        assert s.no_show("late", 1_000, first, top) == 1_000 + 30_000
        assert s.no_show("late", 2_000, first, top) == 2_000 + 60_000
        assert s.account("late").cooldown_until_ms == 62_000  # type: ignore[union-attr]
    with Store.open(url) as s:  # the arena restarted
        assert s.no_shows("late") == 2
        assert s.no_show("late", 3_000, first, top) == 3_000 + 120_000
        for i in range(10):
            s.no_show("late", 4_000 + i, first, top)
        assert s.account("late").cooldown_until_ms == 4_009 + top  # type: ignore[union-attr]  # capped
        # a day without a no-show: the next one counts as the first again
        later = 4_009 + NO_SHOW_MEMORY_MS + 1
        assert s.no_show("late", later, first, top) == later + first and s.no_shows("late") == 1
        assert [d for _, what, _, d in s.account_log("late") if what == "no_show"][:3] == [
            "no-show 1: cooldown 30 s", "no-show 2: cooldown 60 s", "no-show 3: cooldown 120 s"]
        with pytest.raises(UnknownAccount):
            s.no_show("nobody", 1, first, top)


@pytest.mark.parametrize("old", [1, 2])
def test_an_older_database_gains_the_no_show_count(url: str, old: int) -> None:
    """A database of schema version 1 or 2 (before the no-show count) gains it (and the events table) on open."""
    with Store.open(url) as s:
        s.add_account("old", "bot")
        for col in ("no_shows", "no_show_ms"):
            s.conn.execute(f"ALTER TABLE accounts DROP COLUMN {col}")
        s.conn.execute(s.dialect.sql("UPDATE schema_version SET version = ?"), (old,))
        if not s.dialect.pg:
            s.conn.commit()
    with Store.open(url) as s:
        assert s.schema_version == SCHEMA_VERSION == 4  # 4: the events table (arena.events), made on open too
        assert s.no_shows("old") == 0 and s.account("old") is not None
        assert s.no_show("old", 10, 1000, 10_000) == 1010


def test_concurrent_finishes_from_two_connections(url: str) -> None:
    """Two connections (two fronts, or a front and the CLI) finishing games that share players
    at once: every game is rated exactly once, and a rebuild agrees."""
    a, b = Store.open(url), Store.open(url)
    try:
        names = [f"c{i}" for i in range(4)]
        for nm in names:
            a.add_account(nm, "bot")
        ids = [f"g{i}" for i in range(40)]
        for i, gid in enumerate(ids):
            seat(a, gid, "oklahoma", (names[i % 4], names[(i + 1) % 4]))
        errors: list[BaseException] = []

        def finish(s: Store, order: list[str]) -> None:
            try:
                for gid in order:
                    s.finish_game(gid, result(int(gid[1:]) % 2, (100, 50), int(gid[1:])))
            except BaseException as e:  # reported below
                errors.append(e)

        t1 = threading.Thread(target=finish, args=(a, ids))
        t2 = threading.Thread(target=finish, args=(b, ids[::-1]))
        t1.start()
        t2.start()
        t1.join(120)
        t2.join(120)
        assert not t1.is_alive() and not t2.is_alive() and not errors, errors
        assert sum(a.rating(nm, "oklahoma").games for nm in names) == 2 * len(ids)
        snap = a.ratings_snapshot()
        assert a.rebuild_ratings() == len(ids)
        assert a.ratings_snapshot() == snap
    finally:
        a.close()
        b.close()


def test_the_sqlite_file_is_private(tmp_path: Path) -> None:
    with Store.open(state_db_url(tmp_path)) as s:
        s.add_account("x", "bot")
    for f in tmp_path.iterdir():
        assert stat.S_IMODE(f.stat().st_mode) == 0o600, f
    with pytest.raises(StoreError, match="no directory"):
        Store.open(f"sqlite:///{tmp_path}/missing/arena.db")
    with pytest.raises(StoreError, match="unknown database URL"):
        Store.open("mysql://x")
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"not a database" * 100)
    with pytest.raises(StoreError):
        Store.open(f"sqlite:///{bad}")


def test_records_are_stored_as_json(store: Store) -> None:
    for n in ("a", "b"):
        store.add_account(n, "bot")
    seat(store, "g", "oklahoma", ("a", "b"))
    rec = {"hands": [{"cards": ["As", "Kd"], "score": 12}], "unicode": "é ♠"}
    store.finish_game("g", GameResult(0, (1, 0), "score", 1, None, rec))
    raw = store.conn.execute(store.dialect.sql("SELECT record FROM games WHERE id = ?"), ("g",)).fetchone()[0]
    assert json.loads(raw) == rec == store.game("g").record


CHILD = """
import sys
from arena.store import GameResult, NewGame, Store
s = Store.open(sys.argv[1])
for n in ("k0", "k1", "k2"):
    s.add_account(n, "bot")
print("ready", flush=True)
i = 0
while True:
    i += 1
    players = (("k0", "k1"), ("k1", "k2"), ("k2", "k0"))[i % 3]
    s.new_game(NewGame(f"g{i}", "oklahoma", True, players, {}, "s", f"t{i}", i))
    s.finish_game(f"g{i}", GameResult(i % 2, (100, 50), "normal", i, None, {"i": i}))
    print(i, flush=True)
"""


def test_kill_9_while_finishing_games_loses_no_finished_game(url: str) -> None:
    """A process finishing games as fast as it can is killed with SIGKILL at a random moment:
    every game it reported finished is there, every finished game is rated exactly once, a
    game caught half-way is either whole or still in play, and a rebuild agrees."""
    import signal
    import subprocess
    import sys

    from bounded import readline

    p = subprocess.Popen([sys.executable, "-c", CHILD, url], stdout=subprocess.PIPE, text=True)
    try:
        assert readline(p.stdout, 120, "the store child") == "ready\n"
        last = 0
        target = random.Random().randrange(30, 60)
        while last < target:
            line = readline(p.stdout, 120, "the store child")
            assert line, "the child ended"
            last = int(line)
        p.send_signal(signal.SIGKILL)
        p.wait(30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait(30)
        p.stdout.close()
    with Store.open(url) as s:
        finished = [g for g in s.recent_games("k0", 200) + s.recent_games("k1", 200) if g.status == "finished"]
        ids = {g.id for g in finished}
        assert {f"g{i}" for i in range(1, last + 1)} <= ids
        assert all(g.status == "playing" for g in s.games_in_play()) and len(s.games_in_play()) <= 1
        games = sum(s.rating(n, "oklahoma").games for n in ("k0", "k1", "k2"))
        total = s.conn.execute("SELECT COUNT(*) FROM games WHERE status = 'finished'").fetchone()[0]
        assert games == 2 * total
        snap = s.ratings_snapshot()
        assert s.rebuild_ratings() == total
        assert s.ratings_snapshot() == snap


def test_hosted_submissions_and_games(store: Store) -> None:
    """Hosted bots' submissions (the queue) and games (deal, attempts, the budget's count), on both databases."""
    from arena.store import SUBMISSION_STATUSES

    store.add_account("hb1", "bot", created_ms=1)
    store.add_account("hb2", "bot", created_ms=1)
    store.add_account("person", "human", created_ms=1)
    with pytest.raises(StoreError, match="human account"):
        store.add_submission("person", ["python3", "bot.py"], "oklahoma", "/x", 1, 10, created_ms=5)
    a1 = store.add_submission("hb1", ["python3", "bot.py", "{endpoint}"], "oklahoma", "", 2, 100, created_ms=10)
    store.set_submission_path(a1.id, "/state/bots/1")
    a2 = store.add_submission("HB1", ["./bot"], "oklahoma", "/state/bots/2", 1, 5, created_ms=11)
    b = store.add_submission("hb2", ["./bot"], "oklahoma", "/state/bots/3", 1, 5, created_ms=12)
    assert (a1.account, a1.status, a2.account) == ("hb1", "pending", "hb1")
    got = store.submission(a1.id)
    assert got is not None and got.command == ("python3", "bot.py", "{endpoint}") and got.path == "/state/bots/1"
    assert [s.id for s in store.submissions("pending")] == [b.id, a2.id, a1.id]  # the newest first
    store.set_submission(a1.id, "active", at_ms=20)
    store.set_submission(b.id, "failed", "crash: it exited with status 1", at_ms=21)
    store.set_submission(a2.id, "active", at_ms=22)  # retires a1: one hosted bot per account plays
    st = {s.id: (s.status, s.reason) for s in store.submissions()}
    assert st == {a1.id: ("retired", f"replaced by #{a2.id}"), a2.id: ("active", None),
                  b.id: ("failed", "crash: it exited with status 1")}
    assert [s.id for s in store.submissions(["failed", "active"], account="hb2")] == [b.id]
    with pytest.raises(StoreError):
        store.submissions("bogus")
    assert set(SUBMISSION_STATUSES) >= {"pending", "validating", "active", "failed", "retired"}
    store.set_submission(b.id, "active", at_ms=23)
    for seating, players in enumerate((("hb1", "hb2"), ("hb2", "hb1"))):
        store.add_hosted_game(NewGame(f"hosted-1-{seating + 1}", "oklahoma", True, players, {"move_ms": 1000}, "hosted",
                                      f"hosted-{2 + seating}", 1000 + seating), (a2.id, b.id)[::1 - 2 * seating], "1")
    assert store.count_hosted_games(1000) == 2 and store.count_hosted_games(1001) == 1
    store.finish_hosted_game("hosted-1-1", result(0, (20, 5), 2000), attempts=2)
    store.finish_hosted_game("hosted-1-2", result(1, (5, 20), 2001))
    hosted = {h.game_id: h for h in store.hosted_games()}
    assert hosted["hosted-1-1"].attempts == 2 and hosted["hosted-1-2"].attempts == 1
    assert hosted["hosted-1-2"].submissions == (b.id, a2.id) and hosted["hosted-1-1"].deal == "1"
    sub = store.submission(a2.id)
    assert sub is not None and sub.games == 2
    assert store.rating("hb1", "oklahoma").games == 2
    g = store.game("hosted-1-1")
    assert g is not None and g.status == "finished" and g.players == ("hb1", "hb2")


def test_events_are_scheduled_run_and_read_back(store: Store) -> None:
    """An arena event's life in the store (standings and verify for the web), on both databases."""
    for n in ("ev1", "ev2", "ev3"):
        store.add_account(n, "bot", created_ms=1)
    with pytest.raises(StoreError, match="at least two"):
        store.add_event("solo", "round_robin", ["ev1"], 100, "admin")
    with pytest.raises(StoreError, match="champion"):
        store.add_event("g", "gauntlet", ["ev1", "ev2"], 100, "admin", champion="ev3")
    with pytest.raises(UnknownAccount):
        store.add_event("g", "round_robin", ["ev1", "nobody"], 100, "admin")
    rr = store.add_event("friday", "round_robin", ["EV1", "ev2", "ev3"], 100, "admin", created_ms=5)
    g = store.add_event("cup", "gauntlet", ["ev1", "ev2"], 200, "admin", champion="EV1", games_per_pairing=4)
    assert rr.accounts == ("ev1", "ev2", "ev3") and g.champion == "ev1" and g.games_per_pairing == 4
    assert [e.id for e in store.events()] == [g.id, rr.id] and [e.id for e in store.events("scheduled")] == [g.id, rr.id]
    assert store.start_event(rr.id, "/state/events/1/event.sqlite") and not store.start_event(rr.id, "/elsewhere")
    standings = [{"rank": 1, "account": "ev2", "games": 4, "wins": 3, "losses": 1, "draws": 0, "score": 0.75}]
    checks = [{"name": "chain", "status": "ok", "summary": "head abc", "problems": []}]
    store.finish_event(rr.id, standings, checks, at_ms=300)
    store.finish_event(g.id, [], [], "ev2 has no active hosted bot", at_ms=301)
    done = store.event(rr.id)
    assert done is not None and done.status == "finished" and done.standings == tuple(standings) and done.verified
    assert done.results == "/state/events/1/event.sqlite" and done.finished_ms == 300
    failed = store.event(g.id)
    assert failed is not None and failed.status == "failed" and not failed.verified and "no active" in (failed.error or "")
