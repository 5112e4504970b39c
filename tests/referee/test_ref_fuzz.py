"""Bad input of every kind: random frames and random maps of known message types with
random field values, from a fresh connection and from players at a running game. The
referee answers each with a reply or an error (never an ``internal`` one), keeps serving,
and the game it hosts stays consistent."""

from __future__ import annotations

from typing import Any

import msgpack
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from refharness import Client, RefereeThread

from okgin.protocol import CLIENT_TYPES
from okgin.protocol.catalogue import FIELDS

FIELD_NAMES = sorted({f for fields in FIELDS.values() for f in fields} | {"id", "type"})

leaves = (
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats(allow_nan=False) | st.text(max_size=12)
    | st.binary(max_size=12) | st.sampled_from(["t", "g", "As", "Td", "oklahoma", "box", "player", "admin", "pass", "knock"])
)
values = st.recursive(
    leaves,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8) | st.sampled_from(FIELD_NAMES), inner, max_size=4)
    ),
    max_leaves=12,
)
typed_maps = st.builds(
    lambda t, fields: {"type": t, **fields},
    st.sampled_from(sorted(CLIENT_TYPES)),
    st.dictionaries(st.sampled_from(FIELD_NAMES), values, max_size=6),
)
frames = st.one_of(
    st.binary(max_size=64),
    values.map(lambda v: msgpack.packb(v, use_bin_type=True)),
    typed_maps.map(lambda m: msgpack.packb(m, use_bin_type=True)),
)


class Scene:
    """One referee for the whole fuzz run, with a game in progress to poke at."""

    def __init__(self) -> None:
        self.r = RefereeThread(admin_key=None, open_admin=True)  # admin open: its requests fuzzed too
        self.players = [Client(self.r.endpoint, validate="none"), Client(self.r.endpoint, validate="none")]
        for i, c in enumerate(self.players):
            c.hello(f"p{i}")
            c.request({"type": "join", "table": "g"}, "seated")

    def ping(self, c: Client) -> None:
        rid = c.next_id()
        c.send({"type": "ping", "id": rid}, check=False)
        c.wait_for(lambda m: m.get("id") == rid and m["type"] in ("pong", "error"))


SCENE: Scene | None = None


def scene() -> Scene:
    global SCENE
    if SCENE is None:
        SCENE = Scene()
    return SCENE


def teardown_module() -> None:
    if SCENE is not None:
        for c in SCENE.players:
            c.close()
        SCENE.r.stop()


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(frame=frames, who=st.integers(0, 2))
def test_fuzzed_frames_never_break_the_referee(frame: bytes, who: int) -> None:
    sc = scene()
    if who == 2:
        c = Client(sc.r.endpoint, validate="none")
        c.send_raw(frame)
        m = c.recv()  # every frame to a fresh connection is answered
        assert m["type"] in ("welcome", "error"), m
        c.close()
    else:
        c = sc.players[who]
        c.send_raw(frame)
        sc.ping(c)
    stats: dict[str, Any] = sc.r.call(lambda: dict(sc.r.ref.stats))
    assert stats["internal"] == 0, "a fuzzed frame hit a referee bug"
    # the hosted game is still consistent: its record replays through the engine
    sc.r.call(
        lambda: (
            sc.r.ref.tables["g"].game is None
            or type(sc.r.ref.tables["g"].game).from_record(sc.r.ref.tables["g"].game.to_record())
        )
    )
