"""Test harness: a real referee on loopback TCP, and raw pyzmq clients (no SDK).

The referee runs on its own event loop in a background thread, exactly as an embedding
program would run it; clients are plain synchronous DEALER sockets in the test thread,
speaking msgpack frames by hand. Messages a client receives, and messages a test sends
as valid, are validated against ``protocol.schema.json`` with every map closed (no
undocumented field may appear), so the schema, the text and the referee cannot drift.

Validation with the reference ``jsonschema`` costs milliseconds per view-carrying
message, so clients validate ``"all"`` messages in the dedicated schema tests and, by
default, a ``"sample"``: the first few of every type, then one in 25.

Admin is closed on a referee without an admin key, so every harness referee gets
:data:`ADMIN_KEY` unless the test gives its own, and :meth:`Client.hello` presents it for
role admin unless the test passes ``admin_key`` itself.
"""

from __future__ import annotations

import asyncio
import copy
import json
import secrets
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import msgpack
import zmq
from bounded import dealer

from referee.config import RefereeConfig
from referee.server import Referee

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "protocol.schema.json").read_text())
RECV_TIMEOUT_MS = 10000  # an upper bound for failures only; never asserted on
ADMIN_KEY = secrets.token_hex(16)  # every harness referee's admin key, unless a test sets its own


def _closed(schema: Any) -> Any:
    """A copy of the schema where every object with properties allows no others."""
    if isinstance(schema, dict):
        out = {k: _closed(v) for k, v in schema.items()}
        if out.get("type") == "object" and "properties" in out:
            out.setdefault("additionalProperties", False)
        return out
    if isinstance(schema, list):
        return [_closed(v) for v in schema]
    return schema


STRICT = _closed(copy.deepcopy(SCHEMA))
_validators: dict[str, jsonschema.Draft202012Validator] = {}


def validate_message(msg: dict[str, Any], direction: str) -> None:
    """Validate one decoded message against its schema definition (strict)."""
    t = msg.get("type")
    info = SCHEMA["x-messages"].get(t)
    assert info is not None, f"message type {t!r} is not in the schema"
    if direction == "R2C":
        assert info["direction"] in ("referee to client", "both ways"), f"{t} is not a referee message"
    else:
        assert info["client_may_send"], f"{t} is not a client message"
    v = _validators.get(t)
    if v is None:
        sub = {"$defs": STRICT["$defs"], **STRICT["$defs"][f"msg_{t}"]}
        v = _validators[t] = jsonschema.Draft202012Validator(sub)
    errors = sorted(v.iter_errors(msg), key=lambda e: list(e.path))
    assert not errors, f"{t} fails the schema: {errors[0].message} at {list(errors[0].path)}: {json.dumps(msg)[:400]}"


class RefereeThread:
    """A real :class:`Referee` serving on 127.0.0.1:0 from a background thread."""

    def __init__(self, extension: Any = None, **config: Any) -> None:
        config.setdefault("bind", "tcp://127.0.0.1:0")
        config.setdefault("journal_dir", None)
        config.setdefault("admin_key", ADMIN_KEY)
        self.config = RefereeConfig(**config)
        self.ref = Referee(self.config, extension)  # extension: referee.extension (tests/referee/test_ref_extension.py)
        self.loop = asyncio.new_event_loop()
        started = threading.Event()
        self.error: BaseException | None = None

        def run() -> None:
            asyncio.set_event_loop(self.loop)
            try:
                self.loop.run_until_complete(self.ref.start())
            except BaseException as e:
                self.error = e
                started.set()
                return
            started.set()
            self.loop.run_until_complete(self.ref.serve_forever())

        self.thread = threading.Thread(target=run, name="referee", daemon=True)
        self.thread.start()
        assert started.wait(30), "the referee thread did not start within 30 s"
        if self.error is not None:
            raise self.error
        assert self.ref.endpoint is not None
        self.endpoint: str = self.ref.endpoint

    def call(self, fn: Callable[[], Any]) -> Any:
        """Run ``fn`` on the referee's loop (to read or set its state safely)."""

        async def wrapper() -> Any:
            return fn()

        return asyncio.run_coroutine_threadsafe(wrapper(), self.loop).result(10)

    def stop(self) -> None:
        if self.thread.is_alive():
            asyncio.run_coroutine_threadsafe(self.ref.stop("test over"), self.loop).result(10)
            self.thread.join(10)
        self.loop.close()


class Client:
    """A raw DEALER client: msgpack frames by hand, every message schema-checked."""

    ctx = zmq.Context.instance()

    def __init__(self, endpoint: str, validate: str = "sample") -> None:
        assert validate in ("all", "sample", "none")
        self.endpoint = endpoint
        self.validate = validate
        self._seen: dict[str, int] = {}
        self.sock = dealer(endpoint, ctx=self.ctx, timeout_ms=RECV_TIMEOUT_MS)  # sends bounded too (tests/bounded.py)
        self.received: list[dict[str, Any]] = []
        self.token: str | None = None
        self._next_id = 0

    def next_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def send(self, msg: dict[str, Any], check: bool = True) -> None:
        if check and self.validate != "none":
            validate_message(msg, "C2R")
        self.sock.send(msgpack.packb(msg, use_bin_type=True))

    def send_raw(self, *frames: bytes) -> None:
        self.sock.send_multipart(list(frames))

    def _should_validate(self, msg: dict[str, Any]) -> bool:
        if self.validate == "none":
            return False
        k = self._seen.get(msg.get("type"), 0)  # type: ignore[arg-type]
        self._seen[msg.get("type")] = k + 1  # type: ignore[index]
        return self.validate == "all" or k < 3 or k % 25 == 0

    def recv(self, timeout_ms: int = RECV_TIMEOUT_MS) -> dict[str, Any]:
        if not self.sock.poll(timeout_ms):
            raise TimeoutError(f"no message within {timeout_ms} ms (last received: {self.received[-1:]})")
        msg = msgpack.unpackb(self.sock.recv(), raw=False)
        if self._should_validate(msg):
            validate_message(msg, "R2C")
        self.received.append(msg)
        return msg

    def expect(self, *types: str, timeout_ms: int = RECV_TIMEOUT_MS, skip: tuple[str, ...] = ("heartbeat",)) -> dict[str, Any]:
        """The next message that is not skipped; it must be one of ``types``."""
        while True:
            m = self.recv(timeout_ms)
            if m["type"] in skip and m["type"] not in types:
                continue
            assert m["type"] in types, f"expected {types}, got {m}"
            return m

    def wait_for(
        self, pred: Callable[[dict[str, Any]], bool], timeout_ms: int = RECV_TIMEOUT_MS, limit: int = 100000
    ) -> dict[str, Any]:
        """Receive until a message satisfies ``pred`` (others are kept in ``received``)."""
        for _ in range(limit):
            m = self.recv(timeout_ms)
            if pred(m):
                return m
        raise AssertionError("predicate never satisfied")

    def request(self, msg: dict[str, Any], *types: str, check: bool = True) -> dict[str, Any]:
        """Send with a fresh id; return the reply (or error) echoing it."""
        rid = self.next_id()
        self.send({**msg, "id": rid}, check=check)
        m = self.wait_for(lambda m: m.get("id") == rid)
        if types:
            assert m["type"] in types, f"expected {types} for {msg['type']}, got {m}"
        return m

    def hello(self, name: str = "tester", role: str = "player", **extra: Any) -> dict[str, Any]:
        if role == "admin":
            extra.setdefault("admin_key", ADMIN_KEY)
        w = self.request({"type": "hello", "protocol": 1, "role": role, "name": name, **extra}, "welcome")
        self.token = w["token"]
        return w

    def close(self) -> None:
        self.sock.close(0)


def error_of(m: dict[str, Any], name: str) -> dict[str, Any]:
    assert m["type"] == "error", f"expected error {name}, got {m}"
    assert m["name"] == name, f"expected error {name}, got {m['name']}: {m['message']}"
    from okgin.protocol import ERRORS

    assert m["code"] == ERRORS[name][0]
    assert isinstance(m["message"], str) and m["message"]
    return m


# --------------------------------------------------------------- a simple strategy
RANKS = "A23456789TJQK"


def card_value(c: str) -> int:
    r = RANKS.index(c[0])
    return r + 1 if r < 10 else 10


def simple_choice(legal: list[dict[str, Any]]) -> dict[str, Any]:
    """Knock when allowed, refuse the upcard, draw from the stock, throw the highest card.

    Cheap and deterministic; its games end in reasonable time (it lowers its deadwood).
    """
    knocks = [a for a in legal if a["kind"] in ("knock", "big_gin")]
    if knocks:
        return knocks[0]
    for k in ("pass", "draw_stock"):
        for a in legal:
            if a["kind"] == k:
                return a
    discards = [a for a in legal if a["kind"] == "discard"]
    if discards:
        return max(discards, key=lambda a: (card_value(a["card"]), a["card"]))
    return legal[0]


def play_until_end(
    clients: dict[int, Client],
    table: str,
    choose: Callable[[int, dict[str, Any]], dict[str, Any] | None] | None = None,
    advise: bool = False,
    max_msgs: int = 200000,
) -> dict[int, dict[str, Any]]:
    """Drive seated clients (seat -> Client) until every one has its game_end.

    ``choose(seat, prompt)`` may return an action (default: :func:`simple_choice`).
    Polls all sockets together, so prompts are answered in the order they come.
    """
    poller = zmq.Poller()
    by_sock = {}
    for seat, c in clients.items():
        poller.register(c.sock, zmq.POLLIN)
        by_sock[c.sock] = seat
    ends: dict[int, dict[str, Any]] = {}
    idle = 0
    for _ in range(max_msgs):
        if len(ends) == len(clients):
            return ends
        ready = dict(poller.poll(100))
        if not ready:
            # a well-behaved client beats while it waits (protocol.md §10)
            idle += 100
            if idle > RECV_TIMEOUT_MS:
                raise TimeoutError(f"no message for {RECV_TIMEOUT_MS} ms; ends so far {list(ends)}")
            for c in clients.values():
                c.send({"type": "heartbeat"})
            continue
        idle = 0
        for sock in ready:
            seat = by_sock[sock]
            c = clients[seat]
            m = c.recv()
            if m.get("table") != table:
                continue
            if m["type"] == "prompt":
                a = choose(seat, m) if choose else None
                c.send({"type": "act", "table": table, "seq": m["seq"], "action": a or simple_choice(m["legal"])})
            elif m["type"] == "advise_prompt" and advise:
                c.send(
                    {"type": "advise", "table": table, "seq": m["seq"], "action": simple_choice(m["legal"]), "text": "try this"}
                )
            elif m["type"] == "game_end":
                ends[seat] = m
    raise AssertionError("game did not end")
