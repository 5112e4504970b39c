"""The text rule of protocol.md §13 (1.4), pure: the frozen table, the referee's check
and the schema's ``pattern`` say the same thing."""

from __future__ import annotations

import re
import unicodedata

import pytest

from okgin.protocol import ProtocolError, validate
from okgin.protocol.schema import build_schema
from okgin.protocol.text import ALLOWED_FORMAT, REFUSED_CATEGORIES, REFUSED_RANGES, SCHEMA_PATTERN, refused_char

FROZEN = {c for a, b in REFUSED_RANGES for c in range(a, b + 1)}


def test_the_frozen_table_covers_this_pythons_unicode():
    """A newer Unicode adding a format character fails here: add it to REFUSED_RANGES
    (and protocol.md §13). Code points the table has beyond this Python's categories
    must be ones its Unicode has not assigned yet."""
    here = {c for c in range(0x110000) if unicodedata.category(chr(c)) in REFUSED_CATEGORIES and c not in ALLOWED_FORMAT}
    assert here - FROZEN == set(), f"Unicode {unicodedata.unidata_version}: {sorted(map(hex, here - FROZEN))}"
    assert {unicodedata.category(chr(c)) for c in FROZEN - here} <= {"Cn"}
    assert not FROZEN & ALLOWED_FORMAT and {0x2028, 0x2029, 0x0085, 0x202E, 0xD800} <= FROZEN


def test_schema_pattern_agrees_with_the_referee_on_the_bmp():
    pattern = re.compile(SCHEMA_PATTERN)  # the same meaning in Python re and ECMA-262 (no $, no \u{})
    for c in range(0x10000):
        if 0xD800 <= c <= 0xDFFF:
            continue  # in UTF-16 code units these are halves of astral characters: §13 text only
        s = f"a{chr(c)}b"
        assert (pattern.search(s) is None) == (refused_char(s) is not None), hex(c)
    assert pattern.search("trailing newline\n") is None  # where ^[^...]*$ would let it through in Python


def test_schema_carries_the_pattern_and_any_rules():
    defs = build_schema()["$defs"]
    assert defs["msg_hello"]["properties"]["name"]["pattern"] == SCHEMA_PATTERN
    assert defs["msg_advise"]["properties"]["text"]["pattern"] == SCHEMA_PATTERN
    assert defs["msg_create_table"]["properties"]["players"]["items"]["pattern"] == SCHEMA_PATTERN
    assert defs["msg_join"]["properties"]["any_rules"] == {"type": "boolean"}


@pytest.mark.parametrize(
    ("msg", "error", "needles"),
    [
        (
            {"type": "hello", "protocol": 1, "role": "player", "name": "x\u2028"},
            "bad_message",
            ("'name'", "U+2028 (LINE SEPARATOR)", "character 1"),
        ),
        ({"type": "create_table", "players": ["ok", "\u2066x"]}, "bad_message", ("'players[1]'", "U+2066")),
        ({"type": "advise", "table": "t", "seq": 1, "text": "\x07"}, "bad_advice", ("'text'", "U+0007 (a control character)")),
        (
            {"type": "advise", "table": "t", "seq": 1, "text": "\U000e0041"},
            "bad_advice",
            ("U+E0041 (TAG LATIN CAPITAL LETTER A)",),
        ),
        ({"type": "advise", "table": "t", "seq": 1, "text": "\ud83d"}, "bad_advice", ("U+D83D (a surrogate character)",)),
    ],
)
def test_validate_names_the_field_and_the_code_point(msg, error, needles):
    with pytest.raises(ProtocolError) as e:
        validate(msg)
    assert e.value.name == error
    for n in needles:
        assert n in e.value.message
    assert all(refused_char(ch) is None for ch in e.value.message)  # never echoes the character


def test_zwj_zwnj_and_ordinary_text_pass():
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
    assert validate({"type": "hello", "protocol": 1, "role": "player", "name": f"{family} z\u200cw \u00a0"}) == "hello"
    assert (
        validate({"type": "advise", "table": "t", "seq": 1, "text": "caf\u00e9 \u0915\u094d\u200d\u0937 \u3000 ok"}) == "advise"
    )
