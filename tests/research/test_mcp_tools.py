"""The MCP server's tools in-process, on a seat whose prompt is a real game's (issue 29).

A refused move never reaches the referee: the seat reads the move before it sends
anything, so these tests hold a seat that is not connected (a move that got through
would fail with "could not send the move"). What is checked is what the agent's host
sends: JSON values as the MCP client delivers them, through the server's own argument
handling.
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("mcp")

from clients.mcp.seat import McpSeat
from clients.mcp.server import ToolError, build_server
from clients.sdk import Prompt
from okgin import Game


def _seat_at_the_offer() -> McpSeat:
    """A seat (never connected) whose pending prompt is a real upcard offer: 1. take, 2. pass."""
    g = Game(seed=3)
    me = g.current_player
    assert me is not None
    seat = McpSeat("tcp://127.0.0.1:9", table="t")
    seat.seat = me
    seat.prompt = Prompt(
        type="prompt", table="t", game=1, seq=1, seat=me, legal=g.legal_actions(), view=g.view(me), clock={}, error=None
    )
    return seat


async def _refusal(tool: str, arguments: dict[str, Any]) -> str:
    server = build_server(_seat_at_the_offer())
    with pytest.raises(ToolError) as e:
        await server.call_tool(tool, arguments)
    return str(e.value)


@pytest.mark.parametrize(
    "move", [True, False, 1.0, 2.0, -1, 0, "-1", "+1", "1.0", "I will not take the upcard", "take, don't pass", "take or pass"]
)
async def test_play_refuses_a_move_it_would_have_to_guess(move: Any) -> None:
    out = await _refusal("play", {"move": move, "wait": False})
    assert "Legal moves now:\n1. take" in out and "could not send" not in out, out


async def test_play_sends_a_plain_number() -> None:
    # Reaching the send (and failing there: no referee) is the sign the move was read.
    out = await _refusal("play", {"move": 2, "wait": False})
    assert "could not send the move" in out, out
