"""Moves and results in English: the one wording for every place that tells a person or a
model what happened at the table.

Why one module: the MCP seat (through :mod:`okgin.harness`) and the terminal UI (its
log, its hand summary, its score sheet, its move buttons) used to word the same move
each in their own way, and the texts drifted apart ("drew from the stock: 7♥" in one,
"drew 7♥ from the stock" in the other). The sentences live here; a caller decides only
how a card and a seat are written. A model reads ``7♥ (7h)`` and ``seat 1 (bob,
dealer)``, a person ``7♥`` (``7H`` in ASCII mode) and ``Bob``. So the wording is pure,
and it sits in the engine, which every layer may import.

>>> event_sentence("discard", "Bob", "7♥")
'Bob discarded 7♥'
>>> event_sentence("draw_stock", "Bob")
'Bob drew from the stock'
>>> outcome_words("big_gin")
'big gin'
"""

from __future__ import annotations

from collections.abc import Callable

from .actions import Action
from .cards import Card
from .scoring import HandResult

__all__ = [
    "HIDDEN_CARD", "OUTCOME_WORDS", "ROLE_WORDS", "VARIANT_WORDS", "action_phrase", "event_sentence", "game_headline",
    "knocker_verb", "next_roles_sentence", "outcome_words", "points_words", "result_cell", "result_headline",
    "result_sentence", "role_draw_sentence", "role_words", "scores_verb", "variant_words", "verb",
]

#: The games by their rule variant.
VARIANT_WORDS = {"oklahoma": "Oklahoma Gin", "box": "Gin in the Box"}
#: A seat's role in the hand (docs/rules.md §4 for the box roles).
ROLE_WORDS = {
    "dealer": "dealer", "nondealer": "non-dealer", "box": "in the box", "captain": "captain", "sitter": "sitting out",
}
#: How a hand ended (the ``outcome`` of a hand result).
OUTCOME_WORDS = {
    "knock": "knock", "gin": "gin", "big_gin": "big gin", "undercut": "undercut", "tie": "tie", "drawn": "drawn hand",
}
#: A card the reader may not see.
HIDDEN_CARD = "a hidden card"

#: How a caller writes a seat (``None``: no seat, "nobody").
Namer = Callable[[int | None], str]


def variant_words(variant: str) -> str:
    return VARIANT_WORDS.get(variant, variant)


def role_words(role: str) -> str:
    return ROLE_WORDS.get(role, role)


def outcome_words(outcome: str) -> str:
    return OUTCOME_WORDS.get(outcome, outcome)


# ----------------------------------------------------------------------------- moves
def event_sentence(kind: str, who: str, card: str | None = None, outcome: str | None = None) -> str:
    """One move that was played, as its reader saw it: ``kind`` is the move's wire kind,
    ``who`` the mover as the caller writes seats, ``card`` the card as the caller writes
    cards (None when there is none, or the reader may not see it: a stock draw stays
    hidden from everyone but the drawer). ``outcome``, for the move that ended a hand, is
    how it ended: a knock with no deadwood is a gin and is called one.

    >>> event_sentence("knock", "You", outcome="gin")
    'You went gin'
    """
    c = HIDDEN_CARD if card is None else card
    if kind == "knock" and outcome in ("gin", "big_gin"):
        return f"{who} {knocker_verb(outcome)}"
    if kind == "take":
        return f"{who} took the upcard {c}"
    if kind == "pass":
        return f"{who} passed the upcard"
    if kind == "draw_stock":
        return f"{who} drew from the stock" if card is None else f"{who} drew {card} from the stock"
    if kind == "draw_discard":
        return f"{who} took {c} from the discard pile"
    if kind == "discard":
        return f"{who} discarded {c}"
    if kind == "knock":
        return f"{who} knocked"
    if kind == "big_gin":
        return f"{who} went big gin"
    return f"{who}: {kind.replace('_', ' ')}" + ("" if card is None else f" {card}")


def action_phrase(action: Action, card: Callable[[Card], str], upcard: Card | None = None, top: Card | None = None) -> str:
    """A legal move as a short imperative: "take the upcard 7♦", "discard 9♠". ``card``
    writes a card; ``upcard`` and ``top`` (the discard pile's top card) name the card a
    take or a pile draw would get, when the caller knows it."""
    k = action.kind
    if k == "take":
        return "take the upcard" + (f" {card(upcard)}" if upcard is not None else "")
    if k == "pass":
        return "pass"
    if k == "draw_stock":
        return "draw from the stock"
    if k == "draw_discard":
        return "take " + (card(top) if top is not None else "the top card") + " from the discard pile"
    c = HIDDEN_CARD if action.card is None else card(action.card)
    if k == "discard":
        return f"discard {c}"
    if k == "knock":
        return f"knock, throwing {c} face down"
    if k == "big_gin":
        return "go big gin"
    return str(action)


# ---------------------------------------------------------------------------- results
def verb(who: str, plural: str, singular: str | None = None) -> str:
    """``who`` and a verb agreeing with it: "You stay" but "Ada stays".

    >>> verb("You", "go", "goes"), verb("Bob", "captain")
    ('You go', 'Bob captains')
    """
    return f"{who} {plural}" if who == "You" else f"{who} {singular or plural + 's'}"


def scores_verb(who: str) -> str:
    """ "You score" but "Ada scores"."""
    return f"{who} score" if who == "You" else f"{who} scores"


def points_words(points: int, doubled: bool) -> str:
    """ "1 point", "12 points (doubled: spade upcard)": a doubling is worth a word only
    when something was scored."""
    return f"{points} point{'s' if points != 1 else ''}" + (" (doubled: spade upcard)" if doubled and points else "")


def knocker_verb(outcome: str) -> str:
    """What the player who ended the hand did: "went gin", "went big gin" or "knocked"."""
    return {"gin": "went gin", "big_gin": "went big gin"}.get(outcome, "knocked")


def result_sentence(r: HandResult, name: Namer, max_pile_draws: int | None = None) -> str:
    """How a hand ended, in one sentence. ``name`` writes a seat ("You" for the reader's
    own, which changes the verbs); ``max_pile_draws``, the table's pile-draw limit, says
    why a drawn hand was drawn."""
    pts = points_words(r.points, r.doubled)
    if r.outcome == "drawn":
        why = "the stock ran down to 2 cards" + (
            f" or the discard pile was drawn from {max_pile_draws} times" if max_pile_draws else ""
        )
        return f"Hand {r.hand_number + 1} was drawn: {why}. Nobody scores."
    knocker = name(r.knocker)
    winner = scores_verb(name(r.winner))
    kd, dd = r.knocker_deadwood, r.defender_deadwood
    if r.outcome in ("gin", "big_gin"):
        return f"{knocker} {knocker_verb(r.outcome)}: {winner} {pts}."
    if r.outcome == "knock":
        return f"{knocker} knocked with {kd} against {dd}: {winner} {pts}."
    if r.outcome == "undercut":
        was = "were" if knocker == "You" else "was"
        return f"{knocker} knocked with {kd} but {was} undercut ({dd}): {winner} {pts}."
    if r.outcome == "tie":
        return f"{knocker} knocked with {kd} and tied: nobody scores."
    return f"Hand {r.hand_number + 1}: {r.outcome}."


def result_headline(r: HandResult, name: Namer) -> str:
    """The first line of a hand's result in a longer account: "Hand 3: big gin, won by
    seat 1 for 40 points"."""
    return (
        f"Hand {r.hand_number + 1}: {outcome_words(r.outcome)}"
        + ("" if r.winner is None else f", won by {name(r.winner)} for {points_words(r.points, r.doubled)}")
    )


def result_cell(r: HandResult, name: Namer) -> str:
    """A hand's result in a score sheet's cell: "undercut by Bob (5 v 8) x2". An undercut
    is named after who undercut (the defender), its deadwood first, as a knock is after
    the knocker."""
    cell = outcome_words(r.outcome)
    if r.outcome == "undercut" and r.defender is not None:
        cell += f" by {name(r.defender)} ({r.defender_deadwood} v {r.knocker_deadwood})"
    elif r.knocker is not None and r.outcome in ("knock", "tie"):
        cell += f" by {name(r.knocker)} ({r.knocker_deadwood} v {r.defender_deadwood})"
    if r.doubled and r.points:
        cell += " x2"
    return cell


# ------------------------------------------------------------------------ games
def game_headline(winner: int, scores: list[int] | tuple[int, ...], name: Namer) -> str:
    """Who won a game and by what. Two players: "Ada wins 102 to 72!". Three: each loser
    named beside its score, since a bare list of numbers ("102 to 72, 20") does not say
    whose they are.

    >>> game_headline(0, [102, 72, 20], lambda s: ["You", "bot-1", "bot-2"][s])
    'You win with 102, ahead of bot-1 (72) and bot-2 (20)!'
    """
    who = verb(name(winner), "win")
    others = [s for s in range(len(scores)) if s != winner]
    if len(others) == 1:
        return f"{who} {scores[winner]} to {scores[others[0]]}!"
    rest = [f"{name(s)} ({scores[s]})" for s in sorted(others, key=lambda s: -scores[s])]
    return f"{who} with {scores[winner]}, ahead of " + ", ".join(rest[:-1]) + f" and {rest[-1]}!"


# ---------------------------------------------------------------- Gin in the Box
def _mid(clause: str) -> str:
    """A clause inside a sentence: "You sit" becomes "you sit" (a name stays as it is)."""
    return "you" + clause[3:] if clause.startswith("You ") else clause


def role_draw_sentence(rounds: list | tuple, roles: tuple[int, int, int] | tuple[int, ...], name: Namer,
                       card: Callable[[Card], str]) -> list[str]:
    """The draw for roles at the start of Gin in the Box (docs/rules.md §4, §6.5): one
    line per round of draws (ties draw again), then who got which role. ``roles`` are
    the seats in the order (box, captain, sitter).

    >>> for line in role_draw_sentence([[(0, 12), (1, 5), (2, 0)]], (0, 1, 2), lambda s: ["You", "b1", "b2"][s], str):
    ...     print(line)
    Draw for roles: You 12, b1 5, b2 0 (highest card: the box).
    You are in the box; b1 captains; b2 sits out the first hand.
    """
    lines = []
    for i, rnd in enumerate(rounds):
        drew = ", ".join(f"{name(s)} {card(c)}" for s, c in rnd)
        lines.append(("Draw for roles: " if i == 0 else "Tie, drawn again: ") + drew + " (highest card: the box).")
    if len(roles) == 3:
        box, captain, sitter = roles[0], roles[1], roles[2]
        line = (f"{verb(name(box), 'are', 'is')} in the box; {_mid(verb(name(captain), 'captain'))}; "
                f"{_mid(verb(name(sitter), 'sit'))} out the first hand.")
        lines.append(line)
    return lines


def next_roles_sentence(before: tuple[int, ...], box_won: bool | None, name: Namer) -> str:
    """Who plays which role in the next hand of Gin in the Box (docs/rules.md §4,
    "Rotation after a hand"), from the ended hand's roles (box, captain, sitter) and
    whether the box won it (None: nobody scored, the roles stay).

    >>> n = lambda s: ["You", "b1", "b2"][s]
    >>> next_roles_sentence((0, 1, 2), True, n)
    'Next hand: you stay in the box; b2 captains; b1 sits out.'
    >>> next_roles_sentence((0, 1, 2), False, n)
    'Next hand: b1 goes into the box; b2 captains; you sit out.'
    """
    box, captain, sitter = before[0], before[1], before[2]

    def who(seat: int, plural: str, singular: str | None = None) -> str:
        return _mid(verb(name(seat), plural, singular))

    if box_won is None:
        return (f"Next hand, the roles stay: {who(box, 'stay', 'stays')} in the box; {who(captain, 'captain')}; "
                f"{who(sitter, 'sit')} out.")
    if box_won:
        return f"Next hand: {who(box, 'stay', 'stays')} in the box; {who(sitter, 'captain')}; {who(captain, 'sit')} out."
    return f"Next hand: {who(captain, 'go', 'goes')} into the box; {who(sitter, 'captain')}; {who(box, 'sit')} out."
