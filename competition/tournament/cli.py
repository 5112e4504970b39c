"""``okgin tournament``: run a tournament from a TOML file, or print a results file's table.

    okgin tournament CONFIG.toml [--resume] [--concurrency K] [--referees N | --referee-endpoints EP ...]
    okgin tournament CONFIG.toml --dask tcp://HOST:8786 | local [--dask-tls DIR] [--resume]
    okgin tournament report DB [--csv FILE] [--json FILE] [--chart FILE.png|FILE.svg] [--games]
    okgin tournament verify DB [--partial] [--journals DIR] [--nonce NAME=HEX]

Exit status: 0 done, 1 the run stopped with games unplayed (e.g. interrupted), a
participant lost every game to crashes, or ``report --chart`` without matplotlib
(everything else is still written), 2 bad config, results file or arguments, or a
participant failed the preflight (no results file is left), 141 ``report``'s reader closed the pipe early (``| head``;
the files asked for are still written).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from okgin.endpoint import endpoint_arg

from .config import ConfigError, load_config
from .store import ResultsStore, StoreError


def _report_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="okgin tournament report", description="Print a tournament's table from its results file.")
    p.add_argument("db", help="the results file (.sqlite) a run wrote")
    p.add_argument("--csv", metavar="FILE", help="also write the table as CSV")
    p.add_argument("--json", metavar="FILE", help="also write the table, pairs and terminations as JSON")
    p.add_argument("--chart", metavar="FILE",
                   help="also write the ratings chart, PNG or SVG by the extension (needs okgin[charts])")
    p.add_argument("--prior-draws", type=float, help="virtual draws per pair for the ratings (default: as configured)")
    p.add_argument("--anchor", metavar="NAME", help="hold this participant at --anchor-rating (default: mean 0)")
    p.add_argument("--anchor-rating", type=float, default=None)
    p.add_argument("--games", action="store_true", help="also list every game with its termination and reason")
    return p


def _run_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="okgin tournament",
        description="Run a tournament (round robin, gauntlet, 3-player box, SPRT) described by a TOML file; "
        "see docs/tournaments.md. 'okgin tournament report DB' prints a results file's table.",
    )
    p.add_argument("config", help="the tournament file (TOML)")
    p.add_argument("--resume", action="store_true", help="continue the run recorded in the results file")
    p.add_argument("--concurrency", type=int, metavar="K", help="games played at once (default: from the file, else 2)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--referees", type=int, metavar="N", help="start N local referee processes (one per core is a good N)")
    g.add_argument("--referee-endpoints", nargs="+", metavar="EP", type=endpoint_arg,
                   help="use these running referees instead (HOST:PORT or tcp://HOST:PORT)")
    p.add_argument("--db", metavar="PATH", help="the results file (default: from the file, else NAME.sqlite beside it)")
    p.add_argument("--output", metavar="DIR", help="where the CSV, JSON and PNG go (default: beside the results file)")
    p.add_argument("--admin-key", metavar="KEY",
                   help="admin key of remote referees (default: $OKGIN_ADMIN_KEY; prefer it on a shared host: a command line "
                        "is readable by every local user)")
    p.add_argument("--quiet", action="store_true", help="no live progress display (the final table is still printed)")
    p.add_argument("--keep-logs", action="store_true",
                   help="keep every bot's log in NAME-run/logs (by default only those of games that did not end normally)")
    p.add_argument("--dask", metavar="ADDRESS",
                   help="play the games on a Dask cluster: its scheduler (tcp://HOST:8786, or HOST:PORT), or 'local' for a "
                   "LocalCluster on this machine; each worker runs its own referee and the bots (default: [cluster] "
                   "scheduler from the file, else this host's processes); see docs/cluster.md")
    p.add_argument("--dask-tls", metavar="DIR",
                   help="the certificates `okgin cluster certs` wrote, for a TLS cluster (default: [cluster] tls)")
    p.add_argument("--dask-timeout", type=float, metavar="S",
                   help="seconds to reach the scheduler and see a worker (default: [cluster] timeout, else 10)")
    return p


def report_main(argv: list[str]) -> int:
    from okgin.cli import broken_pipe

    from .chart import ChartError, chart_format, write_chart
    from .report import report_from_store

    args = _report_parser().parse_args(argv)
    if args.chart:
        try:
            chart_format(args.chart)
        except ChartError as e:
            print(f"okgin tournament report: {e}", file=sys.stderr)
            return 2
    try:
        store = ResultsStore.open_existing(args.db)
    except StoreError as e:
        print(f"okgin tournament report: {e}", file=sys.stderr)
        return 2
    code = 0
    try:
        rep = report_from_store(store, prior_draws=args.prior_draws, anchor=args.anchor, anchor_rating=args.anchor_rating)
        try:
            print(rep.to_text())
            from .entropy import report_lines
            from .verify import secrecy_lines

            for line in [*secrecy_lines(store), *report_lines(store)]:
                print(line)
            if args.games:
                for gm in store.games():
                    # A game played more than once (a referee or Dask worker lost mid-game) says so.
                    again = f" (attempt {gm.attempts})" if gm.attempts > 1 else ""
                    print(f"  {gm.index:5d} {gm.key:30s} {' v '.join(gm.seats):30s} winner {gm.winner or '-':12s} "
                          f"{gm.termination:10s} {gm.reason}{again}")
            sys.stdout.flush()
        except BrokenPipeError:
            # `report DB --games | head`: the reader has all it wanted; the files asked
            # for are still written.
            code = broken_pipe()
        for path, text in ((args.csv, rep.to_csv()), (args.json, rep.to_json())):
            if path:
                Path(path).parent.mkdir(parents=True, exist_ok=True)
                Path(path).write_text(text, encoding="utf-8")
        if args.chart:
            Path(args.chart).parent.mkdir(parents=True, exist_ok=True)
            try:
                write_chart(rep, args.chart)
            except ChartError as e:
                print(f"okgin tournament report: no chart written: {e}", file=sys.stderr)
                code = code or 1
    finally:
        store.close()
    return code


def main(argv: list[str]) -> int:
    if argv and argv[0] == "report":
        return report_main(argv[1:])
    if argv and argv[0] == "verify":
        from .verify import verify_main

        return verify_main(argv[1:])
    args = _run_parser().parse_args(argv)
    try:
        cfg = load_config(args.config)
    except ConfigError as e:
        print(f"okgin tournament: {e}", file=sys.stderr)
        return 2
    from .runner import RunOptions, run_tournament

    opts = RunOptions(
        resume=args.resume,
        concurrency=args.concurrency,
        referees=args.referees,
        referee_endpoints=tuple(args.referee_endpoints or ()),
        database=args.db,
        output=args.output,
        admin_key=args.admin_key,
        progress=not args.quiet,
        keep_logs=args.keep_logs,
        dask=args.dask or cfg.cluster_scheduler or None,
        dask_tls=args.dask_tls or (str(cfg.resolve_path(cfg.cluster_tls)) if cfg.cluster_tls else None),
        dask_timeout=args.dask_timeout if args.dask_timeout is not None else cfg.cluster_timeout,
    )
    if opts.dask and (opts.referees is not None or opts.referee_endpoints):
        print("okgin tournament: --dask plays every game on a worker's own referee: --referees and "
              "--referee-endpoints do not apply", file=sys.stderr)
        return 2
    if opts.dask_timeout <= 0:
        print("okgin tournament: --dask-timeout must be positive", file=sys.stderr)
        return 2
    if opts.concurrency is not None and opts.concurrency < 1:
        print("okgin tournament: --concurrency must be at least 1", file=sys.stderr)
        return 2
    if opts.referees is not None and opts.referees < 1:
        print("okgin tournament: --referees must be at least 1", file=sys.stderr)
        return 2
    try:
        return run_tournament(cfg, opts)
    except (StoreError, ConfigError) as e:
        print(f"okgin tournament: {e}", file=sys.stderr)
        return 2
