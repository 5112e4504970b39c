"""A referee outage never costs a player the game (issue 28 item 3; protocol.md §7, §8).

Real processes: ``okgin referee`` on loopback, raw clients speaking msgpack by hand.

- The referee is **stopped** (SIGSTOP) for longer than the move's whole time, then
  continued: the seat to act answers at once and its move counts. Before, the move timer
  fired as soon as the referee ran again and the seat lost on time for a stop it could
  not see (a player "came back with 4 s left and forfeited").
- At a table of people (``join`` with the away clock ``pause``, protocol 1.6), a player
  whose connection drops keeps the time it had: the move's clock stops from when it went
  silent until it resumes, and only the disconnect grace can end its game.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from .hkit import Raw, RefProc, simple_choice

pytestmark = pytest.mark.timeout(300)


def prompt_of(c: Raw, timeout_ms: int = 20000) -> dict[str, Any]:
    return c.wait_for(lambda m: m.get("type") == "prompt", timeout_ms)


def two_at(ref: RefProc, table: str, **join: Any) -> list[Raw]:
    """Two raw players at a new named table (the first join creates it with ``join``'s fields)."""
    out = []
    for i in range(2):
        c = Raw(ref.endpoint)
        c.hello(f"{table}-{i}")
        c.request({"type": "join", "table": table, "seat": i, **(join if i == 0 else {})}, "seated")
        out.append(c)
    return out


def to_act(clients: list[Raw]) -> tuple[Raw, dict[str, Any]]:
    """The client the first prompt went to, and that prompt."""
    while True:
        for c in clients:
            if c.sock.poll(50):
                m = c.recv()
                if m.get("type") == "prompt":
                    return c, m


def wait_beating(c: Raw, pred: Any, limit_s: float = 20.0, must: bool = True) -> dict[str, Any] | None:
    """Read ``c`` until ``pred(message)``, sending heartbeats meanwhile as a live client
    does (protocol.md §10). ``must`` False: None if nothing matched in ``limit_s``."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if c.sock.poll(100):
            m = c.recv()
            if pred(m):
                return m
        c.send({"type": "heartbeat"})
    assert not must, f"never came; last received: {[m.get('type') for m in c.received[-8:]]}"
    return None


def answer(c: Raw, prompt: dict[str, Any]) -> dict[str, Any]:
    """Act on ``prompt``; the referee's first reply about it: the next prompt or event
    (the move counted), an ``error`` or the ``game_end`` (it did not)."""
    c.send({"type": "act", "id": 99, "table": prompt["table"], "seq": prompt["seq"], "action": simple_choice(prompt["legal"])})
    return c.wait_for(lambda m: m.get("id") == 99 or m.get("type") in ("event", "game_end"))


def test_a_stopped_referee_costs_the_seat_to_act_nothing(tmp_path: Path) -> None:
    ref = RefProc(tmp_path, "--move-ms", "3000", "--grace-ms", "500")
    clients: list[Raw] = []
    try:
        clients = two_at(ref, "stall")
        c, p = to_act(clients)
        assert p["clock"]["remaining_ms"] <= 3000
        os.kill(ref.pid, signal.SIGSTOP)
        try:
            # The outage itself: the referee does not run for twice the move's time.
            time.sleep(6.0)
        finally:
            os.kill(ref.pid, signal.SIGCONT)
        reply = answer(c, p)
        assert reply["type"] == "event", f"the move after the outage did not count: {reply}"
        assert "did not run" in ref.stderr()  # the referee says what it credited
    finally:
        for x in clients:
            x.close()
        ref.stop()


def test_at_a_table_of_people_a_lost_connection_stops_the_clock_until_the_seat_is_back(tmp_path: Path) -> None:
    ref = RefProc(tmp_path, "--heartbeat-ms", "200", "--liveness", "5")  # a silent peer is gone after 1 s
    clients: list[Raw] = []
    try:
        clients = two_at(ref, "people", clock={"move_ms": 3000, "grace_ms": 500},
                         policies={"away_clock": "pause", "disconnect_grace_ms": 60000})
        seated_policies = clients[0].received[-1]["policies"]
        assert seated_policies["away_clock"] == "pause"
        c, p = to_act(clients)
        other = clients[1] if c is clients[0] else clients[0]
        c.reopen()  # its connection is gone (a new socket that says nothing yet)
        # The other seat hears it went (seat_status, 1.4), answering heartbeats meanwhile.
        wait_beating(other, lambda m: m.get("type") == "seat_status" and m.get("connected") is False)
        # Twice the move's time goes by away: no timeout (only the 60 s grace could end it).
        assert wait_beating(other, lambda m: m.get("type") == "game_end", 6.0, must=False) is None
        w = c.hello(c.name, token=c.token)  # it comes back (other keeps beating: see wait_beating)
        assert w["resumed"] is True
        back = prompt_of(c)
        assert back["seq"] == p["seq"] and back["clock"]["remaining_ms"] > 0
        assert answer(c, back)["type"] == "event"
    finally:
        for x in clients:
            x.close()
        ref.stop()


def test_a_join_may_not_ask_for_no_clock_where_the_operator_gives_every_table_one(tmp_path: Path) -> None:
    ref = RefProc(tmp_path)
    try:
        c = Raw(ref.endpoint)
        c.hello("ann")
        m = c.request({"type": "join", "table": "forever", "clock": {"move_ms": 0, "bank_ms": 0}}, "error")
        assert m["name"] == "bad_message" and "clock" in m["message"]
        m = c.request({"type": "join", "table": "odd", "policies": {"away_clock": "sometimes"}}, "error")
        assert m["name"] == "bad_message" and "away_clock" in m["message"]
        c.close()
    finally:
        ref.stop()


# ---------------------------------------------------------------- advice that works for a person or an agent (1.6)
def test_the_captain_waits_for_its_person_sitter_and_late_advice_is_told_so(tmp_path: Path) -> None:
    """Gin in the Box at a table with a 20 s advice window: the sitter (``advice_wait``,
    a person or an agent) gets its advise_prompt with the window, the captain nothing until
    the advice comes; then the advice and the prompt. Advice for a move already made is
    ``advice_late``. On the old main the captain was prompted at once (29 of 74 pieces of
    advice got in before bot captains moved) and late advice was a bare ``stale_seq``."""
    from .hkit import admin, reserved_table

    ref = RefProc(tmp_path, "--untimed")
    clients: list[Raw] = []
    try:
        adm = admin(ref.endpoint)
        tokens = reserved_table(adm, "advice", 11, "box", policies={"advice_window_ms": 20000})
        for i, tok in enumerate(tokens):
            c = Raw(ref.endpoint)
            w = c.hello(f"p{i}", token=tok, minor=6, advice_wait=True)
            assert w.get("advice_wait") is True
            clients.append(c)
        # The sitter's advise_prompt carries the window; the captain has no prompt yet.
        ap: dict[str, Any] | None = None
        sitter = clients[0]
        deadline = time.monotonic() + 20
        while ap is None and time.monotonic() < deadline:
            for c in clients:
                if c.sock.poll(50):
                    m = c.recv()
                    if m.get("type") == "advise_prompt":
                        ap, sitter = m, c
        assert ap is not None and 0 < ap["window_ms"] <= 20000
        captain = clients[ap["captain"]]
        assert not [m for m in captain.received if m.get("type") == "prompt" and m["seq"] == ap["seq"]]
        assert not captain.sock.poll(300)  # it waits (bounded look: the window is 20 s)
        sitter.send({"type": "advise", "id": 7, "table": "advice", "seq": ap["seq"], "text": "keep the hearts"})
        assert sitter.wait_for(lambda m: m.get("id") == 7)["type"] == "ok"
        adv = captain.wait_for(lambda m: m.get("type") in ("advice", "prompt"))
        assert adv["type"] == "advice" and adv["text"] == "keep the hearts"
        p = prompt_of(captain)
        assert p["seq"] == ap["seq"]
        captain.send({"type": "act", "table": "advice", "seq": p["seq"], "action": simple_choice(p["legal"])})
        captain.wait_for(lambda m: m.get("type") == "event")
        sitter.send({"type": "advise", "id": 8, "table": "advice", "seq": ap["seq"], "text": "too late"})
        late = sitter.wait_for(lambda m: m.get("id") == 8)
        assert late["type"] == "error" and late["name"] == "advice_late" and "already played" in late["message"]
        adm.close()
    finally:
        for x in clients:
            x.close()
        ref.stop()
