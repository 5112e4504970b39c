"""Issue 28 item 6, the rough edges a new player ran into, each checked as the player
meets it: Pilot on injected states, a real referee for the seat taken by another
terminal, a real ``okgin play`` house for the bots that wait behind a summary, and a real
``okgin serve`` for its log. (The double click in the browser: test_serve_browser.py.)
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import bounded
import pytest
from textual.widget import Widget
from textual.widgets import Static

from clients.sdk import AsyncClient
from clients.tui.app import OkginApp
from clients.tui.house import House, Pacing
from clients.tui.model import ENDED, TableState
from clients.tui.net import TAKEN_SENTENCE
from clients.tui.screens.game_over import GameOverScreen
from clients.tui.screens.quit_confirm import LocalQuitScreen, QuitConfirmScreen
from clients.tui.screens.summary import HandSummaryScreen
from clients.tui.widgets.hand import HandWidget
from okgin import RuleSet

from .states import at, game_over, phase_is, state_of, write_journal
from .test_box_human import play_until, wired_app
from .test_live import SIZE, opponent, until
from .test_reconnect import start_referee, tui

ROOT = Path(__file__).resolve().parents[2]


def _app(state: TableState, **kw: object) -> OkginApp:
    return OkginApp(state=state, summaries=False, cursor_blink=False, **kw)  # type: ignore[arg-type]


def text_of(w: Widget) -> str:
    return "\n".join(strip.text for strip in w.render_lines(w.region.reset_offset))


# ------------------------------------------------------------ the seat taken over
async def test_a_seat_taken_by_another_terminal_is_said_in_words() -> None:
    """Before: the banner-less table showed "session_taken (2008): ... stop" in the notice."""
    ref, endpoint = await start_referee(heartbeat_ms=200, liveness=25)
    stop = asyncio.Event()
    bob = None
    other = None
    try:
        first = tui(endpoint)
        async with first.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: first.state.table == "t1")
            bob = asyncio.create_task(opponent(endpoint, None, stop, join={"type": "join", "table": "t1"}))
            await until(pilot, lambda: first.state.view is not None)
            # The same seat from a second terminal: it resumes the session with the token.
            other = AsyncClient(endpoint, "ann", "player", token=first.backend.token, reply_timeout=10.0)
            await other.connect(10.0)
            await until(pilot, lambda: first.state.connection == ENDED)
            await pilot.pause()
            banner = text_of(first.screen.query_one("#banner", Static))
            top = text_of(first.screen.query_one("#topbar", Widget))
            assert "taken over by another terminal" in " ".join(banner.split()), banner
            assert "2008" not in banner and "session_taken" not in banner
            assert first.state.notice == TAKEN_SENTENCE and not first.state.legal
            assert "[disconnected]" in top
            # Nothing is held for this window any more: q closes it without the seat dialog.
            await pilot.press("q")
            await pilot.pause()
            assert not isinstance(first.screen, QuitConfirmScreen)
        assert first.return_code == 0
    finally:
        stop.set()
        if other is not None:
            await other.close()
        if bob is not None:
            await asyncio.gather(bob, return_exceptions=True)
        await ref.stop()


# ------------------------------------------------------------------ Ctrl+C
async def test_ctrl_c_quits_and_asks_first_at_a_game() -> None:
    """Before: Ctrl+C only showed a toast saying to press Ctrl+Q."""
    app = _app(state_of(at("oklahoma", 5, phase_is("offer", 1)), 1))
    app.local_game = True
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert isinstance(app.screen, LocalQuitScreen)  # a game is running: leaving asks first
        await pilot.press("ctrl+c")  # twice: really leave
        await pilot.pause()
    assert app.return_code == 0


async def test_ctrl_c_quits_where_nothing_is_at_stake() -> None:
    app = _app(state_of(at("oklahoma", 5, game_over), 0))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+c")
        await pilot.pause()
    assert app.return_code == 0


# ------------------------------------------------------------------ double click
async def test_a_double_click_on_a_card_selects_no_text() -> None:
    """A double click discards; Textual's text selection left a blue block over the hand
    (the browser showed it too: test_serve_browser.py)."""
    app = _app(state_of(at("oklahoma", 5, phase_is("offer", 1)), 1))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.double_click(HandWidget, offset=(3, 3))
        await pilot.pause()
        assert not app.screen.selections


# ------------------------------------------------------------- too small a terminal
async def test_a_terminal_too_small_gets_a_notice_not_a_garbled_table() -> None:
    app = _app(state_of(at("box", 7, phase_is("discard", None, hand=1)), 2))
    async with app.run_test(size=(40, 14)) as pilot:
        await pilot.pause()
        notice = app.screen.query_one("#too-small", Static)
        assert notice.display and app.screen.has_class("-too-small")
        said = " ".join(text_of(notice).split())
        assert "40×14" in said and "Make the terminal bigger" in said
        assert not app.screen.query_one(HandWidget).display or not app.screen.query_one("#main").display
        # Made bigger: the table comes back.
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert not app.screen.has_class("-too-small")
        assert not app.screen.query_one("#too-small", Static).display
        # A modal pushed while small carries the notice too.
        await pilot.resize_terminal(50, 12)
        app.push_screen(GameOverScreen())
        await pilot.pause()
        assert app.screen.has_class("-too-small")


# --------------------------------------------------------------------- wording
async def test_the_meld_brackets_name_no_letter_that_reads_as_a_rank() -> None:
    """"A set" under three aces read as "Ace set"; the bracket says "set" or "run" alone."""
    app = _app(state_of(at("oklahoma", 5, phase_is("discard", 1, knock=True)), 1))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        hand = text_of(app.screen.query_one(HandWidget))
    assert " set " in hand or " run " in hand, hand
    for letter in "ABCD":
        assert f" {letter} set " not in hand and f" {letter} run " not in hand


async def test_the_side_panel_says_hands_won_in_words() -> None:
    """Before: "Ada  46 ████···· 1w"."""
    app = _app(state_of(at("oklahoma", 5, phase_is("draw", 1, hand=2)), 1))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        board = text_of(app.screen.query_one("#scoreboard", Widget))
    assert "won" in board and "1w" not in board and "0w" not in board, board
    for line in board.splitlines()[1:3]:
        assert line.rstrip().endswith(("hand won", "hands won", " won")), board


async def test_the_deal_seed_is_behind_a_key_on_the_game_over_sheet() -> None:
    st = state_of(at("oklahoma", 5, game_over), 0)
    assert st.final is not None
    st = TableState(**{**st.__dict__, "final": {**st.final, "seed": "ab" * 32, "seed_hash": "cd" * 32}})
    app = _app(st)
    async with app.run_test(size=SIZE) as pilot:
        app.push_screen(GameOverScreen())
        await pilot.pause()
        extra = app.screen.query_one("#final-extra", Static)
        assert "ab" * 32 not in text_of(extra).replace("\n", "")
        await pilot.press("v")
        await pilot.pause()
        shown = "".join(text_of(extra).split())
        assert "ab" * 32 in shown and "Dealseed(revealed)" in shown


# ------------------------------------------------------------------- the replay
async def test_the_replay_shows_the_laid_out_hands_before_the_next_deal(tmp_path) -> None:
    from clients.tui.replay import ReplayBackend

    g = at("oklahoma", 5, lambda g: len(g.results) >= 1)
    g.abandon("abandoned")
    path = tmp_path / "demo-g1.jsonl"
    write_journal(g, path, ("Ada", "Bob"))
    backend = ReplayBackend(path)
    ended = next(i for i, s in enumerate(backend.steps) if s.results == 1)
    app = OkginApp(backend, summaries=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        for _ in range(ended):
            await pilot.press("right")
        await pilot.pause()
        v = app.state.view
        # Before: this step was already the next deal (hand 2, ten fresh cards each).
        assert v is not None and v.hand_number == 0 and v.phase == "over" and v.all_hands is not None
        assert "Bob" in text_of(app.screen.query_one("#opponents", Widget))
        await pilot.press("right")
        await pilot.pause()
        assert app.state.view is not None and app.state.view.hand_number == 1


# ----------------------------------------------------- the bots wait behind a summary
async def test_the_bot_does_not_move_behind_an_oklahoma_summary() -> None:
    """Before: only in the Box, and only in hands the human sat out, did the bots wait; in
    Oklahoma the bot's first move of the next hand was made behind the summary."""
    waits: list[tuple[str, int]] = []
    house = House(RuleSet(variant="oklahoma", target_score=300), ["random"], human="ada", seed=2,
                  pacing=Pacing(pace=0.0, advice_window=0.0, on_wait=lambda *w: waits.append(w)))
    app = wired_app(house)
    try:
        async with app.run_test(size=SIZE) as pilot:
            for _ in range(12):  # until a summary after which the bot moves first
                await play_until(pilot, app, lambda: isinstance(app.screen, HandSummaryScreen))
                shown = app.screen
                assert isinstance(shown, HandSummaryScreen)
                done = shown.result.hand_number
                await until(pilot, lambda d=done: (app.state.view is not None and app.state.view.hand_number == d + 1)
                            or app.state.game_over, limit=60)
                v = app.state.view
                if v is not None and v.hand_number == done + 1 and v.to_act != v.seat:
                    await until(pilot, lambda: any(w[0] == "ready" for w in waits))
                    await pilot.pause()
                    assert app.screen is shown and not app.state.view.events  # the bot waits
                    await pilot.press("enter")
                    await until(pilot, lambda: bool(app.state.view and app.state.view.events), limit=60)
                    return
                await pilot.press("enter")
                await until(pilot, lambda s=shown: app.screen is not s)
            pytest.fail("no hand after which the bot moved first")
    finally:
        house.stop()


# ---------------------------------------------------------------- okgin serve's log
def _serve(extra: list[str]) -> tuple[str, str]:
    """``okgin serve`` for two page loads; its stderr."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-m", "okgin", "serve", "--port", "0", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
    try:
        url = bounded.readline(proc.stdout, 60, "okgin serve").strip()  # type: ignore[arg-type]
        for _ in range(2):
            with urllib.request.urlopen(url, timeout=30) as r:
                assert r.status == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=60)
    return url, err


def test_okgin_serve_is_quiet_unless_asked_for_an_access_log() -> None:
    pytest.importorskip("textual_serve")
    _url, quiet = _serve([])
    assert "GET / " not in quiet and '"GET /' not in quiet, quiet
    _url, loud = _serve(["--access-log"])
    assert loud.count("GET / ") + loud.count('"GET /') >= 2, loud
