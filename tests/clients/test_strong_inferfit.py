"""The strength of the strong bot's reading of the opponent's moves
(``knowledge.read_view``'s ``strength``) and bench/strength/inferfit.py, which fits it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from clients.bots.strong import StrongBot
from clients.bots.strong.knowledge import read_view
from okgin import RuleSet, View

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "strength"))

import inferfit  # noqa: E402
from strong_hands import play_first_hand  # noqa: E402


def _late_view() -> View:
    """A view some moves into a hand, after the opponent has taken, refused and thrown."""
    g, _, r = play_first_hand([StrongBot(seed=1), StrongBot(seed=2)], RuleSet(), "inf", lambda g, n: n >= 14)
    assert r is None
    seat = g.current_player
    assert seat is not None
    return g.view(seat)


def test_strength_one_is_the_hand_set_model_and_zero_forgets_the_moves() -> None:
    view = _late_view()
    k1 = read_view(view)
    assert read_view(view, (1.0, 1.0, 1.0)) == k1
    k0 = read_view(view, (0.0, 0.0, 0.0))
    pool = [c for c in range(52) if k0.pool >> c & 1]
    assert len({round(k0.p_opp[c], 12) for c in pool}) == 1  # every unseen card alike
    assert len({round(k1.p_opp[c], 12) for c in pool}) > 1
    k2 = read_view(view, (2.0, 2.0, 2.0))
    spread = [max(k.p_opp[c] for c in pool) - min(k.p_opp[c] for c in pool) for k in (k0, k1, k2)]
    assert spread[0] < spread[1] < spread[2]


def test_the_bot_passes_its_strength_to_its_knowledge() -> None:
    view = _late_view()
    ev = StrongBot(seed=1, infer_picked=0.5, infer_refused=2.0, infer_discarded=0.0).evaluator(view)
    assert ev.k == read_view(view, (0.5, 2.0, 0.0))


def test_end_to_end_marks_the_bots_row(capsys: pytest.CaptureFixture[str]) -> None:
    assert inferfit.main(["--hands", "2", "--jobs", "1", "--powers", "0,1", "--top", "3"]) == 0
    out = capsys.readouterr().out
    assert "<- the bot's" in out and "8 strengths" in out
    sums = inferfit.score_hand(("t", 0, RuleSet(), "strong", [(1.0, 1.0, 1.0), (0.0, 0.0, 0.0)]))
    assert sums[0][2] == sums[1][2] > 0 and sums[0][4] == sums[1][4] > 0  # the same cards judged
