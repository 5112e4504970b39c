"""docs/rules.md §3.7.1 The game limit (``max_hands``, okgin): after that many hands the
game ends (termination ``hand_limit``); the higher score wins, equal top scores give no
winner. Off (0) by default; every game of two bots that never knock then ends."""

from __future__ import annotations

import pytest
from enginekit import knock_position

from okgin import Game, RuleError, RuleSet
from okgin.record import game_from_record


def never_knock(g: Game) -> None:
    """One move of a player that never ends a hand: pass the offer, draw the stock,
    throw the card it drew (so no meld ever forms from the draws, and nobody knocks)."""
    legal = g.legal_actions()
    kinds = {a.kind: a for a in legal}
    if "pass" in kinds:
        g.apply(kinds["pass"])
    elif "draw_stock" in kinds:
        g.apply(kinds["draw_stock"])
    else:
        discards = [a for a in legal if a.kind == "discard"]
        g.apply(discards[-1])


def play_out(g: Game, bound: int = 100_000) -> int:
    for n in range(bound):
        if g.is_over:
            return n
        never_knock(g)
    raise AssertionError(f"the game did not end within {bound} actions")


def test_without_the_limit_two_players_that_never_knock_never_end():
    g = Game(RuleSet(), seed=3)
    with pytest.raises(AssertionError, match="did not end"):
        play_out(g, bound=3000)
    assert len(g.results) >= 20 and all(r.winner is None for r in g.results)


@pytest.mark.parametrize("variant, limit", [("oklahoma", 1), ("oklahoma", 7), ("box", 4)])
def test_two_players_that_never_knock_end_at_the_limit_in_a_draw(variant, limit):
    g = Game(RuleSet(variant=variant, max_hands=limit), seed=11)
    play_out(g)
    assert len(g.results) == limit and g.is_over and g.current_player is None
    assert g.termination == "hand_limit" and g.winner is None  # every hand drawn: 0-0, nobody wins
    assert g.final_scores()["termination"] == "hand_limit"
    for seat in (0, 1, None):
        assert g.view(seat).phase == "game_over"
    # The record replays to the same ending (verify re-runs records through the engine).
    again = game_from_record(g.to_record(), verify=True)
    assert again.is_over and again.termination == "hand_limit" and again.winner is None


def test_the_higher_score_wins_at_the_limit():
    g, r = knock_position("As 2s 3s 4h 5h 6h 9c 9d 9h 2c", "Jc Qc Ks 7s 8s Ts 3d 4d 6d Qd", draw="Kh", knock="Kh",
                          rules=RuleSet(max_hands=1))
    assert r.points == 76 and g.is_over and g.winner == 1 and g.termination == "hand_limit"


def test_the_target_still_wins_normally_on_the_last_hand():
    g, _ = knock_position("As 2s 3s 4h 5h 6h 9c 9d 9h 2c", "Jc Qc Ks 7s 8s Ts 3d 4d 6d Qd", draw="Kh", knock="Kh",
                          rules=RuleSet(max_hands=1), scores=[0, 30])
    assert g.is_over and g.winner == 1 and g.termination == "normal"


def test_the_option_is_validated_and_absent_from_records_when_off():
    assert RuleSet().max_hands == 0 and "max_hands" not in RuleSet().to_dict()
    assert RuleSet(max_hands=100).to_dict()["max_hands"] == 100
    assert RuleSet.from_dict(RuleSet(max_hands=5).to_dict()) == RuleSet(max_hands=5)
    assert RuleSet().with_assignments(["max_hands=9"]).max_hands == 9
    for bad in (-1, 10001, True, "5"):
        with pytest.raises(RuleError, match="max_hands"):
            RuleSet(max_hands=bad)


def test_hand_limit_is_not_a_forfeit_reason():
    g = Game(RuleSet(), seed=1)
    with pytest.raises(ValueError):
        g.resign(0, "hand_limit")
