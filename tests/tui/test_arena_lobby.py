"""``okgin tui --arena``: the arena's lobby, and its games on the table screen.

The lines the lobby draws are plain functions (tested first, without a terminal). Then a
person under Pilot at a real ``okgin arena`` (a process, with a real shard): signs in,
sees a bot online with its rating, challenges it, plays the game on the ordinary table
screen at the shard, and goes back to the lobby, which shows the result and the rating
change. The bot is ``okgin bot simple --arena ... --accept-challenges``, a real process.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from clients.sdk.arena import private_key_file
from clients.sdk.messages import GameOver
from clients.tui.app import OkginApp
from clients.tui.screens.arena_lobby import (
    ArenaLobbyScreen,
    challenge_line,
    game_over_text,
    my_ratings,
    online_line,
    rating_text,
    recent_line,
)
from clients.tui.screens.game_over import GameOverScreen
from clients.tui.screens.table import TableScreen
from okgin import Action
from okgin.cards import mask_of
from okgin.launch import okgin_argv
from okgin.melds import deadwood_mask

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "arena"))
from arenakit import ArenaProcess, add_accounts

SIZE = (120, 40)


def test_lobby_lines() -> None:
    r = {"rating": 1612, "deviation": 80, "provisional": False}
    assert rating_text(r) == "1612±80" and rating_text({**r, "provisional": True}) == "1612±80?" and rating_text(None) == "-"
    bot = {"account": "bob", "kind": "bot", "playing": True, "ratings": {"oklahoma": r}}
    assert online_line(bot, "oklahoma") == "bob [bot] 1612±80 · playing"
    assert online_line({"account": "ann", "kind": "human", "ratings": {}}, "box") == "ann -"
    offer = {"challenge": "c1", "from": {"account": "bob", "kind": "bot", "rating": 1612}, "to": ["ann"],
             "variant": "oklahoma", "clock": "standard", "rated": True}
    assert challenge_line(offer, "ann").startswith("from bob [bot] 1612: oklahoma, standard, rated")
    assert challenge_line(offer, "bob") == "to ann: oklahoma, standard, rated"
    assert recent_line({"result": "win", "opponents": ["bob"], "variant": "oklahoma", "rating_change": 16}) == \
        "win vs bob (oklahoma) +16"
    assert my_ratings({"ratings": {"oklahoma": r}}) == "Your ratings: oklahoma 1612±80"
    over = GameOver("game_over", game="g1", result="win", scores=[20, 3], termination="normal",
                    rating={"before": 1500, "after": 1662, "deviation": 290, "provisional": True})
    assert game_over_text(over) == "Game g1: win, scores 20 - 3; rating 1500 → 1662 (provisional)"


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_the_lobby_buttons_are_on_screen_and_a_click_presses_them(size: tuple[int, int]) -> None:
    """Every button of the lobby lies inside the terminal, and a click on Challenge presses
    it. Before, the challenge row's Input kept its default width and pushed "Challenge (c)"
    to columns 117-132 of a 120-column terminal: the click landed past the screen's edge,
    pressed nothing, and no challenge ever reached the arena."""
    app = OkginApp(start="arena", cursor_blink=False)
    app.arena_args = {"endpoint": "tcp://127.0.0.1:1", "account": "ann", "key": "okga_x", "connect": False}
    app.summaries = False
    async with app.run_test(size=size) as pilot:
        lobby = app.screen
        assert isinstance(lobby, ArenaLobbyScreen)
        for button in ("#seek", "#cancel-seek", "#challenge"):
            region = lobby.query_one(button).region
            assert region.right <= size[0] and region.bottom <= size[1], (button, region)
        lobby.query_one("#arena-to").value = "robo"
        assert await pilot.click("#challenge")
        await pilot.pause(0.1)
        assert "Not signed in" in str(lobby.query_one("#arena-status").render())  # the press reached the lobby


def _choose(view, legal: tuple[Action, ...]) -> Action:
    kinds = {a.kind for a in legal}
    if "knock" in kinds:
        return next(a for a in legal if a.kind == "knock")
    if "discard" in kinds:
        hand = mask_of(view.hand or ())
        return min((a for a in legal if a.kind == "discard"), key=lambda a: deadwood_mask(hand & ~(1 << a.card)))
    for kind in ("pass", "draw_stock"):
        if kind in kinds:
            return next(a for a in legal if a.kind == kind)
    return legal[0]


@pytest.fixture
def arena(tmp_path: Path) -> Iterator[tuple[ArenaProcess, dict[str, Path]]]:
    state = tmp_path / "arena"
    keys = add_accounts(state, "ann", kind="human")
    keys |= add_accounts(state, "robo")
    files = {}
    for name, key in keys.items():
        files[name] = tmp_path / f"{name}.key"
        private_key_file(files[name], key)
    proc = ArenaProcess(state)
    try:
        yield proc, files
    finally:
        assert proc.stop() == 0, proc.stderr()


async def _until(pilot, what: Callable[[], bool], timeout: float, why: str) -> None:
    """Let the app run until ``what()`` holds (a hang guard, not a speed check)."""
    deadline = time.monotonic() + timeout
    while not what():
        if time.monotonic() > deadline:
            app = pilot.app
            status = [str(s.query_one("#arena-status").render()) for s in app.screen_stack if isinstance(s, ArenaLobbyScreen)]
            raise AssertionError(f"not within {timeout:.0f} s: {why} (screen {type(app.screen).__name__}, "
                                 f"notice {app.state.notice!r}, error {app.state.error!r}, lobby {status})")
        await pilot.pause(0.05)


@pytest.mark.timeout(1500)  # a hang guard: the game is short (the arena's test rules, at most 6 hands)
async def test_a_person_challenges_a_bot_plays_and_comes_back(arena: tuple[ArenaProcess, dict[str, Path]]) -> None:
    proc, keys = arena
    bot = subprocess.Popen(
        okgin_argv("bot", "simple", "--arena", proc.endpoint, "--account", "robo", "--key-file", str(keys["robo"]),
                   "--games", "1", "--accept-challenges", "-q"),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ},
    )
    app = OkginApp(start="arena", cursor_blink=False)
    app.arena_args = {"endpoint": proc.endpoint, "account": "ann", "key": keys["ann"].read_text().strip()}
    app.summaries = False
    try:
        async with app.run_test(size=SIZE) as pilot:
            lobby = app.screen
            assert isinstance(lobby, ArenaLobbyScreen)
            await _until(pilot, lambda: lobby.client is not None and lobby.client.welcome is not None, 300, "signed in")
            assert "ann" in str(lobby.query_one("#arena-title").render())

            def robo_online() -> bool:
                return lobby.lobby is not None and any(e.get("account") == "robo" for e in lobby.lobby.online)

            deadline = time.monotonic() + 300
            while not robo_online():  # the bot signs in (a slow key check on a loaded machine)
                assert time.monotonic() < deadline and bot.poll() is None, "robo never came online"
                lobby.action_refresh()
                await pilot.pause(1.0)
            online = lobby.query_one("#arena-online")
            assert any("robo [bot]" in str(online.get_option_at_index(i).prompt) for i in range(online.option_count))
            lobby.query_one("#arena-to").value = "robo"
            await pilot.click("#challenge")
            await _until(pilot, lambda: isinstance(app.screen, TableScreen) and app.state.view is not None, 300,
                         "the challenge accepted and the table up")
            moves = 0
            deadline = time.monotonic() + 1200
            while not app.state.game_over:
                assert time.monotonic() < deadline, "the game did not end"
                st = app.state
                if st.my_turn and st.legal and st.view is not None and not isinstance(app.screen, GameOverScreen):
                    await app.play(_choose(st.view, st.legal))
                    moves += 1
                await pilot.pause(0.05)
            assert moves > 0
            await _until(pilot, lambda: isinstance(app.screen, GameOverScreen), 60, "the game-over sheet")
            await pilot.press("r")  # at an arena: back to the lobby (no rematch)
            await _until(pilot, lambda: app.screen is lobby, 60, "back in the lobby")
            await _until(pilot, lambda: lobby.last_result is not None, 120, "the arena's game_over")
            assert "rating 1500 → " in (lobby.last_result or "")

            def recent_shown() -> bool:
                recent = lobby.query_one("#arena-recent")
                return recent.option_count > 0 and "vs robo" in str(recent.get_option_at_index(0).prompt)

            await _until(pilot, recent_shown, 60, "the game in the recent list")
    finally:
        try:  # after its one game the bot exits by itself; after a failure it waits for none: end it
            out, err = bot.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            bot.terminate()
            out, err = bot.communicate(timeout=30)
    assert bot.returncode == 0, (out, err)
