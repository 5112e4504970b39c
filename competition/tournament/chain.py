"""The results chain: one hash that commits to every recorded game, in schedule order.

Why: a results file is the organiser's file. ``okgin tournament verify`` checks that it
is *consistent* (every game replays, every seed is the committed secret's, ...), but a
consistent file can still be edited: a row deleted, two seatings' records swapped, a
score changed, and everything recomputed to agree. Once the chain head is published
(printed at the end of the event, stored in ``meta.chain_head``), any such edit gives
another head, and anyone holding the published head sees it.

The chain, version 1 (:data:`CHAIN_VERSION`)::

    link[-1] = SHA-256("okgin-results-chain/1\\n" || canonical JSON of the event header)
    link[i]  = SHA-256(link[i-1] || canonical JSON of game i's row and commitment)
    head     = the last link (or link[-1] when no game was recorded)

over the recorded games in **schedule order** (``games.idx`` ascending), whatever order
they finished in: games finish out of order with concurrency > 1, so the chain is
computed from the file once the event is complete (:func:`chain_head`), not as games
arrive. A game's bytes hold every column of its row (:data:`GAME_COLUMNS`, the JSON
columns as the exact text stored) and its ``seed_hash`` and ``salt``; its index is one
of them, so a deletion, a swap, an insertion or any edit changes every later link. The
header (:data:`HEADER_META`) binds the chain to the event: its name, stored config, the
secret's commitment, whether the organiser fixed the secret, and the participants'
nonce record (meta.entropy).

What it does not do: it does not stop the organiser from rewriting the whole file
consistently *before* publishing the head. docs/tournaments.md (*Verifying an event*)
says what the published commitment and head protect against, and what they don't.

Extending: a column others add to ``games`` is *not* covered until it is added to
:data:`GAME_COLUMNS` (which changes every head: bump :data:`CHAIN_VERSION`); a meta key
that must be bound to the event (e.g. the participants' nonce commitments) goes into
:data:`HEADER_META` the same way.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from okgin.record import canonical_json

CHAIN_VERSION = 1
DOMAIN = b"okgin-results-chain/1\n"
GAME_COLUMNS = ("idx", "key", "deal", "seating", "seed", "seats", "scores", "winner", "termination", "culprit",
                "reason", "hands", "clocks", "record", "referee", "table_id", "attempts", "started", "finished")
HEADER_META = ("name", "config", "secret_commitment", "secret_fixed", "entropy")


@dataclass(frozen=True)
class Chain:
    """A chain's head and the number of games it runs over (and the first and last index)."""

    head: str
    games: int
    first: int | None = None
    last: int | None = None


def header_bytes(meta: dict[str, str | None]) -> bytes:
    return DOMAIN + canonical_json({k: meta.get(k) for k in HEADER_META}).encode()


def game_bytes(row: dict[str, Any]) -> bytes:
    """The canonical bytes of one game: its columns (as stored) and commitment."""
    return canonical_json(row).encode()


def link(prev: bytes, data: bytes) -> bytes:
    return hashlib.sha256(prev + data).digest()


def fold(meta: dict[str, str | None], rows: Iterable[dict[str, Any]]) -> Chain:
    """The chain over ``rows`` (in the order given: schedule order)."""
    cur = hashlib.sha256(header_bytes(meta)).digest()
    n = 0
    first = last = None
    for row in rows:
        cur = link(cur, game_bytes(row))
        n += 1
        first = row["idx"] if first is None else first
        last = row["idx"]
    return Chain(cur.hex(), n, first, last)


def game_rows(conn: sqlite3.Connection) -> Iterable[dict[str, Any]]:
    """Every recorded game as the chain sees it, in schedule order (one at a time: a
    long event is never held in memory)."""
    cols = ", ".join(f"g.{c}" for c in GAME_COLUMNS)
    cur = conn.execute(f"SELECT {cols}, c.seed_hash, c.salt FROM games g LEFT JOIN commitments c ON c.idx = g.idx "
                       "ORDER BY g.idx")
    names = (*GAME_COLUMNS, "seed_hash", "salt")
    for r in cur:
        yield dict(zip(names, r, strict=True))


def header_meta(conn: sqlite3.Connection) -> dict[str, str | None]:
    marks = ", ".join("?" for _ in HEADER_META)
    found = dict(conn.execute(f"SELECT key, value FROM meta WHERE key IN ({marks})", HEADER_META).fetchall())
    return {k: found.get(k) for k in HEADER_META}


def chain_head(conn: sqlite3.Connection) -> Chain:
    """The chain of the results file open on ``conn``, computed from what it holds now."""
    return fold(header_meta(conn), game_rows(conn))
