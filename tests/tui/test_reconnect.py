"""Network play that survives a crashed terminal (issue 17 item 2), against a real
referee on the test's loop: the session token is saved, the same command run again
resumes the seat; the opponent sees "ann disconnected — seat forfeits in N s" counting
down; a stale saved token is removed with a message; q asks before leaving."""

from __future__ import annotations

import asyncio
import json
import os
import stat

import zmq
import zmq.asyncio
from bounded import limit

from clients.tui.app import OkginApp
from clients.tui.model import TableState
from clients.tui.net import NetworkBackend
from clients.tui.saved_sessions import SessionStore, state_path
from clients.tui.screens.quit_confirm import QuitConfirmScreen
from clients.tui.seating import Seating
from okgin.protocol import decode_from_referee, encode
from referee.config import RefereeConfig
from referee.server import Referee

from .test_live import SIZE, opponent, until


def tui(endpoint: str, name: str = "ann", table: str = "t1") -> OkginApp:
    """What ``okgin tui --connect ENDPOINT --name NAME --table TABLE`` builds."""
    return OkginApp(NetworkBackend(endpoint, name, Seating(mode="join", table=table)), state=TableState(), cursor_blink=False)


async def crash(app: OkginApp) -> None:
    """The terminal dies: the socket goes without a bye (then the app is torn down)."""
    backend = app.backend
    assert isinstance(backend, NetworkBackend) and backend.client is not None
    await backend.client.drop_connection()
    backend._closing = True
    backend.client.welcome = None  # nothing left to say bye with
    app.exit(0)


async def start_referee(**config) -> tuple[Referee, str]:
    """A referee in the test's own event loop, beside the app under Pilot. Its liveness
    must outlast a stall of that loop on a loaded machine: at 200 ms x 2 a stall of half
    a second dropped the TUI's session (and its quick-match queue place), so the tests
    that want heartbeats quick use 200 ms x 25, five seconds; a resume with the token
    never waits for the old connection to be declared gone."""
    ref = Referee(RefereeConfig(bind="tcp://127.0.0.1:0", journal_dir=None, **config))
    return ref, await ref.start()


async def test_the_same_command_again_resumes_the_seat() -> None:
    ref, endpoint = await start_referee(heartbeat_ms=200, liveness=25)
    stop = asyncio.Event()
    bob = None
    try:
        first = tui(endpoint)
        async with first.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: first.state.table == "t1")
            bob = asyncio.create_task(opponent(endpoint, None, stop, join={"type": "join", "table": "t1"}))
            await until(pilot, lambda: first.state.view is not None)
            token = first.backend.token
            saved = json.loads(state_path().read_text())["sessions"]
            assert [s["token"] for s in saved.values()] == [token]
            assert stat.S_IMODE(os.stat(state_path()).st_mode) == 0o600
            await crash(first)
        # The referee holds the seat; the same command finds the token and takes it back.
        again = tui(endpoint)
        async with again.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: again.state.view is not None and again.state.seat is not None)
            assert again.backend.token == token and again.backend._from_store
            assert "t1" in ref.tables and ref.tables["t1"].seats[again.state.seat].token == token
            assert again.state.final is None  # not forfeited
    finally:
        stop.set()
        if bob is not None:
            await asyncio.gather(bob, return_exceptions=True)
        await ref.stop("test over")


async def test_a_stale_saved_token_is_removed_and_the_seat_joined_afresh() -> None:
    ref, endpoint = await start_referee()
    try:
        SessionStore().save(endpoint, "ann", "t1", "0" * 32)  # a session this referee never had
        app = tui(endpoint)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.state.table == "t1" and app.backend.token not in (None, "0" * 32))
            await until(pilot, lambda: any("is gone" in n.message for n in app._notifications))
            assert SessionStore().get(endpoint, "ann", "t1").token == app.backend.token
    finally:
        await ref.stop("test over")


async def quitter(endpoint: str, seen: asyncio.Event) -> None:
    """ann: joins t1, then says bye once bob's game has started."""
    ctx = zmq.asyncio.Context()
    sock = limit(ctx.socket(zmq.DEALER))
    sock.connect(endpoint)
    try:
        await sock.send(encode({"type": "hello", "id": 1, "protocol": 1, "role": "player", "name": "ann"}))
        await sock.send(encode({"type": "join", "id": 2, "table": "t1", "seat": 0}))
        await asyncio.wait_for(seen.wait(), 30)
        await sock.send(encode({"type": "bye"}))
        while await sock.poll(100):
            decode_from_referee(await sock.recv())
    finally:
        sock.close(0)
        ctx.term()


async def test_the_opponent_sees_the_countdown_and_q_asks_first() -> None:
    ref, endpoint = await start_referee()
    started = asyncio.Event()
    ann = asyncio.create_task(quitter(endpoint, started))
    try:
        bob = tui(endpoint, "bob")
        async with bob.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: bob.state.view is not None)
            started.set()
            banner = bob.screen.query_one("#banner")
            await until(pilot, lambda: banner.display and "ann disconnected" in str(banner.render()))
            _name, deadline = bob.state.extra["away"][0]
            screen = bob.screen
            # Two successive renders of the timer's tick: the seconds go down.
            screen._update_banner(deadline - 38.2)
            first = str(banner.render())
            screen._update_banner(deadline - 37.1)
            second = str(banner.render())
            assert first == "ann disconnected — seat forfeits in 39 s"
            assert second == "ann disconnected — seat forfeits in 38 s"
            # q at a running network game asks first, and says how long the seat is held.
            await pilot.press("q")
            await until(pilot, lambda: isinstance(bob.screen, QuitConfirmScreen))
            grace_s = ref.tables["t1"].policies.disconnect_grace_ms // 1000  # from `seated`'s policies
            assert f"holds your seat for {grace_s} s" in str(bob.screen.query_one("#quit-text").render())
            await pilot.press("n")
            await until(pilot, lambda: not isinstance(bob.screen, QuitConfirmScreen))
            assert bob.is_running
    finally:
        await asyncio.gather(ann, return_exceptions=True)
        await ref.stop("test over")


async def test_the_resume_list_takes_the_seat_back_and_forgets_one() -> None:
    """``okgin tui --resume`` with several saved seats: the list screen; d forgets the
    highlighted (newest) one, Enter on the next resumes it at the real referee."""
    from clients.tui.screens.sessions import SessionsScreen
    from clients.tui.screens.table import TableScreen

    ref, endpoint = await start_referee(heartbeat_ms=200, liveness=25)
    stop = asyncio.Event()
    bob = None
    try:
        first = tui(endpoint)
        async with first.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: first.state.table == "t1")
            bob = asyncio.create_task(opponent(endpoint, None, stop, join={"type": "join", "table": "t1"}))
            await until(pilot, lambda: first.state.view is not None)
            token = first.backend.token
            await crash(first)
        SessionStore().save("tcp://127.0.0.1:1", "ann", "elsewhere", "e" * 32)  # newer, and not wanted
        app = OkginApp(start="sessions", cursor_blink=False)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: isinstance(app.screen, SessionsScreen))
            assert [s.table for s in app.screen.sessions] == ["elsewhere", "t1"]
            await pilot.press("d")
            await until(pilot, lambda: [s.table for s in SessionStore().all()] == ["t1"])
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, TableScreen) and app.state.view is not None
                        and app.state.seat is not None)
            assert isinstance(app.backend, NetworkBackend) and app.backend.token == token
            assert ref.tables["t1"].seats[app.state.seat].token == token and app.state.final is None
    finally:
        stop.set()
        if bob is not None:
            await asyncio.gather(bob, return_exceptions=True)
        await ref.stop("test over")


def test_resume_picks_the_screen_only_in_a_terminal(capsys) -> None:
    """Several saved seats: a terminal gets the list screen, a script the printed list."""
    from clients.tui.cli import _pick_saved

    store = SessionStore()
    store.save("tcp://127.0.0.1:7117", "ann", "t1", "a" * 32)
    store.save("tcp://127.0.0.1:7117", "ann", "t2", "b" * 32)
    assert _pick_saved(0, interactive=True) == "screen"
    assert _pick_saved(0, interactive=False) == 0
    out = capsys.readouterr().out
    assert "table t1" in out and "table t2" in out and "okgin tui --resume N" in out
    assert _pick_saved(2).table in ("t1", "t2")


async def test_retrying_counts_down(monkeypatch) -> None:
    """"Retrying in N s" goes down one second at a time (issue 17 item 3), and the wait
    grows after each unanswered hello. hello's wait is cut short so the test is quick."""
    import clients.tui.net as net

    monkeypatch.setattr(net, "HELLO_TIMEOUT_S", 0.3)
    ref, endpoint = await start_referee()
    await ref.stop()  # nobody answers at that port now
    app = OkginApp(NetworkBackend(endpoint, "ann", Seating(mode="quick")), cursor_blink=False)
    said: list[str] = []
    async with app.run_test(size=SIZE) as pilot:
        app.watch(app, "state", lambda st: said.append(st.notice or ""), init=True)

        def counted_down() -> bool:
            two = next((i for i, n in enumerate(said) if "Retrying in 2 s" in n), None)
            return two is not None and any("Retrying in 1 s" in n for n in said[two:])

        await until(pilot, counted_down, limit=30)
    waits = [n.split("Retrying in ")[1].split(" s")[0] for n in said if "Retrying in" in n]
    distinct = [w for i, w in enumerate(waits) if i == 0 or waits[i - 1] != w]
    assert distinct[:3] == ["1", "2", "1"], distinct  # 1 s after the first try, then 2 s counted down


async def test_a_quick_match_seat_comes_back_too() -> None:
    """``okgin tui --connect ENDPOINT --name ann`` (the queue, no table): its token is
    saved under no table, and the same command again takes the seat it was given."""
    ref, endpoint = await start_referee(heartbeat_ms=200, liveness=25)
    stop = asyncio.Event()
    bob = None

    def quick() -> OkginApp:
        return OkginApp(NetworkBackend(endpoint, "ann", Seating(mode="quick")), state=TableState(), cursor_blink=False)

    try:
        first = quick()
        async with first.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: "queue" in (first.state.notice or ""))
            bob = asyncio.create_task(opponent(endpoint, None, stop, join={"type": "queue", "variant": "oklahoma"}))
            await until(pilot, lambda: first.state.view is not None and first.state.table is not None)
            token, table = first.backend.token, first.state.table
            assert SessionStore().get(endpoint, "ann", None).token == token
            await crash(first)
        again = quick()
        async with again.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: again.state.view is not None and again.state.seat is not None)
            assert again.backend.token == token and again.state.table == table
            assert ref.tables[table].seats[again.state.seat].token == token and again.state.final is None
    finally:
        stop.set()
        if bob is not None:
            await asyncio.gather(bob, return_exceptions=True)
        await ref.stop("test over")
