"""A count of events in a sliding time window: the front's per-account and per-front limits.

Why a sliding window and not the referee's token buckets (:mod:`referee.ratelimit`): those
bound a connection's frames before they are decoded; these bound what a signed-in account
(seeks, challenges, answers, lobby requests) or anyone (wrong shard-join keys) may do in a
stated span, so the refusal can say exactly "at most N per S seconds". Each keeps at most
``limit`` times, so its memory is bounded whatever the caller does.
"""

from __future__ import annotations

from collections import deque

__all__ = ["SlidingWindow"]


class SlidingWindow:
    """At most ``limit`` events in any ``window_ms`` (times in ms of the caller's clock)."""

    __slots__ = ("limit", "times", "window_ms")

    def __init__(self, limit: int, window_ms: int) -> None:
        self.limit = limit
        self.window_ms = window_ms
        self.times: deque[int] = deque()

    def full(self, now: int) -> bool:
        """Whether another event now would exceed the limit (old events are forgotten first)."""
        q = self.times
        while q and now - q[0] >= self.window_ms:
            q.popleft()
        return len(q) >= self.limit

    def add(self, now: int) -> None:
        """Count an event at ``now`` (the caller asked :meth:`full` first)."""
        self.times.append(now)
