"""A shard on another machine (here another loopback address, 127.0.0.2): started by its
operator with CURVE and an admin key, joined by the arena with that shared secret over
CURVE; players get its public key in ``game_ready`` and play there encrypted; the game's
record is rebuilt from the public feed."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from arenakit import FAST_RULES, ArenaProcess, Client, add_accounts, arena_hello, play_game
from bounded import readline

from arena.store import Store, state_db_url
from okgin.launch import endpoint_from_line, okgin_argv, referee_argv
from referee.security import generate_keys


@pytest.fixture
def remote_shard(tmp_path: Path):  # type: ignore[no-untyped-def]
    keys = tmp_path / "shard-keys"
    generate_keys(keys)
    secret = "shared-secret-" + os.urandom(8).hex()
    key_file = tmp_path / "shard.secret"
    key_file.write_text(secret + "\n")
    key_file.chmod(0o600)
    argv = referee_argv(tmp_path / "remote-journals", "--curve-keys", str(keys), "--allow", "any",
                        bind="tcp://127.0.0.2:0")
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True,
                            env={**os.environ, "OKGIN_ADMIN_KEY": secret})
    try:
        assert proc.stdout is not None
        endpoint = endpoint_from_line(readline(proc.stdout, 120.0, "the remote shard"))
        assert endpoint is not None and endpoint.startswith("tcp://127.0.0.2:")
        yield endpoint, key_file, keys / "server.key"
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def remote_toml(endpoint: str, key_file: Path, server_key: Path) -> str:
    return (f"shards = 0\nshow_up_ms = 20000\n[rules]\n{FAST_RULES}\n[[remote_shards]]\nendpoint = \"{endpoint}\"\n"
            f"admin_key_file = \"{key_file}\"\nserver_key = \"{server_key}\"\n")


def test_a_remote_shard_joined_with_a_shared_secret_over_curve(tmp_path: Path, remote_shard) -> None:  # type: ignore[no-untyped-def]
    endpoint, key_file, server_key = remote_shard
    state = tmp_path / "arena"
    keys = add_accounts(state, "ann", "bob")
    arena = ArenaProcess(state, shards=None, toml=remote_toml(endpoint, key_file, server_key))
    try:
        assert arena.children() == []  # no local shard
        ann, bob = Client(arena.endpoint), Client(arena.endpoint)
        for c, name in ((ann, "ann"), (bob, "bob")):
            assert arena_hello(c, name, keys[name])["type"] == "welcome"
            c.request({"type": "seek", "variant": "oklahoma"}, "sought")
        ready = {"ann": ann.wait_for(lambda m: m["type"] == "game_ready"),
                 "bob": bob.wait_for(lambda m: m["type"] == "game_ready")}
        assert ready["ann"]["endpoint"] == endpoint
        assert ready["ann"]["server_key"] == server_key.read_text().split('public-key = "')[1].split('"')[0]
        # a client without the shard's key gets nowhere: CURVE is required there
        plain = Client(endpoint, validate="none")
        plain.send({"type": "hello", "protocol": 1, "role": "player", "name": "x", "token": ready["ann"]["token"]})
        assert not plain.sock.poll(1000)
        plain.close()
        play_game(ready)
        over = ann.wait_for(lambda m: m["type"] == "game_over", timeout_ms=60000)
        assert over["result"] in ("win", "loss", "draw") and over["rating"] is not None
        game = over["game"]
        ann.close()
        bob.close()
    finally:
        assert arena.stop() == 0, arena.stderr()
    store = Store.open(state_db_url(state))
    try:
        row = store.game(game)
        assert row is not None and row.status == "finished" and row.shard == "r0"
        assert row.record is not None and row.record["entries"]  # rebuilt from the public feed
        assert row.journal.startswith(endpoint)  # type: ignore[union-attr]
    finally:
        store.close()


def test_a_wrong_shared_secret_is_refused(tmp_path: Path, remote_shard) -> None:  # type: ignore[no-untyped-def]
    endpoint, _key_file, server_key = remote_shard
    wrong = tmp_path / "wrong.secret"
    wrong.write_text("not-the-secret\n")
    state = tmp_path / "arena"
    state.mkdir(mode=0o700)
    cfg = tmp_path / "arena.toml"
    cfg.write_text(remote_toml(endpoint, wrong, server_key))
    out = subprocess.run(okgin_argv("arena", "--state", str(state), "--bind", "tcp://127.0.0.1:0", "--config", str(cfg),
                                    "--no-web"),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 1 and "cannot start" in out.stderr and "auth_failed" in out.stderr, out


def test_an_arena_with_curve_encrypts_its_front_and_its_shards(tmp_path: Path) -> None:
    import zmq
    from bounded import dealer

    keys_dir = tmp_path / "keys"
    generate_keys(keys_dir)
    public = (keys_dir / "server.key").read_text().split('public-key = "')[1].split('"')[0]
    state = tmp_path / "arena"
    keys = add_accounts(state, "ann", "bob")
    arena = ArenaProcess(state, toml=f'[curve]\nkeys = "{keys_dir}"\n[rules]\n{FAST_RULES}')
    try:
        plain = Client(arena.endpoint, validate="none")
        plain.send({"type": "hello", "protocol": 1, "role": "spectator", "name": "x"})
        assert not plain.sock.poll(1000)  # no CURVE, no answer
        plain.close()
        clients = {}
        for name in ("ann", "bob"):
            c = Client(arena.endpoint)
            c.sock.close(0)
            pub, sec = zmq.curve_keypair()
            c.sock = dealer(arena.endpoint, ctx=Client.ctx, curve=(public.encode(), pub, sec))
            assert arena_hello(c, name, keys[name])["type"] == "welcome"
            c.request({"type": "seek", "variant": "oklahoma"}, "sought")
            clients[name] = c
        ready = {n: c.wait_for(lambda m: m["type"] == "game_ready") for n, c in clients.items()}
        assert ready["ann"]["server_key"] == public
        play_game(ready)
        assert clients["ann"].wait_for(lambda m: m["type"] == "game_over", timeout_ms=60000)["rating"] is not None
        for c in clients.values():
            c.close()
    finally:
        assert arena.stop() == 0, arena.stderr()
