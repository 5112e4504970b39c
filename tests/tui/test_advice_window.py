"""Advice that works for a person (issue 28 item 4) in the TUI: the captain's wait for
our advice counted down on the table (protocol 1.6 ``advise_prompt.window_ms``), and late
advice told with a toast, "your captain already played". Pilot tests on injected states,
the app's clock injected (no sleeping); the referee's side is in
tests/hardening/test_outage_clock.py and tests/referee/test_table_flow.py."""

from __future__ import annotations

from dataclasses import replace

from clients.sdk import messages as sdk
from clients.tui.app import OkginApp
from clients.tui.backend import Backend
from clients.tui.reducer import reduce
from okgin import Action

from .states import at, phase_is, state_of

SIZE = (100, 32)


class LateBackend(Backend):
    """The referee's answer to advice after the captain moved (advice_late, 1.6)."""

    async def advise(self, action: Action | None, text: str) -> None:
        raise RuntimeError("your captain already played: advice for seq 12 came too late (the pending prompt is seq 13)")


def sitter_state():
    g = at("box", 7, phase_is("discard", None, hand=1))
    return g, state_of(g, g.roles[2])


def test_the_advise_prompts_window_is_kept_on_the_reducers_clock() -> None:
    g, st = sitter_state()
    msg = sdk.AdvisePrompt(type="advise_prompt", table="t1", game=1, seq=5, captain=g.roles[1],
                           legal=list(st.advice_legal), view=st.view, window_ms=7000)
    out, _ = reduce(st, msg, 100.0)
    assert out.extra["advice_until"] == 107.0 and out.extra["advice_seq"] == 5
    out, _ = reduce(st, replace(msg, window_ms=None), 100.0)
    assert out.extra["advice_until"] is None  # a 1.5 referee, or a bot's table: no countdown


async def test_the_table_counts_the_captains_wait_down() -> None:
    _g, st = sitter_state()
    now = [100.0]
    app = OkginApp(Backend(), state=replace(st, extra={**st.extra, "advice_until": 107.0}), summaries=False,
                   cursor_blink=False, clock=lambda: now[0])
    async with app.run_test(size=SIZE) as pilot:
        box = app.screen.query_one("#handbox")
        assert "waits 7 s for your advice" in str(box.border_title)
        now[0] = 103.2
        app.screen._tick()
        await pilot.pause()
        assert "waits 4 s for your advice" in str(box.border_title)
        now[0] = 107.5  # the window is over: the title says so no more
        app.screen._tick()
        await pilot.pause()
        assert "for your advice" not in str(box.border_title)


async def test_late_advice_gets_your_captain_already_played() -> None:
    _g, st = sitter_state()
    app = OkginApp(LateBackend(), state=st, summaries=False, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")  # suggest the chosen discard
        await pilot.pause()
        await pilot.pause()
        assert any("captain already played" in n.message for n in app._notifications)
        assert "already played" in (app.state.error or "")
