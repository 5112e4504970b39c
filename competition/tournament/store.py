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

Secret deals (docs/tournaments.md, *Secret deals*): the event's 32-byte secret, from
which every deal's seed is derived (:mod:`okgin.schedule`), is kept here and nowhere
else, in ``meta.secret``; the file is therefore created mode 0600 (its ``-wal`` and
``-shm`` side files too). ``meta.secret_commitment`` (SHA-256 of the secret) is public
from the start. A deal's seed goes into ``deals`` once every game of the deal has
ended, and ``meta.secret_revealed`` is set when the event is complete: only what these
two hold may be shown to anyone. ``commitments`` keeps each game's ``seed_hash`` (from
``game_start``) and the referee's salt, so that ``okgin tournament verify`` can check
every game's commitment.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from okgin.schedule import commitment, new_secret

from .config import TournamentConfig

SCHEMA_VERSION = 2  # 2: secret deals (meta.secret, deals, commitments)

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
CREATE TABLE IF NOT EXISTS commitments (
    idx       INTEGER PRIMARY KEY,   -- games.idx
    seed_hash TEXT NOT NULL,         -- game_start's commitment: SHA-256(salt || seed)
    salt      TEXT NOT NULL          -- the referee's salt, from its reveal after the game ('' if it gave none)
);
CREATE TABLE IF NOT EXISTS deals (
    deal     INTEGER PRIMARY KEY,
    seed     TEXT NOT NULL,          -- revealed: every game of this deal had ended
    revealed REAL NOT NULL
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
    seed_hash: str = ""  # game_start's commitment to the seed
    salt: str = ""  # the referee's salt, revealed to the runner after the game


def side_files(path: Path) -> list[Path]:
    """The results file and the side files SQLite keeps beside it in WAL mode."""
    return [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm"),
            path.with_name(path.name + "-journal")]


def discard(path: str | Path) -> None:
    """Remove a results file a failed start made (and its side files): a run that
    never played leaves nothing behind to be mistaken for a tournament."""
    for f in side_files(Path(path)):
        with contextlib.suppress(FileNotFoundError):
            f.unlink()


def _private(path: Path) -> None:
    """Mode 0600 for the file and its side files: they hold the event secret."""
    for f in side_files(path):
        with contextlib.suppress(FileNotFoundError):
            os.chmod(f, 0o600)


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
        if not exists:
            # Created private before SQLite opens it (SQLite gives its -wal and -shm the
            # database's mode); no moment exists where the secret is in a readable file.
            with contextlib.suppress(FileExistsError):
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        _private(path)
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
            if store.get_meta("secret") is None:
                store.close()
                raise StoreError(f"{path} was made by an okgin before secret deals (its seeds are public); "
                                 "it cannot be resumed by this one: start a new database")
            store.log_event("resume", f"resumed with {store.count_games()} games recorded")
            _private(path)
            return store
        store.conn.executescript(SCHEMA)
        secret = cfg.fixed_secret
        fixed = secret is not None
        if secret is None:
            secret = new_secret()
        with store.transaction():
            for k, v in {
                "schema_version": str(SCHEMA_VERSION),
                "name": cfg.name,
                "fingerprint": cfg.fingerprint(),
                "config": json.dumps(cfg.fingerprint_data(), sort_keys=True),
                "created": f"{time.time():.3f}",
                "secret": secret.hex(),
                "secret_commitment": commitment(secret),
                "secret_fixed": "1" if fixed else "0",
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
        store.log_event("start", f"tournament {cfg.name} created; secret commitment {commitment(secret)}")
        _private(path)
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
            self.conn.execute(
                "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", (key, value)
            )

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
            if g.seed_hash:
                self.conn.execute("INSERT INTO commitments(idx, seed_hash, salt) VALUES (?, ?, ?)",
                                  (g.index, g.seed_hash, g.salt))

    # ------------------------------------------------------------ secret deals
    def secret(self) -> bytes | None:
        """The event secret (None in a file made before secret deals). Never show it
        before :meth:`secret_revealed` does."""
        text = self.get_meta("secret")
        return None if text is None else bytes.fromhex(text)

    def secret_revealed(self) -> str | None:
        """The secret, hex, once the event is complete and it was revealed."""
        return self.get_meta("secret_revealed")

    def reveal_secret(self) -> None:
        secret = self.secret()
        if secret is not None and self.secret_revealed() is None:
            self.set_meta("secret_revealed", secret.hex())
            self.log_event("reveal", f"secret {secret.hex()} revealed (commitment {commitment(secret)})")

    # ----------------------------------------------------- participants' nonces
    def entropy(self) -> dict[str, Any] | None:
        """The nonce record of the preflight (competition.tournament.entropy), or None: an
        event from before nonces, or one whose preflight has not collected them yet."""
        text = self.get_meta("entropy")
        return None if text is None else dict(json.loads(text))

    def set_entropy(self, record: dict[str, Any]) -> None:
        """Keep the nonce record, once: the deals of the whole event depend on it."""
        if self.get_meta("entropy") is not None:
            raise StoreError(f"{self.path} already holds the participants' nonces")
        self.set_meta("entropy", json.dumps(record, sort_keys=True))

    def entropy_nonces(self) -> dict[str, bytes] | None:
        """The revealed nonces (name -> 32 bytes) the deals derive from; None before nonces."""
        rec = self.entropy()
        return None if rec is None else {n: bytes.fromhex(v) for n, v in rec.get("nonces", {}).items()}

    def reveal_deal(self, deal: int, seed: str) -> None:
        """Publish deal ``deal``'s seed: only once every game of the deal has ended."""
        with self.transaction():
            self.conn.execute("INSERT OR IGNORE INTO deals(deal, seed, revealed) VALUES (?, ?, ?)", (deal, seed, time.time()))

    def revealed_deals(self) -> dict[int, str]:
        try:
            return {int(r[0]): str(r[1]) for r in self.conn.execute("SELECT deal, seed FROM deals")}
        except sqlite3.OperationalError:
            return {}  # a file made before secret deals

    def commitments(self) -> dict[int, tuple[str, str]]:
        """Per game index: (seed_hash, salt)."""
        try:
            return {int(r[0]): (str(r[1]), str(r[2])) for r in self.conn.execute("SELECT idx, seed_hash, salt FROM commitments")}
        except sqlite3.OperationalError:
            return {}

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
        return [tuple(r) for r in rows if wanted is None or r[1] in wanted]


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
