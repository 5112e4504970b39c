"""``okgin play``: one command to play in the terminal against the built-in bots.

Starts an embedded referee on loopback (port chosen by the OS), the bot(s) — the
strongest available by default, two for Gin in the Box — and the TUI, which joins the
referee like any network client. Quitting the TUI stops everything.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from okgin import RuleError, RuleSet
from okgin.rules import HOUSE_RULES, preset

from .cli import add_display_flags, add_rule_flags, default_name, theme_error
from .house import DEFAULT_ADVICE_WINDOW, DEFAULT_PACE
from .options import options_from_env

if TYPE_CHECKING:
    from .app import OkginApp
    from .house import House


def _levels_epilog() -> str:
    """The graded opponents, weakest first, with their measured strength."""
    from clients.bots import LEVELS

    rows = [f"  {name:<9} {elo:>14}  {what}" for name, what, elo in LEVELS]
    return ("levels for --bot, weakest first (Elo against simple, 95% interval: bench/strength.md):\n"
            + "\n".join(rows))


#: Seconds a discard waits before it goes, against the bots (``u`` takes it back).
DEFAULT_UNDO_S = 2.0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="okgin play",
        description="Play Oklahoma Gin (or Gin in the Box) in the terminal against the built-in bots. "
        "Keys are shown at the bottom of the screen; press ? for the rules.",
        epilog=_levels_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--bot", action="append", metavar="NAME", help="opponent: a level below, or any built-in bot (random, "
                   "simple, eaai-simple, strong, strong-v1; default: the strongest installed); give it twice for Gin in "
                   "the Box to choose both")
    p.add_argument("--variant", choices=("oklahoma", "box"), default="oklahoma",
                   help="oklahoma: 2 players (default); box: 3 players")
    add_rule_flags(p)
    p.add_argument("--name", default=None, help="your name at the table (default: your login name)")
    p.add_argument("--seed", help="deal seed (integer or text), to replay the same deals")
    p.add_argument("--journal-dir", metavar="DIR", help="keep the game's journal here (then: okgin replay FILE)")
    p.add_argument("--pace", type=float, default=DEFAULT_PACE, metavar="SECONDS",
                   help=f"Gin in the Box: the bots' pause before each move of a hand you sit out, so you can follow it "
                   f"(default {DEFAULT_PACE:g}; 0: as fast as they play)")
    p.add_argument("--advice-window", type=float, default=DEFAULT_ADVICE_WINDOW, metavar="SECONDS",
                   help="Gin in the Box: how long your captain's move waits for your advice when you sit out, "
                   f"counted down on the table; your advice cuts it short (default {DEFAULT_ADVICE_WINDOW:g}, at most 120)")
    p.add_argument("--auto-continue", type=float, default=None, metavar="SECONDS",
                   help="close each hand's summary by itself after SECONDS (default: it waits for a key)")
    p.add_argument("--undo", type=float, default=DEFAULT_UNDO_S, metavar="SECONDS",
                   help=f"hold each discard SECONDS before it is sent, u takes it back (default {DEFAULT_UNDO_S:g}; "
                   "0: sent at once). The clock runs meanwhile")
    p.add_argument("--confirm-discards", action="store_true", help="ask before every discard")
    add_display_flags(p)
    return p


def house_app(house: House, **app_args: Any) -> OkginApp:
    """The TUI at a started house's table: the human's reserved seat, the bots paced by
    the app, and the local quit dialog (resign, new game, quit: issue 28 item 1)."""
    from .app import OkginApp
    from .model import CONNECTING, TableState
    from .net import NetworkBackend, Seating

    assert house.endpoint is not None
    backend = NetworkBackend(house.endpoint, house.human, Seating(mode="token"), token=house.human_token)
    app = OkginApp(backend, state=TableState(connection=CONNECTING, notice="Starting the game…"), **app_args)
    app.local_game, app.local_journal = True, house.journal_dir is not None
    app.ready_hook = house.pacing.set_ready
    return app


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    if err := theme_error(args.theme):
        print(f"okgin play: {err}", file=sys.stderr)
        return 2
    from clients.bots import BotNotFound

    from .house import House, Pacing, best_available_bot

    for label, v, most in (("--pace", args.pace, 600), ("--advice-window", args.advice_window, 120),
                           ("--auto-continue", args.auto_continue, 600), ("--undo", args.undo, 600)):
        if v is not None and not 0 <= v <= most:
            print(f"okgin play: {label} takes 0-{most} seconds, not {v:g}", file=sys.stderr)
            return 2
    try:
        rules = preset(args.preset).apply(args.variant) if args.preset else RuleSet(variant=args.variant)
        for flag in args.house_rules or ():
            opts = dict(HOUSE_RULES[flag][0])
            if rules.variant == "box":
                opts.pop("knock_limit", None)  # docs/rules.md §4: the box game knocks at 10 anyway
            rules = rules.with_options(**opts)
        rules = rules.with_assignments(args.rule)
    except RuleError as e:
        print(f"okgin play: {e}", file=sys.stderr)
        return 2
    need = rules.num_players - 1
    bots = list(args.bot or [])
    try:
        if not bots:
            bots = [best_available_bot()]
    except RuntimeError as e:
        print(f"okgin play: {e}", file=sys.stderr)
        return 2
    if len(bots) == 1:
        bots = bots * need
    if len(bots) != need:
        print(f"okgin play: {rules.variant} is played against {need} bot(s); --bot was given {len(bots)} times", file=sys.stderr)
        return 2
    seed: int | str | None = None
    if args.seed is not None:
        seed = int(args.seed) if args.seed.lstrip("-").isdigit() else args.seed
    name = (args.name or default_name())[:40]
    house = House(rules=rules, bots=bots, human=name, seed=seed, journal_dir=args.journal_dir,
                  pacing=Pacing(pace=args.pace, advice_window=args.advice_window))
    house.pacing.set_ready(False)  # until the table is on screen (the app's ready_hook opens it)
    try:
        house.start()
    except (BotNotFound, ValueError, RuntimeError) as e:
        print(f"okgin play: {e}", file=sys.stderr)
        house.stop(2)
        return 2
    try:
        app = house_app(house, options=options_from_env(args.ascii, args.four_colour), theme=args.theme)
        app.auto_continue = args.auto_continue
        app.undo_seconds, app.confirm_discards = args.undo, args.confirm_discards
        app.pace = args.pace if rules.variant == "box" else None
        code = app.run() or 0
    finally:
        house.stop(3)
    for path in house.journals():
        print(f"Journal: {path}  (step through it with: okgin replay {path})")
    return code
