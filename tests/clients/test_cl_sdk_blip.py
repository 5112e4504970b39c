"""A brief network drop under a seated client: the TCP connection breaks and ZeroMQ
reconnects by itself, so the referee sees a stranger and answers ``hello_first`` (it
forgot the connection, not the session). The answers are traffic, so silence detection
would never fire; the SDK must resume with its token on the ``hello_first`` itself
(protocol.md §10), get the pending prompt again, and play on. Checked for the blocking
:class:`Client` (what ``okgin bot`` runs on) and :class:`AsyncClient` (the TUI's).

Real processes and sockets: a referee subprocess, an ``okgin bot`` opponent, and a TCP
forwarder between our client and the referee whose connections the test cuts.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Callable

import pytest

from clients.bots.simple import SimpleBot
from clients.sdk import AsyncClient, Client, Disconnected, GameEnd, Prompt, Reconnected
from clients.sdk.runner import BotDriver, drive
from okgin import Game, RuleSet

pytestmark = pytest.mark.timeout(120)

# Heartbeats of 2 s, 3 beats: silence is noticed after 6 s, hello_first after one beat.
HEARTBEAT = ("--heartbeat-ms", "2000", "--liveness", "3")


class CuttableProxy:
    """A TCP forwarder (threads) whose live connections can be cut at once."""

    def __init__(self, target: str) -> None:
        host, port = target.removeprefix("tcp://").rsplit(":", 1)
        self.target = (host, int(port))
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.endpoint = f"tcp://127.0.0.1:{self.listener.getsockname()[1]}"
        self.conns: list[socket.socket] = []
        self.lock = threading.Lock()
        self.cuts = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                down, _ = self.listener.accept()
            except OSError:
                return
            try:
                up = socket.create_connection(self.target, timeout=10)
            except OSError:
                # the referee is gone (the test is ending, and its client still retries):
                # refuse this connection as the referee would, and keep accepting until closed
                down.close()
                continue
            up.settimeout(None)  # the forwarding threads block on recv by design (daemons)
            with self.lock:
                self.conns += [down, up]
            for a, b in ((down, up), (up, down)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def cut(self) -> None:
        with self.lock:
            conns, self.conns = self.conns, []
            self.cuts += 1
        for s in conns:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def close(self) -> None:
        self.listener.close()
        self.cut()


def _reserved_table(endpoint: str, name: str, admin_key: str) -> list[str]:
    """Seat tokens of a table whose deal gives seat 0 (ours) the first upcard offer: each
    test waits for that seat's first prompt, and on a random deal the simple opponent, if
    first to act, may take the upcard and knock at once, which to 30 can end the game
    before our seat is ever prompted. (A fixed deal, not a higher target: the async test
    plays the rest of the game within a bound.)"""
    rules = RuleSet(target_score=30)
    seed = next(s for s in range(100) if Game(rules, seed=s).current_player == 0)
    admin = Client(endpoint, "organiser", "admin", admin_key=admin_key, reconnect=False)
    try:
        admin.connect()
        return list(admin.create_table(table=name, reserved=True, seed=seed, rules={"target_score": 30}).seat_tokens or [])
    finally:
        admin.close()


def test_blocking_client_resumes_on_hello_first_after_a_blip(start_referee: Callable, spawn_bot: Callable) -> None:
    ref = start_referee(*HEARTBEAT)
    proxy = CuttableProxy(ref.endpoint)
    toks = _reserved_table(ref.endpoint, "blip", ref.admin_key)
    opponent = spawn_bot("simple", "--connect", ref.endpoint, "--token", toks[1])
    client = Client(proxy.endpoint, "blipper", token=toks[0], events=False)
    driver = BotDriver(SimpleBot())
    try:
        client.connect()
        first = client.recv(timeout=60)
        while not isinstance(first, Prompt):
            assert first is not None, "no prompt came"
            driver.handle(first)
            first = client.recv(timeout=60)
        proxy.cut()  # the prompt stays unanswered while the network blips
        seen = []
        while not any(isinstance(m, Reconnected) for m in seen):
            m = client.recv(timeout=60)
            assert m is not None, f"no resume after the blip (saw {seen})"
            seen.append(m)
        lost = [m for m in seen if isinstance(m, Disconnected)]
        assert len(lost) == 1 and "hello_first" in lost[0].reason, lost
        assert client.reconnects == 1
        again = client.recv(timeout=60)
        while not isinstance(again, Prompt):
            assert again is not None
            driver.handle(again)
            again = client.recv(timeout=60)
        assert (again.table, again.seq) == (first.table, first.seq), "the pending prompt comes again"
        for out in driver.handle(again):
            client.send(out)
        ends = drive(client, driver, 1)
        assert ends and ends[0].termination == "normal"
        assert opponent.wait(60) == 0
    finally:
        client.close()
        proxy.close()


def test_async_client_resumes_on_hello_first_after_a_blip(start_referee: Callable, spawn_bot: Callable) -> None:
    ref = start_referee(*HEARTBEAT)
    proxy = CuttableProxy(ref.endpoint)
    toks = _reserved_table(ref.endpoint, "ablip", ref.admin_key)
    opponent = spawn_bot("simple", "--connect", ref.endpoint, "--token", toks[1])
    bot = SimpleBot()

    async def play() -> tuple[list[object], GameEnd]:
        client = AsyncClient(proxy.endpoint, "ablipper", token=toks[0])
        try:
            await client.connect()
            seen: list[object] = []
            cut_at: int | None = None
            while True:
                m = await client.next(timeout=60)
                assert m is not None, f"nothing more from the referee (saw {seen[-5:]})"
                seen.append(m)
                if isinstance(m, Prompt):
                    if cut_at is None:
                        cut_at = m.seq  # leave it unanswered and blip the network
                        proxy.cut()
                        continue
                    await client.act(m.table, m.seq, bot.choose(m.view, m.legal))
                if isinstance(m, GameEnd):
                    assert client.reconnects == 1
                    return seen, m
        finally:
            await client.close()

    try:
        seen, end = asyncio.run(asyncio.wait_for(play(), 100))
    finally:
        proxy.close()
    assert end.termination == "normal"
    lost = [m for m in seen if isinstance(m, Disconnected)]
    assert len(lost) == 1 and "hello_first" in lost[0].reason, lost
    i = next(k for k, m in enumerate(seen) if isinstance(m, Reconnected))
    first = next(m for m in seen if isinstance(m, Prompt))
    again = next(m for m in seen[i:] if isinstance(m, Prompt))
    assert again.seq == first.seq, "the pending prompt comes again after the resume"
    assert opponent.wait(60) == 0
