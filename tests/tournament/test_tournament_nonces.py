"""Participants' nonces (issue 24 item 7): deals even the organiser cannot choose.

The deals derive from the organiser's secret and every revealed nonce; a participant
that commits and withholds is left out, named and forfeits every game, without stalling
the event; a 1.4 bot
(no commitment) still plays; ``verify --nonce`` tells a participant its nonce went into
every deal, and a wrong nonce fails.
"""

from __future__ import annotations

import contextlib
import io
import json
import sqlite3
from pathlib import Path

import pytest

from competition.tournament import entropy
from competition.tournament.cli import main
from competition.tournament.store import ResultsStore
from okgin.schedule import commitments_hash, deal_key, deal_seed, nonce_commitment

from .tourkit import protobot, write_config

pytestmark = pytest.mark.timeout(240)

A, B = "a1" * 32, "b2" * 32


def test_every_nonce_changes_every_deal() -> None:
    secret = bytes(range(32))
    base = {"a": bytes(32), "b": bytes([1] * 32), "c": bytes([2] * 32)}
    key = deal_key(secret, base)
    seeds = [deal_seed(key, k) for k in range(20)]
    for name in base:
        other = deal_key(secret, {**base, name: bytes([9] * 32)})
        assert all(deal_seed(other, k) != s for k, s in enumerate(seeds)), name
    assert deal_key(secret, dict(reversed(list(base.items())))) == key  # the order given does not matter
    assert deal_key(secret, {k: v for k, v in base.items() if k != "c"}) != key  # nor can one be dropped unseen
    assert deal_key(secret, None) == deal_key(secret, {}) == secret  # no nonce: the old derivation
    # the commitments hash binds the organiser's commitment and every participant's
    com = {"a": nonce_commitment(bytes(32))}
    assert commitments_hash("00" * 32, com) != commitments_hash("11" * 32, com)


@pytest.fixture(scope="module")
def event(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """a reveals, b commits and withholds, c is a 1.4 bot, d is the SDK's built-in bot."""
    d = tmp_path_factory.mktemp("nonces")
    parts = [
        {"name": "a", "command": protobot("--random", "1", "--nonce", A)},
        {"name": "b", "command": protobot("--random", "2", "--nonce", B, "--withhold")},
        {"name": "c", "command": protobot("--random", "3")},
        {"name": "d", "bot": "random"},
    ]
    cfg = write_config(d / "n.toml", parts, tournament={"games_per_pairing": 2, "concurrency": 2, "sandbox": False},
                       rules={"target_score": 40})
    out = io.StringIO()
    mp = pytest.MonkeyPatch()
    mp.setattr(entropy, "REVEAL_TIMEOUT_S", 2.0)  # b's withheld reveal is waited for this long, no more
    try:
        with contextlib.redirect_stdout(out):
            code = main([str(cfg), "--quiet", "--keep-logs"])
    finally:
        mp.undo()
    assert code == 0, out.getvalue()
    return d / "n.sqlite", out.getvalue()


def test_the_deals_derive_from_every_revealed_nonce(event: tuple[Path, str]) -> None:
    db, out = event
    st = ResultsStore.open_existing(db)
    try:
        rec = st.entropy()
        assert rec is not None
        assert set(rec["commitments"]) == {"a", "b", "d"}
        assert rec["commitments"]["a"] == nonce_commitment(bytes.fromhex(A))
        assert set(rec["nonces"]) == {"a", "d"}  # the SDK's bot revealed by itself
        assert rec["nonces"]["a"] == A
        assert rec["withheld"] == ["b"] and rec["absent"] == ["c"]
        assert rec["commitments_hash"] == commitments_hash(st.get_meta("secret_commitment") or "", rec["commitments"])
        secret = st.secret()
        assert secret is not None
        key = deal_key(secret, {n: bytes.fromhex(v) for n, v in rec["nonces"].items()})
        games = st.games(with_records=True)
        assert len(games) == 12 and {g.seats[0] for g in games} >= {"a", "b", "c"}  # every one recorded, b and c too
        for g in games:
            assert g.seed == g.record["seed"] == deal_seed(key, g.deal) != deal_seed(secret, g.deal)
            # b withheld its nonce: it forfeits every game, resigned by the runner at the start
            if "b" in g.seats:
                assert (g.termination, g.culprit) == ("withheld", "b") and g.winner != "b", g
            else:
                assert g.termination == "normal", g
    finally:
        st.close()
    # the report names who contributed, who withheld and who sent none (its JSON too)
    rep = json.loads(db.with_name("n.json").read_text())
    assert rep["nonces"]["contributed"] == ["a", "d"] and rep["nonces"]["withheld"] == ["b"]
    assert rep["nonces"]["absent"] == ["c"] and set(rep["nonces"]["commitments"]) == {"a", "b", "d"}
    assert "participants' nonces: 2 went into every deal (a, d)" in out
    assert "committed but withheld (left out; each forfeits every game): b" in out and "sent no commitment: c" in out


def test_verify_with_a_participants_nonce(event: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    db, _ = event
    assert main(["verify", str(db), "--nonce", f"a={A}"]) == 0
    assert "ok    nonce of a: your nonce went into every deal" in capsys.readouterr().out
    assert main(["verify", str(db), "--nonce", f"a={B}"]) == 1
    assert "MISMATCH" in capsys.readouterr().out
    assert main(["verify", str(db), "--nonce", f"b={B}"]) == 1  # withheld: its nonce is in no deal
    capsys.readouterr()


def test_verify_catches_a_swapped_nonce(event: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db, _ = event
    copy = tmp_path / "t.sqlite"
    src = sqlite3.connect(db)
    dst = sqlite3.connect(copy)
    src.backup(dst)
    src.close()
    rec = json.loads(dst.execute("SELECT value FROM meta WHERE key = 'entropy'").fetchone()[0])
    rec["nonces"]["a"] = B  # an organiser who claims another nonce for a
    dst.execute("UPDATE meta SET value = ? WHERE key = 'entropy'", (json.dumps(rec),))
    dst.commit()
    dst.close()
    assert main(["verify", str(copy)]) == 1
    assert "does not hash to its stored commitment" in capsys.readouterr().out


def test_the_c_js_rust_and_java_bots_contribute_a_nonce(tmp_path: Path) -> None:
    """The example bots of the four other languages commit and reveal in a real event."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "conformance"))
    try:
        from botbuild import build
    finally:
        sys.path.pop(0)
    try:
        bots = [build(lang) for lang in ("c", "js", "rust", "java")]
    except (RuntimeError, OSError) as e:
        pytest.skip(f"cannot build the example bots here: {e}")
    parts = [{"name": b.language, "command": b.argv("--connect", "{endpoint}", "--name", "{name}")}
             for b in bots]
    # the JVM reserves its class space and heap up front: more address space than the
    # default limits' per-process fallback gives an unsandboxed bot (docs/tournaments.md, Sandbox)
    cfg = write_config(tmp_path / "l.toml", parts, clock={"move_ms": 10000}, rules={"target_score": 40},
                       tournament={"games_per_pairing": 2, "sandbox": False}, limits={"memory_mb": 16384})
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([str(cfg), "--quiet"]) == 0, out.getvalue()
    st = ResultsStore.open_existing(tmp_path / "l.sqlite")
    try:
        rec = st.entropy()
        assert rec is not None and set(rec["nonces"]) == {"c", "js", "rust", "java"}, rec
        assert rec["withheld"] == [] and rec["absent"] == []
    finally:
        st.close()


def test_a_remote_sdk_bot_contributes_through_the_gateway(tmp_path: Path) -> None:
    """``okgin bot --token T --games 0`` at the gateway commits, reveals when the gateway
    asks, prints its nonce, and that nonce checks with verify."""
    import re
    import subprocess
    import sys

    from bounded import readline

    parts = [{"name": "local", "command": protobot("--random", "3", "--nonce", A)},
             {"name": "visitor", "remote": True, "token": "visitor-5e1d7c"}]
    cfg = write_config(tmp_path / "cup.toml", parts, rules={"target_score": 40}, clock={"move_ms": 10000},
                       tournament={"games_per_pairing": 2, "gateway": "tcp://127.0.0.1:0", "sandbox": False})
    runner = subprocess.Popen([sys.executable, "-m", "okgin", "tournament", str(cfg), "--quiet"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    bot = None
    try:
        assert runner.stdout is not None
        gateway = None
        for _ in range(20):
            m = re.search(r"remote bots connect to (tcp://\S+)", readline(runner.stdout, 60, "the runner"))
            if m:
                gateway = m.group(1)
                break
        assert gateway is not None
        bot = subprocess.Popen([sys.executable, "-m", "okgin", "bot", "simple", "--connect", gateway,
                                "--token", "visitor-5e1d7c", "--name", "visitor", "--games", "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out, _ = runner.communicate(timeout=180)
        assert runner.returncode == 0, out
        _, bot_err = bot.communicate(timeout=60)
    finally:
        for p in (runner, bot):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait(30)
    m = re.search(r"my nonce ([0-9a-f]{64})", bot_err)
    assert m, bot_err
    st = ResultsStore.open_existing(tmp_path / "cup.sqlite")
    try:
        rec = st.entropy()
        assert rec is not None and rec["nonces"] == {"local": A, "visitor": m.group(1)}, rec
    finally:
        st.close()
    assert main(["verify", str(tmp_path / "cup.sqlite"), "--nonce", f"visitor={m.group(1)}"]) == 0


def test_sandboxed_bots_commit_and_reveal_through_the_referee_socket(tmp_path: Path) -> None:
    """The real path of a local bot: in its sandbox it reaches only the referee's socket,
    and its nonce still goes into every deal."""
    parts = [{"name": "a", "command": protobot("--random", "1", "--nonce", A)},
             {"name": "b", "command": protobot("--random", "2", "--nonce", B)}]
    cfg = write_config(tmp_path / "s.toml", parts, rules={"target_score": 40}, tournament={"games_per_pairing": 2})
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([str(cfg), "--quiet"]) == 0, out.getvalue()
    st = ResultsStore.open_existing(tmp_path / "s.sqlite")
    try:
        rec = st.entropy()
        assert rec is not None and rec["nonces"] == {"a": A, "b": B}, rec
        assert st.get_meta("unsandboxed") is None
    finally:
        st.close()


def test_the_gateway_keeps_a_remote_bots_first_commitment_and_only_its_matching_reveal() -> None:
    import asyncio

    import msgpack
    import zmq
    import zmq.asyncio
    from bounded import limit

    from competition.tournament.gateway import Gateway

    nonce, other = bytes.fromhex(A), bytes.fromhex(B)

    async def scenario() -> tuple[list[dict], str | None, str | None]:
        ctx = zmq.asyncio.Context()
        gw = Gateway(ctx, "tcp://127.0.0.1:0", {"far": "tok"})
        ep = await gw.start()
        s = limit(ctx.socket(zmq.DEALER), 10000)
        s.connect(ep)

        async def ask(m: dict) -> dict:
            await s.send(msgpack.packb(m))
            while True:
                got = msgpack.unpackb(await asyncio.wait_for(s.recv(), 10))
                if got["type"] != "heartbeat":
                    return got

        out = [await ask({"type": "hello", "id": 1, "protocol": 1, "role": "player", "name": "far", "token": "tok",
                          "entropy_commit": nonce_commitment(nonce)})]
        # a reconnect cannot change the commitment
        out.append(await ask({"type": "hello", "id": 2, "protocol": 1, "role": "player", "name": "far", "token": "tok",
                              "entropy_commit": nonce_commitment(other)}))
        out.append(await ask({"type": "entropy_reveal", "id": 3, "table": "cup-preflight-far", "nonce": A}))  # not asked
        await gw.request_entropy("far", "cup-preflight-far", "cd" * 32)
        out.append(msgpack.unpackb(await asyncio.wait_for(s.recv(), 10)))
        out.append(await ask({"type": "entropy_reveal", "id": 4, "table": "cup-preflight-far", "nonce": B}))  # wrong
        out.append(await ask({"type": "entropy_reveal", "id": 5, "table": "cup-preflight-far", "nonce": A}))
        commit, kept = gw.entropy_commit("far"), gw.entropy_nonce("far")
        s.close()
        await gw.close()
        ctx.term()
        return out, commit, kept

    got, commit, kept = asyncio.run(scenario())
    assert [m.get("name") if m["type"] == "error" else m["type"] for m in got] == [
        "welcome", "welcome", "forbidden", "entropy_request", "bad_message", "ok"]
    assert got[3] == {"type": "entropy_request", "table": "cup-preflight-far", "commitments_hash": "cd" * 32}
    assert commit == nonce_commitment(nonce) and kept == A


def test_a_referee_lost_during_the_nonces_stops_the_event_and_blames_no_participant() -> None:
    """Its seats' nonces could not be read: that is the organiser's failure, so the event
    stops before any game (RuntimeError: exit 1, no results file) instead of counting the
    seats as withheld and forfeiting honest participants."""
    import asyncio
    from types import SimpleNamespace

    from competition.tournament.link import RefereeGone

    class GoneLink:
        async def request(self, msg: dict, timeout: float = 0.0) -> dict:
            raise RefereeGone("its process exited")

    slot = SimpleNamespace(link=GoneLink())
    with pytest.raises(RuntimeError, match="referee was lost while collecting the participants' nonces"):
        asyncio.run(entropy.referee_seat(slot, "a", "cup-preflight-a"))  # type: ignore[arg-type]
