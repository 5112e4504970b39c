"""OpenSpiel's ISMCTS as an okgin bot: the reference searcher of ``okgin eval`` (issue 29).

OpenSpiel's own ``ISMCTSBot`` (``open_spiel.python.algorithms.ismcts``: UCT, a world
resampled for every simulation, max-visit final policy) searches okgin's OpenSpiel game
(:mod:`okgin.openspiel`, one hand, returns the hand's points) from the seat's position.
A bot is given a :class:`okgin.View`, not an OpenSpiel history, so each decision rebuilds
an OpenSpiel state this seat cannot tell from the real one (:func:`state_from_view`): its
own cards as dealt (its hand, with the hand's draws taken back and its discards put
back), the opponent's cards it saw pass through the pile where they were, and every card
it never saw dealt at random into the opponent's unknown slots; then the hand's moves as
it saw them, replayed as OpenSpiel actions and chance outcomes. ISMCTS resamples from
there on every simulation (``resample_from_infostate``), so the random fill only starts
the search. Oklahoma Gin only: OpenSpiel's Gin in the Box has no sitter to play.

Deliberately small: ``simulations`` (default 20) with OpenSpiel's random-rollout
evaluator, since each simulation costs milliseconds in a Python game (bench/ismcts.py
measures it: random rollouts lose to ``simple`` at every budget tried). It is a baseline
that anyone can rerun, not a strong player. Needs pyspiel (``okgin[research]``).
"""

from __future__ import annotations

import random
from typing import Any

from okgin import Action, RuleSet, View

from ..bot import Bot

__all__ = ["IsmctsBot", "state_from_view"]


def state_from_view(game: Any, view: View, rng: random.Random) -> Any:
    """An OpenSpiel state of ``game`` (okgin.openspiel, one hand) consistent with what
    ``view``'s seat has seen of the hand so far (see the module doc)."""
    from okgin.openspiel import DISCARD_BASE, DRAW_DISCARD_ID, DRAW_STOCK_ID, PASS_ID, TAKE_ID

    me = view.seat
    assert me is not None and view.hand is not None
    other = view.dealer if me == view.nondealer else view.nondealer
    events = list(view.events)
    # My cards as dealt: undo the hand's moves backwards.
    mine = set(view.hand)
    for e in reversed(events):
        if e.seat != me or e.card is None:
            continue
        if e.kind == "discard":
            mine.add(e.card)
        elif e.kind in ("take", "draw_discard", "draw_stock"):
            mine.discard(e.card)
    # The opponent: 10 dealt slots, one more per hidden stock draw; a card it threw that it
    # was not seen to take goes into one of the slots it held then.
    slots: list[int | None] = [None] * 10
    held_slots = list(range(10))  # slot indices the opponent holds, card still unknown
    held_known: set[int] = set()
    draw_slot: dict[int, int] = {}  # event index -> slot of that hidden stock draw
    for i, e in enumerate(events):
        if e.seat != other:
            continue
        if e.kind in ("take", "draw_discard") and e.card is not None:
            held_known.add(e.card)
        elif e.kind == "draw_stock":
            slots.append(None)
            draw_slot[i] = len(slots) - 1
            held_slots.append(len(slots) - 1)
        elif e.kind == "discard" and e.card is not None:
            if e.card in held_known:
                held_known.discard(e.card)
            else:
                k = held_slots.pop(rng.randrange(len(held_slots)))
                slots[k] = e.card
    seen = set(mine) | {view.upcard} | {e.card for e in events if e.card is not None}
    unseen = [c for c in range(52) if c not in seen]
    rng.shuffle(unseen)
    for k, c in enumerate(slots):
        if c is None:
            slots[k] = unseen.pop()
    dealt_other = slots[:10]
    my_cards = sorted(mine)
    rng.shuffle(my_cards)
    state = game.new_initial_state()
    state.apply_action(view.dealer)  # the start's chance node: the first dealer
    first, second = (my_cards, dealt_other) if me == view.nondealer else (dealt_other, my_cards)
    for c in [*first, *second, view.upcard]:
        state.apply_action(c)
    for i, e in enumerate(events):
        if e.kind == "take":
            state.apply_action(TAKE_ID)
        elif e.kind == "pass":
            state.apply_action(PASS_ID)
        elif e.kind == "draw_discard":
            state.apply_action(DRAW_DISCARD_ID)
        elif e.kind == "draw_stock":
            state.apply_action(DRAW_STOCK_ID)
            card = e.card if e.seat == me else slots[draw_slot[i]]
            state.apply_action(card)
        elif e.kind == "discard":
            assert e.card is not None
            state.apply_action(DISCARD_BASE + e.card)
        else:  # a knock or big gin ends the hand: no decision follows it in this hand
            raise ValueError(f"unexpected {e.kind} in a running hand")
    return state


class IsmctsBot(Bot):
    """OpenSpiel's ISMCTS with ``simulations`` random-rollout simulations per decision."""

    name = "ismcts"
    simulations = 20
    uct_c = 40.0  # returns are points (about +-60), not +-1: a larger constant keeps exploring

    def __init__(self, seed: int | str | None = None) -> None:
        super().__init__(seed)
        self.rules = RuleSet()
        self._game: Any = None
        self._bot: Any = None

    def on_game_start(self, seat: int, rules: RuleSet, num_seats: int) -> None:
        if rules.variant != "oklahoma":
            raise ValueError("the ISMCTS bot plays Oklahoma Gin only (OpenSpiel's Gin in the Box has no sitter)")
        self.rules = rules
        self._game = self._bot = None

    def _searcher(self) -> tuple[Any, Any]:
        if self._bot is None:
            import numpy as np
            import pyspiel
            from open_spiel.python.algorithms import ismcts, mcts  # type: ignore[import-untyped]

            from okgin.openspiel import rules_param

            self._game = pyspiel.load_game("oklahoma_gin", {"returns": "hand", "rules": rules_param(self.rules)})
            rs = np.random.RandomState(self.rng.getrandbits(32))
            evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rs)
            self._bot = ismcts.ISMCTSBot(game=self._game, evaluator=evaluator, uct_c=self.uct_c,
                                         max_simulations=self.simulations, random_state=rs)
        return self._game, self._bot

    def choose(self, view: View, legal: list[Action]) -> Action:
        if len(legal) == 1:
            return legal[0]
        from okgin.openspiel import id_action

        game, bot = self._searcher()
        state = state_from_view(game, view, self.rng)
        action = id_action(bot.step(state))
        for a in legal:
            if a == action:
                return a
        raise AssertionError(f"ISMCTS chose {action}, not among the legal {legal}")
