"""Issue 28 deliverable 5, the comforts of a good card app: a discard held a moment to
undo it (and an option to confirm each), a knock previewed before it is committed, the
card an opponent just took or threw highlighted, and the running score across rematches.
Pilot on injected states, with a backend that keeps what it was asked to send."""

from __future__ import annotations

from dataclasses import replace

from textual.widget import Widget
from textual.widgets import Static

from clients.tui.app import OkginApp
from clients.tui.describe import hand_info, what_now
from clients.tui.messages import GameEnded
from clients.tui.options import DisplayOptions
from clients.tui.screens.confirm_discard import ConfirmDiscardScreen
from clients.tui.screens.game_over import GameOverScreen
from clients.tui.widgets.hand import HandWidget
from okgin import Action

from .states import at, game_over, phase_is, state_of
from .test_behaviour import Outbox, make
from .test_live import until

SIZE = (80, 24)


def text_of(w: Widget) -> str:
    return "\n".join(strip.text for strip in w.render_lines(w.region.reset_offset))


def discard_state():
    return state_of(at("oklahoma", 3, phase_is("discard", 0)), 0)


async def test_a_discard_is_held_and_u_takes_it_back() -> None:
    app, box = make(discard_state())
    app.undo_seconds = 600.0  # the window never ends by itself here: u ends it
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        card = app.screen.query_one(HandWidget).selected
        await pilot.press("enter")
        await pilot.pause()
        assert box.sent == [] and not app.state.my_turn  # held, not sent; no second discard
        line = " ".join(text_of(app.screen.query_one("#whatnow", Static)).split())
        assert "press u to take it back" in line, line
        await pilot.press("u")
        await pilot.pause()
        assert box.sent == [] and app.state.my_turn and app.state.extra.get("held_discard") is None
        # Discarded again, and the window ends: the discard goes.
        app.undo_seconds = 0.05
        await pilot.press("enter")
        await until(pilot, lambda: bool(box.sent), limit=30)
        assert box.sent == [("act", Action("discard", card))]


async def test_without_an_undo_window_the_discard_goes_at_once() -> None:
    app, box = make(discard_state())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert len(box.sent) == 1


async def test_discards_can_be_confirmed() -> None:
    app, box = make(discard_state())
    app.confirm_discards = True
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmDiscardScreen) and box.sent == []
        await pilot.press("escape")  # no: choose again
        await pilot.pause()
        assert box.sent == [] and app.state.my_turn
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("enter")  # yes
        await until(pilot, lambda: bool(box.sent), limit=30)
        assert box.sent[0][1].kind == "discard"


def test_the_knock_is_previewed_before_it_is_committed() -> None:
    st = state_of(at("oklahoma", 5, phase_is("discard", 1, knock=True)), 1)
    info = hand_info(st, None)
    assert info is not None and info.knock_cards
    line = what_now(st, info.knock_cards[0], DisplayOptions()).plain
    assert "You lay out [" in line and ("deadwood" in line), line


async def test_the_card_an_opponent_threw_is_highlighted_on_its_line() -> None:
    def opponent_just_threw(g) -> bool:
        if g.is_over or g.current_player != 1:
            return False
        ev = g.view(1).events
        return bool(ev) and ev[-1].kind == "discard" and ev[-1].seat == 0

    g = at("oklahoma", 5, opponent_just_threw)
    app = OkginApp(state=state_of(g, 1), summaries=False, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        line = text_of(app.screen.query_one("#opponents", Widget))
    assert "threw " in line, line


async def test_the_running_score_across_rematches() -> None:
    st = state_of(at("oklahoma", 5, game_over), 0)
    assert st.final is not None
    app = OkginApp(Outbox(), state=replace(st, extra={**st.extra, "game": 1}), summaries=False, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(GameEnded(dict(st.final)))
        await pilot.pause()
        # A rematch: game 2 of the table, the same winner.
        app.state = replace(app.state, extra={**app.state.extra, "game": 2})
        app.post_message(GameEnded(dict(st.final)))
        await pilot.pause()
        while len(app.screen_stack) > 2:
            app.pop_screen()
        app.push_screen(GameOverScreen())
        await pilot.pause()
        shown = " ".join(text_of(app.screen.query_one("#final-extra", Static)).split())
    winner = st.final["winner"]
    who = "You" if winner == 0 else st.names[winner]
    assert "Games this session (2 played):" in shown and f"{who} 2" in shown, shown
