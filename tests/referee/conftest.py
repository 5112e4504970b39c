"""Fixtures for the referee tests: a real referee per test (fast to start) on 127.0.0.1:0."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from refharness import Client, RefereeThread


@pytest.fixture
def make_referee() -> Iterator[Callable[..., RefereeThread]]:
    started: list[RefereeThread] = []

    def make(**config: Any) -> RefereeThread:
        r = RefereeThread(**config)
        started.append(r)
        return r

    yield make
    for r in started:
        r.stop()


@pytest.fixture
def referee(make_referee: Callable[..., RefereeThread]) -> RefereeThread:
    return make_referee()


@pytest.fixture
def make_client() -> Iterator[Callable[..., Client]]:
    made: list[Client] = []

    def make(endpoint: str, **kw: Any) -> Client:
        c = Client(endpoint, **kw)
        made.append(c)
        return c

    yield make
    for c in made:
        c.close()
