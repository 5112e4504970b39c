"""The results file: one SQLite database per tournament, written as games finish.

Why SQLite: one file an organiser can copy, open with any SQL tool and query; atomic
transactions, so a game is either wholly recorded or not at all. Each finished game is
one ``INSERT`` in its own transaction, committed before the runner does anything else
(WAL journal, ``synchronous=FULL``), so a ``kill -9`` of the runner, or a power cut, loses
at most the games still being played, which ``--resume`` then plays again.

A game's identity is its schedule index (``games.idx``, the primary key): a game can
never be counted twice, and the set of recorded indices is exactly what a resumed run
skips. The config's fingerprint is kept in ``meta``; resuming with a different one is
refused (it would mix two tournaments).
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .config import TournamentConfig

SCHEMA_VERSION = 1

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS participants (
    name        TEXT PRIMARY KEY,
    position    INTEGER NOT NULL,   -- order in the config file
    kind        TEXT NOT NULL,      -- bot | command | remote
    description TEXT NOT NULL,
    token       TEXT                -- remote bots: the token the organiser handed out
);
CREATE TABLE IF NOT EXISTS games (
    idx         INTEGER PRIMARY KEY, -- position in the schedule: the game's identity
    key         TEXT NOT NULL UNIQUE,
    deal        INTEGER NOT NULL,
    seating     INTEGER NOT NULL,
    seed        TEXT NOT NULL,
    seats       TEXT NOT NULL,       -- JSON list: participant at seat 0, 1 (, 2)
    scores      TEXT NOT NULL,       -- JSON list of final scores, by seat
    winner      TEXT,                -- participant name; NULL if nobody won
    termination TEXT NOT NULL,       -- normal | timeout | illegal | disconnect | crash | abandoned | resigned
    culprit     TEXT,                -- the participant that forfeited, if one did
    reason      TEXT NOT NULL,       -- one sentence
    hands       INTEGER NOT NULL,
    clocks      TEXT NOT NULL,       -- JSON: remaining time per seat at the end, as the referee reported it
    record      TEXT NOT NULL,       -- JSON okgin-record: rules + seed + every action (replayable)
    referee     TEXT NOT NULL,       -- endpoint of the referee that played it
    table_id    TEXT NOT NULL,
    attempts    INTEGER NOT NULL,    -- 1, or more if a dying referee made the runner replay it
    started     REAL NOT NULL,       -- wall-clock (unix seconds), for people; never used for ordering
    finished    REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
    id     INTEGER PRIMARY KEY AUTOINCREMENT,
    at     REAL NOT NULL,
    kind   TEXT NOT NULL,            -- start | resume | referee-died | replay | bot-crash | sprt | finish ...
    game   INTEGER,
    detail TEXT NOT NULL
);
"""


class StoreError(RuntimeError):
    """The results file cannot be used as asked (wrong tournament, already exists...)."""


@dataclass(frozen=True)
class GameResult:
    """One finished game as the runner recorded it."""

    index: int
    key: str
    deal: int
    seating: int
    seed: str
    seats: tuple[str, ...]
    scores: tuple[int, ...]
    winner: str | None
    termination: str
    culprit: str | None
    reason: str
    hands: int
    clocks: dict[str, Any] = field(default_factory=dict)
    record: dict[str, Any] = field(default_factory=dict)
    referee: str = ""
    table_id: str = ""
    attempts: int = 1
    started: float = 0.0
    finished: float = 0.0


class ResultsStore:
    """A tournament's SQLite file. One writer (the runner); readers may look at any time."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.conn = sqlite3.connect(str(self.path), isolation_level=None, timeout=30)
        try:
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=FULL")
        except sqlite3.DatabaseError as e:
            self.conn.close()
            raise StoreError(f"{self.path} is not a tournament results file ({e})") from None

    # ------------------------------------------------------------------ opening
    @classmethod
    def open_existing(cls, path: str | Path) -> ResultsStore:
        """Open a results file for reading (``okgin tournament report``)."""
        path = Path(path)
        if not path.is_file():
            raise StoreError(f"{path}: no such results file")
        store = cls(path)
        try:
            version = store.get_meta("schema_version")
        except sqlite3.DatabaseError as e:
            store.close()
            raise StoreError(f"{path} is not a tournament results file ({e})") from None
        if version is None:
            store.close()
            raise StoreError(f"{path} is not a tournament results file (no schema_version)")
        if int(version) > SCHEMA_VERSION:
            store.close()
            raise StoreError(f"{path} was written by a newer okgin (schema {version}; this one reads {SCHEMA_VERSION})")
        return store

    @classmethod
    def for_run(cls, cfg: TournamentConfig, path: str | Path, resume: bool) -> ResultsStore:
        """Create the file for a new run, or reopen it for ``--resume`` (same config only)."""
        path = Path(path)
        exists = path.exists() and path.stat().st_size > 0
        if exists and not resume:
            raise StoreError(f"{path} already exists: add --resume to continue that tournament, or choose another database")
        if not exists and resume:
            raise StoreError(f"--resume: {path} does not exist (nothing to resume); run without --resume to start")
        path.parent.mkdir(parents=True, exist_ok=True)
        store = cls(path)
        if exists:
            fp = store.get_meta("fingerprint")
            if fp is None:
                store.close()
                raise StoreError(f"{path} is not a tournament results file")
            if fp != cfg.fingerprint():
                old = json.loads(store.get_meta("config") or "{}")
                diff = sorted(k for k in set(old) | set(cfg.fingerprint_data()) if old.get(k) != cfg.fingerprint_data().get(k))
                store.close()
                raise StoreError(
                    f"{path} holds a different tournament (changed: {', '.join(diff) or 'unknown'}); "
                    "resuming would mix two tournaments: restore the old config or use a new database"
                )
            store.log_event("resume", f"resumed with {store.count_games()} games recorded")
            return store
        store.conn.executescript(SCHEMA)
        with store.transaction():
            for k, v in {
                "schema_version": str(SCHEMA_VERSION),
                "name": cfg.name,
                "fingerprint": cfg.fingerprint(),
                "config": json.dumps(cfg.fingerprint_data(), sort_keys=True),
                "created": f"{time.time():.3f}",
            }.items():
                store.conn.execute("INSERT INTO meta(key, value) VALUES (?, ?)", (k, v))
            for pos, p in enumerate(cfg.participants):
                token = p.token
                if p.kind == "remote" and not token:
                    token = secrets.token_urlsafe(18)
                store.conn.execute(
                    "INSERT INTO participants(name, position, kind, description, token) VALUES (?, ?, ?, ?, ?)",
                    (p.name, pos, p.kind, p.describe(), token),
                )
        store.log_event("start", f"tournament {cfg.name} created")
        return store

    def close(self) -> None:
        self.conn.close()

    def transaction(self) -> _Tx:
        return _Tx(self.conn)

    # --------------------------------------------------------------------- meta
    def get_meta(self, key: str) -> str | None:
        try:
            row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        except sqlite3.OperationalError:
            return None
        return None if row is None else row[0]

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction():
            self.conn.execute("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", (key, value))

    def config_data(self) -> dict[str, Any]:
        return json.loads(self.get_meta("config") or "{}")

    def participants(self) -> list[dict[str, Any]]:
        rows = self.conn.execute("SELECT name, kind, description, token FROM participants ORDER BY position").fetchall()
        return [{"name": r[0], "kind": r[1], "description": r[2], "token": r[3]} for r in rows]

    def tokens(self) -> dict[str, str]:
        return {p["name"]: p["token"] for p in self.participants() if p["token"]}

    # -------------------------------------------------------------------- games
    def record_game(self, g: GameResult) -> None:
        """Write one finished game, atomically. A second write of the same index fails."""
        with self.transaction():
            self.conn.execute(
                "INSERT INTO games(idx, key, deal, seating, seed, seats, scores, winner, termination, culprit, reason, hands,"
                " clocks, record, referee, table_id, attempts, started, finished)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    g.index, g.key, g.deal, g.seating, g.seed, json.dumps(list(g.seats)), json.dumps(list(g.scores)),
                    g.winner, g.termination, g.culprit, g.reason, g.hands, json.dumps(g.clocks, sort_keys=True),
                    json.dumps(g.record, sort_keys=True, separators=(",", ":")), g.referee, g.table_id, g.attempts,
                    g.started, g.finished,
                ),
            )

    def done_indices(self) -> set[int]:
        return {r[0] for r in self.conn.execute("SELECT idx FROM games")}

    def count_games(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM games").fetchone()[0])

    def games(self, with_records: bool = False) -> list[GameResult]:
        cols = "idx, key, deal, seating, seed, seats, scores, winner, termination, culprit, reason, hands, clocks, referee," \
               " table_id, attempts, started, finished" + (", record" if with_records else "")
        out = []
        for r in self.conn.execute(f"SELECT {cols} FROM games ORDER BY idx"):
            out.append(
                GameResult(
                    index=r[0], key=r[1], deal=r[2], seating=r[3], seed=r[4], seats=tuple(json.loads(r[5])),
                    scores=tuple(json.loads(r[6])), winner=r[7], termination=r[8], culprit=r[9], reason=r[10], hands=r[11],
                    clocks=json.loads(r[12]), referee=r[13], table_id=r[14], attempts=r[15], started=r[16], finished=r[17],
                    record=json.loads(r[18]) if with_records else {},
                )
            )
        return out

    def record_of(self, index: int) -> dict[str, Any] | None:
        row = self.conn.execute("SELECT record FROM games WHERE idx = ?", (index,)).fetchone()
        return None if row is None else json.loads(row[0])

    # ------------------------------------------------------------------- events
    def log_event(self, kind: str, detail: str, game: int | None = None) -> None:
        with self.transaction():
            self.conn.execute("INSERT INTO events(at, kind, game, detail) VALUES (?, ?, ?, ?)", (time.time(), kind, game, detail))

    def events(self, kinds: Iterable[str] | None = None) -> list[tuple[float, str, int | None, str]]:
        rows = self.conn.execute("SELECT at, kind, game, detail FROM events ORDER BY id").fetchall()
        wanted = None if kinds is None else set(kinds)
        return [tuple(r) for r in rows if wanted is None or r[1] in wanted]  # type: ignore[misc]


class _Tx:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (or ``ROLLBACK`` on an exception).

    Explicit because the connection runs in autocommit mode: Python's implicit
    transactions would otherwise decide by themselves when a game is durable.
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        self.conn.execute("COMMIT" if exc_type is None else "ROLLBACK")
