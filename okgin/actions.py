"""Actions: small immutable values, with a wire form shared by engine, referee and bots.

Kinds (docs/rules.md §3.2-3.4):

=============== ======================================= =============================
kind            when                                    fields
=============== ======================================= =============================
``take``        upcard offer: take the upcard           -
``pass``        upcard offer: refuse it                 -
``draw_stock``  normal turn: top of the stock           -
``draw_discard`` normal turn: top of the discard pile   -
``discard``     after drawing: throw a card face up     ``card``
``knock``       after drawing: knock, ``card`` face     ``card``, optional ``melds``
                down, optionally declaring the melds
``big_gin``     after drawing, option ``big_gin``: all  optional ``melds``
                11 cards melded, no discard
=============== ======================================= =============================

Wire form: ``{"kind": "discard", "card": "7h"}``; ``melds`` is a list of lists of card
strings. ``legal_actions()`` lists knocks without ``melds`` (the referee then chooses the
arrangement, docs/rules.md §3.4); a knock with declared melds is legal when its card is, and
the melds are valid and within the limit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .cards import WIRE_INDEX, Card, card_str, to_card

__all__ = ["DRAW_DISCARD", "DRAW_STOCK", "KINDS", "PASS", "TAKE", "Action"]

KINDS = ("take", "pass", "draw_stock", "draw_discard", "discard", "knock", "big_gin")
_WITH_CARD = ("discard", "knock")


@dataclass(frozen=True, order=True)
class Action:
    """One move: ``Action.discard(c)``, ``Action.knock(c)``, or the constants ``TAKE``,
    ``PASS``, ``DRAW_STOCK``, ``DRAW_DISCARD`` of this module.

    >>> Action.from_wire({"kind": "discard", "card": "7h"})
    Action(kind='discard', card=32, melds=None)
    >>> str(Action.knock(32))
    'knock 7h'
    """

    kind: str
    card: Card | None = None
    melds: tuple[tuple[Card, ...], ...] | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown action kind {self.kind!r}; known: {', '.join(KINDS)}")
        if (self.kind in _WITH_CARD) != (self.card is not None):
            raise ValueError(f"action {self.kind!r} {'needs' if self.kind in _WITH_CARD else 'takes no'} card")
        if self.card is not None and (self.card.__class__ is not int or not 0 <= self.card < 52):
            # Normalised here so that equality, hashing and legality checks see card indices
            # only: a string is parsed, anything else that is not a card is refused.
            object.__setattr__(self, "card", to_card(self.card))
        if self.melds is not None:
            if self.kind not in ("knock", "big_gin"):
                raise ValueError(f"only knock and big_gin take melds, not {self.kind!r}")
            object.__setattr__(self, "melds", _norm_melds(self.melds))

    # Constructors -------------------------------------------------------------
    @staticmethod
    def discard(card: Card) -> Action:
        return Action("discard", card)

    @staticmethod
    def knock(card: Card, melds: list[list[Card]] | tuple | None = None) -> Action:
        return Action("knock", card, _norm_melds(melds))

    @staticmethod
    def big_gin_knock(melds: list[list[Card]] | tuple | None = None) -> Action:
        return Action("big_gin", None, _norm_melds(melds))

    # Wire ---------------------------------------------------------------------
    def to_wire(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": self.kind}
        if self.card is not None:
            d["card"] = card_str(self.card)
        if self.melds is not None:
            d["melds"] = [[card_str(c) for c in m] for m in self.melds]
        return d

    @staticmethod
    def from_wire(data: Any) -> Action:
        """Parse a wire action; raises ``ValueError`` with a sentence on any malformation.

        The canonical wire forms of the melds-free actions (``{"kind": "discard", "card":
        "7h"}``, ``{"kind": "pass"}``, ...: a few hundred in all, what nearly every answer
        to a prompt is) are looked up in one table, built from this module's own
        ``to_wire``; anything else is parsed in full.
        """
        if data.__class__ is dict:
            n = len(data)
            k = data.get("kind")
            c = data.get("card") if n == 2 else None
            # exactly {"kind"} or {"kind", "card"} (a string): no melds, nothing else
            if k.__class__ is str and (n == 1 or (n == 2 and c.__class__ is str)):
                a = _CANONICAL.get((k, c))
                if a is not None:
                    return a
        if not isinstance(data, dict):
            raise ValueError(f"an action is a map with a 'kind', not {type(data).__name__}")
        kind = data.get("kind")
        if not isinstance(kind, str) or kind not in KINDS:
            raise ValueError(f"unknown action kind {kind!r}; known: {', '.join(KINDS)}")
        # As strict as the schema (protocol.schema.json, Action): a field the kind does not
        # take is refused, not ignored, so {"kind": "pass", "card": "As"} is no pass: a
        # client that sends it has a bug the referee must show it (issue 18).
        card = None
        if kind in _WITH_CARD:
            if "card" not in data:
                raise ValueError(f"action {kind!r} needs a 'card'")
            card = _wire_card(data["card"])
        elif "card" in data:
            raise ValueError(f"action {kind!r} takes no 'card' (leave the field out)")
        melds = None
        if "melds" in data:
            if kind not in ("knock", "big_gin"):
                raise ValueError(f"only knock and big_gin take 'melds', not {kind!r}")
            raw = data["melds"]
            if not isinstance(raw, list) or not all(isinstance(m, list) for m in raw):
                raise ValueError("'melds' must be a list of lists of cards")
            if len(raw) > 11 or any(len(m) > 11 for m in raw):
                raise ValueError("'melds' has more cards than a hand")
            melds = _norm_melds([[_wire_card(c) for c in m] for m in raw])
        return Action(kind, card, melds)

    def without_melds(self) -> Action:
        """The same action with any declared melds dropped (the form ``legal_actions`` lists)."""
        return self if self.melds is None else Action(self.kind, self.card)

    def __str__(self) -> str:
        s = self.kind.replace("_", " ")
        if self.card is not None:
            s += " " + card_str(self.card)
        if self.melds is not None:
            s += " [" + " | ".join(" ".join(card_str(c) for c in m) for m in self.melds) + "]"
        return s


def _wire_card(text: Any) -> Card:
    """A card of a wire action: exactly the schema's form (``As``, ``Td``), nothing looser.

    :func:`okgin.cards.parse_card` also reads ``10h`` and lower case, for people typing;
    a bot's message is held to the schema, so a referee refuses what a validator would.
    """
    c = WIRE_INDEX.get(text) if text.__class__ is str else None
    if c is None:
        raise ValueError(f"a card is a string, a rank of A23456789TJQK then a suit of cdhs, like 'As' or 'Td', not {text!r}")
    return c


def _norm_melds(melds: Any) -> tuple[tuple[Card, ...], ...] | None:
    """Melds as sorted tuples of card indices (so equal declarations compare equal)."""
    if melds is None:
        return None
    if isinstance(melds, str | bytes) or any(isinstance(m, str | bytes) for m in melds):
        raise ValueError("melds must be a list of lists of cards")
    try:
        return tuple(sorted(tuple(sorted(to_card(c) for c in m)) for m in melds))
    except TypeError:
        raise ValueError("melds must be a list of lists of cards") from None


TAKE = Action("take")
PASS = Action("pass")
DRAW_STOCK = Action("draw_stock")
DRAW_DISCARD = Action("draw_discard")


def _canonical_table() -> dict[tuple[str, str | None], Action]:
    """(kind, card string) -> the action, for every melds-free action's canonical wire form."""
    acts = [TAKE, PASS, DRAW_STOCK, DRAW_DISCARD, Action("big_gin")]
    acts += [Action(k, c) for k in _WITH_CARD for c in range(52)]
    return {(w["kind"], w.get("card")): a for a in acts for w in (a.to_wire(),)}


_CANONICAL = _canonical_table()
