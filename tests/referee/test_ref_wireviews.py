"""The referee's fast wire views equal the engine's ``View.to_wire()`` exactly, for every
state and every viewer (seats, the sitter, spectators), over many random games; and
spliced frames decode to the same maps as plainly packed ones."""

from __future__ import annotations

import random

import msgpack
from hypothesis import given, settings
from hypothesis import strategies as st

from okgin import Game, RuleSet
from referee.wireviews import ViewCache, frame, pack


@settings(max_examples=25)
@given(seed=st.integers(0, 10**9), variant=st.sampled_from(["oklahoma", "box"]), bots=st.integers(0, 10**6),
       big_gin=st.booleans(), target=st.sampled_from([10, 40, 100]))
def test_fast_views_equal_engine_views(seed, variant, bots, big_gin, target):
    game = Game(RuleSet(variant=variant, big_gin=big_gin, target_score=target), seed)
    cache = ViewCache()
    cache.reset(game)
    rng = random.Random(bots)
    viewers = [None, *range(game.num_seats)]
    for _ in range(250):
        for v in rng.sample(viewers, len(viewers)):  # any order of requests
            assert cache.wire(v) == game.view(v).to_wire()
            assert msgpack.unpackb(cache.packed(v), raw=False) == game.view(v).to_wire()
        if game.is_over:
            break
        legal = game.legal_actions()
        assert cache.legal() == [a.to_wire() for a in legal]
        assert msgpack.unpackb(cache.legal_packed(), raw=False) == [a.to_wire() for a in legal]
        knocks = [a for a in legal if a.kind in ("knock", "big_gin")]
        action = knocks[0] if knocks and rng.random() < 0.5 else rng.choice(legal)
        if game.roles is not None and game.current_player == game.roles[1] and rng.random() < 0.3:
            game.advise(game.roles[2], rng.choice(legal), "hint")
            cache.touch()
            for v in viewers:
                assert cache.wire(v) == game.view(v).to_wire()
        game.apply(action)
        cache.touch()
    for v in viewers:
        assert cache.wire(v) == game.view(v).to_wire()


@given(
    fields=st.dictionaries(st.text(max_size=5), st.integers(-(2**63), 2**64 - 1) | st.text(max_size=5) | st.none(), max_size=20),
    tail=st.lists(
        st.tuples(st.text(min_size=6, max_size=8), st.lists(st.integers(-(2**63), 2**63 - 1), max_size=3)),
        max_size=3,
        unique_by=lambda t: t[0],
    ),
)
def test_spliced_frames_decode_like_plain_ones(fields, tail):
    spliced = frame(fields, *[(k, pack(v)) for k, v in tail])
    assert msgpack.unpackb(spliced, raw=False, strict_map_key=False) == {**fields, **dict(tail)}
