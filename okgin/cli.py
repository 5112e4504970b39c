"""The ``okgin`` command: one entry point, subcommands loaded lazily.

Why lazy: ``okgin`` (the pure engine) must not import ``referee``, ``clients`` or ``competition``
(GUIDE §1). The dispatcher names each subcommand's module as a string and imports it only
when that subcommand runs; every module exposes ``main(argv: list[str]) -> int`` and
builds its own ``argparse`` parser (``prog="okgin NAME"``), so ``okgin NAME --help``
works everywhere and a missing optional part fails with a clear message, not at import.
"""

from __future__ import annotations

import importlib
import sys

__all__ = ["COMMANDS", "SIGPIPE_STATUS", "broken_pipe", "main", "usage"]

# name: (module, one-line help). Order is the order of `okgin --help`.
COMMANDS: dict[str, tuple[str, str]] = {
    "play": ("clients.tui.play_cli", "play in the terminal against built-in bots (referee embedded)"),
    "tui": ("clients.tui.cli", "join a referee over the network in the terminal UI"),
    "watch": ("clients.tui.watch_cli", "spectate a table in the terminal UI"),
    "replay": ("", "step through a journal in the TUI, or --check it against the engine"),
    "serve": ("clients.tui.serve_cli", "serve the terminal UI to web browsers (loopback only unless --host)"),
    "stats": ("clients.tui.stats_cli", "your statistics: games and hands won per opponent, gins, undercuts, streaks"),
    "referee": ("referee.cli", "run a referee: the server that owns every game"),
    "bot": ("clients.bot_cli", "run a bot (built-in or your own file) against a referee"),
    "match": ("clients.match_cli", "play bots against each other with duplicate deals"),
    "conformance": ("competition.conformance.cli", "check that a bot in any language speaks the protocol"),
    "tournament": ("competition.tournament.cli", "run a tournament: round robin, gauntlet, box, SPRT"),
    "cluster": ("competition.cluster.cli", "Dask cluster helpers: TLS certificates for the scheduler and workers"),
    "eval": ("clients.eval_cli", "evaluate an agent by okgin's protocol: fixed deals, beside the reference agents"),
    "mcp": ("clients.mcp.cli", "seat a language-model agent at a referee's table over MCP"),
    "arena": ("arena.cli", "run the arena (a standing rated place to play), or manage its accounts and ratings"),
    "corpus": ("clients.corpus_cli", "write a dataset of decisions (self-play or finished games) for research"),
    "rules": ("okgin.rules_cli", "list the rule options and their defaults"),
}


def _module_for(name: str, argv: list[str]) -> str:
    if name == "replay":
        # The check is the referee's (it knows journals); viewing is the TUI's.
        return "referee.replay" if "--check" in argv else "clients.tui.replay_cli"
    return COMMANDS[name][0]


def usage() -> str:
    width = max(len(n) for n in COMMANDS)
    lines = ["usage: okgin COMMAND [ARGS...]", "", "Oklahoma Gin and Gin in the Box.", "", "commands:"]
    lines += [f"  {n.ljust(width)}  {h}" for n, (_, h) in COMMANDS.items()]
    lines += ["", "Run 'okgin COMMAND --help' for a command's options. Start with: okgin play"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(usage())
        return 0
    if args[0] in ("-V", "--version"):
        from . import __version__

        print(f"okgin {__version__}")
        return 0
    name, rest = args[0], args[1:]
    if name not in COMMANDS:
        print(f"okgin: unknown command {name!r}\n\n{usage()}", file=sys.stderr)
        return 2
    module_name = _module_for(name, rest)
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        if e.name and module_name.startswith(e.name):
            print(f"okgin {name}: not available in this installation ({module_name} is missing)", file=sys.stderr)
            return 2
        raise
    try:
        code = int(module.main(rest) or 0)
        sys.stdout.flush()  # a pipe closed early shows here, not at exit, where it cannot be caught
        return code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return broken_pipe()


SIGPIPE_STATUS = 128 + 13  # what a shell reports for a writer killed by SIGPIPE (`seq 1e9 | head`)


def broken_pipe() -> int:
    """The reader of our stdout went away (``okgin ... | head``): stop writing, quietly.

    Python's recommended handling (docs: signal, "Note on SIGPIPE"): point stdout at
    devnull, so the flush at exit raises nothing and prints no "Exception ignored"; then
    exit with 141, the status a shell gives a writer ended by SIGPIPE (so ``set -o pipefail``
    sees the output was cut short, as with any Unix tool).
    """
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no real stdout file descriptor (captured in tests)
        pass
    return SIGPIPE_STATUS


if __name__ == "__main__":
    sys.exit(main())
