"""The kit's ZMTP reader: frames come out whole however the bytes are cut, both versions."""

from __future__ import annotations

import itertools
import struct

from hypothesis import given
from hypothesis import strategies as st

from competition.conformance.runner import fill, illegal_action
from competition.conformance.zmtp import Frame, ZmtpError, encode_frame, pair

SIG = b"\xff" + b"\x00" * 8 + b"\x7f"


def v3_stream(bodies: list[bytes]) -> bytes:
    greeting = SIG + b"\x03" + b"\x00" + b"NULL".ljust(20, b"\x00") + b"\x00" + b"\x00" * 31
    ready = b"\x04" + bytes([len(b"\x05READY")]) + b"\x05READY"
    return greeting + ready + b"".join(encode_frame(b) for b in bodies)


def v2_stream(bodies: list[bytes]) -> bytes:
    # JeroMQ 0.3.x: signature, revision 1, socket type, empty identity frame, messages.
    return SIG + b"\x01" + b"\x05" + b"\x00\x00" + b"".join(encode_frame(b) for b in bodies)


def run(stream: bytes, peer_major: int, cuts: list[int]) -> tuple[list[bytes], bytes]:
    me, peer = pair("me", "peer")
    peer.feed(SIG + bytes([peer_major]))
    frames: list[bytes] = []
    raw = b""
    points = sorted({c % (len(stream) + 1) for c in cuts} | {0, len(stream)})
    for a, b in itertools.pairwise(points):
        for item in me.feed(stream[a:b]):
            if isinstance(item, Frame):
                frames.append(item.body)
            else:
                raw += item
    return frames, raw


bodies_st = st.lists(st.binary(max_size=400), max_size=6)


@given(bodies_st, st.lists(st.integers(min_value=0, max_value=10_000), max_size=12))
def test_v3_frames_whatever_the_cuts(bodies, cuts):
    stream = v3_stream(bodies)
    frames, raw = run(stream, 3, cuts)
    assert frames == bodies
    # Everything that is not a message frame is relayed unchanged, in order.
    assert raw + b"".join(encode_frame(b) for b in bodies) == stream


@given(bodies_st, st.lists(st.integers(min_value=0, max_value=10_000), max_size=12))
def test_v2_frames_whatever_the_cuts(bodies, cuts):
    frames, _ = run(v2_stream(bodies), 3, cuts)  # libzmq (3) meets JeroMQ (v2): version 2 framing
    assert frames == bodies


def test_long_frames_use_an_8_byte_size():
    body = b"x" * 300
    assert encode_frame(body)[:9] == b"\x02" + struct.pack(">Q", 300)
    assert encode_frame(b"hi") == b"\x00\x02hi"


def test_not_zmtp_is_refused():
    me, _ = pair("me", "peer")
    try:
        me.feed(b"GET / HTTP/1.1\r\n")
    except ZmtpError as e:
        assert "signature" in str(e)
    else:
        raise AssertionError("an HTTP request was taken for ZMTP")


def test_placeholders_are_filled_and_others_left_alone():
    argv = fill(["bot", "--connect", "{endpoint}", "--t={token}", "{unknown}", "{{x}}"], {"endpoint": "tcp://h:1", "token": "T"})
    assert argv == ["bot", "--connect", "tcp://h:1", "--t=T", "{unknown}", "{{x}}"]


def test_the_illegal_probe_is_never_a_legal_action():
    phases = [
        [{"kind": "take"}, {"kind": "pass"}],
        [{"kind": "draw_stock"}],
        [{"kind": "draw_stock"}, {"kind": "draw_discard"}],
        [{"kind": "discard", "card": "As"}, {"kind": "knock", "card": "As"}],
    ]
    for legal in phases:
        assert illegal_action(legal) not in legal


def test_declared_melds_are_checked_like_the_referee_would():
    from competition.conformance.checks import action_problem

    view = {"hand": "As 2s 3s 4s 7h 7d 7c Kd Qd Jd 9c".split(), "knock_limit": 10}
    prompt = {"legal": [{"kind": "knock", "card": "9c"}, {"kind": "discard", "card": "9c"}], "view": view}
    good = {"kind": "knock", "card": "9c", "melds": [["As", "2s", "3s", "4s"], ["7h", "7d", "7c"], ["Jd", "Qd", "Kd"]]}
    assert action_problem(good, prompt) is None
    assert action_problem({"kind": "knock", "card": "9c"}, prompt) is None  # the referee's layout
    overlap = {**good, "melds": [["As", "2s", "3s"], ["3s", "4s", "5s"]]}
    assert "refused" in (action_problem(overlap, prompt) or "")
    far = {**good, "melds": [["As", "2s", "3s"]]}  # 4s 7h 7d 7c Jd Qd Kd left: 55 > 10
    assert "over the knock limit" in (action_problem(far, prompt) or "")
    assert "not among" in (action_problem({"kind": "knock", "card": "As"}, prompt) or "")
    assert "only knock" in (action_problem({"kind": "discard", "card": "9c", "melds": []}, prompt) or "")
