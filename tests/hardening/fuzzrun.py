"""The socket fuzz run shared by the normal-suite, CI and OKGIN_SLOW tests.

One referee process; on it, at the same time:

- **honest games** (a thread): reserved tables with fixed seeds, two or three raw
  clients answering every prompt with :func:`hkit.simple_choice`. Each finished game's
  journal record must equal the record of the same seed played straight on the engine:
  hostile traffic on other connections changed nothing at their tables.
- **garbage connections**: batches of :func:`hostile.garbage` frames, each batch closed
  by a ``ping`` barrier. Every reply before the barrier's answer must be an ``error``
  valid per the schema, and there must be exactly one per hostile frame.
- **unwelcomed connections**: the same, before any ``hello`` (``hello_first`` and the
  framing errors).
- **chaos players**: welcomed players sending :func:`hostile.structured` messages of
  every type, seated in pairs at their own tables, answering prompts at random: a legal
  move, a stale ``seq``, a random action, a resignation, a rematch. Every reply must
  validate against the closed schema.

Batches are sent without waiting (ZeroMQ queues them), so the run is bounded by the
referee's speed, not by round trips. Returns counts; the caller asserts.
"""

from __future__ import annotations

import random
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .hkit import (
    Raw,
    RefProc,
    Seats,
    admin,
    check_error,
    error_of,
    expected_record,
    journal_end,
    reserved_table,
    seat_all,
    validate_message,
)
from .hostile import garbage, structured


@dataclass
class FuzzReport:
    hostile: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    replies: Counter[str] = field(default_factory=Counter)
    schema_checked: int = 0
    honest_games: int = 0
    honest_failures: list[str] = field(default_factory=list)


class HonestTables(threading.Thread):
    """Plays reserved-seat games one after another until told to stop (see module doc)."""

    def __init__(self, endpoint: str, journal_dir: Path, seed: int) -> None:
        super().__init__(name="honest", daemon=True)
        self.endpoint, self.journal_dir, self.seed = endpoint, journal_dir, seed
        self.stop_flag = threading.Event()
        self.games = 0
        self.current: str | None = None  # the table being played now (chaos clients watch it)
        self.failures: list[str] = []
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            adm = admin(self.endpoint)
            k = 0
            while not self.stop_flag.is_set() or k == 0:
                variant = "box" if k % 3 == 2 else "oklahoma"
                table, seed = f"honest-{k}", self.seed * 1000 + k
                rules = {"variant": variant, "target_score": 60}
                toks = reserved_table(adm, table, seed, variant, rules=rules)
                self.current = table
                seats = Seats()
                seat_all(self.endpoint, table, toks, seats, validate="errors")
                seats.drive()
                seats.close()
                end = journal_end(self.journal_dir, table)
                want = expected_record(rules, seed)
                if end["record"] != want or end["termination"] != "normal":
                    self.failures.append(f"{table}: record differs from the engine's (termination {end['termination']})")
                adm.request({"type": "close_table", "table": table}, "ok")
                self.games += 1
                k += 1
            adm.close()
        except BaseException as e:  # reported to the test
            self.error = e


def _read_until(
    c: Raw, barrier: Any, rep: FuzzReport, must_be_errors: bool, rng: random.Random, sample: int
) -> list[dict[str, Any]]:
    """Receive up to the message echoing ``barrier``; check everything before it."""
    got = []
    while True:
        m = c.recv()
        t = m.get("type")
        if m.get("id") == barrier and t in ("pong", "error"):
            if t == "error":
                check_error(m)
            return got
        if t == "heartbeat":
            continue
        rep.replies[t] += 1
        if t == "error":
            check_error(m)
            rep.errors[m["name"]] += 1
        elif must_be_errors:
            raise AssertionError(f"a hostile frame earned a {t}, not an error: {str(m)[:300]}")
        if rng.randrange(sample) == 0 or t not in ("error", "event", "prompt", "snapshot", "hand_end"):
            validate_message(m)
            rep.schema_checked += 1
        got.append(m)


def fuzz(
    workdir: Path, total: int, seed: int = 1, batch: int = 250, garbage_share: float = 0.85, sample: int = 40
) -> tuple[FuzzReport, RefProc]:
    """Send ``total`` hostile messages to a fresh referee; return the report and the
    (still running) referee for the caller's last checks."""
    rng = random.Random(seed)
    # No rate limit: each garbage connection sends far faster than a player, on purpose,
    # and every frame must be read and answered (test_security.py tests the limit itself).
    ref = RefProc(workdir, "--rate-limit", "0", label="fuzz")
    rep = FuzzReport()
    honest = HonestTables(ref.endpoint, ref.journal_dir, seed)
    honest.start()
    garbage_conns = []
    for i in range(3):
        c = Raw(ref.endpoint, validate="none")
        c.hello(f"garbage{i}")
        garbage_conns.append(c)
    unwelcomed = [Raw(ref.endpoint, validate="none") for _ in range(2)]
    chaos: list[Raw] = []
    chaos_tables = [f"fuzz-{i}" for i in range(3)]
    for i in range(6):
        c = Raw(ref.endpoint, validate="none")
        c.hello(f"chaos{i}")
        chaos.append(c)
    for i, c in enumerate(chaos):  # pairs at their own named tables
        c.request({"type": "join", "table": chaos_tables[i // 2]}, "seated")
    pending: dict[int, list[dict[str, Any]]] = {}  # chaos client -> prompts not yet answered
    round_no = 0
    try:
        while rep.hostile < total:
            round_no += 1
            plan: list[tuple[Raw, str, Any]] = []
            for c in garbage_conns + unwelcomed:
                n = 0
                welcomed = c not in unwelcomed
                for _ in range(batch):
                    c.send_raw(*garbage(rng, welcomed))
                    n += 1
                barrier = f"b{round_no}"
                c.send({"type": "ping", "id": barrier})
                rep.hostile += n
                plan.append((c, "garbage", (barrier, n)))
            for i, c in enumerate(chaos):
                n = int(batch * (1 - garbage_share) / garbage_share / len(chaos) * (len(garbage_conns) + len(unwelcomed))) or 1
                for _ in range(n):
                    c.send(structured(rng, [*chaos_tables, honest.current or "fuzz-0"]))
                for p in pending.pop(i, []):
                    c.send(_chaos_answer(rng, p))
                    n += 1
                barrier = f"b{round_no}"
                c.send({"type": "ping", "id": barrier})
                rep.hostile += n
                plan.append((c, "chaos", (barrier, i)))
            for c, kind, info in plan:
                if kind == "garbage":
                    barrier, n = info
                    before = sum(rep.errors.values())
                    _read_until(c, barrier, rep, True, rng, sample)
                    got = sum(rep.errors.values()) - before
                    assert got == n, f"{n} hostile frames earned {got} errors (round {round_no}, seed {seed})"
                else:
                    barrier, i = info
                    msgs = _read_until(c, barrier, rep, False, rng, sample)
                    pending[i] = [m for m in msgs if m["type"] == "prompt"]
                    if any(m["type"] == "error" and m["name"] == "hello_first" for m in msgs):
                        c.hello(f"chaos{i}")  # never happens (no bye is sent); kept for safety
            assert ref.alive, f"the referee died: {ref.stderr()[-3000:]}"
    finally:
        honest.stop_flag.set()
        honest.join(600)
        for c in garbage_conns + unwelcomed + chaos:
            c.close()
    if honest.error is not None:
        raise honest.error
    rep.honest_games = honest.games
    rep.honest_failures = honest.failures
    return rep, ref


def _chaos_answer(rng: random.Random, p: dict[str, Any]) -> dict[str, Any]:
    """A chaos player's answer to its prompt: mostly legal, sometimes not at all."""
    r = rng.random()
    base = {"type": "act", "table": p["table"], "seq": p["seq"], "action": rng.choice(p["legal"])}
    if r < 0.6:
        return base
    if r < 0.7:
        return {**base, "seq": p["seq"] - rng.randrange(1, 4)}
    if r < 0.8:
        return {
            **base,
            "action": {"kind": rng.choice(["discard", "knock", "take", "fly"]), "card": rng.choice(["As", "Zz", "Td"])},
        }
    if r < 0.85:
        return {**base, "seat": 1 - p["seat"]}
    if r < 0.9:
        return {"type": "resign", "table": p["table"], "id": "r"}
    if r < 0.95:
        return {"type": "rematch", "table": p["table"], "id": "m"}
    return {"type": "sync", "table": p["table"], "id": "s"}


def socket_is_usable(endpoint: str) -> None:
    """After the run a fresh client must get full service."""
    c = Raw(endpoint)
    c.hello("after")
    assert c.request({"type": "ping"}, "pong")["type"] == "pong"
    error_of(c.request({"type": "watch", "table": "no-such"}), "no_such_table")
    c.close()
