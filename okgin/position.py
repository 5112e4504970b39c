"""Games that start from a chosen position. **For tests and analysis, not for play.**

A real game is dealt from its seed (docs/rules.md §6), so the only way to reach a particular
hand — a tie at the knock, a chain of three layoffs, a spade upcard — would be to search
for a seed that deals it. :func:`game_from_position` instead starts a game from explicit
hands, upcard and stock, and then runs the ordinary engine: the same legality checks,
scoring, dealer rule and role rotation, and the next hands are dealt from the seed as
usual. Tests use it to construct every scoring case of docs/rules.md §3.5; analysis tools can
use it to study a position.

A constructed start is not a deal that the seed produces, so the game's record carries
the position (key ``"position"``, see :func:`position_to_wire`) and
:meth:`okgin.Game.from_record` replays from it: records of constructed games stay exact.

>>> from okgin import Action, RuleSet
>>> g = game_from_position(
...     RuleSet(),
...     hands={0: "As 2s 3s 4s 5s 6s 7s 8s 9s Ts", 1: "Ac 2c 3c 4c 5c 6c 7c 8c 9c Tc"},
...     upcard="Kd", stock=["Js"], dealer=1)
>>> g.current_player, g.hand.knock_limit
(0, 10)
>>> g.apply(Action("pass")); g.apply(Action("pass")); g.apply(Action("draw_stock"))
>>> g.apply(Action.knock(parse_card("Js"))).outcome   # seat 0 goes gin
'gin'
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .cards import NUM_CARDS, Card, card_str, parse_card, parse_cards
from .hand import HAND_SIZE, Hand
from .rules import RuleSet

if TYPE_CHECKING:
    from .game import Game

__all__ = ["CardsLike", "game_from_position", "game_from_wire_position", "position_to_wire"]

CardsLike = Iterable[Card | str] | str


def game_from_position(
    rules: RuleSet | None = None,
    *,
    hands: Mapping[int, CardsLike] | Sequence[CardsLike],
    upcard: Card | str,
    stock: CardsLike | None = None,
    dealer: int | None = None,
    roles: tuple[int, int, int] | None = None,
    scores: Sequence[int] | None = None,
    hands_won: Sequence[int] | None = None,
    seed: int | str = "position",
) -> Game:
    """A game whose first hand starts from the given cards (the upcard on offer).

    - ``hands``: the 10 cards of each player, by seat (a mapping, or a sequence indexed
      by seat; the sitter of Gin in the Box has none). Cards as indices or strings; a
      single string may hold a whole hand (``"As 2s 3s ..."``).
    - ``upcard``: the first card of the discard pile; it sets the knock limit (§3.1).
    - ``stock``: the cards to be drawn, **top first**. The cards named nowhere go under
      them in ascending index order, so the stock always holds the 31 remaining cards.
    - ``dealer`` (Oklahoma Gin, default seat 0) or ``roles`` = (box, captain, sitter)
      (Gin in the Box, default (0, 1, 2)); the box deals.
    - ``scores``, ``hands_won``: the game so far (default zeros), e.g. to test the end of
      a game or the classic bonuses.
    - ``seed``: deals the hands after this one.

    Raises ``ValueError`` saying what is wrong with the position.
    """
    from .game import Game

    rules = rules or RuleSet()
    game = Game(rules, seed)
    n = game.num_seats
    if rules.variant == "box":
        if dealer is not None:
            raise ValueError("in Gin in the Box the box deals: give roles=(box, captain, sitter), not dealer")
        given = tuple(roles) if roles is not None else (0, 1, 2)
        if sorted(given) != list(range(n)):
            raise ValueError(f"roles must be the seats 0, 1, 2 in the order (box, captain, sitter), not {given!r}")
        roles = (given[0], given[1], given[2])
        dealer_seat, nondealer_seat = roles[0], roles[1]
    else:
        if roles is not None:
            raise ValueError("roles exist only in Gin in the Box")
        dealer_seat = 0 if dealer is None else dealer
        if dealer_seat not in (0, 1):
            raise ValueError(f"dealer must be seat 0 or 1, not {dealer!r}")
        nondealer_seat = 1 - dealer_seat

    by_seat = dict(hands) if isinstance(hands, Mapping) else dict(enumerate(hands))
    parsed: dict[int, list[Card]] = {}
    for seat, cards in by_seat.items():
        if not isinstance(seat, int) or not 0 <= seat < n:
            raise ValueError(f"no seat {seat!r} in a {n}-seat game")
        parsed[seat] = parse_cards(cards)
    for seat in (nondealer_seat, dealer_seat):
        got = len(parsed.get(seat, []))
        if got != HAND_SIZE:
            raise ValueError(f"seat {seat} must hold {HAND_SIZE} cards, not {got}")
    for seat, cards in parsed.items():
        if seat not in (nondealer_seat, dealer_seat) and cards:
            raise ValueError(f"seat {seat} sits out this hand and holds no cards")
    up = parse_cards([upcard])[0]
    top = parse_cards(stock) if stock is not None else []
    named = parsed[nondealer_seat] + parsed[dealer_seat] + [up] + top
    if len(set(named)) != len(named):
        dup = sorted({card_str(c) for c in named if named.count(c) > 1})
        raise ValueError(f"a card is placed twice: {', '.join(dup)}")
    rest = [c for c in range(NUM_CARDS) if c not in set(named)]
    deck = named + rest

    if scores is not None:
        if len(scores) != n:
            raise ValueError(f"scores needs {n} numbers")
        game.scores = [int(x) for x in scores]
    if hands_won is not None:
        if len(hands_won) != n:
            raise ValueError(f"hands_won needs {n} numbers")
        game.hands_won = [int(x) for x in hands_won]
    if rules.variant == "box":
        game.roles = roles
        game.role_draws = []  # no draw happened: the roles were given
    game.hand = Hand(rules, game.seed, 0, dealer_seat, nondealer_seat, n, deck=deck)
    game.position = {
        "hands": [[card_str(c) for c in parsed.get(s, [])] for s in range(n)],
        "upcard": card_str(up),
        "stock": [card_str(c) for c in top],
        "dealer": None if rules.variant == "box" else dealer_seat,
        "roles": None if rules.variant != "box" else list(roles),  # type: ignore[arg-type]
        "scores": list(game.scores),
        "hands_won": list(game.hands_won),
    }
    return game


def position_to_wire(game: Game) -> dict[str, Any] | None:
    """The constructed start of ``game`` as recorded (None for a game dealt from its seed)."""
    return None if game.position is None else dict(game.position)


def game_from_wire_position(rules: RuleSet, seed: int | str, pos: dict[str, Any]) -> Game:
    """Rebuild the starting game of a record's ``"position"``."""
    roles = pos.get("roles")
    return game_from_position(
        rules,
        hands={s: [parse_card(c) for c in h] for s, h in enumerate(pos["hands"])},
        upcard=pos["upcard"],
        stock=pos.get("stock", []),
        dealer=pos.get("dealer"),
        roles=None if roles is None else (int(roles[0]), int(roles[1]), int(roles[2])),
        scores=pos.get("scores"),
        hands_won=pos.get("hands_won"),
        seed=seed,
    )
