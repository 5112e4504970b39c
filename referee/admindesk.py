"""The admin desk: what an organiser asks of the lobby (protocol.md §5.19-§5.21, §5.25).

Creating a table (reserved seats, a chosen seed, deferred reveal, seat doors), closing one,
and ``reveal``: a finished game's seed and salt. Who may send these is the catalogue's
business (``okgin.protocol.catalogue.ROLES``, checked by the dispatcher); what they do to
the tables is the lobby's (:meth:`referee.lobby.Lobby.create_table`,
:meth:`referee.lobby.Lobby.close_table`). This desk checks the request and answers it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from okgin.protocol import ProtocolError

from .table import PLAYING, REVEAL_AT_END

if TYPE_CHECKING:
    from .lobby import Lobby
    from .sessions import Session
    from .table import Table
    from .tablehost import Host

__all__ = ["AdminDesk"]


class AdminDesk:
    """``create_table``, ``close_table`` and ``reveal``. See the module docstring.

    ``open_doors(table)`` opens a seat door per reserved seat and returns their endpoints
    (:meth:`referee.doors.Doors.open`)."""

    def __init__(self, lobby: Lobby, open_doors: Callable[[Table], list[str]], host: Host) -> None:
        self.lobby = lobby
        self.open_doors = open_doors
        self.host = host

    def on_create_table(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        doors = msg.get("doors", False)
        if doors and not msg.get("reserved", False):
            raise ProtocolError("bad_message", "doors (1.5) are for reserved seats: send reserved: true with them")
        t = self.lobby.create_table(
            table=msg.get("table"),
            variant=msg.get("variant", "oklahoma"),
            rules=msg.get("rules"),
            seed=msg.get("seed"),
            clock=msg.get("clock"),
            policies=msg.get("policies"),
            reserved=bool(msg.get("reserved", False)),
            players=msg.get("players"),
            full_feed_delay_ms=msg.get("full_feed_delay_ms"),
            reveal=msg.get("reveal", REVEAL_AT_END),
        )
        reply = {"type": "table_created", "table": t.name, "seat_tokens": t.reserved_tokens, "broadcast_token": t.broadcast_token}
        if doors:
            try:
                reply["doors"] = self.open_doors(t)
            except ProtocolError:
                self.lobby.close_table(t, "its seat doors could not be opened")
                raise
        self.host.reply(sess, reply, rqid)

    def on_reveal(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        """An admin asks for a finished game's seed and salt (protocol 1.4, §5.25).

        Why only admins, and why at any table: at a ``deferred`` table the seed stays
        secret after the game (the organiser may deal it again to other players) and the
        organiser decides when to publish it; at an ordinary table it was revealed
        already, so answering costs nothing. A running game's seed is never handed out.
        """
        name, game = msg["table"], msg["game"]
        t = self.lobby.tables.get(name)
        if t is None:
            raise ProtocolError("no_such_table", f"no table named {name!r}", table=name)
        if game == t.game_no and t.status == PLAYING:
            raise ProtocolError(
                "game_in_progress",
                f"game {game} of table {name!r} is still running: its seed is secret until it ends",
                table=name,
            )
        deal = t.deals.get(game)
        if deal is None:
            kept = f"games {min(t.deals)}-{max(t.deals)}" if t.deals else "no finished game"
            raise ProtocolError("no_such_game", f"table {name!r} keeps the seeds of {kept}, not of game {game}", table=name)
        seed, salt, hash_ = deal
        self.host.reply(
            sess, {"type": "revealed", "table": name, "game": game, "seed": seed, "salt": salt, "seed_hash": hash_}, rqid
        )

    def on_close_table(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        name = msg["table"]
        t = self.lobby.tables.get(name)
        if t is None:
            raise ProtocolError("no_such_table", f"no table named {name!r}", table=name)
        self.host.reply_ok(sess, "close_table", rqid, t.name)
        self.lobby.close_table(t, f"closed by {sess.name}")
