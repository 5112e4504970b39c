"""protocol.md §19.1's transcript, played against a real arena (a front and a shard process).

    python -m arena.examples           # rewrite the block marked transcript_arena
    python -m arena.examples --check   # exit 1 if it differs (tests/arena/test_arena_examples.py)

The same kit as §15's transcripts (:mod:`referee.protocol_transcripts`, :mod:`referee.protocol_kit`):
every line is a message really sent to or received from the arena or its shard; what varies
between runs is masked (tokens, keys, ids the arena draws, the shard's port, seeds and salts).
The referee's generator leaves this block alone (``referee.protocol_examples.ELSEWHERE``):
the referee may not import the arena.

Deterministic by construction: the game is made by a challenge (its maker sits first; a
seek's seats are drawn at random) and ends by a resignation before any move, so its deal
does not matter; both accounts start from the default rating.
"""

from __future__ import annotations

import asyncio
import re
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import zmq

from okgin.protocol.catalogue import PROTOCOL_MINOR
from referee.protocol_examples import MARK, PROTOCOL_MD
from referee.protocol_kit import Client, Masker
from referee.protocol_transcripts import Transcript, is_a

from .config import load_config
from .server import Arena
from .store import Store, state_db_url

__all__ = ["KEY", "ArenaMasker", "generate", "main", "play"]

KEY = "transcript_arena"


class ArenaMasker(Masker):
    """Masker, and the arena's own varying values: keys, ids, the shard's port."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: dict[str, str] = {}

    def ident(self, kind: str, value: str) -> str:
        if value not in self.ids:
            n = sum(1 for v in self.ids.values() if v.startswith(f"<{kind} "))
            self.ids[value] = f"<{kind} {n + 1}>"
        return self.ids[value]

    def msg(self, m: dict[str, Any], keep_view: bool = False) -> dict[str, Any]:
        out = super().msg(m, keep_view)
        for k in ("seek", "challenge", "game"):
            if isinstance(out.get(k), str) and m.get("type") not in ("game_start", "game_end", "seated"):
                out[k] = self.ident(k, out[k])
        if isinstance(out.get("table"), str) and out["table"].startswith("arena-"):
            out["table"] = "<table of " + self.ident("game", out["table"][len("arena-"):])[1:]
        if isinstance(out.get("key"), str):
            out["key"] = f"<{m.get('account')}'s API key>"
        if isinstance(out.get("endpoint"), str):
            out["endpoint"] = re.sub(r":\d+$", ":<shard port>", out["endpoint"])
        if "expires_ms" in out:
            out["expires_ms"] = 59000  # 60 s from when it was made, less the time it took to arrive
        return out


def script(t: Transcript, ctx: zmq.Context[zmq.Socket[bytes]], endpoint: str, keys: dict[str, str]) -> None:
    def hello(label: str, c: Client, extra: dict[str, Any], keep: tuple[str, ...] | None = None) -> dict[str, Any]:
        msg = {"type": "hello", "id": 1, "protocol": 1, "minor": PROTOCOL_MINOR, "role": "player", **extra}
        t.send(label, c, msg)
        return t.recv([(label, c)], is_a("welcome"), keep=keep, full=("clocks",))[0]

    ann, bob = Client(ctx, endpoint), Client(ctx, endpoint)
    t.comment("ann and bob are bot accounts (okgin arena account add NAME --bot printed their keys once); each\n"
              "client reads its key from a file and signs in. A player's name is its account's.")
    hello("C0", ann, {"name": "ann", "account": "ann", "key": keys["ann"]})
    hello("C1", bob, {"name": "bob", "account": "bob", "key": keys["bob"]}, keep=("type", "id", "name", "account"))
    t.comment("A seek waits for an opponent near in rating (the gap widens with waiting); it can be cancelled.")
    t.send("C0", ann, {"type": "seek", "id": 2, "variant": "oklahoma", "clock": "blitz", "rated": True})
    sought = t.recv([("C0", ann)], is_a("sought"))[0]
    t.send("C0", ann, {"type": "cancel", "id": 3, "seek": sought["seek"]})
    t.recv([("C0", ann)], is_a("ok"))
    t.comment("A challenge names its opponent; bob is offered it and accepts.")
    t.send("C0", ann, {"type": "challenge", "id": 4, "to": ["bob"], "variant": "oklahoma", "clock": "standard", "rated": True})
    t.recv([("C0", ann)], is_a("challenged"))
    offer = t.recv([("C1", bob)], is_a("challenge_offer"))[0]
    t.send("C1", bob, {"type": "accept", "id": 2, "challenge": offer["challenge"]})
    t.recv([("C1", bob)], is_a("ok"))
    t.comment("The arena has created the game's table at one of its shard referees: each player is told where.")
    ready = {"ann": t.recv([("C0", ann)], is_a("game_ready"), full=("clock",))[0],
             "bob": t.recv([("C1", bob)], is_a("game_ready"), keep=("type", "game", "table", "token", "seat"))[0]}
    t.comment("Each opens a new connection to the shard's endpoint and says hello with its seat token (18),\n"
              "keeping its arena connection open. From here on it is a game like any other (4.3).")
    seats = {"ann": Client(ctx, ready["ann"]["endpoint"]), "bob": Client(ctx, ready["bob"]["endpoint"])}
    for label, name in (("C2", "ann"), ("C3", "bob")):
        c = seats[name]
        t.send(label, c, {"type": "hello", "id": 1, "protocol": 1, "minor": PROTOCOL_MINOR, "role": "player", "name": name,
                          "token": ready[name]["token"]})
        t.recv([(label, c)], is_a("welcome"), keep=("type", "id", "token", "name", "resumed"))
        t.recv([(label, c)], is_a("seated"), keep=("type", "table", "seat", "players", "status"))
    t.recv([("C2", seats["ann"]), ("C3", seats["bob"])], is_a("game_start"),
           keep=("type", "table", "game", "seat", "players", "seed_hash"))
    t.comment("bob resigns at once (a resignation, a timeout, illegal moves or a disconnect longer than the\n"
              "grace are all losses).")
    table = ready["bob"]["table"]
    t.send("C3", seats["bob"], {"type": "resign", "id": 2, "table": table})
    t.recv([("C3", seats["bob"])], is_a("ok"))
    t.recv([("C2", seats["ann"]), ("C3", seats["bob"])], is_a("game_end"),
           keep=("type", "table", "termination", "winner", "at_fault", "seed", "salt"))
    t.comment("The arena has stored the game (its record, its journal's path) and rated it; on the arena connection:")
    t.recv([("C0", ann)], is_a("game_over"))
    t.recv([("C1", bob)], is_a("game_over"))
    t.send("C1", bob, {"type": "leaderboard", "id": 3, "variant": "oklahoma", "limit": 10})
    t.recv([("C1", bob)], is_a("leaderboard_page"))
    for c in (ann, bob, *seats.values()):
        c.close()


def play() -> tuple[str, list[dict[str, Any]]]:
    """The transcript's text, and every message it shows (as sent or received). The arena runs
    on this thread's loop (its shard is a child process), the script's blocking clients in a
    worker thread."""
    shown: list[dict[str, Any]] = []
    t = Transcript(ArenaMasker(), shown)

    async def run(state: Path, keys: dict[str, str]) -> None:
        cfg = replace(load_config(None, state=str(state), shards=1, bind="tcp://127.0.0.1:0"), show_up_ms=20000)
        arena = Arena(cfg)
        endpoint = await arena.start()
        ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
        try:
            await asyncio.to_thread(script, t, ctx, endpoint, keys)
        finally:
            await arena.stop("examples done")
            ctx.destroy(linger=0)

    with tempfile.TemporaryDirectory(prefix="okgin-arena-example-") as tmp:
        state = Path(tmp) / "arena"
        state.mkdir(mode=0o700)
        store = Store.open(state_db_url(state))
        try:
            keys = {n: store.add_account(n, "bot", created_ms=0) for n in ("ann", "bob")}
        finally:
            store.close()
        asyncio.run(run(state, keys))
    return t.text(), shown


def generate() -> str:
    return play()[0]


def rewrite(text: str, block: str) -> str:
    def sub(m: re.Match[str]) -> str:
        if m.group(1) != KEY:
            return m.group(0)
        return f"<!-- example: {KEY} -->\n```text\n{block}```"

    return MARK.sub(sub, text)


def main(argv: list[str]) -> int:
    text = PROTOCOL_MD.read_text(encoding="utf-8")
    new = rewrite(text, generate())
    if "--check" in argv:
        if new != text:
            print("protocol.md's arena transcript differs from a real arena's session: run python -m arena.examples",
                  file=sys.stderr)
            return 1
        return 0
    PROTOCOL_MD.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
