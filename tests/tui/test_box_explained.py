"""Issue 28, items 2 and 5: the Box game-over table tells the bots apart, its headline
names whose score is whose, and Gin in the Box is explained: the role draw shown at the
start, each summary saying who plays what next, the roles in the help, and a top line
that keeps the third score at 80 columns. Injected states (real engine games), Pilot.
"""

from __future__ import annotations

from dataclasses import replace

from rich.console import Console
from textual.widget import Widget
from textual.widgets import Static

from clients.tui.app import OkginApp
from clients.tui.model import TableState
from clients.tui.options import DisplayOptions
from clients.tui.screens.game_over import GameOverScreen, headline, score_sheet
from clients.tui.screens.summary import summary_text
from clients.tui.widgets.log import log_lines, role_draw_lines
from okgin import Game

from .states import at, game_over, phase_is, state_of

BOTS = ("Ada", "strong-bot-1", "strong-bot-2")


def _app(state: TableState) -> OkginApp:
    return OkginApp(state=state, summaries=False, cursor_blink=False)


def widget_text(w: Widget) -> str:
    return "\n".join(strip.text for strip in w.render_lines(w.region.reset_offset))


def plain(renderable: object, width: int = 200) -> str:
    console = Console(width=width, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def test_the_box_score_sheet_tells_two_bots_of_one_kind_apart() -> None:
    g = at("box", 5, game_over)
    st = state_of(g, 0, names=BOTS)
    head = plain(score_sheet(st)).splitlines()[0]
    # Before: both columns read "strong-bot" (names cut at 10 characters).
    assert "strong-bot-1" in head and "strong-bot-2" in head, head


def test_the_three_player_headline_says_whose_score_is_whose() -> None:
    st = TableState(names=BOTS, final={"scores": [102, 72, 20], "winner": 0, "termination": "normal"},
                    view=None)
    st = replace(st, view=state_of(at("box", 5, game_over), 0, names=BOTS).view)
    # Before: "You win 102 to 72, 20!".
    assert headline(st) == "You win with 102, ahead of strong-bot-1 (72) and strong-bot-2 (20)!"
    two = TableState(names=("a", "b"), final={"scores": [12, 30], "winner": 1, "termination": "normal"})
    assert headline(two) == "b wins 30 to 12!"


def first_box_hand() -> Game:
    return at("box", 7, phase_is("offer", None, hand=0))


def test_the_role_draw_is_shown_through_the_first_hand() -> None:
    g = first_box_hand()
    seat = g.roles[0]  # the human is in the box
    st = state_of(g, seat, names=BOTS)
    assert st.view is not None and st.view.role_draws
    lines = [t.plain for t in role_draw_lines(st, DisplayOptions())]
    assert lines[0].startswith("Draw for roles: ") and lines[0].endswith(" (highest card: the box).")
    for s in range(3):
        assert st.name(s) + " " in lines[0]
    _box, captain, sitter = g.roles
    assert lines[-1] == (f"You are in the box; {st.name(captain)} captains; {st.name(sitter)} sits out the first hand.")
    # Not in the second hand.
    g2 = at("box", 7, phase_is("offer", None, hand=1))
    assert role_draw_lines(state_of(g2, 0, names=BOTS), DisplayOptions()) == []


async def test_the_role_draw_is_on_the_table_at_80_columns() -> None:
    g = first_box_hand()
    app = _app(state_of(g, g.roles[2], names=BOTS))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        text = widget_text(app.screen.query_one("#log-narrow", Widget))
    assert "Draw for roles" in text and "you sit out the first hand" in text.replace("\n", " ")


def test_each_box_summary_says_who_plays_what_next() -> None:
    g = at("box", 7, lambda g: len(g.results) >= 2 and g.results[-1].winner is not None)
    r = g.results[-1]
    ended_box = r.dealer
    st = state_of(g, 0, names=BOTS)
    text = summary_text(st, r, DisplayOptions()).plain
    box, captain, sitter = g.roles  # the roles of the next hand, as the engine rotated them
    name = {0: "you", 1: "strong-bot-1", 2: "strong-bot-2"}
    if r.winner == ended_box:
        assert f"Next hand: {name[box]} stay{'' if box == 0 else 's'} in the box;" in text, text
    else:
        assert f"Next hand: {name[box]} go{'' if box == 0 else 'es'} into the box;" in text, text
    assert f"{name[captain]} captain{'' if captain == 0 else 's'};" in text
    assert f"{name[sitter]} sit{'' if sitter == 0 else 's'} out." in text


def test_a_drawn_box_hand_keeps_the_roles_and_says_so() -> None:
    g = at("box", 37, lambda g: any(r.outcome == "drawn" for r in g.results))
    r = next(r for r in g.results if r.outcome == "drawn")
    g = at("box", 37, lambda x: len(x.results) == r.hand_number + 1)
    text = summary_text(state_of(g, 0, names=BOTS), r, DisplayOptions()).plain
    assert "Next hand, the roles stay:" in text


def test_an_oklahoma_summary_says_nothing_of_roles() -> None:
    g = at("oklahoma", 5, lambda g: len(g.results) >= 1)
    assert "Next hand" not in summary_text(state_of(g, 0), g.results[-1], DisplayOptions()).plain


async def test_the_help_shows_the_roles_with_a_picture() -> None:
    app = _app(state_of(first_box_hand(), 0, names=BOTS))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        shown = widget_text(app.screen.query_one("#help-text", Static))
    assert "THE BOX" in shown and "CAPTAIN" in shown and "SITS OUT" in shown
    assert "Draw for roles" in shown and "king high" in shown


async def test_the_top_line_keeps_every_score_at_80_columns() -> None:
    g = at("box", 7, phase_is("discard", None, hand=3))
    st = state_of(g, 0, names=("Ada", "strong-bot-1", "strong-bot-2"))
    st = replace(st, names=("Ada", "strong-bot-1", "strong-bot-2"))
    app = _app(st)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        top = widget_text(app.screen.query_one("#topbar", Widget))
    v = st.view
    assert v is not None
    # Every name (shortened, still told apart) with its score, on one line.
    parts = top.split(" · ")
    for s in range(3):
        assert any(p.strip().endswith(f" {v.scores[s]}") for p in parts), top
    assert "strong-b" in top and top.count("strong-b") == 2, top
    assert top.rstrip().endswith(str(v.scores[2])) or "table" in top, top


async def test_the_game_over_sheet_of_a_box_game_in_the_terminal() -> None:
    g = at("box", 5, game_over)
    app = _app(state_of(g, 0, names=BOTS))
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(GameOverScreen())
        await pilot.pause()
        sheet = widget_text(app.screen.query_one("#score-sheet", Static))
        head = widget_text(app.screen.query_one("#headline", Static))
    assert "strong-bot-1" in sheet and "strong-bot-2" in sheet, sheet
    assert "ahead of" in head


def test_the_log_says_gin_for_a_gin() -> None:
    g = at("oklahoma", 5, lambda g: any(r.outcome == "gin" for r in g.results))
    r = next(r for r in g.results if r.outcome == "gin")
    g = at("oklahoma", 5, lambda x: len(x.results) == r.hand_number + 1)
    st = state_of(g, r.knocker)
    # The view the referee sends with hand_end: the hand as it ended (the game has dealt the next).
    from okgin import View

    st = replace(st, view=View.from_wire(g.hand_end_view(r.knocker).to_wire()))
    lines = [t.plain for t in log_lines(st, DisplayOptions())]
    assert "You went gin" in lines, lines
    assert "You knocked" not in lines

