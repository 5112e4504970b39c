"""``okgin replay FILE``: step through a referee journal in the terminal UI.

(``okgin replay FILE --check`` is the referee's checker, dispatched by ``okgin/cli.py``.)
"""

from __future__ import annotations

import argparse
import sys

from .cli import add_display_flags, theme_error
from .options import options_from_env


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="okgin replay",
        description="Step through a finished game's journal: ←/→ one move, PgUp/PgDn one hand, Home/End, q quits. "
        "Every hand is shown face up. (Add --check to verify the journal against the engine instead.)",
        epilog="okgin replay FILE|DIR... --check exits 0 when every journal agrees with the engine, 1 on a mismatch, "
        "2 when a file cannot be read, 3 when a game is still in progress (no end line yet); the worst wins, 1 before 3.",
    )
    p.add_argument("file", help="a journal written by the referee (JSON Lines, protocol.md §12)")
    add_display_flags(p)
    return p


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    if err := theme_error(args.theme):
        print(f"okgin replay: {err}", file=sys.stderr)
        return 2
    from .app import OkginApp
    from .replay import JournalError, ReplayBackend

    try:
        backend = ReplayBackend(args.file)
    except JournalError as e:
        print(f"okgin replay: {e}", file=sys.stderr)
        return 2
    app = OkginApp(backend, options=options_from_env(args.ascii, args.four_colour), theme=args.theme)
    return app.run() or 0
