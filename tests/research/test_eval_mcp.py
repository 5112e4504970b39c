"""``okgin eval --mcp-agent``: a language-model agent evaluated through the MCP seat (issue
29 item 2), with a scripted stand-in for the model (tests/research/mcp_standin_agent.py:
an MCP host that starts ``okgin mcp`` over stdio and plays from its structured content).

The same protocol as every agent (the deals, seatings and statistics of okgin-eval-1, here
one deal), through a real referee subprocess, plus what only such an agent has: the moves
the seat refused (the stand-in sends one reply per game that names two moves) and the
characters of text it was shown per decision."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from clients.eval_cli import main
from clients.evaluation import CHARS_PER_TOKEN, EvalResult, format_table

AGENT = Path(__file__).with_name("mcp_standin_agent.py")


@pytest.mark.timeout(600)
def test_an_mcp_agent_is_evaluated_with_its_refusals_and_text(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--mcp-agent", f"{sys.executable} {AGENT}", "--name", "standin", "--variant", "oklahoma",
            "--against", "random", "--deals", "1", "--timeout", "500", "--json"]
    assert main(argv) == 0
    (row,) = json.loads(capsys.readouterr().out)["results"]
    r = EvalResult.from_json(row)
    assert (r.agent, r.games, r.deals, r.standard, r.forfeits) == ("standin", 2, 1, False, 0)
    assert r.hands > 0 and r.win_rate == 1.0  # knocking as soon as it can beats random
    # one refused reply per game, out of every move sent: 2 / (moves played + 2)
    assert r.refused_rate is not None and r.chars_per_decision is not None
    played = 2 / r.refused_rate - 2
    assert played == pytest.approx(round(played)) and played >= 2 * 3
    assert 200 < r.chars_per_decision < 50000  # the state texts: hundreds to thousands of characters
    assert r.tokens_per_decision == pytest.approx(r.chars_per_decision / CHARS_PER_TOKEN)
    text = format_table([r])
    assert "MCP seat: refused moves" in text and "tokens) of text per decision" in text
