"""A table's full-visibility feed (protocol.md §11, 1.4): held per hand, then released.

Why held, not merely delayed: a hand's stock keeps its order, so a seat reading a full
feed delayed by any number of milliseconds knew its next draws (issue 14). A ``hand_end``
or ``game_end`` closes the hand: everything held goes out ``delay_ms`` later, in order,
with its ``n``. Before that, nothing of the running hand reaches a full watcher (not
even the public copy: one ``n``, one content). The bound only matters for rules beyond
the engine's (FULL_HELD_MAX); a watcher that misses messages sees the gap in ``n`` and
syncs.

:class:`FullFeed` keeps the messages and says when a release is due; it sets no timer
and sends nothing (the table does, :class:`referee.table.table.Table`). It also keeps
the broadcast token that admits a non-admin to this feed, as its SHA-256 only.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections import deque
from typing import Any

from okgin.protocol import encode

__all__ = ["FULL_HELD_MAX", "FullFeed", "sha256_hex"]

#: The full feed holds at most this many messages of the running hand (FullFeed.hold);
#: the rules bound a hand to about 2,100 (max_pile_draws <= 1000 draws from the pile, each
#: with its discard, plus the stock), the default cap of 100 to about 300.
FULL_HELD_MAX = 4096


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class FullFeed:
    """The running hand's full-feed messages, the ended hands waiting out the delay, and
    the last point released (for a full watcher's snapshot)."""

    __slots__ = ("broadcast_hash", "broadcast_token", "delay_ms", "held", "held_view", "out", "released")

    def __init__(self, delay_ms: int) -> None:
        self.delay_ms = delay_ms
        #: the running hand's messages, packed, and the (n, view) of the last one with a view
        self.held: deque[bytes] = deque(maxlen=FULL_HELD_MAX)
        self.held_view: tuple[int, dict[str, Any]] | None = None
        #: hands that ended, waiting out delay_ms: (game, messages, (n, view))
        self.out: deque[tuple[int, list[bytes], tuple[int, dict[str, Any]] | None]] = deque()
        #: the last point released to the full watchers: (game, n, view)
        self.released: tuple[int, int, dict[str, Any]] | None = None
        #: The secret that admits a broadcaster to the full feed: only its SHA-256 is kept
        #: for checking (and by referee.recovery); ``broadcast_token`` itself is known only
        #: from creation until the ``table_created`` reply (None after a restart).
        self.broadcast_token: str | None = secrets.token_hex(16)
        self.broadcast_hash: str | None = sha256_hex(self.broadcast_token)

    def restore_broadcast(self, hash_: str) -> None:
        """Crash recovery: the broadcast token stays valid across a restart; only its hash is known."""
        self.broadcast_hash, self.broadcast_token = hash_, None

    def broadcast_ok(self, token: Any) -> bool:
        """Whether ``token`` is the broadcast token (compared in constant time)."""
        if self.broadcast_hash is None or not isinstance(token, str):
            return False
        return hmac.compare_digest(sha256_hex(token), self.broadcast_hash)

    def new_game(self) -> None:
        """A game starts: nothing of a hand is held (a hand that ended is still waiting out)."""
        self.held.clear()
        self.held_view = None

    def hold(self, msg: dict[str, Any], game: int) -> bool:
        """Keep a message of game ``game`` until its hand has ended. True: the hand ended,
        a release is due ``delay_ms`` from now (:meth:`release`)."""
        view = msg.get("view")
        self.held.append(encode(msg))
        if view is not None:
            self.held_view = (msg["n"], view)
        if msg["type"] not in ("hand_end", "game_end"):
            return False
        self.out.append((game, list(self.held), self.held_view))
        self.held.clear()
        self.held_view = None
        return True

    def release(self) -> list[bytes]:
        """A hand's delay is over: the oldest waiting hand's messages, to send to the full
        watchers. One hand per call, so hands go out in order even when two timers are due
        at the same instant (the loop does not promise their order)."""
        if not self.out:
            return []
        game, batch, point = self.out.popleft()
        if point is not None:
            self.released = (game, *point)
        return batch

    def snapshot_point(self, game: int) -> tuple[int, dict[str, Any] | None]:
        """The (n, view) of a full watcher's snapshot: as of the last message released,
        never a look into a hand still running or still waiting out its delay. Nothing of
        game ``game`` released yet: no view, n 0 (its game_start follows)."""
        rel = self.released
        if rel is not None and rel[0] == game:
            return rel[1], rel[2]
        return 0, None
