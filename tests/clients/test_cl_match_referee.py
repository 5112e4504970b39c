"""``okgin match --via-referee``: the same games through a real referee and bot
processes as in-process — same seeds, same actions, same results."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from clients.match import GameSummary, run_match
from clients.match_referee import run_match_via_referee
from okgin import RuleSet


def moves(g: GameSummary) -> list[dict]:
    """The record's actions and forfeits (advice may legitimately differ: see
    clients/match_referee.py)."""
    assert g.record is not None
    return [e for e in g.record["entries"] if "action" in e or "resign" in e]


@pytest.mark.parametrize(
    ("bots", "games", "rules"),
    [
        (["simple", "random"], 4, RuleSet()),
        (["random", "simple", "simple"], 6, RuleSet(variant="box")),
        (["simple", "simple"], 2, RuleSet(knock_limit=10, undercut_bonus=25, spade_upcard_doubles=True, big_gin=True)),
    ],
)
def test_referee_games_equal_in_process_games(bots: list[str], games: int, rules: RuleSet) -> None:
    local = run_match(bots, games=games, seed="eq", rules=rules, keep_records=True)
    remote = run_match_via_referee(bots, games=games, seed="eq", rules=rules, keep_records=True, timeout=300)
    assert remote.via == "via referee" and len(remote.games) == len(local.games) >= games
    for a, b in zip(local.games, remote.games, strict=True):
        assert a.key() == b.key()
        assert moves(a) == moves(b)
        assert a.record["results"] == b.record["results"]  # type: ignore[index]
        assert a.record["final"] == b.record["final"]  # type: ignore[index]
    assert [s.__dict__ for s in local.stats()] == [s.__dict__ for s in remote.stats()]


def test_okgin_match_via_referee_cli_json_equals_in_process(tmp_path: Path) -> None:
    def run(*extra: str) -> dict:
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "okgin",
                "match",
                "simple",
                "random",
                "simple",
                "--games",
                "6",
                "--seed",
                "5",
                "--json",
                *extra,
            ],
            capture_output=True,
            text=True,
            check=True,
            cwd=tmp_path,
            timeout=240,
        ).stdout
        d = json.loads(out)
        for k in ("via", "elapsed_s", "referee_endpoint"):
            d.pop(k, None)
        return d

    assert run("--via-referee") == run()


def test_a_user_bot_file_through_the_referee(tmp_path: Path) -> None:
    f = tmp_path / "firstlegal.py"
    f.write_text(
        "from clients.bot import Bot\n\n\nclass FirstLegal(Bot):\n    def choose(self, view, legal):\n        return legal[-1]\n"
    )
    spec = f"{f}:FirstLegal"
    local = run_match([spec, "simple"], games=2, seed=9)
    remote = run_match_via_referee([spec, "simple"], games=2, seed=9, timeout=300)
    assert [g.key() for g in local.games] == [g.key() for g in remote.games]
    assert remote.bots == ["FirstLegal", "simple"]


def test_an_illegal_bot_forfeits_the_same_way(tmp_path: Path) -> None:
    f = tmp_path / "cheat.py"
    f.write_text(
        "from clients.bot import Bot\nfrom okgin import Action\n\n\nclass Cheat(Bot):\n"
        "    def choose(self, view, legal):\n"
        "        if view.phase == 'discard' and view.hand_number == 1:\n"
        "            return Action.discard(next(c for c in range(52) if c not in view.hand))\n"
        "        return legal[0]\n"
    )
    spec = f"{f}:Cheat"
    local = run_match([spec, "simple"], games=2, seed=1)
    remote = run_match_via_referee([spec, "simple"], games=2, seed=1, timeout=300)
    assert [g.key() for g in local.games] == [g.key() for g in remote.games]
    forfeits = [g for g in local.games if g.termination == "illegal"]
    assert forfeits and all(g.at_fault == 0 for g in forfeits)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("bots", "games"), [(["random", "simple"], 200), (["random", "simple", "simple"], 200), (["simple", "simple"], 200)]
)
def test_builtin_bots_play_200_games_of_each_variant_through_the_referee(bots: list[str], games: int) -> None:
    local = run_match(bots, games=games, seed="ref200")
    remote = run_match_via_referee(bots, games=games, seed="ref200", jobs=2, timeout=3000)
    assert all(g.termination == "normal" for g in remote.games)
    assert [g.key() for g in local.games] == [g.key() for g in remote.games]
    if bots == ["random", "simple"]:
        assert remote.stats()[1].wins.rate > 0.95
