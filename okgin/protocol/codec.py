"""The msgpack codec of protocol v1: one frame = one msgpack map (protocol.md §2).

Pure functions, no sockets. ``decode`` turns every way a frame can be wrong into a
:class:`ProtocolError` with the right code, so the referee answers bad input with an
error instead of crashing: too large, not msgpack, trailing bytes, not a map, non-string
keys. ``raw=False`` decodes msgpack str as Python str; msgpack bin stays bytes, which
the field checks then refuse (strings must be str on this protocol).
"""

from __future__ import annotations

from typing import Any

import msgpack

from .catalogue import MAX_MESSAGE_BYTES
from .errors import ProtocolError

_packer = msgpack.Packer(use_bin_type=True, autoreset=True)


def encode(msg: dict[str, Any]) -> bytes:
    """One message to one frame."""
    return _packer.pack(msg)


def decode(frame: bytes, max_bytes: int = MAX_MESSAGE_BYTES) -> dict[str, Any]:
    """One frame to one message map, or ProtocolError (bad_frame, not_a_map, too_large)."""
    if len(frame) > max_bytes:
        raise ProtocolError("too_large", f"the frame has {len(frame)} bytes; the limit is {max_bytes}")
    try:
        obj = msgpack.unpackb(
            frame,
            raw=False,
            strict_map_key=False,
            # Containers larger than a frame could hold are refused before allocation.
            max_array_len=max_bytes,
            max_map_len=max_bytes,
            max_str_len=max_bytes,
            max_bin_len=max_bytes,
            max_ext_len=max_bytes,
        )
    except msgpack.ExtraData:
        raise ProtocolError("bad_frame", "the frame has bytes after the msgpack map; send exactly one map per frame") from None
    except (ValueError, msgpack.UnpackException, TypeError, OverflowError) as e:
        raise ProtocolError("bad_frame", f"the frame is not valid msgpack ({type(e).__name__})") from None
    if not isinstance(obj, dict):
        kind = "nil" if obj is None else type(obj).__name__
        raise ProtocolError("not_a_map", f"a message is a msgpack map with a 'type' field, not {kind}")
    for k in obj:
        if not isinstance(k, str):
            raise ProtocolError("not_a_map", "every key of a message map must be a msgpack str")
    return obj
