"""``okgin replay FILE --check``: re-run journals through the engine (protocol.md §12).

Why a separate check: a journal is the referee's testimony about a game. Re-deriving
every step with :class:`okgin.Game` from the revealed seed proves the referee applied
only legal moves in turn, refused only illegal ones, scored every hand right, and
published a seed hash that matches the seed (hashed with the revealed salt since protocol
1.4; a journal without a salt is checked by the older, unsalted rule). Any disagreement
is reported with its line.

Exit status: 0 every journal agrees, 1 a mismatch (or a journal whose last line is torn
before its end), 2 a file that cannot be read as a journal, 3 a game still in progress (no
``end`` line, last line whole: the referee is still writing it, so there is no seed to
check yet). Several files: 2 before 1 before 3 before 0.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from okgin import Action, Game, IllegalAction, RuleSet, canonical_json
from okgin.journal import (
    JournalError,  # the file is not a readable journal (exit 2)
    JournalFile,
    read_journal,
)
from okgin.rng import is_salt, seed_hash

__all__ = ["CheckReport", "InProgress", "JournalError", "Mismatch", "check_entries", "check_file", "main", "numbered_entries"]


class Mismatch(Exception):
    """The journal disagrees with the engine (exit 1)."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line


class InProgress(Mismatch):
    """The journal has no ``end`` line and its last line is whole: the game is still
    being played (exit 3). A :class:`Mismatch` for callers that only ask "verified?"."""


# The exit status of a run over several files: the worst wins (2 > 1 > 3 > 0).
_SEVERITY = {0: 0, 3: 1, 1: 2, 2: 3}


def _worse(a: int, b: int) -> int:
    return a if _SEVERITY[a] >= _SEVERITY[b] else b


@dataclass
class CheckReport:
    path: str
    variant: str
    hands: int
    actions: int
    winner: int | None
    termination: str | None
    game: Game


def numbered_entries(journal: str | Path | JournalFile) -> list[dict[str, Any]]:
    """The journal's entries (read by :func:`okgin.journal.read_journal`, the one reader),
    each with its line number in ``_line`` for :func:`check_entries`' messages. A torn last
    line is left out: the journal then lacks its end and the check reports it incomplete
    (exit 1; :func:`check_file` tells a torn journal from one still in progress)."""
    j = journal if isinstance(journal, JournalFile) else read_journal(journal)
    return [{**e, "_line": n} for e, n in zip(j.entries, j.lines, strict=True)]


def check_entries(entries: list[dict[str, Any]], path: str = "<journal>", *, torn: bool = True) -> CheckReport:
    """Verify a journal against the engine; raise :class:`Mismatch` at the first disagreement.

    A journal without its ``end`` line raises :class:`InProgress` when ``torn`` is false
    (its last line is whole: the game is still going), else a plain :class:`Mismatch`."""
    start = entries[0]
    end = entries[-1]
    if end["t"] != "end":
        if not torn:
            raise InProgress(
                end["_line"],
                f"in progress: no 'end' line yet (last entry '{end['t']}'); the seed is revealed only when the game ends",
            )
        raise Mismatch(
            end["_line"],
            "the journal has no 'end' line (the referee stopped before the game ended); without the seed it cannot be checked",
        )
    seed = end.get("seed")
    if isinstance(seed, bool) or not isinstance(seed, int | str):
        raise Mismatch(end["_line"], f"the end line's seed is {seed!r}, not an integer or a string")
    salt = end.get("salt")  # 1.4; absent or null in older journals: the unsalted hash
    if salt is not None and not is_salt(salt):
        raise Mismatch(end["_line"], f"the end line's salt {salt!r} is not 32 lowercase hex digits")
    if seed_hash(seed, salt) != start.get("seed_hash") or end.get("seed_hash") != start.get("seed_hash"):
        how = "unsalted (a journal before protocol 1.4)" if salt is None else f"with the salt {salt}"
        raise Mismatch(
            end["_line"],
            f"the seed {seed!r}, {how}, does not hash to the seed_hash published at the start ({start.get('seed_hash')})",
        )
    try:
        rules = RuleSet.from_dict(dict(start["rules"]))
    except (ValueError, TypeError, KeyError) as err:
        raise Mismatch(start["_line"], f"bad rules: {err}") from None
    game = Game(rules, seed)
    expected_result: dict[str, Any] | None = None
    n = 0
    actions = 0
    for e in entries[1:-1]:
        ln, t = e["_line"], e["t"]
        try:
            if t == "action":
                if expected_result is not None:
                    raise Mismatch(ln, "a hand ended but its hand_end line is missing")
                seat = e["seat"]
                if game.current_player != seat:
                    raise Mismatch(ln, f"seat {seat} acted but the engine has seat {game.current_player} to act")
                n += 1
                if e.get("n") != n:
                    raise Mismatch(ln, f"feed number {e.get('n')}, expected {n}")
                result = game.apply(Action.from_wire(e["action"]), seat=seat)
                actions += 1
                expected_result = None if result is None else result.to_wire()
            elif t == "hand_end":
                n += 1
                if e.get("n") != n:
                    raise Mismatch(ln, f"feed number {e.get('n')}, expected {n}")
                if expected_result is None:
                    raise Mismatch(ln, "a hand_end line where the engine ended no hand")
                if e.get("result") != expected_result:
                    raise Mismatch(
                        ln,
                        f"hand result {canonical_json(e.get('result'))} but the engine scores {canonical_json(expected_result)}",
                    )
                expected_result = None
            elif t == "advice":
                a = e.get("action")
                game.advise(e["seat"], None if a is None else Action.from_wire(a), e.get("text", ""))
            elif t == "illegal":
                seat = e["seat"]
                if game.current_player != seat:
                    raise Mismatch(ln, f"an illegal action of seat {seat} recorded while seat {game.current_player} was to act")
                try:
                    a = Action.from_wire(e.get("action"))
                except Exception:
                    a = None  # malformed: refused rightly
                if a is not None and game.is_legal(a):
                    raise Mismatch(ln, f"the referee refused {a}, which the engine finds legal")
            elif t == "resign":
                game.resign(e["seat"], e["reason"])
            elif t == "abandon":
                game.abandon(e["reason"])
            elif t in ("timeout", "disconnect", "reconnect"):
                pass  # facts about time and connections: nothing for the engine to verify
            elif t in ("start", "end"):
                raise Mismatch(ln, f"a second '{t}' line")
            # unknown entry types are ignored (a later journal version may add some)
        except IllegalAction as err:
            raise Mismatch(ln, f"the engine refuses this entry: {err}") from None
        except (KeyError, TypeError, ValueError) as err:
            raise Mismatch(ln, f"malformed entry ({type(err).__name__}: {err})") from None
    if expected_result is not None:
        raise Mismatch(end["_line"], "the last hand ended but its hand_end line is missing")
    if not game.is_over:
        raise Mismatch(end["_line"], "the journal ends but the engine's game is not over")
    final = game.final_scores()
    if end.get("final") != final:
        raise Mismatch(end["_line"], f"final {canonical_json(end.get('final'))} but the engine gives {canonical_json(final)}")
    if end.get("termination") != game.termination:
        raise Mismatch(end["_line"], f"termination {end.get('termination')!r} but the engine says {game.termination!r}")
    record = game.to_record()
    if canonical_json(_with_full_rules(end.get("record"))) != canonical_json(record):
        raise Mismatch(end["_line"], "the recorded game record differs from the engine's")
    return CheckReport(path, rules.variant, len(game.results), actions, game.winner, game.termination, game)


def _with_full_rules(record: Any) -> Any:
    """A recorded game record with its rules completed by today's defaults.

    Why: a journal written before a rule option existed (``max_pile_draws``, protocol
    1.4) records rules without it, while the engine's record lists every option. The
    game was replayed under the completed rules (the start line's, parsed the same way)
    and every move, result and score agreed, so only the record's spelling differs."""
    if not isinstance(record, dict) or not isinstance(record.get("rules"), dict):
        return record
    try:
        return {**record, "rules": RuleSet.from_dict(dict(record["rules"])).to_dict()}
    except (ValueError, TypeError, KeyError):
        return record


def check_file(path: str | Path) -> CheckReport:
    j = read_journal(path)
    return check_entries(numbered_entries(j), str(path), torn=j.torn)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(
        prog="okgin replay",
        description="Check journals against the engine (--check), or step through one in the TUI.",
        epilog="exit status: 0 every journal agrees; 1 a mismatch (or a journal torn before its end); "
        "2 a file that cannot be read as a journal; 3 a game still in progress (no end line yet). "
        "With several files the worst wins: 2, then 1, then 3.",
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="journal files (.jsonl) or directories of them")
    p.add_argument(
        "--check",
        action="store_true",
        required=True,
        help="re-run each journal through the engine and verify every event and result",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="print only problems")
    args = p.parse_args(argv)
    paths: list[Path] = []
    for f in args.files:
        fp = Path(f)
        paths.extend(sorted(fp.glob("*.jsonl")) if fp.is_dir() else [fp])
    status = 0
    for path in paths:
        try:
            r = check_file(path)
        except JournalError as e:
            print(f"UNREADABLE {e}", file=sys.stderr)
            status = _worse(status, 2)
            continue
        except InProgress as e:
            print(f"IN PROGRESS {path} {e}", file=sys.stderr)
            status = _worse(status, 3)
            continue
        except Mismatch as e:
            print(f"MISMATCH {path} {e}", file=sys.stderr)
            status = _worse(status, 1)
            continue
        if not args.quiet:
            who = "no winner" if r.winner is None else f"winner seat {r.winner}"
            print(f"OK {path}: {r.variant}, {r.hands} hands, {r.actions} actions, {who} ({r.termination}); seed verified")
    if not paths:
        print("okgin replay: no journal files found", file=sys.stderr)
        return 2
    return status
