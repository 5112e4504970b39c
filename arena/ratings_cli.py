"""``okgin arena ratings``: the leaderboards, one account's history, and ``--rebuild``.

``--rebuild`` recomputes every rating and the whole history from the stored games (finished,
rated, in finish order: :meth:`arena.store.Store.rebuild_ratings`) and says whether anything
changed; on a database nobody tampered with, nothing does. Run it with the arena stopped or
running: it is one transaction.
"""

from __future__ import annotations

import argparse
import sys

from .ratings import PROVISIONAL_DEVIATION, VARIANTS
from .statedir import add_db_flags, open_store
from .store import StoreError

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="okgin arena ratings",
                                description="Show the arena's ratings, or rebuild them from the games.")
    p.add_argument("--variant", choices=VARIANTS, default=None, help="one variant (default: each)")
    p.add_argument("--rebuild", action="store_true", help="recompute every rating from the stored games first")
    p.add_argument("--history", metavar="ACCOUNT", help="one account's rating after each of its games instead")
    p.add_argument("--limit", type=int, default=50, help="rows per leaderboard (default 50)")
    add_db_flags(p)
    return p


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    variants = [args.variant] if args.variant else list(VARIANTS)
    try:
        with open_store(args, create=False) as store:
            if args.rebuild:
                was = store.ratings_snapshot()
                n = store.rebuild_ratings()
                same = store.ratings_snapshot() == was
                print(f"rebuilt from {n} rated games: {'the same numbers' if same else 'the ratings CHANGED'}")
            if args.history:
                for v in variants:
                    points = store.history(args.history, v)
                    if points:
                        print(f"{args.history} ({v}): game, rating before -> after, deviation")
                    for pt in points:
                        print(f"  {pt.n:4d} {pt.game_id}  {pt.before:7.1f} -> {pt.rating:7.1f}  ±{pt.deviation:5.1f}")
                return 0
            for v in variants:
                rows = store.leaderboard(v, 0, max(1, min(args.limit, 1000)))
                print(f"{v}: {len(rows)} rated account(s); '?' provisional (deviation above {PROVISIONAL_DEVIATION:g})")
                for rank, (a, r) in enumerate(rows, 1):
                    print(f"  {rank:4d}  {a.name:40s} {a.kind:5s} {r.rating:7.1f}{'?' if r.provisional else ' '} "
                          f"±{r.deviation:5.1f}  {r.games} games")
    except StoreError as e:
        print(f"okgin arena ratings: {e}", file=sys.stderr)
        return 1
    return 0
