"""What a frame costs to decode: an ordinary ``act`` against the worst frames one can build.

Why: the referee decodes every frame it admits, before it knows whether the frame means
anything, so the cost of the worst frame within ``MAX_MESSAGE_BYTES`` (per frame) times
the byte budget of referee.ratelimit (per second) is what a hostile connection can make
the referee spend. okgin.protocol.codec bounds the first; this script measures it.

Each figure is the best of several runs of CPU time of this thread (``time.thread_time``,
not wall-clock), so other processes on a shared machine change it little. Run:
``python bench/decode_cost.py`` (``--base`` also decodes with the unbounded pre-1.4 settings:
the frame-size limits only).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable

import msgpack

from okgin.protocol import MAX_MESSAGE_BYTES, ProtocolError, decode, encode, peek_id
from okgin.protocol.catalogue import MAX_ARRAY_LEN, MAX_MAP_LEN, MAX_OBJECTS, MAX_STR_BYTES, largest_legal_messages

ACT = encode({"type": "act", "table": "t1", "seq": 12, "action": {"kind": "discard", "card": "Qs"}})


def cpu_us(f: Callable[[], object], number: int, repeat: int = 9) -> float:
    """Best per-call CPU time of ``f`` in microseconds."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.thread_time_ns()
        for _ in range(number):
            f()
        best = min(best, time.thread_time_ns() - t0)
    return best / number / 1000


def _arr(items: list[bytes]) -> bytes:
    n = len(items)
    head = bytes([0x90 | n]) if n < 16 else b"\xdc" + n.to_bytes(2, "big")
    return head + b"".join(items)


def _map(pairs: list[tuple[bytes, bytes]]) -> bytes:
    n = len(pairs)
    head = bytes([0x80 | n]) if n < 16 else b"\xde" + n.to_bytes(2, "big")
    return head + b"".join(k + v for k, v in pairs)


def _fill(unit: bytes, per: int, size: int) -> bytes:
    """An array of arrays of ``per`` units, as many as fit in ``size`` bytes."""
    inner = _arr([unit] * per)
    return _arr([inner] * min(MAX_ARRAY_LEN, max(1, (size - 3) // len(inner))))


def hostile(size: int) -> dict[str, bytes]:
    """Frames built to be expensive, each at most ``size`` bytes."""
    wide = "\U0001d11e"
    under = (MAX_OBJECTS - 1) // 16  # arrays of 15 under one array: just under the object cap
    key = [msgpack.packb(f"k{i:02d}") for i in range(MAX_MAP_LEN)]
    frames = {
        # what the 1.3 attack sent: as many empty maps as fit (refused by the object cap)
        "empty maps": b"\xdc" + (size - 3).to_bytes(2, "big") + b"\x80" * (size - 3),
        # objects: small frames are not walked (they cannot hold more than their bytes)
        f"{MAX_OBJECTS}-byte frame of empty arrays": _arr([_arr([b"\x90"] * 15)] * 7) + b"",
        f"{MAX_OBJECTS}-byte deep nest": b"\x91" * (MAX_OBJECTS - 1) + b"\xc0",
        "deep nest (walked, refused)": b"\x91" * (size - 1) + b"\xc0",
        # just under the object cap, in the most expensive objects found
        "maps of distinct keys": _arr([_map([(key[j], b"\xc0") for j in range(under * 2, under * 2 + 7)])] * (under + 1)),
        "2-char strings": _arr([_arr([msgpack.packb(f"{i:02d}") for i in range(15)])] * under),
        "uint64s": _arr([_arr([b"\xcf" + bytes([1, 2, 3, 4, 5, 6, 7, i]) for i in range(15)])] * under),
        "float64s": _arr([_arr([b"\xcb" + bytes([64, 9, 33, 251, 84, 68, 45, i]) for i in range(15)])] * under),
        "longest strings": _arr([msgpack.packb(wide * (MAX_STR_BYTES // 4))] * ((size - 8) // (MAX_STR_BYTES + 3))),
        # past the object cap: refused by the walk, which stops at the first object too many
        "nils (walked, refused)": _fill(b"\xc0", 15, size),
        "fixints in maps (walked, refused)": _arr([_map([(b"\x01", b"\x02")] * 15)] * MAX_ARRAY_LEN),
    }
    return {k: v for k, v in frames.items() if len(v) <= size}


def _decode_quietly(frame: bytes) -> None:
    try:
        decode(frame)
    except ProtocolError:
        pass


def _decode_base(frame: bytes) -> None:
    try:
        msgpack.unpackb(frame, raw=False, strict_map_key=False, max_array_len=65536, max_map_len=65536,
                        max_str_len=65536, max_bin_len=65536, max_ext_len=65536)
    except (ValueError, TypeError):
        pass


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--base", action="store_true", help="also decode each frame with the frame-size limits only")
    args = p.parse_args(argv)
    legal = {t: encode(m) for t, m in largest_legal_messages().items()}
    big = max(legal, key=lambda t: len(legal[t]))
    print(f"largest legal client message: {big}, {len(legal[big])} bytes; MAX_MESSAGE_BYTES {MAX_MESSAGE_BYTES}")
    act = cpu_us(lambda: decode(ACT), 20000)
    print(f"{'ordinary act':44s} {len(ACT):5d} B {act:8.2f} us      1.0x")
    rows = [(f"largest legal {t}", legal[t]) for t in sorted(legal, key=lambda t: -len(legal[t]))[:3]]
    rows += list(hostile(MAX_MESSAGE_BYTES).items())
    worst = 0.0
    for name, frame in rows:
        us = cpu_us(lambda f=frame: _decode_quietly(f), 500)  # type: ignore[misc]
        try:
            decode(frame)
            verdict = "accepted"
        except ProtocolError as e:
            verdict = e.name
        base = ""
        if args.base:
            base = f"  (frame-size limits only: {cpu_us(lambda f=frame: _decode_base(f), 200):.2f} us)"  # type: ignore[misc]
        worst = max(worst, us)
        print(f"{name:44s} {len(frame):5d} B {us:8.2f} us {us / act:7.1f}x  {verdict}{base}")
    one_mib = b"\x83\xa4type\xa4ping\xa2id\x07\xa3pad\xdb" + (1 << 20).to_bytes(4, "big") + b"\xc1" * (1 << 20)
    print(f"{'peek_id of a 1 MiB frame':44s} {len(one_mib):5d} B {cpu_us(lambda: peek_id(one_mib), 2000):8.2f} us")
    print(f"worst / act: {worst / act:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
