"""``okgin arena``: the arena server, and its ``account`` and ``ratings`` subcommands.

``okgin arena account ...`` and ``okgin arena ratings ...`` manage the database
(:mod:`arena.accounts`, :mod:`arena.ratings_cli`); anything else (``okgin arena``,
``okgin arena --config arena.toml``) runs the server, ``arena.server.main``. Each part is
imported only when it runs, as ``okgin.cli`` does for its commands.
"""

from __future__ import annotations

import importlib
import sys

__all__ = ["SUBCOMMANDS", "main"]

#: ``okgin arena NAME ...`` -> the module whose ``main(argv)`` runs it (or ``module:function``).
#: Anything else is the server's.
SUBCOMMANDS = {"account": "arena.accounts", "ratings": "arena.ratings_cli", "submit": "arena.submissions",
               "submissions": "arena.submissions:main_list", "event": "arena.events", "shard": "arena.joinshard"}
SERVER = "arena.server"

USAGE = """usage: okgin arena [--config arena.toml] [SERVER OPTIONS]   run the arena (okgin arena --help)
       okgin arena account add|list|revoke|rotate|ban|unban ...
       okgin arena ratings [--variant V] [--rebuild] [--history ACCOUNT]
       okgin arena submit ACCOUNT DIR --command "..."              store a hosted bot
       okgin arena submissions [--status S] [--account A]          the hosted bots' queue
       okgin arena event add|list|show ...                         events: round robins and gauntlets
       okgin arena shard --join FRONT --join-key-file F --bind EP   a shard that joins a running arena"""


def main(argv: list[str]) -> int:
    if argv and argv[0] in SUBCOMMANDS:
        module, _, func = SUBCOMMANDS[argv[0]].partition(":")
        return int(getattr(importlib.import_module(module), func or "main")(argv[1:]) or 0)
    if argv[:1] == ["help"]:
        print(USAGE)
        return 0
    try:
        server = importlib.import_module(SERVER)
    except ModuleNotFoundError as e:
        if e.name != SERVER:
            raise
        print(f"okgin arena: the server is not in this installation yet\n{USAGE}", file=sys.stderr)
        return 2
    return int(server.main(argv) or 0)
