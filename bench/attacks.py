"""The attacks of ``bench/load.py --attack`` (issue 14): one function each.

Each attack runs in its own process (``load.py --attacker NAME``), against one referee on
127.0.0.1, from ``start`` until ``until`` at the latest, with a cap on what it sends: it
stops by itself. None of them ever blocks: every send is NOBLOCK (a full queue is
counted and retried later), every wait is a poll with a timeout, and errors,
disconnections and refusals (``too_large``, ``limit_reached``, ``rate_limited``, frames
dropped by ZMQ_MAXMSGSIZE) are counted, not fatal. Each returns a dict of what it did
(printed as the process's last JSON line).

Message shapes: protocol.md (hello 5.1, act 5.12, advise 5.14, create_table 5.20, join 5.8).
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

import msgpack
import zmq
from zmq.utils.monitor import recv_monitor_message

packb = msgpack.Packer(use_bin_type=True).pack
MAX_MESSAGE_BYTES = 65536  # protocol.md 2: welcome.max_message_bytes in protocol 1
HARD_MAX_BYTES = 1 << 20  # the referee's ZMQ_MAXMSGSIZE


def unpack(frame: bytes) -> dict[str, Any]:
    try:
        m = msgpack.unpackb(frame, raw=False, strict_map_key=False)
    except Exception:
        return {"type": "?undecodable"}
    return m if isinstance(m, dict) else {"type": "?not_a_map"}


class Conn:
    """One DEALER to the referee that never blocks and counts what happens to it."""

    def __init__(self, ctx: zmq.Context, endpoint: str, stats: Counter, *, rcvhwm: int | None = None,
                 sndhwm: int | None = None, monitor: bool = False) -> None:
        self.stats = stats
        s = ctx.socket(zmq.DEALER)
        s.setsockopt(zmq.LINGER, 0)
        if rcvhwm is not None:
            s.setsockopt(zmq.RCVHWM, rcvhwm)
        if sndhwm is not None:
            s.setsockopt(zmq.SNDHWM, sndhwm)
        self.mon = s.get_monitor_socket(zmq.EVENT_DISCONNECTED) if monitor else None
        s.connect(endpoint)
        self.sock = s
        self.rx_bytes = 0

    def send(self, data: bytes) -> bool:
        try:
            self.sock.send(data, zmq.NOBLOCK)
            self.stats["sent"] += 1
            return True
        except zmq.Again:
            self.stats["send_full"] += 1
            return False
        except zmq.ZMQError:
            self.stats["send_error"] += 1
            return False

    def msg(self, m: dict[str, Any]) -> bool:
        return self.send(packb(m))

    def recv_all(self, limit: int = 100000) -> list[dict[str, Any]]:
        """Everything waiting (decoded); errors are counted by name in ``stats``."""
        out = []
        for _ in range(limit):
            try:
                frame = self.sock.recv(zmq.NOBLOCK)
            except zmq.ZMQError:
                break
            self.rx_bytes += len(frame)
            m = unpack(frame)
            self.stats["rx_" + str(m.get("type"))] += 1
            if m.get("type") == "error":
                self.stats["err_" + str(m.get("name"))] += 1
            out.append(m)
        self.poll_monitor()
        return out

    def wait(self, pred: Any, timeout: float) -> dict[str, Any] | None:
        """The first message satisfying ``pred`` within ``timeout`` s (others are dropped)."""
        end = time.monotonic() + timeout
        while True:
            for m in self.recv_all():
                if pred(m):
                    return m
            left = end - time.monotonic()
            if left <= 0:
                return None
            self.sock.poll(min(left, 0.2) * 1000)

    def poll_monitor(self) -> None:
        if self.mon is None:
            return
        while True:
            try:
                ev = recv_monitor_message(self.mon, zmq.NOBLOCK)
            except zmq.ZMQError:
                return
            if ev["event"] == zmq.EVENT_DISCONNECTED:
                self.stats["disconnected"] += 1

    def close(self) -> None:
        if self.mon is not None:
            self.sock.disable_monitor()
            self.mon.close(0)
        self.sock.close(0)


def hello(c: Conn, role: str = "player", name: str = "attacker", **extra: Any) -> bool:
    return c.msg({"type": "hello", "protocol": 1, "role": role, "name": name, **extra})


def welcomed(c: Conn, timeout: float = 5.0) -> dict[str, Any] | None:
    return c.wait(lambda m: m.get("type") in ("welcome", "error"), timeout)


def admin(ctx: zmq.Context, endpoint: str, key: str, stats: Counter) -> Conn:
    a = Conn(ctx, endpoint, stats)
    hello(a, "admin", "attacker-admin", admin_key=key)
    welcomed(a)
    return a


def sleep_until(t: float) -> None:
    time.sleep(max(0.0, t - time.monotonic()))


def result(stats: Counter, **extra: Any) -> dict[str, Any]:
    return {**{k: v for k, v in sorted(stats.items())}, **extra}


# ------------------------------------------------------------------------ the attacks
def cheap_frames(ctx: zmq.Context, endpoint: str, key: str, start: float, until: float, quick: bool) -> dict[str, Any]:
    """Two connections send frames just under max_message_bytes made of as many empty
    maps as fit (a msgpack array of 65,520 ``{}``: one byte each to send, a dict each to
    decode), ~600 frames/s in all, i.e. 300/s per connection, within the rate limit."""
    stats: Counter = Counter()
    n = MAX_MESSAGE_BYTES - 16
    frame = packb([{}] * n)
    assert len(frame) <= MAX_MESSAGE_BYTES
    rate = 300.0  # per connection
    conns = [Conn(ctx, endpoint, stats, monitor=True) for _ in range(2)]
    for c in conns:
        hello(c)
    sleep_until(start)
    t0 = time.monotonic()
    cap = int(rate * (until - t0)) + 1
    done = [0, 0]
    while (now := time.monotonic()) < until and min(done) < cap:
        due = min(cap, int((now - t0) * rate) + 1)
        for i, c in enumerate(conns):
            while done[i] < due and c.send(frame):
                done[i] += 1
            c.recv_all()
        time.sleep(0.002)
    for c in conns:
        c.recv_all()
        c.close()
    return result(stats, frame_bytes=len(frame), empty_maps=n, frames=sum(done), secs=round(time.monotonic() - t0, 2))


def big_frames(ctx: zmq.Context, endpoint: str, key: str, start: float, until: float, quick: bool) -> dict[str, Any]:
    """One connection sends 400 frames of exactly 1 MiB (a map with an id and a huge
    string: the largest frame libzmq's MAXMSGSIZE lets through) as fast as it can."""
    stats: Counter = Counter()
    base = {"type": "ping", "id": 1, "pad": ""}
    pad = HARD_MAX_BYTES - (len(packb(base)) - 1 + 5)  # str32 header: 5 bytes
    frame = packb({**base, "pad": "x" * pad})
    assert len(frame) == HARD_MAX_BYTES, len(frame)
    c = Conn(ctx, endpoint, stats, monitor=True)
    hello(c)
    welcomed(c)
    sleep_until(start)
    t0 = time.monotonic()
    done = 0
    while done < 400 and time.monotonic() < until:
        if c.send(frame):
            done += 1
        else:
            time.sleep(0.002)
        if done % 20 == 0:
            c.recv_all()
    t_sent = time.monotonic() - t0
    while time.monotonic() < until:  # keep reading what the referee answers
        c.recv_all()
        c.sock.poll(100)
    c.close()
    return result(stats, frame_bytes=len(frame), frames=done, send_secs=round(t_sent, 2))


def _seat_conns(ctx: zmq.Context, endpoint: str, stats: Counter, tokens: list[str]) -> list[Conn]:
    seats = []
    for i, tok in enumerate(tokens):
        c = Conn(ctx, endpoint, stats)
        hello(c, name=f"attacker{i}", token=tok)
        seats.append(c)
    return seats


def illegal_flood(ctx: zmq.Context, endpoint: str, key: str, start: float, until: float, quick: bool) -> dict[str, Any]:
    """A seated player answers each of its own prompts with 300 pipelined illegal
    ``act``s of ~59 KB (a knock whose ``melds`` is ~5,900 lists of three cards), all
    carrying the prompt's ``seq``: the first is an illegal move (error, journal line,
    re-prompt with a new seq), the other 299 are decoded to be found stale. It needs a
    table: created with the admin key (policy reprompt: never forfeits), both seats held."""
    stats: Counter = Counter()
    a = admin(ctx, endpoint, key, stats)
    a.msg({"type": "create_table", "id": 1, "table": "atk-illegal", "seed": 1, "reserved": True,
           "rules": {"target_score": 10000}, "policies": {"illegal": "reprompt"}})
    made = a.wait(lambda m: m.get("id") == 1, 10)
    if not made or made.get("type") != "table_created":
        return result(stats, setup_failed=str(made))
    seats = _seat_conns(ctx, endpoint, stats, made["seat_tokens"])
    sleep_until(start)
    t0 = time.monotonic()
    action = {"kind": "knock", "card": "As", "melds": [["As", "2s", "3s"]] * 5900}
    burst, rounds_cap = 300, (10 if quick else 20)
    rounds = acts = 0
    act_bytes = 0
    backlog: list[tuple[Conn, bytes, int]] = []  # (conn, frame, left to send)
    while time.monotonic() < until:
        for c in seats:
            for m in c.recv_all():
                if m.get("type") == "prompt" and rounds < rounds_cap:
                    frame = packb({"type": "act", "table": "atk-illegal", "seq": m["seq"], "action": action})
                    act_bytes = len(frame)
                    backlog = [(c, frame, burst)]  # answer the newest prompt only
                    rounds += 1
        if backlog:
            c, frame, left = backlog[0]
            while left and c.send(frame):
                left -= 1
                acts += 1
            backlog = [(c, frame, left)] if left else []
        if rounds >= rounds_cap and not backlog:
            stats["rounds_done"] = 1
        for c in seats:
            c.sock.poll(5)
    for c in [*seats, a]:
        c.recv_all()
        c.close()
    return result(stats, act_bytes=act_bytes, rounds=rounds, acts=acts, secs=round(time.monotonic() - t0, 2))


def list_flood(ctx: zmq.Context, endpoint: str, key: str, start: float, until: float, quick: bool) -> dict[str, Any]:
    """Admin connections create small tables (up to 10,000, or until ``limit_reached``;
    paced under the rate limit) for the first half of the window at most; then one
    connection with RCVHWM 4 that never reads sends 40 ``list_tables``: each answer lists
    every table."""
    stats: Counter = Counter()
    admins = [admin(ctx, endpoint, key, stats) for _ in range(5)]
    sleep_until(start)
    t0 = time.monotonic()
    create_until = t0 + 0.5 * (until - t0)
    target, made, asked = 10000, 0, 0
    out = [0] * len(admins)
    refused = False
    rate = 1500.0  # per admin connection: under the 2000/s limit
    sent = [0] * len(admins)
    while made < target and not refused and time.monotonic() < create_until:
        now = time.monotonic()
        for k, a in enumerate(admins):
            while out[k] < 100 and asked < target and sent[k] < (now - t0) * rate + 50:
                if not a.msg({"type": "create_table", "id": asked, "table": f"F{asked}", "seed": asked}):
                    break
                asked += 1
                out[k] += 1
                sent[k] += 1
            for m in a.recv_all():
                if m.get("type") == "table_created":
                    made += 1
                    out[k] -= 1
                elif m.get("type") == "error" and m.get("request") == "create_table":
                    out[k] -= 1
                    refused = refused or m.get("name") == "limit_reached"
        time.sleep(0.001)
    t_created = time.monotonic() - t0
    lister = Conn(ctx, endpoint, stats, rcvhwm=4)
    hello(lister, "spectator", "lister")
    for i in range(40):
        lister.msg({"type": "list_tables", "id": i})
    while time.monotonic() < until:  # never read the lister
        for a in admins:
            a.recv_all()
        time.sleep(0.05)
    for a in admins:
        a.close()
    lister.close()
    return result(stats, tables_created=made, create_secs=round(t_created, 2), limit_reached=refused, list_requests=40)


def table_squat(ctx: zmq.Context, endpoint: str, key: str, start: float, until: float, quick: bool) -> dict[str, Any]:
    """One client takes as many tables as it can, as fast as it can: sessions of 64
    ``join``s of new names (a session may hold 64 seats), each join creating a named
    table, until ``limit_reached``; a probe session then tries one more table; then half
    the sessions ``leave`` every table (closing it) and the other half just disconnect."""
    stats: Counter = Counter()
    sleep_until(start)
    t0 = time.monotonic()
    squat_until = t0 + 0.5 * (until - t0)
    sessions: list[tuple[Conn, list[str]]] = []
    tables = 0
    full = False
    k = 0
    while not full and tables < 10000 and len(sessions) < 400 and time.monotonic() < squat_until:
        batch = [Conn(ctx, endpoint, stats) for _ in range(8)]
        for c in batch:
            hello(c, name="squatter")
        for c in batch:
            w = welcomed(c, 5)
            if w is None or w.get("type") != "welcome":
                full = full or (w is not None and w.get("name") == "limit_reached")
                c.close()
                continue
            names = [f"S{k}-{j}" for j in range(64)]
            k += 1
            for n in names:
                c.msg({"type": "join", "table": n, "id": n})
            sessions.append((c, []))
        for c, held in sessions[-len(batch):]:
            end = time.monotonic() + 5
            answered = 0
            while answered < 64 and time.monotonic() < end:
                for m in c.recv_all():
                    if m.get("type") == "seated":
                        held.append(m["table"])
                        answered += 1
                    elif m.get("type") == "error" and m.get("request") == "join":
                        answered += 1
                        full = full or m.get("name") == "limit_reached"
                c.sock.poll(50)
            tables += len(held)
    t_squat = time.monotonic() - t0
    probe = Conn(ctx, endpoint, stats)
    hello(probe, name="probe")
    welcomed(probe)
    probe.msg({"type": "join", "table": "probe-squat", "id": "probe"})
    r = probe.wait(lambda m: m.get("id") == "probe", 5)
    probe_answer = None if r is None else (r.get("name") if r.get("type") == "error" else r.get("type"))
    if r is not None and r.get("type") == "seated":
        probe.msg({"type": "leave", "table": "probe-squat"})
    for i, (c, held) in enumerate(sessions):
        if i % 2 == 0:
            for n in held:
                c.msg({"type": "leave", "table": n})
    time.sleep(min(1.0, max(0.0, until - time.monotonic())))
    for c, _ in sessions:
        c.recv_all()
        c.close()
    probe.close()
    return result(stats, sessions=len(sessions), tables_held=tables, limit_reached=full, squat_secs=round(t_squat, 2),
                  probe_join=probe_answer)


def advice_flood(ctx: zmq.Context, endpoint: str, key: str, start: float, until: float, quick: bool) -> dict[str, Any]:
    """Gin in the Box (3 seats, all held by the attacker): when the captain is prompted
    the sitter sends thousands of ``advise`` (text of 280 chars) for that one prompt,
    paced at the rate limit (a burst of 3,500 then 1,900/s). Then the three seats play on
    as fast as the referee prompts them; the sizes of the messages the captain and the
    sitter receive afterwards are recorded (each view carries the hand's advice)."""
    stats: Counter = Counter()
    a = admin(ctx, endpoint, key, stats)
    a.msg({"type": "create_table", "id": 1, "table": "atk-box", "variant": "box", "seed": 3, "reserved": True,
           "rules": {"target_score": 10000}})
    made = a.wait(lambda m: m.get("id") == 1, 10)
    if not made or made.get("type") != "table_created":
        return result(stats, setup_failed=str(made))
    seats = _seat_conns(ctx, endpoint, stats, made["seat_tokens"])
    sleep_until(start)
    t0 = time.monotonic()
    total = 4000 if quick else 6000
    text = "x" * 280
    sitter: Conn | None = None
    captain: Conn | None = None
    seq = None
    sent = 0
    pending: list[tuple[Conn, dict[str, Any]]] = []
    sizes_after: dict[str, list[int]] = {"captain": [], "sitter": []}
    flood_end = None
    moves = 0
    from bench.load import choose  # the honest clients' choice

    while time.monotonic() < until:
        for c in seats:
            while True:
                try:
                    frame = c.sock.recv(zmq.NOBLOCK)
                except zmq.ZMQError:
                    break
                m = unpack(frame)
                typ = m.get("type")
                stats["rx_" + str(typ)] += 1
                if typ == "error":
                    stats["err_" + str(m.get("name"))] += 1
                if typ == "advise_prompt" and sitter is None:
                    sitter, captain, seq = c, seats[m["captain"]], m["seq"]
                elif flood_end is not None and typ in ("prompt", "event", "advise_prompt", "hand_end"):
                    if c is sitter:
                        sizes_after["sitter"].append(len(frame))
                    elif c is captain:
                        sizes_after["captain"].append(len(frame))
                if typ == "prompt":
                    pending.append((c, m))
        if sitter is not None and flood_end is None:
            allowed = min(total, 3500 + int((time.monotonic() - t0) * 1900))
            while sent < allowed and sitter.msg({"type": "advise", "id": sent, "table": "atk-box", "seq": seq, "text": text}):
                sent += 1
            if sent >= total:
                flood_end = time.monotonic()
        if flood_end is not None and time.monotonic() > flood_end + 0.5:
            for c, m in pending:
                if m.get("legal"):
                    c.msg({"type": "act", "table": "atk-box", "seq": m["seq"], "action": choose(m["legal"])})
                    moves += 1
            pending = []
        for c in seats:
            c.sock.poll(2)
    for c in [*seats, a]:
        c.close()

    def summary(xs: list[int]) -> dict[str, Any]:
        return {"messages": len(xs), "max_bytes": max(xs, default=0), "total_mb": round(sum(xs) / 2**20, 1)}

    return result(stats, advises_sent=sent, flood_secs=None if flood_end is None else round(flood_end - t0, 2), moves_after=moves,
                  captain_after=summary(sizes_after["captain"]), sitter_after=summary(sizes_after["sitter"]))


def idle_sessions(ctx: zmq.Context, endpoint: str, key: str, start: float, until: float, quick: bool) -> dict[str, Any]:
    """Thousands of connections that say ``hello`` and then nothing (half of them send a
    heartbeat every 2 s, the other half are silent), held open until the end."""
    stats: Counter = Counter()
    n = 3000 if quick else 5000
    ctx.set(zmq.MAX_SOCKETS, n + 100)
    sleep_until(start)
    t0 = time.monotonic()
    conns: list[Conn] = []
    open_until = t0 + 0.5 * (until - t0)
    while len(conns) < n and time.monotonic() < open_until:
        for _ in range(100):
            c = Conn(ctx, endpoint, stats)
            hello(c, name="idle")
            conns.append(c)
        time.sleep(0.01)
    t_open = time.monotonic() - t0
    beat = packb({"type": "heartbeat"})
    last = time.monotonic()
    while time.monotonic() < until:
        if time.monotonic() - last > 2.0:
            last = time.monotonic()
            for c in conns[::2]:
                c.send(beat)
        for c in conns:
            c.recv_all(10)
        time.sleep(0.2)
    for c in conns:
        c.close()
    return result(stats, connections=len(conns), open_secs=round(t_open, 2))


ATTACKS = {
    "cheap-frames": cheap_frames,
    "big-frames": big_frames,
    "illegal-flood": illegal_flood,
    "list-flood": list_flood,
    "table-squat": table_squat,
    "advice-flood": advice_flood,
    "idle-sessions": idle_sessions,
}
