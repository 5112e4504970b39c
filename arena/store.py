"""The arena's database: accounts and their key hashes, games, ratings and their history.

One implementation for SQLite (the embedded default) and PostgreSQL (several fronts, or a
database on another machine), through DB-API alone: the SQL is written once with ``?``
placeholders and portable types (BIGINT, DOUBLE PRECISION, TEXT; booleans as 0/1), and a
small dialect shim (:class:`Dialect`) changes the placeholders to ``%s``, adds
``FOR UPDATE`` to the reads a transaction will write back on PostgreSQL, and opens
transactions (``BEGIN IMMEDIATE`` on SQLite). psycopg is imported only for a
``postgresql://`` URL.

Why these choices:

- **One transaction per finished game** (:meth:`Store.finish_game`): the game's row, every
  player's rating and the rating history change together or not at all, so a ``kill -9`` at
  any moment leaves ratings that :meth:`Store.rebuild_ratings` reproduces. A second call for
  the same game changes nothing (the front may report a game again after a restart).
- **Finish order is stored** (``games.finish_seq``): ratings depend on the order of games, and
  a rebuild replays them in that order. Two games that share a player are finished one after
  the other (the first holds the players' account rows until it commits, ``FOR UPDATE`` on
  PostgreSQL, the database lock on SQLite), so the later one gets the higher number.
- **Keys only as scrypt hashes** (:mod:`arena.keys`). :meth:`Store.check_key` costs one scrypt
  for an unknown name, a wrong key or a revoked key alike, and runs the hash outside the
  store's lock: call it from a worker thread (``asyncio.to_thread``), it takes tens of ms.
- **Thread-safe**: one connection behind one lock; every method is short except the hash.
- **Versioned schema** (``schema_version``): a database written by a newer okgin is refused
  rather than misread; an older one is migrated on open (version 1 is the first; version 3
  keeps each account's no-shows, so a cooldown's doubling survives a restart of the arena).

Times are integer milliseconds passed in by the caller; the store reads the clock only to
stamp ``created_ms`` when a caller gives none (the CLI).
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import keys
from .ratings import MODELS, Rating, after_game, game_ranks, initial

__all__ = [
    "EVENT_STATUSES",
    "KINDS",
    "NAME_RE",
    "SCHEMA_VERSION",
    "SUBMISSION_STATUSES",
    "Account",
    "AccountExists",
    "ArenaEvent",
    "Dialect",
    "GameResult",
    "GameRow",
    "HeadToHead",
    "HostedGame",
    "NewGame",
    "RatingChange",
    "RatingPoint",
    "Store",
    "StoreError",
    "Submission",
    "UnknownAccount",
    "check_name",
    "state_db_url",
]

#: 1: accounts, games, ratings. 2: hosted bots' submissions and games (``submissions``,
#: ``hosted_games``): new tables only, made on open, so a version-1 database migrates as it is.
#: 3: each account's no-shows (``accounts.no_shows``, ``no_show_ms``), so a cooldown's doubling
#: survives a restart: two columns added to an older database on open.
#: 4: the arena's events (``events``): a new table, made on open.
SCHEMA_VERSION = 4
#: A hosted bot's life (:meth:`Store.submissions`): stored, then its validation game against
#: itself, then rated games; or failed (with the reason), or retired by a newer submission.
SUBMISSION_STATUSES = ("pending", "validating", "active", "failed", "retired")
#: An event's life (:meth:`Store.events`): scheduled, running, then finished (its standings and
#: verify result stored) or failed (with the reason).
EVENT_STATUSES = ("scheduled", "running", "finished", "failed")
#: A no-show this long after the account's last one counts as its first again (the doubling forgives).
NO_SHOW_MEMORY_MS = 24 * 3600 * 1000
KINDS = ("human", "bot")
#: Account names: ASCII letters, digits, ``_ - .``, 1-40 characters, starting with a letter or
#: digit. Narrower than a table's player names on purpose: an account name is public on
#: leaderboards, and ASCII cannot hold look-alikes of another account's name. Unique without
#: regard to case ("Alice" and "alice" are one account).
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")


class StoreError(Exception):
    """A store operation refused, with a sentence for the user."""


class AccountExists(StoreError):
    """``add_account`` with a name that is taken (in any case)."""


class UnknownAccount(StoreError, KeyError):
    """An account operation named no account."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "no such account"


def check_name(name: str) -> str:
    """``name`` if it may name an account, else StoreError saying what it may be."""
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        raise StoreError(f"account names are 1-40 ASCII letters, digits, '_', '-' or '.', starting with a letter or digit: "
                         f"{name!r}")
    return name


def state_db_url(state_dir: str | Path) -> str:
    """The default database of a state directory: ``sqlite:///STATE/arena.db``."""
    return f"sqlite:///{Path(state_dir).resolve() / 'arena.db'}"


@dataclass(frozen=True)
class Account:
    name: str
    kind: str  # "human" | "bot"
    admin: bool
    created_ms: int
    revoked: bool = False
    banned: str | None = None  # the reason, or None
    cooldown_until_ms: int = 0
    cooldown_reason: str | None = None


@dataclass(frozen=True)
class NewGame:
    """A game the front has seated. ``players``: account names in seat order."""

    id: str
    variant: str
    rated: bool
    players: tuple[str, ...]
    clock: dict[str, Any]
    shard: str
    table: str
    created_ms: int


@dataclass(frozen=True)
class GameResult:
    """How a game ended. ``winner``/``at_fault``: seats (or None); ``record``: the full game
    record (a dict, stored as JSON); ``journal``: where the referee's journal is."""

    winner: int | None
    scores: tuple[int, ...]
    termination: str
    finished_ms: int
    at_fault: int | None = None
    record: dict[str, Any] | None = None
    journal: str = ""
    seed_hash: str = ""
    seed: str = ""
    salt: str = ""


@dataclass(frozen=True)
class GameRow:
    """A stored game. ``status``: "playing", "finished" or "void". ``before``/``after``: each
    seat's display rating around the game (None while playing, for void or unrated games).
    ``record`` is filled by :meth:`Store.game` only (it can be large)."""

    id: str
    variant: str
    rated: bool
    players: tuple[str, ...]
    clock: dict[str, Any]
    shard: str
    table: str
    created_ms: int
    status: str
    finished_ms: int | None = None
    winner: int | None = None
    scores: tuple[int, ...] = ()
    termination: str | None = None
    at_fault: int | None = None
    journal: str | None = None
    seed_hash: str | None = None
    seed: str | None = None
    salt: str | None = None
    void_reason: str | None = None
    before: tuple[float | None, ...] = ()
    after: tuple[float | None, ...] = ()
    record: dict[str, Any] | None = field(default=None, compare=False)

    def result_for(self, name: str) -> str:
        """"win", "loss", "draw" or "void" for the seat of account ``name``."""
        if self.status == "void":
            return "void"
        seat = self.players.index(name)
        ranks = game_ranks(self.scores or (0,) * len(self.players), self.winner, self.at_fault)
        if all(r == ranks[seat] for r in ranks):
            return "draw"
        return "win" if ranks[seat] == 1 else "loss"


@dataclass(frozen=True)
class RatingChange:
    """What a finished game did to its players' ratings (seat order). For an unrated game
    ``rated`` is False and ``after`` equals ``before``."""

    game_id: str
    variant: str
    rated: bool
    players: tuple[str, ...]
    before: tuple[Rating, ...]
    after: tuple[Rating, ...]


@dataclass(frozen=True)
class RatingPoint:
    """One step of an account's rating history: after its ``n``-th rated game."""

    n: int
    game_id: str
    finished_ms: int
    before: float
    rating: float
    deviation: float
    volatility: float | None


@dataclass(frozen=True)
class Submission:
    """A hosted bot (``okgin arena submit``): the account it plays for, its launch command
    (words, with the tournament's placeholders), the variant it plays, where its copied
    directory is (``path``, in the state directory), its size, and where it stands:
    ``status`` one of :data:`SUBMISSION_STATUSES`, ``reason`` why it failed (or was retired),
    ``games`` its hosted games recorded so far."""

    id: int
    account: str
    command: tuple[str, ...]
    variant: str
    path: str
    files: int
    bytes: int
    created_ms: int
    status: str
    reason: str | None
    updated_ms: int
    games: int = 0


@dataclass(frozen=True)
class HostedGame:
    """A game the arena played between hosted bots: the arena game it is (``game_id``), the
    submissions at its seats, the duplicate deal it shares with its other seatings
    (``deal``), and ``attempts``: 1, or more when a worker or referee was lost under it and
    it was played again."""

    game_id: str
    submissions: tuple[int, ...]
    deal: str
    attempts: int
    created_ms: int


@dataclass(frozen=True)
class HeadToHead:
    """An account's record against one opponent, over the games they played together (a Box
    game counts once against each of the two others: ahead of them, behind, or level)."""

    opponent: str
    games: int
    wins: int
    losses: int
    draws: int


@dataclass(frozen=True)
class ArenaEvent:
    """An event an admin scheduled (``okgin arena event add``): a round robin or gauntlet of
    chosen accounts, played through the tournament machinery at ``start_ms``. Once it ran:
    ``standings`` (one dict per row: rank, account, games, wins, losses, draws, score, elo,
    err95, forfeits), ``verify`` (one dict per check: name, status ok/FAIL/skip, summary,
    problems) and ``verified`` (no check failed), or ``error`` if it could not run."""

    id: int
    name: str
    format: str
    accounts: tuple[str, ...]
    champion: str | None
    games_per_pairing: int
    start_ms: int
    created_ms: int
    created_by: str
    status: str
    results: str | None = None  # the event's results file (okgin tournament verify reads it)
    standings: tuple[dict[str, Any], ...] = ()
    verify: tuple[dict[str, Any], ...] = ()
    error: str | None = None
    finished_ms: int | None = None

    @property
    def verified(self) -> bool:
        return bool(self.verify) and all(c.get("status") != "FAIL" for c in self.verify)


_DDL = (
    "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)",
    """CREATE TABLE IF NOT EXISTS accounts (
        name_key TEXT PRIMARY KEY, name TEXT NOT NULL, kind TEXT NOT NULL, admin INTEGER NOT NULL,
        created_ms BIGINT NOT NULL, key_hash TEXT NOT NULL, key_ms BIGINT NOT NULL, revoked INTEGER NOT NULL,
        banned TEXT, cooldown_until_ms BIGINT NOT NULL, cooldown_reason TEXT,
        no_shows INTEGER NOT NULL DEFAULT 0, no_show_ms BIGINT NOT NULL DEFAULT 0)""",
    """CREATE TABLE IF NOT EXISTS account_log (
        name_key TEXT NOT NULL, seq INTEGER NOT NULL, at_ms BIGINT NOT NULL, what TEXT NOT NULL, by_name TEXT, detail TEXT,
        PRIMARY KEY (name_key, seq))""",
    """CREATE TABLE IF NOT EXISTS games (
        id TEXT PRIMARY KEY, variant TEXT NOT NULL, rated INTEGER NOT NULL, players TEXT NOT NULL, clock TEXT NOT NULL,
        shard TEXT NOT NULL, table_name TEXT NOT NULL, created_ms BIGINT NOT NULL, status TEXT NOT NULL,
        finish_seq BIGINT, finished_ms BIGINT, winner INTEGER, scores TEXT, termination TEXT, at_fault INTEGER,
        record TEXT, journal TEXT, seed_hash TEXT, seed TEXT, salt TEXT, void_reason TEXT)""",
    "CREATE INDEX IF NOT EXISTS games_status ON games (status)",
    "CREATE INDEX IF NOT EXISTS games_finish ON games (finish_seq)",
    """CREATE TABLE IF NOT EXISTS game_players (
        game_id TEXT NOT NULL, seat INTEGER NOT NULL, name_key TEXT NOT NULL, rating_before DOUBLE PRECISION,
        rating_after DOUBLE PRECISION, PRIMARY KEY (game_id, seat))""",
    "CREATE INDEX IF NOT EXISTS game_players_account ON game_players (name_key)",
    """CREATE TABLE IF NOT EXISTS ratings (
        name_key TEXT NOT NULL, variant TEXT NOT NULL, rating DOUBLE PRECISION NOT NULL,
        deviation DOUBLE PRECISION NOT NULL, volatility DOUBLE PRECISION, games INTEGER NOT NULL,
        PRIMARY KEY (name_key, variant))""",
    "CREATE INDEX IF NOT EXISTS ratings_board ON ratings (variant, rating)",
    """CREATE TABLE IF NOT EXISTS rating_history (
        name_key TEXT NOT NULL, variant TEXT NOT NULL, n INTEGER NOT NULL, game_id TEXT NOT NULL,
        finished_ms BIGINT NOT NULL, rating_before DOUBLE PRECISION NOT NULL, rating DOUBLE PRECISION NOT NULL,
        deviation DOUBLE PRECISION NOT NULL, volatility DOUBLE PRECISION, PRIMARY KEY (name_key, variant, n))""",
    # 2: hosted bots
    """CREATE TABLE IF NOT EXISTS submissions (
        id BIGINT PRIMARY KEY, name_key TEXT NOT NULL, command TEXT NOT NULL, variant TEXT NOT NULL, path TEXT NOT NULL,
        files INTEGER NOT NULL, bytes BIGINT NOT NULL, created_ms BIGINT NOT NULL, status TEXT NOT NULL, reason TEXT,
        updated_ms BIGINT NOT NULL, games INTEGER NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS submissions_status ON submissions (status)",
    """CREATE TABLE IF NOT EXISTS hosted_games (
        game_id TEXT PRIMARY KEY, submissions TEXT NOT NULL, deal TEXT NOT NULL, attempts INTEGER NOT NULL,
        created_ms BIGINT NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS hosted_games_created ON hosted_games (created_ms)",
    """CREATE TABLE IF NOT EXISTS events (
        id BIGINT PRIMARY KEY, name TEXT NOT NULL, format TEXT NOT NULL, accounts TEXT NOT NULL, champion TEXT,
        games_per_pairing INTEGER NOT NULL, start_ms BIGINT NOT NULL, created_ms BIGINT NOT NULL, created_by TEXT NOT NULL,
        status TEXT NOT NULL, results TEXT, standings TEXT, verify TEXT, error TEXT, finished_ms BIGINT)""",
)

_ACCOUNT_COLS = "name, kind, admin, created_ms, revoked, banned, cooldown_until_ms, cooldown_reason"
_GAME_COLS = ("id, variant, rated, players, clock, shard, table_name, created_ms, status, finished_ms, winner, scores, "
              "termination, at_fault, journal, seed_hash, seed, salt, void_reason")


class Dialect:
    """What differs between SQLite and PostgreSQL, and nothing else."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.pg = name == "postgresql"

    def sql(self, q: str) -> str:
        """``q`` with ``?`` placeholders, as this database wants it (no query holds a literal ``?``)."""
        return q.replace("?", "%s") if self.pg else q

    def for_update(self, q: str) -> str:
        """A read whose rows the transaction writes back: locked on PostgreSQL (SQLite's
        ``BEGIN IMMEDIATE`` already holds the whole database)."""
        return q + " FOR UPDATE" if self.pg else q

    @property
    def begin(self) -> str:
        return "BEGIN" if self.pg else "BEGIN IMMEDIATE"


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


class Store:
    """The arena's database (the module docstring says why it is built so)."""

    def __init__(self, conn: Any, dialect: Dialect, url: str) -> None:
        self.conn = conn
        self.dialect = dialect
        self.url = url
        self.lock = threading.RLock()
        self._migrate()

    # -- opening --------------------------------------------------------------------------------

    @classmethod
    def open(cls, url: str) -> Store:
        """``sqlite:///abs/path.db``, ``sqlite://relative.db``, ``sqlite://:memory:`` or
        ``postgresql://user@host:port/db`` (libpq's URL: a password belongs in ``~/.pgpass``
        or ``PGPASSWORD``, not on a command line). A new SQLite file is made 0600 (SQLite gives
        its ``-wal`` and ``-shm`` files the same mode), in a directory it does not widen."""
        if url.startswith("sqlite://"):
            path = url[len("sqlite://"):]
            if not path:
                raise StoreError("sqlite:// needs a path: sqlite:///abs/path.db or sqlite://:memory:")
            if path != ":memory:":
                p = Path(path)
                if not p.parent.is_dir():
                    raise StoreError(f"no directory {p.parent} for the database {p}")
                if not p.exists():
                    import os

                    os.close(os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600))
            try:
                conn = sqlite3.connect(path, isolation_level=None, timeout=30, check_same_thread=False)
                if path != ":memory:":
                    conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=FULL")
            except sqlite3.DatabaseError as e:
                raise StoreError(f"{path}: not an arena database ({e})") from e
            return cls(conn, Dialect("sqlite"), url)
        if url.startswith(("postgresql://", "postgres://")):
            try:
                import psycopg
            except ImportError as e:
                raise StoreError("a postgresql:// database needs psycopg: pip install 'okgin[arena-pg]'") from e
            try:
                pg = psycopg.connect(url, autocommit=True, connect_timeout=10)
            except psycopg.Error as e:
                raise StoreError(f"cannot connect to the PostgreSQL database: {e}") from e
            return cls(pg, Dialect("postgresql"), url)
        raise StoreError(f"unknown database URL {url.split(':', 1)[0]!r}: use sqlite:///PATH or postgresql://...")

    def close(self) -> None:
        with self.lock:
            self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- plumbing -------------------------------------------------------------------------------

    def _rows(self, q: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        cur = self.conn.execute(self.dialect.sql(q), tuple(args))
        return [tuple(r) for r in cur.fetchall()]

    def _one(self, q: str, args: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        rows = self._rows(q, args)
        return rows[0] if rows else None

    def _exec(self, q: str, args: Sequence[Any] = ()) -> int:
        cur = self.conn.execute(self.dialect.sql(q), tuple(args))
        return int(cur.rowcount or 0)

    @contextmanager
    def _tx(self) -> Iterator[None]:
        """One transaction, under the store's lock: committed if the block returns, rolled back if it raises."""
        with self.lock:
            self.conn.execute(self.dialect.begin)
            try:
                yield
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")

    def _migrate(self) -> None:
        with self._tx():
            for ddl in _DDL:
                self._exec(ddl)
            row = self._one("SELECT version FROM schema_version")
            if row is None:
                self._exec("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
            elif int(row[0]) > SCHEMA_VERSION:
                raise StoreError(f"this arena database has schema version {row[0]}, newer than this okgin's "
                                 f"({SCHEMA_VERSION}): upgrade okgin, or restore a backup")
            elif int(row[0]) < SCHEMA_VERSION:  # the DDL above made the newer versions' tables
                if int(row[0]) < 3:  # 3: the no-shows behind the cooldowns' doubling, two columns
                    self._exec("ALTER TABLE accounts ADD COLUMN no_shows INTEGER NOT NULL DEFAULT 0")
                    self._exec("ALTER TABLE accounts ADD COLUMN no_show_ms BIGINT NOT NULL DEFAULT 0")
                self._exec("UPDATE schema_version SET version = ?", (SCHEMA_VERSION,))

    @property
    def schema_version(self) -> int:
        with self.lock:
            row = self._one("SELECT version FROM schema_version")
        return int(row[0]) if row else 0

    # -- accounts -------------------------------------------------------------------------------

    @staticmethod
    def _account(row: tuple[Any, ...]) -> Account:
        return Account(row[0], row[1], bool(row[2]), int(row[3]), bool(row[4]), row[5], int(row[6]), row[7])

    def _log(self, key: str, at_ms: int, what: str, by: str | None = None, detail: str | None = None) -> None:
        row = self._one("SELECT COUNT(*) FROM account_log WHERE name_key = ?", (key,))
        self._exec("INSERT INTO account_log (name_key, seq, at_ms, what, by_name, detail) VALUES (?, ?, ?, ?, ?, ?)",
                   (key, 1 + int(row[0] if row else 0), at_ms, what, by, detail))

    def add_account(self, name: str, kind: str, admin: bool = False, created_ms: int | None = None) -> str:
        """A new account; returns its key, which is stored only as a hash (show it once).
        AccountExists if the name is taken in any case."""
        check_name(name)
        if kind not in KINDS:
            raise StoreError(f"an account is a {' or a '.join(KINDS)}, not {kind!r}")
        key = keys.new_key()
        digest = keys.hash_key(key)
        now = _now_ms() if created_ms is None else created_ms
        with self._tx():
            if self._one("SELECT name FROM accounts WHERE name_key = ?", (name.lower(),)):
                raise AccountExists(f"the account name {name!r} is taken")
            self._exec("INSERT INTO accounts (name_key, name, kind, admin, created_ms, key_hash, key_ms, revoked, banned, "
                       "cooldown_until_ms, cooldown_reason) VALUES (?, ?, ?, ?, ?, ?, ?, 0, NULL, 0, NULL)",
                       (name.lower(), name, kind, int(admin), now, digest, now))
            self._log(name.lower(), now, "add", None, f"{kind}{' admin' if admin else ''}")
        return key

    def accounts(self, offset: int = 0, limit: int | None = None, banned: bool = False) -> list[Account]:
        """Accounts by name; a page of them with ``limit``; only the banned ones with ``banned``."""
        where = "WHERE banned IS NOT NULL " if banned else ""
        page = "" if limit is None else f" LIMIT {max(0, min(int(limit), 1000))} OFFSET {max(0, int(offset))}"
        with self.lock:
            return [self._account(r) for r in self._rows(
                f"SELECT {_ACCOUNT_COLS} FROM accounts {where}ORDER BY name_key{page}")]

    def count_accounts(self, banned: bool = False) -> int:
        """How many accounts there are (banned ones only, with ``banned``)."""
        with self.lock:
            row = self._one("SELECT COUNT(*) FROM accounts" + (" WHERE banned IS NOT NULL" if banned else ""))
        return int(row[0]) if row else 0

    def account(self, name: str) -> Account | None:
        if not isinstance(name, str) or not NAME_RE.fullmatch(name):
            return None
        with self.lock:
            row = self._one(f"SELECT {_ACCOUNT_COLS} FROM accounts WHERE name_key = ?", (name.lower(),))
        return self._account(row) if row else None

    def check_key(self, name: str, key: str) -> Account | None:
        """The account if ``key`` is its current key; None for an unknown name, a wrong key or a
        revoked key, after the same scrypt work in each case. A banned account is returned (the
        caller refuses it with its reason: ``banned`` is not ``auth_failed``)."""
        stored = None
        acct = None
        if isinstance(name, str) and NAME_RE.fullmatch(name):
            with self.lock:
                row = self._one(f"SELECT {_ACCOUNT_COLS}, key_hash FROM accounts WHERE name_key = ?", (name.lower(),))
            if row is not None:
                acct, stored = self._account(row[:8]), row[8]
        if acct is None or stored is None or acct.revoked:
            keys.burn(key if isinstance(key, str) else "")
            return None
        return acct if keys.verify_key(key if isinstance(key, str) else "", stored) else None

    def key_hash(self, name: str) -> str | None:
        """The stored hash of the account's live key (``scrypt$...``), or None for an unknown or
        revoked account: for a front that runs :func:`arena.keys.verify_key` in a worker thread
        itself (against :data:`arena.keys.DUMMY_HASH` when this is None, to spend the same work)."""
        if not isinstance(name, str) or not NAME_RE.fullmatch(name):
            return None
        with self.lock:
            row = self._one("SELECT key_hash, revoked FROM accounts WHERE name_key = ?", (name.lower(),))
        return None if row is None or row[1] else str(row[0])

    def _require(self, name: str) -> str:
        if not isinstance(name, str) or not NAME_RE.fullmatch(name) or \
                not self._one("SELECT name FROM accounts WHERE name_key = ?", (name.lower(),)):
            raise UnknownAccount(f"no account named {name!r}")
        return name.lower()

    def revoke(self, name: str, at_ms: int | None = None) -> None:
        """The account's key stops working at once; :meth:`rotate` gives it a new one."""
        with self._tx():
            k = self._require(name)
            self._exec("UPDATE accounts SET revoked = 1 WHERE name_key = ?", (k,))
            self._log(k, _now_ms() if at_ms is None else at_ms, "revoke")

    def rotate(self, name: str, at_ms: int | None = None) -> str:
        """A new key for the account (revoked or not); the old one stops working at once."""
        key = keys.new_key()
        digest = keys.hash_key(key)
        now = _now_ms() if at_ms is None else at_ms
        with self._tx():
            k = self._require(name)
            self._exec("UPDATE accounts SET key_hash = ?, key_ms = ?, revoked = 0 WHERE name_key = ?", (digest, now, k))
            self._log(k, now, "rotate")
        return key

    def ban(self, name: str, reason: str, by: str, at_ms: int | None = None) -> None:
        reason = str(reason).strip()[:200] or "banned"
        with self._tx():
            k = self._require(name)
            self._exec("UPDATE accounts SET banned = ? WHERE name_key = ?", (reason, k))
            self._log(k, _now_ms() if at_ms is None else at_ms, "ban", by, reason)

    def unban(self, name: str, by: str, at_ms: int | None = None) -> None:
        with self._tx():
            k = self._require(name)
            self._exec("UPDATE accounts SET banned = NULL WHERE name_key = ?", (k,))
            self._log(k, _now_ms() if at_ms is None else at_ms, "unban", by)

    def set_cooldown(self, name: str, until_ms: int, reason: str) -> None:
        with self._tx():
            k = self._require(name)
            self._exec("UPDATE accounts SET cooldown_until_ms = ?, cooldown_reason = ? WHERE name_key = ?",
                       (int(until_ms), str(reason)[:200], k))

    def no_show(self, name: str, now_ms: int, first_ms: int, max_ms: int) -> int:
        """Count a no-show of the account and give it a cooldown: ``first_ms``, doubled for
        each earlier no-show, up to ``max_ms``; returns the cooldown's end. The count lives in
        the database (one transaction with the cooldown), so the doubling survives a restart
        of the arena and two fronts on one database count alike; a no-show more than
        :data:`NO_SHOW_MEMORY_MS` after the account's last one counts as its first again."""
        with self._tx():
            k = self._require(name)
            row = self._one(self.dialect.for_update("SELECT no_shows, no_show_ms FROM accounts WHERE name_key = ?"), (k,))
            count, last = (int(row[0]), int(row[1])) if row else (0, 0)
            n = 1 if now_ms - last > NO_SHOW_MEMORY_MS else count + 1
            ms = min(int(max_ms), int(first_ms) * 2 ** min(n - 1, 30))
            until = int(now_ms) + ms
            self._exec("UPDATE accounts SET no_shows = ?, no_show_ms = ?, cooldown_until_ms = ?, cooldown_reason = ? "
                       "WHERE name_key = ?", (n, int(now_ms), until, "no_show", k))
            self._log(k, int(now_ms), "no_show", None, f"no-show {n}: cooldown {ms // 1000} s")
        return until

    def no_shows(self, name: str) -> int:
        """How many no-shows the account's cooldown now counts (see :meth:`no_show`)."""
        with self.lock:
            row = self._one("SELECT no_shows FROM accounts WHERE name_key = ?", (name.lower(),))
        return int(row[0]) if row else 0

    def account_log(self, name: str) -> list[tuple[int, str, str | None, str | None]]:
        """What was done to an account, oldest first: (at_ms, what, by, detail)."""
        with self.lock:
            return [(int(r[0]), r[1], r[2], r[3]) for r in self._rows(
                "SELECT at_ms, what, by_name, detail FROM account_log WHERE name_key = ? ORDER BY seq", (name.lower(),))]

    def ban_log(self, limit: int = 50) -> list[tuple[str, int, str, str | None, str | None]]:
        """The latest bans and unbans of any account, newest first: (name, at_ms, what, by,
        reason), for the web's bans page (an unbanned account leaves the banned list, not
        the record). A scan of ``account_log``: a few rows per account."""
        with self.lock:
            return [(r[0], int(r[1]), r[2], r[3], r[4]) for r in self._rows(
                "SELECT a.name, l.at_ms, l.what, l.by_name, l.detail FROM account_log l "
                "JOIN accounts a ON a.name_key = l.name_key WHERE l.what IN ('ban', 'unban') "
                "ORDER BY l.at_ms DESC, a.name, l.seq DESC LIMIT ?", (int(limit),))]

    # -- games ----------------------------------------------------------------------------------

    def new_game(self, game: NewGame) -> None:
        """Record a seated game (status "playing"). StoreError if the id is taken, the variant
        unknown, the seats not distinct accounts, or their number wrong for the variant."""
        if game.variant not in MODELS:
            raise StoreError(f"unknown variant {game.variant!r}")
        if len(game.players) != (2 if game.variant == "oklahoma" else 3):
            raise StoreError(f"{game.variant} seats {2 if game.variant == 'oklahoma' else 3} players, not {len(game.players)}")
        seats = [p.lower() for p in game.players]
        if len(set(seats)) != len(seats):
            raise StoreError("an account plays one seat of a game")
        with self._tx():
            for p in game.players:
                self._require(p)
            if self._one("SELECT id FROM games WHERE id = ?", (game.id,)):
                raise StoreError(f"a game {game.id!r} exists")
            self._exec("INSERT INTO games (id, variant, rated, players, clock, shard, table_name, created_ms, status) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'playing')",
                       (game.id, game.variant, int(game.rated), json.dumps(list(game.players)), json.dumps(game.clock),
                        game.shard, game.table, int(game.created_ms)))
            for seat, k in enumerate(seats):
                self._exec("INSERT INTO game_players (game_id, seat, name_key) VALUES (?, ?, ?)", (game.id, seat, k))

    def _rating_row(self, key: str, variant: str, lock: bool = False) -> Rating:
        q = "SELECT rating, deviation, volatility, games FROM ratings WHERE name_key = ? AND variant = ?"
        row = self._one(self.dialect.for_update(q) if lock else q, (key, variant))
        if row is None:
            return initial(variant)
        return Rating(variant, float(row[0]), float(row[1]), int(row[3]), None if row[2] is None else float(row[2]))

    def _apply(self, game_id: str, variant: str, keys_: Sequence[str], ranks: Sequence[int], finished_ms: int,
               lock: bool) -> tuple[list[Rating], list[Rating]]:
        """Rate one game: read the seats' ratings (in name order, so two transactions lock in
        the same order), compute, write ratings, history and the game's before/after."""
        current = {k: self._rating_row(k, variant, lock) for k in sorted(keys_)}
        before = [current[k] for k in keys_]
        after = after_game(before, ranks)
        for seat, (k, b, a) in enumerate(zip(keys_, before, after, strict=True)):
            if b.games == 0:
                self._exec("INSERT INTO ratings (name_key, variant, rating, deviation, volatility, games) "
                           "VALUES (?, ?, ?, ?, ?, ?)", (k, variant, a.rating, a.deviation, a.volatility, a.games))
            else:
                self._exec("UPDATE ratings SET rating = ?, deviation = ?, volatility = ?, games = ? "
                           "WHERE name_key = ? AND variant = ?", (a.rating, a.deviation, a.volatility, a.games, k, variant))
            self._exec("INSERT INTO rating_history (name_key, variant, n, game_id, finished_ms, rating_before, rating, "
                       "deviation, volatility) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (k, variant, a.games, game_id, finished_ms, b.rating, a.rating, a.deviation, a.volatility))
            self._exec("UPDATE game_players SET rating_before = ?, rating_after = ? WHERE game_id = ? AND seat = ?",
                       (b.rating, a.rating, game_id, seat))
        return before, after

    def finish_game(self, game_id: str, result: GameResult) -> RatingChange | None:
        """Record how a game ended and, if it is rated, update its players' ratings and
        history, in one transaction. None (and nothing changes) if the game is unknown or no
        longer in play (finished or void already): the call is idempotent."""
        with self._tx():
            row = self._one(self.dialect.for_update("SELECT variant, rated, players, status FROM games WHERE id = ?"),
                            (game_id,))
            if row is None or row[3] != "playing":
                return None
            variant, rated, players = row[0], bool(row[1]), tuple(json.loads(row[2]))
            n = len(players)
            if len(result.scores) != n or any(s is not None and not 0 <= s < n for s in (result.winner, result.at_fault)):
                raise StoreError(f"a result of {game_id!r} needs {n} scores and seats in 0..{n - 1}")
            keys_ = [p.lower() for p in players]
            if self.dialect.pg:
                # The players' account rows, in name order (no deadlock between two games): a game
                # that shares a player waits here until this one commits, then numbers itself after it
                # and reads the ratings it wrote (a rating row that does not exist yet cannot be locked).
                self._rows(self.dialect.for_update(
                    f"SELECT name_key FROM accounts WHERE name_key IN ({', '.join('?' * n)}) ORDER BY name_key"), keys_)
            seq_row = self._one("SELECT MAX(finish_seq) FROM games")
            seq = 1 + int(seq_row[0]) if seq_row and seq_row[0] is not None else 1
            self._exec("UPDATE games SET status = 'finished', finish_seq = ?, finished_ms = ?, winner = ?, scores = ?, "
                       "termination = ?, at_fault = ?, record = ?, journal = ?, seed_hash = ?, seed = ?, salt = ? WHERE id = ?",
                       (seq, int(result.finished_ms), result.winner, json.dumps([int(s) for s in result.scores]),
                        result.termination, result.at_fault, None if result.record is None else json.dumps(result.record),
                        result.journal, result.seed_hash, result.seed, result.salt, game_id))
            if not rated:
                same = [self._rating_row(k, variant) for k in keys_]
                return RatingChange(game_id, variant, False, players, tuple(same), tuple(same))
            ranks = game_ranks(result.scores, result.winner, result.at_fault)
            before, after = self._apply(game_id, variant, keys_, ranks, int(result.finished_ms), lock=True)
        return RatingChange(game_id, variant, True, players, tuple(before), tuple(after))

    def void_game(self, game_id: str, reason: str, at_ms: int | None = None) -> bool:
        """Mark a game in play void: no result, no rating change. False (nothing changes) if the
        game is unknown or no longer in play."""
        with self._tx():
            n = self._exec("UPDATE games SET status = 'void', void_reason = ?, finished_ms = ? "
                           "WHERE id = ? AND status = 'playing'", (str(reason)[:200], at_ms, game_id))
        return n > 0

    def _game_rows(self, where: str, args: Sequence[Any], tail: str = "", record: bool = False) -> list[GameRow]:
        cols = _GAME_COLS + (", record" if record else "")
        rows = self._rows(f"SELECT {cols} FROM games {where} {tail}", args)
        around: dict[str, list[tuple[Any, ...]]] = {r[0]: [] for r in rows}
        ids = list(around)
        for i in range(0, len(ids), 500):  # one query per 500 games, not one per game
            chunk = ids[i:i + 500]
            for gid, _, before, after in self._rows(
                    f"SELECT game_id, seat, rating_before, rating_after FROM game_players WHERE game_id IN "
                    f"({', '.join('?' * len(chunk))}) ORDER BY game_id, seat", chunk):
                around[gid].append((before, after))
        out = []
        for r in rows:
            ratings = around[r[0]]
            out.append(GameRow(
                id=r[0], variant=r[1], rated=bool(r[2]), players=tuple(json.loads(r[3])), clock=json.loads(r[4]),
                shard=r[5], table=r[6], created_ms=int(r[7]), status=r[8], finished_ms=None if r[9] is None else int(r[9]),
                winner=r[10], scores=tuple(json.loads(r[11])) if r[11] else (), termination=r[12], at_fault=r[13],
                journal=r[14], seed_hash=r[15], seed=r[16], salt=r[17], void_reason=r[18],
                before=tuple(x[0] for x in ratings), after=tuple(x[1] for x in ratings),
                record=json.loads(r[19]) if record and r[19] else None))
        return out

    def games_in_play(self) -> list[GameRow]:
        """Games seated and not yet finished or void (what a restarted front must settle)."""
        with self.lock:
            return self._game_rows("WHERE status = 'playing'", (), "ORDER BY created_ms, id")

    def game(self, game_id: str) -> GameRow | None:
        """One game, with its full record."""
        with self.lock:
            rows = self._game_rows("WHERE id = ?", (game_id,), record=True)
        return rows[0] if rows else None

    def recent_games(self, name: str, limit: int = 20, offset: int = 0) -> list[GameRow]:
        """An account's finished and void games, the latest first (records not loaded); a page
        of them from ``offset``."""
        limit, offset = max(0, min(int(limit), 200)), max(0, int(offset))
        with self.lock:
            return self._game_rows(
                "WHERE status <> 'playing' AND id IN (SELECT game_id FROM game_players WHERE name_key = ?)",
                (name.lower(),), f"ORDER BY finished_ms DESC, id DESC LIMIT {limit} OFFSET {offset}")

    def games_playing(self, offset: int = 0, limit: int = 50) -> list[GameRow]:
        """A page of the games in play, the latest seated first (the web's live list; at most 200)."""
        limit, offset = max(0, min(int(limit), 200)), max(0, int(offset))
        with self.lock:
            return self._game_rows("WHERE status = 'playing'", (), f"ORDER BY created_ms DESC, id LIMIT {limit} OFFSET {offset}")

    def count_playing(self) -> int:
        with self.lock:
            row = self._one("SELECT COUNT(*) FROM games WHERE status = 'playing'")
        return int(row[0]) if row else 0

    def head_to_head(self, name: str, last: int = 1000) -> list[HeadToHead]:
        """An account's record against each opponent over its ``last`` finished games (at most
        5,000: a bounded read however long an account has played), most games first. One query
        of the few columns the places need (not whole game rows: a player page asks for this)."""
        last = max(0, min(int(last), 5000))
        key = name.lower()
        with self.lock:
            rows = self._rows(
                "SELECT g.id, g.scores, g.winner, g.at_fault, me.seat, op.seat, a.name FROM game_players me "
                "JOIN games g ON g.id = me.game_id JOIN game_players op ON op.game_id = me.game_id AND op.seat <> me.seat "
                "JOIN accounts a ON a.name_key = op.name_key WHERE me.name_key = ? AND me.game_id IN ("
                "SELECT gp.game_id FROM game_players gp JOIN games g2 ON g2.id = gp.game_id WHERE gp.name_key = ? "
                f"AND g2.status = 'finished' ORDER BY g2.finish_seq DESC LIMIT {last})", (key, key))
        seats: dict[str, int] = {}
        for gid, _, _, _, _, opp, _ in rows:
            seats[gid] = max(seats.get(gid, 0), opp)
        tally: dict[str, list[int]] = {}
        for gid, scores, winner, at_fault, me, opp, who in rows:
            n = max(seats[gid], me) + 1
            ranks = game_ranks(json.loads(scores) if scores else [0] * n, winner, at_fault)
            t = tally.setdefault(who, [0, 0, 0, 0])
            t[0] += 1
            t[1 if ranks[me] < ranks[opp] else 2 if ranks[me] > ranks[opp] else 3] += 1
        return sorted((HeadToHead(o, *t) for o, t in tally.items()), key=lambda h: (-h.games, h.opponent.lower()))

    def change_mark(self) -> tuple[int, int, int]:
        """A cheap mark that changes when a game is seated, finished or voided (three indexed
        reads): what the web's live feed polls to know when to tell its pages."""
        with self.lock:
            fin = self._one("SELECT MAX(finish_seq) FROM games")
            playing = self._one("SELECT COUNT(*), MAX(created_ms) FROM games WHERE status = 'playing'")
        return (int(fin[0] or 0) if fin else 0, int(playing[0] or 0) if playing else 0,
                int(playing[1] or 0) if playing else 0)

    # -- ratings --------------------------------------------------------------------------------

    def rating(self, name: str, variant: str) -> Rating:
        """An account's rating in ``variant`` (the starting rating if it has no rated game)."""
        if variant not in MODELS:
            raise StoreError(f"unknown variant {variant!r}")
        with self.lock:
            return self._rating_row(name.lower(), variant)

    def leaderboard(self, variant: str, offset: int = 0, limit: int = 50, kind: str | None = None
                    ) -> list[tuple[Account, Rating]]:
        """Accounts with a rated game in ``variant``, highest rating first (ties by name);
        banned accounts are left out; only humans or only bots with ``kind``."""
        if variant not in MODELS:
            raise StoreError(f"unknown variant {variant!r}")
        if kind is not None and kind not in KINDS:
            raise StoreError(f"unknown kind {kind!r}")
        offset, limit = max(0, int(offset)), max(0, min(int(limit), 1000))
        args: tuple[Any, ...] = (variant,) if kind is None else (variant, kind)
        with self.lock:
            rows = self._rows(
                f"SELECT {', '.join('a.' + c.strip() for c in _ACCOUNT_COLS.split(','))}, r.rating, r.deviation, r.volatility, "
                "r.games FROM ratings r JOIN accounts a ON a.name_key = r.name_key WHERE r.variant = ? AND a.banned IS NULL "
                f"{'' if kind is None else 'AND a.kind = ? '}ORDER BY r.rating DESC, a.name_key LIMIT {limit} OFFSET {offset}",
                args)
        return [(self._account(r[:8]), Rating(variant, float(r[8]), float(r[9]), int(r[11]),
                                              None if r[10] is None else float(r[10]))) for r in rows]

    def leaderboard_size(self, variant: str, kind: str | None = None) -> int:
        """How many rows :meth:`leaderboard` has in all (for its pages)."""
        if variant not in MODELS:
            raise StoreError(f"unknown variant {variant!r}")
        args: tuple[Any, ...] = (variant,) if kind is None else (variant, kind)
        with self.lock:
            row = self._one("SELECT COUNT(*) FROM ratings r JOIN accounts a ON a.name_key = r.name_key WHERE r.variant = ? "
                            f"AND a.banned IS NULL{'' if kind is None else ' AND a.kind = ?'}", args)
        return int(row[0]) if row else 0

    def history(self, name: str, variant: str, last: int | None = None) -> list[RatingPoint]:
        """An account's rating after each of its rated games in ``variant``, oldest first; only
        the ``last`` ones with ``last`` (a chart's bounded read)."""
        tail = "ORDER BY n" if last is None else f"AND n > (SELECT COALESCE(MAX(n), 0) FROM rating_history " \
            f"WHERE name_key = ? AND variant = ?) - {max(0, int(last))} ORDER BY n"
        args = (name.lower(), variant) if last is None else (name.lower(), variant, name.lower(), variant)
        with self.lock:
            rows = self._rows("SELECT n, game_id, finished_ms, rating_before, rating, deviation, volatility "
                              f"FROM rating_history WHERE name_key = ? AND variant = ? {tail}", args)
        return [RatingPoint(int(r[0]), r[1], int(r[2]), float(r[3]), float(r[4]), float(r[5]),
                            None if r[6] is None else float(r[6])) for r in rows]

    def rebuild_ratings(self) -> int:
        """Recompute every rating and the whole history from the stored games: every finished
        rated game, in finish order, from the starting ratings. Returns the games replayed.
        The same games give the same numbers, to the bit (tests/arena/test_store.py)."""
        with self._tx():
            if self.dialect.pg:
                self._exec("LOCK TABLE games, ratings, rating_history, game_players IN EXCLUSIVE MODE")
            self._exec("DELETE FROM ratings")
            self._exec("DELETE FROM rating_history")
            self._exec("UPDATE game_players SET rating_before = NULL, rating_after = NULL")
            games = self._rows("SELECT id, variant, players, scores, winner, at_fault, finished_ms FROM games "
                               "WHERE status = 'finished' AND rated = 1 ORDER BY finish_seq, id")
            for gid, variant, players, scores, winner, at_fault, finished_ms in games:
                ranks = game_ranks(json.loads(scores), winner, at_fault)
                self._apply(gid, variant, [p.lower() for p in json.loads(players)], ranks, int(finished_ms), lock=False)
        return len(games)

    def ratings_snapshot(self) -> list[tuple[Any, ...]]:
        """Every rating and history row, sorted: what ``--rebuild`` must reproduce exactly."""
        with self.lock:
            return (self._rows("SELECT name_key, variant, rating, deviation, volatility, games FROM ratings "
                               "ORDER BY name_key, variant")
                    + self._rows("SELECT name_key, variant, n, game_id, finished_ms, rating_before, rating, deviation, "
                                 "volatility FROM rating_history ORDER BY name_key, variant, n"))

    # -- hosted bots (okgin arena submit; arena.hosted plays them) -------------------------------
    # What the operators' queue (``okgin arena submissions``) and the web's admin pages read:
    # :meth:`submissions` (by status or account), :meth:`submission`, :meth:`hosted_games`.

    _SUB_COLS = "s.id, a.name, s.command, s.variant, s.path, s.files, s.bytes, s.created_ms, s.status, s.reason, " \
                "s.updated_ms, s.games"

    @staticmethod
    def _submission(r: tuple[Any, ...]) -> Submission:
        return Submission(int(r[0]), r[1], tuple(json.loads(r[2])), r[3], r[4], int(r[5]), int(r[6]), int(r[7]), r[8],
                          r[9], int(r[10]), int(r[11]))

    def add_submission(self, account: str, command: Sequence[str], variant: str, path: str, files: int, size: int,
                       created_ms: int | None = None) -> Submission:
        """A new hosted bot of ``account`` (a bot account, not banned), status "pending": the
        arena validates it next. ``path``: where its copied directory is."""
        if variant not in MODELS:
            raise StoreError(f"unknown variant {variant!r}")
        now = _now_ms() if created_ms is None else created_ms
        with self._tx():
            k = self._require(account)
            row = self._one("SELECT kind, banned FROM accounts WHERE name_key = ?", (k,))
            assert row is not None
            if row[0] != "bot":
                raise StoreError(f"{account} is a {row[0]} account: hosted bots play for bot accounts "
                                 f"(okgin arena account add NAME --bot)")
            if row[1]:
                raise StoreError(f"{account} is banned: {row[1]}")
            seq = self._one("SELECT MAX(id) FROM submissions")
            sid = 1 + int(seq[0]) if seq and seq[0] is not None else 1
            self._exec("INSERT INTO submissions (id, name_key, command, variant, path, files, bytes, created_ms, status, "
                       "reason, updated_ms, games) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', NULL, ?, 0)",
                       (sid, k, json.dumps(list(command)), variant, str(path), int(files), int(size), now, now))
            self._log(k, now, "submit", None, f"hosted bot #{sid}")
        sub = self.submission(sid)
        assert sub is not None
        return sub

    def submission(self, sid: int) -> Submission | None:
        with self.lock:
            row = self._one(f"SELECT {self._SUB_COLS} FROM submissions s JOIN accounts a ON a.name_key = s.name_key "
                            "WHERE s.id = ?", (int(sid),))
        return self._submission(row) if row else None

    def submissions(self, status: str | Sequence[str] | None = None, account: str | None = None,
                    limit: int = 500) -> list[Submission]:
        """Hosted bots, the newest first: those in ``status`` (one or several of
        :data:`SUBMISSION_STATUSES`; None: all), of ``account`` (None: every account). The
        operators' queue view: pending and validating are waiting for their validation game,
        failed ones carry their reason."""
        statuses = (status,) if isinstance(status, str) else tuple(status or ())
        bad = [x for x in statuses if x not in SUBMISSION_STATUSES]
        if bad:
            raise StoreError(f"unknown submission status {bad[0]!r} (known: {', '.join(SUBMISSION_STATUSES)})")
        where: list[str] = []
        args: list[Any] = []
        if statuses:
            where.append(f"s.status IN ({', '.join('?' * len(statuses))})")
            args.extend(statuses)
        if account is not None:
            where.append("s.name_key = ?")
            args.append(account.lower())
        limit = max(0, min(int(limit), 10_000))
        with self.lock:
            rows = self._rows(f"SELECT {self._SUB_COLS} FROM submissions s JOIN accounts a ON a.name_key = s.name_key "
                              f"{'WHERE ' + ' AND '.join(where) if where else ''} ORDER BY s.id DESC LIMIT {limit}", args)
        return [self._submission(r) for r in rows]

    def set_submission(self, sid: int, status: str, reason: str | None = None, at_ms: int | None = None) -> None:
        """Move a submission to ``status`` (with the reason it failed). A submission that
        becomes "active" retires its account's other active one: an account has one hosted
        bot playing at a time, its latest validated one."""
        if status not in SUBMISSION_STATUSES:
            raise StoreError(f"unknown submission status {status!r}")
        now = _now_ms() if at_ms is None else at_ms
        with self._tx():
            row = self._one("SELECT name_key FROM submissions WHERE id = ?", (int(sid),))
            if row is None:
                raise StoreError(f"no submission #{sid}")
            if status == "active":
                self._exec("UPDATE submissions SET status = 'retired', reason = ?, updated_ms = ? "
                           "WHERE name_key = ? AND status = 'active' AND id <> ?",
                           (f"replaced by #{sid}", now, row[0], int(sid)))
            self._exec("UPDATE submissions SET status = ?, reason = ?, updated_ms = ? WHERE id = ?",
                       (status, None if reason is None else str(reason)[:1000], now, int(sid)))
            self._log(row[0], now, f"hosted {status}", None, f"#{sid}" + (f": {str(reason)[:200]}" if reason else ""))

    def set_submission_path(self, sid: int, path: str) -> None:
        """Where the submission's copied directory is (``okgin arena submit`` stores the
        submission, then moves the copy to a directory named by its id)."""
        with self._tx():
            self._exec("UPDATE submissions SET path = ? WHERE id = ?", (str(path), int(sid)))

    def add_hosted_game(self, game: NewGame, submissions: Sequence[int], deal: str) -> None:
        """Seat a game between hosted bots: the arena game (status "playing", as
        :meth:`new_game`) and which submissions and deal it is, in one transaction."""
        if len(submissions) != len(game.players):
            raise StoreError("a hosted game names one submission per seat")
        self.new_game(game)
        with self._tx():
            self._exec("INSERT INTO hosted_games (game_id, submissions, deal, attempts, created_ms) VALUES (?, ?, ?, 1, ?)",
                       (game.id, json.dumps([int(x) for x in submissions]), str(deal), int(game.created_ms)))

    def finish_hosted_game(self, game_id: str, result: GameResult, attempts: int = 1) -> RatingChange | None:
        """:meth:`finish_game` for a hosted game, then its attempt count and each
        submission's game count (a game replayed after a lost worker says so: attempts > 1)."""
        change = self.finish_game(game_id, result)
        if change is not None:
            with self._tx():
                self._exec("UPDATE hosted_games SET attempts = ? WHERE game_id = ?", (max(1, int(attempts)), game_id))
                row = self._one("SELECT submissions FROM hosted_games WHERE game_id = ?", (game_id,))
                for sid in json.loads(row[0]) if row else []:
                    self._exec("UPDATE submissions SET games = games + 1 WHERE id = ?", (int(sid),))
        return change

    def hosted_games(self, since_ms: int = 0, limit: int = 1000) -> list[HostedGame]:
        """Hosted games seated at or after ``since_ms``, the latest first."""
        limit = max(0, min(int(limit), 100_000))
        with self.lock:
            rows = self._rows("SELECT game_id, submissions, deal, attempts, created_ms FROM hosted_games WHERE created_ms >= ? "
                              f"ORDER BY created_ms DESC, game_id DESC LIMIT {limit}", (int(since_ms),))
        return [HostedGame(r[0], tuple(json.loads(r[1])), r[2], int(r[3]), int(r[4])) for r in rows]

    def count_hosted_games(self, since_ms: int) -> int:
        """Hosted games seated at or after ``since_ms`` (the budget's count: games per hour)."""
        with self.lock:
            row = self._one("SELECT COUNT(*) FROM hosted_games WHERE created_ms >= ?", (int(since_ms),))
        return int(row[0]) if row else 0

    # -- events (okgin arena event; arena.events runs them) ---------------------------------------
    # For the web: :meth:`events` (the latest first) and :meth:`event` (one, with standings and verify).

    _EVENT_COLS = ("id, name, format, accounts, champion, games_per_pairing, start_ms, created_ms, created_by, status, "
                   "results, standings, verify, error, finished_ms")

    @staticmethod
    def _event(r: tuple[Any, ...]) -> ArenaEvent:
        return ArenaEvent(int(r[0]), r[1], r[2], tuple(json.loads(r[3])), r[4], int(r[5]), int(r[6]), int(r[7]), r[8], r[9],
                          r[10], tuple(json.loads(r[11])) if r[11] else (), tuple(json.loads(r[12])) if r[12] else (), r[13],
                          None if r[14] is None else int(r[14]))

    def add_event(self, name: str, format: str, accounts: Sequence[str], start_ms: int, by: str,
                  champion: str | None = None, games_per_pairing: int = 2, created_ms: int | None = None) -> ArenaEvent:
        """Schedule an event of existing accounts (canonical names stored). StoreError for an
        unknown format or account, fewer than two accounts, or a champion not among them."""
        if format not in ("round_robin", "gauntlet"):
            raise StoreError(f"an event is a round_robin or a gauntlet, not {format!r}")
        name = str(name).strip()[:80]
        if not name:
            raise StoreError("an event needs a name")
        now = _now_ms() if created_ms is None else created_ms
        with self._tx():
            names: list[str] = []
            for a in accounts:
                k = self._require(a)
                row = self._one("SELECT name FROM accounts WHERE name_key = ?", (k,))
                assert row is not None
                if row[0] in names:
                    raise StoreError(f"{row[0]} is named twice")
                names.append(row[0])
            if len(names) < 2:
                raise StoreError("an event needs at least two accounts")
            if format == "gauntlet":
                if champion is None or champion.lower() not in [n.lower() for n in names]:
                    raise StoreError("a gauntlet's champion must be one of its accounts")
                champion = next(n for n in names if n.lower() == champion.lower())
            elif champion is not None:
                raise StoreError("only a gauntlet has a champion")
            seq = self._one("SELECT MAX(id) FROM events")
            eid = 1 + int(seq[0]) if seq and seq[0] is not None else 1
            self._exec("INSERT INTO events (id, name, format, accounts, champion, games_per_pairing, start_ms, created_ms, "
                       "created_by, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'scheduled')",
                       (eid, name, format, json.dumps(names), champion, int(games_per_pairing), int(start_ms), now, str(by)))
        got = self.event(eid)
        assert got is not None
        return got

    def event(self, eid: int) -> ArenaEvent | None:
        with self.lock:
            row = self._one(f"SELECT {self._EVENT_COLS} FROM events WHERE id = ?", (int(eid),))
        return self._event(row) if row else None

    def events(self, status: str | None = None, limit: int = 200) -> list[ArenaEvent]:
        """Events, the latest scheduled first; only those in ``status`` if given."""
        if status is not None and status not in EVENT_STATUSES:
            raise StoreError(f"unknown event status {status!r} (known: {', '.join(EVENT_STATUSES)})")
        limit = max(0, min(int(limit), 10_000))
        with self.lock:
            rows = self._rows(f"SELECT {self._EVENT_COLS} FROM events {'WHERE status = ?' if status else ''} "
                              f"ORDER BY start_ms DESC, id DESC LIMIT {limit}", (status,) if status else ())
        return [self._event(r) for r in rows]

    def start_event(self, eid: int, results: str) -> bool:
        """A scheduled event starts (False if it is not scheduled: another front took it)."""
        with self._tx():
            n = self._exec("UPDATE events SET status = 'running', results = ? WHERE id = ? AND status = 'scheduled'",
                           (str(results), int(eid)))
        return n > 0

    def finish_event(self, eid: int, standings: Sequence[dict[str, Any]], verify: Sequence[dict[str, Any]],
                     error: str | None = None, at_ms: int | None = None) -> None:
        """An event ran: its standings and verify result ("finished"), or why it could not ("failed")."""
        now = _now_ms() if at_ms is None else at_ms
        with self._tx():
            self._exec("UPDATE events SET status = ?, standings = ?, verify = ?, error = ?, finished_ms = ? WHERE id = ?",
                       ("failed" if error else "finished", json.dumps(list(standings)), json.dumps(list(verify)),
                        None if error is None else str(error)[:2000], now, int(eid)))
