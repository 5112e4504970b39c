"""protocol.md, docs/rules.md, the schema and the code agree (issue 18, "Done when").

What ``test_ref_catalogue`` does not check already (it has the summary table, the error
codes one way, and the client fields' required-ness): the version everywhere, a section
of §5 for every message and every schema field named in it, the error table both ways and
against the schema's ``x-errors``, the ``Errors:`` lines naming only real errors, every
"rules §N" citation a real section of docs/rules.md, no Python API standing for a
definition (the field tables are the definition), and the one rule of §5.16 that only a
real game shows: a forfeited Gin in the Box game at equal scores goes to the lower seat.
"""

from __future__ import annotations

import re
from typing import Any

from refharness import ROOT, SCHEMA, RefereeThread

from okgin.protocol import ERRORS
from okgin.protocol.catalogue import DIRECTIONS, PROTOCOL_MAJOR, PROTOCOL_MINOR

DOC = (ROOT / "protocol.md").read_text(encoding="utf-8")
RULES = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")


FIELD_NAMES = {f for d in SCHEMA["$defs"].values() for f in d.get("properties", {})}


def catalogue_section(t: str) -> str:
    """The text of the §5 entry whose heading names ``t``."""
    for m in re.finditer(r"^### 5\.\d+ (.*)$", DOC, re.M):
        if f"`{t}`" in m.group(1):
            end = DOC.find("\n### ", m.end())
            return DOC[m.start() : end]
    raise AssertionError(f"protocol.md §5 has no section for {t!r}")


def test_the_version_is_one_everywhere() -> None:
    assert f"Protocol version **{PROTOCOL_MAJOR}.{PROTOCOL_MINOR}** (major {PROTOCOL_MAJOR}, minor {PROTOCOL_MINOR};" in DOC
    assert SCHEMA["x-protocol"] == {"major": PROTOCOL_MAJOR, "minor": PROTOCOL_MINOR}
    assert SCHEMA["title"].endswith(f" {PROTOCOL_MAJOR}.{PROTOCOL_MINOR}")
    changelog = DOC[DOC.index("## 17. Changelog") :]
    assert f"- **{PROTOCOL_MAJOR}.{PROTOCOL_MINOR}** —" in changelog, "the current minor has no changelog entry"


def test_every_message_has_a_section_naming_every_field() -> None:
    for t in DIRECTIONS:
        text = catalogue_section(t)
        node = SCHEMA["$defs"][f"msg_{t}"]
        missing = [f for f in node["properties"] if f not in ("type", "id") and f"`{f}`" not in text]
        assert not missing, f"protocol.md's section of {t} does not name its schema fields {missing}"


def test_the_error_table_the_code_and_the_schema_list_the_same_errors() -> None:
    table = DOC[DOC.index("## 9. Errors") : DOC.index("## 10.")]
    doc = {name: int(code) for code, name in re.findall(r"^\| (\d{4}) \| `([a-z_]+)` \|", table, re.M)}
    code = {name: c for name, (c, _) in ERRORS.items()}
    schema = {name: e["code"] for name, e in SCHEMA["x-errors"].items()}
    assert doc == code == schema
    assert len(set(code.values())) == len(code), "two errors share a code"
    for name, c in code.items():
        assert c // 1000 in (1, 2, 3, 4, 5, 6), f"{name}: {c} is in no group of §9"  # 6xxx: the arena (1.6)


def test_the_errors_lines_name_only_real_errors() -> None:
    for m in re.finditer(r"^Errors[^:\n]*:(.*?)(?:\n\n|\Z)", DOC, re.M | re.S):
        for name in re.findall(r"`([a-z_]+)`", m.group(1)):
            if name in DIRECTIONS or name in FIELD_NAMES:
                continue  # a message or field named beside the errors
            assert name in ERRORS, f"protocol.md names an error {name!r} that okgin.protocol.errors does not have"


def test_every_rules_citation_is_a_section_of_docs_rules_md() -> None:
    sections = set(re.findall(r"^#{2,4} (\d+(?:\.\d+)*)[. ]", RULES, re.M))
    cited = set(re.findall(r"rules\s+§(\d+(?:\.\d+)*)", DOC))
    assert cited, "protocol.md cites no rules section"
    assert cited <= sections, f"protocol.md cites rules sections docs/rules.md lacks: {sorted(cited - sections)}"


def test_no_python_api_stands_for_a_definition() -> None:
    # the field tables are the definition (issue 18): no okgin.View.to_wire() and the like
    assert not re.findall(r"okgin\.[A-Za-z_]+\.[A-Za-z_]+\(|\.to_wire\(|\.from_wire\(|final_scores\(", DOC)


def test_a_forfeited_box_game_at_equal_scores_goes_to_the_lower_seat(make_referee: Any, make_client: Any) -> None:
    """§5.16: after a forfeit, the better cumulative score of the other two; at equal
    scores (here 0-0, before any hand ends) the lower seat number."""
    r: RefereeThread = make_referee()
    admin = make_client(r.endpoint)
    admin.hello("org", role="admin")
    for quitter, winner in ((0, 1), (1, 0), (2, 0)):
        name = f"box-forfeit-{quitter}"
        toks = admin.request({"type": "create_table", "table": name, "variant": "box", "reserved": True}, "table_created")[
            "seat_tokens"
        ]
        seats = [make_client(r.endpoint) for _ in toks]
        for i, (c, tok) in enumerate(zip(seats, toks, strict=True)):
            c.hello(f"p{i}", token=tok)
        for c in seats:
            c.wait_for(lambda m: m["type"] == "game_start")
        seats[quitter].request({"type": "resign", "table": name}, "ok")
        end = seats[quitter].wait_for(lambda m: m["type"] == "game_end")
        assert end["final"]["scores"] == [0, 0, 0]
        assert (end["termination"], end["at_fault"], end["winner"]) == ("resigned", quitter, winner)


def test_a_clock_state_names_its_banks_banks_ms(make_referee: Any, make_client: Any) -> None:
    """§6.8 (1.4): the ClockState's list of banks is ``banks_ms``; ``bank_ms`` carries the
    same list for 1.x clients, while a Clock's ``bank_ms`` is the int it starts with."""
    r: RefereeThread = make_referee()
    admin = make_client(r.endpoint)
    admin.hello("org", role="admin")
    toks = admin.request(
        {"type": "create_table", "table": "banked", "reserved": True, "clock": {"bank_ms": 60000}}, "table_created"
    )["seat_tokens"]
    seats = [make_client(r.endpoint) for _ in toks]
    for i, (c, tok) in enumerate(zip(seats, toks, strict=True)):
        c.hello(f"p{i}", token=tok)
    start = seats[0].wait_for(lambda m: m["type"] == "game_start")
    assert start["clock"]["bank_ms"] == 60000
    prompt = next(c for c in seats if c is seats[start["view"]["to_act"]]).wait_for(lambda m: m["type"] == "prompt")
    clock = prompt["clock"]
    assert isinstance(clock["banks_ms"], list) and len(clock["banks_ms"]) == 2 and clock["bank_ms"] == clock["banks_ms"]
    assert all(0 <= b <= 60000 for b in clock["banks_ms"])


def test_docs_rules_md_options_are_the_schemas() -> None:
    """docs/rules.md §8's table (names, types, ranges) is the schema's RulesPartial, and
    protocol.md §6.7 names every option (tests/engine/test_ruleset_options.py holds the
    table to RuleSet's fields and defaults)."""
    table = RULES[RULES.index("## 8. Options") : RULES.index("## 9.")]
    rows = re.findall(r"^\| `([a-z_]+)` \| ([^|]+) \|", table, re.M)
    schema = SCHEMA["$defs"]["RulesPartial"]
    assert schema.get("additionalProperties") is False
    assert {name for name, _ in rows} == set(schema["properties"])
    rules_text = DOC[DOC.index("### 6.7 Rules") : DOC.index("### 6.8")]
    for name, kind in rows:
        s = schema["properties"][name]
        assert f"`{name}`" in rules_text, f"protocol.md 6.7 does not name {name}"
        rng = re.search(r"whole number (\d+)-(\d+)", kind)
        if kind.strip() == "bool":
            assert s == {"type": "boolean"}, name
        elif rng and name != "knock_limit":
            assert (s["minimum"], s["maximum"]) == (int(rng.group(1)), int(rng.group(2))), name
        elif name == "knock_limit":
            assert s["anyOf"] == [{"const": "upcard"}, {"type": "integer", "minimum": 0, "maximum": 10}]
        else:
            assert s == {"enum": ["oklahoma", "box"]}, name


def test_client_fields_added_after_1_0_are_optional() -> None:
    """§14: a client field a later minor added is optional (a 1.0 client never sends it),
    and the schema requires exactly the fields the §5 tables mark ``req``."""
    for t, info in SCHEMA["x-messages"].items():
        if not info["client_may_send"]:
            continue
        text = catalogue_section(t)
        rows = re.findall(r"^\| `([a-z_]+)` \| [^|]* \| (req|opt)[^|]* \| ([^\n]*)$", text, re.M)
        for field, presence, meaning in rows:
            later = re.search(r"\(\*?1\.[1-9]", meaning) or re.search(r"\*1\.[1-9]", meaning)
            assert not (presence == "req" and later), f"{t}.{field} was added by a later minor but is required"
        required = set(SCHEMA["$defs"][f"msg_{t}"]["required"]) - {"type"}
        if rows:
            assert required == {f for f, presence, _ in rows if presence == "req"}, t
