"""Participants' nonces through the referee (protocol 1.5, protocol.md 5.27).

Why the referee relays them: a sandboxed tournament bot reaches nothing but its referee
socket, yet each participant must be able to add a nonce to the event's deals
(okgin.schedule, *Participants' nonces*). So a player's ``hello`` may carry
``entropy_commit`` (kept on its session), the organiser's admin session reads the
commitments of a table's seats with ``entropy`` and, once the list of every
participant's commitment is fixed, asks the seats to reveal (``entropy`` with that list's
``commitments_hash``: each seated session that committed gets ``entropy_request``).
The seat answers ``entropy_reveal``; its nonce must hash to its commitment, and a second,
different nonce is refused, so a seat cannot change its mind. Only admins read the
nonces: a participant never learns another's before all are in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from okgin.protocol import ProtocolError
from okgin.schedule import nonce_commitment

if TYPE_CHECKING:
    from .lobby import Lobby
    from .sessions import Session
    from .tablehost import Host


class EntropyDesk:
    """The handlers of ``entropy`` (admin) and ``entropy_reveal`` (player).

    Handed the lobby (to find the table and the seat) and the sends, not the referee."""

    def __init__(self, lobby: Lobby, host: Host) -> None:
        self.lobby = lobby
        self.host = host

    def on_entropy(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        name = msg["table"]
        t = self.lobby.tables.get(name)
        if t is None:
            raise ProtocolError("no_such_table", f"no table named {name!r}", table=name)
        asked = msg.get("commitments_hash")
        if asked is not None:
            for seat in t.seats:
                if seat is not None and seat.entropy_commit is not None and seat.entropy_nonce is None:
                    seat.entropy_asked = asked
                    self.host.send(seat, {"type": "entropy_request", "table": name, "commitments_hash": asked})
        self.host.reply(sess, {
            "type": "entropy_state", "table": name,
            "commits": [None if s is None else s.entropy_commit for s in t.seats],
            "nonces": [None if s is None else s.entropy_nonce for s in t.seats],
        }, rqid)

    def on_entropy_reveal(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        t, _seat = self.lobby.table_of(sess, msg["table"])
        nonce = msg["nonce"]
        if sess.entropy_asked is None:
            raise ProtocolError("forbidden", "no entropy_request was sent to you: reveal only when asked", table=t.name)
        if nonce_commitment(bytes.fromhex(nonce)) != sess.entropy_commit:
            raise ProtocolError("bad_message", "entropy_reveal: this nonce does not hash to your hello's entropy_commit",
                                table=t.name)
        if sess.entropy_nonce is None:
            sess.entropy_nonce = nonce
        self.host.reply_ok(sess, "entropy_reveal", rqid, t.name)
