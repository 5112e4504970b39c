"""``eaai-simple``, the EAAI challenge's SimpleGinRummyPlayer: each rule of its published
description, legal whole games in every role, and determinism for a seed."""

from __future__ import annotations

import pytest

from clients.bots import get_bot
from clients.bots.eaai_simple import EaaiSimpleBot, just_drawn, least_deadwood_discards, played_pairs
from clients.bots.simple import joins_meld
from clients.local import play_local
from clients.match import run_match
from okgin import DRAW_DISCARD, DRAW_STOCK, PASS, TAKE, Game, RuleSet, View, mask_of
from okgin.melds import deadwood_mask


def _views(rules: RuleSet, seed: str, moves: int = 400) -> list[tuple[View, list, Game]]:
    """Views met by ``eaai-simple`` in a game against itself (with legal actions)."""
    g = Game(rules, seed)
    bots = [EaaiSimpleBot(seed=s) for s in range(g.num_seats)]
    out = []
    while not g.is_over and len(out) < moves:
        seat = g.current_player
        assert seat is not None
        v, legal = g.view(seat), g.legal_actions()
        out.append((v, legal, g))
        g.apply(bots[seat].choose(v, legal), seat=seat)
    return out


def test_registry_names_it() -> None:
    bot = get_bot("eaai-simple", seed=1)
    assert isinstance(bot, EaaiSimpleBot) and bot.name == "eaai-simple"


def test_face_up_card_only_when_it_joins_a_meld() -> None:
    seen = set()
    for v, legal, _ in _views(RuleSet(), "eaai/face-up"):
        if len(legal) == 1 or v.phase not in ("offer", "draw"):
            continue
        hand = mask_of(v.hand)
        a = EaaiSimpleBot(seed=0).choose(v, legal)
        card = v.upcard if v.phase == "offer" else v.discard_pile[-1]
        if v.phase == "offer":
            assert a == (TAKE if joins_meld(hand, card) else PASS)
        else:
            assert a == (DRAW_DISCARD if joins_meld(hand, card) else DRAW_STOCK)
        seen.add(a)
    assert DRAW_STOCK in seen


def test_discards_are_least_deadwood_and_knocks_come_at_once() -> None:
    knocks = 0
    for rules in (RuleSet(), RuleSet.standard_gin()):
        for v, legal, _ in _views(rules, "eaai/discard"):
            if v.phase != "discard":
                continue
            a = EaaiSimpleBot(seed=3).choose(v, legal)
            hand = mask_of(v.hand)
            allowed = [x.card for x in legal if x.kind == "discard"]
            drawn, pairs = just_drawn(v), played_pairs(v)
            allowed = [c for c in allowed if frozenset((drawn, c)) not in pairs] or allowed
            best, _ = least_deadwood_discards(hand, allowed)
            assert a.card is not None
            left = deadwood_mask(hand & ~(1 << a.card))
            assert left == best, "a discard must leave the least deadwood"
            if a.kind == "knock":
                knocks += 1
                assert left <= v.knock_limit
            else:
                # it never plays on when a least-deadwood discard allows a knock
                assert not (best <= v.knock_limit and any(x.kind == "knock" for x in legal))
    assert knocks > 0


def test_ties_are_broken_at_random_but_per_seed() -> None:
    """Two seeds choose differently somewhere among equal discards; one seed always alike."""
    differ = False
    for v, legal, _ in _views(RuleSet(), "eaai/ties"):
        if v.phase != "discard":
            continue
        a, b = EaaiSimpleBot(seed="x").choose(v, legal), EaaiSimpleBot(seed="y").choose(v, legal)
        assert EaaiSimpleBot(seed="x").choose(View.from_wire(v.to_wire()), legal) == a
        differ |= a != b
    assert differ


def test_never_repeats_a_draw_discard_pair() -> None:
    """The challenge's guard against passing cards back and forth: within a hand, no
    (drawn, discarded) pair is played twice while another discard is allowed."""
    for v, legal, _ in _views(RuleSet(), "eaai/pairs", moves=2000):
        if v.phase != "discard":
            continue
        a = EaaiSimpleBot(seed=1).choose(v, legal)
        mine = [e for e in v.events if e.seat == v.hand_of]
        drawn = mine[-1].card
        pairs = played_pairs(v)
        others = [x for x in legal if x.kind == "discard" and frozenset((drawn, x.card)) not in pairs]
        if others:
            assert frozenset((drawn, a.card)) not in pairs


@pytest.mark.parametrize("variant", ["oklahoma", "box"])
def test_whole_games_are_legal_and_deterministic(variant: str) -> None:
    """Against simple in every seating (every role of the box game, the sitter's advice
    included); play_local forfeits an illegal move, which never happens; the same seed
    replays the same games."""
    bots = ["eaai-simple", "simple"] + (["simple"] if variant == "box" else [])
    r1 = run_match(bots, games=12 if variant == "box" else 8, seed="eaai")
    r2 = run_match(bots, games=12 if variant == "box" else 8, seed="eaai")
    assert [g.key() for g in r1.games] == [g.key() for g in r2.games]
    assert all(g.at_fault is None and g.termination == "normal" for g in r1.games)


def test_advises_as_sitter() -> None:
    bots = [EaaiSimpleBot(seed=s) for s in range(3)]
    g = play_local(bots, RuleSet(variant="box"), "eaai/box")
    assert g.is_over and any(e[0] == "advice" for e in g.log)
