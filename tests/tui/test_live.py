"""The TUI as a real protocol client: a real referee on loopback (embedded on the test's
event loop), real ZeroMQ sockets, the app under Pilot pressing keys like a person.

The opponent is a plain protocol client written here (hello with its reserved-seat
token, answer each prompt), so these tests exercise the TUI's side of the wire and
nothing else; ``okgin play`` with the built-in bots is exercised in ``test_play.py``.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
import zmq
import zmq.asyncio
from bounded import limit

from clients.tui.app import OkginApp
from clients.tui.model import CONNECTED, LOST, TableState
from clients.tui.net import NetworkBackend, Seating
from clients.tui.options import DisplayOptions
from clients.tui.screens.summary import HandSummaryScreen
from okgin import Action, View
from okgin.cards import mask_of
from okgin.melds import deadwood_mask
from okgin.protocol import decode_from_referee, encode
from referee.config import RefereeConfig
from referee.server import Referee

SIZE = (80, 24)


async def opponent(endpoint: str, token: str | None, stop: asyncio.Event, rematch: bool = True, join: dict | None = None) -> None:
    """A protocol client for the other seat: knocks when it can, else keeps the least
    deadwood; passes the upcard; draws from the stock; always agrees to a rematch.
    With ``token`` None it sends ``join`` (a queue or join request) after hello."""
    ctx = zmq.asyncio.Context()
    sock = limit(ctx.socket(zmq.DEALER))  # sends and receives bounded (tests/bounded.py)
    sock.connect(endpoint)
    try:
        hello = {"type": "hello", "id": 1, "protocol": 1, "role": "player", "name": "opponent"}
        if token:
            hello["token"] = token
        await sock.send(encode(hello))
        if join:
            await sock.send(encode({"id": 2, **join}))
        # Heartbeats at the referee's own interval (the welcome's heartbeat_ms): a fixed
        # 1 s let a test table of 300 ms (liveness 0.9 s) declare this seat gone while it
        # waited for the human, and forfeit it after the grace, so the human never got a turn.
        beat = 1.0
        last = time.monotonic()
        while not stop.is_set():
            if await sock.poll(50) == 0:
                if time.monotonic() - last >= beat:
                    await sock.send(encode({"type": "heartbeat"}))
                    last = time.monotonic()
                continue
            m = decode_from_referee(await sock.recv())
            if m.get("type") == "welcome":
                beat = int(m["heartbeat_ms"]) / 1000 / 2
            if m.get("type") == "prompt":
                legal = [Action.from_wire(a) for a in m["legal"]]
                view = View.from_wire(m["view"])
                a = choose(view, legal)
                await sock.send(encode({"type": "act", "table": m["table"], "seq": m["seq"], "action": a.to_wire()}))
                last = time.monotonic()
            elif m.get("type") == "game_end" and rematch:
                await sock.send(encode({"type": "rematch", "table": m["table"]}))
    finally:
        sock.close(0)
        ctx.term()


def choose(view: View, legal: list[Action]) -> Action:
    kinds = {a.kind for a in legal}
    if "knock" in kinds:
        return next(a for a in legal if a.kind == "knock")
    if "discard" in kinds:
        hand = mask_of(view.hand or ())
        return min(
            (a for a in legal if a.kind == "discard"), key=lambda a: (deadwood_mask(hand & ~(1 << a.card)), -(a.card or 0))
        )
    if "pass" in kinds:
        return Action("pass")
    return Action("draw_stock")


class Table:
    """A referee on this loop with one reserved table; the opponent in seat 1."""

    def __init__(self, variant: str = "oklahoma", seed: int = 3, heartbeat_ms: int = 5000, journal_dir: str | None = None,
                 rules: dict[str, Any] | None = None) -> None:
        self.ref = Referee(RefereeConfig(bind="tcp://127.0.0.1:0", journal_dir=journal_dir, heartbeat_ms=heartbeat_ms))
        self.variant = variant
        self.seed = seed
        self.rules = rules or {}
        self.stop = asyncio.Event()
        self.tasks: list[asyncio.Task] = []

    async def __aenter__(self) -> Table:
        self.endpoint = await self.ref.start()
        t = self.ref.create_table(table="live", variant=self.variant, rules=self.rules, seed=self.seed, reserved=True,
                                  players=["human", "opponent", "opponent2"][: 3 if self.variant == "box" else 2])
        self.tokens = t.reserved_tokens
        assert self.tokens is not None
        for tok in self.tokens[1:]:
            self.tasks.append(asyncio.create_task(opponent(self.endpoint, tok, self.stop)))
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.stop.set()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        await self.ref.stop("test over")


def human_app(table: Table, opts: DisplayOptions | None = None) -> OkginApp:
    backend = NetworkBackend(table.endpoint, "human", Seating(mode="token"), token=table.tokens[0])
    return OkginApp(backend, state=TableState(), options=opts or DisplayOptions(), cursor_blink=False)


async def until(pilot, cond, limit: float = 60.0) -> None:
    """Let the app run until ``cond()`` holds; give up after ``limit`` seconds (a bound
    on a hang, not a timing assertion)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if cond():
            return
        await asyncio.sleep(0.02)
    await pilot.pause()
    if not cond():
        raise AssertionError("condition not reached")


async def click_button(pilot, app: OkginApp, selector: str) -> None:
    """Click a button as a person would: not again while it still shows the last press
    (a Button ignores clicks during its short "active" effect)."""
    from textual.widgets import Button

    button = app.screen.query_one(selector, Button)
    await until(pilot, lambda: not button.has_class("-active"))
    await pilot.click(selector)


async def play_turn(pilot, app: OkginApp) -> None:
    """Press the key a newcomer would: whatever the prompt line suggests."""
    kinds = app.state.legal_kinds()
    if "knock" in kinds:
        await pilot.press("k")
        if app.state.my_turn:  # the cursor moved to the knocking card: press again
            await pilot.press("k")
    elif "discard" in kinds:
        await pilot.press("enter")
    elif "take" in kinds:
        await pilot.press("p")
    else:
        await pilot.press("s")


async def test_plays_a_whole_hand_against_a_real_referee(tmp_path) -> None:
    async with Table(journal_dir=str(tmp_path)) as table:
        app = human_app(table)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.state.view is not None)
            assert app.state.connection == CONNECTED
            assert app.state.names == ("human", "opponent")
            moves = 0
            while not app.state.results:
                await until(pilot, lambda: app.state.my_turn or bool(app.state.results))
                if app.state.results:
                    break
                seq = app.state.seq
                await play_turn(pilot, app)
                moves += 1
                await until(pilot, lambda s=seq: app.state.seq != s or bool(app.state.results))
                assert moves < 200
            await until(pilot, lambda: isinstance(app.screen, HandSummaryScreen))
            r = app.state.results[0]
            assert r.hand_number == 0
            assert app.state.view.hand_number == 1 or app.state.game_over
            await pilot.press("enter")
            assert not isinstance(app.screen, HandSummaryScreen)
        # The referee's journal saw the same moves the TUI made.
        journal = next(tmp_path.glob("live-g1-*.jsonl")).read_text().splitlines()
        assert sum('"t":"action"' in line and '"seat":0' in line for line in journal) == moves


async def test_illegal_move_shows_the_referee_sentence() -> None:
    async with Table() as table:
        app = human_app(table)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.state.my_turn)
            # Bypass the local check: send a move the prompt did not list.
            await app.backend.act(Action("draw_discard"), app.state.seq)
            await until(pilot, lambda: app.state.error is not None)
            assert "upcard" in app.state.error  # the engine's sentence, via the referee
            prompt = app.screen.query_one("#whatnow")
            await until(pilot, lambda: app.state.error.rstrip(".") in str(prompt.render()))
            await until(pilot, lambda: app.state.my_turn)  # re-prompted (policy reprompt)


class Proxy:
    """A TCP forwarder between the client and the referee, whose connections can be cut:
    a network failure between two live processes, which ZeroMQ alone cannot simulate."""

    def __init__(self, target: str) -> None:
        host, port = target.removeprefix("tcp://").rsplit(":", 1)
        self.target = (host, int(port))
        self.writers: list[asyncio.StreamWriter] = []
        self.black_hole = False

    async def start(self) -> str:
        self.server = await asyncio.start_server(self._conn, "127.0.0.1", 0)
        port = self.server.sockets[0].getsockname()[1]
        return f"tcp://127.0.0.1:{port}"

    async def _conn(self, r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        if self.black_hole:
            w.close()
            return
        ur, uw = await asyncio.open_connection(*self.target)
        self.writers += [w, uw]

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                dst.close()

        await asyncio.gather(pipe(r, uw), pipe(ur, w))

    def cut(self) -> None:
        for w in self.writers:
            w.close()
        self.writers.clear()

    async def close(self) -> None:
        self.cut()
        self.server.close()


@pytest.mark.parametrize("outage", ["blip", "silence"])
async def test_reconnects_with_its_token_after_a_lost_connection(outage: str) -> None:
    """``blip``: the TCP connection drops and comes back at once (ZeroMQ reconnects by
    itself; the referee sees a stranger). ``silence``: the network is down for longer
    than the heartbeat liveness. Either way the banner shows, the client resumes with
    its token, and the pending prompt comes back."""
    # Heartbeats: short for the silence (noticed after 3 of them), longer for the blip (so
    # that it is the referee's hello_first, not the silence, that triggers the resume).
    async with Table(heartbeat_ms=300 if outage == "silence" else 1500) as table:
        proxy = Proxy(table.endpoint)
        endpoint = await proxy.start()
        backend = NetworkBackend(endpoint, "human", Seating(mode="token"), token=table.tokens[0])
        app = OkginApp(backend, state=TableState(), cursor_blink=False)
        try:
            async with app.run_test(size=SIZE) as pilot:
                await until(pilot, lambda: app.state.my_turn)
                seq, token = app.state.seq, backend.token
                saw_lost = []
                app.watch(app, "state", lambda st: saw_lost.append(True) if st.connection == LOST else None, init=False)
                proxy.black_hole = outage == "silence"
                proxy.cut()
                await until(pilot, lambda: bool(saw_lost))
                if outage == "silence":
                    banner = app.screen.query_one("#banner")
                    await until(pilot, lambda: banner.display and "Connection lost" in str(banner.render()))
                    proxy.black_hole = False
                await until(pilot, lambda: app.state.connection == CONNECTED and app.state.my_turn)
                assert backend.token == token
                assert app.state.seq == seq  # the same prompt, re-sent on resume
                await pilot.press("p")
                await until(pilot, lambda s=seq: app.state.seq != s)
        finally:
            await proxy.close()


async def test_unreachable_referee_says_so_and_retries() -> None:
    # A referee that has stopped: its port answers nothing (no probing for free ports).
    ref = Referee(RefereeConfig(bind="tcp://127.0.0.1:0", journal_dir=None))
    endpoint = await ref.start()
    await ref.stop()
    backend = NetworkBackend(endpoint, "human", Seating(mode="quick"))
    app = OkginApp(backend, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: "No referee answers" in (app.state.notice or ""), limit=10)
        assert endpoint in app.state.notice
        assert app.state.view is None
        assert "No referee answers" in str(app.screen.query_one("#whatnow").render())


@pytest.mark.parametrize("variant", ["box"])
async def test_box_game_as_captain_or_box_over_the_wire(variant: str) -> None:
    """Gin in the Box: the human sits with two protocol opponents; whatever role it
    draws, the screen follows the prompts (and the sitter's advise prompts) to a hand's end."""
    async with Table(variant=variant, seed=4) as table:
        app = human_app(table)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.state.view is not None)
            roles_seen: set[str | None] = set()
            advised: set[int] = set()
            sent_notes = 0

            def advice_due() -> bool:
                return app.state.can_advise and app.state.extra.get("advice_seq") not in advised

            for _ in range(400):
                await until(pilot, lambda: app.state.my_turn or advice_due() or len(app.state.results) >= 2
                            or isinstance(app.screen, HandSummaryScreen))
                roles_seen.add(app.state.role)
                if len(app.state.results) >= 2:
                    break
                if isinstance(app.screen, HandSummaryScreen):
                    await pilot.press("enter")
                elif app.state.my_turn:
                    seq = app.state.seq
                    await play_turn(pilot, app)
                    await until(pilot, lambda s=seq: app.state.seq != s)
                else:
                    advised.add(app.state.extra["advice_seq"])
                    await pilot.press("m", *"hi", "enter")
                    sent_notes += 1
            assert len(app.state.results) >= 2
            assert roles_seen & {"box", "captain", "sitter"}
            assert "sitter" not in roles_seen or sent_notes > 0


async def test_a_hand_with_the_mouse_alone() -> None:
    """Every move by clicking: the action bar's buttons, a card, the summary's button."""
    async with Table(seed=6) as table:
        app = human_app(table)
        async with app.run_test(size=SIZE) as pilot:
            from clients.tui.widgets.hand import HandWidget

            await until(pilot, lambda: app.state.view is not None)
            for _ in range(300):
                await until(pilot, lambda: app.state.my_turn or isinstance(app.screen, HandSummaryScreen))
                if isinstance(app.screen, HandSummaryScreen):
                    await click_button(pilot, app, "#continue")
                    break
                kinds = app.state.legal_kinds()
                seq = app.state.seq
                if "knock" in kinds:
                    await click_button(pilot, app, ".act-move-knock")  # moves the cursor to the knocking card...
                    if app.state.my_turn:
                        await click_button(pilot, app, ".act-move-knock")  # ...and the relabelled button knocks with it
                elif "discard" in kinds:
                    hand = app.screen.query_one(HandWidget)
                    # Click the first card that may be thrown, then the Discard button.
                    i = next(i for i, c in enumerate(hand.order) if c != app.state.view.taken_card)
                    await pilot.click(HandWidget, offset=(i * 6 + 2, 2 if hand.order[i] != hand.selected else 1))
                    assert hand.selected == hand.order[i]
                    await click_button(pilot, app, ".act-move-discard")
                elif "pass" in kinds:
                    await click_button(pilot, app, ".act-move-pass")
                else:
                    await click_button(pilot, app, ".act-move-draw_stock")
                await until(pilot, lambda s=seq: app.state.seq != s or isinstance(app.screen, HandSummaryScreen))
            assert app.state.results, "the hand did not end"
            assert not isinstance(app.screen, HandSummaryScreen)
