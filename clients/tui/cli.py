"""``okgin tui``: play at a referee over the network in the terminal UI.

``okgin tui --connect tcp://HOST:PORT`` joins the quick-match queue (``--table T`` joins
or creates the named table instead); without ``--connect`` the lobby opens, where the
endpoint, name, game, rules and table are chosen with the keyboard or the mouse.

``okgin tui --arena ENDPOINT --account A --key-file F`` opens an arena's lobby instead
(protocol 1.6): who is online, seeks, challenges, your ratings; each game it finds is
played on the same table screen, then back to the lobby. The key comes from the file
(mode 0600) or ``OKGIN_ARENA_KEY``, never from the command line.
"""

from __future__ import annotations

import argparse
import getpass
import sys
from pathlib import Path

from okgin import RuleError
from okgin.endpoint import endpoint_arg
from okgin.launch import add_rule_flag

from .options import options_from_env

DEFAULT_ENDPOINT = "tcp://127.0.0.1:7117"


def add_display_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--ascii", action="store_true", default=None, help="suits as S H D C and plain lines (also OKGIN_ASCII=1)")
    p.add_argument("--four-colour", "--four-color", action="store_true", default=None, dest="four_colour",
                   help="a different colour for each suit (also OKGIN_FOUR_COLOUR=1)")
    p.add_argument("--theme", help="colour theme, e.g. textual-light, nord, gruvbox (T cycles them while playing)")


def add_rule_flags(p: argparse.ArgumentParser) -> None:
    """``--preset NAME``, one flag per house rule with its line, and ``--rule NAME=VALUE``:
    the same rule options, spelt the same way, for ``okgin play`` and ``okgin tui``
    (the lobby's new-game screen offers them as a choice and check boxes)."""
    from okgin.rules import HOUSE_RULES, PRESETS

    p.add_argument("--preset", metavar="NAME", help="a named set of rules: "
                   + "; ".join(f"{n} ({pr.summary})" for n, pr in PRESETS.items()))
    for flag, (_opts, line) in HOUSE_RULES.items():
        p.add_argument("--" + flag.replace("_", "-"), action="append_const", const=flag, dest="house_rules", help=line)
    add_rule_flag(p, help="any rule option (repeatable; 'okgin rules' lists them)")


def theme_error(name: str | None) -> str | None:
    """A sentence if ``--theme`` names no built-in theme (checked before anything starts)."""
    if not name:
        return None
    from textual.theme import BUILTIN_THEMES

    if name in BUILTIN_THEMES:
        return None
    return f"unknown theme {name!r}; known: {', '.join(sorted(BUILTIN_THEMES))}"


def default_name() -> str:
    try:
        return getpass.getuser()[:40] or "player"
    except Exception:
        return "player"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="okgin tui", description="Play Oklahoma Gin or Gin in the Box at a referee over the network."
    )
    p.add_argument("--connect", metavar="ENDPOINT", type=endpoint_arg,
                   help=f"the referee, e.g. {DEFAULT_ENDPOINT} or 127.0.0.1:7117 (omit to open the lobby)")
    p.add_argument("--name", default=None, help="your display name (default: your login name)")
    p.add_argument("--table", help="join (or create) this named table instead of the quick-match queue")
    p.add_argument("--seat", type=int, help="the seat wanted at --table")
    p.add_argument("--variant", choices=("oklahoma", "box"), default="oklahoma", help="game for quick match or a new table")
    add_rule_flags(p)  # the rules asked for at quick match or a table made by this join
    p.add_argument("--token", help="resume a session (the token printed when you last quit)")
    p.add_argument("--arena", metavar="ENDPOINT", type=endpoint_arg,
                   help="an okgin arena's endpoint: open its lobby (with --account and --key-file) instead of a referee's")
    p.add_argument("--account", help="with --arena: your account's name")
    p.add_argument("--key-file", type=Path, metavar="FILE",
                   help="with --arena: your account's API key, first line of FILE (mode 0600); default $OKGIN_ARENA_KEY")
    p.add_argument("--resume", nargs="?", const=0, type=int, metavar="N",
                   help="resume a saved session (kept in $XDG_STATE_HOME/okgin/sessions.json): the only one, number N, "
                        "or choose one on a list when several are saved")
    add_display_flags(p)
    return p


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    from .app import OkginApp
    from .model import CONNECTING, TableState
    from .net import NetworkBackend
    from .screens.lobby import parse_rules
    from .seating import Seating

    name = args.name or default_name()
    opts = options_from_env(args.ascii, args.four_colour)
    if err := theme_error(args.theme):
        print(f"okgin tui: {err}", file=sys.stderr)
        return 2
    if args.arena is not None:
        return arena_main(args, opts)
    if args.account is not None or args.key_file is not None:
        print("okgin tui: --account and --key-file go with --arena ENDPOINT", file=sys.stderr)
        return 2
    if args.resume is not None:
        picked = _pick_saved(args.resume, interactive=sys.stdin.isatty() and sys.stdout.isatty())
        if picked == "screen":  # several seats saved: choose one on the sessions screen
            app = OkginApp(start="sessions", options=opts, theme=args.theme)
            return _finish(app, app.run())
        if isinstance(picked, int):
            return picked
        args.connect, name, args.table = picked.endpoint, picked.name, picked.table or None
    if not args.connect:
        app = OkginApp(start="lobby", options=opts, lobby={"endpoint": DEFAULT_ENDPOINT, "name": name, "table": args.table or ""},
                       theme=args.theme)
        return _finish(app, app.run())
    try:
        rules = parse_rules(" ".join(args.rule), args.variant, args.preset, tuple(args.house_rules or ()))
    except RuleError as e:
        print(f"okgin tui: {e}", file=sys.stderr)
        return 2
    seating = Seating(mode="join" if args.table else "quick", variant=args.variant, rules=rules, table=args.table, seat=args.seat)
    backend = NetworkBackend(args.connect, name, seating, token=args.token)
    app = OkginApp(backend, state=TableState(connection=CONNECTING, notice=f"Connecting to {args.connect}…"), options=opts,
                   theme=args.theme)
    return _finish(app, app.run())


def arena_main(args: argparse.Namespace, opts: object) -> int:
    """``okgin tui --arena ENDPOINT --account A --key-file F``: the arena's lobby."""
    from clients.sdk.arena import KeyFileError, arena_key

    from .app import OkginApp

    if not args.account:
        print("okgin tui: --arena needs --account NAME", file=sys.stderr)
        return 2
    try:
        key = arena_key(args.key_file)
    except KeyFileError as e:
        print(f"okgin tui: {e}", file=sys.stderr)
        return 2
    app = OkginApp(start="arena", options=opts, theme=args.theme)  # type: ignore[arg-type]
    app.arena_args = {"endpoint": args.arena, "account": args.account, "key": key}
    return app.run() or 0


def _pick_saved(n: int, interactive: bool = False):
    """``--resume [N]``: the saved session to resume, ``"screen"`` to let the person
    choose on :class:`~clients.tui.screens.sessions.SessionsScreen` (several saved, in a
    terminal), or the exit status after printing the list (several saved, no terminal:
    a script reads it and picks N)."""
    from .saved_sessions import SessionStore

    saved = SessionStore().all()
    if not saved:
        print("okgin tui: no saved sessions (a session is saved when you sit down with --connect)", file=sys.stderr)
        return 1
    if n == 0 and len(saved) == 1:
        return saved[0]
    if 1 <= n <= len(saved):
        return saved[n - 1]
    if n == 0 and interactive:
        return "screen"
    print("Saved sessions (newest first):")
    for i, s in enumerate(saved, 1):
        print(f"  {i}. {s.name} at {s.endpoint}, {'table ' + s.table if s.table else 'quick match'}")
    print("Resume one with: okgin tui --resume N")
    return 0 if n == 0 else 2


def _finish(app, code: int | None) -> int:
    """After the UI closes: say how to come back to a game still running (and forget
    the saved seat of a game that is over)."""
    from .net import NetworkBackend

    backend = app.backend
    st = app.state
    if isinstance(backend, NetworkBackend) and backend.token and st.view is not None and not st.spectator:
        if st.game_over:
            backend.forget_session()
        else:
            table = f" --table {backend.seating.table}" if backend.seating.table else ""
            print(
                "You left a game that is still running; your seat is held for a while. To resume, run the same command:\n"
                f"  okgin tui --connect {backend.endpoint} --name {backend.name}{table}   (or: okgin tui --resume)"
            )
    return code or 0
