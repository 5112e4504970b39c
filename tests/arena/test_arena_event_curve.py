"""An event of connected accounts at an arena with CURVE keys (issue 27 item 3).

Why: an arena off loopback must run CURVE, and its events' connected accounts reach the
event's referee over the same network; that referee used to run without CURVE, so such an
event failed at its start ("cannot run events with connected accounts yet"). Now the event's
referee runs with the arena's key pair, `game_ready` carries its public key, and the runner
speaks CURVE to it. Two `okgin bot --arena` processes, signed in over CURVE (the front's key
from OKGIN_CURVE_SERVER_KEY), play a round robin that the arena runs; it verifies.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import zmq.auth
from arenakit import FAST_RULES, ArenaProcess, add_accounts

from arena.events import main as event_main
from arena.keys import write_key_file
from arena.store import Store, state_db_url
from okgin.launch import okgin_argv

WAIT_S = 300.0  # a hang guard for a loaded machine, never asserted on


def test_connected_accounts_play_an_event_at_a_curve_arena(tmp_path: Path) -> None:
    keys_dir = tmp_path / "keys"
    keys_dir.mkdir(mode=0o700)
    zmq.auth.create_certificates(str(keys_dir), "server")
    state = tmp_path / "arena"
    keys = add_accounts(state, "ann", "bob")
    for name, key in keys.items():
        write_key_file(tmp_path / f"{name}.key", key)
    arena = ArenaProcess(state, toml=f'show_up_ms = 60000\n[curve]\nkeys = "{keys_dir}"\n[rules]\n{FAST_RULES}')
    env = {**os.environ, "OKGIN_CURVE_SERVER_KEY": str(keys_dir / "server.key")}
    bots = [subprocess.Popen(okgin_argv("bot", "random", "--arena", arena.endpoint, "--account", name, "--key-file",
                                        str(tmp_path / f"{name}.key"), "--games", "0", "--unrated"),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL, env=env)
            for name in ("ann", "bob")]
    outs = []
    try:
        assert event_main(["add", "curvy", "--accounts", "ann,bob", "--state", str(state)]) == 0

        def settled() -> bool:
            with Store.open(state_db_url(state)) as store:
                return all(e.status in ("finished", "failed") for e in store.events())

        deadline = time.monotonic() + WAIT_S
        while not settled():
            assert arena.proc.poll() is None, arena.stderr()[-3000:]
            assert all(b.poll() is None for b in bots), [b.communicate(timeout=30) for b in bots]
            assert time.monotonic() < deadline, f"the event did not end:\n{arena.stderr()[-3000:]}"
            time.sleep(0.2)
    finally:
        for b in bots:
            b.kill()
            outs.append(b.communicate(timeout=30))
        assert arena.stop() == 0, arena.stderr()
    with Store.open(state_db_url(state)) as store:
        (ev,) = store.events()
    assert ev.status == "finished" and ev.error is None, (ev, arena.stderr()[-3000:])
    assert ev.verified and {c["status"] for c in ev.verify} <= {"ok", "skip"}, ev.verify
    for row in ev.standings:  # both played both their games at the event's referee, over CURVE
        assert row["games"] == 2 and row["forfeits"] == 0 and row["plays"] == "connected", ev.standings
    for out, err in outs:
        assert out.count("arena game event-") == 2, (out, err)


class _Desk:
    """The front as EventSeats sees it: everyone signed in and free; records who is sent what."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []
        self.playing: set[str] = set()

    def is_online(self, name: str) -> bool:
        return True

    def available(self, name: str) -> bool:
        return name not in self.playing

    def seat_for_event(self, name: str, msg: dict) -> bool:  # type: ignore[type-arg]
        self.sent.append((name, msg["table"]))
        self.playing.add(name)
        return True

    def unseat_from_event(self, name: str, table: str, over: object) -> None:
        self.playing.discard(name)


async def test_two_games_of_the_same_accounts_never_hold_one_each(tmp_path: Path) -> None:
    """The deadlock the test above once hit (1 run in 5): the runner plays an event's two
    games of ann and bob at once; if d1 got ann and d2 got bob, each table would wait for
    ever for its other seat, both accounts signed in (so no no-show). A game claims all its
    connected accounts before any is sent it, so d1 gets both and d2 waits for d1's end."""
    import asyncio

    import zmq.asyncio

    from arena.eventseats import EventSeats

    desk = _Desk()
    seats = EventSeats(zmq.asyncio.Context.instance(), {"ann": "ta", "bob": "tb"}, desk,  # type: ignore[arg-type]
                       asyncio.get_running_loop(), lambda name, table, *a: {"table": table}, tmp_path, 60.0)
    d1 = ("ann", "bob")
    d2 = ("bob", "ann")
    first = [asyncio.ensure_future(seats.attach("ann", "tcp://x", "t", "d1", seat=0, seats=d1)),
             asyncio.ensure_future(seats.attach("bob", "tcp://x", "t", "d2", seat=0, seats=d2))]
    second = [asyncio.ensure_future(seats.attach("bob", "tcp://x", "t", "d1", seat=1, seats=d1)),
              asyncio.ensure_future(seats.attach("ann", "tcp://x", "t", "d2", seat=1, seats=d2))]
    await asyncio.wait_for(asyncio.gather(first[0], second[0]), 30)  # d1: both seated
    assert sorted(desk.sent) == [("ann", "d1"), ("bob", "d1")] and not first[1].done() and not second[1].done()
    await seats.detach("ann", "d1")
    await seats.detach("bob", "d1")
    await asyncio.wait_for(asyncio.gather(first[1], second[1]), 30)  # then d2
    assert sorted(desk.sent[2:]) == [("ann", "d2"), ("bob", "d2")]
