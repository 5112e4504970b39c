"""Observation vectors and action numbers for the environments, built from a seat's View.

Why only from :class:`okgin.View`: the View is exactly what the referee would send that
seat (docs/rules.md §5), so an observation built from it cannot hold a card the rules
hide; tests/research/test_envs.py checks it by permuting the hidden cards.

Seats are written relative to the observer (index 0 is the observer itself, then the
next seats in order), so one policy serves every seat.
"""

from __future__ import annotations

import numpy as np

from ..actions import DRAW_DISCARD, DRAW_STOCK, PASS, TAKE, Action
from ..hand import BIG_GIN
from ..views import View

__all__ = [
    "BIG_GIN_ID", "DISCARD_BASE", "DRAW_DISCARD_ID", "DRAW_STOCK_ID", "KNOCK_BASE", "NO_ADVICE",
    "NUM_ACTIONS", "PASS_ID", "TAKE_ID", "action_to_id", "encode_view", "id_to_action",
    "legal_mask", "observation_size",
]

# Actions 0-108 are OpenSpiel's numbering (okgin.openspiel): 0 take, 1 pass, 2 draw from the
# stock, 3 draw the top discard, 4 + c discard c, 56 + c knock throwing c, 108 big gin.
# 109 exists for the Gin in the Box sitter only: give no advice this time.
TAKE_ID, PASS_ID, DRAW_STOCK_ID, DRAW_DISCARD_ID = 0, 1, 2, 3
DISCARD_BASE, KNOCK_BASE, BIG_GIN_ID = 4, 56, 108
NO_ADVICE = 109
NUM_ACTIONS = 110

_BY_ID: list[Action] = [TAKE, PASS, DRAW_STOCK, DRAW_DISCARD]
_BY_ID += [Action("discard", c) for c in range(52)] + [Action("knock", c) for c in range(52)] + [BIG_GIN]
_ID_OF: dict[Action, int] = {a: i for i, a in enumerate(_BY_ID)}


def action_to_id(action: Action) -> int:
    """The action number of an okgin action (declared melds dropped)."""
    return _ID_OF[action.without_melds()]


def id_to_action(action_id: int) -> Action:
    """The okgin action of an action number 0-108 (109, no advice, is no action)."""
    if not 0 <= action_id < NO_ADVICE:
        raise ValueError(f"action {action_id} is no game action (0-108)")
    return _BY_ID[action_id]


def observation_size(num_seats: int) -> int:
    """Length of :func:`encode_view`'s vector for a game of ``num_seats``."""
    n = num_seats
    return 52 * 5 + 52 * n + 11 + 4 + n + 3 * n + 1 + n + NUM_ACTIONS


_PHASES = {"offer": 0, "draw": 1, "discard": 2}
_ROLE_INDEX = {"box": 0, "dealer": 0, "captain": 1, "nondealer": 1, "sitter": 2}


def encode_view(view: View) -> np.ndarray:
    """A float32 vector in [0, 1] of everything ``view`` shows, nothing else.

    Pieces, in order: own hand (the sitter: its captain's) 52; upcard 52; top discard
    52; the whole discard pile 52; the card taken from the pile this turn 52; cards known
    to be in each hand (taken from the pile) n x 52; knock limit one-hot 11; phase
    one-hot 4 (offer, draw, discard, over); seat to act n; roles n x 3 (box or dealer,
    captain or non-dealer, sitter); cards left in the stock / 31; scores / target
    (capped at 1) n; the latest advice of this hand as an action number one-hot 110
    (109: advice with text only). Seats are relative to the viewer.
    """
    assert view.seat is not None, "a seat's view, not a spectator's"
    n = view.num_seats
    me = view.seat
    out = np.zeros(observation_size(n), dtype=np.float32)

    def rel(p: int) -> int:
        return (p - me) % n

    if view.hand is not None:
        out[list(view.hand)] = 1
    at = 52
    out[at + view.upcard] = 1
    at += 52
    if view.discard_pile:
        out[at + view.discard_pile[-1]] = 1
        at += 52
        out[[at + c for c in view.discard_pile]] = 1
        at += 52
    else:
        at += 104
    if view.taken_card is not None:
        out[at + view.taken_card] = 1
    at += 52
    for p, known in enumerate(view.known_cards):
        for c in known:
            out[at + 52 * rel(p) + c] = 1
    at += 52 * n
    out[at + view.knock_limit] = 1
    at += 11
    out[at + _PHASES.get(view.phase, 3)] = 1
    at += 4
    if view.to_act is not None:
        out[at + rel(view.to_act)] = 1
    at += n
    for p, role in enumerate(view.roles):
        out[at + 3 * rel(p) + _ROLE_INDEX[role]] = 1
    at += 3 * n
    out[at] = view.stock_size / 31
    at += 1
    for p, score in enumerate(view.scores):
        out[at + rel(p)] = min(score / view.target_score, 1.0)
    at += n
    if view.advice:
        last = view.advice[-1]
        out[at + (NO_ADVICE if last.action is None else action_to_id(last.action))] = 1
    return out


def legal_mask(legal: list[Action], advice: bool = False) -> np.ndarray:
    """An int8 mask over the 110 action numbers; ``advice`` adds 109 (no advice)."""
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    for a in legal:
        mask[_ID_OF[a]] = 1
    if advice:
        mask[NO_ADVICE] = 1
    return mask
