"""The runner against real referees and real bot processes on loopback.

The bots here are ``command`` participants running ``protobot.py``, which speaks the
protocol directly (what a bot in any language looks like to the runner), so these tests
depend on the referee only. The built-in and foreign-language bots meet in
``test_tournament_languages.py``.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from bounded import limit, readline

from competition.tournament.cli import main
from competition.tournament.config import load_config
from competition.tournament.report import report_from_store
from competition.tournament.runner import Runner, RunOptions
from competition.tournament.sprt import Sprt, status_of
from competition.tournament.store import ResultsStore
from okgin import Game

from .tourkit import PROTOBOT, alive, children_of, games_recorded, protobot, write_config

pytestmark = pytest.mark.timeout(240)

GREEDY = [
    {"name": "g1", "command": protobot("--random", "1")},
    {"name": "g2", "command": protobot("--random", "2")},
    {"name": "passive", "command": protobot("--never-knock")},
]
FAST_RULES = {"target_score": 40}


def table_of(db: Path) -> list[tuple]:
    st = ResultsStore.open_existing(db)
    try:
        rep = report_from_store(st)
        return [(s.name, s.games, s.wins, s.losses, s.points_for, s.points_against, round(s.elo or 0, 6)) for s in rep.standings]
    finally:
        st.close()


def games_of(db: Path) -> list[tuple]:
    st = ResultsStore.open_existing(db)
    try:
        return [(g.index, g.seats, g.winner, g.scores, g.termination) for g in st.games()]
    finally:
        st.close()


def test_round_robin_records_every_game(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = write_config(tmp_path / "rr.toml", GREEDY, tournament={"seed": "rr", "games_per_pairing": 2, "concurrency": 2},
                       rules=FAST_RULES, clock={"move_ms": 10000})
    assert main([str(cfg), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "Tournament rr: round robin, 6/6 games, finished" in out
    st = ResultsStore.open_existing(tmp_path / "rr.sqlite")
    games = st.games(with_records=True)
    assert [g.index for g in games] == list(range(6))
    for g in games:
        assert g.termination == "normal" and g.winner in g.seats and max(g.scores) >= 40
        replay = Game.from_record(g.record, verify=True)  # the stored record replays exactly
        assert replay.is_over and g.seats[replay.winner] == g.winner
        assert g.clocks["source"] == "journal" and sum(g.clocks["moves"]) == len(g.record["entries"])
        assert g.record["seed"] == g.seed
    # The passive bot never knocks (it can still win on undercuts, depending on the deals).
    for g in games:
        seat = g.seats.index("passive") if "passive" in g.seats else None
        assert not [e for e in g.record["entries"] if e.get("seat") == seat
                    and (e.get("action") or {}).get("kind") in ("knock", "big_gin")]
    st.close()
    for suffix in (".csv", ".json", "-ratings.png"):
        assert (tmp_path / f"rr{suffix}").stat().st_size > 0
    data = json.loads((tmp_path / "rr.json").read_text())
    assert data["standings"][-1]["name"] == "passive" and data["games_played"] == 6
    # No bot log is kept for games that ended normally.
    assert not list((tmp_path / "rr-run" / "logs").iterdir())
    # The report command prints the same table again.
    assert main(["report", str(tmp_path / "rr.sqlite")]) == 0
    assert "6/6 games, finished" in capsys.readouterr().out


def test_crashing_and_hanging_bots_lose_and_the_tournament_goes_on(tmp_path: Path) -> None:
    parts = [
        {"name": "good", "command": protobot("--random", "1")},
        {"name": "crasher", "command": protobot("--crash-after", "2")},
        {"name": "hanger", "command": protobot("--hang-after", "1")},
        {"name": "garbler", "command": protobot("--garbage-after", "1")},
        {"name": "cheat", "command": protobot("--illegal-after", "0")},
    ]
    cfg = write_config(tmp_path / "bad.toml", parts, tournament={"seed": "bad", "games_per_pairing": 2, "concurrency": 2},
                       rules=FAST_RULES, clock={"move_ms": 1500, "grace_ms": 200})
    assert main([str(cfg), "--quiet"]) == 0
    games = ResultsStore.open_existing(tmp_path / "bad.sqlite").games()
    assert len(games) == 20
    for g in games:
        if "good" in g.seats:
            assert g.winner == "good", g
    by = {(g.culprit, g.termination) for g in games if g.culprit}
    assert ("crasher", "crash") in by and ("hanger", "timeout") in by and ("garbler", "timeout") in by
    assert ("cheat", "illegal") in by
    crash = next(g for g in games if g.termination == "crash")
    assert "crashing on purpose" in crash.reason  # the bot's last words are kept in the reason
    # Logs are kept for the games that ended abnormally.
    logs = list((tmp_path / "bad-run" / "logs").iterdir())
    assert any("crasher" in p.name for p in logs) and any("hanger" in p.name for p in logs)


def test_a_hung_bot_without_a_clock_loses_by_the_stall_timeout(tmp_path: Path) -> None:
    parts = [{"name": "good", "command": protobot()}, {"name": "hanger", "command": protobot("--hang-after", "0")},
             {"name": "gone", "command": protobot("--exit-after-hello")}]
    cfg = write_config(tmp_path / "stall.toml", parts,
                       tournament={"seed": "st", "games_per_pairing": 2, "stall_timeout": 2, "concurrency": 2},
                       rules=FAST_RULES)
    assert main([str(cfg), "--quiet"]) == 1  # finished, but gone lost every game to crashes
    games = ResultsStore.open_existing(tmp_path / "stall.sqlite").games()
    assert len(games) == 6
    hung = [g for g in games if g.culprit == "hanger" and g.winner == "good"]
    assert len(hung) == 2 and all(g.termination == "timeout" and "stall_timeout" in g.reason for g in hung)
    # hanger vs gone: gone's process exits right after its hello (a bot that could not even
    # start is stopped by the preflight, test_tournament_preflight.py); it loses that game.
    assert {g.termination for g in games if g.culprit == "gone"} == {"crash"}


def test_a_bot_still_starting_is_not_taken_for_stalled(tmp_path: Path) -> None:
    """stall_timeout is about moves: before the game starts the runner allows at least
    START_ALLOWANCE_S, so a bot that takes longer than stall_timeout to start (here 3 s
    against 1 s; an interpreter on a loaded machine) plays its games. Before, it lost them
    as 'made no move' (and test_a_hung_bot_... failed so beside a CPU hog)."""
    parts = [{"name": "slow", "command": protobot("--start-delay", "3")}, {"name": "quick", "command": protobot()}]
    cfg = write_config(tmp_path / "slow.toml", parts,
                       tournament={"seed": "sl", "games_per_pairing": 2, "stall_timeout": 1}, rules=FAST_RULES)
    assert main([str(cfg), "--quiet"]) == 0
    games = ResultsStore.open_existing(tmp_path / "slow.sqlite").games()
    assert len(games) == 2 and all(g.termination == "normal" for g in games), [(g.termination, g.reason) for g in games]


def test_kill_9_and_resume_gives_the_same_table(tmp_path: Path) -> None:
    parts = [
        {"name": "g1", "command": protobot("--random", "1")},
        {"name": "g2", "command": protobot("--random", "2")},
        {"name": "g3", "command": protobot("--random", "3")},
    ]
    sections = {"tournament": {"name": "cup", "seed": "k9", "games_per_pairing": 4, "concurrency": 2}, "rules": FAST_RULES}
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    cfg_a = write_config(tmp_path / "a" / "cup.toml", parts, **sections)
    cfg_b = write_config(tmp_path / "b" / "cup.toml", parts, **sections)
    assert main([str(cfg_a), "--quiet"]) == 0

    db_b = tmp_path / "b" / "cup.sqlite"
    proc = subprocess.Popen([sys.executable, "-m", "okgin", "tournament", str(cfg_b), "--quiet"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        kids: set[int] = set()
        while time.monotonic() < deadline:
            kids |= set(children_of(proc.pid))
            if games_recorded(db_b) >= 3:
                break
            time.sleep(0.05)
        kids |= set(children_of(proc.pid))
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    n_killed = ResultsStore.open_existing(db_b).count_games()
    assert 3 <= n_killed < 12, "the kill must land mid-tournament"
    # Every referee and bot the runner started dies with it (PR_SET_PDEATHSIG).
    deadline = time.monotonic() + 10
    while any(alive(k) for k in kids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert kids and not any(alive(k) for k in kids)

    assert main([str(cfg_b), "--quiet"]) == 2  # refuses to overwrite without --resume
    assert main([str(cfg_b), "--resume", "--quiet"]) == 0
    assert games_of(db_b) == games_of(tmp_path / "a" / "cup.sqlite")  # same games, none lost, none twice
    assert table_of(db_b) == table_of(tmp_path / "a" / "cup.sqlite")
    kinds = [e[1] for e in ResultsStore.open_existing(db_b).events()]
    assert kinds.count("resume") == 1


def test_a_dead_referee_has_its_games_replayed_elsewhere(tmp_path: Path) -> None:
    cfg = load_config(write_config(tmp_path / "rd.toml", GREEDY, rules={"target_score": 100},
                                   tournament={"seed": "rd", "games_per_pairing": 4, "concurrency": 2, "referees": 2}))
    store = ResultsStore.for_run(cfg, cfg.database_path, resume=False)
    runner = Runner(cfg, RunOptions(progress=False), store)
    killed: list[str] = []

    async def killer() -> None:
        while True:
            await asyncio.sleep(0.02)
            victims = [s for s in runner.executor.pool.slots if s.local is not None and s.active > 0 and not s.dead]
            if store.count_games() >= 1 and victims:
                victims[0].local.proc.kill()  # type: ignore[union-attr]
                killed.append(victims[0].label)
                return

    async def both() -> int:
        k = asyncio.ensure_future(killer())
        code = await runner.run()
        k.cancel()
        return code

    assert asyncio.run(both()) == 0
    assert killed
    games = store.games()
    assert [g.index for g in games] == list(range(12))
    kinds = [e[1] for e in store.events()]
    assert "referee-died" in kinds
    # The killed referee's game may have finished in the instant before the kill (the
    # killer sees it active, the result is already stored): then nothing needs a replay.
    # Otherwise its unfinished games were replayed elsewhere and ended normally.
    replayed = [g for g in games if g.attempts > 1]
    assert ("replay" in kinds) == bool(replayed)
    assert all(g.termination == "normal" for g in games)
    store.close()


def test_remote_referee_records_come_from_the_public_feed(tmp_path: Path) -> None:
    # Sandboxed bots have no network: a referee the runner did not start is reached through
    # its ipc:// socket (bound beside TCP), by the runner and the bots alike.
    endpoint = f"ipc://{tmp_path}/far.sock"
    ref = subprocess.Popen([sys.executable, "-m", "okgin", "referee", "--bind", "tcp://127.0.0.1:0", "--no-journal",
                            "--admin-key", "far-key", "--also-bind", endpoint],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert ref.stdout is not None
        assert re.search(r"tcp://\S+", readline(ref.stdout, 60, "the referee"))
        cfg = write_config(tmp_path / "far.toml", GREEDY[:2], rules=FAST_RULES,
                           tournament={"seed": "far", "games_per_pairing": 4, "referee_endpoints": [endpoint],
                                       "admin_key": "far-key"})
        assert main([str(cfg), "--quiet"]) == 0
    finally:
        ref.send_signal(signal.SIGTERM)
        ref.wait(10)
    games = ResultsStore.open_existing(tmp_path / "far.sqlite").games(with_records=True)
    assert len(games) == 4
    for g in games:
        assert g.clocks["source"] == "observer" and "record_note" not in g.clocks
        replay = Game.from_record(g.record, verify=True)
        assert g.seats[replay.winner] == g.winner and tuple(replay.scores) == g.scores


def test_sprt_stops_as_soon_as_it_decides(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    parts = [{"name": "greedy", "command": protobot("--random", "5")}, {"name": "passive", "command": protobot("--never-knock")}]
    cfg = write_config(tmp_path / "ab.toml", parts, rules=FAST_RULES,
                       tournament={"seed": "ab", "format": "sprt", "concurrency": 2},
                       sprt={"candidate": "greedy", "baseline": "passive", "elo0": 0, "elo1": 200, "max_games": 400})
    assert main([str(cfg), "--quiet"]) == 0
    st = ResultsStore.open_existing(tmp_path / "ab.sqlite")
    decision = json.loads(st.get_meta("sprt_decision") or "{}")
    assert decision["decision"] == "H1"
    # It stopped at once, on the pair that completed the decision: games in progress were
    # dropped, not recorded; a game whose deal partner never finished is unpaired. The test
    # reads complete deal pairs only (pentanomial cells, the candidate's points 0..2), and
    # one pair won twice fewer would not have decided (only such a pair raises the LLR enough).
    n, cells = decision["games"], decision["cells"]
    assert st.count_games() == n < 400 and n == 2 * decision["pairs"] + decision["unpaired"]
    test = Sprt(0, 200)
    assert status_of(test, st.games(), "greedy", "passive").paired.counts == tuple(cells)
    assert test.decide(cells) == "H1" and cells[4] > 0
    assert test.decide([*cells[:4], cells[4] - 1]) is None
    assert "H1 accepted: Elo difference greedy - passive >= 200" in capsys.readouterr().out
    # Resuming a decided SPRT plays nothing more.
    assert main([str(cfg), "--resume", "--quiet"]) == 0
    assert ResultsStore.open_existing(tmp_path / "ab.sqlite").count_games() == n


def test_box_tournament_every_seating(tmp_path: Path) -> None:
    parts = [{"name": f"b{i}", "command": protobot("--random", str(i))} for i in range(3)]
    cfg = write_config(tmp_path / "box.toml", parts, rules={"target_score": 30},
                       tournament={"seed": "bx", "format": "box", "games_per_pairing": 6, "concurrency": 2})
    assert main([str(cfg), "--quiet"]) == 0
    st = ResultsStore.open_existing(tmp_path / "box.sqlite")
    games = st.games(with_records=True)
    assert len(games) == 6 and len({g.seats for g in games}) == 6
    for g in games:
        assert len(g.scores) == 3 and g.record["rules"]["variant"] == "box"
        Game.from_record(g.record, verify=True)
    rep = report_from_store(st)
    # Rated by comparing the seatings of each deal (not as Bradley-Terry pairs): one deal here.
    assert all(s.elo is None and s.par is not None and s.games == 6 for s in rep.standings)
    assert all(s.par_low95 == -1.0 and s.par_high95 == 1.0 for s in rep.standings)  # one deal: no interval
    assert [s.par for s in rep.standings] == sorted((s.par for s in rep.standings), reverse=True)
    assert rep.deals == 1 and "only 1 deal: no interval" in rep.to_text()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc")
def test_interrupt_stops_cleanly_and_resume_finishes(tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "int.toml", GREEDY[:2], rules=FAST_RULES,
                       tournament={"seed": "int", "games_per_pairing": 12, "concurrency": 2})
    proc = subprocess.Popen([sys.executable, "-m", "okgin", "tournament", str(cfg), "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    db = tmp_path / "int.sqlite"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if games_recorded(db) >= 2:
            break
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 1 and "--resume to continue" in out
    assert main([str(cfg), "--resume", "--quiet"]) == 0
    assert [g[0] for g in games_of(db)] == list(range(12))


def test_remote_bot_plays_through_the_gateway(tmp_path: Path) -> None:
    parts = [{"name": "local", "command": protobot("--random", "1")}, {"name": "far", "remote": True, "token": "far-secret-1"}]
    cfg = write_config(tmp_path / "gw.toml", parts, rules=FAST_RULES,
                       tournament={"seed": "gw", "games_per_pairing": 4, "gateway": "tcp://127.0.0.1:0"},
                       clock={"move_ms": 10000})
    runner = subprocess.Popen([sys.executable, "-m", "okgin", "tournament", str(cfg), "--quiet"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    remote = None
    try:
        assert runner.stdout is not None
        endpoint = None
        for _ in range(20):
            line = readline(runner.stdout, 60, "the runner")
            m = re.search(r"remote bots connect to (tcp://\S+)", line)
            if m:
                endpoint = m.group(1)
                break
        assert endpoint, "the runner prints the gateway's real endpoint"
        # Not on a terminal: the token is in a 0600 file, not in the output (issue 24).
        assert "far-secret-1" not in line and "remote-tokens" in line
        assert "far: far-secret-1" in (tmp_path / "gw-run" / "remote-tokens").read_text()
        # The remote bot connects once, with the organiser's token, and plays every game.
        remote = subprocess.Popen([sys.executable, PROTOBOT, endpoint, "far-secret-1", "--serve", "--random", "9"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        out, _ = runner.communicate(timeout=120)
        assert runner.returncode == 0, out
    finally:
        for p in (runner, remote):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait(30)
    games = ResultsStore.open_existing(tmp_path / "gw.sqlite").games(with_records=True)
    assert len(games) == 4 and all(g.termination == "normal" for g in games)
    for g in games:
        Game.from_record(g.record, verify=True)


def test_gateway_refuses_strangers(tmp_path: Path) -> None:
    import msgpack

    from competition.tournament.gateway import Gateway

    async def scenario() -> list[dict]:
        import zmq.asyncio

        ctx = zmq.asyncio.Context()
        gw = Gateway(ctx, "tcp://127.0.0.1:0", {"far": "tok"})
        ep = await gw.start()
        s = limit(ctx.socket(zmq.DEALER), 10000)  # sends bounded too (tests/bounded.py)
        s.connect(ep)
        out = []
        for m in ({"type": "act", "table": "x", "seq": 1, "action": {"kind": "pass"}},
                  {"type": "hello", "id": 1, "protocol": 1, "role": "player", "name": "x", "token": "nope"},
                  {"type": "hello", "id": 2, "protocol": 2, "role": "player", "name": "x", "token": "tok"},
                  {"type": "hello", "id": 3, "protocol": 1, "role": "player", "name": "x", "token": "tok"},
                  {"type": "act", "id": 4, "table": "elsewhere", "seq": 1, "action": {"kind": "pass"}}):
            await s.send(msgpack.packb(m))
            out.append(msgpack.unpackb(await asyncio.wait_for(s.recv(), 10)))
        await s.send(b"\xc1")
        out.append(msgpack.unpackb(await asyncio.wait_for(s.recv(), 10)))
        s.close()
        await gw.close()
        ctx.term()
        return out

    got = asyncio.run(scenario())
    assert [m.get("name") if m["type"] == "error" else m["type"] for m in got] == [
        "hello_first", "bad_token", "version_mismatch", "welcome", "not_seated", "bad_frame"]
    assert got[3]["name"] == "far" and got[3]["token"] == "tok"
