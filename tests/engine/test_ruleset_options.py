"""Every docs/rules.md option (§8) is a ``RuleSet`` field of the same name with its default,
validated with clear errors (docs/rules.md §3.1, §3.3, §3.4, §3.5, §3.7, §4). One option is
not in the traditional rules: ``max_pile_draws`` (docs/rules.md §3.6.2)."""

from __future__ import annotations

import json
from dataclasses import fields

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from okgin import RuleError, RuleSet
from okgin.rules import DEFAULT_MAX_PILE_DRAWS
from okgin.rules_cli import main as rules_main

RULES_MD_DEFAULTS = {
    "variant": "oklahoma",
    "ace_upcard_gin_only": False,  # §3.1
    "spade_upcard_doubles": False,  # §3.1
    "allow_discard_of_taken_card": False,  # §3.3
    "big_gin": False,  # §3.4
    "big_gin_bonus": 31,  # §3.4
    "gin_bonus": 25,  # §3.5
    "undercut_bonus": 10,  # §3.5
    "tie_is_undercut": True,  # §3.5
    "target_score": 100,  # §3.7
    "classic_bonuses": False,  # §3.7
}


def test_rules_options_have_the_rules_md_names_and_defaults():
    r = RuleSet()
    names = {f.name for f in fields(RuleSet)}
    assert names == {*RULES_MD_DEFAULTS, "knock_limit", "max_pile_draws", "max_hands"}
    assert r.max_hands == 0  # docs/rules.md §3.7.1: no game limit unless an event sets one
    assert r.max_pile_draws == DEFAULT_MAX_PILE_DRAWS == 100  # docs/rules.md §3.6.2
    for name, default in RULES_MD_DEFAULTS.items():
        assert getattr(r, name) == default, name
    assert r.effective_knock_limit == "upcard"  # §3.1
    assert RuleSet(variant="box").effective_knock_limit == 10  # §4
    assert RuleSet(variant="box").num_players == 3 and r.num_players == 2


@pytest.mark.parametrize(
    ("kwargs", "msg"),
    [
        ({"variant": "rummy"}, "variant must be one of oklahoma, box"),
        ({"knock_limit": 11}, "knock_limit must be 'upcard' or a whole number 0-10"),
        ({"knock_limit": -1}, "knock_limit"),
        ({"knock_limit": "ten"}, "knock_limit"),
        ({"knock_limit": True}, "knock_limit"),
        ({"knock_limit": 2.5}, "knock_limit"),
        ({"big_gin": 1}, "big_gin must be true or false"),
        ({"tie_is_undercut": "yes"}, "tie_is_undercut must be true or false"),
        ({"gin_bonus": 2.5}, "gin_bonus must be a whole number"),
        ({"gin_bonus": True}, "gin_bonus must be a whole number"),
        ({"undercut_bonus": -1}, "undercut_bonus must be between 0 and 1000"),
        ({"big_gin_bonus": 1001}, "big_gin_bonus must be between"),
        ({"target_score": 0}, "target_score must be between 1 and 100000"),
        ({"max_pile_draws": 0}, "max_pile_draws must be between 1 and 1000, not 0"),
        ({"max_pile_draws": 1001}, "max_pile_draws must be between 1 and 1000"),
        ({"max_pile_draws": -5}, "max_pile_draws must be between"),
        ({"max_pile_draws": True}, "max_pile_draws must be a whole number"),
        ({"max_pile_draws": 2.5}, "max_pile_draws must be a whole number"),
        ({"max_pile_draws": "50"}, "max_pile_draws must be a whole number"),
        ({"max_pile_draws": None}, "max_pile_draws must be a whole number"),
    ],
)
def test_rules_bad_values_are_refused_with_a_clear_error(kwargs, msg):
    with pytest.raises(RuleError, match=msg):
        RuleSet(**kwargs)


def test_rules_from_dict_and_to_dict():
    r = RuleSet(variant="box", spade_upcard_doubles=True, knock_limit="upcard")
    d = r.to_dict()
    assert d["knock_limit"] == "upcard" and d["variant"] == "box"
    assert RuleSet.from_dict(d) == r
    assert RuleSet.from_dict(RuleSet().to_dict()).to_dict() == RuleSet().to_dict()
    with pytest.raises(RuleError, match="unknown rule option"):
        RuleSet.from_dict({"jokers": 2})
    with pytest.raises(RuleError, match="map"):
        RuleSet.from_dict(["variant"])


def test_rules_max_pile_draws_unset_is_the_default():
    """A map without ``max_pile_draws`` (a record or request from before the option) is
    the default rule, equal to it spelled out; another value is another game."""
    old = {k: v for k, v in RuleSet().to_dict().items() if k != "max_pile_draws"}
    assert RuleSet.from_dict(old) == RuleSet() == RuleSet(max_pile_draws=DEFAULT_MAX_PILE_DRAWS)
    assert RuleSet.from_dict(old).to_dict()["max_pile_draws"] == DEFAULT_MAX_PILE_DRAWS
    assert RuleSet(max_pile_draws=7) != RuleSet() and hash(RuleSet(max_pile_draws=7)) != hash(RuleSet())
    assert RuleSet.from_dict(RuleSet(max_pile_draws=7).to_dict()).max_pile_draws == 7
    assert RuleSet().with_assignments(["max_pile_draws=1000"]).max_pile_draws == 1000
    for bad, msg in [("max_pile_draws=off", "whole number"), ("max_pile_draws=0", "between 1 and 1000")]:
        with pytest.raises(RuleError, match=msg):
            RuleSet().with_assignments([bad])


def test_rules_with_options_and_assignments():
    r = RuleSet().with_options(gin_bonus=20)
    assert r.gin_bonus == 20
    with pytest.raises(RuleError, match="unknown rule option"):
        RuleSet().with_options(nope=1)
    r = RuleSet().with_assignments(["knock_limit=10", "big_gin=on", "undercut_bonus = 25", "variant=box"])
    assert (r.knock_limit, r.big_gin, r.undercut_bonus, r.variant) == (10, True, 25, "box")
    assert RuleSet().with_assignments(["knock_limit=upcard"]).knock_limit == "upcard"
    assert RuleSet().with_assignments(["knock_limit=default"]).knock_limit is None
    for bad, msg in [("knock_limit", "NAME=VALUE"), ("big_gin=maybe", "true or false"), ("gin_bonus=x", "whole number"),
                     ("knock_limit=x", "'upcard' or 0-10"), ("nope=1", "unknown rule option"), ("knock_limit=12", "0-10")]:
        with pytest.raises(RuleError, match=msg):
            RuleSet().with_assignments([bad])


@settings(max_examples=300, deadline=None)
@given(
    variant=st.sampled_from(["oklahoma", "box"]),
    knock_limit=st.one_of(st.none(), st.just("upcard"), st.integers(0, 10)),
    flags=st.tuples(*[st.booleans()] * 6),
    bonuses=st.tuples(*[st.integers(0, 1000)] * 3),
    target=st.integers(1, 100000),
    pile=st.integers(1, 1000),
)
def test_rules_read_back_from_to_dict_are_equal(variant, knock_limit, flags, bonuses, target, pile):
    """A rule set survives its wire/record form: equal, same hash, same dict. ``knock_limit``
    unset means the variant's default, and compares equal to that default spelled out."""
    r = RuleSet(variant=variant, knock_limit=knock_limit, ace_upcard_gin_only=flags[0], spade_upcard_doubles=flags[1],
                allow_discard_of_taken_card=flags[2], big_gin=flags[3], tie_is_undercut=flags[4], classic_bonuses=flags[5],
                big_gin_bonus=bonuses[0], gin_bonus=bonuses[1], undercut_bonus=bonuses[2], target_score=target,
                max_pile_draws=pile)
    back = RuleSet.from_dict(r.to_dict())
    assert back == r and hash(back) == hash(r) and back.to_dict() == r.to_dict()
    spelled = RuleSet.from_dict({**r.to_dict(), "knock_limit": r.effective_knock_limit})
    assert spelled == r
    other = 7 if r.effective_knock_limit != 7 else 8
    assert r.with_options(knock_limit=other) != r


def test_rules_default_knock_limit_equals_the_variants_default_spelled_out():
    assert RuleSet() == RuleSet(knock_limit="upcard") and RuleSet() != RuleSet(knock_limit=10)
    assert RuleSet(variant="box") == RuleSet(variant="box", knock_limit=10) != RuleSet(variant="box", knock_limit="upcard")
    assert len({RuleSet(), RuleSet(knock_limit="upcard")}) == 1
    assert RuleSet() != "oklahoma" and RuleSet() != RuleSet(gin_bonus=20)


def test_rules_are_immutable_and_hashable():
    r = RuleSet()
    with pytest.raises(AttributeError):
        r.gin_bonus = 3  # type: ignore[misc]
    assert {RuleSet(), RuleSet()} == {RuleSet()}


def test_rules_cli_lists_every_option(capsys):
    assert rules_main([]) == 0
    out = capsys.readouterr().out
    for f in fields(RuleSet):
        assert f.name in out
    assert rules_main(["--variant", "box", "--rule", "gin_bonus=20", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["gin_bonus"] == 20 and d["knock_limit"] == 10
    assert rules_main(["--rule", "max_pile_draws=7", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["max_pile_draws"] == 7


def test_rules_cli_shows_the_pile_draw_limit_and_refuses_a_bad_value(capsys):
    assert rules_main([]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("max_pile_draws"))
    assert " 100 " in line and "§3.6.2" in line and "1-1000" in line
    with pytest.raises(SystemExit) as e:  # a usage error with the reason, not a traceback
        rules_main(["--rule", "max_pile_draws=0"])
    assert e.value.code == 2 and "max_pile_draws must be between 1 and 1000" in capsys.readouterr().err
