"""Phases, terminations and table statuses are ``StrEnum``s whose values are the wire
strings (issue 19): the wire, records and string comparisons are unchanged."""

from __future__ import annotations

import json
import random

from okgin import Game, RuleSet, canonical_json
from okgin.enums import Phase, Termination
from okgin.game import TERMINATIONS
from okgin.protocol.codec import decode, encode
from okgin.views import View


def test_values_are_the_wire_strings() -> None:
    assert [p.value for p in Phase] == ["offer", "draw", "discard", "over", "game_over"]
    assert TERMINATIONS == ("normal", "timeout", "illegal", "disconnect", "abandoned", "resigned", "hand_limit")
    from referee.table import CLOSED, FINISHED, PLAYING, WAITING, TableStatus

    assert (WAITING, PLAYING, FINISHED, CLOSED) == ("waiting", "playing", "finished", "closed")
    assert all(isinstance(s, TableStatus) for s in (WAITING, PLAYING, FINISHED, CLOSED))


def test_a_view_with_a_phase_goes_over_the_wire_as_a_plain_string() -> None:
    g = Game(RuleSet(), seed=4)
    view = g.view(0)
    assert view.phase is Phase.OFFER and view.phase == "offer"
    wire = view.to_wire()
    frame = encode({"type": "prompt", "view": wire})
    plain = encode({"type": "prompt", "view": {**wire, "phase": "offer"}})
    assert frame == plain  # msgpack writes a str subclass as a str: the same bytes
    back = decode(frame)
    assert type(back["view"]["phase"]) is str and back["view"]["phase"] == "offer"
    assert View.from_wire(back["view"]) == view  # and it comes back as the Phase
    assert json.dumps({"phase": view.phase}) == '{"phase": "offer"}'

    from referee.table import PLAYING
    from referee.wireviews import pack

    assert pack({"status": PLAYING}) == pack({"status": "playing"})


def test_terminations_are_enums_and_records_are_unchanged() -> None:
    g = Game(RuleSet(), seed=2)
    rng = random.Random(2)
    for _ in range(20):
        g.apply(rng.choice(g.legal_actions()))
    g.resign(0, "timeout")
    assert g.termination is Termination.TIMEOUT
    rec = g.to_record()
    assert '"termination":"timeout"' in canonical_json(rec)
    again = Game.from_record(json.loads(canonical_json(rec)))
    assert again.termination is Termination.TIMEOUT and again.final_scores() == g.final_scores()
    g2 = Game(RuleSet(), seed=2)
    g2.abandon()
    assert g2.termination is Termination.ABANDONED
