"""``okgin stats``: the statistics the TUI keeps of your games on this machine
(clients/tui/stats.py), printed; ``S`` shows the same at the table."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="okgin stats",
        description="Your games played in okgin's terminal UI (okgin play, okgin tui, the browser): games won and lost, "
        "streaks, hands won, gins, undercuts and points per hand, for each game and opponent. Kept on this machine in "
        "$XDG_STATE_HOME/okgin/stats.json (mode 0600); watching and replays are not counted. S at the table shows them.")
    p.add_argument("--json", action="store_true", help="print the records as JSON")
    p.add_argument("--file", metavar="PATH", help="read this statistics file instead")
    return p


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    from rich.console import Console

    from .screens.stats import LEGEND, stats_headline, stats_table, variants_line
    from .stats import StatsStore

    store = StatsStore(Path(args.file)) if args.file else StatsStore()
    stats, notice = store.load()
    if notice:
        print(f"okgin stats: {notice}", file=sys.stderr)
    if args.json:
        records = [{**asdict(r), "opponents": list(r.opponents), "average_points": round(r.average_points, 3)}
                   for r in stats.sorted_records()]
        print(json.dumps({"streak": stats.streak, "best_streak": stats.best_streak, "records": records}, indent=1))
        return 0
    console = Console(highlight=False)
    console.print(stats_headline(stats))
    if line := variants_line(stats):
        console.print(line)
    if stats.records:
        console.print(stats_table(stats))
        console.print(LEGEND, style="dim")
    console.print(f"Kept in {store.path}", style="dim")
    return 0
