"""A corpus of decisions for research: one row per decision of finished games.

Why rows are rebuilt from records: a game's record (its seed and its entries) is all a
finished game needs to be replayed exactly (docs/rules.md §6), and every place okgin
plays writes one (``okgin match``, tournaments' journals, the referee's journals,
``clients.local.play_local``). Replaying it through the engine gives, at each decision,
the deciding seat's :class:`okgin.View`, which is exactly what the referee sent that
seat: a row can never hold a card the seat could not see (docs/rules.md §5).

Each row (``COLUMNS``, ``CORPUS_VERSION``) holds the seat's information state twice: as
the View's wire form (JSON, as protocol.md §6 describes it) for anything that wants to
read it, and as :func:`okgin.envs.encoding.encode_view`'s vector for learning; the legal
actions and the action as action numbers (okgin.envs.encoding: OpenSpiel's 0-108, and
109 "no advice" for the Gin in the Box sitter) and as wire text; and the hand's outcome
from the seat's side. Rows are written as Parquet (through ``pyarrow``, the optional
``corpus`` extra) or as JSON Lines, which need nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from .actions import Action
from .errors import IllegalAction
from .journal import JournalError, read_journal
from .record import RecordMismatch, apply_entry, game_from_record
from .scoring import HandResult

__all__ = [
    "COLUMNS", "CORPUS_VERSION", "CorpusError", "decision_rows", "read_corpus", "records_in",
    "write_corpus",
]

CORPUS_VERSION = 1

# name: (Arrow type name, meaning). The order is the files' column order.
COLUMNS: dict[str, tuple[str, str]] = {
    "corpus_version": ("int16", "CORPUS_VERSION of the writer"),
    "game_id": ("string", "where the game came from: a journal's path, a record file's, or selfplay/N"),
    "variant": ("string", "oklahoma or box"),
    "rules": ("string", "the game's rules, RuleSet.to_dict() as JSON"),
    "hand": ("int32", "hand number in the game, from 0"),
    "decision": ("int32", "index of the decision in the game, from 0"),
    "seat": ("int8", "the deciding seat"),
    "player": ("string", "the deciding seat's player name, when the source names it"),
    "role": ("string", "dealer, nondealer, box, captain or sitter"),
    "kind": ("string", "move (an action of the game), or advice (the Box sitter's)"),
    "phase": ("string", "offer, draw or discard"),
    "view": ("string", "the seat's View as on the wire (JSON): its information state"),
    "observation": ("list<float32>", "okgin.envs.encoding.encode_view(view)"),
    "legal": ("list<int16>", "legal action numbers (advice: the captain's, and 109 for none)"),
    "legal_text": ("list<string>", "the same as wire text (advice: none is null)"),
    "action": ("int16", "the action number taken"),
    "action_text": ("string", "the action as wire text (advice given as none: null)"),
    "hand_points": ("int32", "the seat's points from this hand: +won, -lost, 0 (sitter, drawn, unscored)"),
    "hand_outcome": ("string", "how the hand ended (knock, gin, undercut, drawn, ...); null if it never ended"),
    "hand_winner": ("int8", "the hand's winner; null if nobody"),
    "game_winner": ("int8", "the game's winner; null if nobody or unfinished"),
    "final_score": ("int32", "the seat's score at the end of the game"),
}


class CorpusError(ValueError):
    """A source or an output that cannot be used; the message says which and why."""


def _wire(action: Action | None) -> str | None:
    return None if action is None else json.dumps(action.to_wire(), separators=(",", ":"), sort_keys=True)


def _points(result: HandResult, seat: int) -> int:
    if result.winner is None:
        return 0
    if result.winner == seat:
        return result.points
    return -result.points if seat in (result.knocker, result.defender) else 0


def decision_rows(record: dict[str, Any], game_id: str, players: list[str] | None = None) -> Iterator[dict[str, Any]]:
    """The rows of one game's record, decision by decision (raises :class:`CorpusError`
    when the record does not replay: each entry must be legal where it stands)."""
    from .envs.encoding import NO_ADVICE, action_to_id, encode_view

    try:
        # The checks of a record (version, results, final) come first: a record that does
        # not replay to what it says is no evidence of anything.
        done = game_from_record(record, verify=True)
        game = game_from_record({**record, "entries": []}, verify=False)
    except (RecordMismatch, ValueError, KeyError, TypeError) as bad:
        raise CorpusError(f"{game_id}: not a replayable record: {bad}") from None
    rules_json = json.dumps(game.rules.to_dict(), separators=(",", ":"), sort_keys=True)
    pending: list[dict[str, Any]] = []  # this hand's rows, until its outcome is known
    decision = 0

    def close_hand(result: HandResult | None) -> Iterator[dict[str, Any]]:
        for row in pending:
            row["hand_points"] = 0 if result is None else _points(result, row["seat"])
            row["hand_outcome"] = None if result is None else result.outcome
            row["hand_winner"] = None if result is None else result.winner
            row["game_winner"] = done.winner if done.over else None
            row["final_score"] = done.scores[row["seat"]]
            yield row
        pending.clear()

    for i, e in enumerate(record.get("entries", [])):
        hand = game.hand_number
        results_before = len(game.results)
        if "action" in e or "advice" in e:
            seat = e["seat"]
            view = game.view(seat)
            if "action" in e:
                legal = game.legal_actions()
                move = Action.from_wire(e["action"])
                action: Action | None = move
                kind = "move"
                ids = [action_to_id(a) for a in legal]
                texts: list[str | None] = [_wire(a) for a in legal]
                taken = action_to_id(move)
            else:
                captain = game.current_player
                assert captain is not None
                legal = game.legal_actions()
                action = None if e["advice"] is None else Action.from_wire(e["advice"])
                kind = "advice"
                ids = [action_to_id(a) for a in legal] + [NO_ADVICE]
                texts = [_wire(a) for a in legal] + [None]
                taken = NO_ADVICE if action is None else action_to_id(action)
            pending.append({
                "corpus_version": CORPUS_VERSION, "game_id": game_id, "variant": game.rules.variant,
                "rules": rules_json, "hand": hand, "decision": decision, "seat": seat,
                "player": players[seat] if players and seat < len(players) else None,
                "role": view.roles[seat], "kind": kind, "phase": str(view.phase),
                "view": json.dumps(view.to_wire(), separators=(",", ":"), sort_keys=True),
                "observation": [float(x) for x in encode_view(view)],
                "legal": ids, "legal_text": texts, "action": taken, "action_text": _wire(action),
            })
            decision += 1
        try:
            apply_entry(game, e)
        except (IllegalAction, ValueError, KeyError) as err:
            raise CorpusError(f"{game_id}: entry {i} does not replay: {err}") from None
        if len(game.results) > results_before:
            yield from close_hand(game.results[-1])
    yield from close_hand(None)  # a hand cut short (resign, abandon): no outcome


def records_in(paths: Iterable[str | Path]) -> Iterator[tuple[str, dict[str, Any], list[str] | None]]:
    """(game id, record, player names) of every finished game under ``paths``.

    A path is a referee journal (``.jsonl``: its ``end`` line's record; games still being
    played, with no end line, are skipped), a record file (``.json``: one okgin record, or
    a list of them, as ``Game.to_record()`` writes), or a directory searched for both."""
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.suffix in (".jsonl", ".json") and p.is_file())
            if not files:
                raise CorpusError(f"{path}: no journal (.jsonl) or record (.json) file in it")
        elif path.is_file():
            files = [path]
        else:
            raise CorpusError(f"{path}: no such file or directory")
        for f in files:
            yield from _records_of_file(f)


def _records_of_file(f: Path) -> Iterator[tuple[str, dict[str, Any], list[str] | None]]:
    if f.suffix == ".jsonl":
        try:
            j = read_journal(f)
        except JournalError as e:
            raise CorpusError(str(e)) from None
        if j.record is not None:
            players = j.start.get("players")
            yield str(f), j.record, players if isinstance(players, list) else None
        return
    try:
        data = json.loads(f.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CorpusError(f"{f}: not a JSON record file: {e}") from None
    items = data if isinstance(data, list) else [data]
    for n, rec in enumerate(items):
        if not isinstance(rec, dict):
            raise CorpusError(f"{f}: item {n} is not a record (a JSON object)")
        yield (str(f) if len(items) == 1 else f"{f}#{n}"), rec, None


def _arrow_schema() -> Any:
    import pyarrow as pa

    def typ(name: str) -> Any:
        if name.startswith("list<"):
            return pa.list_(typ(name[5:-1]))
        return getattr(pa, name)()

    return pa.schema([(n, typ(t)) for n, (t, _) in COLUMNS.items()])


def write_corpus(rows: Iterable[dict[str, Any]], path: str | Path, batch_rows: int = 20_000) -> int:
    """Write ``rows`` to ``path`` (``.parquet`` or ``.jsonl``); return how many.

    Rows are written in batches, so memory stays bounded however large the corpus. The
    file is written under a temporary name and renamed when complete, so an interrupted
    run never leaves a truncated corpus behind under the real name."""
    out = Path(path)
    if out.suffix not in (".parquet", ".jsonl"):
        raise CorpusError(f"{out}: the corpus is written as .parquet or .jsonl")
    tmp = out.with_name(out.name + ".partial")
    try:
        n = _write(rows, out.suffix, tmp, batch_rows)
    except BaseException:
        tmp.unlink(missing_ok=True)  # an unreadable source or ^C: no half corpus left behind
        raise
    tmp.replace(out)
    return n


def _write(rows: Iterable[dict[str, Any]], suffix: str, tmp: Path, batch_rows: int) -> int:
    n = 0
    if suffix == ".jsonl":
        with tmp.open("w", encoding="utf-8", newline="\n") as fh:
            for row in rows:
                fh.write(json.dumps(row, separators=(",", ":"), ensure_ascii=False) + "\n")
                n += 1
    else:
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise CorpusError("Parquet needs pyarrow: pip install 'okgin[corpus]' (or write .jsonl)") from None
        schema = _arrow_schema()
        batch: list[dict[str, Any]] = []
        with pq.ParquetWriter(tmp, schema, compression="zstd") as writer:
            for row in rows:
                batch.append(row)
                if len(batch) >= batch_rows:
                    writer.write_table(pa.Table.from_pylist(batch, schema=schema))
                    n += len(batch)
                    batch.clear()
            if batch or n == 0:
                writer.write_table(pa.Table.from_pylist(batch, schema=schema))
                n += len(batch)
    return n


def read_corpus(path: str | Path) -> list[dict[str, Any]]:
    """Every row of a corpus file (for tests and small samples; research tools read the
    Parquet file directly: ``pandas.read_parquet``, ``pyarrow.parquet.read_table``)."""
    p = Path(path)
    if p.suffix == ".jsonl":
        return [json.loads(line) for line in p.read_text(encoding="utf-8").split("\n") if line]
    import pyarrow.parquet as pq

    rows: list[dict[str, Any]] = pq.read_table(p).to_pylist()
    return rows

