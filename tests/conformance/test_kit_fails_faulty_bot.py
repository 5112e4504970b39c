"""The kit fails a bot that breaks the protocol, and names what it broke.

``faulty_bot.py`` is a small pyzmq client with one switchable fault; without a fault it
passes (the control). Each run is one game of Oklahoma Gin; all runs go at once.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from kitrun import KitRun, run_kits

FAULTY = str(Path(__file__).with_name("faulty_bot.py"))

# fault -> the features the kit must report as failed (others may fail as consequences).
EXPECTED: dict[str, set[str]] = {
    "exit-at-once": {"handshake", "games"},
    "wrong-seq": {"prompts", "errors"},
    "bad-frame": {"messages", "errors"},
    "no-heartbeat": {"heartbeats"},
    "no-reconnect": {"reconnect"},
    "crash-on-error": {"illegal_recovery", "shutdown"},
    "no-exit": {"shutdown"},  # stays after game_end and ignores SIGTERM: killed
    "illegal-move": {"prompts", "errors"},
}


@pytest.fixture(scope="module")
def fault_runs() -> dict[str, KitRun]:
    common = [
        "--variant",
        "oklahoma",
        "--games",
        "1",
        "--move-ms",
        "7000",
        "--disconnect-grace-ms",
        "3000",
        "--exit-timeout",
        "3",
    ]
    jobs = {
        fault: [*common, "--", sys.executable, FAULTY, "--connect", "{endpoint}", "--token", "{token}", "--fault", fault]
        for fault in ["none", "stay", *EXPECTED]
    }
    return run_kits(jobs)


def test_the_faultless_control_passes(fault_runs):
    run = fault_runs["none"]
    assert run.status == 0 and run.report["passed"], run.explain()


def test_a_bot_that_stays_in_the_lobby_until_sigterm_passes(fault_runs):
    # protocol.md §18: after game_end a bot may stay (§4) until the launcher's SIGTERM
    run = fault_runs["stay"]
    assert run.status == 0 and run.report["passed"], run.explain()
    assert run.feature("shutdown")["status"] == "pass"


@pytest.mark.parametrize("fault", sorted(EXPECTED))
def test_kit_fails_and_names_the_fault(fault_runs, fault):
    run = fault_runs[fault]
    assert run.status == 1, run.explain()
    assert not run.report["passed"]
    failed = {k for k, f in run.report["features"].items() if f["status"] == "fail"}
    assert EXPECTED[fault] <= failed, f"{fault}: failed {sorted(failed)}\n{run.explain()}"
    # The report names the first offending thing, in words and (for a message) the message.
    for key in EXPECTED[fault]:
        first = run.feature(key)["failures"][0]
        assert first["what"]
        assert "FAIL" in run.output and run.feature(key)["title"] in run.output


def test_offending_message_is_shown(fault_runs):
    first = fault_runs["wrong-seq"].feature("prompts")["failures"][0]
    assert '"type":"act"' in first["offending"] and "pending prompt is seq" in first["what"]
    first = fault_runs["bad-frame"].feature("messages")["failures"][0]
    assert "not a message" in first["offending"] and "not_a_map" in first["what"]


def test_kit_without_a_command_is_a_usage_error():
    from competition.conformance.cli import main

    with pytest.raises(SystemExit) as e:
        main(["--games", "1"])
    assert e.value.code == 2
