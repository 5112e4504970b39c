"""Issue 17 item 2, end to end: a real TUI process is killed and the same command takes
its seat back.

A real referee process on loopback; ``python -m okgin tui --connect ... --name ann
--table t1`` in a tmux terminal of our own; the opponent, bob, a plain protocol client
in a thread of the test (it answers heartbeats and records what the referee tells it).
Once the game is on, the TUI process is killed with SIGKILL by its PID (no bye, no
clean-up: what a closed terminal or a crash does), the same command is run again, and:

- the TUI says the seat is back ("Welcome back") and shows the table with the same hand;
- bob was told in between (``seat_status``, protocol 1.4): ann disconnected, her seat
  forfeits in N ms (the countdown the TUI draws), then that she is back;
- the referee forfeited nothing.

The session token goes to ``$XDG_STATE_HOME/okgin/sessions.json`` (clients/tui/
saved_sessions.py) under the test's own directory, never the developer's ``~``.
"""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import zmq
from bounded import dealer, readline

from okgin.protocol import decode_from_referee, encode

from .test_play import TMUX, Tmux

ROOT = Path(__file__).resolve().parents[2]
GRACE_MS = 60000  # the seat is held far longer than the rerun takes, even on a loaded machine
CARD = re.compile(r"(10|[2-9AJQK])([♠♥♦♣])")


class Bob(threading.Thread):
    """The other seat: hello, join t1, heartbeats; every message kept in ``seen``.

    It never acts (the table is untimed), so ann's hand stays as it was dealt and "the
    same hand" after the rerun means the same cards."""

    def __init__(self, endpoint: str) -> None:
        super().__init__(daemon=True, name="bob")
        self.endpoint = endpoint
        self.seen: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        sock = dealer(self.endpoint, ctx=zmq.Context.instance())
        try:
            sock.send(encode({"type": "hello", "id": 1, "protocol": 1, "role": "player", "name": "bob"}))
            sock.send(encode({"type": "join", "id": 2, "table": "t1"}))
            last = time.monotonic()
            while not self.stop.is_set():
                if time.monotonic() - last > 0.2:
                    sock.send(encode({"type": "heartbeat"}))
                    last = time.monotonic()
                if sock.poll(100):
                    msg = decode_from_referee(sock.recv())
                    with self.lock:
                        self.seen.append(msg)
        except BaseException as e:  # reported by the test
            self.error = e
        finally:
            sock.close(0)

    def messages(self, kind: str) -> list[dict[str, Any]]:
        with self.lock:
            return [m for m in self.seen if m.get("type") == kind]


def wait_until(cond, limit: float, what: str) -> None:
    """Poll ``cond`` (``limit`` bounds a hang; it is not a timing assertion)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.1)
    raise AssertionError(f"never saw {what}")


def children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def tui_pid(tm: Tmux) -> int:
    """The PID of the ``okgin tui`` process in the pane (the pane's shell may exec it, or
    run it as a child)."""
    todo = [int(p) for p in tm.run("list-panes", "-t", "t", "-F", "#{pane_pid}").split()]
    while todo:
        pid = todo.pop()
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"okgin" in argv and b"tui" in argv:
            return pid
        todo += children(pid)
    raise AssertionError(f"no okgin tui process in the pane; screen:\n{tm.screen()}")


def hand_cards(screen: str) -> list[str]:
    """The cards in the hand box ("Your hand ..." to its bottom border), as drawn."""
    lines = screen.splitlines()
    top = next(i for i, line in enumerate(lines) if "Your hand" in line)
    bottom = next(i for i in range(top + 1, len(lines)) if lines[i].lstrip().startswith("╰"))
    return sorted(a + b for line in lines[top + 1:bottom] for a, b in CARD.findall(line))


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed")
@pytest.mark.parametrize("rerun", ["same", "resume"], ids=["the-same-command", "okgin-tui-resume"])
def test_a_killed_tui_gets_its_seat_back_by_running_the_same_command(tmp_path: Path, rerun: str) -> None:
    """``rerun``: the same command again, or ``okgin tui --resume`` (one seat saved: it
    is resumed at once)."""
    state = tmp_path / "state"
    ref = subprocess.Popen(
        [sys.executable, "-m", "okgin", "referee", "--bind", "tcp://127.0.0.1:0", "--no-journal", "--open-admin",
         "--untimed", "--heartbeat-ms", "500", "--liveness", "4", "--disconnect-grace-ms", str(GRACE_MS)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT)
    tm = Tmux(tmp_path, 80, 24)
    bob: Bob | None = None
    try:
        assert ref.stdout is not None
        endpoint = readline(ref.stdout, 60, "the referee").split()[-1]
        host_port = endpoint.removeprefix("tcp://")  # HOST:PORT is accepted as an endpoint
        command = f"{sys.executable} -m okgin tui --connect {host_port} --name ann --table t1"
        env = {"LANG": "C.UTF-8", "TERM": "xterm-256color", "PATH": os.environ.get("PATH", ""),
               "XDG_STATE_HOME": str(state), "PYTHONPATH": str(ROOT)}

        tm.start(command, env)
        tm.wait_for(lambda s: "waiting for 1 more player" in s, what="ann seated at t1")
        bob = Bob(endpoint)
        bob.start()
        screen = tm.wait_for(lambda s: "Your hand" in s and len(hand_cards(s)) >= 10, what="the game on ann's screen")
        before = hand_cards(screen)
        wait_until(lambda: bob.messages("game_start"), 30, "bob's game_start")
        ann_seat = 1 - bob.messages("game_start")[0]["seat"]

        # The token was saved, private, before anything can go wrong.
        sessions = json.loads((state / "okgin" / "sessions.json").read_text())["sessions"]
        assert [(s["name"], s["table"]) for s in sessions.values()] == [("ann", "t1")]
        token = next(iter(sessions.values()))["token"]
        assert stat.S_IMODE(os.stat(state / "okgin" / "sessions.json").st_mode) == 0o600

        # The terminal dies with the TUI in it.
        pid = tui_pid(tm)
        os.kill(pid, signal.SIGKILL)
        wait_until(lambda: not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text().lower(),
                   30, "the TUI process gone")
        wait_until(lambda: not tm.alive(), 30, "the tmux session closed with its process")

        # bob is told: ann's connection went, and how long her seat is held.
        wait_until(lambda: any(not m["connected"] for m in bob.messages("seat_status")), 60, "seat_status: ann disconnected")
        gone = next(m for m in bob.messages("seat_status") if not m["connected"])
        assert gone["seat"] == ann_seat and gone["name"] == "ann" and gone["table"] == "t1"
        assert gone["forfeit_in_ms"] == GRACE_MS

        # The same command again (or --resume): the saved token takes the seat back.
        tm.start(command if rerun == "same" else f"{sys.executable} -m okgin tui --resume", env)
        tm.wait_for(lambda s: "Welcome back" in s, what="the referee's resume told (a toast, for 8 s)")
        screen = tm.wait_for(lambda s: "Your hand" in s and len(hand_cards(s)) >= 10, what="the table again")
        assert hand_cards(screen) == before  # the same hand
        assert "every seat is taken" not in screen
        wait_until(lambda: any(m["connected"] for m in bob.messages("seat_status")), 30, "seat_status: ann back")
        back = [m for m in bob.messages("seat_status") if m["connected"]][-1]
        assert back["seat"] == ann_seat and back["forfeit_in_ms"] is None
        assert not bob.messages("game_end")  # nothing was forfeited
        sessions = json.loads((state / "okgin" / "sessions.json").read_text())["sessions"]
        assert [s["token"] for s in sessions.values()] == [token]  # the same session, not a new seat
        assert bob.error is None, bob.error
    finally:
        tm.kill()
        if bob is not None:
            bob.stop.set()
            bob.join(10)
        ref.terminate()
        try:
            ref.wait(30)
        except subprocess.TimeoutExpired:
            ref.kill()
            ref.wait(10)
