"""Blocking calls for the tests, every one bounded (issue 14, item 9).

ZeroMQ sockets (:func:`dealer`, :func:`limit`) and a child process's output lines
(:func:`readline`): a test that waits on something that never comes fails with a
sentence after a bound, never hangs until pytest's timeout.

A blocking ``send`` on a DEALER waits for as long as the socket has no peer to queue
to: a CURVE handshake the referee refused (``HANDSHAKE_FAILED_AUTH``), or a plain client
whose mechanism mismatch it noticed itself (``HANDSHAKE_FAILED_PROTOCOL``), leaves the
socket with no pipe at all, and a send made after that (a test thread descheduled
between ``connect`` and ``send`` on a loaded machine) never returns. A blocking ``recv``
waits for ever on a referee that went silent. Sockets made here carry ``SNDTIMEO`` and
``RCVTIMEO``, so such a call raises :class:`zmq.Again` after ``timeout_ms`` instead of
hanging the test until pytest's timeout.

``tests/`` is on ``sys.path`` (its ``conftest.py`` has no package), so test modules and
kits import this as ``bounded``. Scripts run as their own processes set the options
inline (they are not started by pytest).
"""

from __future__ import annotations

import queue
import threading
from typing import IO

import zmq

TIMEOUT_MS = 20000  # an upper bound for failures only; never asserted on


def limit(sock: zmq.Socket, timeout_ms: int = TIMEOUT_MS) -> zmq.Socket:
    """``sock`` with ``LINGER`` 0 and ``SNDTIMEO``/``RCVTIMEO`` of ``timeout_ms``."""
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.SNDTIMEO, timeout_ms)
    sock.setsockopt(zmq.RCVTIMEO, timeout_ms)
    return sock


def dealer(endpoint: str | None = None, *, ctx: zmq.Context | None = None, timeout_ms: int = TIMEOUT_MS,
           curve: tuple[bytes, bytes, bytes] | None = None, **options: int) -> zmq.Socket:
    """A bounded DEALER (``options``: more socket options by name, e.g. ``RCVHWM=10``),
    a CURVE client when ``curve`` is ``(server_public, public, secret)``, connected to
    ``endpoint`` if given."""
    s = limit((ctx or zmq.Context.instance()).socket(zmq.DEALER), timeout_ms)
    for name, value in options.items():
        s.setsockopt(getattr(zmq, name), value)
    if curve is not None:
        s.curve_serverkey, s.curve_publickey, s.curve_secretkey = curve
    if endpoint is not None:
        s.connect(endpoint)
    return s


def readline(stream: IO[str], timeout_s: float = 60.0, what: str = "the child process") -> str:
    """The next line of a child's pipe (``''`` at its end), or :class:`TimeoutError`.

    A blocking ``readline`` on a child that never prints (stuck before its endpoint
    line, say) would wait for ever; the read runs in a daemon thread instead (it ends
    when the child's pipe closes, at the latest when the test stops the child).
    """
    box: queue.Queue[str | BaseException] = queue.Queue(1)

    def read() -> None:
        try:
            box.put(stream.readline())
        except BaseException as e:  # a closed pipe: reported to the caller
            box.put(e)

    threading.Thread(target=read, daemon=True, name="bounded-readline").start()
    try:
        line = box.get(timeout=timeout_s)
    except queue.Empty:
        raise TimeoutError(f"no line from {what} within {timeout_s} s") from None
    if isinstance(line, BaseException):
        raise line
    return line
