"""Hardening test kit: referee processes, raw clients, schema checks, expected records.

Everything here is real: ``okgin referee`` runs as its own process on 127.0.0.1 (so it
can be SIGKILLed and restarted), clients are plain pyzmq DEALER sockets speaking msgpack
by hand (nothing of the SDK, so the tests see exactly the bytes the referee sends), and
replies are checked against ``protocol.schema.json`` with every map closed.

Two checks of an ``error`` exist: :func:`check_error` mirrors the closed schema of
``error`` field by field in plain Python (microseconds; fuzz runs check every reply with
it) and :func:`validate_message` runs the reference ``jsonschema`` validator
(milliseconds; fuzz runs apply it to a sample, which also proves the two agree).
"""

from __future__ import annotations

import copy
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import jsonschema
import msgpack
import zmq
from bounded import dealer, readline

from okgin import Action, Game, RuleSet
from okgin.protocol import ERRORS

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "protocol.schema.json").read_text())
RECV_TIMEOUT_MS = 20000  # an upper bound for failures only; never asserted on
ADMIN_KEY = "hardening-admin-key"


# ------------------------------------------------------------------ schema checks
def _closed(schema: Any) -> Any:
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


def validate_message(msg: dict[str, Any], direction: str = "R2C") -> None:
    """Validate one decoded message against its closed schema definition."""
    t = msg.get("type")
    info = SCHEMA["x-messages"].get(t)
    assert info is not None, f"message type {t!r} is not in the schema: {str(msg)[:300]}"
    if direction == "R2C":
        assert info["direction"] in ("referee to client", "both ways"), f"{t} is not a referee message"
    else:
        assert info["client_may_send"], f"{t} is not a client message"
    v = _validators.get(t)  # type: ignore[arg-type]
    if v is None:
        sub = {"$defs": STRICT["$defs"], **STRICT["$defs"][f"msg_{t}"]}
        v = _validators[t] = jsonschema.Draft202012Validator(sub)  # type: ignore[index]
    errors = sorted(v.iter_errors(msg), key=lambda e: list(e.path))
    assert not errors, (
        f"{t} fails the schema: {errors[0].message} at {list(errors[0].path)}: {json.dumps(msg, default=repr)[:400]}"
    )


_ERROR_FIELDS = {"type", "id", "code", "name", "message", "request", "table"}


def check_error(m: Any) -> dict[str, Any]:
    """Assert ``m`` is an ``error`` exactly as the closed schema and protocol.md §9 say."""
    assert isinstance(m, dict) and m.get("type") == "error", f"not an error: {str(m)[:300]}"
    extra = set(m) - _ERROR_FIELDS
    assert not extra, f"undocumented fields {extra} in {m}"
    assert {"code", "name", "message", "request", "table"} <= set(m), f"missing fields in {m}"
    assert isinstance(m["name"], str) and m["name"] in ERRORS, f"unknown error name in {m}"
    assert type(m["code"]) is int and m["code"] == ERRORS[m["name"]][0], f"code does not match name in {m}"
    assert isinstance(m["message"], str) and m["message"], f"empty sentence in {m}"
    assert m["request"] is None or isinstance(m["request"], str), m
    assert m["table"] is None or isinstance(m["table"], str), m
    if "id" in m:
        i = m["id"]
        assert (type(i) is int) or (isinstance(i, str) and len(i) <= 64), f"bad id echo in {m}"
    return m


def unpack(frame: bytes) -> dict[str, Any]:
    """Decode a referee frame strictly: one msgpack map with str keys, str never bin."""
    m = msgpack.unpackb(frame, raw=False, strict_map_key=True)
    assert isinstance(m, dict), f"the referee sent a non-map {m!r}"
    return m


# ------------------------------------------------------------------ referee process
ENDPOINT_RE = re.compile(r"okgin referee listening on (tcp://127\.0\.0\.1:(\d+))$")


class RefProc:
    """``okgin referee`` as a subprocess on 127.0.0.1 (port 0 unless ``port`` is given).

    Standard error goes to a file so that a test can show it and look for ``internal``
    errors the referee logged. Stop it with :meth:`stop` (SIGTERM) or :meth:`kill9`.
    """

    def __init__(
        self,
        workdir: Path,
        *args: str,
        port: int = 0,
        journal_dir: Path | None = None,
        admin_key: str | None = ADMIN_KEY,
        label: str = "ref",
    ) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.journal_dir = journal_dir or workdir / "journals"
        self.stderr_path = workdir / f"{label}-{int(time.time() * 1000)}.stderr"
        self.stdout_lines: list[str] = []
        cmd = [
            sys.executable,
            "-m",
            "okgin",
            "referee",
            "--bind",
            f"tcp://127.0.0.1:{port}",
            "--journal-dir",
            str(self.journal_dir),
            *args,
        ]
        if admin_key is not None:
            cmd += ["--admin-key", admin_key]
        self._err = self.stderr_path.open("wb")
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self._err, stdin=subprocess.DEVNULL, text=True)
        assert self.proc.stdout is not None
        first = readline(self.proc.stdout, 60, "the referee, its endpoint line").strip()
        m = ENDPOINT_RE.match(first)
        if not m:
            self.proc.wait(10)
            raise AssertionError(f"referee did not start: {first!r}; stderr: {self.stderr()[-2000:]}")
        self.endpoint = m.group(1)
        self.port = int(m.group(2))
        self.pid = self.proc.pid

    def readline(self) -> str:
        assert self.proc.stdout is not None
        line = readline(self.proc.stdout, 60, "the referee").strip()
        self.stdout_lines.append(line)
        return line

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def stderr(self) -> str:
        if not self._err.closed:
            self._err.flush()
        return self.stderr_path.read_text(errors="replace")

    def internal_errors(self) -> list[str]:
        return [ln for ln in self.stderr().splitlines() if "internal error" in ln]

    def rss_kib(self) -> int:
        """Peak resident set size (VmHWM) of the referee, in KiB."""
        for ln in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if ln.startswith("VmHWM:"):
                return int(ln.split()[1])
        return 0

    def kill9(self) -> None:
        if self.alive:
            os.kill(self.pid, signal.SIGKILL)
        self.proc.wait(20)
        self._close()

    def stop(self) -> int | None:
        if self.alive:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                os.kill(self.pid, signal.SIGKILL)
                self.proc.wait(20)
        self._close()
        return self.proc.returncode

    def _close(self) -> None:
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self._err.close()


# ------------------------------------------------------------------ raw client
CTX = zmq.Context.instance()


class Raw:
    """A raw DEALER client (msgpack by hand). ``validate``: run every received message
    through the closed schema (``all``), only errors through :func:`check_error`
    (``errors``), or nothing (``none``)."""

    def __init__(
        self,
        endpoint: str,
        validate: str = "all",
        rcvhwm: int | None = None,
        rcvbuf: int | None = None,
        curve: tuple[bytes, bytes, bytes] | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.validate = validate
        self.curve = curve
        self.rcvhwm, self.rcvbuf = rcvhwm, rcvbuf
        self.received: list[dict[str, Any]] = []
        self.token: str | None = None
        self.name = "raw"
        self.role = "player"
        self._ids = 0
        self.sock = self._open()

    def _open(self) -> zmq.Socket:
        opts = {k: v for k, v in (("RCVHWM", self.rcvhwm), ("RCVBUF", self.rcvbuf)) if v is not None}
        return dealer(self.endpoint, ctx=CTX, timeout_ms=RECV_TIMEOUT_MS, curve=self.curve, **opts)  # sends bounded too

    def next_id(self) -> int:
        self._ids += 1
        return self._ids

    def send(self, msg: dict[str, Any]) -> None:
        self.sock.send(msgpack.packb(msg, use_bin_type=True))

    def send_raw(self, *frames: bytes) -> None:
        self.sock.send_multipart(list(frames))

    def recv(self, timeout_ms: int = RECV_TIMEOUT_MS) -> dict[str, Any]:
        if not self.sock.poll(timeout_ms):
            raise TimeoutError(f"no message within {timeout_ms} ms (last: {self.received[-1:]})")
        m = unpack(self.sock.recv())
        if m.get("type") == "error":
            check_error(m)
        if self.validate == "all":
            validate_message(m)
        self.received.append(m)
        return m

    def wait_for(
        self, pred: Callable[[dict[str, Any]], bool], timeout_ms: int = RECV_TIMEOUT_MS, limit: int = 1_000_000
    ) -> dict[str, Any]:
        for _ in range(limit):
            m = self.recv(timeout_ms)
            if pred(m):
                return m
        raise AssertionError("predicate never satisfied")

    def request(self, msg: dict[str, Any], *types: str) -> dict[str, Any]:
        rid = self.next_id()
        self.send({**msg, "id": rid})
        m = self.wait_for(lambda m: m.get("id") == rid)
        if types:
            assert m["type"] in types, f"expected {types} for {msg['type']}, got {m}"
        return m

    def hello(self, name: str = "raw", role: str = "player", **extra: Any) -> dict[str, Any]:
        self.name, self.role = name, role
        w = self.request({"type": "hello", "protocol": 1, "role": role, "name": name, **extra}, "welcome")
        self.token = w["token"]
        return w

    def reopen(self) -> None:
        """A new DEALER (a new routing id), as a reconnecting client does (protocol.md §10)."""
        self.sock.close(0)
        self.sock = self._open()

    def resume(self) -> dict[str, Any]:
        """Reopen and say hello with the saved token."""
        assert self.token is not None
        self.reopen()
        return self.hello(self.name, self.role, token=self.token)

    def close(self) -> None:
        self.sock.close(0)


def error_of(m: dict[str, Any], name: str) -> dict[str, Any]:
    check_error(m)
    assert m["name"] == name, f"expected error {name}, got {m['name']}: {m['message']}"
    return m


# ------------------------------------------------------------------ deterministic play
RANKS = "A23456789TJQK"


def card_value(c: str) -> int:
    r = RANKS.index(c[0])
    return r + 1 if r < 10 else 10


def simple_choice(legal: list[dict[str, Any]]) -> dict[str, Any]:
    """Knock when allowed, refuse the upcard, draw from the stock, throw the highest card.
    Deterministic, so a game's record follows from its seed alone."""
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


def expected_record(
    rules: dict[str, Any] | RuleSet, seed: int | str, choose: Callable[[list[dict[str, Any]]], dict[str, Any]] = simple_choice
) -> dict[str, Any]:
    """The record of a game played by ``choose`` for every seat, straight on the engine."""
    rs = rules if isinstance(rules, RuleSet) else RuleSet.from_dict(dict(rules))
    g = Game(rs, seed)
    while not g.is_over:
        legal = [a.to_wire() for a in g.legal_actions()]
        g.apply(Action.from_wire(choose(legal)), seat=g.current_player)
    return g.to_record()


def journal_entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(ln) for ln in path.read_text().splitlines() if ln.strip()]


def journal_of(journal_dir: Path, table: str, game: int = 1) -> Path:
    files = sorted(journal_dir.glob(f"{table}-g{game}-*.jsonl"))
    assert len(files) == 1, f"expected one journal for {table} game {game}, found {files}"
    return files[0]


def journal_end(journal_dir: Path, table: str, game: int = 1, timeout_s: float = 20.0) -> dict[str, Any]:
    """The ``end`` line of a table's game journal (it is written just before game_end is sent)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            entries = journal_entries(journal_of(journal_dir, table, game))
        except AssertionError:
            entries = []
        if entries and entries[-1]["t"] == "end":
            return entries[-1]
        if time.monotonic() > deadline:
            raise AssertionError(f"no end line in the journal of {table} game {game}: {entries[-3:]}")
        time.sleep(0.05)


class Seats:
    """Raw clients seated at reserved tables, driven by one poller with a choice function.

    ``drive`` answers every prompt with ``choose`` (default :func:`simple_choice`), sends
    heartbeats while idle, and records each table's ``game_end``. It is the honest side
    of the hardening tests: the games it plays must end exactly as on the engine.
    """

    def __init__(self) -> None:
        self.clients: list[tuple[str, int, Raw]] = []
        self.ends: dict[tuple[str, int], dict[str, Any]] = {}
        self.on_message: Callable[[str, int, Raw, dict[str, Any]], None] | None = None
        self.resume_on_hello_first = True

    def add(self, table: str, seat: int, client: Raw) -> None:
        self.clients.append((table, seat, client))

    def done(self, tables: Iterable[str] | None = None) -> bool:
        want = {(t, s) for t, s, _ in self.clients if tables is None or t in tables}
        return want <= set(self.ends)

    def drive(
        self,
        until: Callable[[], bool] | None = None,
        choose: Callable[[list[dict[str, Any]]], dict[str, Any]] = simple_choice,
        idle_limit_ms: int = RECV_TIMEOUT_MS,
        beat_ms: int = 500,
        keepalive: Sequence[Raw] = (),
    ) -> None:
        """Play every seat until ``until()`` (default: every game ended). ``keepalive``: other
        clients (a spectator) that get a heartbeat on every beat and whose messages are read
        and dropped, so that a session idle through a long drive is not taken for gone: a
        loaded machine can make the drive outlast the referee's liveness."""
        stop = until or self.done
        idle = 0
        last_beat = time.monotonic()
        while not stop():
            poller = zmq.Poller()
            by_sock = {}
            for t, s, c in self.clients:
                poller.register(c.sock, zmq.POLLIN)
                by_sock[c.sock] = (t, s, c)
            ready = dict(poller.poll(100))
            now = time.monotonic()
            if (now - last_beat) * 1000 >= beat_ms:
                last_beat = now
                for _, _, c in self.clients:
                    c.send({"type": "heartbeat"})
                for k in keepalive:
                    k.send({"type": "heartbeat"})
                    while k.sock.poll(0):
                        k.sock.recv()
            if not ready:
                idle += 100
                if idle > idle_limit_ms:
                    raise TimeoutError(f"no message for {idle_limit_ms} ms; ended: {sorted(self.ends)}")
                continue
            idle = 0
            for sock in ready:
                t, s, c = by_sock[sock]
                while c.sock.poll(0):
                    m = c.recv()
                    if self.on_message is not None:
                        self.on_message(t, s, c, m)
                    if m["type"] == "error" and m["name"] == "hello_first" and c.token is not None and self.resume_on_hello_first:
                        c.resume()  # the referee lost this connection (restart, silence): protocol.md §10.1
                        break
                    if m.get("table") != t:
                        continue
                    if m["type"] == "prompt":
                        c.send({"type": "act", "table": t, "seq": m["seq"], "action": choose(m["legal"])})
                    elif m["type"] == "game_end":
                        self.ends[(t, s)] = m

    def close(self) -> None:
        for _, _, c in self.clients:
            c.close()


def admin(endpoint: str, key: str | None = ADMIN_KEY, validate: str = "all") -> Raw:
    a = Raw(endpoint, validate=validate)
    a.hello("organiser", role="admin", **({"admin_key": key} if key else {}))
    return a


def reserved_table(adm: Raw, table: str, seed: int | str, variant: str = "oklahoma", **extra: Any) -> list[str]:
    """Create a reserved admin table; return its seat tokens."""
    m = adm.request(
        {"type": "create_table", "table": table, "variant": variant, "seed": seed, "reserved": True, **extra}, "table_created"
    )
    return m["seat_tokens"]


def seat_all(endpoint: str, table: str, tokens: list[str], seats: Seats, validate: str = "all") -> list[Raw]:
    out = []
    for s, tok in enumerate(tokens):
        c = Raw(endpoint, validate=validate)
        c.hello(f"{table}-p{s}", token=tok)
        seats.add(table, s, c)
        out.append(c)
    return out


def bot_process(
    endpoint: str, token: str, logdir: Path, name: str, *extra: str, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """``okgin bot simple`` on a reserved seat, as a separate process (its stderr in ``logdir``)."""
    return subprocess.Popen(
        [sys.executable, "-m", "okgin", "bot", "simple", "--connect", endpoint, "--token", token, "--name", name, "-q", *extra],
        stdout=subprocess.DEVNULL,
        stderr=open(logdir / f"{name}.log", "wb"),
        stdin=subprocess.DEVNULL,
        env=env,
    )
