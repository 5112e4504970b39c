"""``okgin corpus``: write a dataset of decisions, from self-play or from finished games.

The rows and their columns are :mod:`okgin.corpus`'s (docs/research.md, "A corpus").
Self-play lives here because the bots do (``okgin`` imports nothing of ``clients``);
reading journals and record files, and writing, is the engine side's.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from typing import Any

from okgin import RuleError, RuleSet
from okgin.corpus import COLUMNS, CorpusError, decision_rows, records_in, write_corpus
from okgin.launch import add_rule_flag

from .bots import BUILTIN_BOTS, BotNotFound
from .match import plan, play_game

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="okgin corpus",
        description="Write a dataset of games, one row per decision: the deciding seat's information state "
        "(its View as JSON and as a vector), the legal actions, the action and the hand's outcome. "
        "From self-play of bots (--bots), or from finished games (--records).",
        epilog="Columns: " + ", ".join(COLUMNS) + ". docs/research.md describes each. "
        f"A bot is a built-in name ({', '.join(BUILTIN_BOTS)}), package.module:Class or path/to/file.py:Class.",
    )
    p.add_argument("--out", required=True, metavar="FILE",
                   help="FILE.parquet (needs pip install 'okgin[corpus]') or FILE.jsonl")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--bots", metavar="A,B[,C]",
                     help="self-play among these bots: two for Oklahoma Gin, three for Gin in the Box")
    src.add_argument("--records", nargs="+", metavar="PATH",
                     help="finished games: referee or tournament journals (.jsonl), record files (.json), "
                     "or directories holding them (a tournament's run directory, a referee's --journal-dir)")
    p.add_argument("--games", type=int, default=100,
                   help="self-play games (default 100), rounded up to whole deals (every seating of each), "
                   "as okgin match plays them")
    p.add_argument("--seed", default="0", help="self-play seed (default 0): the same games as okgin match --seed SEED")
    add_rule_flag(p, help="a rule option for self-play (repeatable); see 'okgin rules'")
    p.add_argument("--progress", action="store_true", help="count games on standard error")
    return p


def _selfplay(names: list[str], games: int, seed: str, rules: RuleSet, progress: bool) -> Iterator[dict[str, Any]]:
    """``okgin match``'s games, exactly (:func:`clients.match.plan` and ``play_game``): the
    same deals, every seating of each, the same seeds for the bots, so a corpus and a
    match with the same seed describe the same games."""
    _deals, order = plan(len(names), games)
    for i, (deal, seating) in enumerate(order):
        summary = play_game(names, rules, seed, deal, seating, keep_record=True)
        assert summary.record is not None
        game_id = f"selfplay/{seed}/{deal}/{'-'.join(map(str, seating))}"
        yield from decision_rows(summary.record, game_id, [names[k] for k in seating])
        if progress:
            print(f"\rgames {i + 1}/{len(order)}", end="", file=sys.stderr, flush=True)
    if progress:
        print(file=sys.stderr)


def _from_records(paths: list[str], progress: bool) -> Iterator[dict[str, Any]]:
    count = 0
    for game_id, record, players in records_in(paths):
        yield from decision_rows(record, game_id, players)
        count += 1
        if progress:
            print(f"\rgames {count}", end="", file=sys.stderr, flush=True)
    if progress:
        print(file=sys.stderr)
    if count == 0:
        raise CorpusError("no finished game in " + " ".join(paths))


def main(argv: list[str] | None = None) -> int:
    a = build_parser().parse_args(argv)
    try:
        if a.bots is not None:
            names = [b.strip() for b in a.bots.split(",") if b.strip()]
            if len(names) not in (2, 3):
                print("okgin corpus: --bots takes two bots (Oklahoma Gin) or three (Gin in the Box)", file=sys.stderr)
                return 2
            if a.games < 1:
                print("okgin corpus: --games must be at least 1", file=sys.stderr)
                return 2
            if any(r.split("=", 1)[0].strip() == "variant" for r in a.rule):
                print("okgin corpus: the variant follows from the bots: two for oklahoma, three for box", file=sys.stderr)
                return 2
            rules = RuleSet(variant="oklahoma" if len(names) == 2 else "box").with_assignments(a.rule)
            rows = _selfplay(names, a.games, a.seed, rules, a.progress)
        else:
            if a.rule:
                print("okgin corpus: --rule is for self-play; records carry their own rules", file=sys.stderr)
                return 2
            rows = _from_records(a.records, a.progress)
        n = write_corpus(rows, a.out)
    except (RuleError, BotNotFound) as e:
        print(f"okgin corpus: {e}", file=sys.stderr)
        return 2
    except CorpusError as e:
        print(f"okgin corpus: {e}", file=sys.stderr)
        return 1
    print(f"{n} decisions written to {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
