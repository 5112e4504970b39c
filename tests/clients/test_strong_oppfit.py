"""The opponent model's weights (``strong:opp_last=...``) and bench/strength/oppfit.py,
which scores and fits them by the hands opponents really held at knock decisions."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

from clients.bots.strong import V1, StrongBot
from clients.bots.strong.knowledge import read_view
from clients.bots.strong.opponent import EARLIER, LAST_DISCARD, OLDER, PICKUP, History, history_of
from okgin import RuleSet

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "strength"))

import knockfit  # noqa: E402
import oppfit  # noqa: E402


def test_v1s_weights_are_the_models_own() -> None:
    h = History(None, [], [], [])
    assert (h.last_w, h.earlier_w, h.pickup_w, h.older_w) == (LAST_DISCARD, EARLIER, PICKUP, OLDER)
    assert (V1.opp_last, V1.opp_earlier, V1.opp_pickup, V1.opp_older) == (LAST_DISCARD, EARLIER, PICKUP, OLDER)
    assert (V1.opp_tight, V1.opp_no_knock) == (h.tight, h.no_knock)


def test_weights_change_the_sampled_hands_and_the_same_weights_give_the_same() -> None:
    rules = RuleSet()
    found = (d for i in range(30) for d in knockfit.collect_hand(("w", i, rules, "strong")))
    p = next(d for d in found if history_of(d.view).last_discard is not None)

    def sample(**params: float) -> list[int]:
        bot = StrongBot(seed="x", **params)
        bot.on_game_start(0, rules, 2)
        return bot.opponent_hands(read_view(p.view), p.view, random.Random("s"), 48)

    assert sample() == sample(opp_last=LAST_DISCARD, opp_earlier=EARLIER)
    assert sample() != sample(opp_last=0.0, opp_tight=0.0, opp_older=0.0, opp_earlier=0.0)


def test_score_and_fit_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "kf.pkl"
    assert knockfit.main(["collect", "--hands", "6", "--seed", "e2e", "--jobs", "1", "--out", str(out)]) == 0
    meta, ds = knockfit.load(str(out))
    assert ds and meta["rules"] == RuleSet()
    capsys.readouterr()
    assert oppfit.main(["score", str(out), "", "opp_no_knock=3", "--jobs", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("(the bot as it is)") and "vs first" not in lines[0]
    assert lines[1].startswith("opp_no_knock=3") and "vs first" in lines[1]
    assert oppfit.main(["fit", str(out), "--rounds", "1", "--jobs", "1"]) == 0
    text = capsys.readouterr().out
    assert "held out" in text and "candidate: strong:opp_last=" in text
