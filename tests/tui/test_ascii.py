"""``--ascii``: nothing the app draws is outside ASCII (issue 17), sentences, borders,
footer and modal screens alike, and the switch (``a``) takes effect at once."""

from __future__ import annotations

import re

import pytest

from clients.tui.app import OkginApp
from clients.tui.ascii import ascii_text
from clients.tui.options import DisplayOptions
from clients.tui.screens.summary import HandSummaryScreen

from .states import at, state_of
from .test_snapshots import TABLES

NON_ASCII = re.compile(r"[^\x00-\x7f]")


def _screen_text(app: OkginApp) -> str:
    """The characters on screen (the SVG's text, markup and styles removed; the SVG
    writes every space as a no-break space)."""
    import html

    svg = app.export_screenshot()
    return html.unescape("".join(re.findall(r"<text[^>]*>([^<]*)</text>", svg))).replace("\xa0", " ")


def test_ascii_text_keeps_widths() -> None:
    s = "Waiting for ann to draw… · 10♠ — ⏎ send ╭─╮│"
    out = ascii_text(s)
    assert out.isascii() and len(out) == len(s)
    assert out == "Waiting for ann to draw. . 10S - < send +-+|"


@pytest.mark.parametrize("name", ["ok_discard_knock", "ok_waiting", "box_sitter", "box_captain", "ok_spectator"])
@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_ascii_screen_has_no_unicode(name: str, size: tuple[int, int]) -> None:
    app = OkginApp(state=TABLES[name](), options=DisplayOptions(ascii=True), summaries=False, cursor_blink=False)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        text = _screen_text(app)
        assert text.strip() and not NON_ASCII.findall(text), NON_ASCII.findall(text)
        # switching ASCII off brings the Unicode back; on again removes it
        await pilot.press("a")
        await pilot.pause()
        assert not app.options.ascii and NON_ASCII.search(_screen_text(app))
        await pilot.press("a")
        await pilot.pause()
        assert app.options.ascii and not NON_ASCII.search(_screen_text(app))


async def test_ascii_hand_summary_has_no_unicode() -> None:
    g = at("box", 7, lambda g: len(g.results) >= 1)
    st = state_of(g, 1)
    app = OkginApp(state=st, options=DisplayOptions(ascii=True), summaries=False, cursor_blink=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.push_screen(HandSummaryScreen(g.results[-1]))
        await pilot.pause()
        assert isinstance(app.screen, HandSummaryScreen)
        assert not NON_ASCII.search(_screen_text(app))
