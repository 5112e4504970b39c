"""Gin in the Box for a person at the keyboard (issue 17 part 1), against the real
embedded referee and built-in bots of ``okgin play``, under Pilot.

Nothing here measures time: the pacing is checked by the order of what happened (each
move of a hand the human sits out comes after a pause the house reported, the bots do
not move while a summary waits), and the advice window by the captain playing the
suggestion (a window that did not end when the advice arrived would outlast ``until``).
"""

from __future__ import annotations

import contextlib
import itertools

from textual.css.query import NoMatches

from clients.tui.app import OkginApp
from clients.tui.house import House, Pacing
from clients.tui.model import TableState
from clients.tui.net import NetworkBackend, Seating
from clients.tui.screens.game_over import GameOverScreen
from clients.tui.screens.summary import HandSummaryScreen
from clients.tui.screens.table import TableScreen
from okgin import Action, RuleSet

from .test_live import play_turn, until

SIZE = (80, 24)


SITTER_FIRST = 2  # this seed's role draw puts seat 0 (the human) out of the first hand


def box_house(pacing: Pacing, seed: int = SITTER_FIRST) -> House:
    return House(RuleSet(variant="box", target_score=40), ["random", "random"], human="ada", seed=seed, pacing=pacing)


def wired_app(house: House) -> OkginApp:
    """As ``okgin play`` wires it: the gate closed until the table is up."""
    house.pacing.set_ready(False)
    endpoint = house.start()
    backend = NetworkBackend(endpoint, house.human, Seating(mode="token"), token=house.human_token)
    app = OkginApp(backend, state=TableState(), cursor_blink=False)
    app.ready_hook = house.pacing.set_ready
    app.pace = house.pacing.pace
    return app


async def play_until(pilot, app: OkginApp, cond, limit_moves: int = 3000) -> None:
    """Play the human's turns and close summaries until ``cond()``."""
    for _ in range(limit_moves):
        if cond():
            return
        await until(
            pilot, lambda: cond() or app.state.my_turn or isinstance(app.screen, HandSummaryScreen | GameOverScreen), limit=60
        )
        if cond():
            return
        if isinstance(app.screen, GameOverScreen):
            raise AssertionError("the game ended first")
        if isinstance(app.screen, HandSummaryScreen):
            await pilot.press("enter")
            await pilot.pause()
        elif app.state.my_turn:
            seq = app.state.seq
            await play_turn(pilot, app)
            await until(pilot, lambda s=seq: app.state.seq != s or app.state.game_over, limit=60)
    raise AssertionError("condition not reached")


async def test_the_first_screen_is_the_table_and_summaries_wait_for_a_key() -> None:
    waits: list[tuple[str, int]] = []
    house = box_house(Pacing(pace=0.0, advice_window=0.0, on_wait=lambda *w: waits.append(w)))
    app = wired_app(house)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.state.view is not None)
            assert app.state.is_sitter  # the first hand is played by the bots
            assert isinstance(app.screen, TableScreen)  # never a summary of an unseen hand
            await play_until(pilot, app, lambda: isinstance(app.screen, HandSummaryScreen))
            shown = app.screen
            assert isinstance(shown, HandSummaryScreen)
            done = shown.result.hand_number
            # The referee goes on to the next hand; the summary stays until the key.
            await until(
                pilot,
                lambda: (app.state.view is not None and app.state.view.hand_number == done + 1) or app.state.game_over,
                limit=30,
            )
            await pilot.pause()
            assert app.screen is shown
            if app.state.is_sitter:  # the bots wait for the human to be back at the table
                await until(pilot, lambda: any(w[0] == "ready" for w in waits))
                assert not app.state.view.events
            await pilot.press("enter")
            await until(pilot, lambda: app.screen is not shown)
            assert house.pacing.acked_hand == done
    finally:
        house.stop()


async def test_a_hand_the_human_sits_out_is_played_at_a_pace_and_shown_move_by_move() -> None:
    log: list[tuple] = []
    house = box_house(Pacing(pace=0.01, advice_window=0.01, on_wait=lambda kind, seat: log.append(("wait", kind, seat))))
    app = wired_app(house)
    try:
        async with app.run_test(size=SIZE) as pilot:
            seen: list[tuple[int, int]] = []
            titles: list[str] = []

            def on_state(st: TableState) -> None:
                if st.is_sitter and st.view:
                    seen.append((st.view.hand_number, len(st.view.events)))
                    with contextlib.suppress(NoMatches):
                        titles.append(str(app.screen.query_one("#handbox").border_title))

            app.watch(app, "state", on_state, init=False)
            await play_until(pilot, app, lambda: app.state.is_sitter and app.state.view.phase != "game_over")
            hand = app.state.view.hand_number
            assert hand == 0  # the first hand, so every pause in the log is of this hand or later
            await until(pilot, lambda: isinstance(app.screen, HandSummaryScreen | GameOverScreen), limit=60)
            r = app.state.results[-1]
            assert r.hand_number == hand
            counts = sorted({n for h, n in seen if h == hand})
            moves = counts[-1]
            pauses = [w for w in log if w[1] in ("pace", "advice")]
            # Every move of the hand came after a pause, and the table drew each one.
            assert moves > 3 and len(pauses) >= moves - 1
            assert all(b - a == 1 for a, b in itertools.pairwise(counts))
            # The table said so while it played them (the last move may be the captain's,
            # whose title is the advice window's, so the pace is looked for over the hand).
            assert any("a move every 0.01 s" in t for t in titles), titles[-5:]
    finally:
        house.stop()


async def test_the_bot_captain_waits_for_the_human_sitter_and_plays_the_suggestion() -> None:
    house = box_house(Pacing(pace=0.0, advice_window=45.0))  # cut short by the advice, or `until` gives up
    app = wired_app(house)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await play_until(pilot, app, lambda: app.state.can_advise and bool(app.state.advice_legal))
            st = app.state
            kinds = {a.kind for a in st.advice_legal}
            before = len(st.view.events)
            if "discard" in kinds:
                await pilot.press("enter")
                suggested = Action("discard", app.screen.query_one("HandWidget").selected)
            else:
                kind = next(k for k in ("pass", "draw_stock", "take", "draw_discard") if k in kinds)
                await pilot.press({"pass": "p", "draw_stock": "s", "take": "t", "draw_discard": "d"}[kind])
                suggested = Action(kind)
            await until(pilot, lambda: app.state.view is not None and len(app.state.view.events) > before, limit=20)
            ev = app.state.view.events[before]
            assert ev.seat == st.view.hand_of and ev.kind == suggested.kind
            assert any(a.kind == suggested.kind for b in house.house_bots for a in b.followed)
            assert app.state.view.advice and app.state.view.advice[-1].action is not None
    finally:
        house.stop()


CAPTAIN_FIRST = 1  # this seed's role draw makes seat 0 (the human) captain of the first hand


async def test_the_captain_reads_its_bot_sitters_advice_as_the_table_writes_cards() -> None:
    """The simple bot sitter writes "I would discard Ts" (card codes); the captain's
    advice panel and the log show the card as the table does (10♠), never the code."""
    import re

    from textual.widget import Widget

    from clients.tui.widgets.cards import card_label

    house = House(
        RuleSet(variant="box", target_score=40),
        ["simple", "simple"],
        human="ada",
        seed=CAPTAIN_FIRST,
        pacing=Pacing(pace=0.0, advice_window=0.0),
    )
    app = wired_app(house)
    code = re.compile(r"\b(?:[2-9TJQKA])[shdc]\b")
    try:
        async with app.run_test(size=(120, 40)) as pilot:

            def advised_a_card() -> bool:
                v = app.state.view
                return (
                    v is not None
                    and app.state.role == "captain"
                    and any(a.action is not None and a.action.card is not None and a.text for a in v.advice)
                )

            await play_until(pilot, app, advised_a_card)
            await pilot.pause()
            advice = next(a for a in app.state.view.advice if a.action is not None and a.action.card is not None and a.text)
            assert code.search(advice.text), advice.text  # the bot really wrote a code
            label = card_label(advice.action.card, app.options)
            screen = app.screen
            for selector in ("#advice", "#log-narrow"):
                w = screen.query_one(selector, Widget)
                text = " ".join(strip.text for strip in w.render_lines(w.region.reset_offset))
                assert label in text and not code.search(text), (selector, text)
    finally:
        house.stop()
