"""The move the referee plays for a timed-out seat under the ``default_move`` policy.

protocol.md §8 fixes it so that every implementation and every replay agrees: pass the
upcard, draw from the stock, and otherwise discard the card that leaves the least
deadwood (ties: the highest value, then the lowest card index). It never knocks for a
seat: ending a hand is a decision the referee will not take on a player's behalf.
"""

from __future__ import annotations

from okgin import DRAW_STOCK, PASS, Action, Game
from okgin.cards import CARD_VALUES
from okgin.melds import deadwood_mask


def default_action(game: Game) -> Action:
    """The default move for the seat to act now (the game must not be over)."""
    legal = game.legal_actions()
    if PASS in legal:
        return PASS
    if DRAW_STOCK in legal:
        return DRAW_STOCK
    to_act = game.hand.to_act
    assert to_act is not None  # legal actions exist, so a seat is to act
    hand = game.hand.hands[to_act]
    discards = [a for a in legal if a.kind == "discard"]
    if not discards:  # cannot happen with 11 cards in hand; stay total anyway
        return legal[0]

    def cost(a: Action) -> tuple[int, int, int]:
        """Least deadwood left, then shed the highest card, then the lowest index."""
        card = a.card
        assert card is not None  # a discard always names its card
        return deadwood_mask(hand & ~(1 << card)), -CARD_VALUES[card], card

    return min(discards, key=cost)
