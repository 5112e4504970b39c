"""``strong:knock_margin`` and bench/strength/knockfit.py, which judges the bot's knock
decisions by the real results of knocking and of playing on."""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import pytest

from clients.bots.strong.knocking import score_knock
from clients.bots.strong.knowledge import read_view
from okgin import Action, RuleSet

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "strength"))

import knockfit  # noqa: E402


def _knock_choices(seed: str, **params: float) -> list[str]:
    """The kind of move at every position of a first hand where a knock is legal."""
    return [kind for _, kind in _knock_moves(seed, **params)]


def _knock_moves(seed: str, **params: float) -> list[tuple[int, str]]:
    """The stock left and the kind of move at every position of a first hand where a
    knock is legal."""
    rules = RuleSet()
    g, bots = knockfit.start_hand(seed, rules, params)
    kinds: list[tuple[int, str]] = []
    while g.current_player is not None:
        seat = g.current_player
        legal = g.legal_actions()
        a = bots[seat].choose(g.view(seat), legal)
        if any(x.kind == "knock" for x in legal):
            kinds.append((g.view(seat).stock_size, a.kind))
        if g.apply(a, seat=seat) is not None:
            break
    return kinds


def test_the_late_margin_acts_only_late_in_the_hand() -> None:
    """``knock_margin_late`` replaces the margin only with fewer than ``knock_late_stock``
    cards left: a late margin beyond any estimate changes no early decision, and late it
    never knocks (but with gin) until the first change of course."""
    late_seen = False
    for i in range(16):
        seed = f"late{i}"
        base = _knock_moves(seed)
        never_late = _knock_moves(seed, knock_margin_late=2.0, knock_late_stock=20)
        for (stock, kind), (stock2, kind2) in zip(base, never_late, strict=False):
            assert stock == stock2
            if stock >= 20:
                assert kind == kind2
            else:
                late_seen = True
                assert kind2 == "discard" or kind2 == kind
            if kind != kind2:
                break  # the hands go different ways from here
    assert late_seen


def test_a_margin_moves_the_knocks_the_way_it_says() -> None:
    """No margin is the bot as it is; margins (early and late) beyond any estimate never
    knock (but with gin); below any they always knock, as ``mc_knock=0`` does."""
    for i in range(12):
        seed = f"m{i}"
        assert _knock_choices(seed) == _knock_choices(seed, knock_margin=0.0)
        assert "discard" not in _knock_choices(seed, knock_margin=-2.0, knock_margin_late=-2.0)
        assert _knock_choices(seed, knock_margin=-2.0, knock_margin_late=-2.0)[:1] == _knock_choices(seed, mc_knock=0)[:1]
    never = [k for i in range(12) for k in _knock_choices(f"m{i}", knock_margin=2.0, knock_margin_late=2.0)]
    assert "discard" in never


def test_playing_on_and_knocking_are_what_the_hand_then_really_brought() -> None:
    """Where the bot itself played on, the copy played out from that position ends as
    the real hand did (the bots are deterministic), and where it knocked, the hand ended
    with the points measured for the knock: both measured results are the ones the bot
    gets."""
    rules = RuleSet()
    played_on = knocked = 0
    for i in range(10):
        found = knockfit.collect_hand(("po", i, rules, "strong"))
        g, bots = knockfit.start_hand(f"po/{i}", rules)
        seats = []
        while True:
            seat = g.current_player
            assert seat is not None
            legal = g.legal_actions()
            a = bots[seat].choose(g.view(seat), legal)
            if any(x.kind == "knock" for x in legal):
                seats.append(seat)
            r = g.apply(a, seat=seat)
            if r is not None:
                break
        assert len(found) in (len(seats), len(seats) - 1)  # less a last knock with gin
        for n, (d, seat) in enumerate(zip(found, seats, strict=False)):
            real = 0 if r.winner is None else (r.points if r.winner == seat else -r.points)
            if d.est_knock < d.est_play:
                assert d.play_points == real, (i, n)
                played_on += 1
            else:
                assert n == len(seats) - 1 and d.knock_points == real, (i, n)
                knocked += 1
    assert played_on and knocked


def test_collect_and_margins_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "kf.pkl"
    assert knockfit.main(["collect", "--hands", "8", "--seed", "e2e", "--jobs", "1", "--out", str(out)]) == 0
    _, ds = knockfit.load(str(out))
    assert ds and all(0.0 <= d.real_knock <= 1.0 and 0.0 <= d.real_play <= 1.0 for d in ds)
    assert knockfit.main(["margins", str(out), "--margins", "0.01,-0.01"]) == 0
    text = capsys.readouterr().out
    assert "limits all:" in text and "margin +0.010" in text and "margin -0.010" in text


@pytest.mark.parametrize("rules", [RuleSet(), RuleSet.standard_gin()], ids=["oklahoma", "standard"])
def test_the_real_points_of_each_knock_are_the_engines(rules: RuleSet) -> None:
    """What a decision keeps as the knock's real points is what the engine scores when
    the knock is made in that very game, and the opponent's hand it keeps (for
    oppfit.py) is the one the engine holds."""
    checked = 0
    for i in range(16):
        found = knockfit.collect_hand(("t", i, rules, "strong"))
        g, bots = knockfit.start_hand(f"t/{i}", rules)
        n = 0
        while g.current_player is not None:
            seat = g.current_player
            legal = g.legal_actions()
            view = g.view(seat)
            if n < len(found) and any(x.kind == "knock" for x in legal) and found[n].view == view:
                d = found[n]
                assert d.opp_hand == g.hand.hands[1 - seat] and d.opp_hand & read_view(view).hand == 0
                thrown = (read_view(view).hand & ~d.knock_hand).bit_length() - 1
                r = copy.deepcopy(g).apply(Action("knock", thrown), seat=seat)
                assert r is not None and r.knocker == seat
                got = 0 if r.winner is None else (r.points if r.winner == seat else -r.points)
                assert got == d.knock_points == score_knock(rules, d.knock_hand, d.opp_hand, d.knock_dw), (i, r)
                n += 1
                checked += 1
            if g.apply(bots[seat].choose(view, legal), seat=seat) is not None:
                break
        assert n == len(found)
    assert checked >= 8
