"""Play the games of the arena's order test (tests/arena/test_arena_order.py) and write their
outcomes to tests/arena/order_games.json.

Why a file: the order test needs hundreds of games between the built-in bots ``random``,
``simple`` and ``strong``, and ``strong`` costs seconds a game, so the fast test rates stored
outcomes (what an arena's store would hold) and ``OKGIN_SLOW=1`` replays a sample of them to
check the file still says what the bots do. The games are ``okgin match``'s
(:func:`clients.match.play_game`: in-process, a duplicate deal per pair, every seating),
deal seeds from the match seed ``arena-order``.

    python tests/arena/make_order_games.py --pairs 100 --box 40 --jobs 2
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import signal
import sys
from pathlib import Path

from clients.match import play_game
from okgin.rules import RuleSet

SEED = "arena-order"
OUT = Path(__file__).with_name("order_games.json")
PAIRS = (("random", "simple"), ("random", "strong"), ("simple", "strong"))
BOX = ("random", "simple", "strong")
ROTATIONS = ((0, 1, 2), (1, 2, 0), (2, 0, 1))


def one(job: tuple[str, int, int]) -> dict[str, object]:
    """Job (kind, deal, seating index) -> the game's outcome in seat order, bots by name."""
    kind, deal, k = job
    if kind == "box":
        bots, seating, rules = list(BOX), ROTATIONS[k], RuleSet(variant="box")
    else:
        bots, seating, rules = list(PAIRS[int(kind)]), ((0, 1), (1, 0))[k], RuleSet()
    g = play_game(bots, rules, f"{SEED}-{kind}", deal, seating)
    seats = [bots[i] for i in seating]
    return {
        "variant": rules.variant, "deal": deal, "seats": seats,
        "winner": None if g.winner is None else seating.index(g.winner),
        "scores": [g.scores[i] for i in seating],
        "at_fault": None if g.at_fault is None else seating.index(g.at_fault),
        "termination": g.termination,
    }


def jobs(pairs: int, box: int) -> list[tuple[str, int, int]]:
    """Deals in play order: deal d of each pair in both seatings, the three pairs interleaved,
    and deal d of the Box in its three rotations; then deal d + 1. A file cut short (``done``
    below ``len(jobs)``) is a prefix of this, balanced between the pairs."""
    out: list[tuple[str, int, int]] = []
    for d in range(max(pairs, box)):
        if d < pairs:
            out += [(str(p), d, k) for p in range(len(PAIRS)) for k in (0, 1)]
        if d < box:
            out += [("box", d, k) for k in range(3)]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=100, help="deals per pair of bots (two games each)")
    ap.add_argument("--box", type=int, default=40, help="deals of the Box (three games each)")
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    todo = jobs(a.pairs, a.box)
    games: list[dict[str, object]] = []

    def save() -> None:
        tmp = OUT.with_suffix(".tmp")
        tmp.write_text(json.dumps({"seed": SEED, "pairs": a.pairs, "box": a.box, "done": len(games), "games": games})
                       .replace("}, {", "},\n {") + "\n")
        tmp.replace(OUT)

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # SystemExit: the finally below saves what is done
    try:
        with multiprocessing.get_context("spawn").Pool(a.jobs) as pool:
            for g in pool.imap(one, todo, chunksize=1):
                games.append(g)
                if len(games) % 6 == 0:
                    save()
    finally:
        save()
        print(f"{len(games)} of {len(todo)} games -> {OUT}")


if __name__ == "__main__":
    main()
