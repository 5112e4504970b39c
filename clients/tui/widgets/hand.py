"""The hand: every card drawn by one widget in one ``render`` (GUIDE §4).

One widget rather than one per card keeps the layout exact (cards never wrap or
jitter), makes the whole hand one line of text for screen readers and capture-pane, and
lets the meld brackets span several cards.

What it shows, with cues that do not depend on colour:
- each card's rank and suit symbol (or ``S H D C`` in ASCII mode);
- the selection cursor: the selected card is raised one row, framed double, with a
  pointer under it;
- melds: a bracket under the cards of each meld with its kind (set or run), and a heavy
  frame on melded cards;
- the card just drawn (``new``) and a card taken from the discard pile this turn,
  which may not be thrown back (``taken``).

Mouse: a click selects a card (message :class:`HandWidget.Selected`), a double click
asks for the obvious move with that card (:class:`HandWidget.Activated`).
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual import events
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget

from okgin import best_melds
from okgin.cards import Card, rank_of, suit_of
from okgin.melds import is_set

from ..options import DisplayOptions
from .cards import box_chars, bracket, card_box, card_label, hstack, join_lines, suit_style

#: Letters that pair the pieces of a meld the sort split up: none is a card's rank.
MELD_LETTERS = "WXYZ"

# Suit display order for "by suit": alternate colours (spades, hearts, clubs, diamonds).
_SUIT_ORDER = {3: 0, 2: 1, 0: 2, 1: 3}


def sort_cards(
    cards: list[Card], mode: str, melds: tuple[tuple[Card, ...], ...] = (), previous: list[Card] | None = None
) -> list[Card]:
    """Order the hand for display. ``manual`` keeps ``previous`` (new cards at the end)."""
    if mode == "rank":
        return sorted(cards, key=lambda c: (rank_of(c), _SUIT_ORDER[suit_of(c)]))
    if mode == "melds":
        out: list[Card] = []
        ordered = sorted(melds, key=lambda m: (min(rank_of(c) for c in m), _SUIT_ORDER[suit_of(m[0])]))
        for m in ordered:
            out.extend(sorted(m, key=lambda c: (rank_of(c), _SUIT_ORDER[suit_of(c)])))
        rest = [c for c in cards if c not in out]
        out.extend(sorted(rest, key=lambda c: (rank_of(c), _SUIT_ORDER[suit_of(c)])))
        return out
    if mode == "manual" and previous is not None:
        kept = [c for c in previous if c in cards]
        return kept + [c for c in cards if c not in kept]
    return sorted(cards, key=lambda c: (_SUIT_ORDER[suit_of(c)], rank_of(c)))


class HandWidget(Widget):
    """A hand of cards with a selection cursor. Set :attr:`cards`; read :attr:`selected`."""

    # A double click plays a card (or draws from a pile): Textual's text selection, on by
    # default, left a blue block over the hand after it (issue 28).
    ALLOW_SELECT = False

    can_focus = True

    DEFAULT_CSS = """
    HandWidget { height: auto; min-height: 5; }
    """

    class Selected(Message):
        """The selection moved (keyboard, mouse or program)."""

        def __init__(self, hand: HandWidget, card: Card) -> None:
            super().__init__()
            self.hand = hand
            self.card = card

    class Activated(Message):
        """A card was double-clicked: play the obvious move with it."""

        def __init__(self, hand: HandWidget, card: Card) -> None:
            super().__init__()
            self.hand = hand
            self.card = card

    cards: reactive[tuple[Card, ...]] = reactive((), always_update=True, layout=True)
    options: reactive[DisplayOptions] = reactive(DisplayOptions(), layout=True)
    selected: reactive[Card | None] = reactive(None)
    new_card: reactive[Card | None] = reactive(None)
    taken_card: reactive[Card | None] = reactive(None)
    show_cursor: reactive[bool] = reactive(True)
    large: reactive[bool | None] = reactive(None, layout=True)  # None: by the space available

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.order: list[Card] = []
        self.melds: tuple[tuple[Card, ...], ...] = ()

    # ------------------------------------------------------------------ model
    def watch_cards(self, cards: tuple[Card, ...]) -> None:
        self._rearrange()
        if self.selected not in self.order:
            self.selected = self.order[-1] if self.order else None

    def watch_options(self, old: DisplayOptions, new: DisplayOptions) -> None:
        if old.sort != new.sort:
            self._rearrange()

    def watch_selected(self, old: Card | None, new: Card | None) -> None:
        if old != new and new is not None:
            self.post_message(self.Selected(self, new))

    def _rearrange(self) -> None:
        cards = list(self.cards)
        self.melds = best_melds(cards).melds if 0 < len(cards) <= 11 else ()
        self.order = sort_cards(cards, self.options.sort, self.melds, self.order)
        self.refresh(layout=True)

    def meld_of(self, card: Card) -> int | None:
        for i, m in enumerate(self.melds):
            if card in m:
                return i
        return None

    def move_cursor(self, delta: int) -> None:
        if not self.order:
            return
        i = self.order.index(self.selected) if self.selected in self.order else 0
        self.selected = self.order[(i + delta) % len(self.order)]

    def select_index(self, index: int) -> None:
        if self.order:
            self.selected = self.order[max(0, min(index, len(self.order) - 1))]

    def move_selected(self, delta: int) -> bool:
        """Manual reorder: move the selected card left or right. Returns False at an edge."""
        if self.selected not in self.order:
            return False
        i = self.order.index(self.selected)
        j = i + delta
        if not 0 <= j < len(self.order):
            return False
        self.order[i], self.order[j] = self.order[j], self.order[i]
        self.refresh()
        return True

    # ----------------------------------------------------------------- layout
    def _metrics(self, width: int | None = None) -> tuple[int, int, int]:
        """Card width, card height, gap for the space available."""
        n = max(len(self.order), 10)
        w = self.size.width if width is None else width
        large = self.large if self.large is not None else self._fits_large(w)
        if large:
            return 7, 5, 1
        if w >= n * 6 - 1:
            return 5, 3, 1
        return 5, 3, 0

    def _fits_large(self, width: int) -> bool:
        """Large cards when 11 of them fit side by side and the terminal is tall."""
        return width >= 11 * 8 - 1 and self.app.size.height >= 32

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        large = self.large if self.large is not None else self._fits_large(width)
        return 7 if large else 5

    def _index_at(self, x: int) -> int | None:
        cw, _, gap = self._metrics()
        if x < 0:
            return None
        i, off = divmod(x, cw + gap)
        if off >= cw or i >= len(self.order):
            return None
        return i

    # ----------------------------------------------------------------- render
    def render(self) -> Text:
        opts = self.options
        if not self.order:
            return Text("(no cards)", style="dim")
        cw, ch, gap = self._metrics()
        blocks: list[list[Text]] = []
        for card in self.order:
            sel = self.show_cursor and card == self.selected
            meld = self.meld_of(card)
            frame = Style(bold=True) if sel else (Style(color="green") if meld is not None else Style(dim=True))
            if sel:
                frame = Style(bold=True, color="yellow")
            face = Style(reverse=True) if sel and not opts.ascii else None
            box = card_box(card, opts, cw, ch, frame=frame, box=box_chars(opts, sel, meld is not None), face=face)
            label = ""
            if card == self.taken_card:
                label = "taken"
            elif card == self.new_card:
                label = "new"
            label_t = Text(label.center(cw)[:cw], style="italic")
            if sel:
                pointer = ("^" if opts.ascii else "▲").center(cw)
                col = [*box, Text(pointer, style="bold yellow")]
            else:
                col = [label_t, *box]
            blocks.append(col)
        lines = hstack(blocks, gap)
        lines.append(self._meld_line(cw, gap))
        return join_lines(lines)

    def _meld_line(self, cw: int, gap: int) -> Text:
        """Brackets under each meld's cards: ``└── run ──┘`` (``└─ set W ─┘`` for each piece of a split meld)."""
        ids = [self.meld_of(c) for c in self.order]
        order = list(dict.fromkeys(m for m in ids if m is not None))  # melds as they first appear
        spans = {m: sum(1 for k, x in enumerate(ids) if x == m and (k == 0 or ids[k - 1] != m)) for m in order}
        out = Text()
        i = 0
        ascii_mode = self.options.ascii
        while i < len(ids):
            mid = ids[i]
            if mid is None:
                out.append(" " * cw)
                if i < len(ids) - 1:
                    out.append(" " * gap)
                i += 1
                continue
            j = i
            while j + 1 < len(ids) and ids[j + 1] == mid:
                j += 1
            span = (j - i + 1) * cw + (j - i) * gap
            meld = self.melds[mid]
            kind = "set" if is_set(meld) else "run"
            # A meld in one piece says its kind; one split up by the sort (each piece under
            # its own bracket) carries a letter to pair its pieces, from letters that are no
            # card's rank: "A set" under three aces read as "ace set".
            if spans[mid] > 1:
                letter = MELD_LETTERS[order.index(mid) % len(MELD_LETTERS)]
                label = f" {kind} {letter} " if span >= 9 else letter
            else:
                label = f" {kind} " if span >= 7 else kind[0]
            out.append_text(bracket(label, span, ascii_mode))
            if j < len(ids) - 1:
                out.append(" " * gap)
            i = j + 1
        return out

    # ------------------------------------------------------------------ mouse
    def on_click(self, event: events.Click) -> None:
        i = self._index_at(event.x)
        if i is None:
            return
        card = self.order[i]
        self.selected = card
        if event.chain >= 2:
            self.post_message(self.Activated(self, card))

    def describe(self) -> str:
        """The hand as plain text, for logs and tests."""
        return " ".join(card_label(c, self.options) for c in self.order)

    def style_of(self, card: Card) -> Style:
        return suit_style(card, self.options)
