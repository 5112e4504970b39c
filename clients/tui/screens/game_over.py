"""Game over: who won, the final scores, a score sheet hand by hand, and a rematch."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Footer, Static

from okgin.wording import game_headline, result_cell, verb

from ..model import TableState
from ..names import column_names
from .base import OkginModalScreen

TERMINATION_TEXT = {
    "timeout": "ran out of time",
    "illegal": "made too many illegal moves",
    "disconnect": "disconnected",
    "abandoned": "the game was abandoned",
    "resigned": "resigned",
    "hand_limit": "the game limit (max_hands, docs/rules.md §3.7.1) was reached: the higher score wins",
}


#: A forfeit's headline says first who lost and why (issue 28: a time forfeit read
#: "ann wins 0 to 0!", as if the game had been played out).
FORFEIT_TEXT = {
    "timeout": ("lost on time", "lose on time"),
    "illegal": ("forfeited: too many illegal moves", "forfeit: too many illegal moves"),
    "disconnect": ("forfeited: not back before the seat's grace ran out", "forfeit: not back before your grace ran out"),
    "resigned": ("resigned", "resigned"),
}


def forfeit_headline(state: TableState) -> str | None:
    """"bob lost on time: You win." (the scores too, if any hand was finished); None if
    the game did not end by a forfeit with a known loser and winner."""
    final = state.final or {}
    why = FORFEIT_TEXT.get(final.get("termination", ""))
    loser, winner = final.get("loser"), final.get("winner")
    if why is None or not isinstance(loser, int) or not isinstance(winner, int):
        return None
    lost = state.name(loser)
    text = f"{lost} {why[1] if lost == 'You' else why[0]}: {verb(state.name(winner), 'win')}"
    scores = final.get("scores") or []
    if state.results and len(scores) > winner:
        return text + f", {scores[winner]} to " + ", ".join(str(x) for i, x in enumerate(scores) if i != winner) + "."
    return text + "."


def headline(state: TableState) -> str:
    v = state.view
    final = state.final or {}
    winner = final.get("winner", v.winner if v is not None else None)
    scores = final.get("scores") or (list(v.scores) if v is not None else [])
    forfeit = forfeit_headline(state)
    if forfeit is not None:
        return forfeit
    if winner is None:
        if final.get("termination") == "hand_limit":
            return "The game limit was reached at equal scores: a draw."
        return "The game ended with no winner."
    if not scores:
        name = state.name(winner)
        return f"{name} {'win' if name == 'You' else 'wins'}!"
    return game_headline(winner, scores, state.name)




def score_sheet(state: TableState) -> Table:
    """One row per hand: outcome, who scored, points, and everyone's running total."""
    v = state.view
    n = v.num_seats if v is not None else (len(state.results[0].scores_after) if state.results else 2)
    t = Table(expand=False, box=None, padding=(0, 1), header_style="bold")
    t.add_column("Hand", justify="right")
    t.add_column("Result")
    t.add_column("Scored by")
    t.add_column("Pts", justify="right")
    for head in column_names([state.name(s) for s in range(n)]):
        t.add_column(head, justify="right")
    for r in state.results:
        outcome = result_cell(r, state.name)
        totals = list(r.scores_after) or [0] * n
        t.add_row(str(r.hand_number + 1), outcome, state.name(r.winner) if r.winner is not None else "-",
                  str(r.points) if r.points else "-", *[str(x) for x in totals])
    return t


class GameOverScreen(OkginModalScreen[None]):
    BINDINGS = [
        Binding("r", "rematch", "Rematch"),
        Binding("r", "lobby", "Back to lobby"),
        Binding("q", "quit", "Quit"),
        Binding("escape", "close", "Back to table"),
        Binding("v", "seed", "Deal seed"),
        Binding("S", "app.stats", "Statistics"),
    ]

    #: The revealed deal seed is shown on ``v`` only: 64 hex digits on every casual
    #: game-over sheet said nothing to most players; those who check a deal ask for it.
    show_seed = False

    def extra_text(self) -> Text:
        """Why the game ended early, the classic totals, and (on ``v``) the deal seed."""
        st: TableState = self.okgin_app.state
        final = st.final or {}
        extra = Text()
        term = final.get("termination")
        if term and term != "normal" and forfeit_headline(st) is None:  # a forfeit's headline says it already
            loser = final.get("loser", final.get("seat"))
            who = state_name(st, loser)
            extra.append(f"Ended early: {who + ' ' if who else ''}{TERMINATION_TEXT.get(term, term)}.\n")
        if final.get("classic_totals"):
            extra.append(
                "With classic bonuses: "
                + ", ".join(f"{st.name(s)} {x}" for s, x in enumerate(final["classic_totals"]))
                + ("  (shutout!)" if final.get("shutout") else "")
                + "\n"
            )
        running = self.okgin_app.running_score()
        if running:
            extra.append(running + "\n", style="bold")
        if final.get("seed") is not None and self.show_seed:
            extra.append(f"Deal seed (revealed): {final['seed']}\n", style="dim")
            if final.get("seed_hash"):
                extra.append(f"Its commitment (seed_hash, sent at the start): {final['seed_hash']}\n", style="dim")
        return extra

    def compose(self) -> ComposeResult:
        st: TableState = self.okgin_app.state
        with Vertical(classes="dialog"):
            yield Static("Game over", classes="dialog-title")
            yield Static(Text(headline(st), style="bold"), id="headline")
            extra = self.extra_text()
            notes = Static(extra, id="final-extra")
            notes.display = bool(extra.plain)
            yield notes
            with VerticalScroll(id="sheet"):
                if st.results:
                    yield Static(score_sheet(st), id="score-sheet")
                else:  # not an empty table of hands under the headline
                    yield Static(Text("No hand was finished.", style="dim"), id="score-sheet")
            with Horizontal(classes="dialog-buttons"):
                if self.okgin_app.in_arena:  # an arena game: no rematch, the lobby finds the next game
                    yield Button("Back to lobby (r)", id="rematch", variant="primary", compact=True)
                elif not st.spectator and st.replay is None:
                    yield Button("Rematch (r)", id="rematch", variant="primary", compact=True)
                if not self.okgin_app.in_arena:
                    yield Button("Quit (q)", id="quit", compact=True)
        yield Footer()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "rematch":
            self.run_worker(self.okgin_app.rematch())
        else:
            self.app.exit(0)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        st: TableState = self.okgin_app.state
        arena = self.okgin_app.in_arena
        if action == "rematch":
            return not st.spectator and st.replay is None and not arena
        if action == "lobby":
            return arena
        if action == "seed":
            return (st.final or {}).get("seed") is not None
        return True

    def action_seed(self) -> None:
        self.show_seed = not self.show_seed
        notes = self.query_one("#final-extra", Static)
        extra = self.extra_text()
        notes.update(extra)
        notes.display = bool(extra.plain)

    async def action_quit(self) -> None:
        """Quit; at an arena, q goes back to its lobby instead (quit from there)."""
        if self.okgin_app.in_arena:
            await self.okgin_app.back_to_lobby()
        else:
            self.app.exit(0)

    async def action_rematch(self) -> None:
        await self.okgin_app.rematch()

    async def action_lobby(self) -> None:
        await self.okgin_app.back_to_lobby()

    def action_close(self) -> None:
        self.dismiss(None)


def state_name(st: TableState, seat: object) -> str:
    return st.name(seat) if isinstance(seat, int) else ""
