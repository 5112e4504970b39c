"""The clients at a real arena: ``okgin arena`` (a real process with a real shard), and
real bot processes that find their games there and play them at the shard.

- ``okgin bot NAME --arena``: two bots seek and play two rated games each, and print
  the arena's result with the rating change;
- the Java example bot, with ``OKGIN_ARENA``, ``OKGIN_ACCOUNT`` and ``OKGIN_KEY_FILE``,
  plays two games against ``okgin bot --arena`` in one arena session, reading the arena's
  ``game_over`` after each (the C, JavaScript and Rust bots do the same at a CURVE shard in
  tests/arena/test_arena_example_bots.py; JeroMQ 0.3.6 has no CURVE, so Java plays here, at
  this arena's plain shard);
- the refusals a person meets are one line each: a wrong key, a banned account.

One arena for the module (it takes a while to start on a loaded machine); every test
uses accounts of its own. Games are short (target score 20, at most 6 hands).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "arena"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "conformance"))
from arenakit import FAST_RULES, ArenaProcess, add_accounts, finish
from botbuild import build

from clients.sdk.arena import private_key_file
from okgin.launch import okgin_argv

ACCOUNTS = ("py1", "py2", "ban1", "wrongkey", "ex-java", "op-java")


@dataclass
class Arena:
    process: ArenaProcess
    state: Path
    keys: dict[str, Path]  # account -> its 0600 key file

    @property
    def endpoint(self) -> str:
        return self.process.endpoint


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Arena]:
    root = tmp_path_factory.mktemp("arena-clients")
    state = root / "arena"
    keys = add_accounts(state, *ACCOUNTS)
    files = {}
    for name, key in keys.items():
        files[name] = root / f"{name}.key"
        private_key_file(files[name], key)
    # The gap widens every second, not every 10 s: after their first game two accounts'
    # ratings are some 300 apart, which the default schedule bridges only after ~50 s.
    # Verbose: it logs each sign-in (the Java bot's test counts them).
    proc = ArenaProcess(state, toml=f"show_up_ms = 20000\nwiden_every_ms = 1000\n[rules]\n{FAST_RULES}",
                        extra=("--verbose",))
    try:
        yield Arena(proc, state, files)
    finally:
        assert proc.stop() == 0, proc.stderr()


def bot_arena(arena: Arena, account: str, *args: str, bot: str = "simple") -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k != "OKGIN_ARENA_KEY"}
    return subprocess.Popen(
        okgin_argv("bot", bot, "--arena", arena.endpoint, "--account", account, "--key-file", str(arena.keys[account]), *args),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )


@pytest.mark.timeout(1200)
def test_okgin_bot_plays_rated_games_at_the_arena(arena: Arena) -> None:
    a = bot_arena(arena, "py1", "--games", "2")
    b = bot_arena(arena, "py2", "--games", "2", bot="random")
    (ra, oa, ea), (rb, ob, eb) = finish(a), finish(b)
    assert ra == 0 and rb == 0, (oa, ea, ob, eb)
    lines = oa.strip().splitlines()
    assert len(lines) == 2, oa
    for line in lines:
        assert line.startswith("arena game ") and " vs py2: " in line and "rating" in line, line
    assert "rating 1500 -> " in lines[0]  # the first rated game of both, from the default rating
    # the key never shows: not in the output, not on the command line
    key = arena.keys["py1"].read_text().strip()
    assert key not in oa + ea and key not in " ".join(a.args)


@pytest.mark.timeout(1200)
def test_java_bot_keeps_one_session_and_sees_game_over(arena: Arena) -> None:
    """The Java example bot: OKGIN_ARENA set, it signs in once, and for each of its two games
    seeks, reads game_ready, plays at the shard against okgin bot --arena, and reads the
    arena's game_over (on the old main it signed in anew for each game and never saw one)."""
    language = "java"
    built = build(language)
    account = f"ex-{language}"
    env = {k: v for k, v in os.environ.items() if k not in ("OKGIN_ENDPOINT", "OKGIN_TOKEN")}
    env.update(OKGIN_ARENA=arena.endpoint, OKGIN_ACCOUNT=account, OKGIN_KEY_FILE=str(arena.keys[account]))
    example = subprocess.Popen(built.argv("--games", "2"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=env)
    opponent = bot_arena(arena, f"op-{language}", "--games", "2")
    (rx, ox, ex), (ro, oo, eo) = finish(example), finish(opponent)
    assert rx == 0, (ox, ex)
    assert ro == 0, (oo, eo)
    assert oo.count(f"vs {account}: ") == 2  # the opponent's arena results name the example bot
    assert ex.count(" over (") == 2  # the example bot's own game_end lines
    overs = re.findall(r"arena game (\S+): (win|loss|draw) \((\w+)\), rating (\d+) -> (\d+)", ex)
    assert len(overs) == 2 and overs[0][0] != overs[1][0], ex
    assert overs[0][3] == "1500" and overs[1][3] == overs[0][4], ex
    assert len(re.findall(rf"arena: {account} signed in", arena.process.stderr())) == 1  # one session for both games


@pytest.mark.timeout(600)
def test_refusals_are_one_clear_line(arena: Arena) -> None:
    subprocess.run(okgin_argv("arena", "account", "ban", "ban1", "--reason", "cheating", "--state", str(arena.state)),
                   check=True, capture_output=True, timeout=120)
    code, _out, err = finish(bot_arena(arena, "ban1"))
    assert code == 1 and "banned" in err and len(err.strip().splitlines()) == 1, err
    private_key_file(arena.keys["wrongkey"], "okga_" + "x" * 43)
    code, _out, err = finish(bot_arena(arena, "wrongkey"))
    assert code == 1 and "authentication failed" in err and len(err.strip().splitlines()) == 1, err
