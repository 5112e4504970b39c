"""How the TUI behaves under Pilot, on injected states: the footer shows only legal
moves, each key sends the move it says, the cursor and the mouse choose cards, the
sitter's keys become advice, errors land where the player looks, replays step.

The app's moves go out through its :class:`Backend`; here a backend that keeps what it
was asked to send stands in for the network (the network itself is exercised against a
real referee in ``test_live.py``).
"""

from __future__ import annotations

import pytest
from textual.actions import parse

from clients.tui.app import OkginApp
from clients.tui.backend import Backend
from clients.tui.model import TableState
from clients.tui.options import DisplayOptions
from clients.tui.screens.table import TableScreen
from clients.tui.widgets.hand import HandWidget
from okgin import Action, Game

from .states import at, phase_is, state_of, write_journal

SIZE = (80, 24)


class Outbox(Backend):
    """Keeps every move and advice the app sends; can refuse the next one like a referee."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, object]] = []
        self.refuse: str | None = None

    async def act(self, action: Action, seq: int | None) -> None:
        if self.refuse:
            msg, self.refuse = self.refuse, None
            raise RuntimeError(msg)
        self.sent.append(("act", action))

    async def advise(self, action: Action | None, text: str) -> None:
        self.sent.append(("advise", (action, text)))


def make(state: TableState, opts: DisplayOptions | None = None) -> tuple[OkginApp, Outbox]:
    box = Outbox()
    return OkginApp(box, state=state, options=opts or DisplayOptions(), summaries=False, cursor_blink=False), box


def footer_actions(app: OkginApp) -> set[str]:
    """The footer's actions, a move as its kind (``take``) and a suggestion as ``advise_take``."""
    out = set()
    for b in app.screen.active_bindings.values():
        if b.binding.show:
            _dest, name, params = parse(b.binding.action)
            out.add(("advise_" if params[1:2] == (True,) else "") + params[0] if name == "move" else name)
    return out


MOVES = {"take", "pass", "draw_stock", "draw_discard", "discard", "knock", "big_gin"}


def offer_state() -> TableState:
    return state_of(at("oklahoma", 5, phase_is("offer", 1)), 1)


async def test_offer_footer_and_take() -> None:
    app, box = make(offer_state())
    async with app.run_test(size=SIZE) as pilot:
        assert footer_actions(app) & MOVES == {"take", "pass"}
        await pilot.press("s")  # not legal now: nothing is sent
        await pilot.press("t")
        await pilot.pause()
        assert box.sent == [("act", Action("take"))]
        # The prompt is answered: no key may send a second move before the next prompt.
        assert footer_actions(app) & MOVES == set()
        await pilot.press("t", "p")
        assert len(box.sent) == 1


async def test_draw_phase_keys() -> None:
    g = at("oklahoma", 5, phase_is("draw", 1, hand=1))
    app, box = make(state_of(g, 1))
    async with app.run_test(size=SIZE) as pilot:
        expected = {"draw_stock", "draw_discard"} if "draw_discard" in {a.kind for a in g.legal_actions()} else {"draw_stock"}
        assert footer_actions(app) & MOVES == expected
        await pilot.press("enter", "k")  # discard/knock are not legal while drawing
        assert box.sent == []
        await pilot.press("s")
        await pilot.pause()
        assert box.sent == [("act", Action("draw_stock"))]


async def test_discard_with_cursor_and_enter() -> None:
    g = at("oklahoma", 3, phase_is("discard", 0))
    st = state_of(g, 0)
    app, box = make(st)
    async with app.run_test(size=SIZE) as pilot:
        hand = app.screen.query_one(HandWidget)
        first = hand.selected
        assert first is not None and first in st.view.hand  # the hint's best discard is preselected
        await pilot.press("left")
        second = hand.selected
        assert second != first
        await pilot.press("l")  # hjkl too
        assert hand.selected == first
        await pilot.press("left", "enter")
        await pilot.pause()
        assert box.sent == [("act", Action("discard", second))]


async def test_knock_moves_cursor_then_knocks() -> None:
    g = at("oklahoma", 5, phase_is("discard", 1, knock=True))
    st = state_of(g, 1)
    knock_cards = {a.card for a in st.legal if a.kind == "knock"}
    app, box = make(st, DisplayOptions(hints=False))
    async with app.run_test(size=SIZE) as pilot:
        assert "knock" in footer_actions(app)
        hand = app.screen.query_one(HandWidget)
        # Put the cursor on a card that cannot knock: k moves it to the best knock card.
        non_knock = next(c for c in hand.order if c not in knock_cards)
        hand.selected = non_knock
        await pilot.press("k")
        await pilot.pause()
        assert box.sent == []
        assert hand.selected in knock_cards
        chosen = hand.selected
        await pilot.press("k")
        await pilot.pause()
        assert box.sent == [("act", Action("knock", chosen))]


async def test_mouse_click_selects_double_click_discards() -> None:
    g = at("oklahoma", 3, phase_is("discard", 0))
    app, box = make(state_of(g, 0))
    async with app.run_test(size=SIZE) as pilot:
        hand = app.screen.query_one(HandWidget)
        target = hand.order[2]
        # Card i starts at column i * (5 + 1); row 2 is inside an unraised card.
        await pilot.click(HandWidget, offset=(2 * 6 + 2, 2))
        await pilot.pause()
        assert hand.selected == target
        assert box.sent == []
        await pilot.double_click(HandWidget, offset=(2 * 6 + 2, 2))
        await pilot.pause()
        assert box.sent == [("act", Action("discard", target))]


async def test_double_click_stock_draws() -> None:
    g = at("oklahoma", 5, phase_is("draw", 1, hand=1))
    app, box = make(state_of(g, 1))
    async with app.run_test(size=SIZE) as pilot:
        from clients.tui.widgets.piles import PilesWidget

        await pilot.click(PilesWidget, offset=(2, 2))
        await pilot.pause()
        assert box.sent == []  # a single click only explains
        await pilot.double_click(PilesWidget, offset=(2, 2))
        await pilot.pause()
        assert box.sent == [("act", Action("draw_stock"))]


async def test_action_bar_buttons_click() -> None:
    app, box = make(offer_state())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.click(".act-move-pass")
        await pilot.pause()
        assert box.sent == [("act", Action("pass"))]


async def test_refused_move_shows_the_sentence() -> None:
    app, box = make(offer_state())
    box.refuse = "the upcard is on offer: take or pass the upcard"
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("t")
        await pilot.pause()
        prompt = str(app.screen.query_one("#whatnow").render())
        assert prompt.startswith("✗ Refused: the upcard is on offer: take or pass the upcard")
        # The prompt is still open: the player can try again.
        assert "take" in footer_actions(app)


async def test_sitter_keys_send_advice_and_note() -> None:
    g = at("box", 7, phase_is("discard", None, hand=1))
    sitter = g.roles[2]
    st = state_of(g, sitter)
    assert st.can_advise and not st.my_turn
    app, box = make(st)
    async with app.run_test(size=SIZE) as pilot:
        acts = footer_actions(app)
        assert "advise_discard" in acts and "discard" not in acts
        hand = app.screen.query_one(HandWidget)
        await pilot.press("enter")
        await pilot.pause()
        assert box.sent == [("advise", (Action("discard", hand.selected), ""))]
        await pilot.press("m")
        await pilot.press(*"keep the spades")
        await pilot.press("enter")
        await pilot.pause()
        await pilot.pause()
        assert box.sent[-1] == ("advise", (None, "keep the spades"))


async def test_captain_sees_advice_and_box_sees_none() -> None:
    g = at("box", 7, phase_is("discard", None, hand=1))
    box_seat, captain, sitter = g.roles
    g.advise(sitter, g.legal_actions()[0], "try this")
    cap_state = state_of(g, captain)
    assert cap_state.view.advice  # delivered to the captain
    app, _ = make(cap_state)
    async with app.run_test(size=(120, 40)):
        from clients.tui.widgets.advice import AdvicePanel

        text = str(app.screen.query_one(AdvicePanel).render())
        assert "try this" in text
    box_state = state_of(g, box_seat)
    assert box_state.view.advice == ()


async def test_sort_cycles_and_manual_reorder() -> None:
    g = at("oklahoma", 3, phase_is("discard", 0))
    app, _ = make(state_of(g, 0))
    async with app.run_test(size=SIZE) as pilot:
        hand = app.screen.query_one(HandWidget)
        assert app.options.sort == "melds"
        await pilot.press("o")
        assert app.options.sort == "suit"
        await pilot.press("o")
        assert app.options.sort == "rank"
        before = list(hand.order)
        sel = hand.selected
        i = before.index(sel)
        await pilot.press("shift+left" if i > 0 else "shift+right")
        assert app.options.sort == "manual"
        assert hand.order != before and sorted(hand.order) == sorted(before)
        assert hand.selected == sel


async def test_help_opens_and_closes() -> None:
    app, _ = make(offer_state())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        from clients.tui.screens.help import HelpScreen

        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert isinstance(app.screen, TableScreen)


async def test_display_toggles() -> None:
    app, _ = make(offer_state())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("a", "f", "i")
        assert app.options.ascii and app.options.four_colour and not app.options.hints
        hand = app.screen.query_one(HandWidget)
        assert "♠" not in str(hand.render()) and "♥" not in str(hand.render())


@pytest.mark.parametrize("size", [(80, 24), (60, 20), (200, 60)])
async def test_any_terminal_size_renders(size: tuple[int, int]) -> None:
    app, _ = make(state_of(at("box", 7, phase_is("discard", None, hand=1)), 2))
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        assert app.screen.query_one(HandWidget).order


async def test_replay_steps_through_a_journal(tmp_path) -> None:
    from clients.tui.replay import ReplayBackend

    g = at("oklahoma", 5, lambda g: len(g.results) >= 2)
    g.abandon("abandoned")
    path = tmp_path / "demo-g1.jsonl"
    write_journal(g, path, ("Ada", "Bob"))
    backend = ReplayBackend(path)
    app = OkginApp(backend, summaries=False)
    steps = len(g.log) + 2  # each of the two ended hands is shown laid out before the next deal
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.state.replay == (0, steps)
        assert app.state.view is not None and app.state.view.all_hands is not None
        await pilot.press("right", "right", "l")
        assert app.state.replay[0] == 3
        await pilot.press("left")
        assert app.state.replay[0] == 2
        await pilot.press("end")
        assert app.state.replay[0] == steps and app.state.final is not None
        await pilot.press("home", "pagedown")
        assert app.state.view.hand_number == 1
        assert "Replay" in str(app.screen.query_one("#whatnow").render())
        # Past the start: the backend asks for the bell by a message, the app rings it.
        rung: list[int] = []
        app.bell = lambda: rung.append(1)  # type: ignore[method-assign]
        await pilot.press("home", "left")
        await pilot.pause()
        assert app.state.replay[0] == 0 and rung == [1]


def test_replay_refuses_an_unfinished_journal(tmp_path) -> None:
    from clients.tui.replay import JournalError, ReplayBackend

    g = at("oklahoma", 5, phase_is("draw", None))
    path = tmp_path / "running.jsonl"
    write_journal(g, path, ("Ada", "Bob"), end=False)
    with pytest.raises(JournalError, match="cannot be replayed yet"):
        ReplayBackend(path)
    (tmp_path / "junk.jsonl").write_text("not json\n")
    with pytest.raises(JournalError, match="not JSON"):
        ReplayBackend(tmp_path / "junk.jsonl")
    with pytest.raises(JournalError, match="cannot read"):
        ReplayBackend(tmp_path / "missing.jsonl")


def test_replay_cli_exit_code_on_bad_file(tmp_path, capsys) -> None:
    from clients.tui.replay_cli import main

    assert main([str(tmp_path / "nope.jsonl")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_injected_state_is_the_wire_view() -> None:
    """The injected states are what a referee would send: the wire form round-trips."""
    g = Game(seed=1)
    st = state_of(g, g.current_player)
    assert st.view == g.view(g.current_player)
    assert st.legal == tuple(g.legal_actions())


def test_quitting_a_running_network_game_prints_how_to_resume(capsys) -> None:
    from clients.tui.cli import _finish
    from clients.tui.net import NetworkBackend, Seating

    backend = NetworkBackend("tcp://127.0.0.1:7117", "ada", Seating(), token="0123abcd")
    app = OkginApp(backend, state=offer_state())
    assert _finish(app, 0) == 0
    out = capsys.readouterr().out
    # The same command resumes the seat (its token is saved): issue 17 item 2.
    assert "okgin tui --connect tcp://127.0.0.1:7117 --name ada" in out and "okgin tui --resume" in out
    # A finished game (or a spectator) has nothing to resume.
    app.state = state_of(at("oklahoma", 5, lambda g: g.is_over), 1)
    _finish(app, 0)
    assert capsys.readouterr().out == ""
