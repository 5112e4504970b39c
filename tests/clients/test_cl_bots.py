"""The built-in bots: ``simple`` follows its stated rules exactly; both play every role
of both variants for 200 games without an illegal action."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clients.bots.simple import best_discards, joins_meld, simple_choice
from clients.match import run_match
from okgin import Action, Game, RuleSet, View, deadwood, mask_of, parse_cards
from okgin.cards import value


def cards(text: str) -> list[int]:
    return parse_cards(text)


# ---------------------------------------------------------------- joins a meld
@pytest.mark.parametrize(
    ("hand", "card", "joins"),
    [
        ("5h 6h Kc", "7h", True),  # run above
        ("8h 9h Kc", "7h", True),  # run below
        ("6h 8h Kc", "7h", True),  # run around
        ("7c 7d Kc", "7h", True),  # set of three
        ("7c Kc 2d", "7h", False),  # one of the rank only
        ("5h 7c Kc", "7h", False),  # a gap
        ("Qs Ks 2c", "As", False),  # no wrap-around: Q-K-A is not a run
        ("2s 3s 9c", "As", True),  # A-2-3 is a run
        ("Js Qs 2c", "Ks", True),
        ("5d 6d Kc", "7h", False),  # neighbours of another suit
    ],
)
def test_joins_meld(hand: str, card: str, joins: bool) -> None:
    assert joins_meld(mask_of(cards(hand)), cards(card)[0]) is joins


@settings(max_examples=300)
@given(st.lists(st.integers(0, 51), min_size=11, max_size=11, unique=True))
def test_joins_meld_means_a_meld_with_the_card_exists(hand11: list[int]) -> None:
    """Brute force: some meld of hand+card containing the card exists iff joins_meld."""
    *hand, card = hand11
    r, s = card % 13, card // 13
    held = set(hand)
    set_mates = sum(1 for t in range(4) if t != s and t * 13 + r in held)
    run = any(
        all(s * 13 + k in held or k == r for k in range(lo, lo + 3))
        for lo in range(max(0, r - 2), min(r, 10) + 1)
    )
    assert joins_meld(mask_of(hand), card) is (set_mates >= 2 or run)


# ------------------------------------------------------------------ discards
@settings(max_examples=300)
@given(st.lists(st.integers(0, 51), min_size=11, max_size=11, unique=True), st.booleans())
def test_best_discard_is_least_deadwood_then_highest_value_never_barred(hand: list[int], bar: bool) -> None:
    barred = hand[0] if bar else None
    dw, card = best_discards(mask_of(hand), barred)
    options = {c: deadwood([x for x in hand if x != c]) for c in hand if c != barred}
    least = min(options.values())
    assert card != barred
    assert dw == least == options[card]
    assert value(card) == max(value(c) for c, d in options.items() if d == least)


def _views(variant: str, seed: int, steps: int) -> list[tuple[View, list[Action], Game]]:
    """Positions reached by random play (the seat to act's view and legal actions)."""
    rng = random.Random(seed)
    game = Game(RuleSet(variant=variant), seed)
    out = []
    for _ in range(steps):
        if game.is_over:
            break
        seat = game.current_player
        assert seat is not None
        legal = game.legal_actions()
        out.append((game.view(seat), legal, game))
        game.apply(rng.choice(legal))
    return out


@settings(max_examples=40)
@given(variant=st.sampled_from(["oklahoma", "box"]), seed=st.integers(0, 10**6))
def test_simple_follows_its_rules_in_every_position(variant: str, seed: int) -> None:
    rng = random.Random(seed)
    game = Game(RuleSet(variant=variant), seed)
    for _ in range(150):
        if game.is_over:
            break
        seat = game.current_player
        assert seat is not None
        legal = game.legal_actions()
        view = game.view(seat)
        a = simple_choice(view, legal)
        assert a in legal, f"{a} not legal"
        hand = mask_of(view.hand or ())
        if view.phase == "offer":
            assert (a.kind == "take") is joins_meld(hand, view.upcard)
        elif view.phase == "draw":
            top = view.discard_pile[-1]
            assert (a.kind == "draw_discard") is (Action("draw_discard") in legal and joins_meld(hand, top))
        else:
            knocks = [x for x in legal if x.kind == "knock"]
            if knocks:
                assert a.kind == "knock", "simple knocks as soon as the rules allow"
            else:
                assert a.kind == "discard"
            assert a.card != view.taken_card
            best = min(deadwood([c for c in view.hand or () if c != x]) for x in view.hand or () if x != view.taken_card)
            assert deadwood([c for c in view.hand or () if c != a.card]) == best
        # The sitter's advice is simple's own move for the captain.
        if game.roles is not None and seat == game.roles[1]:
            sv = game.view(game.roles[2])
            from clients.bots.simple import SimpleBot

            adv = SimpleBot().advise(sv, legal)
            assert adv is not None and adv[0] == a
            game.advise(game.roles[2], adv[0], adv[1])  # the engine accepts it
        game.apply(rng.choice(legal))


def _constructed(rules: RuleSet, hand0: str, upcard: str, stock: list[str]) -> Game:
    from okgin.position import game_from_position

    return game_from_position(rules, hands={0: hand0, 1: "Ac 2c 4d 6h 8s Tc Qd Kh 9d 7c"}, upcard=upcard, stock=stock, dealer=1)


def test_simple_takes_a_melding_upcard_and_goes_big_gin() -> None:
    from clients.bots.simple import SimpleBot

    # Seat 0 holds two complete runs and 4s 5s: the 6s upcard joins a meld, and then
    # all 11 cards are melded: with the big_gin option simple takes big gin.
    g = _constructed(RuleSet(big_gin=True), "As 2s 3s 4s 5s 7h 8h 9h Th Jh", "6s", ["Kc", "Qc", "Jc"])
    bot = SimpleBot()
    a = bot.choose(g.view(0), g.legal_actions())
    assert a == Action("take")
    g.apply(a)
    a = bot.choose(g.view(0), g.legal_actions())
    assert a.kind == "big_gin"
    assert g.apply(a).outcome == "big_gin"  # type: ignore[union-attr]


def test_simple_knocks_at_once_with_the_least_deadwood_discard() -> None:
    from clients.bots.simple import SimpleBot

    # The 5c upcard sets the knock limit to 5 and joins no meld: simple passes. After
    # drawing Kd, throwing Kd leaves deadwood 2 (the 2d): simple knocks at once, with Kd.
    g = _constructed(RuleSet(), "As 2s 3s 7h 8h 9h Jc Jd Js 2d", "5c", ["Kd", "Qc", "Qh"])
    bot = SimpleBot()
    assert bot.choose(g.view(0), g.legal_actions()) == Action("pass")
    g.apply(Action("pass"))
    g.apply(Action("pass"))
    g.apply(bot.choose(g.view(0), g.legal_actions()))  # draw_stock (the only legal draw)
    a = bot.choose(g.view(0), g.legal_actions())
    assert a == Action.knock(cards("Kd")[0])
    assert g.apply(a).outcome == "knock"  # type: ignore[union-attr]


# ----------------------------------------------------------- 200 games each
@pytest.mark.parametrize(("bots", "games"), [(["random", "simple"], 200), (["random", "simple", "simple"], 200)])
def test_builtin_bots_play_200_games_of_each_variant_in_process(bots: list[str], games: int) -> None:
    """random and simple in every seat and (box) every role, with duplicate deals."""
    res = run_match(bots, games=games, seed="bots200", keep_records=len(bots) == 3)
    assert len(res.games) >= games
    assert all(g.termination == "normal" for g in res.games), "an illegal action forfeited a game"
    assert all(s.forfeits == 0 for s in res.stats())
    if len(bots) == 3:
        # Every bot was box, captain and sitter, and sitters did advise.
        advised = sum(1 for g in res.games for e in (g.record or {})["entries"] if "advice" in e)
        assert advised > 0
        for i in range(3):
            assert any(i in h.players for g in res.games for h in g.hands)
            assert any(i not in h.players for g in res.games for h in g.hands), "never sat out"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("bots", "games"),
    [
        (["simple", "simple"], 200),
        (["simple", "simple", "simple"], 200),
        # random against itself rarely knocks: most hands are drawn and a game to 100
        # takes about 200 hands, so fewer games (the 200-game runs above pair random
        # with simple, in every seat and role).
        (["random", "random"], 20),
        (["random", "random", "random"], 12),
    ],
)
def test_builtin_self_play(bots: list[str], games: int) -> None:
    res = run_match(bots, games=games, seed="self", jobs=2)
    assert all(g.termination == "normal" for g in res.games)
