"""Connection caps (referee.connguard; issue 14's idle-sessions attack).

On 1.4 without the guard, one host could hold as many idle connections as the file
descriptor limit allowed, each ~28 KB of libzmq's memory that the referee could neither
refuse nor close. Here a referee capped at a few connections per host admits that many;
the next connection is shut down as soon as the guard sees it accepted, and its socket, reconnecting by itself, is admitted and
welcomed once one of the first connections has gone.
"""

from __future__ import annotations

import time

import zmq
from bounded import limit
from refharness import Client, RefereeThread

from okgin.protocol import decode, encode

CAP = 3


def _refused(referee: RefereeThread) -> int:
    guard = referee.call(lambda: referee.ref.transport.guard)
    return sum(guard.refused.values())


def test_a_host_past_its_cap_is_shut_out_until_a_slot_comes_back(make_referee: object, make_client: object) -> None:
    referee: RefereeThread = make_referee(max_connections_per_host=CAP)  # type: ignore[operator]
    admitted: list[Client] = [make_client(referee.endpoint) for _ in range(CAP)]  # type: ignore[operator]
    for i, c in enumerate(admitted):
        assert c.hello(f"p{i}")["type"] == "welcome"
    extra = limit(zmq.Context.instance().socket(zmq.DEALER))
    try:
        extra.connect(referee.endpoint)
        extra.send(encode({"type": "hello", "protocol": 1, "role": "player", "name": "extra", "id": 1}))
        deadline = time.monotonic() + 30  # a bound on a hang, not a timing assertion
        while _refused(referee) == 0:
            assert time.monotonic() < deadline, "the connection past the cap was never refused"
            extra.poll(20)
        guard = referee.call(lambda: referee.ref.transport.guard)
        assert "127.0.0.1" in guard.refused and guard.snapshot().get("127.0.0.1", 0) <= CAP + 1
        # one of the first goes: the extra socket's own reconnections get in. A hello sent
        # on a connection that was then shut down is lost with it, so say it again until
        # it is answered (the first answer on the admitted connection is a welcome).
        admitted.pop().close()
        deadline = time.monotonic() + 30
        while not extra.poll(500):
            assert time.monotonic() < deadline, "the refused socket was not let in after a slot came back"
            extra.send(encode({"type": "hello", "protocol": 1, "role": "player", "name": "extra", "id": 2}))
        assert decode(extra.recv())["type"] == "welcome"
    finally:
        extra.close(0)


def test_no_cap_means_no_guard(make_referee: object) -> None:
    referee: RefereeThread = make_referee(max_connections_per_host=0, max_connections=0)  # type: ignore[operator]
    assert referee.call(lambda: referee.ref.transport.guard) is None
