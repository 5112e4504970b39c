"""Helpers for the engine tests: short move notation, card-set checks.

Moves are written as on a score sheet: ``"take"``, ``"pass"``, ``"stock"`` (draw from the
stock), ``"pile"`` (draw the top discard), ``"discard 7h"``, ``"knock 7h"``, ``"big_gin"``.
"""

from __future__ import annotations

import random

from okgin import Action, Game, HandResult, IllegalAction, canonical_json, card_str, cards_of, parse_card, parse_cards
from okgin.hand import Hand

_KINDS = {"take": "take", "pass": "pass", "stock": "draw_stock", "pile": "draw_discard", "big_gin": "big_gin"}


def act(move: str) -> Action:
    """An :class:`Action` from score-sheet notation."""
    parts = move.split()
    if parts[0] in _KINDS:
        return Action(_KINDS[parts[0]])
    if parts[0] in ("discard", "knock") and len(parts) == 2:
        return Action(parts[0], parse_card(parts[1]))
    raise ValueError(f"bad move {move!r}")


def play(game: Game, *moves: str) -> HandResult | None:
    """Apply moves in order (each by the seat to act); returns the last move's result."""
    result = None
    for m in moves:
        result = game.apply(act(m))
    return result


def cards(text: str) -> list[int]:
    return parse_cards(text)


def names(cs) -> list[str]:
    return sorted(card_str(c) for c in cs)


def hand_of(game: Game, seat: int) -> list[str]:
    """The cards a seat holds now (test-side inspection of the full state)."""
    return names(cards_of(game.hand.hands[seat]))


def snapshot(game: Game) -> str:
    """Everything observable about a game, as bytes-stable text: used to prove that an
    illegal action or advice left the state untouched."""
    h: Hand = game.hand
    state = {
        "record": game.to_record(),
        "full": game.full_view().to_wire(),
        "views": [game.view(s).to_wire() for s in range(game.num_seats)],
        "spectator": game.view(None).to_wire(),
        "legal": [a.to_wire() for a in game.legal_actions()],
        "current": game.current_player,
        "phase": h.phase,
        "passes": h.passes,
        "stock_only": h.stock_only,
        "hands": list(h.hands),
        "stock": list(h.stock),
    }
    return canonical_json(state)


def assert_illegal(game: Game, action: Action, *fragments: str, seat: int | None = None) -> str:
    """Assert ``action`` is refused with a sentence containing ``fragments`` and that the
    game is exactly as before. Returns the message."""
    before = snapshot(game)
    try:
        game.apply(action, seat=seat)
    except IllegalAction as e:
        msg = str(e)
    else:  # pragma: no cover - the assertion below reports it
        raise AssertionError(f"{action} was accepted")
    assert snapshot(game) == before, "an illegal action changed the state"
    assert len(msg.split()) >= 3, f"not a sentence: {msg!r}"
    for f in fragments:
        assert f in msg, f"{f!r} not in {msg!r}"
    return msg


def all_52(game: Game) -> bool:
    """RULES.md §1: every card is in exactly one place (hands, stock, discard pile, or the
    knocker's face-down discard of a finished hand)."""
    h = game.hand
    places: list[int] = []
    for m in h.hands:
        places += cards_of(m)
    places += h.stock
    places += h.discard_pile
    if h.result is not None and h.result.knock_discard is not None:
        places.append(h.result.knock_discard)
    return sorted(places) == list(range(52))


def random_action(game: Game, rng: random.Random, knock_bias: float = 0.0) -> Action:
    """A uniformly random legal action; with ``knock_bias`` > 0 a legal knock (or big gin)
    is chosen with that probability first. Uniform random play rarely knocks (most hands
    are drawn), so whole-game tests use a bias to reach scores in a few hands."""
    legal = game.legal_actions()
    if knock_bias and rng.random() < knock_bias:
        knocks = [a for a in legal if a.kind in ("knock", "big_gin")]
        if knocks:
            return rng.choice(knocks)
    return rng.choice(legal)


def random_play(game: Game, rng: random.Random, max_actions: int = 50000, check=None, knock_bias: float = 0.5) -> Game:
    """Random legal play until the game ends; ``check(game)`` after every action."""
    for _ in range(max_actions):
        if game.is_over:
            return game
        game.apply(random_action(game, rng, knock_bias))
        if check is not None:
            check(game)
    raise AssertionError("random play did not end the game")


def knock_position(
    knocker: str,
    defender: str,
    *,
    draw: str,
    knock: str,
    upcard: str = "Kd",
    rules=None,
    melds=None,
    **kw,
) -> tuple[Game, HandResult]:
    """Seat 1 (the non-dealer) holds ``knocker``, seat 0 (dealer) ``defender``; both pass
    the upcard, seat 1 draws ``draw`` from the stock and knocks with ``knock`` face down
    (declaring ``melds`` if given). Returns the game and the hand's result."""
    from okgin import game_from_position

    g = game_from_position(rules, hands={1: knocker, 0: defender}, upcard=upcard, stock=[draw], dealer=0, **kw)
    play(g, "pass", "pass", "stock")
    a = Action.knock(parse_card(knock), None if melds is None else [parse_cards(m) for m in melds])
    r = g.apply(a)
    assert r is not None
    return g, r
