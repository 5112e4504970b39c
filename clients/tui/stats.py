"""A player's statistics, kept on their own machine (issue 28, deliverable 5: "games and
hands won per opponent, gins, undercuts, average points per hand").

What is counted: every game the TUI *played* to its end (``game_end`` with a winner, or a
draw at the hand limit; a game abandoned by a stopped referee has no result and is not
counted), once, from the seat's own results. Watching and replaying count nothing. One
record per (variant, opponents): games won, lost and drawn, the current and best winning
streak, hands played and won, gins, undercuts, points; and the same streaks over all games.

The file is ``$XDG_STATE_HOME/okgin/stats.json`` (default ``~/.local/state``), beside the
saved sessions (:mod:`clients.tui.saved_sessions`), and is made to last:

- **Private**: mode 0600 in a 0700 directory; it holds whom you play and how you do.
- **Versioned**: ``{"format": "okgin-stats", "version": 1, ...}``. A file of a newer
  version is read as far as it is understood and never written over (a newer okgin's
  figures are not lost to an older one).
- **Bounded**: at most :data:`MAX_RECORDS` records (the least recently played go first),
  names cut to :data:`MAX_NAME` characters, and a file above :data:`MAX_BYTES` is not
  read at all.
- **Corruption-safe**: a file that cannot be read (torn, edited by hand, not ours) is
  kept aside as ``stats.json.broken-TIME`` (the :data:`KEEP_BROKEN` newest such) and a
  fresh one is started, with a notice saying so. Nothing is silently dropped.
- **Safe with two TUIs at once**: every update takes an exclusive lock
  (``stats.json.lock``, ``flock``), reads the file afresh, adds the game and replaces the
  file atomically (a temporary file, fsync, ``os.replace``), so two games ending at the
  same moment are both counted and a crash mid-write leaves the old file whole. A game
  already counted (its ``seed_hash``, the deal's commitment, is remembered) is not
  counted again, even by another process that resumed the same seat.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from okgin import HandResult

from .model import TableState
from .saved_sessions import state_dir

STATS_FORMAT = "okgin-stats"
STATS_VERSION = 1
#: The most records kept; beyond it the least recently played one is dropped.
MAX_RECORDS = 200
#: A player's name as stored (the protocol's own limit is 40).
MAX_NAME = 40
#: A larger file is not ours (or not sane): it is kept aside, not parsed.
MAX_BYTES = 1 << 20
#: Games remembered as counted (by their deal commitment), against counting one twice.
MAX_SEEN = 64
#: Broken files kept aside; older ones are removed.
KEEP_BROKEN = 3
#: Seconds an update waits for another process's lock before giving up (with a notice).
LOCK_WAIT_S = 10.0

#: The outcomes of a hand that count as a gin for the player who ended it.
GIN_OUTCOMES = ("gin", "big_gin")


def stats_path() -> Path:
    return state_dir() / "stats.json"


@dataclass(frozen=True)
class Record:
    """One variant against one set of opponents (a name, or two in the Box)."""

    variant: str
    opponents: tuple[str, ...]
    games: int = 0
    won: int = 0
    lost: int = 0
    drawn: int = 0
    streak: int = 0  # games won in a row now (negative: lost in a row)
    best_streak: int = 0  # most games won in a row
    hands: int = 0  # hands this player played (in the Box, not those it sat out)
    hands_won: int = 0
    gins: int = 0  # hands this player ended with gin (or big gin)
    undercuts: int = 0  # hands this player won by undercutting the knocker
    points: int = 0  # points this player scored in hands
    last_played: float = 0.0

    @property
    def key(self) -> str:
        return self.variant + "|" + "|".join(self.opponents)

    @property
    def average_points(self) -> float:
        """Points scored per hand played (0 before the first hand)."""
        return self.points / self.hands if self.hands else 0.0


@dataclass(frozen=True)
class GameTally:
    """What one finished game adds to a record (:func:`tally_game`)."""

    variant: str
    opponents: tuple[str, ...]
    outcome: str  # "won", "lost" or "drawn"
    game_id: str  # the deal's commitment: the same game is never counted twice
    hands: int = 0
    hands_won: int = 0
    gins: int = 0
    undercuts: int = 0
    points: int = 0


@dataclass(frozen=True)
class Stats:
    records: tuple[Record, ...] = ()
    streak: int = 0  # over every game
    best_streak: int = 0
    seen: tuple[str, ...] = ()
    read_only: bool = False  # a newer okgin's file: shown, never written over

    @property
    def games(self) -> int:
        return sum(r.games for r in self.records)

    def sorted_records(self) -> list[Record]:
        """Most recently played first."""
        return sorted(self.records, key=lambda r: -r.last_played)


def _streak(before: int, outcome: str) -> int:
    if outcome == "won":
        return before + 1 if before > 0 else 1
    if outcome == "lost":
        return before - 1 if before < 0 else -1
    return 0


def add_game(stats: Stats, t: GameTally, now: float) -> Stats:
    """``stats`` with the game ``t`` counted (unchanged if it was already)."""
    if t.game_id and t.game_id in stats.seen:
        return stats
    key = Record(t.variant, t.opponents).key
    old = next((r for r in stats.records if r.key == key), Record(t.variant, t.opponents))
    streak = _streak(old.streak, t.outcome)
    rec = replace(
        old, games=old.games + 1, won=old.won + (t.outcome == "won"), lost=old.lost + (t.outcome == "lost"),
        drawn=old.drawn + (t.outcome == "drawn"), streak=streak, best_streak=max(old.best_streak, streak),
        hands=old.hands + t.hands, hands_won=old.hands_won + t.hands_won, gins=old.gins + t.gins,
        undercuts=old.undercuts + t.undercuts, points=old.points + t.points, last_played=now)
    records = sorted([r for r in stats.records if r.key != key] + [rec], key=lambda r: -r.last_played)[:MAX_RECORDS]
    overall = _streak(stats.streak, t.outcome)
    seen = (*stats.seen, t.game_id)[-MAX_SEEN:] if t.game_id else stats.seen
    return replace(stats, records=tuple(records), streak=overall, best_streak=max(stats.best_streak, overall), seen=seen)


# ----------------------------------------------------------------- from a game
def _played(state: TableState, r: HandResult, me: int) -> bool:
    """Whether seat ``me`` played hand ``r`` (in the Box, the sitter does not)."""
    if me in (r.knocker, r.defender):
        return True
    v = state.view
    if v is None or v.variant != "box":
        return True  # Oklahoma: both seats play every hand, a drawn one too
    if r.knocker is not None:
        return False
    from .screens.summary import hand_roles

    roles = hand_roles(state, r)  # a drawn Box hand names nobody: the roles say who played
    return roles is not None and me in roles[:2]


def tally_game(state: TableState, final: dict[str, Any]) -> GameTally | None:
    """What the game that just ended at this seat counts for; None when it counts for
    nothing (watching, a replay, no seat, or no result: an abandoned game)."""
    v = state.view
    me = state.seat
    if v is None or me is None or state.spectator or state.replay is not None:
        return None
    winner = final.get("winner")
    termination = final.get("termination")
    if isinstance(winner, int):
        outcome = "won" if winner == me else "lost"
    elif termination == "hand_limit":
        outcome = "drawn"
    else:
        return None
    opponents = tuple(sorted(_clip(n) for s, n in enumerate(state.names) if s != me))
    hands = [r for r in state.results if _played(state, r, me)]
    return GameTally(
        variant=v.variant, opponents=opponents, outcome=outcome, game_id=str(final.get("seed_hash") or ""),
        hands=len(hands), hands_won=sum(r.winner == me for r in hands),
        gins=sum(r.outcome in GIN_OUTCOMES and r.knocker == me for r in hands),
        undercuts=sum(r.outcome == "undercut" and r.winner == me for r in hands),
        points=sum(r.points for r in hands if r.winner == me))


def _clip(name: str) -> str:
    return "".join(ch for ch in str(name) if ch.isprintable())[:MAX_NAME]


# ----------------------------------------------------------------- the file
class StatsError(ValueError):
    """The file is not a statistics file this okgin can read."""


def _int(d: dict[str, Any], k: str, low: int | None = 0) -> int:
    x = d.get(k, 0)
    if not isinstance(x, int) or isinstance(x, bool) or (low is not None and x < low):
        raise StatsError(f"{k} is not a count")
    return x


def _record(d: Any) -> Record:
    if not isinstance(d, dict):
        raise StatsError("a record is not an object")
    variant, opponents = d.get("variant"), d.get("opponents")
    if variant not in ("oklahoma", "box") or not isinstance(opponents, list) or not 1 <= len(opponents) <= 2 or not all(
            isinstance(o, str) and len(o) <= MAX_NAME for o in opponents):
        raise StatsError("a record names no variant or opponents")
    counts = {f.name: _int(d, f.name, None if "streak" in f.name else 0)
              for f in fields(Record) if f.type == "int"}
    last = d.get("last_played", 0.0)
    if not isinstance(last, int | float):
        raise StatsError("last_played is not a time")
    return Record(variant, tuple(opponents), last_played=float(last), **counts)


def parse(text: str) -> Stats:
    """The statistics in ``text``, or :class:`StatsError` saying why not."""
    try:
        data = json.loads(text)
    except ValueError as e:
        raise StatsError(f"not JSON ({e})") from None
    if not isinstance(data, dict) or data.get("format") != STATS_FORMAT:
        raise StatsError("not an okgin statistics file")
    version = data.get("version")
    if not isinstance(version, int) or version < 1:
        raise StatsError("no version")
    records = data.get("records")
    if not isinstance(records, list) or len(records) > MAX_RECORDS:
        raise StatsError("no list of records")
    seen = data.get("seen", [])
    if not isinstance(seen, list) or not all(isinstance(s, str) and len(s) <= 128 for s in seen):
        raise StatsError("seen is not a list of games")
    if version > STATS_VERSION:
        # A newer okgin's file: what it shares with this version is shown, nothing is written.
        good = []
        for r in records:
            with contextlib.suppress(StatsError):
                good.append(_record(r))
        return Stats(tuple(good), read_only=True)
    return Stats(tuple(_record(r) for r in records), _int(data, "streak", None), _int(data, "best_streak"),
                 tuple(seen[-MAX_SEEN:]))


def dump(stats: Stats) -> str:
    records = []
    for r in stats.records:
        d = asdict(r)
        d["opponents"] = list(r.opponents)
        records.append(d)
    return json.dumps({"format": STATS_FORMAT, "version": STATS_VERSION, "streak": stats.streak,
                       "best_streak": stats.best_streak, "seen": list(stats.seen), "records": records},
                      indent=1, sort_keys=True) + "\n"


@dataclass
class StatsStore:
    """The statistics file: :meth:`load` to show it, :meth:`record` to count a game.
    Each returns a notice for the player when something about the file needs saying
    (kept aside as broken, written by a newer okgin, locked by a stuck process)."""

    path: Path = field(default_factory=stats_path)

    @property
    def lock_path(self) -> Path:
        return self.path.with_name(self.path.name + ".lock")

    def _dir(self) -> None:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self._dir()
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            deadline = time.monotonic() + LOCK_WAIT_S
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise TimeoutError(f"{self.lock_path} stayed locked for {LOCK_WAIT_S:g} s") from None
                    time.sleep(0.01)  # another okgin is writing: a few milliseconds
            yield
        finally:
            os.close(fd)  # closing releases the lock

    def _read(self) -> tuple[Stats, str | None]:
        """The file's statistics (empty when there is none), and a notice. A broken file
        is renamed aside here; the caller holds the lock."""
        try:
            with open(self.path, "rb") as f:
                raw = f.read(MAX_BYTES + 1)
        except FileNotFoundError:
            return Stats(), None
        except OSError as e:
            return Stats(read_only=True), f"Your statistics could not be read ({e.strerror}); they are not updated."
        try:
            if len(raw) > MAX_BYTES:
                raise StatsError(f"larger than {MAX_BYTES} bytes")
            stats = parse(raw.decode("utf-8"))
        except (StatsError, UnicodeDecodeError) as e:
            aside = self._keep_aside()
            return Stats(), (f"Your statistics file could not be read ({e}): it was kept as {aside} "
                             "and a fresh one started.")
        if stats.read_only:
            return stats, "Your statistics file was written by a newer okgin: shown as far as understood, not updated."
        return stats, None

    def _keep_aside(self) -> Path:
        stamp = time.strftime("%Y%m%dT%H%M%S")
        aside = self.path.with_name(f"{self.path.name}.broken-{stamp}")
        n = 1
        while aside.exists():  # two in one second: each kept (the lock keeps other processes out)
            n += 1
            aside = self.path.with_name(f"{self.path.name}.broken-{stamp}-{n}")
        os.replace(self.path, aside)
        broken = sorted(self.path.parent.glob(self.path.name + ".broken-*"), key=lambda p: p.stat().st_mtime)
        for old in broken[:-KEEP_BROKEN]:
            with contextlib.suppress(OSError):
                old.unlink()
        return aside

    def _write(self, stats: Stats) -> None:
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                os.fchmod(f.fileno(), 0o600)
                f.write(dump(stats))
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def load(self) -> tuple[Stats, str | None]:
        """The statistics to show, and a notice (a broken file is kept aside and a fresh
        one started, as :meth:`record` would)."""
        if not self.path.exists():
            return Stats(), None
        try:
            with self._locked():
                stats, notice = self._read()
                if notice and not stats.read_only and not self.path.exists():
                    self._write(stats)  # the fresh file the notice speaks of
                return stats, notice
        except (OSError, TimeoutError) as e:
            return Stats(), f"Your statistics could not be read: {e}"

    def record(self, tally: GameTally, now: float | None = None) -> str | None:
        """Count one finished game; a notice for the player, or None."""
        try:
            with self._locked():
                stats, notice = self._read()
                if stats.read_only:
                    return notice
                self._write(add_game(stats, tally, time.time() if now is None else now))
                return notice
        except (OSError, TimeoutError) as e:
            return f"This game could not be added to your statistics: {e}"
