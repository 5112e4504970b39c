"""A finished game's record and clocks, as the runner stores them.

Two sources, best first:

1. **The referee's journal** (protocol.md §12), when the runner started the referee and
   so knows its journal directory: the ``end`` line carries the engine's full record
   (advice included) and every ``action`` line the time the move took by the referee's
   clock, the only authority on time.
2. **The public feed** the runner watched, for referees elsewhere: every move is public
   except a stock draw's card (not needed to replay: ``draw_stock`` carries no card) and
   a knock's face-down discard and layout, which ``hand_end`` reveals. So the runner
   rebuilds a complete, replayable record (the knock with its revealed layout as the
   declared melds) and checks it with the engine against the referee's final scores.
   Advice is not on the public feed and is missing from such a record; move times are
   the runner's observation (feed message to feed message), labelled as such.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from okgin import Action, Game, IllegalAction, RuleSet
from okgin.journal import JournalError, journal_base, read_journal


class FeedRecorder:
    """Rebuilds a game from the public feed of its table, as messages arrive."""

    def __init__(self, rules: RuleSet, seed: str) -> None:
        self.rules = rules
        self.seed = seed
        self.moves: list[dict[str, Any]] = []  # public Move maps, plus "auto" and the observed ms
        self.results: list[dict[str, Any]] = []
        self.to_act: int | None = None
        self.started = False
        self.end: dict[str, Any] | None = None
        self.seed_hash: str | None = None  # game_start's commitment to the (secret) seed
        self.last_at = time.monotonic()
        self.think_ms: list[float] = []
        self.moves_by_seat: list[int] = []
        self.max_ms: list[float] = []
        self.n = -1
        self.gaps = 0

    def feed(self, msg: dict[str, Any]) -> None:
        kind = msg.get("type")
        now = time.monotonic()
        n = msg.get("n")
        if isinstance(n, int) and kind in ("game_start", "event", "hand_end", "game_end"):
            if self.n >= 0 and n != self.n + 1:
                self.gaps += 1
            self.n = n
        if kind == "game_start":
            self.started = True
            if isinstance(msg.get("seed_hash"), str):
                self.seed_hash = msg["seed_hash"]
            seats = int(msg.get("num_seats") or self.rules.num_players)
            self.think_ms = [0.0] * seats
            self.moves_by_seat = [0] * seats
            self.max_ms = [0.0] * seats
            self._view(msg.get("view"))
        elif kind == "event":
            move = msg.get("move") or {}
            seat = move.get("seat")
            if isinstance(seat, int) and 0 <= seat < len(self.think_ms):
                ms = (now - self.last_at) * 1000.0
                self.think_ms[seat] += ms
                self.moves_by_seat[seat] += 1
                self.max_ms[seat] = max(self.max_ms[seat], ms)
            self.moves.append({**move, "auto": bool(msg.get("auto"))})
            self._view(msg.get("view"))
        elif kind == "hand_end":
            self.results.append(msg.get("result") or {})
            self._view(msg.get("view"))
        elif kind == "game_end":
            self.end = msg
            self.to_act = None
        self.last_at = now

    def _view(self, view: Any) -> None:
        if isinstance(view, dict):
            self.to_act = view.get("to_act")

    def clocks(self) -> dict[str, Any]:
        return {"source": "observer", "think_ms": [round(x) for x in self.think_ms], "moves": self.moves_by_seat,
                "max_move_ms": [round(x) for x in self.max_ms]}

    def record(self) -> tuple[dict[str, Any], str | None]:
        """The rebuilt record, and None if the engine agrees with the referee's final
        result, else a sentence saying where they differ."""
        game = Game(self.rules, self.seed)
        hand = 0
        try:
            for mv in self.moves:
                kind = mv.get("kind")
                if kind in ("knock", "big_gin"):
                    res = self.results[hand] if hand < len(self.results) else {}
                    layout = res.get("knocker_layout") or {}
                    wire: dict[str, Any] = {"kind": kind, "melds": layout.get("melds") or []}
                    if kind == "knock":
                        wire["card"] = res.get("knock_discard")
                    action = Action.from_wire(wire)
                elif kind == "discard":
                    action = Action.from_wire({"kind": "discard", "card": mv.get("card")})
                else:
                    action = Action.from_wire({"kind": kind})
                if game.apply(action, seat=mv.get("seat")) is not None:
                    hand += 1
            end = self.end or {}
            term = end.get("termination")
            if not game.is_over:
                if term == "abandoned":
                    game.abandon("abandoned")
                elif term in ("timeout", "illegal", "disconnect", "resigned") and isinstance(end.get("at_fault"), int):
                    game.resign(end["at_fault"], term)
        except (IllegalAction, ValueError) as e:
            return game.to_record(), f"the public feed does not replay: {e}"
        final = (self.end or {}).get("final")
        mine = game.final_scores() if game.is_over else None
        if final is not None and mine is not None:
            keys = ("scores", "winner", "termination")
            if any(mine.get(k) != final.get(k) for k in keys):
                return game.to_record(), f"the rebuilt game ends {mine}, the referee said {final}"
        return game.to_record(), None


#: At most this many seconds' names are tried by :func:`find_journal` before it lists the directory.
MAX_STAMPS = 300


def find_journal(journal_dir: Path, table: str, started: tuple[float, float] | None = None) -> Path | None:
    """The journal of ``table``'s first game in ``journal_dir`` (the newest, if the name was used again).

    A journal is named ``TABLE-g1-STAMP.jsonl``, STAMP the UTC second its game started
    (:class:`referee.journal.Journal`). With ``started`` (the earliest and latest UNIX time the
    game can have started, on this machine's clock) the names of those seconds are tried
    first, newest first: a few ``stat`` calls. Why: listing the directory costs a step per
    journal in it, and an arena's shard directory gains one per game for ever (its front
    looks up every game's journal: at 100,000 games, a listing each). Without ``started``, or
    when no such name exists (another clock, a name with a ``-K`` suffix), the directory is
    listed.
    """
    if started is not None:
        lo, hi = int(started[0]) - 1, int(started[1]) + 1
        if 0 <= hi - lo <= MAX_STAMPS:
            for t in range(hi, lo - 1, -1):
                path = journal_dir / f"{journal_base(table, 1, t)}.jsonl"
                if path.is_file():
                    return path
    files = sorted(journal_dir.glob(f"{table}-g1-*.jsonl"))
    return files[-1] if files else None


def journal_outcome(path: Path) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """A game's outcome from its journal: the ``end`` line (or None if the game has not
    ended in it) and the clocks. The file is read by :func:`okgin.journal.read_journal`,
    the one journal reader; a file that is no journal (yet) has no end line."""
    end: dict[str, Any] | None = None
    think: dict[int, int] = {}
    moves: dict[int, int] = {}
    longest: dict[int, int] = {}
    timeouts: dict[int, int] = {}
    illegal: dict[int, int] = {}
    seats = 0
    try:
        # The shared reader: "\n"-only lines, a torn last line (the referee is writing,
        # or died while writing it) left out.
        entries = read_journal(path).entries
    except JournalError:
        entries = []  # not a journal (yet): no end line, so the runner uses the feed's record
    for e in entries:
        t = e.get("t")
        if t == "start":
            seats = len(e.get("players") or [])
        elif t == "action" and isinstance(e.get("seat"), int):
            s = e["seat"]
            ms = int(e.get("ms") or 0)
            think[s] = think.get(s, 0) + ms
            moves[s] = moves.get(s, 0) + 1
            longest[s] = max(longest.get(s, 0), ms)
        elif t == "timeout" and isinstance(e.get("seat"), int):
            timeouts[e["seat"]] = timeouts.get(e["seat"], 0) + 1
        elif t == "illegal" and isinstance(e.get("seat"), int):
            illegal[e["seat"]] = illegal.get(e["seat"], 0) + 1
        elif t == "end":
            end = e
    seats = seats or (max([*think, *timeouts, *illegal], default=-1) + 1)
    clocks = {
        "source": "journal",
        "think_ms": [think.get(s, 0) for s in range(seats)],
        "moves": [moves.get(s, 0) for s in range(seats)],
        "max_move_ms": [longest.get(s, 0) for s in range(seats)],
        "timeouts": [timeouts.get(s, 0) for s in range(seats)],
        "illegal": [illegal.get(s, 0) for s in range(seats)],
        "journal": path.name,
    }
    return end, clocks
