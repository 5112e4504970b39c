"""TLS on the Dask links (issue 16 part 3): ``okgin cluster certs`` and ``--dask-tls``.

A real ``dask scheduler`` and ``dask worker`` on 127.0.0.1, started with the
certificates ``okgin cluster certs`` wrote; a match over them gives the local run's
figures, and a client that has no certificate, or one the cluster's CA did not sign, is
refused with a sentence (exit status 2), never served.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("distributed")
pytest.importorskip("cryptography")

import daskcli
from bounded import readline
from tournament.test_tournament_languages import build_c_bot

from competition.cluster.certs import dask_cli_args, load_security
from okgin.protocol import decode, encode

ROOT = daskcli.ROOT
START_S = daskcli.START_S
RUN_S = 240.0
_env = daskcli.env
_stop = daskcli.stop


def _okgin(*args: str, timeout: float = RUN_S) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "okgin", *args], cwd=ROOT, env=_env(), capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("certs") / "cluster"
    out = _okgin("cluster", "certs", str(d), timeout=60)
    assert out.returncode == 0, out.stderr
    return d


@pytest.fixture(scope="module")
def tls_cluster(certs: Path) -> Iterator[str]:
    """A TLS scheduler and one TLS worker on 127.0.0.1; yields the scheduler's address."""
    sched, address = daskcli.scheduler(dask_cli_args(certs, "scheduler"), scheme="tls")
    try:
        work = daskcli.worker(address, dask_cli_args(certs, "worker"))
        try:
            yield address
        finally:
            _stop(work)
    finally:
        _stop(sched)


def _figures(out: str) -> dict[str, object]:
    """A match's JSON without what differs by nature between runs: time and route."""
    data = json.loads(out)
    data.pop("elapsed_s")
    data.pop("via")
    return data


def test_certs_are_written_with_private_keys_closed(certs: Path) -> None:
    names = sorted(p.name for p in certs.iterdir())
    assert names == sorted(["ca.pem", "ca-key.pem", "scheduler.pem", "scheduler-key.pem", "worker.pem", "worker-key.pem",
                            "client.pem", "client-key.pem"])
    for key in certs.glob("*-key.pem"):
        assert stat.S_IMODE(key.stat().st_mode) == 0o600, key
    again = _okgin("cluster", "certs", str(certs), timeout=60)
    assert again.returncode == 2 and "exists" in again.stderr and "--force" in again.stderr
    sec = load_security(certs)
    assert sec.require_encryption and sec.tls_client_cert == str(certs / "client.pem")


def test_load_security_names_what_is_missing(tmp_path: Path) -> None:
    from competition.cluster.certs import CertsError

    with pytest.raises(CertsError, match="no such directory"):
        load_security(tmp_path / "nope")
    (tmp_path / "ca.pem").write_text("x")
    with pytest.raises(CertsError, match=r"client\.pem, client-key\.pem"):
        load_security(tmp_path)


def test_a_match_over_tls_gives_the_local_figures(tls_cluster: str, certs: Path) -> None:
    args = ["match", "simple", "random", "--games", "24", "--seed", "tls", "--json"]
    local = _okgin(*args)
    remote = _okgin(*args, "--dask", tls_cluster, "--dask-tls", str(certs))
    assert local.returncode == 0, local.stderr
    assert remote.returncode == 0, remote.stderr
    assert json.loads(remote.stdout)["via"] == f"dask {tls_cluster}"
    assert json.dumps(_figures(remote.stdout), sort_keys=True) == json.dumps(_figures(local.stdout), sort_keys=True)


def test_a_client_without_the_clusters_certificate_is_refused(tls_cluster: str, tmp_path: Path) -> None:
    base = ["match", "simple", "random", "--games", "2", "--dask-timeout", "5"]
    # No certificates at all: refused before any byte is sent in clear.
    bare = _okgin(*base, "--dask", tls_cluster)
    assert bare.returncode == 2 and "--dask-tls" in bare.stderr, bare.stderr
    # Plain TCP to the TLS port: the scheduler never completes a handshake with it.
    plain = _okgin(*base, "--dask", tls_cluster.replace("tls://", "tcp://"))
    assert plain.returncode == 2 and "cannot" in plain.stderr, plain.stderr
    # A well-formed set from another CA: the scheduler's mutual TLS rejects it.
    other = tmp_path / "other"
    assert _okgin("cluster", "certs", str(other), timeout=60).returncode == 0
    foreign = _okgin(*base, "--dask", tls_cluster, "--dask-tls", str(other))
    assert foreign.returncode == 2 and "cannot" in foreign.stderr, foreign.stderr
    assert '"games"' not in foreign.stdout


# ------------------------------------------------ the runner's ZeroMQ links: CURVE
def _gen_keys(directory: Path, name: str) -> Path:
    out = _okgin("referee", "--gen-keys", str(directory), "--key-name", name, timeout=60)
    assert out.returncode == 0, out.stderr
    return directory / f"{name}.key_secret"


@pytest.fixture(scope="module")
def curve_referee(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, object]]:
    """``okgin referee --curve-keys --allow`` on 127.0.0.1 that allows the organiser's key only."""
    root = tmp_path_factory.mktemp("curve")
    _gen_keys(root / "referee", "server")
    org = _gen_keys(root / "org", "org")
    stranger = _gen_keys(root / "stranger", "stranger")
    (root / "allowed").mkdir()
    shutil.copy(root / "org" / "org.key", root / "allowed" / "org.key")
    proc = subprocess.Popen([sys.executable, "-m", "okgin", "referee", "--bind", "tcp://127.0.0.1:0", "--journal-dir",
                             str(root / "journals"), "--curve-keys", str(root / "referee"), "--allow", str(root / "allowed"),
                             "--admin-key", "k"], cwd=ROOT, env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        m = re.search(r"listening on (tcp://127\.0\.0\.1:\d+)", readline(proc.stdout, START_S, "the CURVE referee"))
        assert m, "the referee printed no endpoint"
        yield {"endpoint": m.group(1), "server": root / "referee" / "server.key", "org": org, "stranger": stranger,
               "root": root}
    finally:
        _stop(proc)


def _admin_hello(endpoint: str, curve: object) -> dict[str, object]:
    import zmq.asyncio

    from competition.tournament.link import AdminLink

    async def go() -> dict[str, object]:
        ctx = zmq.asyncio.Context()
        link = AdminLink(ctx, endpoint, "organiser-test", "k", curve=curve)  # type: ignore[arg-type]
        try:
            return await asyncio.wait_for(link.connect(timeout=5.0), 30)
        finally:
            await link.close()
            ctx.term()

    return asyncio.run(go())


def test_the_runners_admin_link_speaks_curve(curve_referee: dict[str, object]) -> None:
    from competition.tournament.link import CurveClient, RefereeGone

    ep = str(curve_referee["endpoint"])
    keys = CurveClient.load(curve_referee["server"], curve_referee["org"])  # type: ignore[arg-type]
    welcome = _admin_hello(ep, keys)
    assert welcome["type"] == "welcome" and welcome["role"] == "admin"
    with pytest.raises(RefereeGone, match="--allow"):
        _admin_hello(ep, CurveClient.load(curve_referee["server"], curve_referee["stranger"]))  # type: ignore[arg-type]


def test_the_runner_takes_and_resigns_a_seat_over_curve(curve_referee: dict[str, object]) -> None:
    """The runner's other sockets to a CURVE referee (taking a crashed bot's seat) are given
    the admin link's keys by their caller: no table of keys by endpoint, held for the process."""
    import zmq.asyncio

    from competition.tournament.link import AdminLink, CurveClient, resign_seat

    ep = str(curve_referee["endpoint"])
    keys = CurveClient.load(curve_referee["server"], curve_referee["org"])  # type: ignore[arg-type]

    async def go() -> tuple[str, str]:
        ctx = zmq.asyncio.Context()
        link = AdminLink(ctx, ep, "organiser-test", "k", curve=keys)
        try:
            await asyncio.wait_for(link.connect(timeout=5.0), 30)
            created = await link.request({"type": "create_table", "table": "cv", "reserved": True})
            toks = created["seat_tokens"]
            took, held = await asyncio.wait_for(asyncio.gather(
                resign_seat(ctx, ep, toks[0], "cv", timeout=30, curve=link.curve),
                resign_seat(ctx, ep, toks[1], "cv", timeout=30, resign=False, curve=link.curve)), 60)
            return took, held
        finally:
            await link.close()
            ctx.term()

    assert asyncio.run(go()) == ("resigned", "held until the end")


def test_the_runners_admin_link_reads_the_sdks_variables(
    curve_referee: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    from competition.tournament.link import CurveClient

    monkeypatch.setenv("OKGIN_CURVE_SERVER_KEY", str(curve_referee["server"]))
    monkeypatch.setenv("OKGIN_CURVE_CLIENT_KEY", str(curve_referee["org"]))
    keys = CurveClient.from_env()
    assert keys is not None
    assert _admin_hello(str(curve_referee["endpoint"]), keys)["type"] == "welcome"


def test_the_gateway_speaks_curve(curve_referee: dict[str, object]) -> None:
    """A CURVE gateway welcomes an allowed remote bot and never answers a plain one."""
    import zmq
    import zmq.asyncio
    from bounded import dealer

    from competition.tournament.gateway import Gateway

    root = Path(str(curve_referee["root"]))
    _gen_keys(root / "gateway", "server")
    bot = _gen_keys(root / "bots", "alice")
    (root / "gw-allowed").mkdir()
    shutil.copy(root / "bots" / "alice.key", root / "gw-allowed" / "alice.key")
    server_public, _ = zmq.auth.load_certificate(str(root / "gateway" / "server.key"))
    public, secret = zmq.auth.load_certificate(str(bot))
    assert secret is not None
    hello = encode({"type": "hello", "id": 1, "protocol": 1, "role": "player", "name": "alice", "token": "tok-a"})

    async def go() -> tuple[dict[str, object], bool]:
        ctx = zmq.asyncio.Context()
        gw = Gateway(ctx, "tcp://127.0.0.1:0", {"alice": "tok-a"}, curve_keys=str(root / "gateway"),
                     curve_allow=str(root / "gw-allowed"))
        good = dealer(curve=(server_public, public, secret))
        plain = dealer()
        try:
            ep = await asyncio.wait_for(gw.start(), 30)
            good.connect(ep)
            plain.connect(ep)
            good.send(hello, zmq.NOBLOCK)
            with contextlib.suppress(zmq.Again):
                plain.send(hello, zmq.NOBLOCK)
            loop = asyncio.get_running_loop()
            welcome = decode(await loop.run_in_executor(None, good.recv))
            # The good bot's answer came; a plain one, if it were let in, would have had
            # its own by now too (same gateway loop), so a short poll decides.
            answered = bool(await loop.run_in_executor(None, plain.poll, 2000))
            return welcome, answered
        finally:
            good.close(0)
            plain.close(0)
            await gw.close()
            ctx.term()

    welcome, plain_answered = asyncio.run(go())
    assert welcome["type"] == "welcome" and welcome["name"] == "alice"
    assert not plain_answered


def test_a_tournament_plays_a_remote_bot_through_a_curve_gateway(tmp_path: Path) -> None:
    """[tournament] gateway_curve_keys / gateway_allow: the remote bot (okgin bot, with the
    SDK's OKGIN_CURVE_* variables) plays every game over CURVE; the results are whole."""
    from daskkit import write_config

    c_bot = build_c_bot()  # built here: in a fresh clone no earlier test has built it
    _gen_keys(tmp_path / "gateway", "server")
    visitor = _gen_keys(tmp_path / "bots", "visitor")
    (tmp_path / "allowed").mkdir()
    shutil.copy(tmp_path / "bots" / "visitor.key", tmp_path / "allowed" / "visitor.key")
    cfg = write_config(tmp_path / "cup.toml", [
        {"name": "c-local", "command": [str(c_bot), "--connect", "{endpoint}", "--name", "{name}"]},
        {"name": "visitor", "remote": True, "token": "visitor-curve-1"},
    ], tournament={"seed": "curve-gw", "games_per_pairing": 2, "gateway": "tcp://127.0.0.1:0",
                   "gateway_curve_keys": "gateway", "gateway_allow": "allowed"},
        rules={"target_score": 40}, clock={"move_ms": 10000})
    runner = subprocess.Popen([sys.executable, "-m", "okgin", "tournament", str(cfg), "--quiet"], cwd=tmp_path, env=_env(),
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    bot = None
    try:
        assert runner.stdout is not None
        endpoint = None
        while endpoint is None:
            line = readline(runner.stdout, START_S, "the runner")
            assert line, "the runner ended without printing the gateway's endpoint"
            m = re.search(r"remote bots connect to (tcp://\S+)", line)
            endpoint = m.group(1) if m else None
        bot_env = {**_env(), "OKGIN_CURVE_SERVER_KEY": str(tmp_path / "gateway" / "server.key"),
                   "OKGIN_CURVE_CLIENT_KEY": str(visitor)}
        bot = subprocess.Popen([sys.executable, "-m", "okgin", "bot", "simple", "--connect", endpoint, "--token",
                                "visitor-curve-1", "--name", "visitor", "--games", "0", "--seed", "7"], cwd=tmp_path,
                               env=bot_env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True)
        _, err = runner.communicate(timeout=RUN_S)
        assert runner.returncode == 0, err
        _, bot_err = bot.communicate(timeout=60)
        assert bot.returncode == 0, bot_err
    finally:
        for p in (bot, runner):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait(30)
    from competition.tournament.store import ResultsStore

    st = ResultsStore.open_existing(tmp_path / "cup.sqlite")
    try:
        games = st.games()
    finally:
        st.close()
    assert len(games) == 2 and all(g.termination == "normal" for g in games)


def test_gateway_curve_keys_need_an_allow_list(tmp_path: Path) -> None:
    from competition.tournament.config import ConfigError, parse_config

    with pytest.raises(ConfigError, match="go together"):
        parse_config({"tournament": {"gateway": "tcp://127.0.0.1:0", "gateway_curve_keys": "keys"},
                      "participant": [{"name": "a", "bot": "simple"}, {"name": "b", "remote": True, "token": "t"}]},
                     config_dir=tmp_path)
