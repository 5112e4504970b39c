"""The lobby (quick match, named table, a new table with a time control) and spectating,
against a real referee on loopback; the lobby's looks as a snapshot (no socket)."""

from __future__ import annotations

import asyncio

from textual.widgets import Checkbox, Input, OptionList, Select

from clients.tui.app import OkginApp
from clients.tui.model import TableState
from clients.tui.net import NetworkBackend, Seating
from clients.tui.screens.lobby import parse_rules
from clients.tui.screens.summary import HandSummaryScreen
from clients.tui.screens.table import TableScreen
from okgin.rules import HOUSE_RULES
from referee.config import RefereeConfig
from referee.server import Referee

from .test_live import Table, click_button, opponent, until

SIZE = (80, 24)


def test_lobby_snapshot(snap_compare) -> None:
    app = OkginApp(start="lobby", lobby={"endpoint": "tcp://127.0.0.1:7117", "name": "ada", "refresh": False}, cursor_blink=False)
    assert snap_compare(app, terminal_size=SIZE)


def test_lobby_snapshot_large(snap_compare) -> None:
    """The new-game screen at 120x40: the preset choice and one line per house rule."""
    app = OkginApp(start="lobby", lobby={"endpoint": "tcp://127.0.0.1:7117", "name": "ada", "refresh": False}, cursor_blink=False)
    assert snap_compare(app, terminal_size=(120, 40))


def test_parse_rules_keeps_only_changes() -> None:
    assert parse_rules("", "oklahoma") == {}
    assert parse_rules("knock_limit=10 undercut_bonus=25", "oklahoma") == {"knock_limit": 10, "undercut_bonus": 25}
    assert parse_rules("knock_limit=10", "box") == {}  # the box game's default already


async def _fill(pilot, app: OkginApp, **values: str) -> None:
    for ident, value in values.items():
        app.screen.query_one(f"#{ident}", Input).value = value
    await pilot.pause()


async def test_lobby_quick_match_starts_a_game() -> None:
    ref = Referee(RefereeConfig(bind="tcp://127.0.0.1:0", journal_dir=None))
    endpoint = await ref.start()
    stop = asyncio.Event()
    try:
        app = OkginApp(start="lobby", lobby={"endpoint": endpoint, "name": "ada"}, cursor_blink=False)
        async with app.run_test(size=SIZE) as pilot:
            status = app.screen.query_one("#lobby-status")
            await until(pilot, lambda: "no tables yet" in str(status.render()))
            # Someone else is waiting in the quick-match queue with the default rules.
            task = asyncio.create_task(opponent(endpoint, None, stop, join={"type": "queue", "variant": "oklahoma"}))
            await click_button(pilot, app, "#quick")
            await until(pilot, lambda: isinstance(app.screen, TableScreen) and app.state.view is not None)
            assert set(app.state.names) == {"ada", "opponent"}
            assert app.state.rules is not None and app.state.rules.variant == "oklahoma"
            stop.set()
            await task
    finally:
        stop.set()
        await ref.stop()


async def test_lobby_lists_tables_and_creates_one_with_a_clock() -> None:
    # The lobby creates tables with an admin request: a local referee with admin open.
    ref = Referee(RefereeConfig(bind="tcp://127.0.0.1:0", journal_dir=None, open_admin=True))
    endpoint = await ref.start()
    ref.create_table(table="friday", variant="oklahoma")
    stop = asyncio.Event()
    try:
        app = OkginApp(start="lobby", lobby={"endpoint": endpoint, "name": "ada"}, cursor_blink=False)
        async with app.run_test(size=SIZE) as pilot:
            tables = app.screen.query_one("#tables", OptionList)
            await until(pilot, lambda: tables.option_count == 1)
            assert "friday" in str(tables.get_option_at_index(0).prompt)
            # A bad rule is refused with the engine's sentence, nothing is sent.
            await _fill(pilot, app, rules="knock_limit=eleven", tablename="timed", move="30")
            await click_button(pilot, app, "#create")
            assert "knock_limit" in str(app.screen.query_one("#lobby-status").render())
            # A new table with 30 s a move: created by an admin request, then joined.
            await _fill(pilot, app, rules="knock_limit=10")
            await click_button(pilot, app, "#create")
            await until(pilot, lambda: isinstance(app.screen, TableScreen) and app.state.table == "timed")
            assert "waiting for 1 more player" in (app.state.notice or "")
            task = asyncio.create_task(opponent(endpoint, None, stop, join={"type": "join", "table": "timed", "any_rules": True}))
            await until(pilot, lambda: app.state.view is not None)
            assert app.state.rules is not None and app.state.rules.knock_limit == 10
            assert ref.tables["timed"].clock.move_ms == 30000
            if not app.state.my_turn:
                await until(pilot, lambda: app.state.my_turn)
            # The referee's clock for this move is on screen.
            assert "your time 0:" in str(app.screen.query_one("#handbox").border_title)
            stop.set()
            await task
    finally:
        stop.set()
        await ref.stop()


def test_parse_rules_takes_a_preset_then_house_rules_then_assignments() -> None:
    assert parse_rules("", "oklahoma", "classic-oklahoma") == {
        "ace_upcard_gin_only": True, "spade_upcard_doubles": True, "classic_bonuses": True}
    assert parse_rules("undercut_bonus=30", "oklahoma", None, ("standard_gin",)) == {"knock_limit": 10, "undercut_bonus": 30}
    assert parse_rules("", "box", None, ("standard_gin",)) == {"undercut_bonus": 25}  # the box knocks at 10 anyway


async def test_lobby_creates_a_table_with_a_preset_and_a_house_rule() -> None:
    ref = Referee(RefereeConfig(bind="tcp://127.0.0.1:0", journal_dir=None, open_admin=True))
    endpoint = await ref.start()
    try:
        app = OkginApp(start="lobby", lobby={"endpoint": endpoint, "name": "ada"}, cursor_blink=False)
        async with app.run_test(size=SIZE) as pilot:
            status = app.screen.query_one("#lobby-status")
            await until(pilot, lambda: "no tables yet" in str(status.render()))
            # One line per house rule, each with its sentence; the presets by name.
            boxes = {str(c.label) for c in app.screen.query(Checkbox)}
            assert boxes == {line for _opts, line in HOUSE_RULES.values()}
            app.screen.query_one("#preset", Select).value = "classic-oklahoma"
            await _fill(pilot, app, tablename="house")
            await pilot.click("#house-standard_gin")
            await pilot.pause()
            assert app.screen.query_one("#house-standard_gin", Checkbox).value
            await click_button(pilot, app, "#create")
            await until(pilot, lambda: app.state.table == "house" and app.state.rules is not None)
            rules = app.state.rules  # from `seated`
            assert rules.ace_upcard_gin_only and rules.spade_upcard_doubles and rules.classic_bonuses
            assert rules.knock_limit == 10 and rules.undercut_bonus == 25
            assert ref.tables["house"].rules.classic_bonuses
    finally:
        await ref.stop()


async def test_watch_a_table_as_a_spectator() -> None:
    async with Table(seed=2) as table:
        # Fill seat 0 too: the spectator watches two protocol clients play.
        table.tasks.append(asyncio.create_task(opponent(table.endpoint, table.tokens[0], table.stop)))
        backend = NetworkBackend(table.endpoint, "viewer", Seating(mode="watch", table="live"))
        app = OkginApp(backend, state=TableState(spectator=True), cursor_blink=False)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.state.view is not None)
            assert app.state.spectator and app.state.view.seat is None
            await until(pilot, lambda: isinstance(app.screen, HandSummaryScreen), limit=60)
            # A spectator never holds a card, and cannot play or rematch.
            assert app.state.view.hand is None and app.state.legal == ()
            await pilot.press("enter")
            table_screen = next(s for s in app.screen_stack if isinstance(s, TableScreen))
            text = str(table_screen.query_one("#whatnow").render())
            assert "Spectating" in text or "over" in text
            assert "r" not in {b.binding.key for b in table_screen.active_bindings.values() if b.binding.action == "rematch"}


def test_okgin_tui_takes_the_same_rule_flags_as_okgin_play(monkeypatch) -> None:
    """``okgin tui --connect ... --preset classic-oklahoma --standard-gin --rule ...``:
    the seating asks for the combined rules, in okgin play's order (preset, house rules,
    then NAME=VALUE)."""
    from clients.tui import cli

    seen: list = []
    monkeypatch.setattr(OkginApp, "run", lambda self, *a, **k: seen.append(self.backend.seating) or 0)
    assert cli.main(["--connect", "127.0.0.1:7117", "--name", "ann", "--table", "t9", "--preset", "classic-oklahoma",
                     "--standard-gin", "--rule", "target_score=50"]) == 0
    rules = seen[0].rules
    assert rules["ace_upcard_gin_only"] and rules["spade_upcard_doubles"] and rules["classic_bonuses"]
    assert rules["knock_limit"] == 10 and rules["undercut_bonus"] == 25 and rules["target_score"] == 50
    assert cli.main(["--connect", "127.0.0.1:7117", "--preset", "nonsense"]) == 2
