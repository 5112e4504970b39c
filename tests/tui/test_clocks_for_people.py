"""Clocks made for people (issue 28 item 3) in the TUI: a low-time warning (colour, the
bell, a toast) as the player's move runs low, a headline that says who lost on time, and
no empty table of hands under it. Pilot tests on injected states, the app's clock
injected (no sleeping), and the table a person creates asks for the people's clock."""

from __future__ import annotations

from dataclasses import replace

from clients.tui.app import OkginApp
from clients.tui.backend import Backend
from clients.tui.model import ClockReading, TableState
from clients.tui.screens.game_over import GameOverScreen, headline
from clients.tui.screens.table import TableScreen
from okgin.protocol.settings import PEOPLE_CLOCK, PEOPLE_POLICIES

from .states import at, phase_is, state_of

SIZE = (80, 24)


def my_turn_with(ms: int, received: float) -> TableState:
    st = state_of(at("oklahoma", 5, phase_is("offer", 1)), 1)
    clocks = (None, ClockReading(ms, 0, received, True))
    return replace(st, clocks=clocks)


async def test_the_hand_turns_yellow_then_red_and_the_bell_rings_once_at_each_threshold() -> None:
    now = [100.0]
    app = OkginApp(Backend(), state=my_turn_with(35_000, 100.0), summaries=False, cursor_blink=False,
                   clock=lambda: now[0])
    bells: list[float] = []
    app.bell = lambda: bells.append(now[0])  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, TableScreen)
        box = screen.query_one("#handbox")
        assert not box.has_class("-low-time") and bells == []
        now[0] = 106.0  # 29 s left
        screen._tick()
        await pilot.pause()
        assert box.has_class("-low-time") and bells == [106.0]
        assert any("30 s left" in n.message for n in app._notifications)
        now[0] = 107.0
        screen._tick()
        assert bells == [106.0]  # once per threshold
        now[0] = 126.0  # 9 s left
        screen._tick()
        assert box.has_class("-critical-time") and not box.has_class("-low-time") and bells == [106.0, 126.0]
        # The next move starts with 25 s (bank and increment): yellow at once, no bell for that.
        app.state = replace(my_turn_with(25_000, 130.0), seq=(app.state.seq or 0) + 1)
        now[0] = 130.0
        await pilot.pause()
        assert box.has_class("-low-time") and bells == [106.0, 126.0]
        # Not our move (or no clock): no colour.
        app.state = replace(app.state, legal=())
        await pilot.pause()
        assert not box.has_class("-low-time") and not box.has_class("-critical-time")


def test_a_time_forfeit_says_who_lost_on_time_not_a_score_of_nothing() -> None:
    final = {"scores": [0, 0], "hands_won": [0, 0], "winner": 0, "termination": "timeout", "loser": 1}
    st = TableState(names=("ann", "bob"), final=final)
    assert headline(st) == "bob lost on time: ann wins."
    assert "0 to 0" not in headline(st)
    # Seen by the loser, with a hand played: the scores too.
    seen = state_of(at("oklahoma", 7, lambda g: len(g.results) >= 1), 0)
    seen = replace(seen, final={**final, "winner": 1, "loser": 0, "scores": [12, 30]})
    assert headline(seen).startswith("You lose on time: ") and headline(seen).endswith("wins, 30 to 12.")


async def test_the_game_over_screen_after_a_forfeit_with_no_hand_shows_no_empty_table() -> None:
    st = state_of(at("oklahoma", 5, phase_is("offer", 1)), 1)
    final = {"scores": [0, 0], "hands_won": [0, 0], "winner": 1, "termination": "timeout", "loser": 0}
    app = OkginApp(Backend(), state=replace(st, final=final, legal=()), summaries=False, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        app.push_screen(GameOverScreen())
        await pilot.pause()
        text = str(app.screen.query_one("#headline").render())
        assert "lost on time" in text and "0 to 0" not in text
        assert "No hand was finished" in str(app.screen.query_one("#score-sheet").render())


def test_the_people_clock_is_a_generous_bank_with_an_increment_and_pauses_when_away() -> None:
    """docs/rules.md §7.1: what a table a person creates asks for (protocol 1.6)."""
    assert PEOPLE_CLOCK.move_ms == 0 and PEOPLE_CLOCK.bank_ms >= 300_000 and PEOPLE_CLOCK.increment_ms > 0
    assert PEOPLE_POLICIES.away_clock == "pause"


async def test_a_table_a_person_creates_from_the_tui_gets_the_people_clock() -> None:
    """``okgin tui --table NEW`` (a join that creates the table) asks a 1.6 referee for
    the bank with an increment and the away clock ``pause``; the TUI shows the bank."""
    from .test_live import until
    from .test_reconnect import start_referee, tui

    ref, endpoint = await start_referee(heartbeat_ms=200, liveness=25)
    try:
        app = tui(endpoint, "ann", "people")
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: "people" in ref.tables and app.state.table == "people")
            t = ref.tables["people"]
            assert (t.clock.move_ms, t.clock.bank_ms, t.clock.increment_ms) == (0, 600_000, 5_000)
            assert t.policies.away_clock == "pause"
    finally:
        await ref.stop("test over")
