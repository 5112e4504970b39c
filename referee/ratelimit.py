"""Per-connection rate limiting (protocol.md §13): a flooding client cannot starve the others.

Why a token bucket per ZeroMQ connection, checked before a frame is even decoded: a
flood costs the referee mostly the decoding, checking and answering of each frame, so
the cheapest place to refuse it is the first one. Each connection may send ``rate``
messages per second on average and ``burst`` at once; what exceeds that is dropped
unread. The client is told with one ``rate_limited`` error at most once a second
(saying how many were dropped), never one per dropped frame: answering every frame of a
flood would itself be the flood.

An ``act`` that answers the sender's pending prompt is refunded once the referee has
checked it (:meth:`RateLimiter.refund`): answers come at the referee's own pace, so a bot
playing flat out, or many tables on one connection, is never throttled. What remains
counted is what a client sends unasked (heartbeats, requests, stale or stray moves); the
defaults (``okgin referee --rate-limit``) sit far above what any client needs.

Per connection, not per session: a frame is limited before the referee knows (or
trusts) who sent it. A flooder may open many connections; CURVE's allow-list
(:mod:`referee.security`) is the answer to that on a public network.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from okgin.protocol import ProtocolError, encode

if TYPE_CHECKING:
    from .server import Referee


class RateLimiter:
    """Token buckets keyed by routing id. See the module docstring."""

    __slots__ = ("_sweep_at", "buckets", "burst", "dropped", "hub", "notices", "rate")

    def __init__(self, hub: Referee, rate: float, burst: int) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError("a rate limit needs rate > 0 and burst >= 1")
        self.hub = hub
        self.rate = float(rate)
        self.burst = float(burst)
        # routing id -> [tokens, time of last update, dropped since last notice, time of last notice]
        self.buckets: dict[bytes, list[float]] = {}
        self.dropped = 0
        self.notices = 0
        self._sweep_at = 4096

    def admit(self, rid: bytes) -> bool:
        """Count one frame from ``rid``; False if it must be dropped unread."""
        now = self.hub.now()
        b = self.buckets.get(rid)
        if b is None:
            if len(self.buckets) >= self._sweep_at:
                self._sweep(now)
            self.buckets[rid] = [self.burst - 1.0, now, 0.0, -1e9]
            return True
        tokens = b[0] + (now - b[1]) * self.rate
        if tokens > self.burst:
            tokens = self.burst
        b[1] = now
        if tokens >= 1.0:
            b[0] = tokens - 1.0
            return True
        b[0] = tokens
        b[2] += 1
        self.dropped += 1
        if now - b[3] >= 1.0:
            dropped = int(b[2])
            b[2] = 0.0
            b[3] = now
            self.notices += 1
            err = ProtocolError(
                "rate_limited",
                f"this connection sent more than {self.rate:g} messages/s (bursts of {self.burst:g}): "
                f"{dropped} message(s) dropped unread; slow down",
            )
            self.hub._raw_send(rid, encode(err.to_wire()))
        return False

    def refund(self, rid: bytes) -> None:
        """Give back the token of a message that answered the sender's pending prompt.

        Why: those answers come at the referee's own pace (one per prompt it sent), so
        they cannot flood it; counting them would throttle a fast bot, or one playing
        many tables on one connection, and a dropped answer stalls its game. Only what a
        client sends unasked is limited."""
        b = self.buckets.get(rid)
        if b is not None:
            b[0] = min(self.burst, b[0] + 1.0)

    def _sweep(self, now: float) -> None:
        """Forget connections whose bucket has refilled (idle or gone)."""
        full = self.burst / self.rate + 1.0
        for rid, b in list(self.buckets.items()):
            if now - b[1] > full and not b[2]:
                del self.buckets[rid]
        self._sweep_at = max(4096, 2 * len(self.buckets))
