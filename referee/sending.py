"""The referee's sends: one frame to one peer, never blocking, in order, and never mid-read.

:class:`Sender` writes what the referee's parts hand it to the ROUTER sockets of
:mod:`referee.transport`: the main socket, or a seat door's (:mod:`referee.doors`) when
the connection's key names one. A send that does not fit the peer's queue is dropped
(``raw_send`` returns False), never waited for.

**Nothing is written while the transport is handling a frame.** A bot's ``act`` is read by
the transport, which calls the dispatcher, which calls the table, which makes the next
prompt and the events. Those sends go into the outbox (:attr:`Sender.out`) and leave when
the handler has returned (:meth:`Sender.flush`, called by the transport after each frame),
in the order they were made. Why: a send can fail, and a failed send calls back into the
referee (a watcher that does not read is cut off, :mod:`referee.lagging`, which changes
the table's watchers); made from inside the handler, that callback ran in the middle of the
table's own work, with the transport still in its read loop. Deferred, it runs between two
frames, when no part is half-way through anything. The cost is an append per send.

Outside a read (timers, the lifecycle tick, shutdown) a send goes out at once and asks the
transport for another drain (``kick``), since ZeroMQ's descriptor is edge-triggered and a
send can consume the edge of a message that arrived meanwhile.

``raw_send`` (errors the dispatcher answers a frame with, notices) returns whether the
frame was queued, so it is written at once even during a read, after whatever the outbox
holds (the order a peer sees is the order the referee sent in).
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import zmq

from okgin.protocol import encode

if TYPE_CHECKING:
    from .doors import Door
    from .sessions import Session

__all__ = ["Connections", "Sender"]

log = logging.getLogger("okgin.referee")

_send = zmq.backend.Socket.send
_MORE = zmq.SNDMORE | zmq.NOBLOCK
_NOBLOCK = int(zmq.NOBLOCK)


class Connections(Protocol):
    """What a part that answers connections (not sessions) uses: a clock and a raw send.

    The rate limiter (:mod:`referee.ratelimit`) and the lagging guard
    (:mod:`referee.lagging`) are handed this, and the referee's :class:`Sender` is one."""

    @property
    def now(self) -> Callable[[], float]:
        """The loop's clock."""

    @property
    def raw_send(self) -> Callable[[bytes, bytes], bool]:
        """Queue one frame for a connection key; False if it was dropped."""


class Sender:
    """Sends for one referee's sockets. See the module docstring.

    The transport owns the sockets and keeps :attr:`sock` (the main socket, None when
    closed) and :attr:`doors` (seat doors by key prefix) current; it sets :attr:`holding`
    while it handles frames, and calls :meth:`flush` after each one.
    """

    def __init__(self, stats: dict[str, int], now: Callable[[], float], kick: Callable[[], None],
                 door_kick: Callable[[Door], None], doors: dict[bytes, Door]) -> None:
        self.stats = stats
        self.now = now
        self.kick = kick
        self.door_kick = door_kick
        self.doors = doors
        self.sock: zmq.Socket | None = None
        #: True while the transport is handling a frame: session sends wait in :attr:`out`
        self.holding = False
        #: sends made while holding, in order: (connection key, frame, session)
        self.out: list[tuple[bytes, bytes, Session]] = []
        #: called with a session whose message could not be queued (referee.lagging)
        self.on_drop: Callable[[Session], None] | None = None

    def send(self, sess: Session, msg: dict[str, Any]) -> None:
        """Encode ``msg`` and send it to ``sess`` (nothing if it is not connected)."""
        if sess.rid is not None:
            self.send_bytes(sess, encode(msg))

    def send_bytes(self, sess: Session, data: bytes) -> None:
        """Send a packed frame to ``sess``: at once, or after the frame being handled."""
        rid = sess.rid
        if rid is None or self.sock is None:
            return
        if self.holding:
            self.out.append((rid, data, sess))  # the key now: a resume may rebind sess meanwhile
            return
        self.deliver(rid, data, sess)

    def deliver(self, rid: bytes, data: bytes, sess: Session) -> None:
        if self.put(rid, data):
            sess.last_sent = self.now()
        else:
            sess.dropped += 1
            if self.on_drop is not None:
                self.on_drop(sess)  # a watcher that never reads is cut off (referee.lagging)

    def flush(self) -> None:
        """Write what the outbox holds, in order (sends made meanwhile, by a drop's
        callback, go after it in the same pass: a list's iterator sees what is appended).

        A main-socket frame is written here, not through :meth:`put` (the same two
        backend sends, one Python call less per frame: this is the referee's hottest
        loop); a seat door's goes through :meth:`put`. No ``kick``: the transport is
        in its drain, and asks ``ZMQ_EVENTS`` itself when it ends."""
        out = self.out
        sock = self.sock
        put = self.put
        now = self.now
        on_drop = self.on_drop
        stats = self.stats
        for rid, data, sess in out:
            try:
                if sock is not None and len(rid) == 5:
                    try:
                        _send(sock, rid, _MORE)
                        _send(sock, data, _NOBLOCK)
                        ok = True
                        stats["sent"] += 1
                    except zmq.Again:  # the peer's queue is at its high-water mark
                        ok = False
                        stats["dropped"] += 1
                    except zmq.ZMQError as e:
                        if e.errno != zmq.EHOSTUNREACH:  # peer gone (ROUTER_MANDATORY) is a drop
                            raise
                        ok = False
                        stats["dropped"] += 1
                else:
                    ok = put(rid, data)
            except zmq.ZMQError:
                # (made inside a handler, this used to raise into the dispatcher, which logged
                # it as an internal error; the rest of the outbox is for other peers: go on)
                log.error("send failed: %s", traceback.format_exc())
                continue
            if ok:
                sess.last_sent = now()
            else:
                sess.dropped += 1
                if on_drop is not None:
                    on_drop(sess)  # a watcher that never reads is cut off (referee.lagging)
        out.clear()

    def raw_send(self, rid: bytes, data: bytes) -> bool:
        """Queue one frame for a connection at once, after what the outbox holds; False if
        it was dropped. ``rid`` is a connection's key: a 5-byte routing id of the main
        socket, or a seat door's key (referee.doors), which names the door's socket and the
        routing id there."""
        if self.out:
            self.flush()
        return self.put(rid, data)

    def put(self, rid: bytes, data: bytes) -> bool:
        """Write one frame to its socket without ever blocking; False if it was dropped."""
        sock = self.sock
        if len(rid) != 5:
            # (a door peer's key: 11 bytes, or more or fewer for a routing id it chose, which
            # only bad_identity is ever sent to; the main socket's refusals go by raw_send_main)
            door = self.doors.get(rid[:6])
            if door is None or sock is None:
                self.stats["dropped"] += 1
                return False
            sock = door.sock
            rid = rid[6:]
            # A send may consume the edge of a message that arrived meanwhile (Transport.drain).
            self.door_kick(door)
        if sock is None:
            return False
        try:
            # the backend's send, without pyzmq's Python-level wrapper: this is the
            # referee's hottest call (two frames per message, three messages per move)
            _send(sock, rid, _MORE)
            _send(sock, data, _NOBLOCK)
        except zmq.Again:  # the peer's queue is at its high-water mark
            self.stats["dropped"] += 1
            return False
        except zmq.ZMQError as e:
            if e.errno == zmq.EHOSTUNREACH:  # peer gone (ROUTER_MANDATORY)
                self.stats["dropped"] += 1
                return False
            raise
        finally:
            if not self.holding:
                self.kick()
        self.stats["sent"] += 1
        return True

    def raw_send_main(self, rid: bytes, data: bytes) -> bool:
        """Queue a frame for a peer of the main socket, whatever its routing id looks like
        (a client-chosen id may have any length: it must never be taken for a door's key)."""
        if self.out:
            self.flush()
        sock = self.sock
        if sock is None:
            return False
        try:
            _send(sock, rid, _MORE)
            _send(sock, data, _NOBLOCK)
        except zmq.ZMQError:
            self.stats["dropped"] += 1
            return False
        finally:
            if not self.holding:
                self.kick()
        self.stats["sent"] += 1
        return True
