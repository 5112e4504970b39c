"""Issue 14.3: what one frame may cost. The frame limit is measured from the largest legal
message, decoding is bounded by the schema's structure (not the frame's bytes), an
oversize frame is peeked at through a bounded prefix, libzmq drops bigger frames before
Python sees them, and the rate limiter charges bytes as well as messages.

No wall-clock assertion anywhere: bounded work is shown by frames whose tail would make
a full decode fail, and the limiter runs on a fake clock."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import msgpack
import pytest
import zmq
from bounded import limit
from zmq.utils.monitor import recv_monitor_message

from okgin.protocol import MAX_MESSAGE_BYTES, ProtocolError, decode, encode, peek_id, validate
from okgin.protocol.catalogue import (
    MAX_ARRAY_LEN,
    MAX_BIN_BYTES,
    MAX_MAP_LEN,
    MAX_OBJECTS,
    MAX_STR_BYTES,
    largest_legal_messages,
)
from okgin.protocol.codec import PEEK_BYTES, _count_objects
from referee.config import RefereeConfig
from referee.ratelimit import RateLimiter

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "protocol.schema.json").read_text())


def objects(o: Any) -> int:
    if isinstance(o, dict):
        return 1 + sum(objects(k) + objects(v) for k, v in o.items())
    if isinstance(o, list):
        return 1 + sum(objects(x) for x in o)
    return 1


def containers(o: Any) -> list[Any]:
    if isinstance(o, dict):
        return [o, *(c for v in o.values() for c in containers(v))]
    if isinstance(o, list):
        return [o, *(c for v in o for c in containers(v))]
    return []


# ---------------------------------------------------------------- the frame limit


def test_every_largest_legal_message_fits_and_the_limit_is_fitted() -> None:
    """Fails if a legal message outgrows MAX_MESSAGE_BYTES or the structure limits, or if
    the limit is no longer the largest legal message rounded up to a power of two."""
    big = largest_legal_messages()
    sizes = {}
    props = SCHEMA["$defs"]
    for t, m in big.items():
        assert set(m) == set(props[f"msg_{t}"]["properties"]), t  # every field present
        validate(m)
        jsonschema.Draft202012Validator({**SCHEMA, "$ref": f"#/$defs/msg_{t}"}).validate(m)
        frame = encode(m)
        sizes[t] = len(frame)
        assert len(frame) <= MAX_MESSAGE_BYTES, (t, len(frame))
        assert decode(frame) == m  # the structure limits accept it too
        assert objects(m) <= MAX_OBJECTS // 1.5, (t, objects(m))  # headroom kept for newer fields
        for c in containers(m):
            assert len(c) <= (MAX_MAP_LEN if isinstance(c, dict) else MAX_ARRAY_LEN)
    largest = max(sizes.values())
    assert MAX_MESSAGE_BYTES == 1 << (largest - 1).bit_length(), sizes
    assert RefereeConfig().max_message_bytes == RefereeConfig().hard_max_bytes == MAX_MESSAGE_BYTES
    assert b"65536" not in (ROOT / "protocol.schema.json").read_bytes()


# ---------------------------------------------------------------- decode's limits


def refused(frame: bytes, name: str = "bad_frame") -> str:
    with pytest.raises(ProtocolError) as e:
        decode(frame)
    assert e.value.name == name, (e.value.name, e.value.message)
    return e.value.message


def test_each_structure_limit_is_refused_with_a_clear_error() -> None:
    ok = {"type": "ping", "a": [0] * MAX_ARRAY_LEN, "s": "x" * MAX_STR_BYTES, "b": b"x" * MAX_BIN_BYTES}
    assert decode(encode(ok)) == ok
    assert "max_array_len" in refused(encode({"type": "ping", "a": [0] * (MAX_ARRAY_LEN + 1)}))
    assert "max_map_len" in refused(encode({"type": "ping", **{f"k{i}": 0 for i in range(MAX_MAP_LEN)}}))
    assert "max_str_len" in refused(encode({"type": "ping", "s": "x" * (MAX_STR_BYTES + 1)}))
    assert "max_bin_len" in refused(encode({"type": "ping", "b": b"x" * (MAX_BIN_BYTES + 1)}))
    assert "max_ext_len" in refused(encode({"type": "ping", "e": msgpack.ExtType(1, b"x")}))
    assert "max_ext_len" in refused(encode({"type": "ping", "t": msgpack.Timestamp(1)}))
    assert "objects" in refused(encode({"type": "ping", "a": [[0] * 15] * 8}))  # 8 * 16 + 4 objects
    assert decode(encode({"type": "ping", "a": [[0] * 15] * 7, "p": "x" * 200}))  # 118 objects: walked, fine
    too_big = encode({"type": "ping", "pad": "x" * 1100, "q": ["y" * 1100] * 3})
    assert len(too_big) > MAX_MESSAGE_BYTES
    assert str(MAX_MESSAGE_BYTES) in refused(too_big, "too_large")


def test_deep_nesting_is_refused_before_it_is_built() -> None:
    """Nesting is bounded by the object cap; the msgpack unpacker's own stack is never reached."""
    assert "objects" in refused(b"\x91" * (MAX_MESSAGE_BYTES - 1) + b"\xc0")
    assert "objects" in refused(b"\x81\xa1k" * 1000 + b"\xc0")
    refused(b"\x91" * (MAX_OBJECTS - 1) + b"\xc0", "not_a_map")  # small enough to decode: a list


def test_the_object_count_walk_builds_nothing_and_agrees_with_msgpack() -> None:
    samples: list[Any] = [
        None, 1, -1, 2**40, -(2**40), 1.5, "x" * 40, "y" * 300, "z" * 70000, b"b" * 10, b"c" * 300,
        [], {}, [1, [2, [3, {"a": [None, True, False]}]]], {"k": {"k": {"k": "v" * 33}}},
        msgpack.ExtType(3, b"1234"), msgpack.ExtType(3, b"x" * 300), [msgpack.ExtType(1, b"")] * 3,
        largest_legal_messages()["create_table"], {"a": ["x" * 65536, 1]},
    ]
    for o in samples:
        frame = msgpack.packb(o, use_bin_type=True)
        want = objects(o) if not isinstance(o, msgpack.ExtType) else 1
        if isinstance(o, list) and o and isinstance(o[0], msgpack.ExtType):
            want = 1 + len(o)
        assert _count_objects(frame, cap=10**6) == want, o if len(frame) < 200 else type(o)
    # A count stops at cap + 1, whatever the frame claims; malformed input just ends it.
    assert _count_objects(b"\xdd\xff\xff\xff\xff" + b"\xc0" * 500, cap=5) == 6
    assert _count_objects(b"\x92\xc1\xc0") == 2
    assert _count_objects(b"\xdb\xff\xff\xff\xff") == 1


# ---------------------------------------------------------------- peek_id

ONE_MIB = 1 << 20


def test_peek_id_reads_a_bounded_prefix_of_a_1_mib_frame() -> None:
    """The tail is invalid msgpack (0xc1 is never used) and the str claims more bytes than
    exist: a full decode fails, so the id can only come from the prefix."""
    frame = b"\x83\xa4type\xa4ping\xa2id\x07\xa3pad\xdb" + (4 * ONE_MIB).to_bytes(4, "big") + b"\xc1" * ONE_MIB
    with pytest.raises(ValueError):  # msgpack: the frame ends inside the str
        msgpack.unpackb(frame, raw=False)
    assert peek_id(frame) == (7, "ping")
    wide = encode({"type": "act", "id": "\U0001d11e" * 64, "pad": "p" * 5000})
    assert peek_id(wide) == ("\U0001d11e" * 64, "act")
    # An id that only comes after the prefix is not looked for.
    late = encode({"type": "ping", "pad": "p" * PEEK_BYTES, "id": 9})
    assert peek_id(late) == (None, "ping")


def test_peek_id_of_bad_frames() -> None:
    assert peek_id(b"") == (None, None)
    assert peek_id(b"\xc1" * ONE_MIB) == (None, None)
    assert peek_id(encode([1, 2])) == (None, None)  # type: ignore[arg-type]
    assert peek_id(b"\x91" * ONE_MIB) == (None, None)
    assert peek_id(encode({"id": True, "type": "x" * 41})) == (None, None)  # not valid id or type
    assert peek_id(encode({"id": "i" * 65, "type": 5})) == (None, None)
    assert peek_id(encode({"type": "ping", "id": 3})[:-1]) == (None, "ping")  # truncated
    assert peek_id(encode({"type": "ping", "id": 2**64 - 1})) == (2**64 - 1, "ping")
    assert peek_id(encode({"x": [[1] * 15] * 15, "type": "ping", "id": 1})) == (1, "ping")  # skipped unbuilt


# ---------------------------------------------------------------- libzmq's own limit


def test_libzmq_drops_a_bigger_frame_and_that_connection_only() -> None:
    """With ZMQ_MAXMSGSIZE set as the referee sets it, a frame of exactly the limit is
    delivered; one byte more never reaches Python: libzmq closes that connection (losing
    what was queued behind the frame), the peer's DEALER reconnects as a new routing id,
    and another connection is not affected."""
    size = RefereeConfig().hard_max_bytes
    ctx = zmq.Context()
    router = limit(ctx.socket(zmq.ROUTER), 10000)  # bounded: tests/bounded.py
    socks = [router]
    try:
        router.setsockopt(zmq.MAXMSGSIZE, size)
        router.setsockopt(zmq.LINGER, 0)
        router.bind("tcp://127.0.0.1:*")
        ep = router.getsockopt(zmq.LAST_ENDPOINT).decode()
        mon = router.get_monitor_socket(zmq.EVENT_DISCONNECTED)
        socks.append(mon)
        bad, honest = limit(ctx.socket(zmq.DEALER), 10000), limit(ctx.socket(zmq.DEALER), 10000)
        socks += [bad, honest]
        for s in (bad, honest):
            s.connect(ep)

        def recv() -> list[bytes]:
            assert router.poll(10000), "nothing arrived"
            return router.recv_multipart()

        bad.send(b"x" * size)
        rid_bad, body = recv()
        assert len(body) == size
        honest.send(b"one")
        rid_honest, body = recv()
        assert body == b"one"
        bad.send(b"y" * (size + 1))
        bad.send(b"queued behind it")
        assert mon.poll(10000), "libzmq did not close the connection"
        assert recv_monitor_message(mon)["event"] == zmq.EVENT_DISCONNECTED
        honest.send(b"two")
        bad.send(b"after reconnecting")
        got: list[list[bytes]] = []
        while not any(f[1] == b"after reconnecting" for f in got) or not any(f[1] == b"two" for f in got):
            got.append(recv())
        assert [rid_honest, b"two"] in got
        # What was queued behind the oversize frame may be lost or sent after the reconnect;
        # the oversize frame itself never arrives, and the old connection is gone.
        assert all(len(f[1]) <= size for f in got)
        assert all(f[0] != rid_bad for f in got)
    finally:
        for s in socks:
            s.close(0)
        ctx.term()


# ---------------------------------------------------------------- the byte bucket


class FakeHub:
    """What RateLimiter needs of the referee: its clock and a raw send."""

    def __init__(self) -> None:
        self.t = 1000.0
        self.sent: list[tuple[bytes, dict[str, Any]]] = []

    def now(self) -> float:
        return self.t

    def raw_send(self, rid: bytes, data: bytes) -> bool:
        self.sent.append((rid, msgpack.unpackb(data)))
        return True


def limiter(**kw: Any) -> tuple[FakeHub, RateLimiter]:
    hub = FakeHub()
    args: dict[str, Any] = {"rate": 0, "burst": 0, "bytes_rate": 1000, "bytes_burst": 4000, **kw}
    return hub, RateLimiter(hub, **args)  # type: ignore[arg-type]


def test_bytes_are_charged_and_refill() -> None:
    hub, rl = limiter()
    assert [rl.admit(b"a", 1000) for _ in range(5)] == [True] * 4 + [False]
    assert rl.admit(b"b", 1000)  # per connection
    hub.t += 0.5
    assert not rl.admit(b"a", 1000)  # 500 bytes back, not enough
    assert rl.admit(b"a", 500)
    hub.t += 1.0
    assert rl.admit(b"a", 1000) and not rl.admit(b"a", 1)
    assert rl.dropped == 3


def test_refund_gives_the_bytes_back() -> None:
    _, rl = limiter()
    for _ in range(4):
        assert rl.admit(b"a", 1000)
        rl.refund(b"a", 1000)  # an answer to its own prompt: never counted
    assert rl.admit(b"a", 4000)
    rl.refund(b"a", 10**9)  # never more than a full bucket
    assert rl.admit(b"a", 4000) and not rl.admit(b"a", 1)
    rl.refund(b"nobody", 10)  # unknown connection: nothing to do


def test_a_frame_larger_than_the_burst_costs_a_full_bucket() -> None:
    hub, rl = limiter()
    assert rl.admit(b"a", 10**6)
    assert not rl.admit(b"a", 1)
    hub.t += 4.0
    assert rl.admit(b"a", 10**6)


def test_both_buckets_and_one_notice_a_second() -> None:
    hub, rl = limiter(rate=10, burst=3)
    assert [rl.admit(b"a", 10) for _ in range(4)] == [True, True, True, False]  # messages ran out
    hub.t += 1.0
    assert rl.admit(b"a", 3000) and not rl.admit(b"a", 3000)  # bytes ran out, messages left
    for _ in range(50):
        assert not rl.admit(b"a", 3000)
    notices = [m for _, m in hub.sent]
    assert len(notices) == 2 and all(m["name"] == "rate_limited" and "id" not in m for m in notices)
    assert "bytes/s" in notices[1]["message"] and "messages/s" in notices[1]["message"]
    hub.t += 1.0
    assert not rl.admit(b"a", 4000)  # 1000 of 4000 back
    assert len(hub.sent) == 3 and "51 message(s)" in hub.sent[2][1]["message"]


def test_bad_settings() -> None:
    hub = FakeHub()
    for args in ((0, 0, 0, 0), (-1, 1, 100, 100), (10, 0, 0, 0), (0, 0, 100, 0)):
        with pytest.raises(ValueError):
            RateLimiter(hub, *args)  # type: ignore[arg-type]
    RateLimiter(hub, 10, 1)  # messages only, as before 1.4
    RateLimiter(hub, 0, 0, 100, 1)  # type: ignore[arg-type]


def test_defaults_throttle_the_big_frame_flood_but_not_honest_traffic() -> None:
    """The figures of the issue: 600 frames/s of the largest size for 10 s against an
    honest client sending 2000 messages/s (the CLI's message limit) of 120 bytes."""
    cfg = RefereeConfig()
    hub = FakeHub()
    rl = RateLimiter(hub, 2000, 4000, cfg.rate_limit_bytes_per_s, cfg.rate_limit_bytes_burst)  # type: ignore[arg-type]
    flood = honest = 0
    for tick in range(10 * 600):
        hub.t += 1 / 600
        flood += rl.admit(b"flood", cfg.max_message_bytes)
        for _ in range(3 if tick % 3 else 4):  # 2000/s in all
            honest += rl.admit(b"honest", 120)
    assert honest == 20000  # every one
    budget = (cfg.rate_limit_bytes_burst + 10 * cfg.rate_limit_bytes_per_s) / cfg.max_message_bytes
    assert flood <= budget + 1 and flood < 6000 / 6  # a small fraction of what was sent
