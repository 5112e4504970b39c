"""The conformance kit puts no secret on a command line (issue 24 item 3).

Its bot under test, its opponents and its referee get their seat tokens and the admin
key through their environments; ``/proc/PID/cmdline`` is readable by every local user.
The bot under test here is a spy that reads every command line on the host while the
kit's game is set up (``cmdline_spy_bot.py``), then plays as ``simple``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from kitrun import run_kits

SPY = str(Path(__file__).with_name("cmdline_spy_bot.py"))

pytestmark = pytest.mark.timeout(600)


def test_no_token_or_admin_key_on_any_command_line_of_a_kit_run() -> None:
    runs = run_kits({"spy": ["--variant", "oklahoma", "--games", "1", "--", sys.executable, SPY]})
    run = runs["spy"]
    assert "LEAK" not in run.output, run.explain()
    assert run.status == 0, run.explain()
    assert run.report["passed"], run.explain()


def test_a_token_placeholder_still_works_but_warns() -> None:
    runs = run_kits({"argv": ["--variant", "oklahoma", "--games", "1", "--",
                              sys.executable, "-m", "okgin", "bot", "simple", "--quiet", "--connect", "{endpoint}",
                              "--token", "{token}"]})
    run = runs["argv"]
    assert run.status == 0, run.explain()
    assert "warning: {token} in COMMAND puts each game's seat token on a command line" in run.output, run.explain()
