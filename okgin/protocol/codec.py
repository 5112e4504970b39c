"""The msgpack codec of protocol v1: one frame = one msgpack map (protocol.md §2).

Pure functions, no sockets. ``decode`` turns every way a frame can be wrong into a
:class:`ProtocolError` with the right code, so the referee answers bad input with an
error instead of crashing: too large, not msgpack, trailing bytes, not a map, non-string
keys, more structure than any message has. ``raw=False`` decodes msgpack str as Python
str; msgpack bin stays bytes, which the field checks then refuse (strings must be str on
this protocol).

Why the structural limits (``catalogue.MAX_*``): what a frame costs to decode is the
objects it makes, not its bytes: a 64 KiB frame of 65,520 empty maps cost ~2.5 ms, some
2,500 ordinary ``act`` frames. So decoding is bounded by what a legal message holds,
not by the frame size: msgpack's own per-container limits (array and map lengths, str,
bin and ext sizes) and a cap on the total number of objects. msgpack has no such cap (nor
a nesting-depth option), so ``decode`` counts them itself, but only when it has to: a
frame of at most ``MAX_OBJECTS`` bytes cannot hold more objects than that (each takes a
byte at least), which covers nearly every frame a referee reads (an ``act`` is ~55
bytes). A bigger frame is first walked header by header (:func:`_count_objects`: no
object is built, strings are jumped over) and refused at the first object past the cap,
so that walk is bounded too. Nesting needs no separate bound: each level is an object,
so the cap bounds depth as well. bench/decode_cost.py measures the result.
"""

from __future__ import annotations

from typing import Any

import msgpack

from .catalogue import (
    MAX_ARRAY_LEN,
    MAX_BIN_BYTES,
    MAX_EXT_BYTES,
    MAX_MAP_LEN,
    MAX_MESSAGE_BYTES,
    MAX_OBJECTS,
    MAX_STR_BYTES,
    request_id,
)
from .errors import ProtocolError

__all__ = [
    "MAX_REFEREE_MESSAGE_BYTES", "PEEK_BYTES", "decode", "decode_from_referee", "encode", "peek_id",
]

_packer = msgpack.Packer(use_bin_type=True, autoreset=True)

# How much of a frame peek_id reads: a map header, a "type" of up to 40 characters and an
# "id" of up to 64 four-byte characters fit with room to spare if they come first.
PEEK_BYTES = 512

_LIMITS: dict[str, Any] = {
    "raw": False,
    "strict_map_key": False,
    "max_array_len": MAX_ARRAY_LEN,
    "max_map_len": MAX_MAP_LEN,
    "max_str_len": MAX_STR_BYTES,
    "max_bin_len": MAX_BIN_BYTES,
    "max_ext_len": MAX_EXT_BYTES,
}


def _lenient(max_bytes: int) -> dict[str, Any]:
    """msgpack's limits for a referee message: containers no larger than the frame."""
    return {"raw": False, "strict_map_key": False, "max_array_len": max_bytes, "max_map_len": max_bytes, "max_str_len": max_bytes,
            "max_bin_len": max_bytes, "max_ext_len": max_bytes}


def encode(msg: dict[str, Any]) -> bytes:
    """One message to one frame."""
    return _packer.pack(msg)


def _header_table() -> tuple[tuple[int, int, int, int], ...]:
    """For each lead byte of a msgpack object: (fixed size, length bytes, item multiplier, items).

    Fixed size is the bytes taken besides a length-given payload (0: not a valid lead
    byte); length bytes is how many big-endian bytes after the lead give a length (of a
    payload) or a count (of items); item multiplier is 0 for a payload, 1 for an array
    and 2 for a map (key and value); items is a fixarray's or fixmap's own count."""
    t: list[tuple[int, int, int, int]] = [(1, 0, 0, 0)] * 256  # fixints, nil, bools
    for b in range(0x80, 0x90):
        t[b] = (1, 0, 0, 2 * (b & 0x0F))
    for b in range(0x90, 0xA0):
        t[b] = (1, 0, 0, b & 0x0F)
    for b in range(0xA0, 0xC0):
        t[b] = (1 + (b & 0x1F), 0, 0, 0)
    t[0xC1] = (0, 0, 0, 0)  # never used
    for b, lb in ((0xC4, 1), (0xC5, 2), (0xC6, 4), (0xD9, 1), (0xDA, 2), (0xDB, 4)):  # bin, str
        t[b] = (1 + lb, lb, 0, 0)
    for b, lb in ((0xC7, 1), (0xC8, 2), (0xC9, 4)):  # ext: length, then a type byte
        t[b] = (2 + lb, lb, 0, 0)
    for b, size in ((0xCA, 5), (0xCB, 9), (0xCC, 2), (0xCD, 3), (0xCE, 5), (0xCF, 9),
                    (0xD0, 2), (0xD1, 3), (0xD2, 5), (0xD3, 9),
                    (0xD4, 3), (0xD5, 4), (0xD6, 6), (0xD7, 10), (0xD8, 18)):
        t[b] = (size, 0, 0, 0)
    for b, lb, mult in ((0xDC, 2, 1), (0xDD, 4, 1), (0xDE, 2, 2), (0xDF, 4, 2)):
        t[b] = (1 + lb, lb, mult, 0)
    return tuple(t)


_HEADERS = _header_table()


def _count_objects(frame: bytes, cap: int = MAX_OBJECTS) -> int:
    """How many objects the frame's first msgpack object holds (itself included), counted
    up to ``cap + 1`` and no further; nothing is decoded or allocated.

    Why not msgpack itself: it builds every object before one could be counted. A
    malformed or truncated frame just ends the count early; msgpack then says what is
    wrong with it, having built no more than this counted."""
    n = len(frame)
    pos = 0
    pending = 1  # objects still to read
    count = 0
    headers = _HEADERS
    while pending and pos < n:
        count += 1
        if count > cap:
            break
        pending -= 1
        size, lb, mult, items = headers[frame[pos]]
        if not size:
            break
        if lb:
            length = int.from_bytes(frame[pos + 1 : pos + 1 + lb], "big")
            if mult:
                pending += mult * length
                pos += size
            else:
                pos += size + length
        else:
            pos += size
            pending += items
    return count


def decode(frame: bytes, max_bytes: int = MAX_MESSAGE_BYTES, strict: bool = True) -> dict[str, Any]:
    """One frame to one message map, or ProtocolError (bad_frame, not_a_map, too_large).

    The length is checked before anything; with ``strict`` (a client's message, read by
    the referee) the structure within the limits of the module docstring before
    anything is built. ``strict=False`` is for clients reading the referee's messages,
    which are larger (views, pages of tables) and come from the party they trust: only
    the frame's size bounds them."""
    if len(frame) > max_bytes:
        raise ProtocolError("too_large", f"the frame has {len(frame)} bytes; the limit is {max_bytes}")
    if strict and len(frame) > MAX_OBJECTS and _count_objects(frame) > MAX_OBJECTS:
        raise ProtocolError(
            "bad_frame",
            f"the frame holds more than {MAX_OBJECTS} msgpack objects (keys, values, items); no message has that many",
        )
    try:
        obj = msgpack.unpackb(frame, **(_LIMITS if strict else _lenient(max_bytes)))
    except msgpack.ExtraData:
        raise ProtocolError("bad_frame", "the frame has bytes after the msgpack map; send exactly one map per frame") from None
    except ValueError as e:
        text = str(e)
        if "exceeds max_" in text:  # msgpack's own limits: "17 exceeds max_array_len(16)"
            raise ProtocolError("bad_frame", f"the frame holds more than a message may: {text[:80]}") from None
        raise ProtocolError("bad_frame", f"the frame is not valid msgpack ({type(e).__name__})") from None
    except (msgpack.UnpackException, TypeError, OverflowError) as e:
        raise ProtocolError("bad_frame", f"the frame is not valid msgpack ({type(e).__name__})") from None
    if not isinstance(obj, dict):
        kind = "nil" if obj is None else type(obj).__name__
        raise ProtocolError("not_a_map", f"a message is a msgpack map with a 'type' field, not {kind}")
    for k in obj:
        if not isinstance(k, str):
            raise ProtocolError("not_a_map", "every key of a message map must be a msgpack str")
    return obj


#: The largest referee message a client accepts (views and pages are far smaller).
MAX_REFEREE_MESSAGE_BYTES = 1 << 24


def decode_from_referee(frame: bytes) -> dict[str, Any]:
    """A message *from* the referee, as a client reads it: the client limits of
    :func:`decode` are for frames the referee reads, and views or pages of tables hold
    more objects than any client message may."""
    return decode(frame, MAX_REFEREE_MESSAGE_BYTES, strict=False)


def peek_id(frame: bytes) -> tuple[Any, str | None]:
    """The ``id`` and ``type`` of a frame ``decode`` refused, for the error that answers it.

    Why: the answer to a bad frame should still echo its id when it can be read, but a
    frame refused for its size or structure must not be decoded to find out. So only the
    first ``PEEK_BYTES`` are read: the map header, then keys in order, building only the
    values of ``id`` and ``type`` and jumping over the others; anything past the prefix,
    or not readable in it, gives None. (None, None) for what is not a map at all."""
    u = msgpack.Unpacker(
        max_buffer_size=PEEK_BYTES,
        raw=False,
        strict_map_key=False,
        max_array_len=MAX_ARRAY_LEN,
        max_map_len=MAX_MAP_LEN,
        max_str_len=PEEK_BYTES,
        max_bin_len=MAX_BIN_BYTES,
        max_ext_len=MAX_EXT_BYTES,
    )
    u.feed(frame[:PEEK_BYTES])
    rqid: Any = None
    t: str | None = None
    try:
        n = u.read_map_header()
        for _ in range(min(n, MAX_MAP_LEN)):
            k = u.unpack()
            if k == "id":
                rqid = request_id({"id": u.unpack()})
            elif k == "type":
                v = u.unpack()
                t = v if isinstance(v, str) and len(v) <= 40 else None
            else:
                u.skip()
            if rqid is not None and t is not None:
                break
    except Exception:  # OutOfData (the prefix ended), not a map, bad msgpack: what was read stands
        pass
    return rqid, t
