"""Participants' nonces through the referee (protocol 1.5, protocol.md 5.27).

A seat's nonce must hash to the commitment of the hello that seated it, be sent only
when asked, be kept once (no second guess), and be readable by admins only.
"""

from __future__ import annotations

from refharness import error_of

from okgin.schedule import nonce_commitment

NONCE = bytes(range(32))
OTHER = bytes(range(1, 33))


def _setup(make_referee, make_client, commit: str | None):
    r = make_referee()
    admin = make_client(r.endpoint, validate="all")
    admin.hello("org", role="admin")
    made = admin.request({"type": "create_table", "table": "pre", "reserved": True}, "table_created")
    seat = make_client(r.endpoint, validate="all")
    extra = {} if commit is None else {"entropy_commit": commit}
    seat.hello("p", token=made["seat_tokens"][0], **extra)
    return admin, seat


def test_a_reveal_must_match_come_when_asked_and_stay(make_referee, make_client):
    admin, seat = _setup(make_referee, make_client, nonce_commitment(NONCE))
    state = admin.request({"type": "entropy", "table": "pre"}, "entropy_state")
    assert state["commits"] == [nonce_commitment(NONCE), None] and state["nonces"] == [None, None]
    # not asked yet: refused, and nothing is kept
    error_of(seat.request({"type": "entropy_reveal", "table": "pre", "nonce": NONCE.hex()}, "error", check=False), "forbidden")
    # a seat cannot read the commitments or ask the others
    error_of(seat.request({"type": "entropy", "table": "pre"}, "error", check=False), "forbidden")
    admin.request({"type": "entropy", "table": "pre", "commitments_hash": "cd" * 32}, "entropy_state")
    req = seat.wait_for(lambda m: m["type"] == "entropy_request")
    assert req["commitments_hash"] == "cd" * 32
    error_of(seat.request({"type": "entropy_reveal", "table": "pre", "nonce": OTHER.hex()}, "error", check=False), "bad_message")
    seat.request({"type": "entropy_reveal", "table": "pre", "nonce": NONCE.hex()}, "ok")
    state = admin.request({"type": "entropy", "table": "pre"}, "entropy_state")
    assert state["nonces"] == [NONCE.hex(), None]
    error_of(seat.request({"type": "entropy_reveal", "table": "elsewhere", "nonce": NONCE.hex()}, "error", check=False),
             "no_such_table")


def test_a_seat_without_a_commitment_is_never_asked(make_referee, make_client):
    admin, seat = _setup(make_referee, make_client, None)
    state = admin.request({"type": "entropy", "table": "pre", "commitments_hash": "cd" * 32}, "entropy_state")
    assert state["commits"] == [None, None]
    seat.request({"type": "ping"}, "pong")  # whatever came before the pong: no entropy_request
    assert not any(m["type"] == "entropy_request" for m in seat.received)


def test_a_malformed_commitment_is_refused_at_hello(make_referee, make_client):
    r = make_referee()
    c = make_client(r.endpoint)
    c.send({"type": "hello", "id": 1, "protocol": 1, "role": "player", "name": "x", "entropy_commit": "ABC"}, False)
    error_of(c.recv(), "bad_message")
