"""After each hand: both hands laid out as cards, with melds, layoffs, deadwood and the points.

At a knock everything is public (docs/rules.md §5): the knocker's melds and face-down
discard, the defender's melds, the cards it laid off on the knocker's melds, and both
deadwood counts. A drawn hand reveals nothing, and the screen says so.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Footer, Static

from okgin import HandResult
from okgin.cards import Card
from okgin.wording import knocker_verb, next_roles_sentence

from ..describe import result_sentence
from ..model import TableState
from ..options import DisplayOptions
from ..widgets.cards import card_text, cards_text
from ..widgets.laid_out import LaidOutHand, defender_groups, knocker_groups
from .base import OkginModalScreen


def meld_text(meld: tuple[Card, ...], opts: DisplayOptions, laid: list[Card] | None = None) -> Text:
    """``[7♥ 8♥ 9♥ +10♥]``: a meld in brackets, cards laid off on it marked with ``+``."""
    from okgin.cards import rank_of

    low = min(rank_of(c) for c in meld)
    before = sorted((c for c in laid or [] if rank_of(c) < low), key=rank_of)
    after = [c for c in laid or [] if c not in before]
    t = Text("[")
    for c in before:
        t.append("+", style="bold")
        t.append_text(card_text(c, opts))
        t.append(" ")
    t.append_text(cards_text(meld, opts))
    for c in after:
        t.append(" +", style="bold")
        t.append_text(card_text(c, opts))
    t.append("]")
    return t


def summary_text(state: TableState, r: HandResult, opts: DisplayOptions) -> Text:
    """The whole summary as text, the hands in words (tests, and where cards cannot be
    drawn); the screen draws the hands as cards between :func:`head_text` and
    :func:`tail_text`."""
    t = head_text(state, r)
    if r.knocker_layout is not None and r.knocker is not None:
        t.append("\n")
        t.append_text(knocker_header(state, r))
        t.append("\n")
        t.append_text(knocker_words(r, opts))
    if r.defender_layout is not None and r.defender is not None:
        t.append("\n")
        t.append_text(defender_header(state, r, opts))
        t.append("\n")
        t.append_text(defender_words(r, opts))
    t.append_text(tail_text(state, r))
    return t


def head_text(state: TableState, r: HandResult) -> Text:
    """The hand's result in a sentence (and, for a drawn hand, that nothing is shown)."""
    t = Text()
    t.append(result_sentence(state, r), style="bold")
    t.append("\n")
    if r.outcome == "drawn":
        t.append("\nA drawn hand reveals nothing. The same dealer deals again.\n", style="dim")
    return t


def knocker_header(state: TableState, r: HandResult) -> Text:
    """``ann knocked: deadwood 5`` (or ``went gin``)."""
    assert r.knocker_layout is not None
    t = Text()
    t.append(state.name(r.knocker), style="bold")
    t.append(f" {knocker_verb(r.outcome)}: deadwood {r.knocker_layout.deadwood}")
    return t


def defender_header(state: TableState, r: HandResult, opts: DisplayOptions) -> Text:
    """``bob defended: deadwood 7, laid off 10♥ on ann's melds`` (marked ``laid`` there)."""
    dl = r.defender_layout
    assert dl is not None
    t = Text()
    t.append(state.name(r.defender), style="bold")
    t.append(f" defended: deadwood {dl.deadwood}")
    if dl.layoffs:
        t.append(", laid off ")
        t.append_text(cards_text([c for c, _ in dl.layoffs], opts))
        whose = state.name(r.knocker)
        t.append(" on " + ("your" if whose == "You" else f"{whose}'s") + " melds")
    return t


def knocker_words(r: HandResult, opts: DisplayOptions) -> Text:
    kl = r.knocker_layout
    assert kl is not None
    laid: dict[int, list[Card]] = {}
    if r.defender_layout is not None:
        for c, i in r.defender_layout.layoffs:
            laid.setdefault(i, []).append(c)
    t = Text("  melds: ")
    for i, m in enumerate(kl.melds):
        if i:
            t.append(" ")
        t.append_text(meld_text(m, opts, laid.get(i)))
    if not kl.melds:
        t.append("none", style="dim")
    t.append("\n  deadwood: ")
    t.append_text(cards_text(kl.deadwood_cards, opts))
    if r.knock_discard is not None:
        t.append("   face-down discard: ")
        t.append_text(card_text(r.knock_discard, opts))
    t.append("\n")
    return t


def defender_words(r: HandResult, opts: DisplayOptions) -> Text:
    dl = r.defender_layout
    assert dl is not None
    t = Text("  melds: ")
    for i, m in enumerate(dl.arrangement.melds):
        if i:
            t.append(" ")
        t.append_text(meld_text(m, opts))
    if not dl.arrangement.melds:
        t.append("none", style="dim")
    t.append("\n  deadwood: ")
    t.append_text(cards_text(dl.arrangement.deadwood_cards, opts))
    t.append("\n")
    return t


def tail_text(state: TableState, r: HandResult) -> Text:
    """The scores after the hand and, in the Box, who plays which role next."""
    t = Text()
    if r.scores_after:
        t.append("\nScores: ")
        for s, sc in enumerate(r.scores_after):
            if s:
                t.append(" · ")
            t.append(f"{state.name(s)} {sc}", style="bold" if s == r.winner else "")
            if s == r.winner and r.points:
                t.append(f" (+{r.points})", style="bold green")
        v = state.view
        if v is not None:
            t.append(f"   first to {v.target_score}", style="dim")
        t.append("\n")
    roles = hand_roles(state, r)
    over = state.final is not None or (state.view is not None and any(x >= state.view.target_score for x in r.scores_after))
    if roles is not None and not over:
        box_won = None if r.winner is None else r.winner == roles[0]
        t.append("\n" + next_roles_sentence(roles, box_won, state.name) + "\n", style="bold")
    return t


def hand_roles(state: TableState, r: HandResult) -> tuple[int, int, int] | None:
    """Gin in the Box: the seats (box, captain, sitter) of the hand ``r`` ended, from the
    result itself (the box deals; the captain is the other player), else from the view
    (a drawn hand names no player, and leaves the roles as they were). None outside
    the box."""
    v = state.view
    if v is None or v.variant != "box" or v.num_seats != 3:
        return None
    box = r.dealer
    players = {x for x in (r.knocker, r.defender) if x is not None}
    captain = next(iter(players - {box}), None)
    if captain is None:
        if "captain" not in v.roles:
            return None
        captain = v.roles.index("captain")
    if captain == box:
        return None
    return box, captain, 3 - box - captain


class HandSummaryScreen(OkginModalScreen[int]):
    """Shown when a hand ends; Enter (or the button) goes back to the table.

    It waits for the key: a summary that goes by unread is a hand the person cannot
    follow. ``auto_continue`` (seconds) closes it by itself, for watchers who asked.
    """

    BINDINGS = [
        Binding("enter,escape,space", "close", "Continue", key_display="⏎"),
        Binding("question_mark", "help", "Help"),
    ]

    def __init__(self, result: HandResult, auto_continue: float | None = None) -> None:
        super().__init__()
        self.result = result
        self.auto_continue = auto_continue

    def compose(self) -> ComposeResult:
        st: TableState = self.okgin_app.state
        opts: DisplayOptions = self.okgin_app.options
        with Vertical(classes="dialog"):
            yield Static(f"End of hand {self.result.hand_number + 1}", classes="dialog-title")
            with VerticalScroll(id="summary-body"):
                yield from self.compose_body(st, opts)
            with Horizontal(classes="dialog-buttons"):
                label = (
                    "Continue (Enter)" if self.auto_continue is None else f"Continue (Enter; goes on in {self.auto_continue:g} s)"
                )
                yield Button(label, id="continue", variant="primary", compact=True)
        yield Footer()

    def compose_body(self, st: TableState, opts: DisplayOptions) -> ComposeResult:
        """The result, both hands drawn as cards (melds grouped, deadwood apart, layoffs
        in the melds they went on), the scores and the next roles."""
        r = self.result
        head = head_text(st, r)
        head.rstrip()  # the next line's margin is the gap
        yield Static(head, id="summary-head")
        if r.knocker_layout is not None and r.knocker is not None:
            yield Static(knocker_header(st, r), classes="summary-who")
            yield LaidOutHand(knocker_groups(r), opts, id="summary-knocker")
        if r.defender_layout is not None and r.defender is not None:
            yield Static(defender_header(st, r, opts), classes="summary-who")
            yield LaidOutHand(defender_groups(r), opts, id="summary-defender")
        yield Static(tail_text(st, r), id="summary-tail")

    def on_mount(self) -> None:
        # The screen may already be on its way out (dismissed, or replaced by the next
        # hand's summary while it was mounting, which a loaded machine makes possible):
        # then there is no button left to focus.
        for button in self.query("#continue").results(Button):
            button.focus()
        if self.auto_continue is not None:
            self.set_timer(self.auto_continue, self._auto_close)

    def _auto_close(self) -> None:
        if self.is_current:  # not from under the help screen
            self.dismiss(self.result.hand_number)

    def on_button_pressed(self, _event: Button.Pressed) -> None:
        self.dismiss(self.result.hand_number)

    def action_close(self) -> None:
        self.dismiss(self.result.hand_number)  # the app tells okgin play's bots this hand was read

    def action_help(self) -> None:
        from .help import HelpScreen

        self.app.push_screen(HelpScreen())
