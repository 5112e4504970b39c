"""How the TUI looks: SVG snapshots at 80x24 and 120x40, colour and ASCII, every phase,
both variants, all three Gin-in-the-Box roles, spectators, and the modal screens.

Driven by injected state (``tests/tui/states.py``: a real engine game, seen through the
wire form of one seat's view), never a live socket, so every picture is reproducible.
Update the pictures after a deliberate change with ``pytest tests/tui --snapshot-update``
and look at them (``snapshot_report.html``) before committing.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from textual.pilot import Pilot

from clients.tui.app import OkginApp
from clients.tui.model import LOST, TableState
from clients.tui.options import DisplayOptions
from okgin import Game

from .states import at, game_over, phase_is, state_of, with_error

SMALL = (80, 24)
LARGE = (120, 40)
COLOUR = DisplayOptions()
ASCII = DisplayOptions(ascii=True)
FOUR = DisplayOptions(four_colour=True)


def _app(state: TableState, opts: DisplayOptions = COLOUR) -> OkginApp:
    return OkginApp(state=state, options=opts, summaries=False, cursor_blink=False)


def ok_game(phase: str, seat: int, *, knock: bool | None = None, hand: int = 0, seed: int = 5) -> Game:
    return at("oklahoma", seed, phase_is(phase, seat, knock=knock, hand=hand))


# (name, builder of the state) for the table in each situation.
TABLES: dict[str, Callable[[], TableState]] = {
    # Oklahoma Gin, seat 1 of seed 5 is the non-dealer (it has the upcard offer).
    "ok_offer": lambda: state_of(ok_game("offer", 1), 1),
    "ok_draw": lambda: state_of(ok_game("draw", 1, hand=1), 1),
    "ok_discard_knock": lambda: state_of(ok_game("discard", 1, knock=True), 1),
    "ok_discard": lambda: state_of(at("oklahoma", 3, phase_is("discard", 0)), 0),
    "ok_waiting": lambda: state_of(ok_game("draw", 0, hand=1), 1),
    "ok_spectator": lambda: state_of(ok_game("discard", 0, hand=1), None, spectator=True),
    # Gin in the Box, seed 7: hand 2 has box 0, captain 2, sitter 1.
    "box_box": lambda: state_of(at("box", 7, phase_is("offer", None, hand=1)), 0),
    "box_captain": lambda: state_of(at("box", 7, phase_is("discard", None, hand=1)), 2),
    "box_sitter": lambda: state_of(at("box", 7, phase_is("discard", None, hand=1)), 1),
    "box_spectator": lambda: state_of(at("box", 7, phase_is("draw", None, hand=1)), None, spectator=True),
}


@pytest.mark.parametrize("name", sorted(TABLES))
def test_table_small(snap_compare, name: str) -> None:
    assert snap_compare(_app(TABLES[name]()), terminal_size=SMALL)


@pytest.mark.parametrize("name", ["ok_offer", "ok_discard_knock", "box_captain", "box_sitter", "box_box", "ok_spectator"])
def test_table_large(snap_compare, name: str) -> None:
    assert snap_compare(_app(TABLES[name]()), terminal_size=LARGE)


@pytest.mark.parametrize("name", ["ok_discard_knock", "box_sitter", "ok_draw"])
def test_table_ascii(snap_compare, name: str) -> None:
    assert snap_compare(_app(TABLES[name](), ASCII), terminal_size=SMALL)


def test_table_ascii_large(snap_compare) -> None:
    assert snap_compare(_app(TABLES["box_captain"](), ASCII), terminal_size=LARGE)


@pytest.mark.parametrize("seed,what", [(7, "spade_doubles"), (3, "ace_gin_only")])
def test_knock_limit_options_shown(snap_compare, seed: int, what: str) -> None:
    """Spade upcard doubling and ace-means-gin are announced beside the knock limit."""
    rules = {"spade_upcard_doubles": True, "ace_upcard_gin_only": True}
    g = at("oklahoma", seed, phase_is("offer", None), rules=rules)
    assert (g.hand.doubled if what == "spade_doubles" else g.hand.knock_limit == 0)
    assert snap_compare(_app(state_of(g, g.current_player)), terminal_size=SMALL)


def test_four_colour_deck(snap_compare) -> None:
    assert snap_compare(_app(TABLES["ok_discard_knock"](), FOUR), terminal_size=SMALL)


def test_no_color(snap_compare, monkeypatch: pytest.MonkeyPatch) -> None:
    """NO_COLOR: Textual drops the colours; selection and melds stay visible by shape."""
    monkeypatch.setenv("NO_COLOR", "1")
    assert snap_compare(_app(TABLES["ok_discard_knock"]()), terminal_size=SMALL)


def test_illegal_move_sentence(snap_compare) -> None:
    st = with_error(TABLES["ok_discard"](), "knocking needs deadwood at most 1; discarding Q♥ leaves 50")
    assert snap_compare(_app(st), terminal_size=SMALL)


def test_connection_lost_banner(snap_compare) -> None:
    from dataclasses import replace

    st = replace(TABLES["ok_waiting"](), connection=LOST, notice="retrying tcp://127.0.0.1:7117")
    assert snap_compare(_app(st), terminal_size=SMALL)


def test_cursor_moved(snap_compare) -> None:
    assert snap_compare(_app(TABLES["ok_discard"]()), terminal_size=SMALL, press=["left", "left", "left"])


def test_sort_by_suit(snap_compare) -> None:
    assert snap_compare(_app(TABLES["ok_discard_knock"]()), terminal_size=SMALL, press=["o"])


# ------------------------------------------------------------------ modal screens
def _push_summary(pilot: Pilot) -> None:
    from clients.tui.screens.summary import HandSummaryScreen

    app = pilot.app
    assert isinstance(app, OkginApp)
    app.push_screen(HandSummaryScreen(app.state.results[-1]))


def summary_state(variant: str, seed: int, seat: int) -> TableState:
    g = at(variant, seed, lambda g: len(g.results) >= 1 and g.results[-1].outcome != "drawn")
    return state_of(g, seat)


@pytest.mark.parametrize("size", [SMALL, LARGE], ids=["80x24", "120x40"])
def test_hand_summary_oklahoma(snap_compare, size: tuple[int, int]) -> None:
    assert snap_compare(_app(summary_state("oklahoma", 5, 1)), terminal_size=size, run_before=_push_summary)


def test_hand_summary_with_layoffs(snap_compare) -> None:
    """A knock where the defender lays off (seed chosen for it)."""
    g = at("oklahoma", 11, lambda g: any(r.defender_layout is not None and r.defender_layout.layoffs for r in g.results))
    assert snap_compare(_app(state_of(g, 0)), terminal_size=SMALL, run_before=_push_summary)


def test_hand_summary_box_ascii(snap_compare) -> None:
    assert snap_compare(_app(summary_state("box", 7, 1), ASCII), terminal_size=SMALL, run_before=_push_summary)


def _push_game_over(pilot: Pilot) -> None:
    from clients.tui.screens.game_over import GameOverScreen

    pilot.app.push_screen(GameOverScreen())


@pytest.mark.parametrize("variant,size", [("oklahoma", SMALL), ("oklahoma", LARGE), ("box", SMALL)])
def test_game_over(snap_compare, variant: str, size: tuple[int, int]) -> None:
    g = at(variant, 5, game_over)
    assert snap_compare(_app(state_of(g, 0)), terminal_size=size, run_before=_push_game_over)


@pytest.mark.parametrize("size", [SMALL, LARGE], ids=["80x24", "120x40"])
def test_help(snap_compare, size: tuple[int, int]) -> None:
    assert snap_compare(_app(TABLES["ok_offer"]()), terminal_size=size, press=["question_mark"])


def test_advice_note(snap_compare) -> None:
    assert snap_compare(_app(TABLES["box_sitter"]()), terminal_size=SMALL, press=["m", *"keep hearts"])


# ------------------------------------------- issue 17: network play, the box, house rules
# Each new screen at both sizes. Countdowns read the app's injected clock (OkginApp's
# ``clock``), frozen here, so "forfeits in 38 s" is the same on every run without sleeping.
BOTH = pytest.mark.parametrize("size", [SMALL, LARGE], ids=["80x24", "120x40"])
FROZEN_NOW = 1000.0  # the frozen monotonic clock


def _frozen() -> float:
    return FROZEN_NOW


def _net_app(state: TableState, opts: DisplayOptions = COLOUR) -> OkginApp:
    return OkginApp(state=state, options=opts, summaries=False, cursor_blink=False, clock=_frozen)


def away_state() -> TableState:
    """bob at seat 1, waiting for ann (seat 0) to draw, whose connection went 7 s ago."""
    from dataclasses import replace

    st = TABLES["ok_waiting"]()
    return replace(st, names=("ann", "bob"), extra={**st.extra, "away": {0: ("ann", FROZEN_NOW + 38.0)},
                                                   "disconnect_grace_ms": 45000})


@BOTH
def test_opponent_disconnected_countdown(snap_compare, size: tuple[int, int]) -> None:
    """The banner reads "ann disconnected — seat forfeits in 38 s" (frozen clock)."""
    assert snap_compare(_net_app(away_state()), terminal_size=size)


def test_connection_lost_banner_large(snap_compare) -> None:
    """(80x24: test_connection_lost_banner.)"""
    from dataclasses import replace

    st = replace(TABLES["ok_waiting"](), connection=LOST, notice="retrying tcp://127.0.0.1:7117")
    assert snap_compare(_app(st), terminal_size=LARGE)


@BOTH
def test_no_referee_retrying(snap_compare, size: tuple[int, int]) -> None:
    """Before any table: the connecting sentence, its retry countdown at 8 s."""
    from clients.tui.model import CONNECTING

    st = TableState(connection=CONNECTING,
                    notice="No referee answers at tcp://127.0.0.1:7117. Is it running? Retrying in 8 s (q quits).")
    assert snap_compare(_app(st), terminal_size=size)


def _push_quit(pilot: Pilot) -> None:
    from clients.tui.screens.quit_confirm import QuitConfirmScreen

    pilot.app.push_screen(QuitConfirmScreen(45000, "5f0c" * 8))


@BOTH
def test_quit_confirmation(snap_compare, size: tuple[int, int]) -> None:
    """q at a network game: leave for real? The seat is held for 45 s."""
    assert snap_compare(_net_app(away_state()), terminal_size=size, run_before=_push_quit)


@BOTH
def test_quit_confirmation_token_shown(snap_compare, size: tuple[int, int]) -> None:
    """t on the quit confirmation shows the session token with its warning."""
    assert snap_compare(_net_app(away_state()), terminal_size=size, run_before=_push_quit, press=["t"])


def _saved_sessions() -> None:
    """Three saved seats at fixed times, written in the store's format (its own
    ``save`` stamps the wall clock, which a snapshot cannot have)."""
    import json
    from dataclasses import asdict

    from clients.tui.saved_sessions import SavedSession, state_path

    sessions = [
        SavedSession("tcp://127.0.0.1:7117", "ann", "t1", "a" * 32, 1796146800.0),
        SavedSession("tcp://games.example.org:7117", "ann", "", "b" * 32, 1796143200.0),
        SavedSession("tcp://127.0.0.1:7117", "ann", "box-night", "c" * 32, 1796140000.0),
    ]
    path = state_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"format": "okgin-tui-sessions", "version": 1,
                                "sessions": {s.key: asdict(s) for s in sessions}}))


@BOTH
def test_saved_sessions_list(snap_compare, size: tuple[int, int]) -> None:
    """``okgin tui --resume`` with several saved seats: the list to choose from."""
    _saved_sessions()
    assert snap_compare(OkginApp(start="sessions", cursor_blink=False), terminal_size=size)


@BOTH
def test_hand_summary_box_waits(snap_compare, size: tuple[int, int]) -> None:
    """Gin in the Box: the summary waits for the human (no auto-continue, no countdown)."""
    assert snap_compare(_app(summary_state("box", 7, 1)), terminal_size=size, run_before=_push_summary)


@BOTH
def test_sitter_watching_at_a_pace(snap_compare, size: tuple[int, int]) -> None:
    """The hand sat out: the captain's hand, with the pace of the bots' moves."""
    app = _app(TABLES["box_sitter"]())
    app.pace = 1.5
    assert snap_compare(app, terminal_size=size)


def advised_state() -> TableState:
    """The sitter has sent two notes this hand: the log keeps one line for them."""
    from dataclasses import replace

    from okgin import Action, Advice

    st = TABLES["box_sitter"]()
    assert st.view is not None and st.view.seat is not None
    me = st.view.seat
    notes = (Advice(me, None, "keep the diamonds"), Advice(me, Action("draw_stock"), "watch the box"))
    return replace(st, view=replace(st.view, advice=(*st.view.advice, *notes)))


@BOTH
def test_advice_collapsed_in_the_log(snap_compare, size: tuple[int, int]) -> None:
    assert snap_compare(_app(advised_state()), terminal_size=size)


def test_advice_note_large(snap_compare) -> None:
    """(80x24: test_advice_note.)"""
    assert snap_compare(_app(TABLES["box_sitter"]()), terminal_size=LARGE, press=["m", *"keep hearts"])


def test_game_over_box_large(snap_compare) -> None:
    """(80x24: test_game_over[box-size2].)"""
    g = at("box", 5, game_over)
    assert snap_compare(_app(state_of(g, 0)), terminal_size=LARGE, run_before=_push_game_over)


@BOTH
def test_game_over_spectator(snap_compare, size: tuple[int, int]) -> None:
    """A spectator's game-over sheet offers no rematch (only the players have one)."""
    g = at("oklahoma", 5, game_over)
    assert snap_compare(_app(state_of(g, None, spectator=True)), terminal_size=size, run_before=_push_game_over)


async def test_help_says_how_to_set_the_rule_options() -> None:
    """Issue 17 item 4: the help screen names every preset and every house rule with its
    line and its ``okgin play`` flag, and says where the lobby takes them."""
    from textual.widgets import Static

    from clients.tui.screens.help import HelpScreen
    from okgin.rules import HOUSE_RULES, PRESETS

    app = _app(TABLES["ok_offer"]())
    async with app.run_test(size=LARGE) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = app.screen.query_one("#help-text", Static)
        lines = [strip.text for strip in text.render_lines(text.region.reset_offset)]
        shown = " ".join(" ".join(line.split()) for line in lines)
    for name, p in PRESETS.items():
        assert name in shown and " ".join(p.summary.split()[:4]) in shown
    for flag, (_opts, line) in HOUSE_RULES.items():
        assert "--" + flag.replace("_", "-") in shown and line.split(":")[0] in shown
    assert "--preset" in shown and "Preset" in shown and "check box" in shown and "--rule NAME=VALUE" in shown
    assert "Ctrl+T" in shown and "okgin tui --resume" in shown  # the token, and the seat after a crash


def captain_advised_state() -> TableState:
    """The human captain, advised by its (bot) sitter in the bots' card codes: the panel
    and the log show them as the table does (10♠, not Ts)."""
    from dataclasses import replace

    from okgin import Action, Advice

    st = TABLES["box_captain"]()
    v = st.view
    assert v is not None and v.roles is not None and v.hand is not None
    sitter = v.roles.index("sitter")
    card = sorted(v.hand)[-1]
    notes = (Advice(sitter, Action("discard", card), "Ts and 9h are dead; keep Qd"),)
    return replace(st, view=replace(v, advice=(*v.advice, *notes)))


@BOTH
def test_captain_reads_advice_in_table_notation(snap_compare, size: tuple[int, int]) -> None:
    assert snap_compare(_app(captain_advised_state()), terminal_size=size)


def clocks_state() -> TableState:
    """A timed table: bob's own bank runs (received 3.2 s before the frozen now: 1:19
    left of 1:23), ann's is stopped at 2:05, and ann's seat is away."""
    from dataclasses import replace

    from clients.tui.model import ClockReading

    st = TABLES["ok_discard"]()
    return replace(
        st,
        names=("bob", "ann"),
        clocks=(ClockReading(83000, 20000, FROZEN_NOW - 3.2, True), ClockReading(125000, None, FROZEN_NOW, False)),
        extra={**st.extra, "away": {1: ("ann", FROZEN_NOW + 12.5)}},
    )


@BOTH
def test_clocks_and_countdown_frozen(snap_compare, size: tuple[int, int]) -> None:
    """Every countdown on the table reads the app's clock: the picture is the same on
    every run (a clock read from time.monotonic would tick between runs)."""
    assert snap_compare(_net_app(clocks_state()), terminal_size=size)
