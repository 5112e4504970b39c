"""Conformance kit: how long ``okgin conformance`` takes on each example bot.

Builds the four example bots (C, JavaScript, Rust, Java) with their native tools, then
runs the kit on each in turn (``--games N`` of each variant against ``simple``, every
probe on) and prints, per bot: wall seconds, games per second, messages of the bot's
conversation, and the verdict. The kit's own pass/fail is reported, never asserted.
Last line: one JSON object.

    python3 bench/conformance.py              # 20 games of each variant per bot (~3-4 min idle)
    python3 bench/conformance.py --games 5    # quicker
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "conformance"))
from botbuild import LANGUAGES, build  # the tests' builder (not a package)

from okgin.launch import okgin_argv


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--games", type=int, default=20)
    p.add_argument("--jobs", type=int, default=2)
    args = p.parse_args()
    rows = []
    load = os.getloadavg()
    for lang in LANGUAGES:
        bot = build(lang)
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "r.json"
            argv = [*okgin_argv("conformance"), "--games", str(args.games), "--jobs", str(args.jobs),
                    "--json", str(out), "--", *bot.argv("--connect", "{endpoint}")]  # the token: $OKGIN_TOKEN
            t0 = time.perf_counter()
            proc = subprocess.run(argv, capture_output=True, text=True)
            wall = time.perf_counter() - t0
            report: dict[str, Any] = json.loads(out.read_text()) if out.exists() else {"games": [], "passed": False}
        games = len(report["games"])
        msgs = sum(g["messages"] for g in report["games"])
        rows.append({"bot": lang, "games": games, "wall_s": round(wall, 1), "games_per_s": round(games / wall, 2),
                     "bot_messages": msgs, "passed": bool(report["passed"]), "exit": proc.returncode})
    print(
        f"conformance kit, {args.games} games of each variant per bot, --jobs {args.jobs}, load {load[0]:.1f} {load[1]:.1f} "
        f"{load[2]:.1f}"
    )
    print(f"{'bot':6} {'games':>5} {'wall s':>7} {'games/s':>8} {'messages':>9}  verdict")
    for r in rows:
        print(
            f"{r['bot']:6} {r['games']:>5} {r['wall_s']:>7} {r['games_per_s']:>8} {r['bot_messages']:>9}  "
            f"{'PASS' if r['passed'] else 'FAIL'}"
        )
    print(
        json.dumps(
            {
                "bench": "conformance",
                "games_per_variant": args.games,
                "jobs": args.jobs,
                "load": [round(x, 1) for x in load],
                "bots": rows,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
