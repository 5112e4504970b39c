"""``okgin play`` end to end: the embedded referee, the built-in bots over the SDK, and
the TUI under Pilot (this file), and the real command in a real terminal (tmux).

Games are shortened with ``target_score`` so a whole game, a rematch and the quit all
fit in a few seconds; the bots and the referee are the real ones.
"""

from __future__ import annotations

import json
import os
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
            await until(pilot, lambda: app.state.final is None and app.state.view is not None and app.state.view.phase != "game_over")
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

    def kill(self) -> None:
        self.run("kill-server")


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
