"""Per-connection rate limiting (protocol.md §13): a flooding client cannot starve the others.

Why a token bucket per ZeroMQ connection, checked before a frame is even decoded: a
flood costs the referee mostly the decoding, checking and answering of each frame, so
the cheapest place to refuse it is the first one. Each connection has two buckets: one
of messages (``rate`` per second on average, ``burst`` at once) and one of bytes
(``bytes_rate`` and ``bytes_burst``). A frame is admitted only if both hold enough for
it; what exceeds either is dropped unread. The client is told with one ``rate_limited``
error at most once a second (saying how many were dropped), never one per dropped frame:
answering every frame of a flood would itself be the flood.

Why bytes as well as messages: counting messages treats a 50-byte ``act`` and a frame of
the largest size alike, yet the second can cost ten times as much to decode
(okgin.protocol.codec bounds that ratio, bench/decode_cost.py measures it), and at the
message rate an honest bot needs, frames of the largest size kept a core busy. The byte
budget sits far above what honest traffic sends (ordinary messages are 20-120 bytes:
the message bucket meets them first), so it only ever binds on big frames, and it
bounds what a connection can make the referee spend decoding per second. A frame
larger than ``bytes_burst`` is charged a full bucket, never refused for good.

An ``act`` that answers the sender's pending prompt is refunded once the referee has
checked it (:meth:`RateLimiter.refund`, with the frame's size): answers come at the
referee's own pace, so a bot playing flat out, or many tables on one connection, is
never throttled. What remains counted is what a client sends unasked (heartbeats,
requests, stale or stray moves); the defaults (``okgin referee --rate-limit``,
``RefereeConfig.rate_limit_bytes_per_s``) sit far above what any client needs.

Per connection, not per session: a frame is limited before the referee knows (or
trusts) who sent it. A flooder may open many connections; CURVE's allow-list
(:mod:`referee.security`) is the answer to that on a public network.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from okgin.protocol import ProtocolError, encode

if TYPE_CHECKING:
    from .sending import Connections

_OFF = float("inf")


class RateLimiter:
    """Token buckets of messages and bytes keyed by routing id. See the module docstring.

    A rate of 0 turns that bucket off (the other still limits); both off is an error."""

    __slots__ = ("_sweep_at", "buckets", "burst", "bytes_burst", "bytes_rate", "dropped", "notices", "rate", "wire")

    def __init__(self, wire: Connections, rate: float, burst: int, bytes_rate: float = 0, bytes_burst: int = 0) -> None:
        if rate < 0 or bytes_rate < 0 or not (rate or bytes_rate):
            raise ValueError("a rate limit needs rate > 0 or bytes_rate > 0 (and neither negative)")
        if (rate and burst < 1) or (bytes_rate and bytes_burst < 1):
            raise ValueError("a rate limit needs burst >= 1 (and bytes_burst >= 1) for each rate it sets")
        self.wire = wire  # a clock and a raw send (referee.sending.Sender)
        self.rate = float(rate)
        self.burst = float(burst) if rate else _OFF
        self.bytes_rate = float(bytes_rate)
        self.bytes_burst = float(bytes_burst) if bytes_rate else _OFF
        # routing id -> [messages, time of last update, dropped since last notice, time of last notice, bytes]
        self.buckets: dict[bytes, list[float]] = {}
        self.dropped = 0
        self.notices = 0
        self._sweep_at = 4096

    def admit(self, rid: bytes, nbytes: int = 0) -> bool:
        """Charge one frame of ``nbytes`` bytes to ``rid``; False if it must be dropped unread.

        ``nbytes`` is the size of the frame as received (``len(frames[-1])``); 0 charges
        the message bucket only."""
        now = self.wire.now()
        need = nbytes if nbytes < self.bytes_burst else self.bytes_burst
        b = self.buckets.get(rid)
        if b is None:
            if len(self.buckets) >= self._sweep_at:
                self._sweep(now)
            self.buckets[rid] = [self.burst - 1.0, now, 0.0, -1e9, self.bytes_burst - need]
            return True
        dt = now - b[1]
        b[1] = now
        tokens = b[0] + dt * self.rate
        if tokens > self.burst:
            tokens = self.burst
        nb = b[4] + dt * self.bytes_rate
        if nb > self.bytes_burst:
            nb = self.bytes_burst
        if tokens >= 1.0 and nb >= need:
            b[0] = tokens - 1.0
            b[4] = nb - need
            return True
        b[0] = tokens
        b[4] = nb
        b[2] += 1
        self.dropped += 1
        if now - b[3] >= 1.0:
            dropped = int(b[2])
            b[2] = 0.0
            b[3] = now
            self.notices += 1
            err = ProtocolError(
                "rate_limited", f"this connection sent more than {self._budget()}: {dropped} message(s) dropped unread; slow down"
            )
            self.wire.raw_send(rid, encode(err.to_wire()))
        return False

    def refund(self, rid: bytes, nbytes: int = 0) -> None:
        """Give back what :meth:`admit` charged for a message that answered the sender's
        pending prompt: one message and its ``nbytes`` (pass the same size admit got).

        Why: those answers come at the referee's own pace (one per prompt it sent), so
        they cannot flood it; counting them would throttle a fast bot, or one playing
        many tables on one connection, and a dropped answer stalls its game. Only what a
        client sends unasked is limited. The caller decides what counts as an answer
        (e.g. only the first per prompt, legal or not: later illegal retries then count)."""
        b = self.buckets.get(rid)
        if b is not None:
            b[0] = min(self.burst, b[0] + 1.0)
            b[4] = min(self.bytes_burst, b[4] + min(nbytes, self.bytes_burst))

    def charge(self, rid: bytes, nbytes: int) -> None:
        """Charge ``nbytes`` more to ``rid``'s byte budget for a request whose *answer* is
        big (a page of ``list_tables``): the answer's size, not the request's, is what it
        costs the referee and its send queues. The budget may go below zero: the
        connection's next frames then wait for it to refill."""
        b = self.buckets.get(rid)
        if b is not None and self.bytes_rate:
            b[4] = max(-self.bytes_burst, b[4] - nbytes)

    def _budget(self) -> str:
        parts = []
        if self.rate:
            parts.append(f"{self.rate:g} messages/s (bursts of {self.burst:g})")
        if self.bytes_rate:
            parts.append(f"{self.bytes_rate:g} bytes/s (bursts of {self.bytes_burst:g})")
        return " or ".join(parts)

    def _sweep(self, now: float) -> None:
        """Forget connections whose buckets have refilled (idle or gone)."""
        full = 1.0 + max(
            self.burst / self.rate if self.rate else 0.0, self.bytes_burst / self.bytes_rate if self.bytes_rate else 0.0
        )
        for rid, b in list(self.buckets.items()):
            if now - b[1] > full and not b[2]:
                del self.buckets[rid]
        self._sweep_at = max(4096, 2 * len(self.buckets))
