"""Engine support for search (issue 19, deliverable 1): ``Game.copy()``.

A copy must be independent (playing on it never changes the original) and faithful
(from the same point, the same actions give the same states), in both variants, at any
point of a game, including across hand ends and after the game is over.
"""

from __future__ import annotations

import random

from enginekit import random_action, snapshot
from hypothesis import given, settings
from hypothesis import strategies as st

from okgin import Game, RuleSet

VARIANTS = [RuleSet(), RuleSet(variant="box")]


def _advance(game: Game, rng: random.Random, n: int) -> None:
    """``n`` random legal actions (knocks favoured, so hands end and scores move)."""
    for _ in range(n):
        if game.is_over:
            return
        game.apply(random_action(game, rng, knock_bias=0.3, greedy=0.5))


@settings(max_examples=40, deadline=None)
@given(
    variant=st.sampled_from([0, 1]),
    seed=st.integers(0, 10**6),
    prefix=st.integers(0, 400),
    moves=st.integers(1, 400),
)
def test_copy_is_independent_and_plays_identically(variant: int, seed: int, prefix: int, moves: int) -> None:
    rules = VARIANTS[variant]
    game = Game(rules, seed=seed)
    rng = random.Random(seed)
    _advance(game, rng, prefix)
    game.view(0)  # fill the views' cache, which the copy must not share
    before = snapshot(game)

    # independence: random play on the copy leaves the original untouched
    c = game.copy()
    assert snapshot(c) == before
    _advance(c, random.Random(seed + 1), moves)
    assert snapshot(game) == before

    # faithfulness: the same actions from the same point give the same states
    c2 = game.copy()
    r1, r2 = random.Random(seed + 2), random.Random(seed + 2)
    for _ in range(moves):
        if game.is_over:
            break
        a = random_action(game, r1, knock_bias=0.3, greedy=0.5)
        assert random_action(c2, r2, knock_bias=0.3, greedy=0.5) == a
        assert game.apply(a) == c2.apply(a)
        assert game.legal_actions() == c2.legal_actions()
    assert snapshot(c2) == snapshot(game)


def _meldy_hand(rng: random.Random) -> int:
    """An 11-card mask, often full of melds (so that knocks and gins are common)."""
    cards: set[int] = set()
    while len(cards) < 11:
        r = rng.random()
        if r < 0.35:  # a run of 3-5 in one suit
            s, start, n = rng.randrange(4), rng.randrange(13), rng.randint(3, 5)
            cards.update(s * 13 + k for k in range(start, min(13, start + n)))
        elif r < 0.6:  # three or four of a rank
            rank = rng.randrange(13)
            cards.update(rng.sample([s * 13 + rank for s in range(4)], rng.randint(3, 4)))
        else:
            cards.add(rng.randrange(52))
    return sum(1 << c for c in rng.sample(sorted(cards), 11))


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 10**9), limit=st.integers(0, 10), barred=st.booleans(), big_gin=st.booleans())
def test_discard_phase_legal_list_matches_an_oracle(seed: int, limit: int, barred: bool, big_gin: bool) -> None:
    """The discard phase's legal list (built from tables and a deadwood lower bound)
    against the rules written out plainly with the exhaustive deadwood oracle."""
    from enginekit import brute_deadwood

    from okgin import Action, cards_of

    rng = random.Random(seed)
    g = Game(RuleSet(big_gin=big_gin), seed=seed)
    h = g.hand
    hand = _meldy_hand(rng)
    cs = cards_of(hand)
    h.phase, h.to_act = "discard", h.nondealer
    h.hands[h.to_act] = hand
    h.taken = rng.choice(cs) if barred else None
    h.knock_limit = limit
    h._legal = None
    want = [Action("discard", c) for c in cs if c != h.taken]
    want += [Action("knock", c) for c in cs if c != h.taken and brute_deadwood([x for x in cs if x != c]) <= limit]
    if big_gin and brute_deadwood(cs) == 0:
        want.append(Action("big_gin"))
    assert g.legal_actions() == want
