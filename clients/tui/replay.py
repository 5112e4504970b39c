"""Replaying a referee journal (protocol.md §12) step by step.

A journal holds the rules and the players in its ``start`` line and, in its ``end`` line,
the revealed seed and the engine's full game record. The seed is secret until the game
ends, so only a finished journal can be replayed; a journal without its ``end`` line
gets a sentence saying so. The replay re-runs the record's entries through the engine
(a journal is a public, finished record: nothing hidden is left to protect) and shows
the full view after each entry, every hand face up, like a broadcast after the game.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from okgin import Game, RuleSet, View
from okgin.journal import (
    JournalError,  # the file is not a replayable journal; the message says why
    read_journal,
)
from okgin.record import apply_entry
from okgin.views import make_view

from .backend import Backend
from .messages import Bell, HandEnded, StateChanged
from .model import OFFLINE, TableState

if TYPE_CHECKING:
    from .app import OkginApp


@dataclass(frozen=True)
class Step:
    view: View
    label: str  # what this step did, for the log line
    results: int  # hands finished up to here


def finished_journal(path: str | Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ``start`` and ``end`` lines of a finished journal (raises :class:`JournalError`).

    The file is read by :func:`okgin.journal.read_journal`, the reader every tool shares;
    this adds the replay's own demand, a finished game."""
    p = Path(path)
    j = read_journal(p)
    end = j.end
    if end is None or not isinstance(end.get("record"), dict):
        raise JournalError(
            f"{p} has no 'end' line: the game is still running or the referee stopped. "
            "The seed is revealed only when a game ends, so this journal cannot be replayed yet."
        )
    return j.start, end


def replay_steps(record: dict[str, Any]) -> tuple[Game, list[Step]]:
    """Every step of a game record: the full view before any move, then after each entry.

    An entry that ends a hand (the game goes on) gives two steps: the hand as it ended,
    every card face up and laid out (the engine's hand-end view), then the next deal. With
    one step the replay went from the knock straight to the next deal, and the laid-out
    hands were never on the table."""
    rules = RuleSet.from_dict(dict(record["rules"]))
    if record.get("position") is not None:
        from okgin.position import game_from_wire_position

        game = game_from_wire_position(rules, record["seed"], record["position"])
    else:
        game = Game(rules, record["seed"])
    steps = [Step(game.full_view(), "deal", 0)]
    for i, e in enumerate(record.get("entries", [])):
        try:
            apply_entry(game, e)
        except Exception as err:
            raise JournalError(f"entry {i} of the record does not replay: {err}") from None
        ended = game.ended if len(game.results) > steps[-1].results and not game.is_over else None
        if ended is not None:
            steps.append(Step(make_view(game, None, full=True, ended=ended), _label(e), len(game.results)))
            steps.append(Step(game.full_view(), "deal", len(game.results)))
        else:
            steps.append(Step(game.full_view(), _label(e), len(game.results)))
    return game, steps


def _label(e: dict[str, Any]) -> str:
    if "action" in e:
        return f"seat {e['seat']}: {e['action'].get('kind', '?')}"
    if "advice" in e:
        return f"seat {e['seat']} advised"
    if "resign" in e:
        return f"seat {e['seat']} forfeited ({e['resign']})"
    return "abandoned"


class ReplayBackend(Backend):
    """Steps through a finished journal; the arrow keys call :meth:`step`."""

    description = "journal replay"

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.start_line, self.end_line = finished_journal(self.path)
        self.game, self.steps = replay_steps(self.end_line["record"])
        self.names = tuple(str(p) for p in self.start_line.get("players") or ())
        self.index = 0

    def state_at(self, index: int) -> TableState:
        step = self.steps[index]
        results = tuple(self.game.results[: step.results])
        final = None
        if index == len(self.steps) - 1:
            final = dict(self.end_line.get("final") or self.game.final_scores())
            final.setdefault("termination", self.end_line.get("termination"))
            final["seed"] = self.end_line.get("seed")
        return TableState(
            view=step.view, names=self.names, rules=self.game.rules, table=str(self.start_line.get("table", "")) or None,
            results=results, final=final, spectator=True, replay=(index, len(self.steps) - 1), connection=OFFLINE,
        )

    async def run(self, app: OkginApp) -> None:
        app.post_message(StateChanged(self.state_at(self.index)))

    def _go(self, app: OkginApp, index: int) -> None:
        index = max(0, min(index, len(self.steps) - 1))
        prev = self.index
        if index == prev:
            app.post_message(Bell())
            return
        self.index = index
        app.post_message(StateChanged(self.state_at(index)))
        if index == prev + 1 and self.steps[index].results > self.steps[prev].results:
            app.post_message(HandEnded(self.game.results[self.steps[index].results - 1]))

    def step(self, app: OkginApp, delta: int) -> None:
        self._go(app, self.index + delta)

    def jump(self, app: OkginApp, direction: int) -> None:
        self._go(app, 0 if direction < 0 else len(self.steps) - 1)

    def hand_step(self, app: OkginApp, delta: int) -> None:
        """Jump to the first step of the next hand, or back to the start of this one
        (then of the one before)."""
        cur = self.steps[self.index].view.hand_number
        if delta > 0:
            nxt = next(
                (i for i in range(self.index + 1, len(self.steps)) if self.steps[i].view.hand_number > cur), len(self.steps) - 1
            )
            self._go(app, nxt)
            return
        first = self._first_of(cur)
        self._go(app, first if self.index > first else self._first_of(max(cur - 1, 0)))

    def _first_of(self, hand_number: int) -> int:
        return next((i for i, s in enumerate(self.steps) if s.view.hand_number == hand_number), 0)
