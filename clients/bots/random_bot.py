"""``random``: a uniformly random legal action at every decision, in every role.

The floor of any strength table, and a fuzzer: it visits rare states (knocking with the
worst legal card, passing a gin upcard) that sensible bots never reach. As the sitter of
Gin in the Box it advises a random legal action half the time, so the advice path is
exercised too. Its choices come from its own seeded ``random.Random`` (``Bot.rng``), so
a game replays exactly for the same bot seeds.
"""

from __future__ import annotations

from okgin import Action, View

from ..bot import Bot


class RandomBot(Bot):
    """Uniformly random among the legal actions (knocks listed without melds)."""

    name = "random"

    def choose(self, view: View, legal: list[Action]) -> Action:
        return legal[self.rng.randrange(len(legal))]

    def advise(self, view: View, captain_legal: list[Action]) -> tuple[Action | None, str] | None:
        if self.rng.random() < 0.5:
            return None
        return captain_legal[self.rng.randrange(len(captain_legal))], "random idea"
