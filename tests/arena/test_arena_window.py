"""arena.window.SlidingWindow: the front's per-account and per-front limits count right."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from arena.window import SlidingWindow


def test_the_limit_holds_until_the_oldest_event_leaves_the_window() -> None:
    w = SlidingWindow(3, 1000)
    for t in (0, 10, 20):
        assert not w.full(t)
        w.add(t)
    assert w.full(999)  # 0, 10 and 20 are all within 1000 ms
    assert not w.full(1000)  # the event at 0 has left
    w.add(1000)
    assert w.full(1009) and not w.full(1010)


@given(st.lists(st.integers(0, 50), max_size=200), st.integers(1, 6), st.integers(1, 300))
def test_never_more_than_the_limit_in_any_window_and_memory_bounded(gaps: list[int], limit: int, span: int) -> None:
    w = SlidingWindow(limit, span)
    now, taken = 0, []
    for g in gaps:
        now += g
        if not w.full(now):
            w.add(now)
            taken.append(now)
        assert len(w.times) <= limit
    for i, t in enumerate(taken):
        assert sum(1 for u in taken[i:] if u - t < span) <= limit
