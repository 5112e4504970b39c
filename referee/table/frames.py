"""What each recipient is told of one move (protocol.md §5.14, §11): the frame builders.

A move's ``event`` differs per seat (each sees the move as its view shows it), is one
shared frame for the public watchers, and a map with the whole deal for the full feed.
:func:`move_builders` returns the three builders :class:`referee.table.feed.Feed` calls
per recipient; nothing is built for a recipient that does not get it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from okgin import Action, card_str

from ..wireviews import ViewCache, frame, pack

__all__ = ["move_builders"]


def move_builders(
    views: ViewCache,
    base: dict[str, Any],
    actor: int,
    action: Action,
    hand_before: Any,
    ended: bool,
    full_view: Callable[[], dict[str, Any]],
) -> tuple[Callable[[int | None], bytes], Callable[[int], bytes], Callable[[], dict[str, Any]]]:
    """The ``event`` of ``actor``'s ``action`` (``base``: its type, table, game, n and auto):
    a seat's (or with None the public) frame, a batched seat's HeldEvent, the full feed's map.

    A move that ended the hand carries no view (the ``hand_end`` that follows does), and
    only a discard's card is public then: a knock's face-down card stays hidden."""
    kind = action.kind
    n, auto = base["n"], base["auto"]
    if ended:
        public_card = action.card if kind == "discard" else None
        move_pub = {"seat": actor, "kind": kind, "card": None if public_card is None else card_str(public_card)}
        ended_frame = pack({**base, "move": move_pub, "view": None})
        ended_held = pack({"n": n, "move": move_pub, "auto": auto})

        def build(seat: int | None) -> bytes:
            return ended_frame

        def held(seat: int) -> bytes:
            return ended_held
    else:
        held_base = {"n": n, "auto": auto}

        def build(seat: int | None) -> bytes:
            # the move as this seat saw it = the last event of its view, already packed
            view = views.packed(seat)
            return frame(base, ("move", views.last_event_packed(seat)), ("view", view))

        def held(seat: int) -> bytes:
            return frame(held_base, ("move", views.last_event_packed(seat)))

    def build_full() -> dict[str, Any]:
        card = action.card if action.card is not None else hand_before.events[-1][2]
        move = {"seat": actor, "kind": kind, "card": None if card is None else card_str(card)}
        return {**base, "move": move, "view": None if ended else full_view()}

    return build, held, build_full
