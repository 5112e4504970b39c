"""Display options: how cards look and what help the table offers.

Kept apart from the game state because they belong to the person at the keyboard, not
to the game: they survive a reconnect, a rematch and a replay unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

from okgin import env

SORTS = ("melds", "suit", "rank", "manual")


@dataclass(frozen=True)
class DisplayOptions:
    """``ascii``: suits as ``S H D C`` and plain box lines (terminals without Unicode).
    ``four_colour``: each suit its own colour (clubs green, diamonds blue), so no two
    suits share a colour. ``hints``: show the best discard and whether a knock is on.
    ``sort``: order of the hand (``manual`` keeps the player's own order)."""

    ascii: bool = False
    four_colour: bool = False
    hints: bool = True
    sort: str = "melds"

    def next_sort(self) -> DisplayOptions:
        return DisplayOptions(self.ascii, self.four_colour, self.hints, SORTS[(SORTS.index(self.sort) + 1) % len(SORTS)])


def options_from_env(ascii: bool | None = None, four_colour: bool | None = None) -> DisplayOptions:
    """Defaults from the environment: ``OKGIN_ASCII=1`` and ``OKGIN_FOUR_COLOUR=1``.

    ASCII is also the default when the terminal's encoding cannot show the suit symbols
    (a ``LANG=C`` terminal), so the table is never drawn with replacement characters.
    """
    if ascii is None:
        ascii = env.flag("OKGIN_ASCII") or not _utf8_terminal()
    if four_colour is None:
        four_colour = env.flag("OKGIN_FOUR_COLOUR")
    return DisplayOptions(ascii=ascii, four_colour=four_colour)


def _utf8_terminal() -> bool:
    for var in ("LC_ALL", "LC_CTYPE", "LANG"):
        val = env.get(var)
        if val:
            return "utf-8" in val.lower() or "utf8" in val.lower()
    return True  # nothing set: modern terminals default to UTF-8
