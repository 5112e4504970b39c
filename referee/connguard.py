"""The connection guard: caps on live connections, per host and in all.

Why it exists: every ZeroMQ connection costs the referee about 28 KB that is libzmq's own
(its pipes and the engine's buffers), whether or not the peer ever says a word, and a
ROUTER socket has no call that closes a peer. So "one host opens 5,000 idle connections"
(bench/load.py --attack idle-sessions) could only be bounded by the file-descriptor limit,
which is a far worse failure (libzmq spins on EMFILE in accept).

How: the socket monitor reports every accepted connection with its file descriptor
(``ACCEPTED``) and every end (``DISCONNECTED``). The guard keeps ``fd -> host`` for each
live TCP connection; when an accepted connection takes its host past ``per_host``, or the
referee past ``total``, the guard shuts that socket down (``shutdown(2)`` on a duplicate of
the descriptor: the connection is the same, so libzmq reads end-of-file, drops it and
frees what it held). Its socket sees a disconnect and may retry, and is cut again while
its host is over the cap. The guard acts within a moment of the accept, not before it: a
fast peer may have said `hello` already, and its session is then held like any whose
connection went (about 1 KB, forgotten after the liveness), never its 28 KB.

Why not refuse at the ZAP handshake (RFC 27), the place ZeroMQ offers for refusals:
with a ZAP domain set, libzmq refuses every ZMTP 1.0/2.0 peer outright, and JeroMQ 0.3
(Debian's, which the Java bot uses) speaks ZMTP 2.0, so a ZAP-based guard locked the Java
bot out. ZAP stays for what only it can do, CURVE's allow-list (referee.security), and the
same thread answers it (a context has one ZAP endpoint).

- ipc peers have no host and count only towards ``total``: they are local processes the
  socket file's permissions already admit.
- The count is of live connections, those still in their handshake included, so a host
  that holds more than ``per_host`` connections at all is refused until its count falls
  back below the cap; no honest host comes near it.
- A descriptor is acted on only while the guard still believes it is that connection's:
  events are read in batches, and an ``ACCEPTED`` whose ``DISCONNECTED`` is in the same
  batch is not shut down (its number may already belong to a newer connection).

It runs in one small thread (the monitor only speaks on connects and disconnects, so
nothing per message), and it never touches the referee's state.
"""

from __future__ import annotations

import asyncio
import os
import socket
import struct
import threading
from collections import Counter
from collections.abc import Callable

import zmq
from zmq.auth.base import Authenticator

_EVENTS = zmq.EVENT_ACCEPTED | zmq.EVENT_DISCONNECTED


def host_of(address: str) -> str:
    """The host a peer address names, the same for ZAP's form and ``getpeername``'s.

    >>> host_of("::ffff:127.0.0.1"), host_of("10.0.0.7"), host_of("::1"), host_of("")
    ('127.0.0.1', '10.0.0.7', '::1', '')
    """
    return address[7:] if address.startswith("::ffff:") else address


def _local_matches(local: object, endpoint: str) -> bool:
    """Is ``local`` (a socket's ``getsockname()``) an end of the listener ``endpoint``?

    A TCP listener's accepted sockets have its port (the address may be the interface of
    a wildcard bind); an ipc listener's have its path.

    >>> _local_matches(("127.0.0.1", 7117), "tcp://127.0.0.1:7117"), _local_matches(("127.0.0.1", 7117), "tcp://0.0.0.0:7118")
    (True, False)
    >>> _local_matches("/tmp/d1.sock", "ipc:///tmp/d1.sock"), _local_matches("/tmp/d1.sock", "ipc:///tmp/d2.sock")
    (True, False)
    """
    if endpoint.startswith("ipc://"):
        return isinstance(local, str) and local == endpoint[len("ipc://"):]
    if endpoint.startswith("tcp://") and isinstance(local, tuple) and len(local) >= 2:
        return endpoint.rsplit(":", 1)[-1] == str(local[1])
    return not endpoint  # an event without its endpoint (not libzmq's): nothing to check against


def open_accepted(fd: int, endpoint: str) -> tuple[socket.socket, str] | None:
    """A duplicate of an accepted descriptor and its peer's host ('' for ipc), or None
    if the descriptor is gone or no longer a connection of ``endpoint``.

    Why check and keep the duplicate: events are read a moment after they happen, and a
    descriptor closed meanwhile may already be another connection's, even another
    socket's (a seat door's, or an outgoing one of the same process). The duplicate
    names the connection that was checked, so a shutdown through it can only ever hit
    that one.
    """
    try:
        dup = os.dup(fd)
    except OSError:
        return None
    try:
        s = socket.socket(fileno=dup)
    except OSError:
        os.close(dup)
        return None
    try:
        if not _local_matches(s.getsockname(), endpoint):
            s.close()
            return None
        peer = s.getpeername()
    except OSError:
        s.close()
        return None
    return s, (host_of(peer[0]) if isinstance(peer, tuple) else "")


class ConnectionGuard:
    """Caps one socket's live connections; see the module docstring for why and how.

    ``per_host`` / ``total``: the caps (0 = no cap). ``curve_location``: the CURVE allow
    list for :meth:`zmq.auth.Authenticator.configure_curve` (a directory, or
    ``zmq.auth.CURVE_ALLOW_ANY``), or None when the socket is plain TCP.
    """

    def __init__(self, ctx: zmq.Context, sock: zmq.Socket, *, per_host: int, total: int,
                 curve_location: str | None = None, on_accept: Callable[[], None] | None = None) -> None:
        self.per_host = per_host
        self.total = total
        #: called (in the guard's thread) for each connection accepted, even one gone already
        self.on_accept = on_accept
        self.refused: Counter[str] = Counter()  # host -> handshakes refused (operators, tests)
        self._by_fd: dict[int, str] = {}  # live connections (accepted, not yet disconnected)
        self._hosts: Counter[str] = Counter()  # the same, per host
        self._lock = threading.Lock()  # counts are read by other threads (snapshot())
        self._auth: Authenticator | None = None
        if curve_location is not None:  # CURVE's allow-list is answered at ZAP
            self._auth = Authenticator(ctx, log=None)
            self._auth.start()  # binds inproc://zeromq.zap.01: one per context
            self._auth.configure_curve(domain="*", location=curve_location)
        # The monitor's PAIR comes from ``ctx`` (a plain context), not from the socket's
        # own: the tournament gateway's socket is a zmq.asyncio one, whose sockets cannot
        # be read synchronously from this thread.
        monitor_end = f"inproc://okgin-connguard-monitor-{id(self)}"
        sock.monitor(monitor_end, _EVENTS)
        self._monitor = ctx.socket(zmq.PAIR)
        self._monitor.linger = 0
        self._monitor.connect(monitor_end)
        self._sock = sock
        self._pipe_end = f"inproc://okgin-connguard-{id(self)}"
        self._pipe = ctx.socket(zmq.PAIR)
        self._pipe.linger = 0
        self._pipe.bind(self._pipe_end)
        self._thread_pipe = ctx.socket(zmq.PAIR)
        self._thread_pipe.linger = 0
        self._thread_pipe.connect(self._pipe_end)
        self._thread = threading.Thread(target=self._run, name="okgin-connguard", daemon=True)
        self._thread.start()

    # ----------------------------------------------------------------- the thread
    def _run(self) -> None:
        loop = asyncio.new_event_loop()  # pyzmq's handle_zap_message is a coroutine
        poller = zmq.Poller()
        zap = self._auth.zap_socket if self._auth is not None else None
        for s in (self._thread_pipe, zap, self._monitor):
            if s is not None:
                poller.register(s, zmq.POLLIN)
        try:
            while True:
                ready = dict(poller.poll())
                if self._monitor in ready:
                    self._read_events()
                if zap is not None and zap in ready:
                    assert self._auth is not None
                    loop.run_until_complete(self._auth.handle_zap_message(zap.recv_multipart()))
                if self._thread_pipe in ready:
                    return
        finally:
            loop.close()
            self._thread_pipe.close(0)

    def _read_events(self) -> None:
        batch: list[tuple[int, int, str]] = []
        while True:
            try:
                frames = self._monitor.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                break
            if frames and len(frames[0]) >= 6:
                event, fd = struct.unpack("=HI", frames[0][:6])
                endpoint = frames[1].decode(errors="replace") if len(frames) > 1 else ""
                batch.append((event, fd, endpoint))
        ended_later: set[int] = set()
        for i in range(len(batch) - 1, -1, -1):  # which ACCEPTEDs have their end in this batch
            event, fd, endpoint = batch[i]
            if event == zmq.EVENT_DISCONNECTED:
                ended_later.add(fd)
            elif fd in ended_later:
                batch[i] = (-1, fd, endpoint)  # accepted and gone already: count nothing, shut nothing
                ended_later.discard(fd)
        if self.on_accept is not None:
            for event, _fd, _ep in batch:
                if event in (zmq.EVENT_ACCEPTED, -1):
                    self.on_accept()
        refuse: list[tuple[socket.socket, str]] = []
        try:
            for event, fd, endpoint in batch:
                opened = open_accepted(fd, endpoint) if event == zmq.EVENT_ACCEPTED else None
                with self._lock:
                    self._forget(fd)  # its end, or a reused descriptor's old connection
                    if opened is None:
                        continue
                    conn, host = opened
                    self._by_fd[fd] = host
                    self._hosts[host] += 1
                    if self.refusal(host) is not None:
                        refuse.append((conn, host))
                        continue
                conn.close()  # (the duplicate only: libzmq keeps its own descriptor)
            for conn, host in refuse:
                try:
                    conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    continue
                self.refused[host] += 1
        finally:
            for conn, _ in refuse:
                conn.close()

    def _forget(self, fd: int) -> None:
        host = self._by_fd.pop(fd, None)
        if host is not None:
            self._hosts[host] -= 1
            if self._hosts[host] <= 0:
                del self._hosts[host]

    def refusal(self, host: str) -> str | None:
        """Why a connection just accepted from ``host`` is refused, or None (caller holds the lock)."""
        if self.per_host and host and self._hosts[host] > self.per_host:
            return f"too many connections from {host} (limit {self.per_host})"
        if self.total and len(self._by_fd) > self.total:
            return f"too many connections (limit {self.total})"
        return None

    # ----------------------------------------------------------------- outside
    def snapshot(self) -> dict[str, int]:
        """Live connections per host ('' = ipc), for status pages and tests."""
        with self._lock:
            return dict(self._hosts)

    def stop(self) -> None:
        """End the thread and close what it used (before the socket and context go)."""
        if self._pipe.closed:
            return
        self._pipe.send(b"TERMINATE")
        self._thread.join(timeout=5)
        self._pipe.close(0)
        try:
            self._sock.disable_monitor()
        except zmq.ZMQError:
            pass
        self._monitor.close(0)
        if self._auth is not None:
            self._auth.stop()
