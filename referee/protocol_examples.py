"""protocol.md's JSON examples, produced by a real referee session (issue 18).

    python -m referee.protocol_examples           # rewrite the marked blocks of protocol.md
    python -m referee.protocol_examples --check   # exit 1 if any block differs (what CI runs)

Why: hand-written examples go stale (1.3's ``welcome`` still showed ``minor: 1`` and no
``batch_events``). Here a referee runs in a thread of this process, raw DEALER clients
play scripted sessions against it, and every message of an example is the one sent or
received. A block of protocol.md is generated when the line before its opening fence is
``<!-- example: KEY -->``: a ```json block for the examples of §5, a ```text block for
the keys ``transcript_*``, §15's transcripts (played by :mod:`referee.protocol_transcripts`).
The unmarked fences are diagrams, and §12.1's worked re-deal, which
``tests/referee/test_ref_deal_secrecy.py`` prints and checks; CI
(``tests/referee/test_protocol_examples.py``) fails on any other block left unmarked.

Deterministic by construction: the referee's random seeds and salts are replaced, in
this process only, by a counter's hashes (so the deals are always the same), and what
still varies or means nothing to a reader is masked: session and seat tokens (``<token
A>``, ``<token B>``, ... in order of appearance), seeds, salts and seed hashes, a pong's
``time_ms`` and the referee's version. Big maps are abbreviated the same way every time:
a View is ``{"...": "View"}`` and a full Rules map keeps only ``variant`` and
``knock_limit``. Lines are wrapped at field boundaries (:func:`referee.protocol_kit.fmt`).
The referee in a thread, the client, the masking and the printing are
:mod:`referee.protocol_kit`'s.
"""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path
from typing import Any

import zmq

from okgin.protocol.catalogue import PROTOCOL_MINOR

from .protocol_kit import ADMIN_KEY, Client, Masker, RefereeInThread, deterministic_secrets, fmt

ROOT = Path(__file__).resolve().parents[1]
PROTOCOL_MD = ROOT / "protocol.md"
#: Marked blocks another generator writes, which this one leaves as they are: §19's arena
#: transcript needs an arena, which the referee may not import (``python -m arena.examples``).
ELSEWHERE = {"transcript_arena": "python -m arena.examples"}
# a JSON example (```json) or, for keys transcript_*, a §15 transcript (```text)
MARK = re.compile(r"^<!-- example: ([a-z0-9_]+) -->\n```(?:json|text)\n(.*?)^```$", re.M | re.S)


# ---------------------------------------------------------------------- the sessions
def sessions(ref: RefereeInThread, ctx: zmq.Context[zmq.Socket[bytes]]) -> dict[str, list[dict[str, Any]]]:
    """Play the scripted sessions; return example key -> its messages, in order."""
    ex: dict[str, list[dict[str, Any]]] = {}
    c, js = Client(ctx, ref.endpoint), Client(ctx, ref.endpoint)
    hello, welcome = c.hello("c-bot")
    ex["hello"], ex["welcome"] = [hello], [welcome]
    ex["heartbeat"] = [c.send({"type": "heartbeat"})]  # no reply: the ping below is answered first
    js.hello("js-bot")
    ex["ping"] = list(c.ask({"type": "ping", "id": 7}))
    # the quick-match queue: c-bot waits, js-bot completes the pair, game 1 of q1 starts
    ex["queue"] = list(
        c.ask({"type": "queue", "id": 3, "variant": "oklahoma", "rules": {"knock_limit": 10, "undercut_bonus": 25}})
    )
    js.send({"type": "queue", "id": 3, "variant": "oklahoma", "rules": {"knock_limit": 10, "undercut_bonus": 25}})
    start = c.wait(lambda m: m["type"] == "game_start")
    ex["game_start"] = [start]
    table = start["table"]
    seat = start["seat"]
    ex["list_tables"] = list(c.ask({"type": "list_tables", "id": 2}))
    # the first move, as the seat to act and its opponent see it
    first, other = (c, js) if start["view"]["to_act"] == seat else (js, c)
    p = first.wait(lambda m: m["type"] == "prompt")
    ex["prompt"] = [p]
    act = first.send({"type": "act", "table": table, "seq": p["seq"], "action": {"kind": "pass"}})
    ex["act"] = [act]
    ev = other.wait(lambda m: m["type"] == "event")
    ex["event"] = [ev]
    # a stale answer: the second seat is prompted (seq 2) and answers seq 1
    other.wait(lambda m: m["type"] == "prompt")
    ex["stale_seq"] = [other.ask({"type": "act", "id": 12, "table": table, "seq": p["seq"], "action": {"kind": "pass"}})[1]]
    # a spectator
    s = Client(ctx, ref.endpoint)
    s.hello("viewer", role="spectator")
    ex["watch"] = list(s.ask({"type": "watch", "id": 11, "table": table}))
    # c-bot leaves the running game: ok first, then game_end (it resigned)
    ex["leave"] = list(c.ask({"type": "leave", "id": 5, "table": table}))
    ex["game_end"] = [c.wait(lambda m: m["type"] == "game_end")]
    # a named table, and a join that asks for other rules than it has
    d = Client(ctx, ref.endpoint)
    d.hello("d-bot")
    d.ask({"type": "join", "id": 4, "table": "main", "rules": {"target_score": 1}})
    ex["join"] = list(c.ask({"type": "join", "id": 4, "table": "friday-final", "variant": "box"}))
    ex["join"] += list(c.ask({"type": "join", "id": 5, "table": "main"}))
    # an organiser: a reserved table, played to its end by resignation, then revealed
    admin = Client(ctx, ref.endpoint)
    admin.ask(
        {
            "type": "hello",
            "id": 1,
            "protocol": 1,
            "minor": PROTOCOL_MINOR,
            "role": "admin",
            "name": "organiser",
            "admin_key": ADMIN_KEY,
        }
    )
    create = {
        "type": "create_table",
        "id": 20,
        "table": "final-1",
        "variant": "oklahoma",
        "seed": 871,
        "rules": {"knock_limit": 10},
        "clock": {"move_ms": 5000, "grace_ms": 200},
        "policies": {"timeout": "forfeit", "illegal": "forfeit", "illegal_limit": 1},
        "reserved": True,
        "reveal": "deferred",
    }
    req, created = admin.ask(create)
    ex["create_table"] = [req, created]
    seats = [Client(ctx, ref.endpoint) for _ in created["seat_tokens"]]
    for i, (sc, tok) in enumerate(zip(seats, created["seat_tokens"], strict=True)):
        sc.hello(f"finalist-{i}", token=tok)
    seats[0].wait(lambda m: m["type"] == "game_start")
    seats[1].ask({"type": "resign", "id": 8, "table": "final-1"})
    seats[0].wait(lambda m: m["type"] == "game_end")
    ex["reveal"] = list(admin.ask({"type": "reveal", "id": 30, "table": "final-1", "game": 1}))
    # a rematch: finalist-0 asks (1.6: the ok names the table), both seats hear who is ready;
    # a second rematch from a seat that is ready already is answered ok and changes nothing
    ex["rematch"] = list(seats[0].ask({"type": "rematch", "id": 9, "table": "final-1"}))
    ex["rematch"].append(seats[0].wait(lambda m: m["type"] == "rematch_status"))
    ex["rematch"] += seats[0].ask({"type": "rematch", "id": 10, "table": "final-1"})
    # 1.5: a participant's nonce at a tournament's preflight table (5.27)
    from okgin.schedule import nonce_commitment

    nonce = hashlib.sha256(b"example nonce").digest()
    _, pre = admin.ask({"type": "create_table", "id": 40, "table": "cup-preflight-alice", "reserved": True})
    alice = Client(ctx, ref.endpoint)
    hello_a, _ = alice.hello("alice", token=pre["seat_tokens"][0], entropy_commit=nonce_commitment(nonce))
    alice.wait(lambda m: m["type"] == "seated")
    ex["entropy"] = [hello_a, *admin.ask({"type": "entropy", "id": 41, "table": "cup-preflight-alice"})]
    ex["entropy"] += admin.ask({"type": "entropy", "id": 42, "table": "cup-preflight-alice",
                                "commitments_hash": hashlib.sha256(b"example commitments").hexdigest()})
    ex["entropy"].append(alice.wait(lambda m: m["type"] == "entropy_request"))
    ex["entropy"] += alice.ask({"type": "entropy_reveal", "id": 2, "table": "cup-preflight-alice", "nonce": nonce.hex()})
    ex["entropy"] += admin.ask({"type": "entropy", "id": 43, "table": "cup-preflight-alice"})
    for cl in (c, js, s, d, admin, *seats, alice):
        cl.close()
    return ex


def transcripts(ref: RefereeInThread, ctx: zmq.Context[zmq.Socket[bytes]], ex: dict[str, list[dict[str, Any]]]) -> dict[str, str]:
    """§15's transcripts (:mod:`referee.protocol_transcripts`), each with its own token
    letters; they also add the ``seat_status`` and ``advise`` examples to ``ex``."""
    from .protocol_transcripts import box_with_advice, oklahoma_and_resume

    def client() -> Client:
        return Client(ctx, ref.endpoint)

    ok, resume = oklahoma_and_resume(ref, ctx, Masker(), client, ex)
    box = box_with_advice(ctx, Masker(), client, ADMIN_KEY, ex)
    return {"transcript_oklahoma": ok, "transcript_box": box, "transcript_resume": resume}


def play() -> tuple[dict[str, list[dict[str, Any]]], dict[str, str]]:
    """Run the sessions against a fresh referee: (example key -> its messages as sent
    and received, with ``_shown`` every message the transcripts show; transcript key ->
    its text)."""
    with deterministic_secrets():
        ref = RefereeInThread()
        ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
        try:
            ex = sessions(ref, ctx)
            texts = transcripts(ref, ctx, ex)
        finally:
            ref.stop()
            ctx.destroy(linger=0)
    return ex, texts


def generate() -> dict[str, str]:
    """Run the sessions against a fresh referee; return example key -> the block's text."""
    ex, texts = play()
    masker = Masker()
    blocks = {key: "\n".join(fmt(masker.msg(m)) for m in msgs) + "\n" for key, msgs in ex.items() if not key.startswith("_")}
    return {**blocks, **texts}


def rewrite(text: str, blocks: dict[str, str]) -> str:
    """``text`` with every marked block replaced by its generated text."""

    def sub(m: re.Match[str]) -> str:
        key = m.group(1)
        if key in ELSEWHERE and key not in blocks:
            return m.group(0)
        if key not in blocks:
            raise KeyError(f"protocol.md marks an example {key!r} that no session produces")
        fence = "text" if key.startswith("transcript_") else "json"
        return f"<!-- example: {key} -->\n```{fence}\n{blocks[key]}```"

    return MARK.sub(sub, text)


def main(argv: list[str]) -> int:
    text = PROTOCOL_MD.read_text(encoding="utf-8")
    new = rewrite(text, generate())
    if "--check" in argv:
        if new != text:
            print(
                "protocol.md's examples differ from a real referee's session: run python -m referee.protocol_examples",
                file=sys.stderr,
            )
            return 1
        return 0
    PROTOCOL_MD.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
