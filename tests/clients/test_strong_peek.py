"""bench/strength/oracle.py's ``peek:cards=K`` (strong shown K of the opponent's hidden
cards) and dangerfit.py's ``--peek``: the curve of what each card of knowledge is worth."""

from __future__ import annotations

import sys
from pathlib import Path

from clients.bots.strong import StrongBot
from clients.bots.strong.knowledge import opponent_of
from okgin import Game, RuleSet

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "strength"))

import dangerfit  # noqa: E402
from oracle import PeekBot, peek_view  # noqa: E402


def test_peeking_at_every_card_makes_every_guess_the_truth() -> None:
    rows = [r for i in range(2) for r in dangerfit.collect_hand(("pk", i, RuleSet(), "strong", 8, None, 10))]
    assert rows and any(r[1] for r in rows)
    for _, truth, *preds in rows:
        assert preds == [float(truth)] * len(dangerfit.PREDICTORS)


def test_peek_view_shows_k_hidden_cards_and_keeps_them_while_held() -> None:
    rules = RuleSet()
    checked = 0
    for i in range(4):
        g = Game(rules, f"pv/{i}")
        bots = [StrongBot(seed=f"pv{i}/{s}") for s in range(2)]
        for s, b in enumerate(bots):
            b.on_game_start(s, rules, 2)
        before: set[int] = set()
        while g.current_player is not None:
            seat = g.current_player
            view, legal = g.view(seat), g.legal_actions()
            opp = opponent_of(view)
            real = g.hand.hands[opp]
            known = set(view.known_cards[opp])
            shown, kept = peek_view(view, real, 3, "salt", frozenset(before) if seat == 0 else frozenset())
            seen = set(shown.known_cards[opp]) - known
            assert seen == kept
            hidden = {c for c in range(52) if real >> c & 1} - known
            assert seen <= hidden and len(seen) == min(3, len(hidden))
            assert shown.known_cards[seat] == view.known_cards[seat] and shown.hand == view.hand
            if seat == 0:  # the same viewer: a card still hidden in the opponent's hand stays shown
                assert before & hidden <= seen
                before = seen
            checked += 1
            if g.apply(bots[seat].choose(view, legal), seat=seat) is not None:
                break
    assert checked > 40


def test_peeking_at_nothing_is_strong() -> None:
    rules = RuleSet()
    for i in range(3):
        g = Game(rules, f"p0/{i}")
        peek = PeekBot(seed=f"p0/{i}", cards=0)
        peek.peek = (lambda game: lambda: game.hand.hands[1])(g)
        strong = StrongBot(seed=f"p0/{i}")
        other = StrongBot(seed="other")
        for s, b in enumerate((peek, other)):
            b.on_game_start(s, rules, 2)
        strong.on_game_start(0, rules, 2)
        while g.current_player is not None:
            seat = g.current_player
            view, legal = g.view(seat), g.legal_actions()
            if seat == 0:
                a = peek.choose(view, legal)
                assert a == strong.choose(view, legal)
            else:
                a = other.choose(view, legal)
            if g.apply(a, seat=seat) is not None:
                break
