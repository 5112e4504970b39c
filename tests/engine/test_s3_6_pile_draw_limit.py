"""The rule ``max_pile_draws`` (docs/rules.md §3.6.2,
"The pile-draw limit"): the wall (§3.6.1) ends a hand only when the stock runs down, and drawing from the
discard pile never shrinks it, so two legal players could pass cards through the pile
for ever. After ``max_pile_draws`` draws from the discard pile in one hand, the next
discard ends the hand as a drawn hand (§3.6's consequences: no score, same dealer, box
roles unchanged); the player who made the last draw may still knock instead.

The loop really happens between legal bots: ``MeldTaker`` (the simple bot, except that
it throws its highest card instead of its least-deadwood one) against the built-in
``simple`` bot. Before the rule, ``okgin match`` gave up on such a game at its
100,000-action cap.
"""

from __future__ import annotations

import random

import pytest
from enginekit import all_52, play, rules_strategy
from hypothesis import given, settings
from hypothesis import strategies as st

from clients.bot import Bot
from clients.bots.simple import SimpleBot, simple_choice
from clients.local import play_local
from okgin import Action, Game, RuleSet, View, card_str, game_from_position, parse_card
from okgin.hand import MAX_STOCK_DRAWS, Hand, max_hand_actions
from okgin.rules import DEFAULT_MAX_PILE_DRAWS

ND = "As 2s 3s 4h 5h 6h 9c 9d 9h 2c"  # seat 1 can knock with 2 whenever it likes
DL = "Jc Qc Ks 7s 8s Ts 3d 4d 6d Qd"


class MeldTaker(Bot):
    """Takes the upcard / top discard when it joins a meld and knocks as soon as it can
    (both exactly as ``simple``), but throws its highest card (rank, then suit)."""

    name = "meld-taker"

    def choose(self, view: View, legal: list[Action]) -> Action:
        a = simple_choice(view, legal)
        if a.kind != "discard":
            return a
        return max((x for x in legal if x.kind == "discard"), key=lambda x: (x.card % 13, x.card // 13))


def play_hands(game: Game, bots: list[Bot]) -> list[Hand]:
    """Play ``game`` to its end with ``bots``; return every hand played, in order."""
    hands = [game.hand]
    while not game.is_over:
        seat = game.current_player
        assert seat is not None
        game.apply(bots[seat].choose(game.view(seat), game.legal_actions()), seat=seat)
        if game.hand is not hands[-1]:
            hands.append(game.hand)
    return hands


def the_issues_loop(rules: RuleSet) -> Game:
    """6h 6s 6c go round for ever (issue 14): simple (seat 0) holds 6d 7d 8d, so every
    six "joins a meld" by two others of its rank yet stays deadwood, and throws the
    other six; MeldTaker (seat 1) takes each six into 4-5 of its suit and throws its
    highest card, the other six. The ace upcard makes the knock limit 1: nobody knocks."""
    return game_from_position(
        rules,
        hands={0: "6d 7d 8d Kc Kd Kh Qc Qd Qh 6s", 1: "4h 5h 4s 5s 4c 5c 2c 2d 2h 6h"},
        upcard="As",
        stock=["6c"],
        dealer=0,
    )


@pytest.mark.parametrize("limit", [DEFAULT_MAX_PILE_DRAWS, 7, 1000])
def test_pile_draws_the_issues_loop_ends_as_a_drawn_hand(limit):
    g = the_issues_loop(RuleSet(max_pile_draws=limit))
    bots: list[Bot] = [SimpleBot(), MeldTaker()]
    hand = g.hand
    while g.hand is hand:
        seat = g.current_player
        assert seat is not None
        g.apply(bots[seat].choose(g.view(seat), g.legal_actions()), seat=seat)
        assert all_52(g)
    drawn = [c for _, k, c in hand.events if k == "draw_discard"]
    assert {card_str(c) for c in drawn} == {"6h", "6s", "6c"}  # the loop of the issue
    assert len(drawn) == hand.pile_draws == limit
    assert [k for _, k, _ in hand.events[-2:]] == ["draw_discard", "discard"]  # judged after the discard
    assert len(hand.stock) == 30  # only the first turn drew from the stock
    r = g.results[0]
    assert (r.outcome, r.winner, r.points, r.knocker, r.knocker_layout) == ("drawn", None, 0, None, None)
    assert g.scores == [0, 0] and g.hand.number == 1 and g.hand.dealer == 0  # §3.6: same dealer


def test_pile_draws_a_dealt_loop_between_meld_taker_and_simple_now_ends():
    """Seed 718 deals, in its second hand, a loop of 7h 7d 7s (found by search): the
    hand ends at the limit, and the game goes on to its normal end."""
    g = Game(RuleSet(), 718)
    hands = play_hands(g, [MeldTaker(), SimpleBot()])
    looped = hands[1]
    assert looped.result is not None and looped.result.outcome == "drawn"
    assert looped.pile_draws == DEFAULT_MAX_PILE_DRAWS and len(looped.stock) > 2
    tail = [card_str(c) for _, k, c in looped.events if k == "draw_discard"][-30:]
    assert set(tail) == {"7h", "7d", "7s"}
    assert g.is_over and g.termination == "normal"
    assert max(h.pile_draws for h in hands) == DEFAULT_MAX_PILE_DRAWS
    # The same game through the in-process match loop, which no longer needs an action cap.
    assert play_local([MeldTaker(), SimpleBot()], RuleSet(), seed=718).to_record() == g.to_record()
    assert Game.from_record(g.to_record()).to_record() == g.to_record()  # replay agrees


def test_pile_draws_the_last_drawer_may_still_knock():
    g = game_from_position(RuleSet(max_pile_draws=1), hands={1: ND, 0: DL}, upcard="Kd", stock=["Kh"], dealer=0)
    play(g, "pass", "pass", "stock", "discard Kh", "stock", "discard 6d")  # seat 1 then seat 0
    assert g.hand.pile_draws == 0
    play(g, "pile")  # seat 1 takes 6d: the hand's one allowed pile draw
    assert g.hand.pile_draws == 1
    r = g.apply(Action.knock(parse_card("2c")))  # instead of a discard, which would draw the hand
    assert r is not None and r.outcome != "drawn" and r.knocker == 1


def test_pile_draws_the_discard_after_the_last_pile_draw_draws_the_hand():
    g = game_from_position(RuleSet(max_pile_draws=2), hands={1: ND, 0: DL}, upcard="Kd", stock=["Kh"], dealer=0)
    play(g, "pass", "pass", "stock", "discard Kh", "pile", "discard Jc")
    assert g.hand.number == 0 and g.hand.pile_draws == 1
    play(g, "pile")  # seat 1 takes Jc: the second pile draw
    assert g.hand.number == 0 and g.hand.phase == "discard"
    play(g, "discard 2c")
    assert g.hand.number == 1 and g.results[0].outcome == "drawn"
    for seat in (0, 1, None):  # a drawn hand reveals nothing, as at the Wall
        lr = g.view(seat).last_result.to_wire()
        assert lr["outcome"] == "drawn" and lr["knocker_layout"] is None and lr["knock_discard"] is None


def test_pile_draws_the_upcard_taken_at_the_offer_does_not_count():
    g = game_from_position(RuleSet(max_pile_draws=1), hands={1: ND, 0: DL}, upcard="7h", dealer=0)
    play(g, "take", "discard 2c")  # seat 1 takes the upcard (as in OpenSpiel, not counted)
    assert g.hand.number == 0 and g.hand.pile_draws == 0 and g.hand.phase == "draw"
    play(g, "pile", "discard Qd")
    assert g.hand.number == 1 and g.results[0].outcome == "drawn"


def test_pile_draws_box_roles_stay_after_the_drawn_hand():
    g = game_from_position(
        RuleSet(variant="box", max_pile_draws=1), hands={1: ND, 0: DL}, upcard="Kd", stock=["Kh"], roles=(0, 1, 2)
    )
    play(g, "pass", "pass", "stock", "discard Kh", "pile", "discard Jc")
    assert g.results[0].outcome == "drawn" and g.roles == (0, 1, 2) and g.scores == [0, 0, 0]


def test_pile_draws_replay_and_records_carry_the_option():
    rules = RuleSet(max_pile_draws=3)
    g = the_issues_loop(rules)
    play_hands(g, [SimpleBot(), MeldTaker()])
    rec = g.to_record()
    assert rec["rules"]["max_pile_draws"] == 3 and rec["results"][0]["outcome"] == "drawn"
    back = Game.from_record(rec)  # verify: every result and the final scores agree
    assert back.rules == rules and back.to_record() == rec


def test_max_hand_actions_is_the_bound_the_rules_imply():
    assert MAX_STOCK_DRAWS == 29
    assert max_hand_actions(RuleSet()) == 3 + 2 * (29 + DEFAULT_MAX_PILE_DRAWS)


def _pile_lover(game: Game, rng: random.Random) -> Action:
    """Random legal play that loves the discard pile and seldom knocks: the hands most
    likely to run on."""
    legal = game.legal_actions()
    if game.hand.phase == "draw" and len(legal) > 1 and rng.random() < 0.9:
        return legal[1]  # draw_discard
    plain = [a for a in legal if a.kind not in ("knock", "big_gin")]
    return rng.choice(plain if plain and rng.random() < 0.97 else legal)


@settings(max_examples=60, deadline=None)
@given(rules_strategy(), st.integers(0, 10**9), st.sampled_from([1, 2, 5, 20, 200]))
def test_every_hand_of_legal_play_ends_within_the_bound_the_rules_imply(rules, seed, limit):
    """Whatever legal actions are played, a hand ends within ``max_hand_actions``: at
    most 29 stock-draw turns, ``max_pile_draws`` pile-draw turns and the offer."""
    rules = rules.with_options(max_pile_draws=limit)
    g = Game(rules, seed)
    rng = random.Random(seed)
    bound = max_hand_actions(rules)
    for _ in range(6):  # a few hands of this game
        hand, actions = g.hand, 0
        while g.hand is hand and not g.is_over:
            g.apply(_pile_lover(g, rng))
            actions += 1
            assert actions <= bound
            assert hand.pile_draws <= limit
        r = hand.result
        assert r is not None
        if r.outcome == "drawn" and len(hand.stock) > 2:
            assert hand.pile_draws == limit
        if g.is_over:
            break
