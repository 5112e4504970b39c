"""``okgin conformance``: does a bot, in any language, speak protocol v1 correctly?

    okgin conformance [--variant oklahoma|box|both] [--games N] -- COMMAND ARGS...

The kit starts a referee on loopback, then runs COMMAND once per game as a player with
a reserved seat, against built-in bots, and reports pass or fail per protocol feature.
In COMMAND, ``{endpoint}``, ``{table}``, ``{name}``, ``{game}``, ``{seat}`` and
``{variant}`` are replaced; the same values are in the environment as ``OKGIN_ENDPOINT``,
``OKGIN_TABLE``, ``OKGIN_NAME``, ``OKGIN_SEAT``, and the seat token as ``OKGIN_TOKEN``. A
``{token}`` placeholder still works for a bot that can only take its token as an argument,
with a warning: a command line is readable by every local user. With ``--arena`` the bot
gets ``OKGIN_ARENA``, ``OKGIN_ACCOUNT`` and ``OKGIN_KEY_FILE`` instead (``{arena}``,
``{account}``, ``{key_file}``): the kit's stand-in arena checks its handshake and hands it
its table (competition/conformance/arenadesk.py). The bot must connect
to the endpoint, say ``hello`` with the token (that seats it), play the game and exit
with status 0 after ``game_end``. Exit status: 0 all required features passed, 1 some
failed, 2 the kit could not run.
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import sys

from okgin import RuleError, RuleSet
from okgin.launch import add_rule_flag

from .checks import judge
from .report import dump_json, text_report
from .runner import Kit, KitConfig, KitError, remove_work_dir

TOKEN_PLACEHOLDER = "{token}"

EPILOG = """\
the bot's side: connect a DEALER to {endpoint} (or $OKGIN_ENDPOINT), say hello with the
token in $OKGIN_TOKEN (that seats it at the game's table), play the game, and
exit with status 0 after game_end. The kit's exit status: 0 every required feature
passed, 1 something failed (the report names the first offending message), 2 the kit
could not run.

examples:
  okgin conformance -- ./clients/c/build/okgin-bot --connect {endpoint}
  okgin conformance --variant box --games 5 -- node clients/js/src/bot.js --connect {endpoint}
  okgin conformance -- python3 mybot.py          # reads OKGIN_ENDPOINT and OKGIN_TOKEN
  okgin conformance --arena -- ./clients/c/build/okgin-bot --variant {variant}
  okgin conformance --arena -- okgin bot simple --arena {arena} --account {account} --key-file {key_file} --variant {variant}

probes (on by default; --no-probes turns them off):
  idle wait     the first game of each variant starts 3 heartbeats after the bot sat down
  illegal move  one of the bot's acts is relayed as an illegal action: it must recover
  silent drop   the bot's connection goes silent both ways: it must reconnect with its token
"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="okgin conformance",
        description="Check that a bot in any language speaks the okgin protocol: runs it against built-in bots "
        "through a referee on loopback and reports pass/fail per protocol feature.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--variant", choices=("oklahoma", "box", "both"), default="both",
                   help="which variant(s) to play (default both)")
    p.add_argument("--games", type=int, default=20, help="games of each variant (default %(default)s)")
    p.add_argument("--seed", type=int, default=1, help="base seed of the deals (default %(default)s)")
    p.add_argument("--opponent", default="simple", help="built-in bot to play against (default %(default)s)")
    p.add_argument("--opponent-command", help="run opponents with this command instead (placeholders as for COMMAND)")
    add_rule_flag(p, help="a rule option for every table (repeatable; see 'okgin rules')")
    p.add_argument("--name", default="bot-under-test", help="the name {name} stands for (default %(default)s)")
    p.add_argument("--jobs", type=int, default=2, help="games played at the same time (default %(default)s)")
    p.add_argument("--heartbeat-ms", type=int, default=1000, help="the referee's heartbeat interval (default %(default)s)")
    p.add_argument("--liveness", type=int, default=4, help="beats missed before a peer is gone (default %(default)s)")
    p.add_argument("--move-ms", type=int, default=10_000, help="time limit per move (default %(default)s)")
    p.add_argument("--game-timeout", type=float, default=120.0,
                   help="seconds before a game counts as stuck (default %(default)s)")
    p.add_argument("--disconnect-grace-ms", type=int, default=20_000,
                   help="how long the referee holds a silent seat (default %(default)s)")
    p.add_argument("--exit-timeout", type=float, default=10.0,
                   help="seconds the bot has to exit after game_end (default %(default)s)")
    p.add_argument("--no-probes", action="store_true", help="no idle wait, illegal-move or silent-drop probes")
    p.add_argument("--arena", action="store_true",
                   help="check the arena handshake too (protocol 1.6): each game's bot gets OKGIN_ARENA, OKGIN_ACCOUNT and "
                   "OKGIN_KEY_FILE (placeholders {arena} {account} {key_file} {variant}) instead of an endpoint and a "
                   "token, and must hello there with the account and key, seek, and play the game_ready it is given")
    p.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    p.add_argument("--keep", metavar="DIR", help="keep logs and journals in DIR (default: a temporary directory, removed)")
    p.add_argument("-v", "--verbose", action="store_true", help="one line per game as it ends")
    p.add_argument("command", nargs=argparse.REMAINDER, help="the bot's command, after --")
    return p


def main(argv: list[str]) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        parser.error("give the bot's command after --, e.g. okgin conformance -- ./mybot --connect {endpoint}")
    if args.games < 1 or args.jobs < 1 or args.heartbeat_ms < 10 or args.liveness < 1:
        parser.error("--games and --jobs must be at least 1, --heartbeat-ms at least 10, --liveness at least 1")
    if not args.no_probes and 0 < args.move_ms < args.heartbeat_ms * args.liveness + 2000:
        parser.error(
            f"--move-ms {args.move_ms} is too short for the silent-drop probe: the bot needs --liveness x --heartbeat-ms "
            f"({args.liveness * args.heartbeat_ms} ms) to notice the silence, and its clock runs meanwhile; give at least "
            f"{args.heartbeat_ms * args.liveness + 2000}"
        )
    for where, words in (("COMMAND", command), ("--opponent-command", shlex.split(args.opponent_command or ""))):
        if any(TOKEN_PLACEHOLDER in w for w in words):
            print(f"okgin conformance: warning: {{token}} in {where} puts each game's seat token on a command line, which "
                  "every local user can read (/proc/PID/cmdline); the bot can read $OKGIN_TOKEN instead", file=sys.stderr)
    variants = ("oklahoma", "box") if args.variant == "both" else (args.variant,)
    for v in variants:
        try:
            RuleSet(variant=v).with_assignments(args.rule)
        except (RuleError, ValueError) as e:
            parser.error(f"--rule: {e}")
    cfg = KitConfig(
        command=tuple(command),
        variants=variants,
        games=args.games,
        seed=args.seed,
        opponent=args.opponent,
        rules=tuple(args.rule),
        opponent_command=tuple(shlex.split(args.opponent_command)) if args.opponent_command else None,
        name=args.name,
        heartbeat_ms=args.heartbeat_ms,
        liveness=args.liveness,
        move_ms=args.move_ms,
        jobs=args.jobs,
        game_timeout_s=args.game_timeout,
        disconnect_grace_ms=args.disconnect_grace_ms,
        exit_timeout_s=args.exit_timeout,
        probes=not args.no_probes,
        work_dir=args.keep,
        verbose=args.verbose,
        arena=args.arena,
    )
    kit = Kit(cfg)
    try:
        result = asyncio.run(kit.run())
    except KitError as e:
        print(f"okgin conformance: {e}", file=sys.stderr)
        return 2
    finally:
        if not args.keep and kit.result.work_dir:
            remove_work_dir(kit.result.work_dir)
    verdict = judge(result)
    print(text_report(result, verdict))
    if args.json:
        dump_json(args.json, result, verdict)
    return 0 if verdict.passed else 1
