"""Protocol v1 (protocol.md): the message catalogue, error codes and msgpack codec.

Pure: no sockets, no threads. The referee and every Python client share these, so the
framing rules and error codes exist in exactly one place.
"""

from .catalogue import (
    CLIENT_TYPES,
    DIRECTIONS,
    MAX_MESSAGE_BYTES,
    PROTOCOL_MAJOR,
    PROTOCOL_MINOR,
    REFEREE_TYPES,
    ROLES,
    request_id,
    validate,
)
from .codec import decode, decode_from_referee, encode, peek_id
from .errors import CODES, ERRORS, ProtocolError

__all__ = [
    "CLIENT_TYPES", "CODES", "DIRECTIONS", "ERRORS", "MAX_MESSAGE_BYTES", "PROTOCOL_MAJOR", "PROTOCOL_MINOR",
    "REFEREE_TYPES", "ROLES", "ProtocolError", "decode", "decode_from_referee", "encode", "peek_id", "request_id", "validate",
]
