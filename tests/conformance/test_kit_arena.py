"""``okgin conformance --arena``: the kit checks a bot's arena handshake (protocol 1.6).

The kit's stand-in arena (competition/conformance/arenadesk.py) gives each game's bot an
account and a key file, expects ``hello`` with them, a ``seek`` of the game's variant and
heartbeats while it waits, then hands it the table through ``game_ready``; the rest of
the game is checked as in any run. Real processes: the C example bot and ``okgin bot``
(the SDK's ArenaClient) pass; bots that get the handshake wrong fail the ``arena``
feature, with the reason. One game of Oklahoma Gin each, all runs at once.
"""

from __future__ import annotations

import sys

import pytest
from botbuild import build
from kitrun import KitRun, run_kits

COMMON = ["--arena", "--variant", "oklahoma", "--games", "1", "--move-ms", "7000", "--disconnect-grace-ms", "3000"]
PY_BOT = [sys.executable, "-m", "okgin", "bot", "simple", "--arena", "{arena}", "--account", "{account}"]


@pytest.fixture(scope="module")
def arena_runs() -> dict[str, KitRun]:
    c_bot = build("c").argv("--variant", "{variant}")
    return run_kits({
        "c": [*COMMON, "--", *c_bot],
        "python": [*COMMON, "--", *PY_BOT, "--key-file", "{key_file}", "--variant", "{variant}"],
        # a key that is not the account's: the arena refuses it, the bot never plays
        "wrong-key": [*COMMON, "--no-probes", "--", "env", "OKGIN_ARENA_KEY=okga_not-the-key", *PY_BOT],
        # a seek of the wrong game: the box asked for, the kit's game is Oklahoma Gin
        "wrong-variant": [*COMMON, "--no-probes", "--", *PY_BOT, "--key-file", "{key_file}", "--variant", "box"],
    })


@pytest.mark.timeout(900)
@pytest.mark.parametrize("bot", ["c", "python"])
def test_example_bots_pass_the_arena_handshake(arena_runs: dict[str, KitRun], bot: str) -> None:
    run = arena_runs[bot]
    assert run.status == 0, run.explain()
    assert run.feature("arena")["status"] == "pass", run.explain()
    assert run.feature("games")["status"] == "pass", run.explain()


@pytest.mark.timeout(900)
@pytest.mark.parametrize(("fault", "why"), [("wrong-key", "not the key"), ("wrong-variant", "variant 'box'")])
def test_a_wrong_handshake_fails_the_arena_feature(arena_runs: dict[str, KitRun], fault: str, why: str) -> None:
    run = arena_runs[fault]
    assert run.status == 1, run.explain()
    arena = run.feature("arena")
    assert arena["status"] == "fail", run.explain()
    assert why in run.output, run.explain()
