"""The four example bots pass the conformance kit: 10 games of each variant (20 with
OKGIN_SLOW=1) against the built-in ``simple`` bot, every probe fired (idle wait, illegal
move, silent drop), zero protocol errors, each one's process exiting cleanly after every
game.

The four kits run at the same time (the machine's two cores are the limit, not the
waiting), each playing its games one at a time, with a generous move limit: a loaded
machine must not turn into a bot's timeout.
"""

from __future__ import annotations

import os

import pytest
from botbuild import LANGUAGES
from kitrun import KitRun, run_kits

from clients.bots.simple import SimpleBot
from clients.local import play_local
from okgin import RuleSet

# 10 a variant: the kit's fixed seeds give every card feature within them (checked with the
# C bot, which plays exactly as simple, as every example bot does: the last test below);
# 20 took three minutes of the suite's 25.
GAMES = 20 if os.environ.get("OKGIN_SLOW") == "1" else 10

# Four kits of 20 games each (40 when slow) share two cores: minutes, not the suite's default 5.
pytestmark = pytest.mark.timeout(1500)

# Features that depend on the cards: with the kit's fixed seeds these all occur in 10
# games of each variant (a drawn hand is rare, so it is only required not to fail).
CARD_FEATURES = ("upcard_taken", "upcard_passed", "draw_stock", "draw_discard", "knock", "gin", "layoffs")


@pytest.fixture(scope="module")
def kit_runs(built_bots) -> dict[str, KitRun]:
    jobs = {
        lang: [
            "--games",
            str(GAMES),
            "--jobs",
            "1",
            "--move-ms",
            "30000",
            "--name",
            f"{lang}-bot",
            "--",
            *built_bots[lang].argv("--connect", "{endpoint}", "--name", "{name}"),  # the token: $OKGIN_TOKEN
        ]
        for lang in LANGUAGES
    }
    return run_kits(jobs)


@pytest.mark.parametrize("language", LANGUAGES)
def test_bot_passes_the_kit(kit_runs, language):
    run = kit_runs[language]
    assert run.status == 0, run.explain()
    assert run.report["passed"], run.explain()
    games = run.report["games"]
    assert sum(g["variant"] == "oklahoma" for g in games) == GAMES
    assert sum(g["variant"] == "box" for g in games) == GAMES
    assert all(g["termination"] == "normal" and g["exit_code"] == 0 and g["exited_by_itself"] for g in games), run.explain()


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_feature_exercised_and_no_protocol_error(kit_runs, language):
    run = kit_runs[language]
    assert run.feature("errors")["status"] == "pass", run.explain()
    for key, feature in run.report["features"].items():
        assert feature["status"] != "fail", f"{key}: {feature['failures'][:1]}"
        if feature["required"] or key in CARD_FEATURES:
            assert feature["status"] == "pass", f"{key} not exercised\n{run.explain()}"
    # The probes fired once per variant: one illegal move, one silent drop.
    faults = [f for g in run.report["games"] for f in g["faults"]]
    assert sorted(faults) == ["illegal", "illegal", "silence", "silence"], run.explain()
    assert any(g["connections"] == 2 for g in run.report["games"]), "no game shows the reconnection"


@pytest.mark.parametrize("language", LANGUAGES)
def test_bot_plays_exactly_like_simple(kit_runs, language):
    """At least the strength of ``simple``: each bot implements the same decisions
    natively (meld-joining draws, least-deadwood discards, early knocks), so every game
    it played ends with the scores of the same deal played by ``simple`` in every seat
    in process. The probes change nothing: a refused move is made again, a resumed
    session goes on where it was."""
    for g in kit_runs[language].report["games"]:
        game = play_local(
            [SimpleBot() for _ in range(2 if g["variant"] == "oklahoma" else 3)], RuleSet(variant=g["variant"]), g["seed"]
        )
        assert g["scores"] == list(game.scores), f"{language}: {g['variant']} game {g['index'] + 1} (seed {g['seed']})"
        assert g["winner"] == game.winner
