"""Client side of CURVE mode (protocol.md §13): connect to ``okgin referee --curve-keys``.

A CURVE referee only talks to clients that know its public key, and (unless it runs
``--allow any``) whose own public key its organiser put in the allow-list. Key files are
pyzmq certificates: ``okgin referee --gen-keys DIR --key-name me`` writes ``me.key``
(public: send it to the organiser) and ``me.key_secret`` (keep it).

Programs pass :class:`CurveKeys` to :class:`clients.sdk.Client` / ``AsyncClient``
(``curve=``). Without that argument the clients read two environment variables, so any
existing bot command (``okgin bot ...``) works against a CURVE referee unchanged:

- ``OKGIN_CURVE_SERVER_KEY``: path of the referee's public key file (``server.key``);
- ``OKGIN_CURVE_CLIENT_KEY``: path of this client's ``*.key_secret`` (optional: without
  it a fresh key pair is made for the connection, which only a ``--allow any`` referee
  accepts).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import zmq
import zmq.auth

from okgin import env

__all__ = ["ENV_CLIENT_KEY", "ENV_SERVER_KEY", "CurveKeys"]

ENV_SERVER_KEY = "OKGIN_CURVE_SERVER_KEY"
ENV_CLIENT_KEY = "OKGIN_CURVE_CLIENT_KEY"


@dataclass(frozen=True)
class CurveKeys:
    """The referee's public key and this client's key pair (Z85 bytes)."""

    server_public: bytes
    public: bytes
    secret: bytes

    @classmethod
    def load(cls, server_key: str | os.PathLike[str], client_key: str | os.PathLike[str] | None = None) -> CurveKeys:
        """From certificate files; ``client_key`` None: a fresh pair for this connection."""
        server_public, _ = zmq.auth.load_certificate(str(Path(server_key)))
        if client_key is None:
            public, secret = zmq.curve_keypair()
        else:
            public, maybe_secret = zmq.auth.load_certificate(str(Path(client_key)))
            if maybe_secret is None:
                raise ValueError(f"{client_key} holds no secret key (give the *.key_secret file)")
            secret = maybe_secret
        return cls(server_public, public, secret)

    @classmethod
    def from_env(cls) -> CurveKeys | None:
        """From ``OKGIN_CURVE_SERVER_KEY`` / ``OKGIN_CURVE_CLIENT_KEY``, or None if unset."""
        server = env.get(ENV_SERVER_KEY)
        if not server:
            return None
        return cls.load(server, env.get(ENV_CLIENT_KEY))

    def apply(self, sock: zmq.Socket) -> None:
        """Make ``sock`` (before it connects) a CURVE client of the referee."""
        sock.curve_serverkey = self.server_public
        sock.curve_publickey = self.public
        sock.curve_secretkey = self.secret
