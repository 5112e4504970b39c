#!/usr/bin/env python3
"""A complete okgin bot written from protocol.md alone: pyzmq + msgpack, nothing of okgin.

It is the proof of the referee issue's "done when": someone who read only protocol.md
can write a bot that plays whole games of both variants. It speaks the protocol by hand
(one DEALER, one msgpack map per frame), keeps its own deadwood arithmetic (docs/rules.md §2),
sends heartbeats, reconnects with its token after silence, advises its captain when it
sits out, and plays ``--games`` games (rematch on its table, or queue again).

    python raw_bot.py --endpoint tcp://127.0.0.1:7117 --queue oklahoma --games 2
    python raw_bot.py --endpoint ... --token TOKEN          # a reserved seat
    python raw_bot.py --endpoint ... --join friday --variant box

Prints one JSON line per finished game; exits 0 when all its games ended, 1 otherwise.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from typing import Any

import msgpack
import zmq

RANKS = "A23456789TJQK"


# --------------------------------------------------------------- cards and melds
def rank(c: str) -> int:
    return RANKS.index(c[0])


def value(c: str) -> int:
    return min(rank(c) + 1, 10)


def all_melds(cards: list[str]) -> list[frozenset[str]]:
    """Every set (3 or 4 of a rank) and run (3+ consecutive of a suit, ace low) in cards."""
    out: list[frozenset[str]] = []
    by_rank: dict[int, list[str]] = {}
    by_suit: dict[str, list[str]] = {}
    for c in cards:
        by_rank.setdefault(rank(c), []).append(c)
        by_suit.setdefault(c[1], []).append(c)
    for group in by_rank.values():
        for k in (3, 4):
            out.extend(frozenset(x) for x in itertools.combinations(group, k))
    for suited in by_suit.values():
        s = sorted(suited, key=rank)
        for i in range(len(s)):
            j = i
            while j + 1 < len(s) and rank(s[j + 1]) == rank(s[j]) + 1:
                j += 1
                if j - i >= 2:
                    out.append(frozenset(s[i : j + 1]))
    return out


def deadwood(cards: list[str]) -> int:
    """The least total value of unmelded cards over every arrangement into melds."""
    melds = all_melds(cards)
    total = sum(value(c) for c in cards)
    best = total

    def search(start: int, used: frozenset[str], melded: int) -> None:
        nonlocal best
        best = min(best, total - melded)
        for i in range(start, len(melds)):
            m = melds[i]
            if not (m & used):
                search(i + 1, used | m, melded + sum(value(c) for c in m))

    search(0, frozenset(), 0)
    return best


def best_discard(hand: list[str], barred: str | None = None) -> tuple[int, str]:
    """(deadwood after, card) of the best card to throw from an 11-card hand."""
    options = [(deadwood([x for x in hand if x != c]), -value(c), c) for c in hand if c != barred]
    dw, _, card = min(options)
    return dw, card


def choose(view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any]:
    """The move: gin or the lowest knock when allowed, else keep deadwood low."""
    kinds = {a["kind"] for a in legal}
    hand = list(view["hand"])
    top = view["discard_pile"][-1] if view["discard_pile"] else None
    if "big_gin" in kinds:
        return {"kind": "big_gin"}
    if "take" in kinds:  # the upcard offer
        dw_now = deadwood(hand)
        after, _ = best_discard([*hand, view["upcard"]], barred=view["upcard"])
        return {"kind": "take"} if after < dw_now - 1 else {"kind": "pass"}
    if "draw_stock" in kinds:
        if "draw_discard" in kinds and top is not None:
            after, _ = best_discard([*hand, top], barred=top)
            if after < deadwood(hand) - 1:
                return {"kind": "draw_discard"}
        return {"kind": "draw_stock"}
    knocks = [a for a in legal if a["kind"] == "knock"]
    if knocks:
        return min(knocks, key=lambda a: deadwood([x for x in hand if x != a["card"]]))
    discards = [a for a in legal if a["kind"] == "discard"]
    _, card = best_discard(hand, barred=view.get("taken_card"))
    for a in discards:
        if a["card"] == card:
            return a
    return discards[0] if discards else legal[0]


# --------------------------------------------------------------- the protocol
class Bot:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.ctx = zmq.Context()
        self.sock: zmq.Socket | None = None
        self.token: str | None = args.token
        self.heartbeat_s = 5.0
        self.liveness = 3
        self.last_recv = self.last_sent = time.monotonic()
        self.games_done = 0
        self.tables: set[str] = set()
        self.ids = itertools.count(1)

    def send(self, msg: dict[str, Any]) -> None:
        assert self.sock is not None
        self.sock.send(msgpack.packb(msg, use_bin_type=True))
        self.last_sent = time.monotonic()

    def connect(self) -> None:
        if self.sock is not None:
            self.sock.close(0)
        self.sock = self.ctx.socket(zmq.DEALER)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.setsockopt(zmq.SNDTIMEO, 20000)  # a send never hangs the bot (it raises zmq.Again)
        self.sock.connect(self.args.endpoint)
        hello: dict[str, Any] = {"type": "hello", "id": next(self.ids), "protocol": 1, "role": "player", "name": self.args.name}
        if self.token:
            hello["token"] = self.token
        self.send(hello)
        self.last_recv = time.monotonic()

    def sit_down(self) -> None:
        a = self.args
        if a.queue:
            rules: dict[str, Any] = {}
            for r in a.rule:
                k, v = r.split("=", 1)
                rules[k] = int(v) if v.lstrip("-").isdigit() else {"true": True, "false": False}.get(v, v)
            self.send({"type": "queue", "id": next(self.ids), "variant": a.queue, "rules": rules})
        elif a.join:
            self.send({"type": "join", "id": next(self.ids), "table": a.join, "variant": a.variant})
        # with a reserved-seat token the referee seats us at once

    def run(self) -> int:
        self.connect()
        while True:
            assert self.sock is not None
            timeout = self.heartbeat_s
            if self.sock.poll(int(timeout * 1000 / 2)):
                msg = msgpack.unpackb(self.sock.recv(), raw=False)
                self.last_recv = time.monotonic()
                done = self.handle(msg)
                if done is not None:
                    return done
            now = time.monotonic()
            if now - self.last_sent >= self.heartbeat_s:
                self.send({"type": "heartbeat"})
            if now - self.last_recv > self.heartbeat_s * self.liveness:
                if not self.token:
                    return 1
                print(f"{self.args.name}: referee silent, reconnecting", file=sys.stderr)
                self.connect()

    def handle(self, m: dict[str, Any]) -> int | None:
        t = m.get("type")
        if t == "welcome":
            self.token = m["token"]
            self.heartbeat_s = m["heartbeat_ms"] / 1000
            self.liveness = m["liveness"]
            if not m["resumed"] and not self.args.token:
                self.sit_down()
        elif t == "seated":
            self.tables.add(m["table"])
        elif t == "prompt":
            self.send({"type": "act", "table": m["table"], "seq": m["seq"], "action": choose(m["view"], m["legal"])})
        elif t == "advise_prompt":
            a = choose(m["view"], m["legal"])
            self.send({"type": "advise", "table": m["table"], "seq": m["seq"], "action": a, "text": f"I would {a['kind']}"})
        elif t == "game_end":
            self.games_done += 1
            print(json.dumps({"bot": self.args.name, "table": m["table"], "game": m["game"], "termination": m["termination"],
                              "winner": m["winner"], "scores": m["final"]["scores"], "seed": m["seed"]}), flush=True)
            if self.games_done >= self.args.games:
                self.send({"type": "bye"})
                return 0
            if self.args.queue:
                self.send({"type": "leave", "id": next(self.ids), "table": m["table"]})
                self.tables.discard(m["table"])
                self.sit_down()
            else:
                self.send({"type": "rematch", "id": next(self.ids), "table": m["table"]})
        elif t == "error":
            if m["name"] not in ("stale_seq",):  # stale advice is a normal race
                print(f"{self.args.name}: error {m['code']} {m['name']}: {m['message']}", file=sys.stderr)
            if m["name"] in ("version_mismatch", "bad_token", "auth_failed"):
                return 1
        elif t == "shutdown":
            return 0 if self.games_done >= self.args.games else 1
        # heartbeat, event, hand_end, advice, rematch_status, snapshot, ... need no answer;
        # unknown types are ignored (protocol.md §14)
        return None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--endpoint", default="tcp://127.0.0.1:7117")
    p.add_argument("--name", default="raw-bot")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--queue", choices=("oklahoma", "box"))
    g.add_argument("--join", metavar="TABLE")
    g.add_argument("--token")
    p.add_argument("--variant", choices=("oklahoma", "box"), default="oklahoma")
    p.add_argument("--rule", action="append", default=[], metavar="NAME=VALUE")
    p.add_argument("--games", type=int, default=1)
    args = p.parse_args(argv)
    return Bot(args).run()


if __name__ == "__main__":
    sys.exit(main())
