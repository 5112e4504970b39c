"""The connection guard: caps on live connections, per host and in all, at the handshake.

Why it exists: every ZeroMQ connection costs the referee about 28 KB that is libzmq's own
(its pipes and the engine's buffers), whether or not the peer ever says a word, and a
ROUTER socket has no call that closes a peer. So "one host opens 5,000 idle connections"
(bench/load.py --attack idle-sessions) could only be bounded by the file-descriptor limit,
which is a far worse failure (libzmq spins on EMFILE in accept). The one place a ZeroMQ
server can refuse a connection is the ZAP handshake (RFC 27): libzmq asks a handler bound
at ``inproc://zeromq.zap.01`` before the connection becomes a peer, and a refusal closes
it. ZAP tells the handler the peer's IP address but not when a connection ends; the
socket monitor tells both ends of every connection (``ACCEPTED`` / ``DISCONNECTED``, with
the file descriptor; ``HANDSHAKE_SUCCEEDED`` carries none), so the guard keeps
``fd -> host`` for every live TCP connection and counts them.

- A TCP host past ``per_host`` live connections, or any peer past ``total``, is refused
  (ZAP status 400). ipc peers have no host and only count towards ``total``: they are
  local processes that the socket file's permissions already admit.
- With CURVE on (referee.security), the same handler also makes pyzmq's CURVE decision
  (:class:`zmq.auth.Authenticator`), because a context has one ZAP endpoint.
- The count is of live connections, those still in their handshake included (a ZAP
  request cannot be tied to a descriptor, so "admitted" cannot be told apart from "being
  asked about"). So a host is refused while it holds more than ``per_host`` connections
  at all: opening 1,000 at once gets it none until its count falls below the cap again.
  That is fail-closed for the host that is over its cap, and no honest host comes near
  it. A connection that never finishes its handshake is closed by libzmq after
  ``ZMQ_HANDSHAKE_IVL`` (30 s).

It runs in one small thread (ZAP only speaks during handshakes, so nothing per message),
and it never touches the referee's state: the referee sees only connections it admitted.
"""

from __future__ import annotations

import asyncio
import os
import socket
import struct
import threading
from collections import Counter

import zmq
from zmq.auth.base import Authenticator

ZAP_ENDPOINT = "inproc://zeromq.zap.01"
# libzmq only consults ZAP for the NULL mechanism when the socket names a domain.
ZAP_DOMAIN = "okgin"
_EVENTS = zmq.EVENT_ACCEPTED | zmq.EVENT_DISCONNECTED


def host_of(address: str) -> str:
    """The host a peer address names, the same for ZAP's form and ``getpeername``'s.

    >>> host_of("::ffff:127.0.0.1"), host_of("10.0.0.7"), host_of("::1"), host_of("")
    ('127.0.0.1', '10.0.0.7', '::1', '')
    """
    return address[7:] if address.startswith("::ffff:") else address


def _peer_host(fd: int) -> str | None:
    """The peer's host for an accepted descriptor ('' for ipc), or None if it is gone."""
    try:
        dup = os.dup(fd)
    except OSError:
        return None
    try:
        with socket.socket(fileno=dup) as s:
            peer = s.getpeername()
    except OSError:
        return None
    return host_of(peer[0]) if isinstance(peer, tuple) else ""


class ConnectionGuard:
    """Answers ZAP for one socket; see the module docstring for why and how.

    ``per_host`` / ``total``: the caps (0 = no cap). ``curve_location``: the CURVE allow
    list for :meth:`zmq.auth.Authenticator.configure_curve` (a directory, or
    ``zmq.auth.CURVE_ALLOW_ANY``), or None when the socket is plain TCP.
    """

    def __init__(self, ctx: zmq.Context, sock: zmq.Socket, *, per_host: int, total: int,
                 curve_location: str | None = None) -> None:
        self.per_host = per_host
        self.total = total
        self.refused: Counter[str] = Counter()  # host -> handshakes refused (operators, tests)
        self._by_fd: dict[int, str] = {}  # live connections (accepted, not yet disconnected)
        self._hosts: Counter[str] = Counter()  # the same, per host
        self._lock = threading.Lock()  # counts are read by other threads (snapshot())
        self._auth = Authenticator(ctx, log=None)
        self._auth.start()  # binds ZAP_ENDPOINT: one per context, so it fails loudly if taken
        if curve_location is not None:
            self._auth.configure_curve(domain="*", location=curve_location)
        else:
            sock.setsockopt_string(zmq.ZAP_DOMAIN, ZAP_DOMAIN)
        self._monitor = sock.get_monitor_socket(_EVENTS)
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
        zap = self._auth.zap_socket
        for s in (self._thread_pipe, zap, self._monitor):
            poller.register(s, zmq.POLLIN)
        try:
            while True:
                ready = dict(poller.poll())
                if self._monitor in ready:
                    self._read_events()
                if zap in ready:
                    self._read_events()  # this handshake's ACCEPTED was queued before its ZAP request
                    self._answer(zap.recv_multipart(), loop)
                if self._thread_pipe in ready:
                    return
        finally:
            loop.close()
            self._thread_pipe.close(0)

    def _read_events(self) -> None:
        while True:
            try:
                frames = self._monitor.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                return
            if len(frames) < 1 or len(frames[0]) < 6:
                continue
            event, fd = struct.unpack("=HI", frames[0][:6])
            host = _peer_host(fd) if event == zmq.EVENT_ACCEPTED else None
            with self._lock:
                self._forget(fd)  # its end, or a reused descriptor's old connection
                if host is not None:
                    self._by_fd[fd] = host
                    self._hosts[host] += 1

    def _forget(self, fd: int) -> None:
        host = self._by_fd.pop(fd, None)
        if host is not None:
            self._hosts[host] -= 1
            if self._hosts[host] <= 0:
                del self._hosts[host]

    def _answer(self, msg: list[bytes], loop: asyncio.AbstractEventLoop) -> None:
        if len(msg) < 6:  # pyzmq answers (and logs) a malformed request itself
            loop.run_until_complete(self._auth.handle_zap_message(msg))
            return
        host = host_of(msg[3].decode("utf-8", "replace"))
        reason = self.refusal(host)
        if reason is None:
            loop.run_until_complete(self._auth.handle_zap_message(msg))
            return
        self.refused[host] += 1
        # RFC 27 reply: version, request id, status code, status text, user id, metadata.
        self._auth.zap_socket.send_multipart([b"1.0", msg[1], b"400", reason.encode(), b"", b""])

    def refusal(self, host: str) -> str | None:
        """Why a new connection from ``host`` is refused now, or None (it is admitted)."""
        with self._lock:  # the counts hold the connection being asked about
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
        self._auth.stop()
