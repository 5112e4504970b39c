"""``okgin rules``: the rule options, their defaults and where docs/rules.md defines them."""

from __future__ import annotations

import argparse
import json
from dataclasses import fields

from .errors import RuleError
from .launch import add_rule_flag
from .rules import PRESETS, RuleSet, preset

__all__ = ["WHERE", "main"]

WHERE = {
    "variant": "§3 oklahoma (2 players), §4 box (3 players)",
    "knock_limit": "§3.1 'upcard' or 0-10 (0 = gin only); default: upcard (oklahoma), 10 (box)",
    "ace_upcard_gin_only": "§3.1 with an ace upcard only gin may end the hand",
    "spade_upcard_doubles": "§3.1 with a spade upcard the hand's points are doubled",
    "allow_discard_of_taken_card": "§3.3 may a card taken from the discard pile be thrown back the same turn",
    "big_gin": "§3.4 11 melded cards may knock without discarding",
    "big_gin_bonus": "§3.4 bonus for big gin",
    "gin_bonus": "§3.5 bonus for gin",
    "undercut_bonus": "§3.5 bonus for an undercut",
    "tie_is_undercut": "§3.5 a deadwood tie is an undercut (off: it scores nothing)",
    "target_score": "§3.7 the score that wins the game",
    "classic_bonuses": "§3.7 game, box and shutout bonuses, reported beside plain scores",
    "max_pile_draws": "§3.6.2 1-1000; after this many draws from the discard pile the next discard draws the hand",
    "max_hands": "§3.7.1 0-10000 (0 = no limit); the game ends after this many hands, the higher score winning "
                 "(tournaments and okgin match: 100)",
}


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="okgin rules", description="List the rule options (use them as --rule NAME=VALUE).")
    p.add_argument("--variant", choices=["oklahoma", "box"], default="oklahoma")
    p.add_argument("--preset", metavar="NAME", help="start from a named preset: "
                   + "; ".join(f"{n}: {pr.summary}" for n, pr in PRESETS.items()))
    add_rule_flag(p, help="show the rules with these changes")
    p.add_argument("--json", action="store_true", help="print the rule set as JSON")
    a = p.parse_args(argv)
    try:
        base = preset(a.preset).apply(a.variant) if a.preset else RuleSet(variant=a.variant)
        rules = base.with_assignments(a.rule)
    except RuleError as e:  # a bad --rule is a usage error, not a traceback
        p.error(str(e))
    if a.json:
        print(json.dumps(rules.to_dict(), indent=2))
        return 0
    d = rules.to_dict()
    for f in fields(RuleSet):
        print(f"{f.name:28} {d.get(f.name, getattr(rules, f.name))!s:8}  {WHERE.get(f.name, '')}")
    if not a.preset:
        print("\npresets (--preset NAME):")
        for n, pr in PRESETS.items():
            print(f"  {n:18} {pr.summary}")
    return 0
