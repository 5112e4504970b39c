"""Real arenas for the tests: ``okgin arena`` as a process, accounts, and raw clients.

An arena is started as its own process (``okgin arena --state DIR --shards N --bind
tcp://127.0.0.1:0``), with its shards as its children, and its endpoint read from its first
line. Accounts are added through the store beforehand (the test process and the arena share
the SQLite file; WAL lets both read). Clients are the referee tests' raw DEALER clients
(tests/referee/refharness.py), which validate every message against the schema.
"""

from __future__ import annotations

import ctypes
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import zmq
from bounded import dealer, readline

from arena.store import Store, state_db_url
from arena.web.serve import WEB_PREFIX
from okgin.launch import ARENA_PREFIX, endpoint_from_line, okgin_argv
from okgin.protocol import PROTOCOL_MINOR

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "referee"))
from refharness import RECV_TIMEOUT_MS, Client, simple_choice

__all__ = ["ArenaProcess", "Client", "arena_hello", "play_game", "simple_choice"]

FAST_RULES = 'target_score = 20\nmax_hands = 6\n'


def _die_with_test() -> None:
    """In the child: SIGKILL it when the test process dies, so that a test that fails (or is
    killed) never leaves an arena and its shards running (Linux; elsewhere a no-op)."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG


class ArenaProcess:
    """``okgin arena`` in a child process; ``stop()`` sends SIGINT (Ctrl+C), ``kill()`` SIGKILL."""

    def __init__(self, state: Path, shards: int | None = 1, toml: str = "", extra: tuple[str, ...] = (),
                 web: bool = False) -> None:
        """``web``: serve the web pages on a free loopback port (``self.web`` is their address);
        without it, ``--no-web`` (the default port would be shared by every test's arena)."""
        self.state = state
        state.mkdir(parents=True, exist_ok=True, mode=0o700)
        cfg = state.parent / f"{state.name}.toml"
        cfg.write_text(toml or f"show_up_ms = 20000\n[rules]\n{FAST_RULES}")
        flags = () if shards is None else ("--shards", str(shards))  # None: the config's
        web_flags = ("--web", "127.0.0.1:0") if web else ("--no-web",)
        argv = okgin_argv("arena", "--state", str(state), *flags, "--bind", "tcp://127.0.0.1:0", "--config", str(cfg),
                          *web_flags, *extra)
        self.log = open(state.parent / f"{state.name}.stderr", "w")
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self.log, text=True, stdin=subprocess.DEVNULL,
                                     preexec_fn=_die_with_test)
        assert self.proc.stdout is not None
        first = readline(self.proc.stdout, 300.0, "okgin arena")  # a hang guard: a loaded machine starts it slowly
        ep = endpoint_from_line(first, ARENA_PREFIX)
        if ep is None:
            self.proc.kill()
            self.proc.wait(10)
            raise RuntimeError(f"okgin arena did not start: {first!r}\n{self.stderr()}")
        self.endpoint = ep
        self.web = ""
        if web:
            line = readline(self.proc.stdout, 60.0, "okgin arena's web line")
            if not line.startswith(WEB_PREFIX):
                self.kill()
                raise RuntimeError(f"okgin arena printed no web address: {line!r}\n{self.stderr()}")
            self.web = line[len(WEB_PREFIX):].strip()

    def stderr(self) -> str:
        self.log.flush()
        return (self.state.parent / f"{self.state.name}.stderr").read_text()

    def stop(self, timeout: float = 60.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait(10)
        self.log.close()
        return rc

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(10)
        self.log.close()

    def children(self) -> list[int]:
        try:
            with open(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children") as f:
                return [int(x) for x in f.read().split()]
        except OSError:
            return []


def add_accounts(state: Path, *names: str, kind: str = "bot", admin: tuple[str, ...] = ()) -> dict[str, str]:
    """Make the accounts (and the state directory); their keys by name."""
    state.mkdir(parents=True, exist_ok=True, mode=0o700)
    store = Store.open(state_db_url(state))
    try:
        return {n: store.add_account(n, kind, admin=n in admin) for n in names}
    finally:
        store.close()


def arena_hello(c: Client, account: str | None, key: str | None, role: str = "player", **kw: Any) -> dict[str, Any]:
    """Say hello at an arena; the reply (welcome or error)."""
    msg: dict[str, Any] = {"type": "hello", "protocol": 1, "minor": PROTOCOL_MINOR, "role": role, "name": account or "guest"}
    if account is not None:
        msg["account"] = account
    if key is not None:
        msg["key"] = key
    return c.request({**msg, **kw})


def play_game(ready: dict[str, dict[str, Any]], choose: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
              stop_after: dict[str, int] | None = None) -> dict[str, dict[str, Any]]:
    """Each account's ``game_ready`` -> a new connection to the shard, hello with the token,
    and play (simple_choice) until every seat has its ``game_end``; returns them by account.
    ``stop_after``: account -> prompts it answers before it goes silent (never comes back)."""
    seats: dict[str, Client] = {}
    for account, gr in ready.items():
        c = shard_client(gr)
        w = c.request({"type": "hello", "protocol": 1, "minor": PROTOCOL_MINOR, "role": "player", "name": account,
                       "token": gr["token"]}, "welcome")
        assert w["name"] == account
        seats[account] = c
    poller = zmq.Poller()
    by_sock = {}
    for a, c in seats.items():
        poller.register(c.sock, zmq.POLLIN)
        by_sock[c.sock] = a
    ends: dict[str, dict[str, Any]] = {}
    answered = {a: 0 for a in seats}
    idle = 0
    try:
        while len(ends) < len(seats):
            ready_socks = dict(poller.poll(100))
            if not ready_socks:
                idle += 100
                if idle > 4 * RECV_TIMEOUT_MS:
                    raise TimeoutError(f"no message; ends so far {list(ends)}")
                for a, c in seats.items():
                    if stop_after is None or answered[a] < stop_after.get(a, 10**9):
                        c.send({"type": "heartbeat"})
                continue
            idle = 0
            for sock in ready_socks:
                a = by_sock[sock]
                c = seats[a]
                m = c.recv()
                if m["type"] == "prompt":
                    if stop_after is not None and answered[a] >= stop_after.get(a, 10**9):
                        continue
                    answered[a] += 1
                    act = choose(m) if choose else simple_choice(m["legal"])
                    c.send({"type": "act", "table": m["table"], "seq": m["seq"], "action": act})
                elif m["type"] == "game_end":
                    ends[a] = m
                    if stop_after is not None and a in stop_after:
                        ends[a] = m
    finally:
        for c in seats.values():
            c.close()
    return ends




def shard_client(gr: dict[str, Any]) -> Client:
    """A client of the shard a ``game_ready`` names: over CURVE when it gives a ``server_key``."""
    c = Client(gr["endpoint"], validate="sample")
    if gr.get("server_key"):
        c.sock.close(0)
        public, secret = zmq.curve_keypair()
        c.sock = dealer(gr["endpoint"], ctx=Client.ctx, curve=(gr["server_key"].encode(), public, secret))
    return c


def take_seats(ready: dict[str, dict[str, Any]]) -> dict[str, Client]:
    """Each account's ``game_ready`` -> its connection to the shard, seated."""
    seats = {}
    for account, gr in ready.items():
        c = shard_client(gr)
        c.request({"type": "hello", "protocol": 1, "minor": PROTOCOL_MINOR, "role": "player", "name": account,
                   "token": gr["token"]}, "welcome")
        seats[account] = c
    return seats


def resign_game(ready: dict[str, dict[str, Any]], loser: str) -> dict[str, dict[str, Any]]:
    """Everyone sits, ``loser`` resigns once the game has started; each seat's game_end."""
    seats = take_seats(ready)
    try:
        table = ready[loser]["table"]
        seats[loser].wait_for(lambda m: m["type"] == "game_start")
        seats[loser].request({"type": "resign", "table": table}, "ok")
        return {a: c.wait_for(lambda m: m["type"] == "game_end") for a, c in seats.items()}
    finally:
        for c in seats.values():
            c.close()


def finish(p: subprocess.Popen[str], timeout: float = 600.0) -> tuple[int, str, str]:
    """Wait for a bot process (``timeout``: a hang guard, not a speed check); its status and output."""
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate(timeout=30)
    return p.returncode, out, err
