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

With ``--arena ENDPOINT --account A --key-file F`` the bot plays at an arena instead
(protocol.md §19): it logs in with the account's key (from the 0600 file, or
``OKGIN_ARENA_KEY``; never on the command line), seeks ``--games`` games of
``--variant``/``--clock`` and plays each at the shard the arena names
(:class:`clients.sdk.arena.ArenaClient`), printing the result and the rating change.

Exit status: 0 done, 1 refused or connection lost, 2 bad arguments, 3 another process
resumed this session with the same token (``session_taken``: the bot stops rather than
take the seat back).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from okgin import RuleError, RuleSet, env
from okgin.endpoint import endpoint_arg
from okgin.launch import add_rule_flag

from .bots import BUILTIN_BOTS, BotNotFound, bot_class, get_bot
from .sdk import ConnectionLost, ErrorMessage, RefereeError, SDKError, SessionTaken, Timeout, play_reserved, run_bot
from .sdk.arena import ArenaClient, ArenaGame, KeyFileError, arena_key, describe_refusal
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
    p.add_argument("--connect", default=env.get("OKGIN_ENDPOINT") or DEFAULT_ENDPOINT, metavar="ENDPOINT",
                   type=endpoint_arg, help="referee endpoint, HOST:PORT or tcp://HOST:PORT (default $OKGIN_ENDPOINT, "
                   f"as a tournament or the conformance kit sets it, else {DEFAULT_ENDPOINT})")
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
    a = p.add_argument_group("arena (protocol 1.6): play rated games at an okgin arena instead of a referee")
    a.add_argument("--arena", metavar="ENDPOINT", type=endpoint_arg, help="the arena's endpoint (replaces --connect)")
    a.add_argument("--account", help="with --arena: the account to play as (a bot account: okgin arena account add NAME --bot)")
    a.add_argument("--key-file", type=Path, metavar="FILE",
                   help="with --arena: the account's API key, first line of FILE (mode 0600); default $OKGIN_ARENA_KEY. "
                   "Never give a key on the command line")
    a.add_argument("--clock", metavar="PRESET", help="with --arena: the clock preset to seek (default: the arena's standard)")
    a.add_argument("--unrated", action="store_true", help="with --arena: seek unrated games")
    a.add_argument("--accept-challenges", action="store_true",
                   help="with --arena: accept challenges from other accounts (else they are declined)")
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
    if args.arena is not None:
        return arena_main(args, name, threaded)
    if args.account is not None or args.key_file is not None:
        print("okgin bot: --account and --key-file go with --arena ENDPOINT", file=sys.stderr)
        return 2
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


def arena_main(args: argparse.Namespace, name: str, threaded: bool) -> int:
    """``okgin bot BOT --arena ENDPOINT --account A --key-file F``: seek and play at an arena.

    Every way it can fail ends in one line on stderr and status 1 (2 for arguments):
    the key file, the authentication, a ban, a cooldown, an unreachable arena."""
    if args.account is None:
        print("okgin bot: --arena needs --account NAME", file=sys.stderr)
        return 2
    if args.table is not None or args.token is not None or args.token_file is not None or args.plan is not None:
        print("okgin bot: --arena plays the games the arena pairs: no --table, --token or --plan", file=sys.stderr)
        return 2
    try:
        key = arena_key(args.key_file)
    except KeyFileError as e:
        print(f"okgin bot: {e}", file=sys.stderr)
        return 2
    counter = iter(range(10**9))

    def report(game: ArenaGame) -> None:
        if args.quiet:
            return
        over, ready = game.over, game.ready
        opponents = ", ".join(str(p.get("account")) for p in ready.players if p.get("account") != args.account)
        if over is None:
            print(f"arena game {ready.game} vs {opponents}: no result from the arena", flush=True)
            return
        change = ""
        if over.rating is not None:
            before, after = over.rating.get("before"), over.rating.get("after")
            change = f", rating {before} -> {after}" + (" (provisional)" if over.rating.get("provisional") else "")
        print(f"arena game {ready.game} vs {opponents}: {over.result} ({over.termination}), scores {over.scores}{change}",
              flush=True)

    def on_error(e: ErrorMessage) -> None:
        print(f"okgin bot: refused: {e.name} ({e.code}): {e.message}", file=sys.stderr)

    async def run() -> None:
        arena = ArenaClient(args.arena, args.account, key)
        try:
            await arena.connect()
            await arena.play_games(
                lambda: get_bot(args.bot, f"{args.seed}/{next(counter)}"), args.games, args.variant or "oklahoma", args.clock,
                False if args.unrated else None, accept_challenges=args.accept_challenges, threaded=threaded,
                on_error=on_error, on_game=report,
            )
        finally:
            await arena.close()

    try:
        asyncio.run(run())
    except RefereeError as e:
        print(f"okgin bot: {describe_refusal(e)}", file=sys.stderr)
        return 1
    except Timeout:
        print(f"okgin bot: no arena answered at {args.arena} (is it running, and is this its endpoint?)", file=sys.stderr)
        return 1
    except SessionTaken:
        print(f"okgin bot: another connection logged in as {args.account}; stopping", file=sys.stderr)
        return EXIT_SESSION_TAKEN
    except ConnectionLost as e:
        print(f"okgin bot: lost the arena at {args.arena}: {e}", file=sys.stderr)
        return 1
    except SDKError as e:
        print(f"okgin bot: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
