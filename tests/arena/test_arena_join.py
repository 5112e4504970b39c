"""Shards that join a running arena by themselves (``okgin arena shard --join``, protocol 1.7
``shard_join``), on other loopback addresses (127.0.0.2, .3, .4 stand for other machines):
the join key crosses inside CURVE; the arena places games on the joined shards; a shard killed
by ``kill -9`` mid-game has its game voided without a rating change and the next game goes to
the other; a shard with a wrong join key is refused and never gets a table."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import zmq
from arenakit import FAST_RULES, ArenaProcess, Client, add_accounts, arena_hello, play_game, resign_game, take_seats
from bounded import dealer, readline

from arena.joinshard import JOINED_PREFIX
from arena.keys import write_key_file
from arena.store import Store, state_db_url
from okgin.launch import endpoint_from_line, okgin_argv, referee_argv
from referee.security import generate_keys


def public(keys: Path) -> str:
    return (keys / "server.key").read_text().split('public-key = "')[1].split('"')[0]


def front_client(arena: ArenaProcess, front_public: str, name: str, key: str) -> Client:
    c = Client(arena.endpoint)
    c.sock.close(0)
    pub, sec = zmq.curve_keypair()
    c.sock = dealer(arena.endpoint, ctx=Client.ctx, curve=(front_public.encode(), pub, sec))
    assert arena_hello(c, name, key)["type"] == "welcome"
    return c


def shard_argv(arena: ArenaProcess, tmp: Path, host: str, key_file: Path, front_keys: Path) -> list[str]:
    return okgin_argv("arena", "shard", "--join", arena.endpoint, "--join-key-file", str(key_file), "--front-key",
                      str(front_keys / "server.key"), "--bind", f"tcp://{host}:0", "--journal-dir", str(tmp / host),
                      "--capacity", "4", "--heartbeat-ms", "1000")


def start_shard(argv: list[str], log: Path) -> tuple[subprocess.Popen[str], str]:
    """A joining shard: its referee's endpoint once the arena has taken it."""
    with open(log, "w") as err:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    endpoint = endpoint_from_line(readline(proc.stdout, 120.0, "a joining shard"))
    assert endpoint is not None, log.read_text()
    joined = readline(proc.stdout, 120.0, "the shard's join")
    assert joined.startswith(JOINED_PREFIX) and joined.rstrip().endswith(endpoint), (joined, log.read_text())
    return proc, endpoint


def stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def kill9(proc: subprocess.Popen[str]) -> None:
    """The shard's machine is gone: the command and its referee, by ``kill -9``."""
    try:
        with open(f"/proc/{proc.pid}/task/{proc.pid}/children") as f:
            children = [int(x) for x in f.read().split()]
    except OSError:
        children = []
    proc.send_signal(signal.SIGKILL)
    for pid in children:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    proc.wait(30)


def seek_pair(clients: dict[str, Client], a: str, b: str) -> dict[str, dict[str, Any]]:
    for n in (a, b):
        clients[n].request({"type": "seek", "variant": "oklahoma"}, "sought")
    return {n: clients[n].wait_for(lambda m: m["type"] == "game_ready", timeout_ms=60000) for n in (a, b)}


def play_placed_on(arena: ArenaProcess, keys: dict[str, str], endpoint: str) -> dict[str, Any]:
    """ann and bob sign in, are paired, find their game placed at ``endpoint``, and bob
    resigns: ann's ``game_over`` (the clients closed)."""
    clients = {n: Client(arena.endpoint) for n in ("ann", "bob")}
    try:
        for n, cl in clients.items():
            assert arena_hello(cl, n, keys[n])["type"] == "welcome"
        ready = seek_pair(clients, "ann", "bob")
        assert ready["ann"]["endpoint"] == endpoint
        resign_game(ready, "bob")
        return clients["ann"].wait_for(lambda m: m["type"] == "game_over", timeout_ms=60000)
    finally:
        for cl in clients.values():
            cl.close()


def test_shards_join_a_running_arena_and_a_lost_one_voids_its_game(tmp_path: Path) -> None:
    front_keys = tmp_path / "front-keys"
    generate_keys(front_keys)
    key_file = tmp_path / "join.secret"
    write_key_file(key_file, "join-" + os.urandom(16).hex())
    wrong = tmp_path / "wrong.secret"
    write_key_file(wrong, "not-the-join-key-at-all")
    state = tmp_path / "arena"
    keys = add_accounts(state, "ann", "bob", "cat", "dan")
    arena = ArenaProcess(state, shards=None, toml=(
        f'shards = 0\nshow_up_ms = 20000\njoin_key_file = "{key_file}"\n'
        f'[curve]\nkeys = "{front_keys}"\n[rules]\n{FAST_RULES}\n'))
    shards: list[subprocess.Popen[str]] = []
    clients: dict[str, Client] = {}
    try:
        assert arena.children() == []  # no local shard: every game is on a joined one
        a_proc, a_ep = start_shard(shard_argv(arena, tmp_path, "127.0.0.2", key_file, front_keys), tmp_path / "a.log")
        shards.append(a_proc)
        b_proc, b_ep = start_shard(shard_argv(arena, tmp_path, "127.0.0.3", key_file, front_keys), tmp_path / "b.log")
        shards.append(b_proc)
        assert a_ep.startswith("tcp://127.0.0.2:") and b_ep.startswith("tcp://127.0.0.3:")
        # a wrong join key: refused, the shard ends
        bad = subprocess.run(shard_argv(arena, tmp_path, "127.0.0.4", wrong, front_keys), capture_output=True, text=True,
                             timeout=120)
        assert bad.returncode == 1 and "auth_failed" in bad.stderr and JOINED_PREFIX not in bad.stdout, bad
        bad_ep = endpoint_from_line(bad.stdout.splitlines()[0])
        assert bad_ep is not None and bad_ep.startswith("tcp://127.0.0.4:")
        front_public = public(front_keys)
        for n in ("ann", "bob", "cat", "dan"):
            clients[n] = front_client(arena, front_public, n, keys[n])
        # a first game, rated, on a joined shard
        first = seek_pair(clients, "ann", "bob")
        ep1 = first["ann"]["endpoint"]
        assert ep1 in (a_ep, b_ep)
        keys_of = {a_ep: public(tmp_path / "127.0.0.2" / "keys"), b_ep: public(tmp_path / "127.0.0.3" / "keys")}
        assert first["ann"]["server_key"] == keys_of[ep1]
        play_game(first)
        for n in ("ann", "bob"):
            over = clients[n].wait_for(lambda m: m["type"] == "game_over", timeout_ms=60000)
            assert over["result"] in ("win", "loss", "draw") and over["rating"] is not None, over
        # a second game starts, then its shard is killed: void, no rating change
        second = seek_pair(clients, "cat", "dan")
        ep2 = second["cat"]["endpoint"]
        assert ep2 in (a_ep, b_ep)
        seats = take_seats(second)
        seats["cat"].wait_for(lambda m: m["type"] == "game_start")
        kill9(a_proc if ep2 == a_ep else b_proc)
        for n in ("cat", "dan"):
            over = clients[n].wait_for(lambda m: m["type"] == "game_over", timeout_ms=60000)
            assert over["result"] == "void" and over["termination"] == "shard_lost" and over["rating"] is None, over
        for c in seats.values():
            c.close()
        # the next game goes to the shard still there
        third = seek_pair(clients, "cat", "dan")
        assert third["cat"]["endpoint"] == ({a_ep, b_ep} - {ep2}).pop()
        resign_game(third, "dan")
        over3 = clients["cat"].wait_for(lambda m: m["type"] == "game_over", timeout_ms=60000)
        assert over3["result"] == "win" and over3["rating"] is not None
        games = (first["ann"]["game"], second["cat"]["game"], third["cat"]["game"])
        for c in clients.values():
            c.close()
        clients.clear()
    finally:
        for c in clients.values():
            c.close()
        for p in shards:
            stop(p)
        assert arena.stop() == 0, arena.stderr()
    log = (tmp_path / "arena.stderr").read_text()
    assert "wrong join key" in log and "not-the-join-key" not in log  # a wrong key is logged, without the key
    store = Store.open(state_db_url(state))
    try:
        rows = [store.game(g) for g in games]
        assert [r.status if r else None for r in rows] == ["finished", "void", "finished"]
        assert all(r is not None and r.shard.startswith("j") for r in rows)
        cat = store.rating("cat", "oklahoma")
        assert cat.games == 1  # the void game counted for nothing
    finally:
        store.close()


def test_shard_join_refusals(tmp_path: Path) -> None:
    """Wrong join keys get auth_failed, then rate_limited for everyone; a right key naming an
    endpoint where nobody answers gets shard_unreachable; nothing is joined."""
    key_file = tmp_path / "join.secret"
    write_key_file(key_file, "join-" + os.urandom(16).hex())
    state = tmp_path / "arena"
    add_accounts(state, "ann")
    arena = ArenaProcess(state, shards=None,
                         toml=f'shards = 0\njoin_key_file = "{key_file}"\n[rules]\n{FAST_RULES}\n')
    try:
        c = Client(arena.endpoint)
        assert arena_hello(c, None, None, role="spectator")["type"] == "welcome"
        join = {"type": "shard_join", "endpoint": "tcp://127.0.0.5:9", "server_key": None, "capacity": 2,
                "admin_key": "a" * 32}
        c.send({**join, "id": 1, "join_key": key_file.read_text().strip()})
        err = None
        for _ in range(60):  # the arena tries for 10 s; heartbeats keep this session alive meanwhile
            if c.sock.poll(1000):
                m = c.recv()
                if m.get("id") == 1:
                    err = m
                    break
            c.send({"type": "heartbeat"})
        assert err is not None and err["type"] == "error" and err["name"] == "shard_unreachable", err
        names = [c.request({**join, "join_key": f"wrong-{i}"}, "error")["name"] for i in range(6)]
        assert names == ["auth_failed"] * 5 + ["rate_limited"]
        c.close()
    finally:
        assert arena.stop() == 0, arena.stderr()


def test_a_joined_shard_joins_again_when_the_arena_restarts(tmp_path: Path) -> None:
    """The front goes away (stopped) and comes back on the same endpoint: the shard, which
    keeps trying with backoff, joins the new front by itself, which places a game there."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    key_file = tmp_path / "join.secret"
    write_key_file(key_file, "join-" + os.urandom(16).hex())
    state = tmp_path / "arena"
    keys = add_accounts(state, "ann", "bob")
    toml = f'shards = 0\nshow_up_ms = 20000\njoin_key_file = "{key_file}"\n[rules]\n{FAST_RULES}\n'
    bind = ("--bind", f"tcp://127.0.0.1:{port}")
    arena = ArenaProcess(state, shards=None, toml=toml, extra=bind)
    argv = okgin_argv("arena", "shard", "--join", arena.endpoint, "--join-key-file", str(key_file), "--bind",
                      "tcp://127.0.0.2:0", "--journal-dir", str(tmp_path / "shard"), "--heartbeat-ms", "1000")
    shard, endpoint = start_shard(argv, tmp_path / "shard.log")
    try:
        assert arena.stop() == 0, arena.stderr()
        arena = ArenaProcess(state, shards=None, toml=toml, extra=bind)
        assert shard.stdout is not None
        again = readline(shard.stdout, 120.0, "the shard's second join")
        assert again.startswith(JOINED_PREFIX) and again.rstrip().endswith(endpoint), again
        assert play_placed_on(arena, keys, endpoint)["result"] == "win"
    finally:
        stop(shard)
        assert arena.stop() == 0, arena.stderr()


def test_a_shard_joining_again_with_its_endpoint_replaces_its_entry(tmp_path: Path) -> None:
    """Two shard_joins naming one referee: the second replaces the first (logged as lost),
    and the next game is placed on the new entry; a wrong admin key is shard_unreachable."""
    import time

    keys_dir = tmp_path / "shard-keys"
    generate_keys(keys_dir)
    admin = "admin-" + os.urandom(8).hex()
    ref = subprocess.Popen(referee_argv(tmp_path / "journals", "--curve-keys", str(keys_dir), "--allow", "any",
                                        bind="tcp://127.0.0.2:0"),
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True,
                           env={**os.environ, "OKGIN_ADMIN_KEY": admin})
    key_file = tmp_path / "join.secret"
    write_key_file(key_file, "join-" + os.urandom(16).hex())
    state = tmp_path / "arena"
    keys = add_accounts(state, "ann", "bob")
    arena = ArenaProcess(state, shards=None,
                         toml=f'shards = 0\nshow_up_ms = 20000\njoin_key_file = "{key_file}"\n[rules]\n{FAST_RULES}\n')
    try:
        assert ref.stdout is not None
        endpoint = endpoint_from_line(readline(ref.stdout, 120.0, "the shard's referee"))
        assert endpoint is not None
        join = {"type": "shard_join", "endpoint": endpoint, "server_key": public(keys_dir), "capacity": 2,
                "admin_key": admin, "join_key": key_file.read_text().strip()}
        c = Client(arena.endpoint)
        assert arena_hello(c, None, None, role="spectator")["type"] == "welcome"
        bad = c.request({**join, "admin_key": "not-the-admin-key"}, "error")
        assert bad["name"] == "shard_unreachable", bad
        assert c.request(join, "ok")["request"] == "shard_join"
        assert c.request(join, "ok")["request"] == "shard_join"
        deadline = time.monotonic() + 60
        while "shard j2 lost (the shard joined again)" not in (tmp_path / "arena.stderr").read_text():
            assert time.monotonic() < deadline, (tmp_path / "arena.stderr").read_text()
            c.sock.poll(200)
        over = play_placed_on(arena, keys, endpoint)
        assert over["result"] == "win", over
        game = over["game"]
        c.close()
    finally:
        assert arena.stop() == 0, arena.stderr()
        stop(ref)
    store = Store.open(state_db_url(state))
    try:
        row = store.game(game)
        assert row is not None and row.status == "finished" and row.shard == "j3"
    finally:
        store.close()


def test_a_shard_the_arena_lost_while_it_kept_its_session_joins_again(tmp_path: Path) -> None:
    """The shard's referee stops answering (SIGSTOP) while the shard's own session at the
    front stays alive: the arena loses the shard, ends that session, and the shard, told so,
    joins again by itself once its referee answers again (SIGCONT)."""
    import time

    key_file = tmp_path / "join.secret"
    write_key_file(key_file, "join-" + os.urandom(16).hex())
    state = tmp_path / "arena"
    state.mkdir(mode=0o700)
    arena = ArenaProcess(state, shards=None,
                         toml=f'shards = 0\njoin_key_file = "{key_file}"\n[rules]\n{FAST_RULES}\n')
    log = tmp_path / "shard.log"
    argv = okgin_argv("arena", "shard", "--join", arena.endpoint, "--join-key-file", str(key_file), "--bind",
                      "tcp://127.0.0.2:0", "--journal-dir", str(tmp_path / "shard"), "--heartbeat-ms", "500")
    shard, endpoint = start_shard(argv, log)
    referee = 0
    try:
        with open(f"/proc/{shard.pid}/task/{shard.pid}/children") as f:
            referee = int(f.read().split()[0])
        os.kill(referee, signal.SIGSTOP)
        deadline = time.monotonic() + 90
        while "lost the arena" not in log.read_text():
            assert time.monotonic() < deadline and shard.poll() is None, log.read_text()
            time.sleep(0.2)  # a poll of the log (its loss is said on stderr), bounded by the deadline
        os.kill(referee, signal.SIGCONT)
        assert shard.stdout is not None
        again = readline(shard.stdout, 120.0, "the shard's second join")
        assert again.startswith(JOINED_PREFIX) and again.rstrip().endswith(endpoint), (again, log.read_text())
    finally:
        if referee:
            with contextlib.suppress(ProcessLookupError):
                os.kill(referee, signal.SIGCONT)
        stop(shard)
        assert arena.stop() == 0, arena.stderr()
    assert "lost (silent" in (tmp_path / "arena.stderr").read_text()


def test_a_join_key_file_others_can_read_is_refused(tmp_path: Path) -> None:
    """The join key lets a shard in, and a shard sees the hands of its games: like an
    account's key file, the join key's must be its owner's alone, at the arena and at the
    shard (arena.keys.read_key_file)."""
    key_file = tmp_path / "join.secret"
    key_file.write_text("join-" + os.urandom(16).hex() + "\n")
    key_file.chmod(0o644)
    (tmp_path / "a.toml").write_text(f'shards = 0\njoin_key_file = "{key_file}"\n')
    arena = subprocess.run(okgin_argv("arena", "--state", str(tmp_path / "s"), "--config", str(tmp_path / "a.toml"),
                                      "--bind", "tcp://127.0.0.1:0", "--no-web"),
                           capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert arena.returncode == 2 and "chmod 600" in arena.stderr, arena
    shard = subprocess.run(okgin_argv("arena", "shard", "--join", "tcp://127.0.0.1:1", "--join-key-file", str(key_file),
                                      "--bind", "tcp://127.0.0.1:0", "--journal-dir", str(tmp_path / "j")),
                           capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert shard.returncode == 2 and "chmod 600" in shard.stderr, shard
