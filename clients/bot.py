"""The one ``Bot`` interface, for in-process play and for play over the network.

A bot is a class with one required method, :meth:`Bot.choose`, which gets the seat's
:class:`okgin.View` and the legal actions and returns one of them (a knock may carry
declared melds). The optional hooks let a bot track a game; the sitter of Gin in the Box
is asked for advice through :meth:`Bot.advise`. The same instance works with
:func:`clients.local.play_local` (fast self-play, no sockets) and with the network SDK
(the SDK rebuilds the same ``View`` and ``Action`` types from the wire), so a bot
written for research enters competitions unchanged.

Bots must be deterministic for a given ``seed`` so that games replay exactly.
"""

from __future__ import annotations

import random
from typing import Any

from okgin import Action, Advice, HandResult, RuleSet, View


class Bot:
    """Base class: override :meth:`choose`; the hooks default to doing nothing."""

    #: Short name shown in tables and logs.
    name: str = "bot"
    #: The family the seeded ``rng`` is drawn for (default: the class's name). A variant
    #: that must make the same random draws as the bot it varies (an analysis bot that
    #: differs only in what it is shown) names that bot's class here.
    rng_family: str | None = None

    def __init__(self, seed: int | str | None = None) -> None:
        self.seed = seed
        self.rng = random.Random(f"{self.rng_family or type(self).__name__}/{seed}")

    # Required -----------------------------------------------------------------
    def choose(self, view: View, legal: list[Action]) -> Action:
        """Return one action. ``legal`` lists knocks without melds; a knock with
        declared melds (``Action.knock(card, melds)``) is accepted if valid."""
        raise NotImplementedError

    # Optional hooks -------------------------------------------------------------
    def on_game_start(self, seat: int, rules: RuleSet, num_seats: int) -> None:
        """A new game begins; ``seat`` is this bot's seat."""

    def on_hand_start(self, view: View) -> None:
        """A new hand has been dealt (``view`` shows the deal as this seat sees it)."""

    def on_hand_end(self, result: HandResult, view: View) -> None:
        """A hand ended; ``result`` lays out both hands unless it was drawn."""

    def on_game_end(self, final: dict[str, Any], view: View) -> None:
        """The game ended; ``final`` has scores, winner and termination reason."""

    def on_advice(self, advice: Advice, view: View) -> None:
        """Captain only: the sitter sent advice (it never moves the game by itself)."""

    def advise(self, view: View, captain_legal: list[Action]) -> tuple[Action | None, str] | None:
        """Sitter only: asked when the captain is to act. Return (action or None, text)
        to advise, or None to stay quiet. ``view`` shows the captain's hand."""
        return None
