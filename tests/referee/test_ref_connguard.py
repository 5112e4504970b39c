"""Connection caps at the handshake (referee.connguard; issue 14's idle-sessions attack).

On 1.4 without the guard, one host could hold as many idle connections as the file
descriptor limit allowed, each ~28 KB of libzmq's memory that the referee could neither
refuse nor close. Here a referee capped at a few connections per host admits that many,
refuses the next one at the ZAP handshake (the client's own socket monitor reports
``HANDSHAKE_FAILED_AUTH``, so the test waits for an event, not for silence), and admits a
new connection again once one of the first has gone.
"""

from __future__ import annotations

import struct

import zmq
from bounded import limit
from refharness import Client, RefereeThread

from okgin.protocol import decode, encode

CAP = 3


def _handshake_outcome(ctx: zmq.Context, endpoint: str) -> tuple[zmq.Socket, int]:
    """Connect a DEALER; return it and the first handshake event its monitor reports."""
    sock = limit(ctx.socket(zmq.DEALER))
    mon = sock.get_monitor_socket(zmq.EVENT_HANDSHAKE_SUCCEEDED | zmq.EVENT_HANDSHAKE_FAILED_AUTH
                                  | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL)
    try:
        sock.connect(endpoint)
        assert mon.poll(20_000), "no handshake outcome within 20 s"
        event = struct.unpack("=HI", mon.recv_multipart()[0][:6])[0]
    finally:
        sock.disable_monitor()
        mon.close(0)
    return sock, event


def test_a_host_past_its_cap_is_refused_at_the_handshake(make_referee: object, make_client: object) -> None:
    referee: RefereeThread = make_referee(max_connections_per_host=CAP)  # type: ignore[operator]
    admitted: list[Client] = [make_client(referee.endpoint) for _ in range(CAP)]  # type: ignore[operator]
    for i, c in enumerate(admitted):
        assert c.hello(f"p{i}")["type"] == "welcome"
    ctx = zmq.Context.instance()
    extra, event = _handshake_outcome(ctx, referee.endpoint)
    try:
        assert event == zmq.EVENT_HANDSHAKE_FAILED_AUTH, event
        guard = referee.call(lambda: referee.ref.transport.guard)
        assert guard is not None and sum(guard.refused.values()) >= 1
        assert "127.0.0.1" in next(iter(guard.refused))
    finally:
        extra.close(0)
    # a slot comes back when a connection goes: close one, then a newcomer is welcomed
    admitted.pop().close()
    guard = referee.call(lambda: referee.ref.transport.guard)
    for _ in range(200):
        newcomer, event = _handshake_outcome(ctx, referee.endpoint)
        if event == zmq.EVENT_HANDSHAKE_SUCCEEDED:
            break
        newcomer.close(0)  # the closed connection's end was not seen yet: ask again
    else:
        raise AssertionError(f"no slot came back: {guard.snapshot()}")
    # the admitted newcomer is served (kept open: a fresh socket could meet the cap again
    # before the guard has seen a closed one go)
    try:
        newcomer.send(encode({"type": "hello", "protocol": 1, "role": "player", "name": "again", "id": 1}))
        assert newcomer.poll(20_000), "no welcome within 20 s"
        assert decode(newcomer.recv())["type"] == "welcome"
    finally:
        newcomer.close(0)
