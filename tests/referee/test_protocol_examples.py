"""Every marked JSON example of protocol.md is what a real referee sends (issue 18).

``referee/protocol_examples.py`` plays scripted sessions against a real referee and
writes the blocks marked ``<!-- example: KEY -->``; here they are produced again and must
equal protocol.md's, so an example cannot go stale (1.3's ``welcome`` showed ``minor: 1``
and no ``batch_events``). On a difference: ``python -m referee.protocol_examples``, then
read the diff.
"""

from __future__ import annotations

import re

from referee.protocol_examples import ELSEWHERE as OTHER_GENERATOR
from referee.protocol_examples import MARK, PROTOCOL_MD, generate, rewrite

# The one example block made elsewhere: §12.1's worked re-deal, printed by
# tests/referee/test_ref_deal_secrecy.py's __main__ and checked by its test.
ELSEWHERE = ("seed          ",)


def test_protocol_md_examples_are_a_real_referees() -> None:
    text = PROTOCOL_MD.read_text(encoding="utf-8")
    marked = {m.group(1): m.group(2) for m in MARK.finditer(text)}
    assert {"hello", "welcome", "join", "prompt", "game_end", "advise", "seat_status", "heartbeat",
            "transcript_oklahoma", "transcript_box", "transcript_resume"} <= set(marked)
    blocks = generate()
    for key, block in marked.items():
        if key in OTHER_GENERATOR:
            continue  # tests/arena/test_arena_examples.py
        assert block == blocks[key], (
            f"protocol.md's example {key!r} is stale: run python -m referee.protocol_examples\n{blocks[key]}"
        )
    assert rewrite(text, blocks) == text


def test_the_welcome_example_is_this_minor() -> None:
    from okgin.protocol.catalogue import PROTOCOL_MINOR

    block = generate()["welcome"]
    assert f'"minor": {PROTOCOL_MINOR}' in block and '"batch_events"' in block


def test_every_example_block_is_generated() -> None:
    """Every JSON example and every transcript of protocol.md is marked, so a new one
    cannot be written by hand and go stale (the unmarked fences are diagrams)."""
    text = PROTOCOL_MD.read_text(encoding="utf-8")
    for m in re.finditer(r"^```(json|text)\n(.*?)^```$", text, re.M | re.S):
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        if m.group(2).startswith(ELSEWHERE):
            continue
        line = text.count("\n", 0, m.start()) + 1
        assert re.fullmatch(r"<!-- example: [a-z0-9_]+ -->", before), (
            f"protocol.md line {line}: a ```{m.group(1)} block not made by referee/protocol_examples.py:\n{m.group(2)[:200]}"
        )


def test_every_example_message_fits_the_closed_schema() -> None:
    """The examples and transcripts agree with the schema too: each message shown, as it
    was sent or received, validates with every map closed (refharness), so protocol.md
    shows no field the schema lacks."""
    from refharness import SCHEMA, validate_message

    from referee.protocol_examples import play

    ex, _ = play()
    shown = [m for msgs in ex.values() for m in msgs]
    assert len(shown) > 100
    for m in shown:
        info = SCHEMA["x-messages"][m["type"]]
        validate_message(m, "R2C" if info["direction"] != "client to referee" else "C2R")


# A masked string stands for "a string of the field's form" (protocol.md §1): it is
# accepted where one of these would be. A masked whole number must be a number.
_FORMS = ("x", "0" * 32, "0" * 64)


def _shown_messages(text: str) -> list[tuple[str, dict]]:
    """Every message protocol.md shows as it was sent: each JSON object of a marked
    ```json block, and each transcript message written out whole (those elided with
    ``…`` are not JSON and are skipped), with where it was found."""
    import json

    decoder = json.JSONDecoder()
    out: list[tuple[str, dict]] = []
    for m in MARK.finditer(text):
        key, block = m.group(1), m.group(2)
        if key.startswith("transcript_"):
            for arrow in re.finditer(r"^\S+ → \S+\s+(?=\{)", block, re.M):
                try:
                    msg, _ = decoder.raw_decode(block, arrow.end())
                except json.JSONDecodeError:
                    continue  # elided with …
                out.append((key, msg))
            continue
        i = 0
        while True:
            while i < len(block) and block[i].isspace():
                i += 1
            if i >= len(block):
                break
            msg, i = decoder.raw_decode(block, i)
            out.append((key, msg))
    return out


def _tolerated(error, root: dict, defs: dict) -> bool:
    """An abbreviated map (one with a ``"..."`` key) on the error's path, or a masked
    string (``"<...>"``) where a string of some form is valid."""
    import jsonschema

    node = root
    for step in error.absolute_path:
        if isinstance(node, dict) and "..." in node:
            return True
        node = node[step]
    if isinstance(node, dict) and "..." in node:
        return True
    if isinstance(node, str) and re.fullmatch(r"<[^<>]+>", node):
        v = jsonschema.Draft202012Validator({"$defs": defs, **error.schema})
        return any(v.is_valid(form) for form in _FORMS)
    return False


def test_every_shown_example_validates_against_the_schema() -> None:
    """protocol.md's examples as printed, masks included, against protocol.schema.json
    with every map closed (issue 29): before 1.6 a pong showed ``"time_ms": "<time_ms>"``
    and a prompt sent again ``"remaining_ms": "<remaining_ms>"``, strings in integer
    fields, which a stranger validating the examples met first."""
    import jsonschema
    from refharness import STRICT

    text = PROTOCOL_MD.read_text(encoding="utf-8")
    shown = _shown_messages(text)
    assert len(shown) > 60 and {k for k, _ in shown} >= {"ping", "game_end", "rematch", "transcript_resume"}
    defs = STRICT["$defs"]
    bad = []
    for key, msg in shown:
        v = jsonschema.Draft202012Validator({"$defs": defs, **defs[f"msg_{msg['type']}"]})
        for e in v.iter_errors(msg):
            if not _tolerated(e, msg, defs):
                bad.append(f"{key}: {msg['type']}: {e.message} at {list(e.absolute_path)}")
    assert not bad, "\n".join(bad)


def test_game_end_requires_the_salt() -> None:
    """The referee has sent ``salt`` in every ``game_end`` since 1.4; the schema said it
    was optional until 1.6 (issue 29)."""
    from refharness import SCHEMA

    assert "salt" in SCHEMA["$defs"]["msg_game_end"]["required"]
