"""This bot's nonce for a tournament's deals (protocol 1.5, protocol.md 5.27).

Why every bot sends one: the deals of a tournament derive from the organiser's secret and
from every participant's nonce (okgin.schedule), so that no one, the organiser included,
can choose them. The bot draws a random nonce when it starts, sends its commitment in
``hello`` and reveals the nonce when asked (``entropy_request``, once every commitment is
in). It prints the nonce to stderr when it reveals it: keep it, and check the finished
event with ``okgin tournament verify DB --nonce NAME=HEX``.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from okgin.schedule import new_nonce, nonce_commitment

__all__ = ["Entropy"]


class Entropy:
    """One nonce and its commitment; :meth:`reveal` answers an ``entropy_request``."""

    def __init__(self, nonce: bytes | None = None, log: TextIO | None = None) -> None:
        self.nonce = new_nonce() if nonce is None else nonce
        self.commit = nonce_commitment(self.nonce)
        self.log = log
        self.revealed = False

    def hello_fields(self) -> dict[str, Any]:
        return {"entropy_commit": self.commit}

    def reveal(self, table: str, commitments_hash: str) -> dict[str, Any]:
        if not self.revealed:
            self.revealed = True
            print(f"okgin bot: my nonce {self.nonce.hex()} (commitment {self.commit}) goes into the deals "
                  f"(commitments hash {commitments_hash}); keep it to check them: okgin tournament verify DB "
                  f"--nonce NAME={self.nonce.hex()}", file=self.log or sys.stderr, flush=True)
        return {"type": "entropy_reveal", "table": table, "nonce": self.nonce.hex()}
