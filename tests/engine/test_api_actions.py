"""The engine's action contract (brief: "an illegal action raises one specific exception
with a sentence saying why, and leaves the state untouched"), and the Action wire form."""

from __future__ import annotations

import random

import pytest
from enginekit import random_action

from okgin import Action, Game, IllegalAction, RuleSet, canonical_json
from okgin.actions import KINDS
from okgin.cards import cards_of

UNIVERSE = [Action(k) for k in ("take", "pass", "draw_stock", "draw_discard", "big_gin")] + [
    Action(k, c) for k in ("discard", "knock") for c in range(52)
]


def light_snapshot(g: Game) -> str:
    h = g.hand
    return canonical_json(
        [h.hands, h.stock, h.discard_pile, h.phase, h.to_act, h.taken, h.passes, h.stock_only, len(h.events),
         len(g.log), g.scores, len(g.results), g.over, [a.to_wire() for a in g.legal_actions()]]
    )


@pytest.mark.parametrize(
    ("variant", "options"), [("oklahoma", {}), ("oklahoma", {"big_gin": True, "allow_discard_of_taken_card": True}), ("box", {})]
)
def test_every_action_is_either_legal_or_refused_with_a_sentence_and_no_change(variant, options):
    rng = random.Random(f"{variant}{options}")
    g = Game(RuleSet(variant=variant, target_score=60, **options), 17)
    states = 0
    while not g.is_over and states < 40:
        legal = set(g.legal_actions())
        before = light_snapshot(g)
        for a in UNIVERSE:
            ok = g.is_legal(a)
            assert ok == (a in legal), f"is_legal({a}) disagrees with legal_actions()"
            if not ok:
                with pytest.raises(IllegalAction) as e:
                    g.apply(a)
                assert len(str(e.value).split()) >= 3 and str(e.value)[0].isalnum()
        assert light_snapshot(g) == before
        g.apply(random_action(g, rng, 0.3))
        states += 1


def test_legal_actions_come_in_a_fixed_order_and_are_not_shared_state():
    g = Game(RuleSet(), 2)
    g.apply(g.legal_actions()[0])  # take
    first = g.legal_actions()
    first.clear()  # a caller mangling its copy must not change the game
    again = g.legal_actions()
    assert again and again[0].kind == "discard"
    assert [a.card for a in again if a.kind == "discard"] == sorted(a.card for a in again if a.kind == "discard")


def test_a_knock_with_the_best_melds_declared_is_legal_when_the_plain_knock_is():
    rng = random.Random(4)
    found = 0
    for seed in range(300):
        g = Game(RuleSet(knock_limit=10), seed)
        while not g.is_over and g.hand.number == 0:
            knocks = [a for a in g.legal_actions() if a.kind == "knock"]
            if knocks:
                from okgin.melds import min_arrangements_mask

                a = knocks[0]
                rest = g.hand.hands[g.current_player] & ~(1 << a.card)
                melds = [list(m) for m in min_arrangements_mask(rest)[0].melds]
                assert g.is_legal(Action.knock(a.card, melds))
                if melds:  # declaring one meld fewer is legal only if still within the limit
                    within = _deadwood_without(rest, melds[1:]) <= g.hand.knock_limit
                    assert g.is_legal(Action.knock(a.card, melds[1:])) == within
                found += 1
                break
            g.apply(rng.choice(g.legal_actions()))
        if found >= 10:
            break
    assert found >= 10


def _deadwood_without(rest: int, melds) -> int:
    from okgin.cards import CARD_VALUES

    used = {c for m in melds for c in m}
    return sum(CARD_VALUES[c] for c in cards_of(rest) if c not in used)


# ------------------------------------------------------------------ the wire form


@pytest.mark.parametrize(
    "a",
    [
        Action("take"),
        Action("pass"),
        Action("draw_stock"),
        Action("draw_discard"),
        Action.discard(5),
        Action.knock(51),
        Action.knock(3, [[0, 1, 2]]),
        Action.big_gin_knock([[0, 1, 2, 3]]),
    ],
)
def test_action_wire_round_trip(a):
    assert Action.from_wire(a.to_wire()) == a


def test_action_wire_forms():
    assert Action.discard(32).to_wire() == {"kind": "discard", "card": "7h"}
    assert Action.knock(32, [[41, 40, 39]]).to_wire() == {"kind": "knock", "card": "7h", "melds": [["As", "2s", "3s"]]}
    assert str(Action.knock(32, [[39, 40, 41]])) == "knock 7h [As 2s 3s]"
    assert str(Action("draw_stock")) == "draw stock"


@pytest.mark.parametrize(
    ("wire", "msg"),
    [
        ("discard", "a map"),
        ({"kind": "fold"}, "unknown action kind"),
        ({}, "unknown action kind"),
        ({"kind": "discard"}, "needs a 'card'"),
        ({"kind": "discard", "card": "Zz"}, "'Zz'"),
        ({"kind": "discard", "card": 7}, "string"),
        ({"kind": "knock", "card": "7h", "melds": "7h8h9h"}, "list of lists"),
        ({"kind": "knock", "card": "7h", "melds": [["7h", 3]]}, "string"),
        ({"kind": "knock", "card": "7h", "melds": [["As"]] * 12}, "more cards than a hand"),
        # as strict as the schema (issue 18): a field the kind does not take is refused
        ({"kind": "take", "card": "7h"}, "takes no 'card'"),
        ({"kind": "pass", "card": None}, "takes no 'card'"),
        ({"kind": "discard", "card": "7h", "melds": [["7h"]]}, "only knock and big_gin take 'melds'"),
        ({"kind": "knock", "card": "7h", "melds": None}, "list of lists"),
        ({"kind": "discard", "card": "10h"}, "like 'As'"),  # parse_card reads it; the wire does not
        ({"kind": "discard", "card": "7H"}, "like 'As'"),
        ({"kind": "take", "other": 1}, None),  # an unknown field is ignored, as everywhere (§3)
    ],
)
def test_action_from_wire_refuses_malformed_input_with_a_sentence(wire, msg):
    if msg is None:
        assert Action.from_wire(wire) == Action("take")
        return
    with pytest.raises(ValueError, match=msg):
        Action.from_wire(wire)


@pytest.mark.parametrize(
    ("args", "msg"),
    [
        (("fold",), "unknown action kind"),
        (("discard",), "needs card"),
        (("take", 3), "takes no card"),
        (("discard", 3, ((0, 1, 2),)), "only knock and big_gin take melds"),
        (("discard", 52), "not a card"),
        (("discard", -1), "not a card"),
        (("knock", True), "not a card"),
    ],
)
def test_action_constructor_validates(args, msg):
    with pytest.raises(ValueError, match=msg):
        Action(*args)


def test_action_accepts_card_strings_and_normalises_melds():
    assert Action("discard", "7h") == Action.discard(32)
    assert Action("knock", 32, [[2, 1, 0]]) == Action.knock(32, [[0, 1, 2]])
    assert hash(Action("knock", 32, [[2, 1, 0]])) == hash(Action.knock(32, [[0, 1, 2]]))


def test_all_kinds_are_known():
    assert set(KINDS) == {"take", "pass", "draw_stock", "draw_discard", "discard", "knock", "big_gin"}
