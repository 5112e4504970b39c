"""bench/strength/dangerfit.py: how well the strong bot's guesses of "the opponent melds
this discard" match the opponent's real hand."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from clients.bots.strong.opponent import joins
from okgin import RuleSet

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "strength"))

import dangerfit  # noqa: E402
from knockfit import start_hand  # noqa: E402


def test_rows_hold_the_truth_and_three_chances_per_throwable_card() -> None:
    rows = [r for i in range(3) for r in dangerfit.collect_hand(("t", i, RuleSet(), "strong", 8, None, 0))]
    assert rows and any(r[1] for r in rows) and not all(r[1] for r in rows)
    for stock, truth, *preds in rows:
        assert 0 <= stock <= 31 and truth in (0, 1)
        assert len(preds) == len(dangerfit.PREDICTORS)
        assert all(0.0 <= p <= 1.0 for p in preds)
    # the truth is the opponent's real hand: replay the first decision of hand 0
    g, bots = start_hand("t/0", RuleSet())
    while True:
        seat = g.current_player
        assert seat is not None
        view, legal = g.view(seat), g.legal_actions()
        if view.phase == "discard":
            cards = [a.card for a in legal if a.kind == "discard" and a.card is not None]
            want = [int(joins(g.hand.hands[1 - seat], c)) for c in cards]
            first = dangerfit.collect_hand(("t", 0, RuleSet(), "strong", 8, None, 0))[: len(cards)]
            assert [r[1] for r in first] == want
            return
        g.apply(bots[seat].choose(view, legal), seat=seat)


def test_scores_reward_the_right_guess() -> None:
    sure = [(20, 1, 1.0, 0.5, 0.0, 0.5), (20, 0, 0.0, 0.5, 1.0, 0.5)]
    (b0, _, _), (b1, _, _), (b2, _, _), (b3, _, _) = dangerfit.scores(sure)
    assert b0 == 0.0 and b1 == 0.25 and b2 == 1.0 and b3 == 0.25


def test_end_to_end(capsys: pytest.CaptureFixture[str]) -> None:
    assert dangerfit.main(["--hands", "2", "--jobs", "1", "--samples", "4", "--chain", "2,10"]) == 0
    out = capsys.readouterr().out
    for name in dangerfit.PREDICTORS:
        assert f"  {name}" in out
    assert "calibration" in out
