"""A Python SDK bot as a remote tournament participant, through the gateway.

``okgin bot NAME --connect GATEWAY --token TOKEN --games 0`` connects once with the
organiser's token, is seated game after game by the gateway, and exits by itself (status
0) when the tournament is over and the gateway says ``shutdown``. Real processes: the
tournament runner (with its own referee), a local protocol bot, and ``okgin bot``.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from bounded import readline

from competition.tournament.store import ResultsStore
from okgin import Game

from .tourkit import protobot, write_config

pytestmark = pytest.mark.timeout(240)


def _gateway_endpoint(runner: subprocess.Popen[str]) -> str:
    assert runner.stdout is not None
    for _ in range(20):
        m = re.search(r"remote bots connect to (tcp://\S+)", readline(runner.stdout, 60, "the runner"))
        if m:
            return m.group(1)
    raise AssertionError("the runner did not print the gateway's endpoint")


def _end(p: subprocess.Popen[str] | None) -> None:
    if p is not None and p.poll() is None:
        p.kill()
        p.wait(30)


def test_okgin_bot_plays_every_game_through_the_gateway_and_exits_at_the_end(tmp_path: Path) -> None:
    parts = [{"name": "local", "command": protobot("--random", "3")},
             {"name": "visitor", "remote": True, "token": "visitor-7f3a9c"}]
    cfg = write_config(tmp_path / "cup.toml", parts, rules={"target_score": 40},
                       tournament={"seed": "sdk-remote", "games_per_pairing": 4, "gateway": "tcp://127.0.0.1:0"},
                       clock={"move_ms": 10000})
    runner = subprocess.Popen([sys.executable, "-m", "okgin", "tournament", str(cfg), "--quiet"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    bot = None
    try:
        gateway = _gateway_endpoint(runner)
        bot = subprocess.Popen([sys.executable, "-m", "okgin", "bot", "simple", "--connect", gateway,
                                "--token", "visitor-7f3a9c", "--name", "visitor", "--games", "0", "--seed", "7"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out, _ = runner.communicate(timeout=180)
        assert runner.returncode == 0, out
        # The tournament is over: the gateway said shutdown, and the bot ends by itself.
        bot_out, bot_err = bot.communicate(timeout=60)
        assert bot.returncode == 0, bot_err
    finally:
        _end(runner)
        _end(bot)
    games = ResultsStore.open_existing(tmp_path / "cup.sqlite").games(with_records=True)
    assert len(games) == 4 and all(g.termination == "normal" for g in games), (bot_out, bot_err)
    for g in games:
        assert "visitor" in g.seats
        Game.from_record(g.record, verify=True)
    # one line per game played, on four different tables, with the recorded result
    lines = [x for x in bot_out.splitlines() if " game " in x]
    assert len(lines) == 4, bot_out
    assert len({x.split()[0] for x in lines}) == 4
    won = sum(1 for g in games if g.winner == "visitor")
    assert sum(1 for x in lines if ": won " in x) == won
    assert "refused" not in bot_err, bot_err


def test_games_zero_with_a_token_plays_until_the_referee_shuts_down(tmp_path: Path) -> None:
    """On a plain referee, a reserved seat and ``--games 0``: the one game is played,
    then the bot waits for more until the referee stops, and exits 0 at its shutdown."""
    ref = subprocess.Popen([sys.executable, "-m", "okgin", "referee", "--bind", "tcp://127.0.0.1:0", "--no-journal",
                            "--table", "solo", "--reserved", "--seed", "11", "--rule", "target_score=30"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    bots: list[subprocess.Popen[str]] = []
    try:
        assert ref.stdout is not None
        endpoint = readline(ref.stdout, 60, "the referee").split()[-1]
        assert readline(ref.stdout, 60, "the referee").strip() == "table solo"
        toks = [readline(ref.stdout, 60, "the referee").split()[-1] for _ in range(2)]
        bots = [subprocess.Popen([sys.executable, "-m", "okgin", "bot", "simple", "--connect", endpoint, "--token", tok,
                                  *(["--games", "0"] if i == 0 else [])],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for i, tok in enumerate(toks)]
        one_game, _ = bots[1].communicate(timeout=120)  # the default: one game, then exit
        assert bots[1].returncode == 0 and "solo game 1" in one_game
        assert bots[0].poll() is None, "with --games 0 the bot waits for further games"
        ref.terminate()
        assert ref.wait(30) == 0
        out, err = bots[0].communicate(timeout=60)
        assert bots[0].returncode == 0, err
        assert "solo game 1" in out
    finally:
        for p in (*bots, ref):
            _end(p)
