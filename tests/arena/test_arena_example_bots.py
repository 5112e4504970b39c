"""The C, JavaScript and Rust example bots at a real arena whose shard requires CURVE.

A real ``okgin arena`` (started ``--verbose``, so it logs each sign-in), with no local
shard and one remote shard: a real ``okgin referee`` with CURVE and an admin key on
another loopback address, as an operator elsewhere would start it. Each example bot,
built as its README says (tests/conformance/botbuild.py) and given ``OKGIN_ARENA``,
``OKGIN_ACCOUNT`` and ``OKGIN_KEY_FILE``, plays ``GAMES`` games against ``okgin bot
--arena`` and must:

- sign in **once** and keep that one arena session for all its games (the arena's own log
  has one sign-in of the account);
- play every game at the CURVE shard with the public key ``game_ready.server_key`` gives;
- read the arena's ``game_over`` after each game (one result line per game, with the
  rating change: the games are rated).

Before this (the old main) every example bot refused a CURVE shard outright, and signed
in anew for each game, saying ``bye`` as soon as it had its ``game_ready``, so it never
saw a ``game_over``. The Java bot keeps its session and reads ``game_over`` too, but it
cannot speak CURVE (JeroMQ 0.3.6, the version Debian packages, has none): it is tested at
a plain shard in tests/clients/test_cl_arena_play.py.
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
from arenakit import FAST_RULES, ArenaProcess, add_accounts, finish
from bounded import readline

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "conformance"))
from botbuild import build

from arena.store import Store, state_db_url
from clients.sdk.arena import private_key_file
from okgin.launch import endpoint_from_line, okgin_argv, referee_argv
from referee.security import generate_keys

GAMES = 2
CURVE_LANGUAGES = ("c", "js", "rust")  # not java: see the module docstring


@dataclass
class CurveArena:
    process: ArenaProcess
    state: Path
    keys: dict[str, Path]  # account -> its 0600 key file
    shard: str  # the remote shard's endpoint
    shard_key: str  # its CURVE public key (Z85)


@pytest.fixture(scope="module")
def curve_arena(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CurveArena]:
    root = tmp_path_factory.mktemp("curve-arena")
    keys_dir = root / "shard-keys"
    generate_keys(keys_dir)
    public = (keys_dir / "server.key").read_text().split('public-key = "')[1].split('"')[0]
    secret = "shared-secret-" + os.urandom(8).hex()
    secret_file = root / "shard.secret"
    private_key_file(secret_file, secret)
    shard = subprocess.Popen(
        referee_argv(root / "shard-journals", "--curve-keys", str(keys_dir), "--allow", "any", bind="tcp://127.0.0.2:0"),
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True,
        env={**os.environ, "OKGIN_ADMIN_KEY": secret})
    try:
        assert shard.stdout is not None
        endpoint = endpoint_from_line(readline(shard.stdout, 120.0, "the remote shard"))
        assert endpoint is not None
        state = root / "arena"
        accounts = [a for lang in CURVE_LANGUAGES for a in (f"ex-{lang}", f"op-{lang}")]
        files = {}
        for name, key in add_accounts(state, *accounts).items():
            files[name] = root / f"{name}.key"
            private_key_file(files[name], key)
        # widen_every_ms: the two accounts' second game is paired in seconds although their
        # ratings are ~300 apart after the first (the default widens the gap every 10 s)
        toml = (f"shards = 0\nshow_up_ms = 30000\nwiden_every_ms = 1000\n[rules]\n{FAST_RULES}\n"
                f"[[remote_shards]]\nendpoint = \"{endpoint}\"\n"
                f"admin_key_file = \"{secret_file}\"\nserver_key = \"{keys_dir / 'server.key'}\"\n")
        proc = ArenaProcess(state, shards=None, toml=toml, extra=("--verbose",))
        try:
            yield CurveArena(proc, state, files, endpoint, public)
        finally:
            assert proc.stop() == 0, proc.stderr()
    finally:
        shard.terminate()
        try:
            shard.wait(20)
        except subprocess.TimeoutExpired:
            shard.kill()
            shard.wait(10)


@pytest.mark.timeout(1200)
@pytest.mark.parametrize("language", CURVE_LANGUAGES)
def test_example_bot_keeps_one_session_sees_game_over_and_plays_at_a_curve_shard(curve_arena: CurveArena,
                                                                                 language: str) -> None:
    built = build(language)
    account, opponent = f"ex-{language}", f"op-{language}"
    env = {k: v for k, v in os.environ.items() if k not in ("OKGIN_ENDPOINT", "OKGIN_TOKEN", "OKGIN_ARENA_KEY")}
    env.update(OKGIN_ARENA=curve_arena.process.endpoint, OKGIN_ACCOUNT=account,
               OKGIN_KEY_FILE=str(curve_arena.keys[account]))
    example = subprocess.Popen(built.argv("--games", str(GAMES), "--verbose"), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=env, stdin=subprocess.DEVNULL)
    op_env = {k: v for k, v in os.environ.items() if k != "OKGIN_ARENA_KEY"}
    other = subprocess.Popen(
        okgin_argv("bot", "simple", "--arena", curve_arena.process.endpoint, "--account", opponent,
                   "--key-file", str(curve_arena.keys[opponent]), "--games", str(GAMES)),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=op_env, stdin=subprocess.DEVNULL)
    (rx, ox, ex), (ro, oo, eo) = finish(example), finish(other)
    assert rx == 0, (ox, ex[-4000:])
    assert ro == 0, (oo, eo[-4000:])
    # every game was played (its game_end at the table) and the arena's game_over read after it
    assert ex.count(" over (") == GAMES, ex[-4000:]
    overs = re.findall(r"arena game (\S+): (win|loss|draw) \((\w+)\), rating (\d+) -> (\d+)", ex)
    assert len(overs) == GAMES, ex[-4000:]
    assert len({g for g, *_ in overs}) == GAMES  # two different games
    assert overs[0][3] == "1500"  # the first rated game of the account, from the default rating
    assert overs[1][3] == overs[0][4]  # the second starts where the first left it
    # at the CURVE shard, with the key game_ready gave
    assert ex.count(f"at {curve_arena.shard} (CURVE)") == GAMES, ex[-4000:]
    # one arena session for all its games: the arena saw one sign-in of the account
    signed_in = re.findall(rf"arena: {re.escape(account)} signed in", curve_arena.process.stderr())
    assert len(signed_in) == 1, curve_arena.process.stderr()[-4000:]
    # the key is never printed
    key = curve_arena.keys[account].read_text().strip()
    assert key not in ox + ex
    store = Store.open(state_db_url(curve_arena.state))
    try:
        games = store.recent_games(account, 10)
        assert len(games) == GAMES and all(g.status == "finished" and g.rated for g in games)
        assert all(set(g.players) == {account, opponent} for g in games)
        assert store.rating(account, "oklahoma").games == GAMES
    finally:
        store.close()
