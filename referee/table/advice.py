"""The sitter's advice to its captain (Gin in the Box, protocol.md §5.13, docs/rules.md §4).

Every advice of a hand is in the captain's view, so each one makes every later message
to the captain bigger: :class:`Advice` caps it per prompt and per hand
(``RefereeConfig.max_advice_per_prompt``, ``max_advice_per_hand``), applies it, journals
it, and queues the ``ok`` and the captain's ``advice`` on the table's feed. Whether the
advice may be given at all (a game, the sitter, the captain's pending prompt) the game
flow has checked (:meth:`referee.table.flow.GameFlow.advise`).
"""

from __future__ import annotations

from typing import Any

from okgin import Action, Game, IllegalAction
from okgin.protocol import ProtocolError, encode

from ..journal import Journal
from ..sessions import Session
from .feed import Feed
from .prompts import Pending

__all__ = ["Advice"]


class Advice:
    """Advice accepted in the current hand, capped (see the module docstring)."""

    __slots__ = ("count", "feed", "hand", "name", "per_hand", "per_prompt")

    def __init__(self, name: str, caps: tuple[int, int], feed: Feed) -> None:
        self.name = name
        self.per_prompt, self.per_hand = caps
        self.feed = feed
        self.hand = -1  # the hand the count is for
        self.count = 0

    def take(
        self, game: Game, game_no: int, p: Pending, journal: Journal | None, sess: Session, seat: int, msg: dict[str, Any],
        rqid: Any,
    ) -> None:
        """Apply the advice in ``msg`` from ``seat`` for prompt ``p`` (the captain's), or
        raise ProtocolError and change nothing."""
        if p.advised >= self.per_prompt:
            raise ProtocolError("limit_reached", f"at most {self.per_prompt} advice per prompt; seq {p.seq} has had its share")
        hand_no = game.hand.number
        if self.hand != hand_no:
            self.hand, self.count = hand_no, 0
        if self.count >= self.per_hand:
            raise ProtocolError("limit_reached", f"at most {self.per_hand} advice per hand; this hand has had its share")
        action = None
        raw = msg.get("action")
        if raw is not None:
            try:
                action = Action.from_wire(raw)
            except Exception as e:
                raise ProtocolError("bad_action", f"bad suggested action: {e}") from None
        text = msg.get("text", "")
        try:
            game.advise(seat, action, text)
        except IllegalAction as e:
            raise ProtocolError("bad_advice", str(e)) from None
        p.advised += 1
        self.count += 1
        wire = None if action is None else action.to_wire()
        if journal is not None:
            journal.write("advice", seat=seat, action=wire, text=text, seq=p.seq)
        ok: dict[str, Any] = {"type": "ok", "request": "advise", "table": self.name}
        if rqid is not None:
            ok["id"] = rqid
        self.feed.send(sess, encode(ok))
        assert game.roles is not None
        captain = self.feed.seating.seats[game.roles[1]]
        if captain is not None:
            advice = {
                "type": "advice", "table": self.name, "game": game_no, "seq": p.seq, "seat": seat, "action": wire, "text": text,
            }
            self.feed.send(captain, encode(advice))
