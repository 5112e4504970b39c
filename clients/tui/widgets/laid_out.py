"""A hand laid out at its end, drawn as cards: melds grouped, deadwood apart, layoffs
where they went (issue 28, deliverable 5: "both hands laid out as cards, with layoffs
marked").

The cards are drawn by the same functions as the player's own hand
(:mod:`clients.tui.widgets.cards`: ``card_box``, ``box_chars``, ``bracket``), with the
same cues that do not depend on colour: a melded card has a heavy frame and a bracket
under its meld naming its kind; deadwood has a light frame and a bracket saying
"deadwood" and its count; a card the defender laid off on one of the knocker's melds
sits in that meld with ``laid`` above it; the knocker's face-down discard is shown
apart, under "discard".

Groups are never split: when a row of them does not fit the width, the cards get
narrower (no gap between the cards of a group), then the groups go on a second row.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.style import Style
from rich.text import Text
from textual.geometry import Size
from textual.reactive import reactive
from textual.widget import Widget

from okgin import HandResult
from okgin.cards import Card, rank_of
from okgin.melds import Arrangement, is_set

from ..options import DisplayOptions
from .cards import box_chars, bracket, card_box, card_label, hstack, join_lines

#: The label above a card the defender laid off on this meld.
LAID = "laid"
#: Columns between two groups (melds, deadwood, discard) of a row.
GROUP_GAP = 2


@dataclass(frozen=True)
class Group:
    """Cards drawn together with one bracket under them.

    ``kind`` is "meld", "deadwood" or "discard"; ``label`` the bracket's words; ``laid``
    the cards of a meld that another player laid off on it.
    """

    cards: tuple[Card, ...]
    kind: str
    label: str
    laid: frozenset[Card] = frozenset()


def meld_group(meld: tuple[Card, ...], laid: list[Card] | None = None) -> Group:
    """A meld with the cards laid off on it in place: a run in rank order (a card laid
    below the run goes before it), a set with its fourth card last."""
    laid = list(laid or [])
    kind = "set" if is_set(meld) else "run"
    cards = list(meld) + laid if kind == "set" else sorted([*meld, *laid], key=rank_of)
    return Group(tuple(cards), "meld", kind, frozenset(laid))


def deadwood_group(arrangement: Arrangement) -> list[Group]:
    if not arrangement.deadwood_cards:
        return []
    cards = tuple(sorted(arrangement.deadwood_cards, key=rank_of))
    return [Group(cards, "deadwood", f"deadwood {arrangement.deadwood}")]


def knocker_groups(r: HandResult) -> list[Group]:
    """The knocker's hand as the table sees it once the defender has laid off: its melds
    (with the defender's layoffs in them), its deadwood, its face-down discard."""
    kl = r.knocker_layout
    if kl is None:
        return []
    laid: dict[int, list[Card]] = {}
    if r.defender_layout is not None:
        for c, i in r.defender_layout.layoffs:
            laid.setdefault(i, []).append(c)
    groups = [meld_group(m, laid.get(i)) for i, m in enumerate(kl.melds)]
    groups += deadwood_group(kl)
    if r.knock_discard is not None:
        groups.append(Group((r.knock_discard,), "discard", "discard"))
    return groups


def defender_groups(r: HandResult) -> list[Group]:
    """The defender's melds and what is left as deadwood after its layoffs (the cards it
    laid off are drawn in the knocker's melds, where they went)."""
    dl = r.defender_layout
    if dl is None:
        return []
    return [meld_group(m) for m in dl.arrangement.melds] + deadwood_group(dl.arrangement)


_BRACKET_STYLE = {"meld": "green", "deadwood": "yellow", "discard": "dim"}


def _span(g: Group, cw: int, gap: int) -> int:
    """A group's width: its cards, or its bracket's words if they are wider (a single
    card of deadwood still says "deadwood 9", never a cryptic "d")."""
    return max(len(g.cards) * cw + (len(g.cards) - 1) * gap, len(g.label) + 2)


def _group_block(g: Group, opts: DisplayOptions, cw: int, gap: int, labels: bool) -> list[Text]:
    """One group: a row of labels (``labels``: some card of the row has one), the cards
    (3 rows), the bracket."""
    cols = []
    for c in g.cards:
        laid = c in g.laid
        melded = g.kind == "meld"
        if laid:
            frame = Style(bold=True, color="cyan")
        elif melded:
            frame = Style(color="green")
        else:
            frame = Style(dim=True)
        box = card_box(c, opts, cw, 3, frame=frame, box=box_chars(opts, melded=melded))
        above = [Text((LAID if laid else "").center(cw)[:cw], style="italic cyan")] if labels else []
        cols.append([*above, *box])
    lines = hstack(cols, gap)
    span = _span(g, cw, gap)
    words = f" {g.label} " if len(g.label) + 4 <= span else g.label
    lines.append(bracket(words, span, opts.ascii, _BRACKET_STYLE.get(g.kind, "")))
    return lines


def _width(groups: list[Group], cw: int, gap: int) -> int:
    return sum(_span(g, cw, gap) for g in groups) + GROUP_GAP * max(len(groups) - 1, 0)


def laid_out_lines(groups: list[Group], opts: DisplayOptions, width: int) -> list[Text]:
    """The groups drawn in ``width`` cells: cards 5 wide with a gap if one row fits, else
    4 wide and touching (the narrowest that holds "10♥"), else on several rows."""
    if not groups:
        return [Text("no cards", style="dim")]
    cw, gap = (5, 1) if _width(groups, 5, 1) <= width else (4, 0)
    rows: list[list[Group]] = [[]]
    for g in groups:
        if rows[-1] and _width([*rows[-1], g], cw, gap) > width:
            rows.append([])
        rows[-1].append(g)
    out: list[Text] = []
    for row in rows:
        labels = any(g.laid for g in row)
        out += hstack([_group_block(g, opts, cw, gap, labels) for g in row], GROUP_GAP)
    return out


def groups_text(groups: list[Group], opts: DisplayOptions) -> str:
    """The groups in words, one line (tests, logs): ``run 7♥ 8♥ 9♥ +10♥ | deadwood 5 4♣``."""
    parts = []
    for g in groups:
        cards = " ".join(("+" if c in g.laid else "") + card_label(c, opts) for c in g.cards)
        parts.append(f"{g.label}: {cards}")
    return " | ".join(parts)


class LaidOutHand(Widget):
    """One player's hand at a hand's end, as cards (:func:`laid_out_lines`)."""

    DEFAULT_CSS = """
    LaidOutHand { height: auto; }
    """

    options: reactive[DisplayOptions] = reactive(DisplayOptions(), layout=True)

    def __init__(self, groups: list[Group], options: DisplayOptions | None = None, *, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.groups = groups
        if options is not None:
            self.set_reactive(LaidOutHand.options, options)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(laid_out_lines(self.groups, self.options, width))

    def render(self) -> Text:
        return join_lines(laid_out_lines(self.groups, self.options, self.size.width))

    def describe(self) -> str:
        return groups_text(self.groups, self.options)
