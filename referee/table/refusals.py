"""What a refused ``act`` costs the journal and the client: a bounded line, a bounded sentence."""

from __future__ import annotations

import hashlib
from typing import Any

from msgpack import packb

__all__ = ["ERROR_TEXT_CHARS", "INPUT_HEAD_CHARS", "refused_input"]

#: At most this many characters of a refused input are kept in the journal (its ``head``).
INPUT_HEAD_CHARS = 120
#: At most this many characters of an error's sentence go to a client or the journal.
ERROR_TEXT_CHARS = 300


def refused_input(raw: Any) -> dict[str, Any]:
    """What the journal keeps of an input the referee refused: its size, its hash and a
    short head, never the input itself.

    Why: the journal is written for every refused ``act``, and what a hostile client
    sends is its choice. On 1.3 a copy of the payload was kept (cut per field, but a
    nested map of lists still expanded to hundreds of KB a line): 300 pipelined acts of
    59 KB wrote 78 MB in 3 s. Now a refused input costs the journal a bounded line
    whatever its size, and the hash still lets an operator match it with a capture.
    """
    try:
        data = packb(raw, use_bin_type=True)
    except (TypeError, ValueError, OverflowError):
        data = repr(type(raw)).encode()
    head = repr(raw)
    if len(head) > INPUT_HEAD_CHARS:
        head = head[: INPUT_HEAD_CHARS - 1] + "…"
    return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(), "head": head}
