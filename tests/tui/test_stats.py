"""Issue 28, deliverable 5: statistics kept on the player's machine, shown on a screen.

A real game under Pilot against a real referee on loopback (test_live's table, played to
a target of 1 point so that the first scoring hand ends it) is counted in the file, and
``S`` shows it; a broken file is kept aside and a fresh one started, with a notice; a
newer okgin's file is never written over; several processes counting games at the same
moment lose none (the lock and the atomic replace).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from clients.tui.screens.game_over import GameOverScreen
from clients.tui.screens.stats import StatsScreen
from clients.tui.screens.summary import HandSummaryScreen
from clients.tui.stats import MAX_BYTES, STATS_FORMAT, GameTally, StatsStore, add_game, dump, parse, stats_path, tally_game
from clients.tui.stats_cli import main as stats_main

from .test_ascii import _screen_text
from .test_live import SIZE, Table, human_app, play_turn, until

ROOT = Path(__file__).resolve().parents[2]


def tally(n: int = 0, outcome: str = "won", opponent: str = "simple-bot") -> GameTally:
    return GameTally("oklahoma", (opponent,), outcome, game_id=f"game-{n}", hands=3, hands_won=2, gins=1, points=30)


async def test_a_game_played_to_its_end_is_counted_and_shown() -> None:
    async with Table(seed=3, rules={"target_score": 1}) as table:
        app = human_app(table)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.state.view is not None)
            for _ in range(400):
                await until(pilot, lambda: app.state.my_turn or app.state.final is not None
                            or isinstance(app.screen, HandSummaryScreen))
                if app.state.final is not None:
                    break
                if isinstance(app.screen, HandSummaryScreen):
                    await pilot.press("enter")
                    continue
                seq = app.state.seq
                await play_turn(pilot, app)
                await until(pilot, lambda s=seq: app.state.seq != s or app.state.final is not None
                            or isinstance(app.screen, HandSummaryScreen))
            await until(pilot, lambda: app.stats_recorded == 1)
            final, me, results = app.state.final, app.state.seat, app.state.results
            assert final is not None and me is not None
            # The file: private, versioned, this game in it.
            path = stats_path()
            assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700
            data = json.loads(path.read_text())
            assert data["format"] == STATS_FORMAT and data["version"] == 1
            [rec] = data["records"]
            won = final["winner"] == me
            assert (rec["variant"], rec["opponents"], rec["games"], rec["won"], rec["lost"]) == (
                "oklahoma", ["opponent"], 1, int(won), int(not won))
            assert rec["hands"] == len(results) and rec["hands_won"] == sum(r.winner == me for r in results)
            assert rec["points"] == sum(r.points for r in results if r.winner == me)
            assert rec["streak"] == (1 if won else -1)
            # S from the game-over sheet shows it.
            while isinstance(app.screen, HandSummaryScreen):
                await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, GameOverScreen))
            await pilot.press("S")
            await until(pilot, lambda: isinstance(app.screen, StatsScreen))
            shown = "\n".join(str(w.render()) for w in app.screen.query("#stats-headline"))
            assert f"1 game: {int(won)} won, {int(not won)} lost" in shown
            rows = _screen_text(app)
            assert "opponent" in rows and "Oklahoma" in rows and f"{rec['hands_won']}/{rec['hands']}" in rows
            await pilot.press("escape")
            await until(pilot, lambda: isinstance(app.screen, GameOverScreen))
            # The same game's end heard again (another TUI that resumed this seat) counts nothing.
            again = tally_game(app.state, final)
            assert again is not None and StatsStore().record(again) is None
            assert json.loads(path.read_text())["records"][0]["games"] == 1


def test_watching_and_replays_count_nothing() -> None:
    from dataclasses import replace

    from .states import at, state_of

    g = at("oklahoma", 5, lambda g: len(g.results) >= 1)
    final = {"winner": 0, "termination": "normal", "seed_hash": "ab"}
    player = state_of(g, 0)
    assert tally_game(player, final) is not None
    assert tally_game(state_of(g, None, spectator=True), final) is None
    assert tally_game(replace(player, replay=object()), final) is None  # type: ignore[arg-type]
    assert tally_game(player, {"winner": None, "termination": "abandoned"}) is None  # no result: not a game played


def test_a_broken_file_is_kept_aside_and_a_fresh_one_started(capsys: pytest.CaptureFixture[str]) -> None:
    store = StatsStore()
    store.path.parent.mkdir(parents=True, exist_ok=True)
    store.path.write_text('{"format": "okgin-stats", "version": 1, "records": [{"variant": "oklahoma"')  # torn
    notice = store.record(tally(1))
    assert notice is not None and "kept as" in notice and "fresh one" in notice
    [aside] = store.path.parent.glob("stats.json.broken-*")
    assert aside.read_text().endswith('"oklahoma"')  # the broken file, untouched
    assert parse(store.path.read_text()).games == 1  # the fresh file has this game
    # okgin stats says so too, for a file broken another way (not ours at all).
    store.path.write_text("[1, 2, 3]")
    assert stats_main([]) == 0
    out = capsys.readouterr()
    assert "kept as" in out.err and "No games yet" in out.out
    # A file too large to be ours is not parsed, and kept aside the same way.
    store.path.write_bytes(b" " * (MAX_BYTES + 1))
    assert "larger than" in (store.record(tally(2)) or "")
    assert parse(store.path.read_text()).games == 1
    assert len(list(store.path.parent.glob("stats.json.broken-*"))) == 3


def test_a_newer_file_is_shown_and_never_written_over() -> None:
    store = StatsStore()
    store.path.parent.mkdir(parents=True, exist_ok=True)
    newer = {"format": STATS_FORMAT, "version": 2, "records": [
        {"variant": "box", "opponents": ["a", "b"], "games": 4, "won": 3, "lost": 1, "future_field": [1]}]}
    store.path.write_text(json.dumps(newer))
    stats, notice = store.load()
    assert stats.read_only and stats.games == 4 and notice and "newer okgin" in notice
    assert "newer okgin" in (store.record(tally(1)) or "")
    assert json.loads(store.path.read_text()) == newer


def test_streaks_records_and_bounds() -> None:
    from clients.tui.stats import MAX_RECORDS, Stats

    s = Stats()
    for n, outcome in enumerate(["won", "won", "lost", "won", "won", "won"]):
        s = add_game(s, tally(n, outcome), now=float(n))
    [r] = s.records
    assert (r.games, r.won, r.lost, r.streak, r.best_streak, s.streak, s.best_streak) == (6, 5, 1, 3, 3, 3, 3)
    assert r.average_points == pytest.approx(10.0) and r.gins == 6
    assert add_game(s, tally(5), now=9.0) == s  # the same game twice counts once
    for n in range(MAX_RECORDS + 5):
        s = add_game(s, tally(100 + n, opponent=f"bot{n}"), now=100.0 + n)
    assert len(s.records) == MAX_RECORDS and "bot0" not in {r.opponents[0] for r in s.records}
    assert parse(dump(s)) == s


WRITER = """
import sys
from clients.tui.stats import GameTally, StatsStore
who, games = sys.argv[1], int(sys.argv[2])
sys.stdin.readline()  # every writer starts at the same moment
store = StatsStore()
for n in range(games):
    note = store.record(GameTally("oklahoma", ("bot",), "won" if n % 2 else "lost", game_id=f"{who}-{n}", hands=1))
    assert note is None, note
"""


def test_writers_at_the_same_moment_lose_no_game() -> None:
    """Four processes (as four TUIs whose games end together) each count 25 games at
    once: every one of the 100 is in the file, which is whole and private."""
    writers, games = 4, 25
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(w), str(games)], stdin=subprocess.PIPE, env=env,
                              stderr=subprocess.PIPE, text=True) for w in range(writers)]
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.close()
    for p in procs:
        assert p.wait(timeout=120) == 0, p.stderr.read() if p.stderr else ""
    stats = parse(stats_path().read_text())
    [r] = stats.records
    assert (r.games, r.won, r.lost, r.hands) == (writers * games, writers * (games // 2), writers * (games - games // 2),
                                                 writers * games)
    assert stat.S_IMODE(stats_path().stat().st_mode) == 0o600
    assert not list(stats_path().parent.glob(".stats.json.*.tmp"))  # no temporary file left behind
