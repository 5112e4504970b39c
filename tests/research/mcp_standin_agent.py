"""A scripted stand-in for a language-model agent: an MCP host driving ``okgin mcp``.

``okgin eval --mcp-agent "python tests/research/mcp_standin_agent.py"`` starts it once per
game, as it would start a real agent (no model weights exist on a test machine). It does
what a host does: starts the MCP seat from ``OKGIN_MCP_SERVER`` (JSON words) over stdio,
with its own environment (which holds the seat's token, ``OKGIN_SEAT_TOKEN``), and loops
on ``state`` (wait) and ``play``, reading only the tools' structured content. It plays
like a cautious beginner: knock when it can, draw from the stock, pass the upcard, throw
the card that leaves the least deadwood. On its first turn of each game it first sends
a reply a model might write, "take or pass", which the seat must refuse (two moves): so
the refused move rate it is measured with is known (one refusal per game).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from mcp import ClientSession, StdioServerParameters, stdio_client

from okgin.cards import parse_card
from okgin.melds import deadwood

CALL_TIMEOUT_S = 120.0


def structured(result: Any) -> dict[str, Any]:
    got = getattr(result, "structured_content", None) or getattr(result, "structuredContent", None)
    assert isinstance(got, dict), result
    return got


def pick(legal: list[dict[str, Any]]) -> int:
    """The move's number, from the structured legal moves alone."""
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for m in legal:
        by_kind.setdefault(m["wire"]["kind"], []).append(m)
    for kind in ("big_gin", "knock", "draw_stock", "pass"):
        if kind in by_kind:
            return int(by_kind[kind][0]["number"])
    if "discard" in by_kind:
        hand = [parse_card(m["wire"]["card"]) for m in by_kind["discard"]]
        best = min(by_kind["discard"], key=lambda m: deadwood([c for c in hand if c != parse_card(m["wire"]["card"])]))
        return int(best["number"])
    return int(legal[0]["number"])


async def main() -> int:
    argv = json.loads(os.environ["OKGIN_MCP_SERVER"])
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await asyncio.wait_for(session.initialize(), 60)
        asked_badly = False
        for _ in range(20000):
            st = structured(await asyncio.wait_for(session.call_tool("state", {"wait": True, "timeout": 60}), CALL_TIMEOUT_S))
            if st["game_over"] or st["error"]:
                return 0
            if not st["your_turn"]:
                continue
            if not asked_badly:
                asked_badly = True
                r = await asyncio.wait_for(session.call_tool("play", {"move": "take or pass", "wait": False}), CALL_TIMEOUT_S)
                assert getattr(r, "is_error", None) or getattr(r, "isError", False), "the seat played an ambiguous reply"
            move = pick(st["legal_moves"])
            await asyncio.wait_for(session.call_tool("play", {"move": move, "wait": False}), CALL_TIMEOUT_S)
    return 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
