"""The strong bot's parameters added for issue 30: each does what it says, and with its
default (off) the bot is exactly ``strong-v1``."""

from __future__ import annotations

import random

from clients.bots.simple import joins_meld
from clients.bots.strong import V1, Params, StrongBot, StrongV1Bot
from clients.bots.strong.fastdw import dad_value
from clients.bots.strong.ginchase import Weighted
from okgin import PASS, TAKE, Game, RuleSet, mask_of, parse_cards
from okgin.melds import deadwood_mask


def test_v1_is_the_default_params_and_its_own_bot() -> None:
    assert Params() == V1
    assert StrongV1Bot(seed=1).params == V1 and StrongV1Bot(seed=1).name == "strong-v1"


def test_weighted_deadwood_at_weight_zero_is_deadwood() -> None:
    w = Weighted(0)
    rng = random.Random(5)
    for _ in range(500):
        cs = rng.sample(range(52), 11)
        h = sum(1 << c for c in cs)
        assert w.dad(h) == dad_value(h)
        assert w.dw(h & ~(1 << cs[0])) == deadwood_mask(h & ~(1 << cs[0]))


def test_weighted_deadwood_counts_unmelded_cards() -> None:
    w = Weighted(5)
    # one king from gin: 5 + 10; four low cards from gin: 4 * 5 + 8
    assert w.dw(mask_of(parse_cards("As 2s 3s 7h 7d 7c 9d Td Jd Kc"))) == 15
    assert w.dw(mask_of(parse_cards("As 2s 3s 7h 7d 7c 2h 2c 3d Ac"))) == 28


def test_value_draws_from_uses_the_simple_rule_below_the_limit() -> None:
    """Below ``value_draws_from`` the bot takes a face-up card exactly when it joins a meld."""
    seen = 0
    for seed in range(200):
        g = Game(RuleSet(), f"vdf/{seed}")
        if g.hand.knock_limit >= 4:
            continue
        seat = g.current_player
        assert seat is not None
        v = g.view(seat)
        a = StrongBot(seed=0, value_draws_from=4).choose(v, g.legal_actions())
        assert a == (TAKE if joins_meld(mask_of(v.hand or ()), v.upcard) else PASS)
        seen += 1
        if seen >= 8:
            break
    assert seen >= 8
