"""Drawing cards as text: labels, colours and little boxes.

Rules of the house (GUIDE §4): rank + suit symbol, never the Unicode playing-card glyphs
(their width differs between terminals); colour is never the only cue (the suit symbol
or letter is always there, and a selected or melded card changes shape, not just
colour); a four-colour deck option; an ASCII fallback with suits as ``S H D C``.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.style import Style
from rich.text import Text

from okgin.cards import RANKS, SUIT_SYMBOLS, SUITS, Card

from ..options import DisplayOptions

# Two-colour deck: red hearts and diamonds. Four-colour: clubs green, diamonds blue.
_TWO = {"c": "", "d": "bright_red", "h": "bright_red", "s": ""}
_FOUR = {"c": "bright_green", "d": "bright_blue", "h": "bright_red", "s": ""}


def rank_label(card: Card) -> str:
    r = RANKS[card % 13]
    return "10" if r == "T" else r


def suit_label(card: Card, ascii_only: bool) -> str:
    s = SUITS[card // 13]
    return s.upper() if ascii_only else SUIT_SYMBOLS[s]


def card_label(card: Card, opts: DisplayOptions) -> str:
    """``"10♥"`` or, in ASCII mode, ``"10H"``."""
    return rank_label(card) + suit_label(card, opts.ascii)


def suit_style(card: Card, opts: DisplayOptions) -> Style:
    colour = (_FOUR if opts.four_colour else _TWO)[SUITS[card // 13]]
    return Style(color=colour or None, bold=True)


def card_text(card: Card | None, opts: DisplayOptions, hidden: str = "??") -> Text:
    """A card inline in a sentence, coloured by suit (the label carries the suit anyway)."""
    if card is None:
        return Text(hidden, style="dim")
    return Text(card_label(card, opts), style=suit_style(card, opts))


def cards_text(cards: list[Card] | tuple[Card, ...], opts: DisplayOptions, sep: str = " ", empty: str = "none") -> Text:
    if not cards:
        return Text(empty, style="dim")
    out = Text()
    for i, c in enumerate(cards):
        if i:
            out.append(sep)
        out.append_text(card_text(c, opts))
    return out


@dataclass(frozen=True)
class BoxChars:
    tl: str
    tr: str
    bl: str
    br: str
    h: str
    v: str


ROUND = BoxChars("╭", "╮", "╰", "╯", "─", "│")
HEAVY = BoxChars("┏", "┓", "┗", "┛", "━", "┃")
DOUBLE = BoxChars("╔", "╗", "╚", "╝", "═", "║")
ASCII = BoxChars("+", "+", "+", "+", "-", "|")
ASCII_SEL = BoxChars("#", "#", "#", "#", "=", "#")


def box_chars(opts: DisplayOptions, selected: bool = False, melded: bool = False) -> BoxChars:
    """Selected cards get a double frame (a shape cue that survives NO_COLOR), melded
    ones a heavy frame."""
    if opts.ascii:
        return ASCII_SEL if selected else ASCII
    if selected:
        return DOUBLE
    return HEAVY if melded else ROUND


def card_box(card: Card | None, opts: DisplayOptions, width: int = 5, height: int = 3, frame: Style | None = None,
             box: BoxChars | None = None, back: bool = False, face: Style | None = None) -> list[Text]:
    """A card as ``height`` lines of ``width`` cells. ``card`` None draws an empty slot,
    ``back`` a face-down card. Large cards (height 5) show the rank in two corners and
    the suit in the middle, like a real card."""
    b = box or box_chars(opts)
    frame = frame or Style()
    inner = width - 2
    lines: list[Text] = [Text(b.tl + b.h * inner + b.tr, style=frame)]
    body_rows = height - 2
    for row in range(body_rows):
        t = Text(b.v, style=frame)
        if back:
            fill = "#" if opts.ascii else "░"
            t.append(fill * inner, style=Style(dim=True) + (face or Style()))
        elif card is None:
            t.append(" " * inner)
        else:
            st = suit_style(card, opts) + (face or Style())
            if body_rows == 1:
                lab = card_label(card, opts)
                t.append(lab.ljust(inner)[:inner], style=st)
            elif row == 0:
                t.append(rank_label(card).ljust(inner)[:inner], style=st)
            elif row == body_rows - 1:
                t.append(rank_label(card).rjust(inner)[:inner], style=st)
            elif row == body_rows // 2:
                t.append(suit_label(card, opts.ascii).center(inner)[:inner], style=st)
            else:
                t.append(" " * inner, style=face or Style())
        t.append(b.v, style=frame)
        lines.append(t)
    lines.append(Text(b.bl + b.h * inner + b.br, style=frame))
    return lines


def hstack(blocks: list[list[Text]], gap: int = 1) -> list[Text]:
    """Join equal-height blocks of lines side by side."""
    if not blocks:
        return []
    height = max(len(b) for b in blocks)
    out = []
    for row in range(height):
        t = Text()
        for i, blk in enumerate(blocks):
            if i and gap:
                t.append(" " * gap)
            width = max((x.cell_len for x in blk), default=0)
            line = blk[row] if row < len(blk) else Text("")
            t.append_text(line)
            if line.cell_len < width:
                t.append(" " * (width - line.cell_len))
        out.append(t)
    return out


def bracket(label: str, span: int, ascii_mode: bool, style: str | Style = "green") -> Text:
    """``└── run ──┘``: a bracket ``span`` cells wide under a group of cards, its label in
    the middle (the hand's melds, and a hand laid out at its end). Too narrow for the
    label, it keeps the label's first letter."""
    lc, rc, fill = ("\\", "/", "_") if ascii_mode else ("└", "┘", "─")
    if span < 2:
        return Text(label.strip()[:max(span, 0)], style=style)
    inner = span - 2
    if len(label) > inner:
        label = label.strip()[:1]
    return Text(lc + label.center(inner, fill)[:inner] + rc, style=style)


def join_lines(lines: list[Text]) -> Text:
    out = Text()
    for i, line in enumerate(lines):
        if i:
            out.append("\n")
        out.append_text(line)
    return out
