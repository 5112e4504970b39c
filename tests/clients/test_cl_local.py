"""play_local: the reference hook order, and what an illegal action does."""

from __future__ import annotations

from typing import Any

import pytest

from clients.bot import Bot
from clients.bots.simple import SimpleBot
from clients.local import overrides, play_local
from okgin import Action, Advice, HandResult, IllegalAction, RuleSet, View


class Recorder(SimpleBot):
    """simple's moves, every hook logged (with the hand number it saw)."""

    def __init__(self, log: list[tuple[Any, ...]], tag: int) -> None:
        super().__init__()
        self.log = log
        self.tag = tag

    def on_game_start(self, seat: int, rules: RuleSet, num_seats: int) -> None:
        self.log.append((self.tag, "game_start", seat))

    def on_hand_start(self, view: View) -> None:
        self.log.append((self.tag, "hand_start", view.hand_number))

    def choose(self, view: View, legal: list[Action]) -> Action:
        self.log.append((self.tag, "choose", view.hand_number))
        return super().choose(view, legal)

    def advise(self, view: View, captain_legal: list[Action]) -> tuple[Action | None, str] | None:
        self.log.append((self.tag, "advise", view.hand_number))
        return super().advise(view, captain_legal)

    def on_advice(self, advice: Advice, view: View) -> None:
        assert view.advice and view.advice[-1] == advice
        self.log.append((self.tag, "on_advice", view.hand_number))

    def on_hand_end(self, result: HandResult, view: View) -> None:
        self.log.append((self.tag, "hand_end", result.hand_number))

    def on_game_end(self, final: dict[str, Any], view: View) -> None:
        self.log.append((self.tag, "game_end", final["winner"]))


@pytest.mark.parametrize("variant", ["oklahoma", "box"])
def test_hook_order(variant: str) -> None:
    log: list[tuple[Any, ...]] = []
    n = 3 if variant == "box" else 2
    game = play_local([Recorder(log, i) for i in range(n)], RuleSet(variant=variant), seed=11)
    for i in range(n):
        mine = [e[1:] for e in log if e[0] == i]
        assert mine[0] == ("game_start", i)
        assert mine[-1] == ("game_end", game.winner)
        starts = [e[1] for e in mine if e[0] == "hand_start"]
        ends = [e[1] for e in mine if e[0] == "hand_end"]
        assert starts == ends == list(range(len(game.results)))
        # Every decision of hand k lies between its start and its end.
        hand = None
        for kind, k in mine[1:-1]:
            if kind == "hand_start":
                assert hand is None
                hand = k
            elif kind == "hand_end":
                assert k == hand
                hand = None
            else:
                assert k == hand
    if variant == "box":
        # advise (sitter) -> on_advice (captain) -> choose (captain), in that order.
        kinds = [e[1] for e in log]
        i = kinds.index("advise")
        assert kinds[i + 1 : i + 3] == ["on_advice", "choose"]
        assert kinds.count("advise") == kinds.count("on_advice")


class Cheat(Bot):
    def choose(self, view: View, legal: list[Action]) -> Action:
        if view.phase == "discard":
            return Action.discard((set(range(52)) - set(view.hand or ())).pop())  # a card it lacks
        return legal[0]


class Junk(Bot):
    def choose(self, view: View, legal: list[Action]) -> Any:
        return "take"


def test_illegal_action_raises_by_default_and_names_the_bot() -> None:
    with pytest.raises(IllegalAction, match=r"bot 'bot' at seat 0 played discard"):
        play_local([Cheat(), SimpleBot()], RuleSet(), seed=2)


@pytest.mark.parametrize("bad", [Cheat, Junk])
def test_illegal_action_forfeits_in_forfeit_mode(bad: type[Bot]) -> None:
    game = play_local([SimpleBot(), bad()], RuleSet(), seed=2, illegal="forfeit")
    assert game.is_over and game.termination == "illegal" and game.winner == 0
    assert game.log[-1] == ("resign", 1, "illegal")


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="needs 3 bots"):
        play_local([SimpleBot(), SimpleBot()], RuleSet(variant="box"))
    with pytest.raises(ValueError, match="illegal must be"):
        play_local([SimpleBot(), SimpleBot()], illegal="ignore")


def test_overrides() -> None:
    assert overrides(Recorder([], 0), "on_hand_end")
    assert not overrides(SimpleBot(), "on_hand_end")
    assert overrides(SimpleBot(), "advise")
