"""``okgin match A B [C]``: bots against each other with duplicate deals, as a table or JSON.

In-process by default (fast self-play through :mod:`clients.match`). ``--via-referee``
plays the very same games through a real referee subprocess and bot client
subprocesses over loopback (:mod:`clients.match_referee`): same seeds, same actions,
same results. ``--dask ADDRESS`` plays the chunks of deals as tasks on a Dask cluster
(:mod:`clients.match_dask`, needs ``pip install 'okgin[cluster]'``): the same figures as
a local run.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from okgin import RuleError, RuleSet
from okgin.launch import add_rule_flag
from okgin.rules import EVENT_MAX_HANDS

from .bots import BUILTIN_BOTS, BotNotFound
from .match import MatchResult, dumps, run_match


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="okgin match",
        description="Play bots against each other with duplicate deals (every deal once per seating) "
        "and report wins, points, hands and knock/gin/undercut/drawn rates with 95% intervals.",
        epilog=f"A bot is a built-in name ({', '.join(BUILTIN_BOTS)}), package.module:Class or path/to/file.py:Class.",
    )
    p.add_argument("bots", nargs="+", metavar="BOT", help="two bots (Oklahoma Gin) or three (Gin in the Box)")
    p.add_argument("--games", type=int, default=100, help="games to play, rounded up to whole deals (default 100)")
    p.add_argument(
        "--seed",
        default="0",
        help="match seed (default 0): the fixed secret SHA-256(SEED) of okgin.schedule; "
        "deal d is played with the game seed HMAC-SHA256(secret, d), as in okgin tournament with seed = SEED",
    )
    p.add_argument("--variant", choices=["oklahoma", "box"], help="default: oklahoma for two bots, box for three")
    add_rule_flag(p, help="a rule option (repeatable); see okgin rules")
    p.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="worker processes in-process, or lanes of bot processes with --via-referee (default 1)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    p.add_argument("--via-referee", action="store_true", help="play through a real referee and bot clients over loopback")
    p.add_argument(
        "--referee-arg", action="append", default=[], metavar="ARG", help="extra argument for the referee (with --via-referee)"
    )
    p.add_argument("--progress", action="store_true", help="show progress on standard error")
    d = p.add_argument_group("Dask cluster (clients/match_dask.py, docs/cluster.md)")
    d.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="play the chunks of deals as tasks on the Dask scheduler at ADDRESS "
        "(tcp://HOST:8786, tls://HOST:8786), or 'local' for a LocalCluster on 127.0.0.1; the figures are a local run's",
    )
    d.add_argument(
        "--dask-tls",
        metavar="DIR",
        help="TLS certificates made by 'okgin cluster certs DIR' (ca.pem, client.pem, client-key.pem)",
    )
    d.add_argument(
        "--dask-timeout",
        type=float,
        default=30.0,
        metavar="S",
        help="seconds to reach the scheduler and see a worker (default 30)",
    )
    return p


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    if len(args.bots) not in (2, 3):
        print("okgin match: give two bots (Oklahoma Gin) or three (Gin in the Box)", file=sys.stderr)
        return 2
    if args.games < 1:
        print("okgin match: --games must be at least 1", file=sys.stderr)
        return 2
    variant = args.variant or ("box" if len(args.bots) == 3 else "oklahoma")
    try:
        # A match's games end (docs/rules.md §3.7.1): the game limit unless --rule max_hands=0.
        rules = RuleSet(variant=variant, max_hands=EVENT_MAX_HANDS).with_assignments(args.rule)
    except RuleError as e:
        print(f"okgin match: {e}", file=sys.stderr)
        return 2
    if rules.num_players != len(args.bots):
        print(f"okgin match: {variant} is played by {rules.num_players} bots, got {len(args.bots)}", file=sys.stderr)
        return 2
    if args.dask and args.via_referee:
        print("okgin match: give --dask or --via-referee, not both", file=sys.stderr)
        return 2
    if args.dask_tls and not args.dask:
        print("okgin match: --dask-tls needs --dask ADDRESS", file=sys.stderr)
        return 2
    seed: int | str = int(args.seed) if args.seed.lstrip("-").isdigit() else args.seed

    def progress(done: int, total: int) -> None:
        if done == total or done % 20 == 0:
            print(f"\r{done}/{total} games", end="" if done < total else "\n", file=sys.stderr, flush=True)

    try:
        if args.via_referee:
            from .match_referee import run_match_via_referee

            result = run_match_via_referee(
                args.bots,
                games=args.games,
                seed=seed,
                rules=rules,
                jobs=args.jobs,
                referee_args=args.referee_arg,
                progress=progress if args.progress else None,
            )
        elif args.dask:
            return _run_dask(args, seed, rules, progress)
        else:
            result = run_match(
                args.bots, games=args.games, seed=seed, rules=rules, jobs=args.jobs, progress=progress if args.progress else None
            )
    except (BotNotFound, ValueError) as e:
        print(f"okgin match: {e}", file=sys.stderr)
        return 2
    return _report(args, result)


def _report(args: argparse.Namespace, result: MatchResult) -> int:
    if args.json:
        print(dumps(result))
    else:
        print(result.table())
    return 0


def _run_dask(args: argparse.Namespace, seed: int | str, rules: RuleSet, progress: Callable[[int, int], None]) -> int:
    """``--dask``: every failure of the cluster is a sentence and exit status 2."""
    try:
        from competition.cluster.certs import CertsError
        from competition.cluster.connect import ClusterError

        from .match_dask import MatchDaskError, run_match_dask
    except ImportError as e:
        print(f"okgin match: --dask needs Dask: pip install 'okgin[cluster]' ({e})", file=sys.stderr)
        return 2
    try:
        result = run_match_dask(
            args.bots,
            args.dask,
            games=args.games,
            seed=seed,
            rules=rules,
            tls=args.dask_tls,
            progress=progress if args.progress else None,
            timeout=args.dask_timeout,
        )
    except (BotNotFound, ValueError, MatchDaskError, ClusterError, CertsError, OSError) as e:
        print(f"okgin match: {e}", file=sys.stderr)
        return 2
    return _report(args, result)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
