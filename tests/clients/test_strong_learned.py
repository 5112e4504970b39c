"""The strong bot's learned utility (``strong:learned=1``) and the script that fits it."""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from clients.bot import Bot
from clients.bots.strong import StrongBot, learned
from okgin import Game, RuleSet

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "strength"))

import valuefit  # noqa: E402
from strong_hands import play_first_hand  # noqa: E402


def test_every_row_is_a_utility_zero_at_gin_and_never_better_for_more_deadwood() -> None:
    doc = learned.tables()
    assert doc["tables"], "no learned table is shipped"
    for name, per_limit in doc["tables"].items():
        rules = RuleSet(**doc["rules"][name])
        assert learned.table_for(rules) == name
        for key, rows in per_limit.items():
            limit = int(key)
            assert len(rows) == 3
            for s in (31, 20, 5):
                u = learned.utility(rules, limit, s)
                assert u is not None and len(u) == learned.SIZE
                assert u[0] == 0.0
                assert all(b >= a - 1e-9 for a, b in itertools.pairwise(u)), (name, limit, s)


def test_rules_no_table_was_fitted_under_get_the_linear_utility() -> None:
    box = RuleSet(variant="box")
    assert learned.table_for(box) is None
    assert learned.utility(box, 10, 20) is None
    odd = RuleSet(undercut_bonus=17)
    assert learned.table_for(odd) is None


def test_in_the_box_the_learned_bot_plays_exactly_like_the_linear_one() -> None:
    rules = RuleSet(variant="box")
    from clients.bots.simple import SimpleBot

    roles = Game(rules, "learned-box").view(0).roles
    for role in ("box", "captain"):  # the sitter only advises: the bot must play here
        seat = roles.index(role)
        runs = []
        for on in (True, False):
            bots: list[Bot] = [SimpleBot(seed="s1"), SimpleBot(seed="s2"), SimpleBot(seed="s3")]
            bots[seat] = StrongBot(seed="lb", learned=on)
            moves = play_first_hand(bots, rules, "learned-box")[1]
            assert any(m.startswith(f"{seat}:") for m in moves)
            runs.append(moves)
        assert runs[0] == runs[1]


def test_the_learned_bot_plays_legal_deterministic_hands_and_differs_from_linear() -> None:
    rules = RuleSet()
    differs = False
    for i in range(6):
        seed = f"learned/{i}"
        a = play_first_hand([StrongBot(seed="x", learned=True), StrongBot(seed="y")], rules, seed)[1]
        b = play_first_hand([StrongBot(seed="x", learned=True), StrongBot(seed="y")], rules, seed)[1]
        assert a == b
        c = play_first_hand([StrongBot(seed="x"), StrongBot(seed="y")], rules, seed)[1]
        differs = differs or a != c
    assert differs, "the learned utility changed no move in six hands"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.floats(-50, 50), st.floats(0.1, 10)), min_size=1, max_size=40))
def test_pava_is_non_increasing_and_keeps_the_weighted_mean(pairs: list[tuple[float, float]]) -> None:
    y = np.array([p[0] for p in pairs])
    w = np.array([p[1] for p in pairs])
    v = valuefit.pava_decreasing(y, w)
    assert len(v) == len(y)
    assert all(b <= a + 1e-9 for a, b in itertools.pairwise(v))
    assert abs(float((v * w).sum()) - float((y * w).sum())) < 1e-6 * max(1.0, float(np.abs(y * w).sum()))
    if all(b <= a for a, b in itertools.pairwise(y)):
        assert np.allclose(v, y)


def test_play_then_fit_writes_a_module_the_bot_could_load(tmp_path: Path) -> None:
    rec = tmp_path / "r.npz"
    assert valuefit.main(["play", "--hands", "3", "--seed", "t", "--jobs", "1", "--out", str(rec)]) == 0
    rows = np.load(rec)["rows"]
    assert rows.shape[1] == 4 and len(rows) > 20
    assert set(np.unique(rows[:, 0])) <= set(range(11))
    out = tmp_path / "table.json"
    assert valuefit.main(["fit", f"oklahoma={rec}", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["format"] == 1 and doc["rules"]["oklahoma"]["undercut_bonus"] == 10
    for rows3 in doc["tables"]["oklahoma"].values():
        assert len(rows3) == 3
        for row in rows3:
            assert len(row) == valuefit.MAX_D + 1
            assert all(b <= a + 1e-9 for a, b in itertools.pairwise(row))
