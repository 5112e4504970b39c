"""``okgin watch``: spectate a table in the terminal UI (public feed, or the delayed
full-visibility feed with ``--full`` on tables that offer one)."""

from __future__ import annotations

import argparse
import sys

from okgin import env
from okgin.endpoint import endpoint_arg

from .cli import DEFAULT_ENDPOINT, add_display_flags, default_name, theme_error
from .options import options_from_env


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="okgin watch", description="Watch a table being played (without --table: pick one in the lobby)."
    )
    p.add_argument(
        "--connect",
        metavar="ENDPOINT",
        default=DEFAULT_ENDPOINT,
        type=endpoint_arg,
        help="the referee, HOST:PORT or tcp://HOST:PORT (default %(default)s)",
    )
    p.add_argument("--table", help="the table to watch")
    p.add_argument(
        "--full",
        action="store_true",
        help="the broadcast feed with every card shown, each hand after its end (if the table offers it)",
    )
    p.add_argument(
        "--broadcast-token",
        default=env.get("OKGIN_BROADCAST_TOKEN"),
        help="with --full: the table's broadcast token (default: $OKGIN_BROADCAST_TOKEN)",
    )
    p.add_argument("--name", default=None, help="your display name")
    add_display_flags(p)
    return p


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    if err := theme_error(args.theme):
        print(f"okgin watch: {err}", file=sys.stderr)
        return 2
    from .app import OkginApp
    from .model import CONNECTING, TableState
    from .net import NetworkBackend
    from .seating import Seating

    opts = options_from_env(args.ascii, args.four_colour)
    name = args.name or default_name()
    if not args.table:
        app = OkginApp(start="lobby", options=opts, lobby={"endpoint": args.connect, "name": name}, theme=args.theme)
        return app.run() or 0
    backend = NetworkBackend(
        args.connect, name, Seating(mode="watch", table=args.table, full=args.full, broadcast_token=args.broadcast_token)
    )
    app = OkginApp(
        backend,
        state=TableState(connection=CONNECTING, spectator=True, notice=f"Connecting to {args.connect}…"),
        options=opts,
        theme=args.theme,
    )
    return app.run() or 0
