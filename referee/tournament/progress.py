"""The live progress line: a bar, games per second, ETA and the running standings.

On a terminal it redraws one line in place (at most a few times a second, so a fast
run does not spend its time printing); elsewhere (CI logs, a pipe) it prints a plain
line every 10% of the run or every 30 seconds. The standings are the current Elo
estimates (see :mod:`.ratings`), best first.
"""

from __future__ import annotations

import math
import shutil
import sys
import time
from collections.abc import Sequence
from typing import TextIO

from .ratings import RatingError, game_pairs, rate
from .store import GameResult


def fmt_duration(s: float) -> str:
    if not math.isfinite(s) or s < 0:
        return "--:--"
    s = round(s)
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m:02d}:{sec:02d}"


class Progress:
    def __init__(self, total: int, names: Sequence[str], games: Sequence[GameResult], enabled: bool = True,
                 out: TextIO | None = None, prior_draws: float = 1.0) -> None:
        self.total = total
        self.names = list(names)
        self.pairs = [p for g in games for p in game_pairs(g.seats, g.scores, g.winner, g.culprit)]
        self.wins = {n: 0 for n in names}
        self.played = {n: 0 for n in names}
        for g in games:
            self._count(g)
        self.done = len(games)
        self.start_done = self.done
        self.t0 = time.monotonic()
        self.enabled = enabled
        self.out = out or sys.stderr
        self.tty = self.out.isatty()
        self.last_draw = 0.0
        self.last_plain_pct = -1
        self.prior = prior_draws
        self.running = 0
        self.note = ""

    def _count(self, g: GameResult) -> None:
        for s in g.seats:
            self.played[s] += 1
        if g.winner is not None:
            self.wins[g.winner] += 1

    def add(self, g: GameResult) -> None:
        self.done += 1
        self._count(g)
        self.pairs.extend(game_pairs(g.seats, g.scores, g.winner, g.culprit))
        self.draw()

    def line(self, width: int = 100) -> str:
        elapsed = time.monotonic() - self.t0
        new = self.done - self.start_done
        rate_gs = new / elapsed if elapsed > 0 else 0.0
        left = max(0, self.total - self.done)
        eta = left / rate_gs if rate_gs > 0 else math.inf
        pct = self.done / self.total if self.total else 1.0
        bar_w = 20
        filled = round(pct * bar_w)
        bar = "#" * filled + "." * (bar_w - filled)
        head = f"[{bar}] {self.done}/{self.total} {100 * pct:5.1f}% {rate_gs:.2f} g/s ETA {fmt_duration(eta)}"
        if self.note:
            head += f" ({self.note})"
        try:
            table = rate(self.names, self.pairs, prior_draws=self.prior) if self.pairs else None
        except RatingError:
            table = None
        if table is not None:
            order = sorted((n for n in self.names if self.played[n]), key=lambda n: -table.rating[n])
            parts = [f"{n} {self.wins[n]}/{self.played[n]} {table.rating[n]:+.0f}" for n in order]
        else:
            parts = [f"{n} {self.wins[n]}/{self.played[n]}" for n in self.names if self.played[n]]
        text = head + (" | " + ", ".join(parts) if parts else "")
        return text if len(text) <= width else text[: width - 1] + "…"

    def draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if self.tty:
            if not force and now - self.last_draw < 0.25 and self.done < self.total:
                return
            width = shutil.get_terminal_size((100, 20)).columns - 1
            self.out.write("\r\x1b[2K" + self.line(width))
            self.out.flush()
            self.last_draw = now
            return
        pct10 = int(10 * self.done / self.total) if self.total else 10
        if force or pct10 != self.last_plain_pct or now - self.last_draw > 30:
            self.out.write(self.line(200) + "\n")
            self.out.flush()
            self.last_plain_pct = pct10
            self.last_draw = now

    def finish(self) -> None:
        if self.enabled:
            self.draw(force=True)
            if self.tty:
                self.out.write("\n")
                self.out.flush()
