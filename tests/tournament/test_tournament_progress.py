"""The live progress display: rich on a terminal, plain lines elsewhere."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from competition.tournament.progress import Progress, wants_rich
from competition.tournament.store import GameResult


def g(i: int, seats: tuple[str, str], winner: str) -> GameResult:
    scores = (110, 40) if winner == seats[0] else (40, 110)
    return GameResult(i, f"g{i}", i // 2, i % 2, f"s/{i}", seats, scores, winner, "normal", None, "", 3)


GAMES = [g(0, ("a", "b"), "a"), g(1, ("b", "a"), "a"), g(2, ("a", "b"), "b"), g(3, ("b", "a"), "a")]


class FakeTty(io.StringIO):
    def isatty(self) -> bool:
        return True


def fixed_sprt(games: object) -> tuple[float, float, float]:
    return (1.25, -2.94, 2.94)


def test_plain_lines_off_a_terminal() -> None:
    out = io.StringIO()
    p = Progress(10, ["a", "b"], GAMES[:1], out=out, sprt=fixed_sprt)
    assert p.console is None  # a StringIO is no terminal
    p.draw(force=True)
    for x in GAMES[1:]:
        p.add(x)
    p.finish()
    lines = out.getvalue().splitlines()
    assert len(lines) == 5  # one per 10% here (1..4 of 10 games), plus the final one
    assert "\x1b" not in out.getvalue()
    bar = r"\[########\.{12}\] 4/10  40\.0% \d+\.\d\d g/s ETA \S+ LLR 1\.25 \[-2\.94, 2\.94\] "
    assert re.fullmatch(bar + r"\| a 3/4 \+\d+, b 1/4 -\d+", lines[-1]), lines[-1]


def test_rich_on_a_terminal_shows_bar_rate_eta_llr_and_standings() -> None:
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=100, color_system=None)
    p = Progress(4, ["a", "b", "c"], [], console=console, sprt=fixed_sprt)
    p.draw(force=True)
    for x in GAMES:
        p.add(x)
    p.note = "referee r0 died"
    p.finish()
    text = buf.getvalue()
    last = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text.split("4/4")[-1])
    assert "100.0%" in last and "games/s" in last and "ETA 00:00" in last and "(referee r0 died)" in last
    assert "SPRT LLR 1.25  bounds [-2.94, 2.94]" in last
    assert re.search(r"1\s+a\s+3/4\s+\+\d+", last) and re.search(r"2\s+b\s+1/4\s+-\d+", last)
    assert "c " not in last.split("Elo")[-1]  # a participant yet to play is not listed
    assert "━" in text  # the bar


def test_no_sprt_line_without_an_sprt() -> None:
    buf = io.StringIO()
    p = Progress(4, ["a", "b"], GAMES, console=Console(file=buf, force_terminal=True, width=100, color_system=None))
    p.finish()
    assert "LLR" not in buf.getvalue()


@pytest.mark.parametrize(("env", "tty", "fancy"), [
    ({}, True, True), ({}, False, False), ({"NO_COLOR": "1"}, True, False), ({"TERM": "dumb"}, True, False),
])
def test_rich_only_on_a_terminal_that_wants_it(monkeypatch: pytest.MonkeyPatch, env: dict[str, str], tty: bool,
                                                fancy: bool) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    out = FakeTty() if tty else io.StringIO()
    assert wants_rich(out) is fancy
    p = Progress(2, ["a", "b"], [], out=out)
    assert (p.console is not None) is fancy
    assert Progress(2, ["a", "b"], [], out=out, enabled=False).console is None  # --quiet


def test_quiet_draws_nothing() -> None:
    out = FakeTty()
    p = Progress(4, ["a", "b"], [], out=out, enabled=False)
    for x in GAMES:
        p.add(x)
    p.finish()
    assert out.getvalue() == ""
