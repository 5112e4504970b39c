"""The tools protocol.md's examples and transcripts are made with (issue 18).

:mod:`referee.protocol_examples` (§5's examples) and :mod:`referee.protocol_transcripts`
(§15's transcripts) script sessions against a real referee; this module holds what they
share: the referee in a thread of this process (:class:`RefereeInThread`), its seeds and
salts from a counter (:func:`deterministic_secrets`), a raw DEALER client that records what
it sends and receives (:class:`Client`), the masking of what varies between runs
(:class:`Masker`: tokens, seeds, salts and hashes, a pong's ``time_ms``, the referee's
version) and the printing of a message as wrapped JSON (:func:`fmt`, at most
:data:`WIDTH` characters a line unless one field is longer).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import msgpack
import zmq

from okgin.protocol.catalogue import PROTOCOL_MINOR

from .cli import DEFAULT_MOVE_MS
from .config import Clock, RefereeConfig
from .server import Referee
from .table import deals as _deals

__all__ = [
    "ADMIN_KEY", "MASKED_REMAINING_MS", "MASKED_TIME_MS", "TIMEOUT_MS", "WIDTH", "Client", "Masker", "RefereeInThread",
    "deterministic_secrets", "fmt",
]

WIDTH = 110
TIMEOUT_MS = 10000  # for failures only: every expected message comes at once
ADMIN_KEY = "example-admin-key"
#: What stands for a whole number that varies between runs (protocol.md §1): a number, so
#: that every example validates against the schema (issue 29: ``"time_ms": "<time_ms>"``
#: put a string in an integer field). A pong's ``time_ms``, and the ``remaining_ms`` of a
#: prompt sent again after its move's time ran for a while.
MASKED_TIME_MS = 123456789
MASKED_REMAINING_MS = 59000


# ---------------------------------------------------------------------- formatting
class Masker:
    """Replaces what varies between runs by stable placeholders (see the module doc)."""

    def __init__(self) -> None:
        self.tokens: dict[str, str] = {}

    def token(self, value: str) -> str:
        if value not in self.tokens:
            self.tokens[value] = f"<token {chr(ord('A') + len(self.tokens))}>"
        return self.tokens[value]

    def msg(self, m: dict[str, Any], keep_view: bool = False) -> dict[str, Any]:
        """``m`` masked; ``keep_view``: views and rule sets as they are (the transcripts
        elide them themselves)."""
        out: dict[str, Any] = {}
        for k, v in m.items():
            if k == "token" and isinstance(v, str):
                v = self.token(v)
            elif k == "seat_tokens" and isinstance(v, list):
                v = [self.token(t) for t in v]
            elif k in ("seed", "salt", "seed_hash") and isinstance(v, str) and re.fullmatch(r"[0-9a-f]{32,64}", v):
                v = f"<{k}>"
            elif k == "admin_key" and isinstance(v, str):
                v = "<admin key>"
            elif k == "time_ms" and m.get("type") == "pong":
                v = MASKED_TIME_MS  # an int stands for an int: the examples validate (§1)
            elif k == "referee" and isinstance(v, str):
                v = "okgin <version>"
            elif k == "clock" and isinstance(v, dict) and v.get("remaining_ms") not in (None, v.get("move_ms")):
                v = {**v, "remaining_ms": MASKED_REMAINING_MS}  # a prompt sent again: its move's time ran meanwhile
            elif keep_view:
                pass
            elif k == "view" and isinstance(v, dict):
                v = {"...": "View"}
            elif k == "rules" and isinstance(v, dict) and len(v) > 6:
                v = {"variant": v.get("variant"), "knock_limit": v.get("knock_limit"), "...": "..."}
            elif k == "tables" and isinstance(v, list):
                v = [self.msg(t) for t in v]
            out[k] = v
        return out


def fmt(m: dict[str, Any], indent: int = 0) -> str:
    """One message as JSON, wrapped at field boundaries; ``type`` and ``id`` first.

    A field too long for a line that holds a list of maps (``tables``) is written one
    map per line group, each wrapped the same way, indented by two."""
    if m.get("type") is not None and "id" in m:
        m = {"type": m["type"], "id": m["id"], **{k: v for k, v in m.items() if k not in ("type", "id")}}
    pad = " " * indent
    lines: list[str] = []
    cur = pad + "{"
    fresh = True  # nothing after the opening brace or the continuation indent yet
    items = list(m.items())
    for i, (k, v) in enumerate(items):
        last = i == len(items) - 1
        piece = f"{json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" + ("}" if last else ",")
        if len(pad) + 1 + len(piece) > WIDTH and isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            if not fresh:
                lines.append(cur)
            lines.append(f"{pad} {json.dumps(k)}: [")
            shown = [fmt(x, indent + 2) for x in v]
            if any("\n" in x for x in shown):
                lines.append(",\n".join(shown))
            else:  # short maps (a prompt's legal actions): as many to a line as fit
                row = ""
                for j, x in enumerate(shown):
                    x = x + ("," if j < len(shown) - 1 else "")
                    if row and len(row) + 1 + len(x.lstrip()) > WIDTH:
                        lines.append(row)
                        row = ""
                    row = x if not row else row + " " + x.lstrip()
                lines.append(row)
            cur, fresh = pad + " ]" + ("}" if last else ","), False
            continue
        if not fresh and len(cur) + 1 + len(piece) > WIDTH:
            lines.append(cur)
            cur, fresh = pad + " " + piece, False
        else:
            cur, fresh = cur + ("" if fresh else " ") + piece, False
    lines.append(cur if items else pad + "{}")
    return "\n".join(lines)


# ---------------------------------------------------------------------- the referee
@contextmanager
def deterministic_secrets() -> Iterator[None]:
    """The referee's fresh seeds and salts from a counter (this process only)."""
    counter = iter(range(1, 1 << 30))
    saved = (_deals.new_seed, _deals.new_salt)
    _deals.new_seed = lambda: hashlib.sha256(f"example seed {next(counter)}".encode()).hexdigest()
    _deals.new_salt = lambda: hashlib.sha256(f"example salt {next(counter)}".encode()).hexdigest()[:32]
    try:
        yield
    finally:
        _deals.new_seed, _deals.new_salt = saved


class RefereeInThread:
    """A real referee on 127.0.0.1:0, served by its own loop in a background thread."""

    def __init__(self) -> None:
        # configured like `okgin referee`: every table gets its 60 s move clock
        clock = Clock(move_ms=DEFAULT_MOVE_MS)
        self.ref = Referee(RefereeConfig(bind="tcp://127.0.0.1:0", journal_dir=None, admin_key=ADMIN_KEY, clock=clock))
        self.loop = asyncio.new_event_loop()
        started = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(self.loop)
            self.loop.run_until_complete(self.ref.start())
            started.set()
            self.loop.run_until_complete(self.ref.serve_forever())

        self.thread = threading.Thread(target=run, name="example-referee", daemon=True)
        self.thread.start()
        if not started.wait(30):
            raise RuntimeError("the referee did not start within 30 s")
        assert self.ref.endpoint is not None
        self.endpoint: str = self.ref.endpoint

    def call(self, fn: Callable[[], Any]) -> Any:
        async def wrapper() -> Any:
            return fn()

        return asyncio.run_coroutine_threadsafe(wrapper(), self.loop).result(10)

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.ref.stop("examples done"), self.loop).result(10)
        self.thread.join(10)
        self.loop.close()


class Client:
    """A raw DEALER client; records what it sends and receives for the examples."""

    def __init__(self, ctx: zmq.Context[zmq.Socket[bytes]], endpoint: str) -> None:
        self.sock = ctx.socket(zmq.DEALER)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.setsockopt(zmq.SNDTIMEO, TIMEOUT_MS)
        self.sock.connect(endpoint)
        self.token: str | None = None
        self.inbox: list[dict[str, Any]] = []

    def send(self, m: dict[str, Any]) -> dict[str, Any]:
        self.sock.send(msgpack.packb(m, use_bin_type=True))
        return m

    def recv(self) -> dict[str, Any]:
        if not self.sock.poll(TIMEOUT_MS):
            raise TimeoutError("the referee did not answer")
        m: dict[str, Any] = msgpack.unpackb(self.sock.recv(), raw=False)
        return m

    def wait(self, pred: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """The first message, kept or new, that ``pred`` accepts; the others are kept."""
        for i, m in enumerate(self.inbox):
            if pred(m):
                return self.inbox.pop(i)
        for _ in range(10000):
            m = self.recv()
            if pred(m):
                return m
            self.inbox.append(m)
        raise RuntimeError("message never came")

    def ask(self, m: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """Send a request (with its id) and return (request, the reply echoing the id)."""
        self.send(m)
        return m, self.wait(lambda r: r.get("id") == m["id"])

    def hello(self, name: str, **extra: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        req, w = self.ask(
            {"type": "hello", "id": 1, "protocol": 1, "minor": PROTOCOL_MINOR, "role": "player", "name": name, **extra}
        )
        self.token = w.get("token")
        return req, w

    def close(self) -> None:
        self.sock.close(0)
