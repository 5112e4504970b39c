"""Two built-in bots as their own processes (``okgin bot simple --arena ...``, the SDK's
ArenaClient) seek and play a rated game through a real ``okgin arena`` and its shard."""

from __future__ import annotations

import subprocess
from pathlib import Path

from arenakit import ArenaProcess, add_accounts

from arena.keys import write_key_file
from arena.store import Store, state_db_url
from okgin.launch import okgin_argv


def test_two_bot_processes_play_a_rated_game(tmp_path: Path) -> None:
    state = tmp_path / "arena"
    keys = add_accounts(state, "simple-1", "random-1")
    arena = ArenaProcess(state)
    procs = []
    try:
        for account, bot in (("simple-1", "simple"), ("random-1", "random")):
            key_file = write_key_file(tmp_path / f"{account}.key", keys[account])
            procs.append(subprocess.Popen(
                okgin_argv("bot", bot, "--arena", arena.endpoint, "--account", account, "--key-file", str(key_file),
                           "--games", "1"),
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL))
        outs = [p.communicate(timeout=300) for p in procs]
        for p, (out, err) in zip(procs, outs, strict=True):
            assert p.returncode == 0, (out, err)
            assert "arena game" in out, out
        assert not any(k in out + err for k in keys.values() for out, err in outs)  # a key is never printed
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait(10)
        assert arena.stop() == 0, arena.stderr()
    store = Store.open(state_db_url(state))
    try:
        (game,) = store.recent_games("simple-1", 5)
        assert game.status == "finished" and game.rated and set(game.players) == {"simple-1", "random-1"}
        assert store.rating("simple-1", "oklahoma").games == store.rating("random-1", "oklahoma").games == 1
    finally:
        store.close()
