"""Issue 28, deliverable 5: at a hand's end both hands are laid out as cards, melds
grouped, deadwood marked, layoffs shown in the melds they went on.

The first test plays a hand under Pilot against a real referee on loopback (the
opponent is test_live's protocol client); the others read a known position's summary
(a real engine game through one seat's wire view, ``tests/tui/states.py``), where the
defender lays off. The pictures are in test_snapshots.py (test_hand_summary_*).
"""

from __future__ import annotations

from clients.tui.app import OkginApp
from clients.tui.options import DisplayOptions
from clients.tui.screens.summary import HandSummaryScreen
from clients.tui.widgets.cards import card_label
from clients.tui.widgets.laid_out import LAID, LaidOutHand
from okgin import HandResult

from .states import at, state_of
from .test_live import SIZE, Table, human_app, play_turn, until

OPTS = DisplayOptions()


def rendered(widget: LaidOutHand) -> list[str]:
    """The widget's lines as the screen shows them (at its laid-out width)."""
    return widget.render().plain.split("\n")


def card_column(lines: list[str], label: str) -> int:
    """Where a card's label is drawn: the cell after a frame's side (``┃8♣ ┃``)."""
    for line in lines:
        for side in ("┃", "│"):
            i = line.find(side + label)
            if i >= 0:
                return i + 1
    raise AssertionError(f"{label} is not drawn:\n" + "\n".join(lines))


def drawn_labels(lines: list[str]) -> set[str]:
    """Every card label in the card rows (between frame sides)."""
    import re

    return set(re.findall(r"[┃│]((?:10|[2-9AJQK])[♠♥♦♣])\s*[┃│]", "\n".join(lines)))


async def test_a_live_hand_ends_with_both_hands_drawn_as_cards() -> None:
    """A whole hand against a real referee: its summary draws every card of both laid-out
    hands, melded cards in heavy frames over a bracket naming the meld, the deadwood
    under "deadwood N", the knocker's face-down discard under "discard"."""
    async with Table(seed=3) as table:
        app = human_app(table)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.state.view is not None)
            for _ in range(400):
                await until(pilot, lambda: app.state.my_turn or isinstance(app.screen, HandSummaryScreen))
                if isinstance(app.screen, HandSummaryScreen):
                    if app.screen.result.outcome != "drawn":
                        break
                    await pilot.press("enter")  # a drawn hand shows no cards: play the next one
                    continue
                seq = app.state.seq
                await play_turn(pilot, app)
                await until(pilot, lambda s=seq: app.state.seq != s or isinstance(app.screen, HandSummaryScreen))
            screen = app.screen
            assert isinstance(screen, HandSummaryScreen)
            await pilot.pause()
            r: HandResult = screen.result
            assert r.knocker_layout is not None and r.defender_layout is not None
            knocker = screen.query_one("#summary-knocker", LaidOutHand)
            defender = screen.query_one("#summary-defender", LaidOutHand)
            assert knocker.size.width > 0 and knocker.size.height >= 5  # on screen, not squeezed away
            k_lines, d_lines = rendered(knocker), rendered(defender)
            kl, dl = r.knocker_layout, r.defender_layout
            laid = [c for c, _ in dl.layoffs]
            k_cards = [c for m in kl.melds for c in m] + list(kl.deadwood_cards) + laid + [r.knock_discard]
            assert drawn_labels(k_lines) == {card_label(c, OPTS) for c in k_cards if c is not None}
            d_cards = [c for m in dl.arrangement.melds for c in m] + list(dl.arrangement.deadwood_cards)
            assert drawn_labels(d_lines) == {card_label(c, OPTS) for c in d_cards}
            # Melded (and laid-off) cards have heavy frames; the rest light ones.
            assert "\n".join(k_lines).count("┏") == sum(len(m) for m in kl.melds) + len(laid)
            assert "\n".join(d_lines).count("┏") == sum(len(m) for m in dl.arrangement.melds)
            assert ("deadwood" in "\n".join(k_lines)) == bool(kl.deadwood_cards)
            assert "discard" in "\n".join(k_lines)
            # The summary names who did what above each hand.
            heads = [str(w.render()) for w in screen.query(".summary-who")]
            assert heads[0].startswith(app.state.name(r.knocker)) and f"deadwood {kl.deadwood}" in heads[0]
            assert heads[1].startswith(app.state.name(r.defender)) and f"deadwood {dl.deadwood}" in heads[1]
            await pilot.press("enter")
            assert not isinstance(app.screen, HandSummaryScreen)


def layoff_game():
    """Seed 11: a knock where the defender lays off (the snapshot test's position)."""
    return at("oklahoma", 11, lambda g: any(r.defender_layout is not None and r.defender_layout.layoffs for r in g.results))


async def _summary_lines(size: tuple[int, int], opts: DisplayOptions = OPTS) -> tuple[HandResult, list[str], list[str], str]:
    g = layoff_game()
    app = OkginApp(state=state_of(g, 0), options=opts, summaries=False, cursor_blink=False)
    async with app.run_test(size=size) as pilot:
        app.push_screen(HandSummaryScreen(g.results[-1]))
        await pilot.pause()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, HandSummaryScreen)
        knocker = screen.query_one("#summary-knocker", LaidOutHand)
        defender = screen.query_one("#summary-defender", LaidOutHand)
        width = knocker.size.width
        heads = " / ".join(str(w.render()) for w in screen.query(".summary-who"))
        k, d = rendered(knocker), rendered(defender)
        assert all(len(line) <= width for line in k + d), (width, k, d)  # nothing cut at the edge
        return g.results[-1], k, d, heads


async def test_layoffs_are_drawn_in_the_meld_they_went_on() -> None:
    r, k, d, heads = await _summary_lines((120, 40))
    assert r.defender_layout is not None and r.defender_layout.layoffs
    for card, _meld in r.defender_layout.layoffs:
        label = card_label(card, OPTS)
        col = card_column(k, label)
        # "laid" stands right above the card, in the knocker's row, and the card has the
        # heavy frame of a melded card (it belongs to that meld now).
        row = next(i for i, line in enumerate(k) if line[col - 1:].startswith("┃" + label))
        assert k[row - 2][col - 1:col - 1 + 5].strip() == LAID
        assert k[row - 1][col - 1] == "┏"
        assert label not in drawn_labels(d)  # not in the defender's own cards any more
        assert f"laid off {label}" in heads


async def test_the_summary_fits_a_small_terminal() -> None:
    """At the smallest size okgin draws (60x18), the groups go on more rows, none cut."""
    r, k, _d, _ = await _summary_lines((60, 20))
    assert r.knocker_layout is not None
    assert sum(1 for line in k if "┏" in line or "╭" in line) >= 2  # the knocker's groups on two rows
    assert drawn_labels(k) >= {card_label(c, OPTS) for m in r.knocker_layout.melds for c in m}
