"""Seat doors: a socket of its own per reserved seat, through which only that seat is played.

Why: a sandboxed tournament bot reaches the referee through an ``ipc://`` socket bound
into its sandbox. Through the referee's shared socket it could open a tokenless session,
list and watch every table, and create tables whose names carry its hand to its own
copy at the other seating of the same deal; and its connections counted only toward the
referee's total cap, so one bot could take all 10,000 and lock everyone out (issue 24).

A door (protocol 1.5, ``create_table`` with ``doors``) is a ROUTER socket bound to an
``ipc://`` path in a 0700 directory of the referee's, one per seat. What comes through
it is *seat-only*:

- the only ``hello`` admitted carries that seat's token (``seat_only`` otherwise:
  tokenless, another seat's token, any other token);
- after it, only the seat's business: ``act``, ``advise``, ``sync``, ``resign``
  for the door's table, and ``ping``, ``heartbeat``, ``bye``. Every lobby request
  (``list_tables``, ``watch``, ``create_table``, ``join``, ``queue``, ``rematch`` ...)
  gets ``seat_only`` and changes nothing.

Each door has its own connection cap (:attr:`RefereeConfig.max_door_connections`,
enforced by a :class:`~referee.connguard.ConnectionGuard` of its own, so a bot that
reconnects still gets in), and its connections do not count toward the referee's total:
a door's flood is cut at the door, and other clients never see it. The door closes with
its table (its socket file goes with it).

A door that has accepted ``FLOOD_CONNECTIONS`` connections within ``FLOOD_WINDOW_S`` is
**closed for good** (its seat's connections with it; the seat then loses by disconnect
like any that went away). Why: cutting each connection as it is accepted still costs the
referee about 45 us of CPU (libzmq's accept and the guard's check), a connection closed
by the bot before the guard sees it costs the accept all the same, and a sandboxed bot
could make ten thousand a second, which on a loaded machine halved a bystander's moves
per second (bench/door_flood.py). A closed door costs nothing: the sandbox's mount of
its socket file now leads to no listener, and the kernel refuses every connect. No honest
bot comes near: it needs one connection, a few while it reconnects, and libzmq retries a
connection at most every 100 ms.

The transport keeps a door's peers apart from the main socket's: a connection that came
through a door is known by ``DOOR_MARK + door id (4 bytes) + routing id`` (11 bytes),
never by a bare 5-byte routing id, since libzmq's routing ids are per socket.
"""

from __future__ import annotations

import hmac
import logging
import os
import shutil
import tempfile
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import zmq

from okgin.protocol import ProtocolError

from .connguard import ConnectionGuard

if TYPE_CHECKING:
    from .config import RefereeConfig
    from .sessions import Session
    from .table import Table
    from .transport import Transport

log = logging.getLogger("okgin.referee")

DOOR_MARK = b"\xffD"
#: a door that accepted this many connections within FLOOD_WINDOW_S is closed (module docstring)
FLOOD_CONNECTIONS = 500
FLOOD_WINDOW_S = 10.0
#: Messages a door lets through after ``hello``; those naming a table must name the door's.
SEAT_TYPES = frozenset({"act", "advise", "sync", "resign", "entropy_reveal", "ping", "heartbeat", "bye"})
_TABLE_TYPES = frozenset({"act", "advise", "sync", "resign", "entropy_reveal"})


def door_key(prefix: bytes, rid: bytes) -> bytes:
    """The connection key of a peer that came through the door with this prefix."""
    return prefix + rid


@dataclass(eq=False)
class Door:
    """One seat's socket: who may come in, and what they may do."""

    prefix: bytes  # DOOR_MARK + 4-byte door id: the first 6 bytes of its peers' keys
    table: str
    seat: int
    token: str
    path: Path
    sock: zmq.Socket
    guard: ConnectionGuard | None
    fd: int | None = None  # read by the transport while open
    pending: bool = False  # a drain of it is scheduled (the transport)

    @property
    def endpoint(self) -> str:
        return f"ipc://{self.path}"

    def admit_hello(self, msg: dict[str, Any]) -> None:
        """Refuse (``seat_only``) a hello that does not carry this door's seat token."""
        token = msg.get("token")
        if not isinstance(token, str) or not token:
            raise ProtocolError(
                "seat_only",
                "this is a seat door (protocol 1.5): hello with your seat's token; tokenless sessions are refused here",
            )
        if not hmac.compare_digest(token.encode(), self.token.encode()):
            raise ProtocolError("seat_only", "this seat door admits its own seat's token only")
        if msg.get("role") != "player":
            raise ProtocolError("seat_only", "this seat door admits role player only")

    def admit(self, t: str, msg: dict[str, Any]) -> None:
        """Refuse (``seat_only``) whatever is not this seat's business."""
        if t not in SEAT_TYPES:
            raise ProtocolError("seat_only", f"a seat door (protocol 1.5) carries only its seat's play: {t} is refused here")
        if t in _TABLE_TYPES and msg.get("table") != self.table:
            raise ProtocolError("seat_only", f"this seat door is for table {self.table!r} only", table=msg.get("table"))


class Doors:
    """The referee's doors, by table. Sockets are opened and closed through the transport.

    Handed the settings, the transport, and of the session desk its connections (read
    only) and ``disconnect``: a door's sessions lose their connection with it."""

    def __init__(self, config: RefereeConfig, transport: Transport, conns: dict[bytes, Session],
                 disconnect: Callable[[Session], None]) -> None:
        self.config = config
        self.transport = transport
        self.conns = conns
        self.disconnect = disconnect
        self.by_table: dict[str, list[Door]] = {}
        #: (table, seat) of each door closed for a flood, for operators and tests
        self.flooded: list[tuple[str, int]] = []
        self._dir: Path | None = None
        self._made_dir = False
        self._next = 0

    def directory(self) -> Path:
        """The 0700 directory doors are bound in (made on first use unless configured)."""
        if self._dir is None:
            given = self.config.door_dir
            if given:
                d = Path(given)
                d.mkdir(mode=0o700, parents=True, exist_ok=True)
                os.chmod(d, 0o700)
            else:
                d = Path(tempfile.mkdtemp(prefix="okgin-doors-"))  # 0700
                self._made_dir = True
            self._dir = d
        return self._dir

    def open(self, t: Table) -> list[str]:
        """A door per reserved seat of ``t``; their endpoints, by seat. Raises
        ``ProtocolError`` (nothing left open) when one cannot be bound."""
        tokens = t.reserved_tokens
        if not tokens:
            raise ProtocolError("bad_message", "doors are for tables with reserved seats (reserved: true)")
        made: list[Door] = []
        try:
            for seat, token in enumerate(tokens):
                self._next += 1
                prefix = DOOR_MARK + self._next.to_bytes(4, "big")
                path = self.directory() / f"d{self._next}.sock"
                sock, guard = self.transport.open_door(f"ipc://{path}", self._flood_watch(prefix))
                door = Door(prefix, t.name, seat, token, path, sock, guard)
                # The bot may run as another uid (a sandbox run by root): the directory, not
                # the file, keeps other users out; the sandbox sees only its own door's file.
                os.chmod(path, 0o666)
                made.append(door)
                self.transport.serve_door(door)
        except (zmq.ZMQError, OSError) as e:
            for door in made:
                self._close(door)
            raise ProtocolError("limit_reached", f"cannot open a seat door: {e}") from None
        self.by_table[t.name] = made
        return [d.endpoint for d in made]

    def _flood_watch(self, prefix: bytes) -> Callable[[], None]:
        """The door guard's ``on_accept`` (called in the guard's thread): once the door has
        accepted FLOOD_CONNECTIONS connections within FLOOD_WINDOW_S, ask the loop to close it."""
        times: deque[float] = deque(maxlen=FLOOD_CONNECTIONS)
        loop = self.transport.loop
        fired = False

        def accepted() -> None:
            nonlocal fired
            now = time.monotonic()
            times.append(now)
            if not fired and len(times) == FLOOD_CONNECTIONS and now - times[0] <= FLOOD_WINDOW_S:
                fired = True
                loop.call_soon_threadsafe(self._flooded, prefix)

        return accepted

    def _flooded(self, prefix: bytes) -> None:
        for name, doors in self.by_table.items():
            for door in doors:
                if door.prefix == prefix:
                    log.warning("seat door of table %s seat %d closed: %d connections within %g s (a flood)",
                                name, door.seat, FLOOD_CONNECTIONS, FLOOD_WINDOW_S)
                    self.flooded.append((name, door.seat))
                    doors.remove(door)
                    self._close(door)
                    return

    def close_table(self, name: str) -> None:
        for door in self.by_table.pop(name, ()):
            self._close(door)

    def _close(self, door: Door) -> None:
        self.transport.close_door(door)
        gone = [s for key, s in self.conns.items() if key.startswith(door.prefix)]
        for sess in gone:  # their connection went with the door
            self.disconnect(sess)
        try:
            door.path.unlink()
        except OSError:
            pass

    def close_all(self) -> None:
        for name in list(self.by_table):
            self.close_table(name)
        if self._made_dir and self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
