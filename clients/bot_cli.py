"""``okgin bot NAME|path/to/file.py:Class --connect tcp://HOST:PORT``: a bot against a referee.

Sits down at a named table (``--table``), in the quick-match queue (default), or on a
reserved seat (``--token``), and plays ``--games`` games with the SDK's blocking runner
(:func:`clients.sdk.run_bot`). ``--games 0`` plays until the referee says ``shutdown``:
with the token a tournament organiser handed out and the tournament's gateway as
``--connect``, that makes the bot a remote tournament participant, seated game after game
(docs/tournaments.md). Launchers that created several reserved tables give a
``--plan`` file instead: a JSON list of ``{"token": ..., "seed": ...}``, played in order,
one fresh bot (seeded) per entry; this is how ``okgin match --via-referee`` puts the same
bot, with the same seeds as in-process, on every seat it needs.

Exit status: 0 done, 1 refused or connection lost, 2 bad arguments, 3 another process
resumed this session with the same token (``session_taken``: the bot stops rather than
take the seat back).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from okgin import RuleError, RuleSet, env
from okgin.endpoint import endpoint_arg
from okgin.launch import add_rule_flag

from .bots import BUILTIN_BOTS, BotNotFound, bot_class, get_bot
from .sdk import ConnectionLost, RefereeError, SDKError, SessionTaken, play_reserved, run_bot
from .sdk.client import DEFAULT_ENDPOINT

EXIT_SESSION_TAKEN = 3  # exit status when another connection took the session (session_taken)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="okgin bot",
        description="Run a bot (built-in or your own class) against a referee over the network.",
        epilog=(f"BOT is a built-in name ({', '.join(BUILTIN_BOTS)}), package.module:Class or path/to/file.py:Class. "
                "A remote tournament participant connects to the tournament's gateway with the organiser's "
                "token and plays every game it is given until the tournament is over: "
                "okgin bot NAME --connect tcp://GATEWAY:PORT --token TOKEN --games 0"),
    )
    p.add_argument("bot", metavar="BOT")
    p.add_argument("--connect", default=DEFAULT_ENDPOINT, metavar="ENDPOINT", type=endpoint_arg,
                   help="referee endpoint, HOST:PORT or tcp://HOST:PORT (default %(default)s)")
    p.add_argument("--table", help="sit at this named table (created if new); default: the quick-match queue")
    p.add_argument("--seat", type=int, help="with --table: the seat wanted")
    p.add_argument("--name", help="display name (default: the bot's name)")
    p.add_argument(
        "--games",
        type=int,
        default=1,
        help="games to play (default 1; further games by rematch, requeue, or with --token the next seat a "
        "tournament gateway gives; 0 = no limit: play until the referee or gateway says shutdown)",
    )
    p.add_argument("--seed", default="0", help="bot seed; game k gets SEED/k (default 0)")
    p.add_argument(
        "--variant",
        choices=["oklahoma", "box"],
        help="for the queue (default oklahoma) or a new table; an existing table's is kept",
    )
    add_rule_flag(p, help="a rule option (repeatable)")
    p.add_argument(
        "--token",
        default=env.get("OKGIN_TOKEN"),
        help="a reserved seat token (one game), or a tournament gateway token with --games 0 (every game of the "
        "tournament); default $OKGIN_TOKEN, which is how a tournament passes it (a command line is readable by "
        "every local user, the environment is not)",
    )
    p.add_argument(
        "--token-file", type=Path, metavar="FILE", help="read the token from this file's first line instead (keep it mode 0600)"
    )
    p.add_argument("--plan", type=Path, help="JSON list of {token, seed}: reserved seats played in order")
    p.add_argument("--no-thread", action="store_true", help="run the bot on the socket's thread (no heartbeats while it thinks)")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    return p


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    try:
        cls = bot_class(args.bot)
        rules = RuleSet(variant=args.variant or "oklahoma").with_assignments(args.rule) if args.rule else None
    except (BotNotFound, RuleError) as e:
        print(f"okgin bot: {e}", file=sys.stderr)
        return 2
    name = args.name or getattr(cls, "name", None) or cls.__name__
    if name == "bot":
        name = cls.__name__
    threaded = not args.no_thread
    if args.token_file is not None:
        try:
            args.token = args.token_file.read_text(encoding="utf-8").strip().splitlines()[0].strip()
        except (OSError, UnicodeDecodeError, IndexError) as e:
            print(
                f"okgin bot: cannot read a token from {args.token_file}: {getattr(e, 'strerror', None) or 'empty'}",
                file=sys.stderr,
            )
            return 2
    try:
        if args.plan is not None:
            plan = json.loads(args.plan.read_text())
            seats = [(str(e["token"]), get_bot(args.bot, e.get("seed"))) for e in plan]
            ends = play_reserved(args.connect, seats, name=name, threaded=threaded)
        else:
            counter = iter(range(10**9))
            ends = run_bot(
                lambda: get_bot(args.bot, f"{args.seed}/{next(counter)}"),
                args.connect,
                name=name,
                table=args.table,
                seat=args.seat,
                variant=args.variant,
                rules=rules,
                games=args.games,
                token=args.token,
                threaded=threaded,
            )
    except RefereeError as e:
        print(f"okgin bot: the referee refused: {e.name} ({e.code}): {e.message}", file=sys.stderr)
        return 1
    except SessionTaken as e:
        # Another process resumed this session with the same token; resuming would take
        # it back, and that one would do the same (protocol.md §10.1): stop, status 3.
        print(f"okgin bot: another connection took this session (same token); stopping: {e.message}", file=sys.stderr)
        return EXIT_SESSION_TAKEN
    except ConnectionLost as e:
        print(f"okgin bot: connection lost: {e}", file=sys.stderr)
        return 1
    except SDKError as e:
        print(f"okgin bot: {e}", file=sys.stderr)
        return 1
    if not args.quiet:
        for end in ends:
            me = end.view.seat if end.view is not None else None
            verdict = "won" if end.winner is not None and end.winner == me else "lost" if end.winner is not None else "no winner"
            print(f"{end.table} game {end.game}: {verdict} ({end.termination}), scores {end.final.get('scores')}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
