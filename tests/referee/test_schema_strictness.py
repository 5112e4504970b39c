"""The referee accepts exactly the client messages the schema accepts (issue 18).

A property test: hypothesis builds ``act`` messages, valid and invalid, from the pieces
the schema is made of (cards in and out of the schema's pattern, every action kind with
and without ``card``/``melds``, seqs of every msgpack type, stray fields), and for each one
the schema's verdict (``protocol.schema.json``, the reference ``jsonschema``) must equal
the referee's: :func:`okgin.protocol.validate` (the dispatcher's check) and then
:meth:`okgin.actions.Action.from_wire` (the table's parse, ``bad_action`` when it fails).
Legality in the game is not in question: a well-formed knock of cards the seat does not
hold is the rules' business (``illegal_action``), not the schema's.

This is the unit-level check of ``act`` alone (fast, 1000 examples); every client message
type, sent to a real referee on loopback, is ``test_schema_property.py``'s.

Why not ``hypothesis-jsonschema``: it is not installed here, and generating from the
schema alone would mostly produce valid messages; the interesting ones sit right at the
schema's edges, which these strategies aim at.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from okgin.actions import KINDS, Action
from okgin.protocol import ProtocolError, validate

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "protocol.schema.json").read_text())
# The schema is read as msgpack means it (protocol.md §2): an "integer" is a msgpack
# integer, never a float. JSON Schema alone counts 3.0 as an integer (it has one number
# type); msgpack has two, and the referee refuses the float, so the checker does too.
_MSGPACK_TYPES = jsonschema.Draft202012Validator.TYPE_CHECKER.redefine(
    "integer", lambda _checker, v: isinstance(v, int) and not isinstance(v, bool)
)
_Validator = jsonschema.validators.extend(jsonschema.Draft202012Validator, type_checker=_MSGPACK_TYPES)
ACT = _Validator({"$defs": SCHEMA["$defs"], **SCHEMA["$defs"]["msg_act"]})

GOOD_CARDS = [r + s for r in "A23456789TJQK" for s in "cdhs"]
BAD_CARDS = ["10h", "7H", "as", "Zz", "", "1s", "Ahh", " As"]
card = st.one_of(st.sampled_from(GOOD_CARDS), st.sampled_from(BAD_CARDS), st.integers(0, 51), st.none())
melds = st.one_of(
    st.lists(st.lists(st.sampled_from(GOOD_CARDS), max_size=12), max_size=12),
    st.lists(st.lists(card, max_size=4), max_size=3),
    st.none(),
    st.sampled_from(GOOD_CARDS),
)


@st.composite
def actions(draw: st.DrawFn) -> Any:
    if draw(st.integers(0, 9)) == 0:
        return draw(st.one_of(st.none(), st.integers(), st.text(max_size=5), st.lists(st.integers(), max_size=2)))
    a: dict[str, Any] = {}
    if draw(st.integers(0, 19)):
        a["kind"] = draw(st.one_of(st.sampled_from(KINDS), st.sampled_from(["fold", "", "Pass"]), st.integers(0, 3)))
    if draw(st.booleans()):
        a["card"] = draw(card)
    if draw(st.integers(0, 3)) == 0:
        a["melds"] = draw(melds)
    if draw(st.integers(0, 9)) == 0:
        a["note"] = "extra"  # a field no version defines: ignored by both (protocol.md §3)
    return a


@st.composite
def acts(draw: st.DrawFn) -> dict[str, Any]:
    m: dict[str, Any] = {"type": "act"}
    if draw(st.integers(0, 19)):
        m["table"] = draw(st.one_of(st.just("t1"), st.sampled_from(["a" * 64, "a" * 65, "bad name", ""]), st.integers(0, 3)))
    if draw(st.integers(0, 19)):
        m["seq"] = draw(st.one_of(st.integers(0, 2**63 - 1), st.integers(-3, -1), st.sampled_from(["3", 3.0, True, None])))
    if draw(st.integers(0, 19)):
        m["action"] = draw(actions())
    if draw(st.integers(0, 5)) == 0:
        m["seat"] = draw(st.one_of(st.integers(0, 2), st.sampled_from([-1, "0", 1.0])))
    return m


def referee_accepts(msg: dict[str, Any]) -> bool:
    try:
        validate(msg)
        Action.from_wire(msg["action"])
    except (ProtocolError, ValueError):
        return False
    return True


@settings(max_examples=1000, deadline=None)
@given(acts())
def test_the_referee_accepts_exactly_the_acts_the_schema_accepts(msg: dict[str, Any]) -> None:
    schema_ok = ACT.is_valid(msg)
    assert referee_accepts(msg) == schema_ok, f"schema {'accepts' if schema_ok else 'refuses'}, the referee does not: {msg!r}"


def test_the_examples_of_the_issue() -> None:
    base = {"type": "act", "table": "t1", "seq": 1}
    for action, ok in [
        ({"kind": "pass"}, True),
        ({"kind": "pass", "card": "As"}, False),
        ({"kind": "pass", "card": None}, False),
        ({"kind": "discard", "card": "10h"}, False),
        ({"kind": "discard", "card": "Th"}, True),
        ({"kind": "discard", "card": "Th", "melds": [["As", "2s", "3s"]]}, False),
        ({"kind": "knock", "card": "Th", "melds": [["As", "2s", "3s"]]}, True),
        ({"kind": "big_gin"}, True),
    ]:
        msg = {**base, "action": action}
        assert ACT.is_valid(msg) == ok == referee_accepts(msg), msg
    assert not ACT.is_valid({**base, "seq": "1", "action": {"kind": "pass"}})
    assert not referee_accepts({**base, "seq": "1", "action": {"kind": "pass"}})
