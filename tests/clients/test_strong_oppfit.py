"""The opponent model's weights (``strong:opp_last=...``) and bench/strength/oppfit.py,
which fits them to the hands opponents really held at knock decisions."""

from __future__ import annotations

import copy
import pickle
import random
import sys
from pathlib import Path

import pytest

from clients.bots.strong import V1, StrongBot
from clients.bots.strong.knocking import score_knock
from clients.bots.strong.knowledge import read_view
from clients.bots.strong.opponent import EARLIER, LAST_DISCARD, OLDER, PICKUP, History, history_of
from okgin import Action, Game, RuleSet

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "strength"))

import oppfit  # noqa: E402


def test_v1s_weights_are_the_models_own() -> None:
    h = History(None, [], [], [])
    assert (h.last_w, h.earlier_w, h.pickup_w, h.older_w) == (LAST_DISCARD, EARLIER, PICKUP, OLDER)
    assert (V1.opp_last, V1.opp_earlier, V1.opp_pickup, V1.opp_older) == (LAST_DISCARD, EARLIER, PICKUP, OLDER)
    assert (V1.opp_tight, V1.opp_no_knock) == (h.tight, h.no_knock)


def _knock_positions(seed: str, rules: RuleSet) -> list[tuple[Game, oppfit.Position]]:
    """Every knock decision (not gin) of one first hand of strong against itself, with a
    copy of the game at that point."""
    found = oppfit.collect_hand((seed, 0, rules, "strong"))
    g = Game(rules, f"{seed}/0")
    bots = [StrongBot(seed=f"{seed}/0/{s}") for s in range(2)]
    for s, b in enumerate(bots):
        b.on_game_start(s, rules, 2)
    out: list[tuple[Game, oppfit.Position]] = []
    while g.current_player is not None:
        seat = g.current_player
        legal = g.legal_actions()
        view = g.view(seat)
        if oppfit.knock_of(view, legal) is not None:
            out.append((copy.deepcopy(g), found[len(out)]))
        if g.apply(bots[seat].choose(view, legal), seat=seat) is not None:
            break
    assert len(out) == len(found)
    return out


@pytest.mark.parametrize("rules", [RuleSet(), RuleSet.standard_gin()], ids=["oklahoma", "standard"])
def test_the_real_points_of_each_collected_knock_are_the_engines(rules: RuleSet) -> None:
    """The target the model is fitted to: knocking in the game itself scores exactly
    what oppfit takes as the knock's real points, and the opponent's hand it keeps is
    the one the engine holds."""
    checked = 0
    for i in range(16):
        for g, p in _knock_positions(f"t{i}", rules):
            seat = g.current_player
            assert seat is not None and p.opp_hand == g.hand.hands[1 - seat]
            assert p.opp_hand & read_view(p.view).hand == 0
            thrown = (read_view(p.view).hand & ~p.knock_hand).bit_length() - 1
            r = g.apply(Action("knock", thrown), seat=seat)
            assert r is not None and r.knocker == seat
            got = 0 if r.winner is None else (r.points if r.winner == seat else -r.points)
            assert got == score_knock(rules, p.knock_hand, p.opp_hand, p.knock_dw), (i, r)
            checked += 1
    assert checked >= 8


def test_weights_change_the_sampled_hands_and_the_same_weights_give_the_same() -> None:
    rules = RuleSet()
    p = next(p for i in range(30) for _, p in _knock_positions(f"w{i}", rules) if history_of(p.view).last_discard is not None)

    def sample(**params: float) -> list[int]:
        bot = StrongBot(seed="x", **params)
        bot.on_game_start(0, rules, 2)
        return bot.opponent_hands(read_view(p.view), p.view, random.Random("s"), 48)

    assert sample() == sample(opp_last=LAST_DISCARD, opp_earlier=EARLIER)
    assert sample() != sample(opp_last=0.0, opp_tight=0.0, opp_older=0.0, opp_earlier=0.0)


def test_collect_score_and_fit_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "pos.pkl"
    assert oppfit.main(["collect", "--hands", "6", "--seed", "e2e", "--jobs", "1", "--out", str(out)]) == 0
    with open(out, "rb") as f:
        data = pickle.load(f)
    assert data["positions"] and data["rules"] == RuleSet()
    assert oppfit.main(["score", str(out), "", "opp_no_knock=3", "--jobs", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].startswith("(the bot as it is)") and "vs first" not in lines[1]
    assert lines[2].startswith("opp_no_knock=3") and "vs first" in lines[2]
    assert oppfit.main(["fit", str(out), "--rounds", "1", "--jobs", "1"]) == 0
    text = capsys.readouterr().out
    assert "held out" in text and "candidate: strong:opp_last=" in text
