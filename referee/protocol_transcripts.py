"""protocol.md §15's transcripts, played against a real referee (issue 18).

    python -m referee.protocol_examples           # rewrites these too (and §5's examples)
    python -m referee.protocol_examples --check   # what CI runs (tests/referee/test_protocol_examples.py)

Why: §15 was written by hand once and went stale with every minor (its ``welcome`` still
said ``minor: 1``, with no ``batch_events``, and ``okgin 0.1.0``). Here each transcript is a
script: every line it prints is a message that was really sent to or received from the
referee of :mod:`referee.protocol_examples` (same thread, same deterministic secrets, same
masking of tokens, salts and hashes), so a change in what the referee sends changes the
text, and CI fails until it is regenerated.

What the script chooses is only *which* messages to show and *which fields to elide*: a
left-out run of fields is one ``…``, an elided map (a View, Rules, Clock, Policies) is
``{…}``. Messages that several clients received and that read the same once elided are one
line, ``R → C0,C1``. Comments (``# ...``) are the script's own words.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import zmq

from okgin.protocol.catalogue import PROTOCOL_MINOR

if TYPE_CHECKING:
    from .protocol_kit import Client, Masker, RefereeInThread

ELIDED = "\x00elided\x00"  # a value shown as {…}
GAP = "\x00gap\x00"  # a key whose run of left-out fields is shown as …
WIDTH = 118
SEED_HASH_TEXT = "<64 hex digits: salted, new every game (5.10)>"

Pred = Callable[[dict[str, Any]], bool]


def compact(v: Any) -> str:
    """``v`` as compact JSON, with the elision markers written as ``{…}`` and ``…``."""
    if isinstance(v, dict):
        parts = ["…" if k.startswith(GAP) else f"{json.dumps(k)}:{compact(x)}" for k, x in v.items()]
        return "{" + ",".join(parts) + "}"
    if isinstance(v, list):
        return "[" + ",".join(compact(x) for x in v) + "]"
    if v == ELIDED:
        return "{…}"
    return json.dumps(v, ensure_ascii=False)


def wrapped(v: Any, col: int, width: int = WIDTH) -> str:
    """``v`` compact, broken between fields (or items) where a line would pass ``width``.

    ``col`` is the column ``v`` starts at; a continuation line starts one column right of
    the bracket it belongs to, and a field too long for any line is broken inside the
    same way."""
    flat = compact(v)
    if col + len(flat) <= width or not isinstance(v, (dict, list)) or not v:
        return flat
    items: list[tuple[str, Any]] = (
        [("…" if k.startswith(GAP) else f"{json.dumps(k)}:", x) for k, x in v.items()]
        if isinstance(v, dict)
        else [("", x) for x in v]
    )
    opening, closing = ("{", "}") if isinstance(v, dict) else ("[", "]")
    inner = col + 1
    out, line = "", opening
    line_col = col  # the column where ``line`` starts
    for i, (key, x) in enumerate(items):
        tail = closing if i == len(items) - 1 else ","
        piece = key if key == "…" else key + compact(x)
        piece += tail
        fresh = line in (opening, "")
        if line_col + len(line) + len(piece) <= width:
            line += piece
            continue
        if not fresh:
            out += line + "\n" + " " * inner
            line, line_col = "", inner
        if line_col + len(line) + len(piece) <= width or key == "…":
            line += piece
            continue
        start = line_col + len(line) + len(key)
        body = wrapped(x, start, width)
        line += key + body + tail
        if "\n" in body:  # carry on after the last line of the broken field
            last = line.rsplit("\n", 1)
            out += last[0] + "\n"
            line, line_col = last[1], 0
    return out + line


class Transcript:
    """The lines of one transcript: messages sent and received, and comments."""

    def __init__(self, masker: Masker, shown: list[dict[str, Any]]) -> None:
        self.masker = masker
        self.lines: list[str] = []
        self.shown = shown  # every message shown, as it was (the examples' test validates them)

    def comment(self, text: str) -> None:
        self.lines.extend(f"# {t}" if t else "#" for t in text.split("\n"))

    def render(self, m: dict[str, Any], keep: Sequence[str] | None, view: Any, full: Sequence[str]) -> dict[str, Any]:
        """The message as shown: masked, ``type``/``id`` first, elided as asked.

        ``keep``: the fields shown (``type`` always), each run of others one ``…``;
        ``view``: None for ``{…}``, ``"full"``, or the view's fields to show; ``full``:
        which of rules/clock/policies to show (they are ``{…}`` otherwise)."""
        m = self.masker.msg(m, keep_view=True)
        if m.get("seed_hash") is not None:
            m["seed_hash"] = SEED_HASH_TEXT
        order = ["type", "id"] if "id" in m else ["type"]
        m = {**{k: m[k] for k in order}, **{k: v for k, v in m.items() if k not in order}}
        out: dict[str, Any] = {}
        gap = False
        for k, v in m.items():
            if keep is not None and k not in keep and k != "type":
                if not gap:
                    out[f"{GAP}{len(out)}"] = None
                gap = True
                continue
            gap = False
            if k == "view" and isinstance(v, dict):
                v = v if view == "full" else ELIDED if view is None else self._part(v, view)
            elif k in ("rules", "clock", "policies") and isinstance(v, dict) and k not in full:
                v = ELIDED
            out[k] = v
        return out

    @staticmethod
    def _part(v: dict[str, Any], fields: Sequence[str]) -> dict[str, Any]:
        """A view shown by some of its fields: ``{…,"a":1,"b":2,…}``."""
        return {f"{GAP}0": None, **{f: v[f] for f in fields}, f"{GAP}1": None}

    def line(self, prefix: str, shown: dict[str, Any]) -> None:
        self.lines.append(prefix + wrapped(shown, len(prefix)))

    def send(self, label: str, client: Any, msg: dict[str, Any], keep: Sequence[str] | None = None) -> dict[str, Any]:
        client.send(msg)
        self.shown.append(msg)
        self.line(f"{label} → R  ", self.render(msg, keep, None, ("rules", "clock", "policies")))
        return msg

    def recv(
        self,
        who: Sequence[tuple[str, Any]],
        pred: Pred,
        keep: Sequence[str] | None = None,
        view: Any = None,
        full: Sequence[str] = (),
        note: str = "",
    ) -> list[dict[str, Any]]:
        """Wait for one message matching ``pred`` at each client; show them (merged where
        they read the same). ``note`` is a trailing comment on every line."""
        got = [(label, c.wait(pred)) for label, c in who]
        self.shown.extend(m for _, m in got)
        groups: list[tuple[list[str], dict[str, Any]]] = []
        for label, m in got:
            shown = self.render(m, keep, view, full)
            for labels, s in groups:
                if compact(s) == compact(shown):
                    labels.append(label)
                    break
            else:
                groups.append(([label], shown))
        for labels, shown in groups:
            prefix = f"R → {','.join(labels)}  "
            self.line(prefix, shown)
            if note:
                self.lines[-1] += f"    # {note}"
        return [m for _, m in got]

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def is_a(t: str, **fields: Any) -> Pred:
    """A predicate for ``Transcript.recv``: a message of type ``t`` with these field
    values. Public because the arena's transcript (arena/examples.py) waits the same way."""
    return lambda m: m.get("type") == t and all(m.get(k) == v for k, v in fields.items())


def oklahoma_and_resume(ref: RefereeInThread, ctx: zmq.Context[zmq.Socket[bytes]], masker: Masker, client: Callable[[], Client],
                        ex: dict[str, list[dict[str, Any]]]) -> tuple[str, str]:
    """§15.1 (one hand of Oklahoma Gin at a table of seed 871) and §15.3 (a seat that goes
    away and resumes, in the same game). Also records the ``seat_status`` example."""
    ref.call(lambda: ref.ref.create_table("demo", "oklahoma", seed=871))
    t = Transcript(masker, ex.setdefault("_shown", []))
    c0, c1 = client(), client()
    hello = {"type": "hello", "id": 1, "protocol": 1, "minor": PROTOCOL_MINOR, "role": "player"}
    t.send("C0", c0, {**hello, "name": "alice"})
    c0.token = t.recv([("C0", c0)], is_a("welcome"))[0]["token"]
    t.send("C1", c1, {**hello, "name": "bob"})
    c1.token = t.recv([("C1", c1)], is_a("welcome"), keep=("id", "token", "name", "resumed"))[0]["token"]
    t.lines.append("")
    t.comment("The referee was started as `okgin referee --table demo --seed 871`: a table with default\n"
              "rules, the default 60 s move clock and a fixed seed. Both players join it by name.")
    t.send("C0", c0, {"type": "join", "id": 2, "table": "demo", "variant": "oklahoma"})
    t.recv([("C0", c0)], is_a("seated"))
    t.send("C1", c1, {"type": "join", "id": 2, "table": "demo"})
    t.recv([("C1", c1)], is_a("seated"), keep=("id", "table", "seat", "players", "status"))
    t.lines.append("")
    t.comment("The table is full: the game starts. Each seat sees only its own hand.")
    t.recv([("C0", c0)], is_a("game_start"), view="full")
    t.recv([("C1", c1)], is_a("game_start"), keep=("seat", "view"), view=("seat", "hand", "hand_of"))
    t.lines.append("")
    t.comment("Seat 0 is the non-dealer: it has the upcard offer (9s, so the knock limit is 9).")
    t.recv([("C0", c0)], is_a("prompt", seq=1), full=("clock",))
    t.send("C0", c0, {"type": "act", "table": "demo", "seq": 1, "action": {"kind": "pass"}})
    t.recv([("C0", c0), ("C1", c1)], is_a("event", n=1))
    t.recv([("C1", c1)], is_a("prompt", seq=2), keep=("table", "game", "seq", "seat", "legal"))
    t.send("C1", c1, {"type": "act", "table": "demo", "seq": 2, "action": {"kind": "pass"}})
    t.recv([("C0", c0), ("C1", c1)], is_a("event", n=2), keep=("n", "move"))
    t.lines.append("")
    t.comment("Both passed: the non-dealer must draw from the stock.")
    t.recv([("C0", c0)], is_a("prompt", seq=3), keep=("seq", "seat", "legal"))
    t.send("C0", c0, {"type": "act", "table": "demo", "seq": 3, "action": {"kind": "draw_stock"}})
    t.recv([("C0", c0)], is_a("event", n=3), keep=("n", "move"), note="C0 sees its card")
    t.recv([("C1", c1)], is_a("event", n=3), keep=("n", "move"), note="C1 does not")
    t.recv([("C0", c0)], is_a("prompt", seq=4), keep=("seq", "seat", "legal"))
    t.lines.append("")
    t.comment("A stale answer (seq 3 again) is refused and changes nothing:")
    t.send("C0", c0, {"type": "act", "id": 40, "table": "demo", "seq": 3, "action": {"kind": "draw_stock"}})
    t.recv([("C0", c0)], is_a("error", id=40))
    t.send("C0", c0, {"type": "act", "table": "demo", "seq": 4, "action": {"kind": "discard", "card": "Jc"}})
    t.recv([("C0", c0), ("C1", c1)], is_a("event", n=4), keep=("n", "move"))
    t.recv([("C1", c1)], is_a("prompt", seq=5), keep=("seq", "seat", "legal"))
    t.send("C1", c1, {"type": "act", "table": "demo", "seq": 5, "action": {"kind": "draw_stock"}})
    t.recv([("C0", c0), ("C1", c1)], is_a("event", n=5), keep=("n", "move"))
    t.recv([("C1", c1)], is_a("prompt", seq=6), keep=("seq", "seat", "legal"))
    t.lines.append("")
    t.comment("Bob knocks, throwing 2c face down. The move carries no card; the hand is over, so no view.")
    t.send("C1", c1, {"type": "act", "table": "demo", "seq": 6, "action": {"kind": "knock", "card": "2c"}})
    t.recv([("C0", c0), ("C1", c1)], is_a("event", n=6), keep=("n", "move", "auto", "view"))
    t.recv([("C0", c0), ("C1", c1)], is_a("hand_end"), view=("hand_number", "phase", "to_act", "upcard", "scores"))
    t.comment("Bob won the hand and deals the next: alice (non-dealer) has the offer of hand 1.")
    t.recv([("C0", c0)], is_a("prompt", seq=7), keep=("seq", "seat", "legal"))
    ok_text = t.text()

    # §15.3: the seat to act goes away and comes back with its token
    r = Transcript(masker, ex.setdefault("_shown", []))
    r.comment("Going on from 15.1: alice (C0) is to act (seq 7) when her connection goes (here she says\n"
              "bye; silence for liveness × heartbeat_ms does the same). Bob is told at once.")
    r.send("C0", c0, {"type": "bye"})
    gone = r.recv([("C1", c1)], is_a("seat_status", connected=False))
    c0.close()
    r.comment("Alice's program opens a new DEALER and says hello with her token, within the grace:")
    c0b = client()
    r.send("C0", c0b, {**hello, "name": "alice", "token": c0.token})
    r.recv([("C0", c0b)], is_a("welcome"), keep=("id", "token", "resumed"))
    r.recv([("C0", c0b)], is_a("snapshot"), keep=("table", "status", "game", "n", "seat", "full", "view"))
    r.recv([("C0", c0b)], is_a("prompt", seq=7), keep=("table", "game", "seq", "seat", "legal", "clock"), full=("clock",),
           note="the same seq; its clock kept running")
    back = r.recv([("C1", c1)], is_a("seat_status", connected=True))
    r.send("C0", c0b, {"type": "act", "table": "demo", "seq": 7, "action": {"kind": "pass"}})
    r.recv([("C0", c0b), ("C1", c1)], is_a("event", n=8), keep=("n", "move"))
    ex["seat_status"] = gone + back
    c1.close()
    c0b.close()
    return ok_text, r.text()


def box_with_advice(ctx: zmq.Context[zmq.Socket[bytes]], masker: Masker, client: Callable[[], Client], admin_key: str,
                    ex: dict[str, list[dict[str, Any]]]) -> str:
    """§15.2: one hand of Gin in the Box at a reserved table of seed 247, with advice.
    Also records §5.14's ``advise`` example (the advice at seq 4)."""
    t = Transcript(masker, ex.setdefault("_shown", []))
    t.comment("An organiser creates the table with a fixed seed and reserved seats.")
    a = client()
    t.send("A", a, {"type": "hello", "id": 1, "protocol": 1, "minor": PROTOCOL_MINOR, "role": "admin", "name": "organiser",
                    "admin_key": admin_key})
    t.recv([("A", a)], is_a("welcome"), keep=("id", "role"))
    t.send("A", a, {"type": "create_table", "id": 2, "table": "box7", "variant": "box", "seed": 247, "reserved": True,
                    "clock": {"move_ms": 10000, "grace_ms": 500}})
    toks = t.recv([("A", a)], is_a("table_created"))[0]["seat_tokens"]
    t.lines.append("")
    t.comment("Each bot is started with its seat token: hello seats it at once.")
    cs = [client() for _ in toks]
    labels = ["C0", "C1", "C2"]
    for i, (c, tok, name) in enumerate(zip(cs, toks, ["carol", "dan", "erin"], strict=True)):
        msg = {"type": "hello", "id": 1, "protocol": 1, "minor": PROTOCOL_MINOR, "role": "player", "name": name, "token": tok}
        c.send(msg)
        if i == 0:
            t.line("C0 → R  ", t.render(msg, None, None, ()))
            t.recv([("C0", c)], is_a("welcome"), keep=("id", "token", "resumed"))
            t.recv([("C0", c)], is_a("seated"), keep=("table", "seat", "variant", "status"))
        else:
            c.wait(is_a("welcome"))
            c.wait(is_a("seated"))
    t.lines.append("C1 → R  ... (the same with the second token: seat 1)      C2 → R  ... (the third: seat 2)")
    t.lines.append("")
    t.comment("The roles were drawn from the seed: seat 1 drew Qd (box, deals), seat 0 Jd (captain), seat 2 5d (sits out).")
    t.recv([("C0", cs[0])], is_a("game_start"), keep=("table", "game", "n", "seat", "variant", "seed_hash", "view"), view="full")
    t.recv([("C1", cs[1])], is_a("game_start"), keep=("seat", "view"), view=("seat", "hand", "hand_of"))
    t.recv([("C2", cs[2])], is_a("game_start"), keep=("seat", "view"), view=("seat", "hand", "hand_of"))
    t.comment("       ^ the sitter sees its captain's hand (hand_of 0), never the box's.")
    t.lines.append("")
    t.comment("The captain (seat 0) has the offer; the sitter is asked for advice at the same time.")
    t.recv([("C0", cs[0])], is_a("prompt", seq=1), full=("clock",))
    t.recv([("C2", cs[2])], is_a("advise_prompt", seq=1))
    t.send(
        "C2",
        cs[2],
        {"type": "advise", "id": 5, "table": "box7", "seq": 1, "action": {"kind": "pass"}, "text": "8c does not help"},
    )
    t.recv([("C2", cs[2])], is_a("ok", id=5))
    t.recv([("C0", cs[0])], is_a("advice", seq=1))
    t.send("C0", cs[0], {"type": "act", "table": "box7", "seq": 1, "action": {"kind": "pass"}})
    every = list(zip(labels, cs, strict=True))
    t.recv(every, is_a("event", n=1), keep=("n", "move"))
    t.recv([("C1", cs[1])], is_a("prompt", seq=2), keep=("seq", "seat", "legal"), note="the box: no advice for it")
    t.send("C1", cs[1], {"type": "act", "table": "box7", "seq": 2, "action": {"kind": "pass"}})
    t.recv(every, is_a("event", n=2), keep=("n", "move"))
    t.recv([("C0", cs[0])], is_a("prompt", seq=3), keep=("seq", "seat", "legal"))
    t.recv([("C2", cs[2])], is_a("advise_prompt", seq=3), keep=("seq", "captain", "legal"))
    t.send("C0", cs[0], {"type": "act", "table": "box7", "seq": 3, "action": {"kind": "draw_stock"}})
    t.recv([("C0", cs[0]), ("C2", cs[2])], is_a("event", n=3), keep=("n", "move"),
           note="the captain and its partner see the card")
    t.recv([("C1", cs[1])], is_a("event", n=3), keep=("n", "move"), note="the box does not")
    t.recv([("C0", cs[0])], is_a("prompt", seq=4), keep=("seq", "seat", "legal"))
    ap = t.recv([("C2", cs[2])], is_a("advise_prompt", seq=4))
    adv = t.send("C2", cs[2], {"type": "advise", "id": 9, "table": "box7", "seq": 4, "action": {"kind": "knock", "card": "9c"},
                               "text": "knock now"})
    ok = t.recv([("C2", cs[2])], is_a("ok", id=9))
    advice = t.recv([("C0", cs[0])], is_a("advice", seq=4))
    ex["advise"] = [*ap, adv, *ok, *advice]
    t.send("C0", cs[0], {"type": "act", "table": "box7", "seq": 4, "action": {"kind": "knock", "card": "9c"}})
    t.recv(every, is_a("event", n=4), keep=("n", "move", "view"))
    t.recv(every, is_a("hand_end"), view=("hand_number", "roles", "dealer", "nondealer", "to_act"))
    t.comment(
        "The box lost: the captain (seat 0) goes into the box, the sitter (seat 2) captains, the old box (seat 1) sits out."
    )
    t.recv([("C2", cs[2])], is_a("prompt", seq=5), keep=("seq", "seat", "legal"))
    t.recv([("C1", cs[1])], is_a("advise_prompt", seq=5), keep=("seq", "captain"))
    for c in (a, *cs):
        c.close()
    return t.text()
