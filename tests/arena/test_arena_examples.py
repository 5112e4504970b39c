"""protocol.md §19.1's transcript is what a real arena and its shard send (arena/examples.py),
and every message it shows fits the closed schema."""

from __future__ import annotations

from arenakit import Client  # noqa: F401  (puts tests/referee on the path for refharness)
from refharness import SCHEMA, validate_message

from arena.examples import KEY, play, rewrite
from referee.protocol_examples import MARK, PROTOCOL_MD


def test_the_arena_transcript_is_a_real_arenas() -> None:
    text = PROTOCOL_MD.read_text(encoding="utf-8")
    marked = {m.group(1): m.group(2) for m in MARK.finditer(text)}
    block, shown = play()
    assert marked[KEY] == block, f"protocol.md §19.1 is stale: run python -m arena.examples\n{block}"
    assert rewrite(text, block) == text
    assert {m["type"] for m in shown} >= {"hello", "welcome", "seek", "sought", "cancel", "challenge", "challenged",
                                          "challenge_offer", "accept", "game_ready", "game_start", "game_end",
                                          "game_over", "leaderboard", "leaderboard_page"}
    for m in shown:
        info = SCHEMA["x-messages"][m["type"]]
        validate_message(m, "R2C" if info["direction"] != "client to referee" else "C2R")
