"""Each example bot's own meld search agrees with the engine's (``okgin.deadwood``).

The bots implement minimum deadwood natively (C, JavaScript, Rust, Java); their
``--eval`` mode prints, per hand read from stdin, the least deadwood and the deadwood of
the arrangement they would lay out. Both must equal the engine's on random hands and on
hands crowded with sets and runs, where the search has real choices to make.
"""

from __future__ import annotations

import random
import subprocess

import pytest
from botbuild import LANGUAGES

from okgin import deadwood
from okgin.cards import card_str


def _hands(seed: int) -> list[list[int]]:
    rng = random.Random(seed)
    hands = [rng.sample(range(52), rng.choice((10, 11))) for _ in range(1500)]
    for _ in range(700):  # crowded: three ranks in 3-4 suits plus neighbours, cut to 11 cards
        cards: set[int] = set()
        for r in rng.sample(range(13), 3):
            cards.update(s * 13 + r for s in rng.sample(range(4), rng.choice((3, 4))))
            cards.update(s * 13 + (r + 1) % 13 for s in rng.sample(range(4), 1))
        hands.append(rng.sample(sorted(cards), min(11, len(cards))))
    hands += [[0], [0, 1, 2], [0, 13, 26, 39, 1, 14, 27, 40, 2, 15, 28]]
    return hands


@pytest.mark.parametrize("language", LANGUAGES)
def test_eval_matches_engine(built_bots, language):
    hands = _hands(seed=LANGUAGES.index(language))
    text = "".join(" ".join(card_str(c) for c in h) + "\n" for h in hands)
    proc = subprocess.run(built_bots[language].argv("--eval"), input=text, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    got = [tuple(map(int, line.split())) for line in proc.stdout.splitlines()]
    expected = [deadwood(h) for h in hands]
    assert len(got) == len(expected)
    bad = [(h, g, e) for h, g, e in zip(hands, got, expected, strict=True) if g != (e, e)]
    assert not bad, (
        f"{language}: {len(bad)} hands disagree, first: {[card_str(c) for c in bad[0][0]]} -> {bad[0][1]}, engine {bad[0][2]}"
    )


@pytest.mark.parametrize("language", LANGUAGES)
def test_eval_refuses_a_bad_card(built_bots, language):
    proc = subprocess.run(built_bots[language].argv("--eval"), input="As Zz\n", capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
