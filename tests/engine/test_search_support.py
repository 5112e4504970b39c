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

from okgin import Game, RuleSet, cards_of

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
    h.legal_cache = None
    want = [Action("discard", c) for c in cs if c != h.taken]
    want += [Action("knock", c) for c in cs if c != h.taken and brute_deadwood([x for x in cs if x != c]) <= limit]
    if big_gin and brute_deadwood(cs) == 0:
        want.append(Action("big_gin"))
    assert g.legal_actions() == want


# ------------------------------------------------------------------- Game.resample


def _history_is_consistent(game: Game) -> bool:
    """Undo this hand's events from the current hands and stock: every card must be where
    the event says it came from, and the undone state must be a deal (10 cards each, the
    upcard, the rest in the stock)."""
    h = game.hand
    hands = list(h.hands)
    stock = list(h.stock)
    pile = list(h.discard_pile)
    for s, kind, c in reversed(h.events):
        if kind == "discard":
            if hands[s] >> c & 1 or pile.pop() != c:
                return False
            hands[s] |= 1 << c
        elif kind == "draw_stock":
            if not hands[s] >> c & 1:
                return False
            hands[s] &= ~(1 << c)
            stock.append(c)
        elif kind in ("take", "draw_discard"):
            if not hands[s] >> c & 1:
                return False
            hands[s] &= ~(1 << c)
            pile.append(c)
    players = (h.nondealer, h.dealer)
    dealt = sum(hands)
    return (
        pile == [h.upcard]
        and all(hands[p].bit_count() == 10 for p in players)
        and all(hands[p] == 0 for p in range(len(hands)) if p not in players)
        and dealt.bit_count() == 20
        and sorted([*cards_of(dealt), *stock, h.upcard]) == list(range(52))
    )


@settings(max_examples=60, deadline=None)
@given(variant=st.sampled_from([0, 1]), seed=st.integers(0, 10**6), prefix=st.integers(0, 300), who=st.integers(-1, 2))
def test_resample_keeps_the_seats_view_and_is_a_legal_state(variant: int, seed: int, prefix: int, who: int) -> None:
    from enginekit import all_52

    from okgin.infostate import deal_hidden, hidden_of_game, hidden_of_view

    rules = VARIANTS[variant]
    game = Game(rules, seed=seed)
    rng = random.Random(seed)
    _advance(game, rng, prefix)
    seat = None if who < 0 else who % game.num_seats
    before = snapshot(game)
    view = game.view(seat)

    hidden = hidden_of_game(game, seat)
    if not game.is_over:
        assert hidden_of_view(view) == hidden
    r = game.resample(seat, random.Random(seed + 7))
    assert snapshot(game) == before  # the original is untouched
    assert r.view(seat) == view  # the seat cannot tell them apart
    if game.is_over:
        return
    assert all_52(r)
    assert _history_is_consistent(game) and _history_is_consistent(r)
    h = r.hand
    for s in range(r.num_seats):
        assert h.hands[s].bit_count() == game.hand.hands[s].bit_count()
        assert h.hands[s] & hidden.known[s] == hidden.known[s]
    # one implementation of the deal: a bot holding only the view draws the same world
    per_seat, stock = deal_hidden(hidden_of_view(view), random.Random(seed + 7))
    for s, cards in enumerate(per_seat):
        assert h.hands[s] == hidden.known[s] | sum(1 << c for c in cards)
    assert h.stock == stock
    # a legal state: its legal actions pass the engine's own check, and it plays on to the end
    for a in r.legal_actions():
        assert r.is_legal(a)
    _advance(r, random.Random(seed + 8), 2000)
    assert snapshot(game) == before


def test_resample_deals_the_hidden_cards_uniformly() -> None:
    """Each hidden card lands in the opponent's hand with probability slots / hidden."""
    from okgin.infostate import hidden_of_game

    game = Game(RuleSet(), seed=11)
    _advance(game, random.Random(3), 30)
    seat = game.current_player
    assert seat is not None
    opp = 1 - seat
    hidden = hidden_of_game(game, seat)
    p = hidden.slots[opp] / len(hidden.cards)
    n = 3000
    counts = dict.fromkeys(hidden.cards, 0)
    rng = random.Random(5)
    for _ in range(n):
        m = game.resample(seat, rng).hand.hands[opp] & ~hidden.known[opp]
        for c in cards_of(m):
            counts[c] += 1
    sd = (n * p * (1 - p)) ** 0.5
    assert all(abs(k - n * p) < 5 * sd for k in counts.values()), (p, counts)


def test_a_resampled_game_has_no_record() -> None:
    import pytest

    g = Game(RuleSet(), seed=1).resample(0, random.Random(1))
    with pytest.raises(ValueError, match="resampled"):
        g.to_record()


@settings(max_examples=40, deadline=None)
@given(variant=st.sampled_from([0, 1]), seed=st.integers(0, 10**6), allow_taken=st.booleans())
def test_hand_apply_and_game_apply_make_the_same_moves(variant: int, seed: int, allow_taken: bool) -> None:
    """Game.apply writes out Hand.apply's draw and discard paths (for speed): a hand driven
    through Hand.apply directly goes through exactly the same states, and both refuse
    the same illegal moves."""
    from okgin import Action, IllegalAction

    rules = VARIANTS[variant].with_options(allow_discard_of_taken_card=allow_taken, max_pile_draws=6)
    game = Game(rules, seed=seed)
    bare = game.hand.copy()
    rng = random.Random(seed)
    while True:
        h = game.hand
        for probe in (Action("discard", rng.randrange(52)), Action("draw_discard"), Action("draw_stock")):
            outcomes = []
            for apply in (game.apply, bare.apply):
                try:
                    apply(probe)
                except IllegalAction as e:
                    outcomes.append(str(e))
                else:
                    outcomes.append(None)
            assert outcomes[0] == outcomes[1]
            if outcomes[0] is None:
                break
        else:
            a = random_action(game, rng, knock_bias=0.2)
            r = game.apply(a)
            bare.apply(a)
            if r is not None:
                break
            continue
        if game.hand is not h:  # the probe ended the hand
            break
        assert (h.hands, h.stock, h.discard_pile, h.events, h.phase, h.to_act, h.taken, h.pile_draws, h.stock_only) == (
            bare.hands, bare.stock, bare.discard_pile, bare.events, bare.phase, bare.to_act, bare.taken, bare.pile_draws,
            bare.stock_only)
    from dataclasses import replace

    assert h.result is not None and replace(h.result, scores_after=()) == bare.result and bare.phase == "over"
