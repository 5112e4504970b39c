"""``seat_status`` (protocol 1.4, §5.26): when a seat's connection goes (``bye`` or
silence) the table's other seats and its spectators are told, with the time the seat is
held; when it resumes within the grace, they are told again. The seat itself is not."""

from __future__ import annotations

from refharness import Client


def _seat_status(c: Client) -> dict:
    return c.wait_for(lambda m: m["type"] == "seat_status", limit=1000)


def test_bye_and_resume_tell_the_others_and_the_spectators(make_referee, make_client):
    r = make_referee(heartbeat_ms=5000)
    admin = make_client(r.endpoint)
    admin.hello("org", role="admin")
    admin.request({"type": "create_table", "table": "t1", "policies": {"disconnect_grace_ms": 38000}}, "table_created")
    ann, bob = make_client(r.endpoint, validate="all"), make_client(r.endpoint, validate="all")
    ann.hello("ann")
    bob.hello("bob")
    ann.request({"type": "join", "table": "t1", "seat": 0}, "seated")
    bob.request({"type": "join", "table": "t1", "seat": 1}, "seated")
    spec = make_client(r.endpoint, validate="all")
    spec.hello("eve", role="spectator")
    spec.request({"type": "watch", "table": "t1"}, "snapshot")

    ann.send({"type": "bye"})
    for c in (bob, spec):
        m = _seat_status(c)
        assert m == {"type": "seat_status", "table": "t1", "seat": 0, "name": "ann", "connected": False, "forfeit_in_ms": 38000}

    back = make_client(r.endpoint, validate="all")
    assert back.hello("ann", token=ann.token)["resumed"] is True
    for c in (bob, spec):
        m = _seat_status(c)
        assert m["seat"] == 0 and m["connected"] is True and m["forfeit_in_ms"] is None
    # The resumed seat is never told about itself: its snapshot, then its prompt or feed.
    assert back.expect("snapshot")["seat"] == 0
    bob.send({"type": "bye"})
    m = _seat_status(back)
    assert m["seat"] == 1 and m["name"] == "bob" and m["connected"] is False


def test_silence_counts_as_a_disconnection(make_referee, make_client):
    # 3 s of silence: ann's is noticed, while bob's beats (one per message received, the
    # referee's own every 100 ms) keep him through a loaded machine's stalls.
    r = make_referee(heartbeat_ms=100, liveness=30)
    admin = make_client(r.endpoint)
    admin.hello("org", role="admin")
    admin.request({"type": "create_table", "table": "t2", "policies": {"disconnect_grace_ms": 60000}}, "table_created")
    ann, bob = make_client(r.endpoint), make_client(r.endpoint, validate="all")
    ann.hello("ann")
    bob.hello("bob")
    ann.request({"type": "join", "table": "t2", "seat": 0}, "seated")
    bob.request({"type": "join", "table": "t2", "seat": 1}, "seated")
    ann.close()  # no bye: the referee notices the silence

    def beat_until_status(m: dict) -> bool:
        bob.send({"type": "heartbeat"})
        return m["type"] == "seat_status"

    m = bob.wait_for(beat_until_status, limit=10000)
    assert m["seat"] == 0 and m["connected"] is False and m["forfeit_in_ms"] == 60000
