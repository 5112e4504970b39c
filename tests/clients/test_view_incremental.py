"""The engine's incremental view events (okgin/views.py) equal a rebuild from scratch.

The cache was added for self-play speed (bots ask for a view at every decision); this
differential test replays random games and compares every viewer's events and known
cards, at every step, with the straightforward computation the cache replaced.
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from okgin import Game, RuleSet
from okgin.views import Event, make_view


def rebuilt(game: Game, seat: int | None, full: bool) -> tuple[tuple[Event, ...], tuple[tuple[int, ...], ...]]:
    h = game.hand
    # Whose cards the seat sees: its own, or the captain's for the Box sitter (rules.md §5).
    owner = game.roles[1] if seat is not None and game.roles is not None and seat == game.roles[2] else seat
    may_see = {seat, owner} if seat is not None else set()
    events = []
    known: list[list[int]] = [[] for _ in range(game.num_seats)]
    for s, kind, card in h.events:
        if kind in ("take", "draw_discard"):
            known[s].append(card)  # type: ignore[arg-type]
        elif kind == "discard" and card in known[s]:
            known[s].remove(card)
        if kind == "draw_stock" and not full and s not in may_see:
            card = None
        events.append(Event(s, kind, card))
    return tuple(events), tuple(tuple(k) for k in known)


@settings(max_examples=25)
@given(variant=st.sampled_from(["oklahoma", "box"]), seed=st.integers(0, 10**6), pick=st.integers(0, 10**6))
def test_incremental_events_equal_rebuild(variant: str, seed: int, pick: int) -> None:
    rng = random.Random(pick)
    game = Game(RuleSet(variant=variant, target_score=30), seed)
    viewers: list[tuple[int | None, bool]] = [(s, False) for s in range(game.num_seats)] + [(None, False), (None, True)]
    steps = 0
    while not game.is_over and steps < 400:
        # Views are asked for irregularly, as bots and referees do, so the cache is
        # sometimes several events behind and sometimes crosses a new hand.
        for seat, full in viewers:
            if rng.random() < 0.4:
                v = make_view(game, seat, full)
                assert (v.events, v.known_cards) == rebuilt(game, seat, full)
        game.apply(rng.choice(game.legal_actions()))
        steps += 1
