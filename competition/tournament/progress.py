"""The live progress display: a bar, games per second, ETA, the SPRT's LLR and the standings.

On a terminal it is drawn by rich (installed with textual): a bar with the counts, rate
and ETA, the SPRT line when the run is an SPRT, and a standings table, redrawn in place
at most a few times a second so a fast run does not spend its time drawing. Elsewhere
(a pipe, a CI log, ``TERM=dumb``, ``NO_COLOR``) it prints a plain line every 10% of the
run or every 30 seconds: grep-able text with no escape codes. ``--quiet`` shows neither.
The standings are the current Elo estimates (see :mod:`.ratings`), best first.

The display reads the games only; it never decides anything. The SPRT figures come from
a function given by the runner (:data:`SprtFigures`), so the test the runner stops on and
the numbers shown are the same computation.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from okgin import env

from .ratings import LiveRatings
from .store import GameResult

# (llr, lower bound, upper bound) of the SPRT after the given games.
SprtFigures = Callable[[Sequence[GameResult]], tuple[float, float, float]]
REDRAW_S = 0.25  # at most 4 redraws a second on a terminal
PLAIN_EVERY_S = 30.0


def fmt_duration(s: float) -> str:
    if not math.isfinite(s) or s < 0:
        return "--:--"
    s = round(s)
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m:02d}:{sec:02d}"


def wants_rich(out: TextIO) -> bool:
    """The rich display only on a terminal that can show it (no-color.org, TERM=dumb)."""
    if env.get("NO_COLOR") or env.get("TERM") == "dumb":
        return False
    try:
        return out.isatty()
    except (AttributeError, ValueError):  # a closed or odd stream
        return False


@dataclass(frozen=True)
class Row:
    name: str
    wins: int
    played: int
    elo: float | None


class Progress:
    def __init__(self, total: int, names: Sequence[str], games: Sequence[GameResult], enabled: bool = True,
                 out: TextIO | None = None, prior_draws: float = 1.0, sprt: SprtFigures | None = None,
                 console: Any = None) -> None:
        """``console``: a ``rich.console.Console`` to draw on (tests give one on a StringIO);
        by default one on ``out`` when ``out`` is a terminal that wants it (:func:`wants_rich`)."""
        self.total = total
        self.names = list(names)
        self.games = list(games)
        self.ratings = LiveRatings(names, prior_draws)  # Elo, or the box's finish above par
        self.wins = {n: 0 for n in names}
        self.played = {n: 0 for n in names}
        for g in games:
            self._count(g)
        self.done = len(games)
        self.start_done = self.done
        self.t0 = time.monotonic()
        self.enabled = enabled
        self.out = out or sys.stderr
        self.sprt = sprt
        if console is None and enabled and wants_rich(self.out):
            from rich.console import Console

            console = Console(file=self.out)
        self.console = console
        self.live: Any = None
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
        self.ratings.add(g.seats, g.scores, g.winner, g.culprit, g.deal, g.seed)

    def add(self, g: GameResult) -> None:
        self.done += 1
        self.games.append(g)
        self._count(g)
        self.draw()

    # ---------------------------------------------------------------- figures
    def rate_and_eta(self) -> tuple[float, float]:
        """Games per second this run (resumed games not counted) and seconds left."""
        elapsed = time.monotonic() - self.t0
        new = self.done - self.start_done
        rate_gs = new / elapsed if elapsed > 0 else 0.0
        left = max(0, self.total - self.done)
        return rate_gs, (left / rate_gs if rate_gs > 0 else math.inf)

    def sprt_figures(self) -> tuple[float, float, float] | None:
        return None if self.sprt is None else self.sprt(self.games)

    def standings(self) -> list[Row]:
        """Participants that played, best first by the current Elo (file order without ratings)."""
        table = self.ratings.current()
        if table is None:
            return [Row(n, self.wins[n], self.played[n], None) for n in self.names if self.played[n]]
        order = sorted((n for n in self.names if self.played[n]), key=lambda n: -table[n])
        return [Row(n, self.wins[n], self.played[n], table[n]) for n in order]

    # ------------------------------------------------------------------ plain
    def line(self, width: int = 100) -> str:
        rate_gs, eta = self.rate_and_eta()
        pct = self.done / self.total if self.total else 1.0
        bar_w = 20
        filled = round(pct * bar_w)
        bar = "#" * filled + "." * (bar_w - filled)
        head = f"[{bar}] {self.done}/{self.total} {100 * pct:5.1f}% {rate_gs:.2f} g/s ETA {fmt_duration(eta)}"
        sp = self.sprt_figures()
        if sp is not None:
            head += f" LLR {sp[0]:.2f} [{sp[1]:.2f}, {sp[2]:.2f}]"
        if self.note:
            head += f" ({self.note})"
        parts = [f"{r.name} {r.wins}/{r.played}" + ("" if r.elo is None else f" {r.elo:+.0f}") for r in self.standings()]
        text = head + (" | " + ", ".join(parts) if parts else "")
        return text if len(text) <= width else text[: width - 1] + "…"

    # ------------------------------------------------------------------- rich
    def renderable(self) -> Any:
        """What the terminal shows: the bar line, the SPRT line, the standings table."""
        from rich.console import Group
        from rich.progress_bar import ProgressBar
        from rich.table import Table

        rate_gs, eta = self.rate_and_eta()
        pct = self.done / self.total if self.total else 1.0
        head = Table.grid(padding=(0, 1))
        head.add_row(ProgressBar(total=max(self.total, 1), completed=self.done, width=30),
                     f"{self.done}/{self.total} {100 * pct:5.1f}%", f"{rate_gs:.2f} games/s", f"ETA {fmt_duration(eta)}",
                     f"({self.note})" if self.note else "")
        parts: list[Any] = [head]
        sp = self.sprt_figures()
        if sp is not None:
            parts.append(f"SPRT LLR {sp[0]:.2f}  bounds [{sp[1]:.2f}, {sp[2]:.2f}]")
        rows = self.standings()
        if rows:
            table = Table(box=None, padding=(0, 1), show_edge=False)
            table.add_column("#", justify="right")
            table.add_column("name")
            table.add_column("W/games", justify="right")
            table.add_column(self.ratings.label, justify="right")
            for k, r in enumerate(rows, 1):
                table.add_row(str(k), r.name, f"{r.wins}/{r.played}", "-" if r.elo is None else f"{r.elo:+.0f}")
            parts.append(table)
        return Group(*parts)

    # ---------------------------------------------------------------- drawing
    def draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if self.console is not None:
            if not force and now - self.last_draw < REDRAW_S and self.done < self.total:
                return
            if self.live is None:
                from rich.live import Live

                # Drawn from the runner's loop only (auto_refresh off): no thread reads
                # the games while the loop adds to them.
                self.live = Live(self.renderable(), console=self.console, auto_refresh=False)
                self.live.start()
            self.live.update(self.renderable(), refresh=True)
            self.last_draw = now
            return
        pct10 = int(10 * self.done / self.total) if self.total else 10
        if force or pct10 != self.last_plain_pct or now - self.last_draw > PLAIN_EVERY_S:
            self.out.write(self.line(200) + "\n")
            self.out.flush()
            self.last_plain_pct = pct10
            self.last_draw = now

    def finish(self) -> None:
        if self.enabled:
            self.draw(force=True)
            if self.live is not None:
                self.live.stop()  # the last picture stays on the screen
                self.live = None
