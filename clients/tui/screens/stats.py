"""Your statistics (``S`` at the table or the game-over sheet, and ``okgin stats``): games
won and lost, streaks, hands won, gins, undercuts and points per hand, for each game
and opponent (clients/tui/stats.py keeps them on this machine)."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Footer, Static

from okgin.wording import variant_words

from ..stats import Stats, StatsStore
from .base import OkginModalScreen


def streak_words(streak: int) -> str:
    """``won 3`` / ``lost 2`` / ``-``: the games won (or lost) in a row, up to the last."""
    if streak > 0:
        return f"won {streak}"
    if streak < 0:
        return f"lost {-streak}"
    return "-"


def stats_table(stats: Stats) -> Table:
    """One row per game and opponent(s), most recently played first; narrow enough for
    an 80-column terminal (two-line headers, hands as won/played)."""
    t = Table(expand=False, box=None, padding=(0, 1), pad_edge=False, header_style="bold")
    for name, justify in (("Opponent", "left"), ("Game", "left"), ("Won-\nlost", "right"), ("Streak", "left"),
                          ("Hands\nwon", "right"), ("Gins", "right"), ("Under-\ncuts", "right"),
                          ("Points\n/hand", "right")):
        t.add_column(name, justify=justify, overflow="fold")  # type: ignore[arg-type]
    for r in stats.sorted_records():
        won_lost = f"{r.won}-{r.lost}" + (f"-{r.drawn}" if r.drawn else "")
        t.add_row(" & ".join(r.opponents), "Box" if r.variant == "box" else "Oklahoma", won_lost,
                  streak_words(r.streak), f"{r.hands_won}/{r.hands}", str(r.gins), str(r.undercuts),
                  f"{r.average_points:.1f}")
    return t


def stats_headline(stats: Stats) -> str:
    """``23 games: 14 won, 9 lost · now won 2 in a row · best 5 in a row``."""
    if not stats.records:
        return "No games yet: a game played to its end here is counted (watching and replays are not)."
    won = sum(r.won for r in stats.records)
    lost = sum(r.lost for r in stats.records)
    drawn = sum(r.drawn for r in stats.records)
    text = f"{stats.games} game{'s' if stats.games != 1 else ''}: {won} won, {lost} lost" + (f", {drawn} drawn" if drawn else "")
    if stats.streak:
        text += f" · now {streak_words(stats.streak)} in a row"
    if stats.best_streak:
        text += f" · best {stats.best_streak} won in a row"
    return text


def variants_line(stats: Stats) -> str:
    """Won and lost per game (Oklahoma Gin, Gin in the Box), when both were played."""
    by: dict[str, list[int]] = {}
    for r in stats.records:
        w = by.setdefault(r.variant, [0, 0])
        w[0] += r.won
        w[1] += r.lost
    if len(by) < 2:
        return ""
    return " · ".join(f"{variant_words(v)} {w}-{lost}" for v, (w, lost) in sorted(by.items()))


#: What the columns count, under the table.
LEGEND = ("Hands won: of the hands you played (in the Box, not those you sat out). Gins and undercuts: "
          "yours. Points/hand: the points you scored per hand played. Streak: the games won (or lost) in a row, up "
          "to the last.")


class StatsScreen(OkginModalScreen[None]):
    """The statistics kept on this machine; Escape (or the button) goes back."""

    BINDINGS = [Binding("escape,q,S,enter", "close", "Back")]

    def __init__(self, store: StatsStore | None = None) -> None:
        super().__init__()
        self.store = store or StatsStore()
        self.stats, self.notice = self.store.load()

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static("Your statistics", classes="dialog-title")
            with VerticalScroll(id="stats-body"):
                if self.notice:
                    yield Static(Text(self.notice, style="bold yellow"), id="stats-notice")
                yield Static(Text(stats_headline(self.stats), style="bold"), id="stats-headline")
                if line := variants_line(self.stats):
                    yield Static(line, id="stats-variants")
                if self.stats.records:
                    yield Static(stats_table(self.stats), id="stats-table")
                    yield Static(Text(LEGEND, style="dim"), id="stats-legend")
                yield Static(Text(f"Kept on this machine in {self.store.path}", style="dim"), id="stats-where")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Back (Esc)", id="stats-close", variant="primary", compact=True)
        yield Footer()

    def on_mount(self) -> None:
        if self.notice:
            self.notify(self.notice, severity="warning", timeout=10)

    def on_button_pressed(self, _event: Button.Pressed) -> None:
        self.dismiss(None)

    def action_close(self) -> None:
        self.dismiss(None)
