"""Sends a handler makes leave after it has returned (referee.sending, issue 25 item 1).

A bot's ``act`` is read by the transport, handled by the dispatcher and the table, and
the table's next prompt used to be written to the socket from inside that call chain,
while the transport was still in its read loop. A send that failed then called back into
the referee (the lagging guard cuts a watcher off and changes the table's watchers) in
the middle of the table's own work. Now the sends wait in an outbox and are written when
the handler returns: these tests count what is written (sent or dropped) while a frame is
being handled, through the main socket and through seat doors, with a watcher that does
not read so that drops happen too. (``raw_send``, the dispatcher's errors and notices, is
written at once, after the outbox: it reports whether the frame was queued and calls
nothing back; these games send none.)
"""

from __future__ import annotations

import time
from typing import Any

from bounded import dealer
from refharness import Client, play_until_end


def _count_writes_inside(referee: Any) -> list[int]:
    """Wrap the transport's handler: per frame handled, how many frames were written
    (sent or dropped) before it returned."""
    tr = referee.ref.transport
    stats = tr.stats
    inner = tr.handle
    inside: list[int] = []

    def handle(frames: list[bytes], door: Any) -> None:
        before = stats["sent"] + stats["dropped"]
        inner(frames, door)
        inside.append(stats["sent"] + stats["dropped"] - before)

    referee.call(lambda: setattr(tr, "handle", handle))
    return inside


def test_a_move_is_written_after_its_handler_returns(make_referee, make_client):
    # drops are counted (the lagging guard is on) but never cut the watcher off: its notices and
    # errors (raw_send, written at once) would be writes of their own
    referee = make_referee(hwm=5, watcher_drop_limit=10**9)
    a, b = make_client(referee.endpoint), make_client(referee.endpoint)
    a.hello("a")
    b.hello("b")
    a.request({"type": "join", "table": "t"}, "seated")
    deaf = make_client(referee.endpoint)
    deaf.sock.close(0)  # a receive queue of one message, set before connecting
    deaf.sock = dealer(referee.endpoint, ctx=Client.ctx, RCVHWM=1, RCVBUF=4096)
    deaf.hello("deaf", role="spectator")
    deaf.request({"type": "watch", "table": "t"}, "snapshot")
    inside = _count_writes_inside(referee)
    b.request({"type": "join", "table": "t"}, "seated")  # the game starts: prompts and events
    before = referee.call(lambda: referee.ref.stats["received"])
    for _ in range(2000):  # each answer a snapshot to a reader that does not read: drops
        deaf.send({"type": "sync", "table": "t"})
    ends = play_until_end({0: a, 1: b}, "t")
    assert ends[0]["type"] == ends[1]["type"] == "game_end"
    for _ in range(1000):  # until the referee has handled every sync
        if referee.call(lambda: referee.ref.stats["received"]) >= before + 2000:
            break
        time.sleep(0.02)
    assert referee.call(lambda: referee.ref.stats["dropped"]) > 0  # drops happened, and were counted
    assert len(inside) > 2000 and not any(inside), [n for n in inside if n]  # yet nothing was written mid-handler


def test_a_seat_doors_move_is_written_after_its_handler_returns(referee, make_client):
    admin = make_client(referee.endpoint)
    admin.hello("organiser", role="admin")
    created = admin.request({"type": "create_table", "table": "d", "reserved": True, "doors": True}, "table_created")
    inside = _count_writes_inside(referee)
    clients = {}
    for seat, (tok, door) in enumerate(zip(created["seat_tokens"], created["doors"], strict=True)):
        c = make_client(door)
        c.hello(f"p{seat}", token=tok)
        c.expect("seated")
        clients[seat] = c
    ends = play_until_end(clients, "d")
    assert {m["type"] for m in ends.values()} == {"game_end"}
    assert len(inside) > 10 and not any(inside), inside
