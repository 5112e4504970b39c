"""bench/strength/drawfit.py: the strong bot's draw decisions judged by the real results
of taking and of not taking."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from okgin import RuleSet

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "strength"))

import drawfit  # noqa: E402


def test_the_bots_own_choice_is_the_estimates_and_its_result_is_the_hands() -> None:
    """At margin 0 the rule replays the bot (it takes exactly when the card scores below
    the stock), so the mean of margin 0 is what the bot really got; both results are
    equities of a hand's points at 0-0."""
    ds = [d for i in range(8) for d in drawfit.collect_hand(("t", i, RuleSet(), "strong", 2.0))]
    assert ds and any(d.took for d in ds) and any(not d.took for d in ds)
    assert any(d.offer for d in ds) and any(not d.offer for d in ds)
    for d in ds:
        assert d.took == (d.est_take < d.est_stock)
        assert abs(d.est_take - d.est_stock) <= 2.0
        assert 0.0 <= d.real_take <= 1.0 and 0.0 <= d.real_other <= 1.0
    assert drawfit.worth(ds, 0.0) == [d.real_take if d.took else d.real_other for d in ds]
    assert drawfit.worth(ds, 100.0) == [d.real_other for d in ds]
    assert drawfit.worth(ds, -100.0) == [d.real_take for d in ds]


def test_collect_and_margins_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "df.pkl"
    assert drawfit.main(["collect", "--hands", "4", "--seed", "e2e", "--jobs", "1", "--out", str(out)]) == 0
    capsys.readouterr()
    assert drawfit.main(["margins", str(out), "--margins", "0.5,-0.5"]) == 0
    text = capsys.readouterr().out
    assert "all:" in text and "margin +0.50" in text and "margin -0.50" in text
