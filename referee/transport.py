"""The referee's transport: one ROUTER socket, its drain order and cost accounting.

Why a plain ZeroMQ socket driven by ``loop.add_reader`` rather than awaiting
``zmq.asyncio`` futures: the referee handles one message at a time to completion, and
draining the socket with non-blocking reads in a reader callback costs a few
microseconds per message instead of a future per message. ZeroMQ's file descriptor is
edge-triggered, so the rule here is: drain until ``EAGAIN`` after every wake-up, and
schedule another drain (:meth:`Transport.kick`) after any send made outside a drain
(timers), since a send can consume the edge of a message that arrived meanwhile.
The sends themselves are :mod:`referee.sending`'s: while a frame is handled they wait in
an outbox, and the transport writes them when the handler returns (:meth:`Transport.drain`),
so no handler ever calls back into a transport that is still reading. The sockets are
made by :mod:`referee.sockets`.

This module knows frames and peers, not messages: what a frame means is the
dispatcher's business (:mod:`referee.dispatch`). What it does own is what every frame
costs before it is understood: the per-connection budget (:mod:`referee.ratelimit`),
the size limit libzmq enforces (``ZMQ_MAXMSGSIZE``) and which peers may speak at all.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import zmq

from .security import CurveError
from .sending import Sender
from .sockets import bind_door, bind_main

if TYPE_CHECKING:
    from .config import RefereeConfig
    from .connguard import ConnectionGuard
    from .doors import Door
    from .sessions import Session

_recv = zmq.backend.Socket.recv
# pyzmq types Socket.get as returning int | bytes | str, whatever the option; every option
# read through _get here (RCVMORE, EVENTS, FD) is an integer, which only a cast can say.
_get = cast("Callable[[zmq.Socket[Any], int], int]", zmq.backend.Socket.get)
_FD = int(zmq.FD)
_RCVMORE = int(zmq.RCVMORE)
_EVENTS = int(zmq.EVENTS)
_POLLIN = int(zmq.POLLIN)
_NOBLOCK = int(zmq.NOBLOCK)
# How long close() lets ZeroMQ deliver the last messages (shutdown) to peers still reading.
SHUTDOWN_LINGER_MS = 1000
# Messages read per wake-up at most, before timers get a turn (Transport.drain).
DRAIN_MAX = 2000
_NEVER = float("inf")  # the sort key of a connection without a session (Transport.drain)
# The longest one drain serves messages before it lets timers and new reads in (seconds).
# Why: a batch of up to DRAIN_MAX requests that each cost a millisecond (creating a table
# writes its recovery file) held honest tables' moves for two seconds; served in slices,
# a move that arrives meanwhile is read and, having waited longest, served first.
DRAIN_BUDGET_S = 0.005
# Messages read from one seat door per wake-up at most (one bot's traffic: a few per move).
DOOR_DRAIN_MAX = 64


class Transport:
    """The ROUTER socket of one referee. See the module docstring.

    ``handle(frames, door)``, wired by the referee (the dispatcher's), is called for every
    message read (``frames[0]`` is the connection's key: its routing id on the main socket,
    ``door.prefix + routing id`` through a seat door, :mod:`referee.doors`; ``door`` None
    on the main socket); ``conns``, also wired (the session desk's), maps keys to sessions
    and is only read here, for the order in which a batch is served.
    """

    def __init__(self, config: RefereeConfig, now: Callable[[], float]) -> None:
        self.config = config
        self.handle: Callable[[list[bytes], Door | None], None] = self.unwired
        #: the seat doors being read, by key prefix (referee.doors)
        self.doors: dict[bytes, Door] = {}
        self.conns: dict[bytes, Session] = {}
        self.now = now
        self.loop: asyncio.AbstractEventLoop = None  # type: ignore[assignment]  # set by open()
        self.ctx: zmq.Context | None = None
        self.sock: zmq.Socket | None = None
        self.endpoint: str | None = None
        self._fd: int | None = None
        self.guard: ConnectionGuard | None = None  # the ZAP handler: connection caps and CURVE's allow-list
        self._kick_pending = False
        self._backlog: list[list[bytes]] = []  # read, not yet served (drain's time budget)
        self.closing = False
        self.stats = {"received": 0, "sent": 0, "dropped": 0, "errors": 0, "internal": 0}
        #: the sends (referee.sending): held while a frame is handled, written after it
        self.sender = sender = Sender(self.stats, now, self.kick, self._door_kick, self.doors)
        self.send = sender.send
        self.send_bytes = sender.send_bytes
        self.raw_send = sender.raw_send
        self.raw_send_main = sender.raw_send_main

    def unwired(self, frames: list[bytes], door: Door | None) -> None:
        raise RuntimeError("the transport reads before a handler was wired to it (Transport.handle)")

    # ---------------------------------------------------------------- lifecycle
    def open(self, loop: asyncio.AbstractEventLoop) -> str:
        """Bind the ROUTER (port 0 works); return the real endpoint. Reading starts with :meth:`serve`."""
        self.loop = loop
        ctx = zmq.Context()
        try:
            self.sock, self.endpoint, self.guard = bind_main(ctx, self.config)
            self.sender.sock = self.sock
        except (zmq.ZMQError, CurveError):
            ctx.term()
            raise
        self.ctx = ctx
        return self.endpoint

    # ---------------------------------------------------------------- seat doors
    def open_door(self, endpoint: str, on_accept: Callable[[], None] | None = None) -> tuple[zmq.Socket, ConnectionGuard | None]:
        """Bind a seat door's ROUTER (referee.doors) with a connection cap of its own
        (:func:`referee.sockets.bind_door`)."""
        assert self.ctx is not None
        return bind_door(self.ctx, self.config, endpoint, on_accept)

    def serve_door(self, door: Door) -> None:
        """Start reading a door opened by :meth:`open_door`."""
        self.doors[door.prefix] = door
        door.fd = _get(door.sock, _FD)
        self.loop.add_reader(door.fd, self.drain_door, door)
        self.loop.call_soon(self.drain_door, door)

    def close_door(self, door: Door) -> None:
        """Close a door: its peers are disconnected, its connections forgotten."""
        if self.sender.out:
            self.sender.flush()  # what the handler sent through it (table_closed) goes first
        self.doors.pop(door.prefix, None)
        if door.fd is not None:
            if self.loop is not None and not self.loop.is_closed():
                self.loop.remove_reader(door.fd)
            door.fd = None
        if door.guard is not None:
            door.guard.stop()
            door.guard = None
        if not door.sock.closed:
            # a short linger: the game_end just sent may still be on its way to the bot
            door.sock.close(linger=SHUTDOWN_LINGER_MS)

    def drain_door(self, door: Door) -> None:
        """Read a door's messages (one bot's) and hand each on with its door.

        Not sorted in with the main socket's batch: a door carries one seat's traffic,
        a few messages per move. Read until EAGAIN (the descriptor is edge-triggered),
        or DOOR_DRAIN_MAX, then another turn."""
        door.pending = False
        sock = door.sock
        if door.fd is None or self.closing or sock.closed:
            return
        prefix = door.prefix
        handle = self.handle
        stats = self.stats
        sender = self.sender
        out = sender.out
        was = sender.holding
        sender.holding = True
        try:
            for _ in range(DOOR_DRAIN_MAX):
                try:
                    rid = _recv(sock, _NOBLOCK)
                    frames = [prefix + rid, _recv(sock, _NOBLOCK)]
                    while _get(sock, _RCVMORE):
                        frames.append(_recv(sock, _NOBLOCK))
                except zmq.Again:
                    break
                except zmq.ZMQError:
                    return
                stats["received"] += 1
                handle(frames, door)
                if out:
                    sender.flush()
                if door.fd is None:  # its table closed meanwhile
                    return
            else:
                self._door_kick(door)
                return
            try:
                if _get(sock, _EVENTS) & _POLLIN:  # replies sent may have consumed the edge
                    self._door_kick(door)
            except zmq.ZMQError:
                pass
        finally:
            if out:
                sender.flush()
            sender.holding = was

    def _door_kick(self, door: Door) -> None:
        if not door.pending and door.fd is not None:
            door.pending = True
            self.loop.call_soon(self.drain_door, door)

    def serve(self) -> None:
        """Start reading (after crash recovery has restored what it could)."""
        assert self.sock is not None
        self._fd = _get(self.sock, _FD)
        self.loop.add_reader(self._fd, self.drain)
        self.kick()

    def stop_reading(self) -> None:
        self.closing = True
        if self._fd is not None:
            self.loop.remove_reader(self._fd)
            self._fd = None

    async def close(self) -> None:
        """Deliver what is queued (the game_end and shutdown just sent) before going.

        Close with a bounded linger, and let term() wait off the loop until ZeroMQ's I/O
        thread has written every queue or the linger has passed. Peers that are gone
        cost nothing (their queues are dropped with them); only a peer that is connected
        but not reading can hold the stop up, and for SHUTDOWN_LINGER_MS at most.
        """
        self.stop_reading()
        for door in list(self.doors.values()):  # referee.doors closes them first; this is a backstop
            self.close_door(door)
        if self.sock is not None:
            self.sock.close(linger=SHUTDOWN_LINGER_MS)
            self.sock = self.sender.sock = None
        if self.guard is not None:
            self.guard.stop()
            self.guard = None
        ctx, self.ctx = self.ctx, None
        if ctx is not None:
            await self.loop.run_in_executor(None, ctx.term)

    # ---------------------------------------------------------------- reading
    def kick(self) -> None:
        """Schedule a drain of the socket (after sends made outside a drain)."""
        if not self._kick_pending and self.sock is not None:
            self._kick_pending = True
            self.loop.call_soon(self.drain)

    def drain(self) -> None:
        """Read what is waiting (at most DRAIN_MAX messages), then serve it oldest first.

        At most DRAIN_BUDGET_S is spent serving; what is left waits for the next drain.

        Why read first and sort: ZeroMQ's ROUTER fair-queues its peers, but not in the
        order they started waiting. When a peer's queue runs dry, libzmq swaps the most
        recently activated peer into its slot and reads that one next, so under load a
        newly arrived message often overtakes older ones. At 200 busy tables that made
        the slowest tenth of decisions wait two to four times the median. The referee
        therefore serves each batch in the order in which it last sent something to
        each session: for a player answering a prompt, that is the prompt's time, so
        the table that has waited longest is served first. The sort is stable, so one
        connection's messages keep their order. A client that floods gets an answer
        (an error, at least) to each message, which moves it to the back. Connections
        that have no session yet sort last, in arrival order: as far as the referee
        knows they began waiting just now. (Sorting them first once let a ``hello``
        resuming a token overtake the ``bye`` another connection of that session had
        sent before it: tests/hardening/test_security.py.)
        """
        self._kick_pending = False
        sock = self.sock
        if sock is None or self.closing:
            return
        # what the last drain read but had no time to serve comes first (it is older)
        batch, self._backlog = self._backlog, []
        more = False
        for i in range(DRAIN_MAX - len(batch)):
            # the backend's recv, without pyzmq's recv_multipart wrapper
            try:
                rid = _recv(sock, _NOBLOCK)
                # a ROUTER hands a routing id, then always at least one frame
                frames = [rid, _recv(sock, _NOBLOCK)]
                while _get(sock, _RCVMORE):
                    frames.append(_recv(sock, _NOBLOCK))
            except zmq.Again:
                break
            except zmq.ZMQError:  # socket closed under us during shutdown
                return
            batch.append(frames)
            if i == 0:
                # Anything more? Most wake-ups of a lightly loaded referee bring one
                # message; asking ZMQ_EVENTS processes the socket's pending commands
                # exactly as a failed read would (so the edge-triggered descriptor is
                # re-armed) at a third of the cost of raising and catching zmq.Again.
                # Asked once per drain only: a busy referee drains many messages per
                # wake-up, where reading on until EAGAIN is the cheaper end.
                try:
                    if not _get(sock, _EVENTS) & _POLLIN:
                        break
                except zmq.ZMQError:
                    return
        else:
            more = True
        if len(batch) > 1:
            conns = self.conns
            batch.sort(key=lambda f: s.last_sent if (s := conns.get(f[0])) is not None else _NEVER)
        sender = self.sender
        out = sender.out
        sender.holding = True
        stats = self.stats
        handle = self.handle
        now = self.now
        deadline = now() + DRAIN_BUDGET_S
        last = len(batch) - 1
        try:
            for k, frames in enumerate(batch):
                if self.closing:
                    return
                stats["received"] += 1
                handle(frames, None)
                if out:
                    sender.flush()  # what handling it sent (referee.sending)
                if k & 7 == 7 and k < last and now() > deadline:
                    # Out of time: keep the rest for the next drain, after timers and
                    # after reading what arrived meanwhile (sorted in with it).
                    self._backlog = batch[k + 1 :]
                    more = True
                    break
            if more:
                self.kick()  # more may be waiting: let timers run first
            elif batch and self.sock is not None:
                # Handling sent replies, and a send may process the socket's pending
                # commands, consuming the edge of the (edge-triggered) descriptor for a
                # message that arrived meanwhile: ask once more, or that message would
                # wait until the referee next sends outside a drain (at worst a
                # heartbeat, heartbeat_ms later).
                try:
                    if _get(sock, _EVENTS) & _POLLIN:
                        self.kick()
                except zmq.ZMQError:
                    pass
        finally:
            if out:
                sender.flush()
            sender.holding = False
