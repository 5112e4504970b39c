"""protocol.md §8 states the referee's defaults; they must be `okgin referee`'s own."""

from __future__ import annotations

import json
import re
from pathlib import Path

from referee.cli import DEFAULT_MOVE_MS, build_parser

PROTOCOL = Path(__file__).resolve().parents[2] / "protocol.md"


def test_section_8_states_okgin_referees_default_clock_and_policies() -> None:
    text = PROTOCOL.read_text(encoding="utf-8")
    para = text[text.index("Referee defaults (changed by command-line flags"):]
    para = para[: para.index("\n\n")]
    clock = json.loads(re.search(r"Clock\s*`(\{.*?\})`", para, re.S).group(1))
    policies = json.loads(re.search(r"Policies\s*`(\{.*?\})`", para, re.S).group(1).replace("\n", " "))
    a = build_parser().parse_args([])
    assert clock == {"move_ms": DEFAULT_MOVE_MS, "bank_ms": a.bank_ms, "increment_ms": a.increment_ms, "grace_ms": a.grace_ms}
    assert policies == {"timeout": a.timeout_policy, "illegal": a.illegal_policy, "illegal_limit": a.illegal_limit,
                        "disconnect_grace_ms": a.disconnect_grace_ms}
