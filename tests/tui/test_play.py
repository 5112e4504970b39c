"""``okgin play`` end to end: the embedded referee, the built-in bots over the SDK, and
the TUI under Pilot (this file), and the real command in a real terminal (tmux).

Games are shortened with ``target_score`` so a whole game, a rematch and the quit all
fit in a few seconds; the bots and the referee are the real ones.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from clients.tui.app import OkginApp
from clients.tui.house import House, best_available_bot
from clients.tui.model import TableState
from clients.tui.net import NetworkBackend, Seating
from clients.tui.screens.game_over import GameOverScreen
from clients.tui.screens.summary import HandSummaryScreen
from okgin import RuleSet

from .test_live import play_turn, until

SIZE = (80, 24)


def house_app(house: House) -> OkginApp:
    endpoint = house.start()
    backend = NetworkBackend(endpoint, house.human, Seating(mode="token"), token=house.human_token)
    return OkginApp(backend, state=TableState(), cursor_blink=False)


async def play_game(pilot, app: OkginApp, games_before: int = 0) -> None:
    """Answer every prompt like a newcomer following the hints, close every summary,
    until the game-over screen shows."""
    for _ in range(2000):
        await until(pilot, lambda: app.state.my_turn or isinstance(app.screen, HandSummaryScreen | GameOverScreen)
                    or app.state.game_over, limit=60)
        if isinstance(app.screen, GameOverScreen):
            return
        if isinstance(app.screen, HandSummaryScreen):
            await pilot.press("enter")
            continue
        if app.state.my_turn:
            seq = app.state.seq
            await play_turn(pilot, app)
            await until(pilot, lambda s=seq: app.state.seq != s or app.state.game_over, limit=60)
        elif app.state.game_over:
            await until(pilot, lambda: isinstance(app.screen, GameOverScreen | HandSummaryScreen))
    raise AssertionError("the game did not end")


async def test_play_a_whole_game_against_the_simple_bot_then_rematch(tmp_path) -> None:
    house = House(RuleSet(target_score=15), ["simple"], human="ada", seed=11, journal_dir=str(tmp_path))
    app = house_app(house)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.state.view is not None)
            assert app.state.names == ("ada", "simple-bot")
            await play_game(pilot, app)
            final = app.state.final
            assert final is not None and final["termination"] == "normal"
            assert max(final["scores"]) >= 15
            assert final.get("seed") == 11  # revealed at the end
            sheet = str(app.screen.query_one("#score-sheet").render())
            assert sheet  # the score sheet lists the hands
            assert len(app.state.results) >= 1
            # Rematch: the bot is always ready; the second game starts on the same seats.
            await pilot.press("r")
            await until(
                pilot, lambda: app.state.final is None and app.state.view is not None and app.state.view.phase != "game_over"
            )
            assert app.state.extra.get("game") == 2
            assert not isinstance(app.screen, GameOverScreen)
            await pilot.press("q")
    finally:
        house.stop()
    # Everything stopped, and the referee journaled both games.
    assert not any(t.is_alive() for t in house._bot_threads)
    assert house._thread is not None and not house._thread.is_alive()
    journals = house.journals()
    assert len(journals) == 2
    first = [json.loads(line) for line in journals[0].read_text().splitlines()]
    assert first[-1]["t"] == "end" and first[-1]["termination"] == "normal"


async def test_play_gin_in_the_box_against_two_bots() -> None:
    house = House(RuleSet(variant="box", target_score=10), ["random", "simple"], human="ada", seed=5)
    assert house.bot_names() == ["random-bot", "simple-bot"]
    app = house_app(house)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.state.view is not None)
            assert app.state.view.num_seats == 3
            await play_game(pilot, app)
            assert app.state.final is not None and app.state.final["termination"] == "normal"
    finally:
        house.stop()


def test_house_refuses_a_wrong_number_of_bots_and_unknown_bots() -> None:
    from clients.bots import BotNotFound

    with pytest.raises(ValueError, match="needs 2 bot"):
        House(RuleSet(variant="box"), ["simple"]).start()
    with pytest.raises(BotNotFound, match="unknown bot"):
        House(RuleSet(), ["grandmaster"]).start()
    assert best_available_bot() in ("strong", "simple", "random")


def test_play_cli_refuses_bad_arguments(capsys) -> None:
    from clients.tui.play_cli import main

    assert main(["--rule", "knock_limit=11"]) == 2
    assert "knock_limit" in capsys.readouterr().err
    assert main(["--variant", "box", "--bot", "simple", "--bot", "random", "--bot", "simple"]) == 2
    assert "2 bot(s)" in capsys.readouterr().err
    assert main(["--bot", "nobody"]) == 2
    assert "unknown bot" in capsys.readouterr().err


# ------------------------------------------------------------------------ tmux
TMUX = shutil.which("tmux")


class Tmux:
    """One detached tmux server of our own (its own socket), one session in it."""

    def __init__(self, tmp: Path, width: int = 80, height: int = 24) -> None:
        self.socket = str(tmp / "tmux.sock")
        self.width, self.height = width, height

    def run(self, *args: str) -> str:
        return subprocess.run([TMUX, "-S", self.socket, *args], capture_output=True, text=True, timeout=20).stdout

    def start(self, command: str, env: dict[str, str]) -> None:
        exports = " ".join(f"{k}={v}" for k, v in env.items())
        self.run("new-session", "-d", "-s", "t", "-x", str(self.width), "-y", str(self.height), f"env {exports} {command}")

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", "t")

    def keys(self, *keys: str) -> None:
        self.run("send-keys", "-t", "t", *keys)

    def alive(self) -> bool:
        return "t" in self.run("list-sessions", "-F", "#{session_name}").split()

    def type(self, text: str) -> None:
        """``text`` as typed (no key names)."""
        self.run("send-keys", "-t", "t", "-l", text)

    def wait_for(self, cond, limit: float = 60, what: str = "") -> str:
        """Poll the screen until ``cond(screen)``; the screen then. ``limit`` bounds a hang,
        it is not a timing assertion."""
        deadline = time.monotonic() + limit
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if cond(screen):
                return screen
            time.sleep(0.2)
        raise AssertionError(f"never saw {what or cond}; screen:\n{screen}")

    def kill(self) -> None:
        self.run("kill-server")  # our own server (its own socket): only the session we started


def press_the_shown_key(tm: Tmux, screen: str) -> None:
    """On "Your turn": the move the footer offers, like a newcomer would."""
    footer = screen.rstrip().splitlines()[-1]
    if " k Knock" in footer:
        tm.keys("k")
        time.sleep(0.3)
        tm.keys("k")
    elif "Discard" in footer:
        tm.keys("Enter")
    elif " p Pass" in footer:
        tm.keys("p")
    elif " s Draw stock" in footer:
        tm.keys("s")


def log_lines(screen: str, prefix: str) -> list[str]:
    """The log's lines (and any others) that start with ``prefix``, the side panel cut off."""
    return [line.split("▏")[0].strip() for line in screen.splitlines() if line.split("▏")[0].strip().startswith(prefix)]


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed")
def test_okgin_play_in_a_real_terminal(tmp_path: Path) -> None:
    """Run the README's command in tmux at 80x24, play by reading the screen and
    pressing the keys it shows, to the end of the game; then quit and check that the
    process exited cleanly and the referee wrote a finished journal."""
    tm = Tmux(tmp_path)
    status = tmp_path / "status"
    journals = tmp_path / "journals"
    cmd = (f"sh -c '{sys.executable} -m okgin.cli play --bot random --seed 7 --rule target_score=15 "
           f"--journal-dir {journals} --name ada; echo $? > {status}'")
    env = {"LANG": "C.UTF-8", "TERM": "xterm-256color", "PATH": os.environ.get("PATH", "")}
    tm.start(cmd, env)
    try:
        seen: set[str] = set()
        deadline = time.monotonic() + 240  # a bound on a hang, not a timing assertion
        last = ""
        while time.monotonic() < deadline:
            time.sleep(0.4)
            screen = tm.screen()
            if screen == last:
                continue  # nothing new drawn yet
            last = screen
            if "Game over" in screen:
                seen.add("game over")
                break
            if "End of hand" in screen:
                seen.add("summary")
                tm.keys("Enter")
            elif "Your turn" in screen:
                seen.add("turn")
                press_the_shown_key(tm, screen)
                last = ""
        assert seen >= {"turn", "summary", "game over"}, f"saw {seen}; screen:\n{last}"
        # The game-over screen names the winner and offers a rematch.
        assert "Rematch" in last and ("win" in last)
        tm.keys("q")
        for _ in range(100):
            if status.exists():
                break
            time.sleep(0.1)
        assert status.read_text().strip() == "0"
    finally:
        tm.kill()
    files = list(journals.glob("play-g1-*.jsonl"))
    assert len(files) == 1
    end = json.loads(files[0].read_text().splitlines()[-1])
    assert end["t"] == "end" and end["termination"] == "normal" and end["seed"] == 7


BOX_CMD = (f"{sys.executable} -m okgin.cli play --variant box --bot random --seed {{seed}} --pace 0 --undo 0 "
           "--advice-window {window} --rule target_score=250 --name ada")
TERM_ENV = {"LANG": "C.UTF-8", "TERM": "xterm-256color", "PATH": os.environ.get("PATH", "")}
CAPTAIN_FIRST, SITTER_FIRST = 1, 2  # the seeds' role draws: the human (seat 0) captain, sitter in hand 1


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed")
def test_gin_in_the_box_in_a_real_terminal_as_the_captain(tmp_path: Path) -> None:
    """``okgin play --variant box`` at 120x40 with the human captain of hand 1: play the
    keys the screen shows; the log shows the human's discard, and the hand's summary
    comes and stays until Enter."""
    tm = Tmux(tmp_path, 120, 40)
    tm.start(BOX_CMD.format(seed=CAPTAIN_FIRST, window=0), TERM_ENV)
    try:
        screen = tm.wait_for(lambda s: "Your turn" in s, what="the first turn")
        assert "Your hand (captain)" in screen and "(in the box)" in screen
        discarded = False
        for _ in range(500):
            press_the_shown_key(tm, screen)
            screen = tm.wait_for(lambda s, last=screen: "End of hand" in s or ("Your turn" in s and s != last),
                                 what="a turn or the summary")
            if "End of hand" in screen:
                break
            discarded = discarded or bool(log_lines(screen, "You discarded"))
        else:
            raise AssertionError(f"the hand did not end; screen:\n{screen}")
        discarded = discarded or bool(log_lines(screen, "You discarded"))
        assert discarded, screen
        # The summary waits for a key (no auto-continue with a human at the table).
        tm.keys("Enter")
        tm.wait_for(lambda s: "End of hand" not in s and "hand 2" in s, what="hand 2")
    finally:
        tm.kill()


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed")
def test_gin_in_the_box_in_a_real_terminal_as_the_sitter_sending_advice(tmp_path: Path) -> None:
    """The human sits out hand 1: ``m`` opens the note, Enter sends it; the log shows it
    as one line (a second note collapses into it), and the bot captain, which waits for
    its sitter's note, then moves."""
    tm = Tmux(tmp_path, 120, 40)
    tm.start(BOX_CMD.format(seed=SITTER_FIRST, window=60), TERM_ENV)  # a window the note cuts short
    try:
        screen = tm.wait_for(lambda s: " m Write a note" in s, what="the advice keys")
        assert "(your captain)" in screen and "You sit out this hand" in screen
        found = re.search(r"(\S+)'s hand \(your captain\)", screen)
        assert found, screen
        captain = found.group(1)
        for n, note in enumerate(("keep the diamonds", "watch the box"), 1):
            moves = len(log_lines(screen, captain + " "))
            tm.keys("m")
            tm.wait_for(lambda s: "A note to your captain" in s, what="the note")
            tm.type(note)
            tm.keys("Enter")
            want = f'You advised: "{note}"' if n == 1 else f'You advised 2 times; last: "{note}"'
            screen = tm.wait_for(lambda s, w=want: bool(log_lines(s, w)), what=want)
            assert len(log_lines(screen, "You advised")) == 1  # one line per hand
            # The captain acts on it (its window ends with the note).
            screen = tm.wait_for(lambda s, m=moves: len(log_lines(s, captain + " ")) > m, what=f"{captain} moving")
            if n == 1:
                screen = tm.wait_for(lambda s: " m Write a note" in s, what="the advice keys again")
    finally:
        tm.kill()


# ---------------------------------------------------------------- issue 28 item 1: quitting says what will happen
def local_app(house: House) -> OkginApp:
    """The app as ``okgin play`` builds it (its local quit dialog included)."""
    from clients.tui.play_cli import house_app as play_app

    house.start()
    return play_app(house, cursor_blink=False)


async def test_q_at_a_local_game_offers_resign_new_game_and_quit_not_a_held_seat() -> None:
    """At ``okgin play`` nothing holds the seat once the app closes: the dialog says so
    and offers resign (the game ends, resigned), new game (the next game starts, no
    game-over sheet) and quit; Esc stays."""
    from clients.tui.screens.quit_confirm import LocalQuitScreen

    house = House(RuleSet(target_score=50), ["simple"], human="ada", seed=3)
    app = local_app(house)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.state.view is not None)
            await pilot.press("q")
            await until(pilot, lambda: isinstance(app.screen, LocalQuitScreen))
            text = str(app.screen.query_one("#quit-text").render())
            assert "holds your seat" not in text and "okgin tui" not in text and "token" not in text.lower()
            assert "Resign this game" in text and "New game" in text and "Quit" in text
            await pilot.press("escape")
            await until(pilot, lambda: not isinstance(app.screen, LocalQuitScreen))
            assert app.is_running and app.state.final is None
            # New game: this one is resigned and the next one is dealt, straight to the table.
            await pilot.press("q")
            await until(pilot, lambda: isinstance(app.screen, LocalQuitScreen))
            await pilot.press("n")
            await until(pilot, lambda: app.state.extra.get("game") == 2 and app.state.view is not None
                        and app.state.final is None, limit=60)
            assert not isinstance(app.screen, GameOverScreen)
            # Resign: the game ends, resigned by us, on the game-over sheet.
            await pilot.press("q")
            await until(pilot, lambda: isinstance(app.screen, LocalQuitScreen))
            await pilot.press("r")
            await until(pilot, lambda: isinstance(app.screen, GameOverScreen), limit=60)
            final = app.state.final
            assert final is not None and final["termination"] == "resigned" and final["loser"] == 0
            # Quit from the sheet closes the app.
            await pilot.press("q")
            await until(pilot, lambda: not app.is_running)
    finally:
        house.stop()
    assert house._thread is not None and not house._thread.is_alive()


async def test_q_then_quit_at_a_local_game_closes_okgin_play() -> None:
    from clients.tui.screens.quit_confirm import LocalQuitScreen

    house = House(RuleSet(), ["random"], human="ada", seed=4)
    app = local_app(house)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.state.view is not None)
            await pilot.press("q")
            await until(pilot, lambda: isinstance(app.screen, LocalQuitScreen))
            await pilot.press("q")
            await until(pilot, lambda: not app.is_running)
    finally:
        house.stop()
