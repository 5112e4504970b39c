"""Fuzzing the referee (issue 9 §1): hostile input never crashes it, every reply to it
is an ``error`` of the schema, and games at other tables go on exactly as on the engine.

- Properties of the codec and the field checks (pure, Hypothesis): any bytes decode to a
  map or raise :class:`ProtocolError`; any map validates or raises ProtocolError.
- Hypothesis through the real socket: arbitrary msgpack values and near-valid messages,
  one at a time, each answered by exactly one valid reply.
- A bounded run of more than 100,000 hostile messages through the socket (in the normal
  suite, so CI runs it; about a minute on two shared cores), and a run of a million
  behind ``OKGIN_SLOW=1``. See :mod:`tests.hardening.fuzzrun`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from okgin import env
from okgin.protocol import CLIENT_TYPES, ProtocolError, decode, validate
from referee.replay import check_file

from .fuzzrun import fuzz, socket_is_usable
from .hkit import Raw, RefProc, check_error, validate_message

pytestmark = pytest.mark.timeout(900)

# msgpack-able values of every kind, nested.
leaves = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**63), 2**64 - 1), st.floats(allow_nan=True), st.text(max_size=50),
    st.binary(max_size=30), st.sampled_from(["As", "Td", "zz", "act", "prompt", "player", "oklahoma", "box", ""]),
)
values = st.recursive(
    leaves, lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5), max_leaves=12
)
fields = st.sampled_from(["table", "seq", "action", "seat", "variant", "rules", "full", "text", "protocol", "role", "name",
                          "token", "clock", "policies", "seed", "reserved", "players", "full_feed_delay_ms", "id", "kind",
                          "card"])
near_valid = st.builds(
    lambda t, extra: {"type": t, **extra},
    st.sampled_from(sorted(CLIENT_TYPES - {"bye"})),
    st.dictionaries(fields, values, max_size=6),
)


@settings(max_examples=2000)
@given(st.binary(max_size=200))
def test_any_bytes_decode_to_a_map_or_a_protocol_error(frame: bytes) -> None:
    try:
        m = decode(frame)
    except ProtocolError as e:
        assert e.name in ("bad_frame", "not_a_map", "too_large")
        return
    assert isinstance(m, dict) and all(isinstance(k, str) for k in m)


@settings(max_examples=500)
@given(st.one_of(near_valid, st.dictionaries(st.text(max_size=10), values, max_size=6)))
def test_any_map_validates_or_raises_a_protocol_error(msg: dict[str, Any]) -> None:
    frame = msgpack.packb(msg, use_bin_type=True)
    try:
        t = validate(decode(frame))
    except ProtocolError as e:
        assert e.name in ("bad_message", "unknown_type", "not_a_map", "too_large", "bad_frame")
        assert e.message
        return
    assert t in CLIENT_TYPES


@pytest.fixture(scope="module")
def fuzz_referee(tmp_path_factory: pytest.TempPathFactory):
    ref = RefProc(tmp_path_factory.mktemp("hyp"), label="hyp")
    yield ref
    ref.stop()


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(msg=st.one_of(near_valid, values))
def test_one_hostile_message_one_valid_reply(fuzz_referee: RefProc, msg: Any) -> None:
    """Each message is followed by a ``ping`` barrier: whatever the referee sent before
    the ``pong`` validates against the closed schema, and anything it said about the
    message itself is at most one reply."""
    c = Raw(fuzz_referee.endpoint, validate="none")
    try:
        c.hello("hyp")
        c.send_raw(msgpack.packb(msg, use_bin_type=True))
        c.send({"type": "ping", "id": "barrier"})
        before = []
        while True:
            m = c.recv()
            if m.get("id") == "barrier" and m["type"] == "pong":
                break
            if m["type"] == "error" and m.get("id") == "barrier":
                check_error(m)
                assert m["name"] == "hello_first" and isinstance(msg, dict) and msg.get("type") == "hello"
                break
            validate_message(m)
            before.append(m)
        errors = [m for m in before if m["type"] == "error"]
        assert len(errors) <= 1, f"one message earned {len(errors)} errors: {errors}"
        if not isinstance(msg, dict) or not isinstance(msg.get("type"), str):
            assert len(errors) == 1 and len(before) == 1, before
    finally:
        c.close()
    assert fuzz_referee.alive
    assert fuzz_referee.internal_errors() == []


def _check_run(tmp_path: Path, total: int, seed: int) -> None:
    rep, ref = fuzz(tmp_path, total, seed=seed)
    try:
        assert rep.hostile >= total
        assert ref.alive and ref.internal_errors() == [], ref.stderr()[-3000:]
        assert rep.honest_games >= 1 and rep.honest_failures == [], rep.honest_failures
        # hostile frames met every framing and shape error, and the handlers' refusals
        # (too_large needs a hard limit above max_message_bytes: 1.4's default closes the
        # connection in libzmq instead; test_ref_errors and test_ref_limits_codec cover both)
        for name in ("bad_frame", "not_a_map", "bad_message", "unknown_type", "already_welcomed",
                     "not_seated", "forbidden", "no_such_table", "stale_seq"):
            assert rep.errors[name] > 0, f"the run never provoked {name}: {rep.errors}"
        assert rep.schema_checked > 100
        socket_is_usable(ref.endpoint)
    finally:
        code = ref.stop()
    assert code == 0, ref.stderr()[-3000:]
    # every journal the referee wrote (honest games, chaos games) checks against the engine
    journals = sorted(ref.journal_dir.glob("*.jsonl"))
    assert journals
    for j in journals:
        check_file(j)


def test_fuzz_100k_hostile_messages(tmp_path: Path) -> None:
    _check_run(tmp_path, 100_000, seed=int(env.get("OKGIN_FUZZ_SEED") or "9"))


@pytest.mark.slow
@pytest.mark.timeout(3600)
@pytest.mark.parametrize("seed", [101, 202])
def test_fuzz_long(tmp_path: Path, seed: int) -> None:
    _check_run(tmp_path, 500_000, seed=seed)
