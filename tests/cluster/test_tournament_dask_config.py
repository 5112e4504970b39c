"""The Dask parts of a tournament that need no cluster: the config, the arguments, the
resources arithmetic and the driver's refusal to record a game twice."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from competition.tournament.cli import main
from competition.tournament.config import ConfigError, parse_config
from competition.tournament.runner import RunOptions
from competition.tournament.schedule import Schedule
from competition.tournament.store import GameResult, ResultsStore

BASE: dict[str, Any] = {"tournament": {"name": "dk", "seed": "x"}}


def config(*parts: dict[str, Any], **more: Any) -> Any:
    return parse_config({**BASE, **more, "participant": list(parts)}, ".")


def test_cluster_section_and_resources_are_read() -> None:
    cfg = config({"name": "a", "bot": "random", "resources": {"GPU": 1, "licence": 0.5}}, {"name": "b", "bot": "simple"},
                 cluster={"scheduler": "tcp://10.0.0.1:8786", "tls": "certs", "timeout": 30})
    assert cfg.participant("a").resources == (("GPU", 1.0), ("licence", 0.5))
    assert cfg.participant("b").resources == ()
    assert (cfg.cluster_scheduler, cfg.cluster_tls, cfg.cluster_timeout) == ("tcp://10.0.0.1:8786", "certs", 30.0)
    # How, not what: neither changes the tournament a --resume may continue.
    plain = config({"name": "a", "bot": "random"}, {"name": "b", "bot": "simple"})
    assert cfg.fingerprint() == plain.fingerprint()


@pytest.mark.parametrize(("part", "more", "says"), [
    ({"resources": {"GPU": 0}}, {}, "participant[0].resources.GPU must be a positive number"),
    ({"resources": {"GPU": "one"}}, {}, "participant[0].resources.GPU must be a positive number"),
    ({"resources": {}}, {}, "participant[0].resources must be a table of resource amounts"),
    ({"resources": {"a b": 1}}, {}, "'a b' is not a resource name"),
    ({}, {"cluster": {"schedular": "x"}}, "unknown key(s) schedular in [cluster]"),
    ({}, {"cluster": {"timeout": 0}}, "cluster.timeout must be between"),
])
def test_bad_cluster_settings_are_named(part: dict[str, Any], more: dict[str, Any], says: str) -> None:
    with pytest.raises(ConfigError) as e:
        config({"name": "a", "bot": "random", **part}, {"name": "b", "bot": "simple"}, **more)
    assert says in str(e.value)


def test_a_remote_participant_has_no_resources() -> None:
    with pytest.raises(ConfigError, match="resources"):
        config({"name": "a", "remote": True, "resources": {"GPU": 1}}, {"name": "b", "bot": "simple"},
               tournament={"name": "dk", "gateway": "tcp://127.0.0.1:7200"})


def test_a_game_holds_the_sum_of_its_participants_resources() -> None:
    from competition.cluster.tournament import offers, resources_of

    cfg = config({"name": "a", "bot": "random", "resources": {"GPU": 1}}, {"name": "b", "bot": "simple",
                 "resources": {"GPU": 1, "licence": 1}}, {"name": "c", "bot": "simple"})
    assert resources_of(cfg, ("a", "b")) == {"GPU": 2.0, "licence": 1.0}
    assert resources_of(cfg, ("c", "a")) == {"GPU": 1.0}
    assert resources_of(cfg, ("c",)) == {}
    assert offers({"GPU": 2, "licence": 1}, {"GPU": 2.0, "licence": 1.0})
    assert not offers({"GPU": 1}, {"GPU": 2.0})
    assert offers({}, {})


def test_dask_and_local_referees_do_not_mix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "dk.toml"
    cfg.write_text('[[participant]]\nname = "a"\nbot = "random"\n[[participant]]\nname = "b"\nbot = "simple"\n')
    assert main([str(cfg), "--dask", "local", "--referees", "2"]) == 2
    assert "--referees and --referee-endpoints do not apply" in capsys.readouterr().err
    assert main([str(cfg), "--dask", "local", "--dask-timeout", "0"]) == 2
    assert "--dask-timeout must be positive" in capsys.readouterr().err
    assert not (tmp_path / "dk.sqlite").exists()


def test_remote_participants_are_refused_before_any_connection(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("distributed")
    cfg = tmp_path / "dk.toml"
    cfg.write_text('[tournament]\ngateway = "tcp://127.0.0.1:7299"\n[[participant]]\nname = "a"\nbot = "random"\n'
                   '[[participant]]\nname = "far"\nremote = true\n')
    assert main([str(cfg), "--dask", "tcp://127.0.0.1:9", "--quiet"]) == 2
    out = capsys.readouterr()
    assert "remote participants (far)" in out.err and "without --dask" in out.err
    assert "connect to tcp://127.0.0.1:7299" not in out.out  # no gateway was opened for them
    assert not (tmp_path / "dk.sqlite").exists()


def test_a_game_that_comes_back_twice_is_recorded_once(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    from competition.cluster.tournament import DaskExecutor
    from competition.tournament.runner import Runner

    cfg = config({"name": "a", "bot": "random"}, {"name": "b", "bot": "simple"})
    store = ResultsStore.for_run(cfg, tmp_path / "dk.sqlite", resume=False)
    try:
        runner = Runner(cfg, RunOptions(dask="local", progress=False), store, DaskExecutor)
        sg = Schedule(cfg, store.secret())[0]
        g = GameResult(index=sg.index, key=sg.key, deal=sg.deal, seating=sg.seating, seed=sg.seed, seats=sg.seats,
                       scores=(100, 0), winner="a", termination="normal", culprit=None, reason="a won", hands=1,
                       referee="tcp://127.0.0.1:1 on tcp://127.0.0.1:2")
        runner.record(g)
        runner.record(g)  # a worker's task that finished twice, say
        assert store.count_games() == 1
        assert [e[1] for e in store.events()].count("duplicate") == 1
    finally:
        store.close()


def test_workers_are_not_sent_the_organisers_secrets(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    from competition.cluster.tournament import DaskExecutor

    cfg = parse_config({"tournament": {"name": "dk", "secret": "ab" * 32, "admin_key": "k3y"},
                        "participant": [{"name": "a", "bot": "random"}, {"name": "b", "bot": "simple"}]}, ".")
    store = ResultsStore.for_run(cfg, tmp_path / "dk.sqlite", resume=False)
    try:
        sent = DaskExecutor(cfg, RunOptions(dask="local", progress=False), store, tmp_path / "dk-run").worker_cfg
    finally:
        store.close()
    assert (sent.secret, sent.seed, sent.admin_key, sent.fixed_secret) == (None, None, "", None)
    assert sent.participants == cfg.participants and sent.rules == cfg.rules  # the games are the same
