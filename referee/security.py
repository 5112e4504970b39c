"""CURVE mode: encrypted traffic and an allow-list of client keys (protocol.md §13).

``okgin referee --curve-keys DIR --allow KEYS`` turns on ZeroMQ's CURVE security
(RFC 26, CurveZMQ) on the referee's ROUTER: every connection is encrypted and
authenticated with elliptic-curve keys, and ZeroMQ's ZAP handler (pyzmq's
:mod:`zmq.auth`) admits only clients whose public key is in the allow-list. A client
with an unknown key, or without CURVE, fails the handshake: it never reaches the
referee's code at all, so it cannot even send a hostile frame.

Keys are pyzmq certificate files (``zmq.auth.create_certificates``): ``NAME.key`` holds
a public key, ``NAME.key_secret`` the pair. ``okgin referee --gen-keys DIR --key-name
NAME`` writes one pair.

- ``--curve-keys DIR``: the referee's own pair, ``DIR/server.key_secret`` (or the only
  ``*.key_secret`` in DIR). Publish ``DIR/server.key``: clients need it.
- ``--allow KEYS``: a directory of client public key files (every ``*.key`` in it is
  allowed; add a participant by dropping their ``.key`` there before the start), or
  ``any``: encryption for everyone, no allow-list (then tokens and the admin key are the
  only gate, as without CURVE).

The ZAP handler runs in a small thread (referee.connguard): the referee's socket is a
plain (not asyncio) ZeroMQ socket, and ZAP requests only arrive during handshakes, so it
costs nothing per message.
"""

from __future__ import annotations

import os
from pathlib import Path

import zmq
import zmq.auth

ALLOW_ANY = "any"


class CurveError(Exception):
    """The keys or the allow-list cannot be used (a sentence for the operator)."""


def generate_keys(directory: str | os.PathLike[str], name: str = "server") -> tuple[Path, Path]:
    """Write ``NAME.key`` (public) and ``NAME.key_secret`` (pair, mode 0600) in ``directory``."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    public, secret = zmq.auth.create_certificates(str(d), name)
    os.chmod(secret, 0o600)
    return Path(public), Path(secret)


def server_keys(directory: str | os.PathLike[str]) -> tuple[bytes, bytes]:
    """The referee's (public, secret) keys from ``DIR/server.key_secret`` or DIR's only pair."""
    d = Path(directory)
    path = d / "server.key_secret"
    if not path.exists():
        pairs = sorted(d.glob("*.key_secret"))
        if len(pairs) != 1:
            raise CurveError(
                f"{d} has no server.key_secret (and not exactly one *.key_secret); create one with okgin referee --gen-keys {d}"
            )
        path = pairs[0]
    public, secret = zmq.auth.load_certificate(str(path))
    if secret is None:
        raise CurveError(f"{path} holds no secret key")
    return public, secret


def allowed_keys(allow: str) -> str:
    """Check ``--allow``: ``any``, or a directory holding at least one public ``*.key``."""
    if allow == ALLOW_ANY:
        return zmq.auth.CURVE_ALLOW_ANY
    d = Path(allow)
    if not d.is_dir():
        raise CurveError(f"--allow {allow}: not a directory of client public keys (or 'any')")
    if not list(d.glob("*.key")):
        raise CurveError(f"--allow {allow}: no *.key file in it, so no client could connect")
    return str(d)


def start_curve(sock: zmq.Socket, keys_dir: str, allow: str) -> str:
    """Make ``sock`` (not yet bound) a CURVE server; return the allow-list's location.

    The ZAP handler that admits the allowed keys only is referee.connguard's (a context
    has one ZAP endpoint, and the connection caps answer there too).
    """
    public, secret = server_keys(keys_dir)
    location = allowed_keys(allow)
    sock.curve_secretkey = secret
    sock.curve_publickey = public
    sock.curve_server = True
    return location
