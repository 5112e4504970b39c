"""Bot logs (--keep-logs, one file per game, seat and attempt) and starts that fail late."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from competition.tournament.cli import main
from competition.tournament.config import parse_config
from competition.tournament.runner import Runner, RunOptions
from competition.tournament.store import ResultsStore

from .tourkit import protobot, write_config

pytestmark = pytest.mark.timeout(240)


def test_a_replayed_attempt_never_overwrites_an_earlier_log(tmp_path: Path) -> None:
    cfg = parse_config({"tournament": {"name": "cup"}, "participant": [{"name": n, "bot": "random"} for n in "ab"]})
    store = ResultsStore.for_run(cfg, tmp_path / "cup.sqlite", resume=False)
    try:
        runner = Runner(cfg, RunOptions(progress=False), store)
        sg = runner.schedule[0]
        # What a killed run left: attempt 1 of this game's seat 0.
        killed = runner.executor.logdir / f"{sg.key}-a1-s0-{sg.seats[0]}.log"
        killed.write_text("the killed run's last words\n")
        path, log = runner.executor.bots.open_log(sg, 0, sg.seats[0], 1, "cup-0-1")
        log.close()
        assert path.name == f"{sg.key}-a2-s0-{sg.seats[0]}.log"
        assert killed.read_text() == "the killed run's last words\n"
        assert "table cup-0-1" in path.read_text()
        # The next attempt of this run goes on numbering; another seat has its own file.
        path3, log = runner.executor.bots.open_log(sg, 0, sg.seats[0], 2, "cup-0-2")
        log.close()
        other, log = runner.executor.bots.open_log(sg, 1, sg.seats[1], 1, "cup-0-1")
        log.close()
        assert path3.name == f"{sg.key}-a3-s0-{sg.seats[0]}.log" and other.name == f"{sg.key}-a1-s1-{sg.seats[1]}.log"
        runner.executor.ctx.term()
    finally:
        store.close()


def test_keep_logs_keeps_every_bots_log(tmp_path: Path) -> None:
    parts = [{"name": "g1", "command": protobot("--random", "1")}, {"name": "g2", "command": protobot("--random", "2")}]
    cfg = write_config(tmp_path / "kl.toml", parts, tournament={"games_per_pairing": 2, "concurrency": 2},
                       rules={"target_score": 40}, clock={"move_ms": 10000})
    assert main([str(cfg), "--quiet", "--keep-logs"]) == 0
    games = ResultsStore.open_existing(tmp_path / "kl.sqlite").games()
    assert len(games) == 2 and {g.termination for g in games} == {"normal"}
    logs = sorted(p.name for p in (tmp_path / "kl-run" / "logs").iterdir() if p.name.startswith(tuple(g.key for g in games)))
    assert logs == sorted(f"{g.key}-a1-s{s}-{name}.log" for g in games for s, name in enumerate(g.seats))


def test_an_endpoint_refused_after_the_start_leaves_no_results_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The form of an endpoint is checked with the arguments; what only ZeroMQ refuses (here
    an ipc path longer than a Unix socket's) shows once the results file is open."""
    cfg = write_config(tmp_path / "late.toml", [{"name": n, "bot": "random"} for n in ("a", "b")],
                       tournament={"sandbox": False})
    endpoint = f"ipc://{tmp_path}/{'x' * 200}"
    assert main([str(cfg), "--quiet", "--referee-endpoints", endpoint]) == 2
    assert f"referee endpoint {endpoint!r}" in capsys.readouterr().err
    assert not (tmp_path / "late.sqlite").exists() and not (tmp_path / "late-run").exists()


def test_a_gateway_that_cannot_listen_leaves_no_results_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = write_config(tmp_path / "gw.toml", [{"name": "a", "bot": "random"}, {"name": "b", "remote": True}],
                       tournament={"gateway": "tcp://256.0.0.1:1"})
    assert main([str(cfg), "--quiet"]) == 2
    assert "gateway 'tcp://256.0.0.1:1': cannot listen there" in capsys.readouterr().err
    assert not (tmp_path / "gw.sqlite").exists() and not (tmp_path / "gw-run").exists()


def test_bot_logs_are_bounded_per_game_and_per_event_and_never_hold_a_token(tmp_path: Path) -> None:
    """Issue 24: a crashing bot kept 64 MB of log per game, 4 games took 268 MB. A bot
    that writes 3 MB (its own seat token in every line) and crashes at its first move:
    each log keeps its first part and its last words (the crash the reason quotes), and
    the event's total stops at its limit with a line saying so.

    The target is one no single hand can reach: the spewer crashes at its second prompt,
    and simple may knock before that (with the upcard, or on its first draw), which to 40
    can end the game with no crash."""
    parts = [{"name": "spewer", "command": protobot("--spew-mb", "3", "--crash-after", "1")}, {"name": "simple", "bot": "simple"}]
    cfg = write_config(tmp_path / "spew.toml", parts,
                       tournament={"games_per_pairing": 4, "concurrency": 2, "bot_log_kb": 400, "bot_logs_total_mb": 1},
                       rules={"target_score": 150})
    assert main([str(cfg), "--quiet"]) == 1  # the spewer lost every game to crashes
    games = ResultsStore.open_existing(tmp_path / "spew.sqlite").games()
    assert len(games) == 4 and {(g.termination, g.culprit) for g in games} == {("crash", "spewer")}, games
    logs = sorted((tmp_path / "spew-run" / "logs").glob("*-spewer.log"))
    assert len(logs) == 4, logs
    total = sum(p.stat().st_size for p in logs)
    assert total <= 1024 * 1024 + 4 * 2048, total  # the event's 1 MB, plus the runner's own lines
    texts = [p.read_text(errors="replace") for p in logs]
    for text in texts:
        assert len(text.encode()) <= 400 * 1024 + 2048
        assert "[seat token]" in text or "limit of" in text
        assert not re.search(r"its token is (?!\[seat token\])", text), "a seat token reached the log"
    full = [t for t in texts if "bytes of output dropped here" in t and "crashing on purpose" in t]
    assert full, "no log kept both its first part and the crash's last words"
    assert any("the event's bot logs reached their limit of 1048576 bytes" in t for t in texts)
    assert any("crashing on purpose" in g.reason for g in games), [g.reason for g in games]
