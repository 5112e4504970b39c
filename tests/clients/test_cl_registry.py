"""The bot registry: built-in names, module:Class, file.py:Class, clear errors."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import clients.bots as registry
from clients.bot import Bot
from clients.bots import BUILTIN_BOTS, BotNotFound, bot_class, get_bot
from clients.local import play_local
from okgin import RuleSet

ROOT = Path(__file__).resolve().parents[2]


def test_builtins_are_listed_and_load() -> None:
    assert set(BUILTIN_BOTS) >= {"random", "simple", "strong"}
    assert BUILTIN_BOTS["strong"] == "clients.bots.strong:StrongBot"
    for name in ("random", "simple"):
        b = get_bot(name, seed=3)
        assert isinstance(b, Bot) and b.name == name


def test_missing_builtin_module_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry.BUILTIN_BOTS, "ghost", "clients.bots.ghost_not_here:Ghost")
    with pytest.raises(BotNotFound, match=r"bot 'ghost': module clients\.bots\.ghost_not_here is missing"):
        get_bot("ghost")


@pytest.mark.parametrize(
    ("spec", "why"),
    [
        ("nonsense", "unknown bot 'nonsense'"),
        ("no/such/file.py:Bot", "no such file"),
        ("clients.bots.simple:NoSuchClass", "has no attribute 'NoSuchClass'"),
        ("clients.bots.simple:joins_meld", "is not a bot class"),
        ("clients.bots.simple:", "bad bot spec"),
    ],
)
def test_bad_specs_say_why(spec: str, why: str) -> None:
    with pytest.raises(BotNotFound, match=re.escape(why)):
        bot_class(spec)


def test_an_import_error_inside_a_bot_is_not_disguised(tmp_path: Path) -> None:
    f = tmp_path / "broken.py"
    f.write_text("import no_such_module_anywhere\n")
    with pytest.raises(ModuleNotFoundError):
        bot_class(f"{f}:Broken")


USER_BOT = '''
from clients.bot import Bot


class FirstLegal(Bot):
    """Plays the first legal action; counts its hooks."""

    def __init__(self, seed=None):
        super().__init__(seed)
        self.hands = 0

    def on_hand_start(self, view):
        self.hands += 1

    def choose(self, view, legal):
        return legal[0]
'''


def test_a_user_bot_loaded_from_a_file_plays(tmp_path: Path) -> None:
    f = tmp_path / "mybot.py"
    f.write_text(USER_BOT)
    bot = get_bot(f"{f}:FirstLegal", seed=1)
    assert type(bot).__name__ == "FirstLegal" and bot.name == "FirstLegal"
    assert bot_class(f"{f}:FirstLegal") is type(bot)  # loaded once, reused
    game = play_local([bot, get_bot("simple")], RuleSet(), seed=5)
    assert game.is_over and bot.hands == len(game.results)


def readme_bot() -> str:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Writing a bot", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def test_the_readme_example_bot_is_complete_short_and_plays_both_variants(tmp_path: Path) -> None:
    code = readme_bot()
    assert len(code.strip().splitlines()) < 40
    f = tmp_path / "greedy_bot.py"
    f.write_text(code)
    out = subprocess.run(
        [sys.executable, "-m", "okgin", "match", f"{f}:GreedyBot", "simple", "--games", "4", "--json"],
        capture_output=True, text=True, check=True, cwd=tmp_path, timeout=240,
    ).stdout
    assert '"forfeits": 0' in out and '"GreedyBot"' in out
    box = subprocess.run(
        [sys.executable, "-m", "okgin", "match", f"{f}:GreedyBot", "simple", "random", "--games", "6"],
        capture_output=True, text=True, check=True, cwd=tmp_path, timeout=240,
    ).stdout
    assert "| box |" in box and "GreedyBot" in box
