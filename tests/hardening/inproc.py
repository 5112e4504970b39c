"""The referee in this process, its frames captured where they would enter the socket.

Why: the information property (no message to anyone carries a card it may not see)
must be checked over 1,000 games in CI. Through loopback TCP a game costs the client
side decoding and schema work on every frame, and the machine has two shared cores. Here
the real :class:`referee.server.Referee` runs unchanged — bound to a real ROUTER on
127.0.0.1, every request decoded, checked and handled by its own code, every reply built
and packed by its own code — and only its last step, ``Sender.put`` (two ``zmq_send``
calls), is replaced by a capture of the exact ``(routing id, bytes)`` it would send.
Requests enter through ``_handle``, the function the socket reader calls. Nothing of the
game, the views, the filtering or the encoding is bypassed.

Because frames are captured synchronously, each can be checked against the referee's
*own* game state at the moment it was sent: the oracle needs no full-feed watcher.

Tests name connections with readable labels (``b"admin"``); the referee refuses routing
ids libzmq would not have generated (``bad_identity``), so each label is mapped to one of
that shape (a zero byte, then a counter) on the way in and back on the way out. The
referee has its own random admin key, added to every admin ``hello`` that lacks one.
"""

from __future__ import annotations

import asyncio
import secrets
import struct
from collections.abc import Callable
from typing import Any

import msgpack

from referee.config import RefereeConfig
from referee.server import Referee


class InProcReferee:
    """A started :class:`Referee` whose outgoing frames go to :attr:`on_send`."""

    def __init__(self, **config: Any) -> None:
        config.setdefault("bind", "tcp://127.0.0.1:0")
        config.setdefault("journal_dir", None)
        config.setdefault("admin_key", secrets.token_hex(16))
        self.admin_key: str | None = config["admin_key"]
        self._rids: dict[bytes, bytes] = {}  # label -> routing id as libzmq makes them
        self._labels: dict[bytes, bytes] = {}  # and back
        self.loop = asyncio.new_event_loop()
        self.ref = Referee(RefereeConfig(**config))
        self.loop.run_until_complete(self.ref.start())
        self.on_send: Callable[[bytes, bytes], None] = lambda rid, data: None
        self.sent = 0

        def capture(rid: bytes, data: bytes) -> bool:
            self.sent += 1
            self.on_send(self._labels.get(rid, rid), data)
            return True

        # every frame leaves through the sender's put (referee.sending): a session's sends
        # (send_bytes, at once here, since _handle is called outside a drain) and raw_send
        self.ref.transport.sender.put = capture  # type: ignore[method-assign]

    def send(self, rid: bytes, msg: dict[str, Any]) -> None:
        """Deliver one request as the socket reader would (``rid``: the connection's label)."""
        if msg.get("type") == "hello" and msg.get("role") == "admin" and "admin_key" not in msg and self.admin_key:
            msg = {**msg, "admin_key": self.admin_key}
        real = self._rids.get(rid)
        if real is None:
            real = self._rids[rid] = b"\0" + struct.pack(">I", len(self._rids))
            self._labels[real] = rid
        self.ref._handle([real, msgpack.packb(msg, use_bin_type=True)])

    def close(self) -> None:
        self.loop.run_until_complete(self.ref.stop("test over"))
        self.loop.close()
