"""Just enough ZMTP to see, and change, the messages crossing a TCP connection.

Why the kit reads ZMTP itself: the bot under test connects to the kit's proxy, not to
the referee, so that the kit can record every message both ways (to name the first
offending one), cut the connection silently (to test reconnection) and change one of
the bot's moves into an illegal one (to test error recovery), without any test hook in
the referee and for any client library.

Two framings occur: ZMTP 3.x (libzmq, pyzmq, zeromq.js, the Rust crate) and ZMTP 2.0,
which an old JeroMQ (Debian's 0.3.6) speaks and libzmq downgrades to. Both start with the
same 10-byte signature and a version byte; the connection then uses the lower version.
Frames look alike in both: a flags byte (MORE 0x01, LONG 0x02, COMMAND 0x04 in 3.x), a
size of 1 byte or, when LONG, 8 bytes big-endian, then the body. In 2.0 the first frame
each way is the peer's identity, not a message.

A :class:`Direction` is fed the bytes of one direction and returns what to forward now:
greeting bytes unchanged, and each message frame as a :class:`Frame` the proxy may
record, replace or drop. The signature and version byte are forwarded at once (each
peer waits for the other's before saying more); the rest of the greeting waits until
both versions are known, because its shape depends on the lower one.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

SIGNATURE_LEN = 10
V3_GREETING_REST = 53  # minor (1) + mechanism (20) + as-server (1) + filler (31)

MORE, LONG, COMMAND = 0x01, 0x02, 0x04


class ZmtpError(ValueError):
    """The bytes are not ZMTP: the proxy then forwards them blindly and says so."""


@dataclass
class Frame:
    """One message frame. ``more`` is set on every part but the last of a multipart."""

    body: bytes
    more: bool = False


def encode_frame(body: bytes, more: bool = False) -> bytes:
    """The wire form of one message frame (identical in ZMTP 2.0 and 3.x)."""
    flags = MORE if more else 0
    if len(body) <= 255:
        return bytes((flags, len(body))) + body
    return bytes((flags | LONG,)) + struct.pack(">Q", len(body)) + body


@dataclass
class Direction:
    """The parser of one direction of a connection; ``peer`` is the other direction."""

    name: str
    buf: bytearray = field(default_factory=bytearray)
    major: int | None = None
    peer: Direction | None = None
    state: str = "signature"  # signature -> version -> wait_peer -> greeting -> frames
    version: int | None = None
    identity_pending: bool = False  # ZMTP 2.0: the next frame is the identity

    def feed(self, data: bytes) -> list[bytes | Frame]:
        """Take bytes read from the socket; return raw bytes and frames to forward, in order."""
        self.buf += data
        return self.drain()

    def drain(self) -> list[bytes | Frame]:
        out: list[bytes | Frame] = []
        while True:
            if self.state == "signature":
                if len(self.buf) < SIGNATURE_LEN:
                    return out
                sig = bytes(self.buf[:SIGNATURE_LEN])
                if sig[0] != 0xFF or sig[9] & 0x01 != 0x01:
                    raise ZmtpError(f"{self.name}: not a ZMTP signature: {sig.hex()}")
                out.append(self._take(SIGNATURE_LEN))
                self.state = "version"
            elif self.state == "version":
                if not self.buf:
                    return out
                self.major = self.buf[0]
                out.append(self._take(1))
                self.state = "wait_peer"
            elif self.state == "wait_peer":
                if self.peer is None or self.peer.major is None:
                    return out
                assert self.major is not None
                self.version = min(self.major, self.peer.major)
                if self.version >= 3:
                    self.state = "greeting"
                elif self.version >= 1:
                    # ZMTP 2.0: socket type byte, then the identity frame, then messages.
                    if not self.buf:
                        return out
                    out.append(self._take(1))
                    self.identity_pending = True
                    self.state = "frames"
                else:
                    raise ZmtpError(f"{self.name}: ZMTP version {self.version} is not supported")
            elif self.state == "greeting":
                if len(self.buf) < V3_GREETING_REST:
                    return out
                out.append(self._take(V3_GREETING_REST))
                self.state = "frames"
            else:
                item = self._frame()
                if item is None:
                    return out
                out.append(item)

    def _take(self, n: int) -> bytes:
        chunk = bytes(self.buf[:n])
        del self.buf[:n]
        return chunk

    def _frame(self) -> bytes | Frame | None:
        if len(self.buf) < 2:
            return None
        flags = self.buf[0]
        if flags & LONG:
            if len(self.buf) < 9:
                return None
            (size,) = struct.unpack(">Q", self.buf[1:9])
            head = 9
        else:
            size = self.buf[1]
            head = 2
        if len(self.buf) < head + size:
            return None
        if self.version is not None and self.version >= 3 and flags & COMMAND:
            return self._take(head + size)  # READY, PING, ...: not a message
        if self.identity_pending:
            self.identity_pending = False
            return self._take(head + size)
        self._take(head)
        return Frame(self._take(size), more=bool(flags & MORE))


def pair(a_name: str, b_name: str) -> tuple[Direction, Direction]:
    """The two directions of one connection, each knowing the other."""
    a, b = Direction(a_name), Direction(b_name)
    a.peer, b.peer = b, a
    return a, b
