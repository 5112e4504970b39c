"""The tournament file: what it accepts, what it refuses and how clearly it says so."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from competition.tournament.config import ConfigError, load_config, parse_config

MINIMAL = {
    "tournament": {"seed": "s"},
    "participant": [{"name": "a", "bot": "random"}, {"name": "b", "bot": "simple"}],
}


def cfg_with(**sections: object) -> dict:
    data = {k: (dict(v) if isinstance(v, dict) else list(v)) for k, v in MINIMAL.items()}  # type: ignore[call-overload]
    for k, v in sections.items():
        data[k] = v
    return data


def error_of(data: dict) -> str:
    with pytest.raises(ConfigError) as e:
        parse_config(data)
    return str(e.value)


def test_minimal_config_defaults() -> None:
    c = parse_config(MINIMAL)
    assert c.format == "round_robin"
    assert c.games_per_pairing == 2 and c.duplicate
    assert c.rules.variant == "oklahoma"
    assert c.policies.timeout == "forfeit" and c.policies.illegal == "forfeit" and c.policies.illegal_limit == 1
    assert not c.time_control.limited
    assert [p.kind for p in c.participants] == ["bot", "bot"]


def test_the_documented_example_parses() -> None:
    """docs/tournaments.md carries a complete example; it must stay valid."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "tournaments.md").read_text()
    start = doc.index("```toml\n") + len("```toml\n")
    example = doc[start: doc.index("```", start)]
    c = parse_config(tomllib.loads(example))
    kinds = {p.kind for p in c.participants}
    assert kinds == {"bot", "command", "remote"}
    assert c.time_control.move_ms > 0


def test_three_kinds_of_participant() -> None:
    c = parse_config(cfg_with(
        tournament={"seed": 1, "gateway": "tcp://127.0.0.1:0"},
        participant=[
            {"name": "r", "bot": "random"},
            {"name": "c", "command": "./bot --connect {endpoint}", "cwd": "clients/c"},
            {"name": "far", "remote": True, "token": "secret-1"},
        ],
    ))
    r, cmd, far = c.participants
    assert r.kind == "bot" and r.bot == "random"
    assert cmd.kind == "command" and cmd.command == ("./bot", "--connect", "{endpoint}")
    assert far.kind == "remote" and far.token == "secret-1"
    assert c.seed == "1"


@pytest.mark.parametrize(
    ("participant", "needle"),
    [
        ({"name": "x"}, "exactly one of"),
        ({"name": "x", "bot": "random", "command": ["a"]}, "it has bot and command"),
        ({"name": "bad name", "bot": "random"}, "participant[1].name"),
        ({"name": "x", "command": ["bot", "{endpont}"]}, "unknown placeholder {endpont}"),
        # A seat token on a command line is readable by every local user (issue 24).
        ({"name": "x", "command": ["bot", "--token", "{token}"]}, "read it from the environment variable $OKGIN_TOKEN"),
        ({"name": "x", "command": "bot --token={token}"}, "where any local user can read it"),
        ({"name": "x", "command": []}, "is empty"),
        ({"name": "x", "command": 5}, "must be a string or a list of strings"),
        ({"name": "x", "remote": False}, "must be true"),
        ({"name": "x", "bot": "random", "token": "t"}, "only remote bots"),
        ({"name": "x", "bot": "random", "colour": "red"}, "unknown key(s) colour in [participant[1]]"),
        ({"name": "a", "bot": "random"}, "repeated: a"),
    ],
)
def test_bad_participants_are_named(participant: dict, needle: str) -> None:
    msg = error_of(cfg_with(participant=[{"name": "a", "bot": "random"}, participant]))
    assert needle in msg


@pytest.mark.parametrize(
    ("tournament", "needle"),
    [
        ({"format": "swiss"}, "tournament.format must be one of round_robin, gauntlet, box, sprt"),
        ({"games_per_pairing": 3}, "not a multiple of 2"),
        ({"games_per_pairing": 0}, "between 1 and"),
        ({"games_per_pairing": "4"}, "must be a whole number"),
        ({"format": "gauntlet"}, "needs tournament.champion"),
        ({"format": "gauntlet", "champion": "zed"}, "'zed' is not a participant"),
        ({"champion": "a"}, "only applies to format = \"gauntlet\""),
        ({"format": "box"}, "at least three participants"),
        ({"seed": 1.5}, "tournament.seed must be a string or a whole number"),
        ({"concurrency": 0}, "tournament.concurrency must be between 1 and 256"),
        # HOST:PORT is welcome (okgin.endpoint)
        ({"referee_endpoints": ["localhost"]}, "tournament.referee_endpoints: 'localhost': no port"),
        ({"referees": 2, "referee_endpoints": ["tcp://127.0.0.1:7117"]}, "not both"),
        ({"typo": 1}, "unknown key(s) typo in [tournament]"),
    ],
)
def test_bad_tournament_keys(tournament: dict, needle: str) -> None:
    assert needle in error_of(cfg_with(tournament={"seed": "s", **tournament}))


def test_box_needs_multiples_of_six_with_duplicate_deals() -> None:
    parts = [{"name": n, "bot": "random"} for n in "abc"]
    assert "not a multiple of 6" in error_of(cfg_with(tournament={"format": "box", "games_per_pairing": 4}, participant=parts))
    c = parse_config(cfg_with(tournament={"format": "box", "games_per_pairing": 4, "duplicate": False}, participant=parts))
    assert c.rules.variant == "box" and c.seatings_per_deal == 1


def test_rules_are_checked_by_the_engine() -> None:
    assert "[rules]: unknown rule option(s) knock" in error_of(cfg_with(rules={"knock": 3}))
    assert "knock_limit must be" in error_of(cfg_with(rules={"knock_limit": 11}))
    assert "does not fit format" in error_of(cfg_with(rules={"variant": "box"}))
    c = parse_config(cfg_with(rules={"knock_limit": 10, "undercut_bonus": 25}))
    assert c.rules.undercut_bonus == 25


def test_clock_and_policies_follow_the_protocol() -> None:
    c = parse_config(cfg_with(clock={"move_ms": 5000, "bank_ms": 60000, "increment_ms": 100},
                              policies={"timeout": "default_move", "illegal": "reprompt", "illegal_limit": 3}))
    assert c.time_control.to_wire() == {"move_ms": 5000, "bank_ms": 60000, "increment_ms": 100, "grace_ms": 1000}
    assert c.policies.to_wire()["illegal_limit"] == 3
    assert "increment_ms is added to a bank" in error_of(cfg_with(clock={"increment_ms": 100}))
    assert "policies.timeout must be one of forfeit, default_move" in error_of(cfg_with(policies={"timeout": "ignore"}))
    assert "clock.move_ms must be a whole number" in error_of(cfg_with(clock={"move_ms": 1.5}))
    assert "[clock] table" in error_of(cfg_with(time_control={"move": 1}))


def test_sprt_section() -> None:
    ok = parse_config(cfg_with(tournament={"seed": "s", "format": "sprt"},
                               sprt={"candidate": "b", "baseline": "a", "elo0": 0, "elo1": 50, "max_games": 100}))
    assert ok.sprt is not None and ok.sprt.candidate == "b" and ok.sprt.elo1 == 50
    assert "sprt.candidate is required" in error_of(cfg_with(tournament={"seed": "s", "format": "sprt"}, sprt={}))
    assert "elo1 (0) must be greater" in error_of(
        cfg_with(tournament={"format": "sprt"}, sprt={"candidate": "a", "baseline": "b", "elo0": 5, "elo1": 0}))
    assert "needs format = \"sprt\"" in error_of(cfg_with(sprt={"candidate": "a", "baseline": "b"}))
    three = MINIMAL["participant"] + [{"name": "c", "bot": "random"}]  # type: ignore[operator]
    assert "exactly two participants" in error_of(
        cfg_with(tournament={"format": "sprt"}, participant=three, sprt={"candidate": "a", "baseline": "b"}))


def test_fingerprint_ignores_how_but_not_what() -> None:
    base = parse_config(MINIMAL)
    faster = parse_config(cfg_with(tournament={"seed": "s", "concurrency": 8, "referees": 2}))
    other_seed = parse_config(cfg_with(tournament={"seed": "t"}))
    assert base.fingerprint() == faster.fingerprint()
    assert base.fingerprint() != other_seed.fingerprint()


def test_load_config_reports_file_and_toml_errors(tmp_path: Path) -> None:
    p = tmp_path / "cup.toml"
    p.write_text("[tournament\nseed = 1\n")
    with pytest.raises(ConfigError, match=r"cup\.toml is not valid TOML"):
        load_config(p)
    p.write_text('[tournament]\nseed = 1\n[[participant]]\nname = "a"\nbot = "random"\n')
    with pytest.raises(ConfigError, match=r"cup\.toml: a round robin needs at least two participants"):
        load_config(p)
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.toml")
    p.write_text('[tournament]\nseed = 1\ndatabase = "out/x.sqlite"\n[[participant]]\nname = "a"\nbot = "random"\n'
                 '[[participant]]\nname = "b"\nbot = "random"\n')
    c = load_config(p)
    assert c.name == "cup"
    assert c.database_path == tmp_path / "out" / "x.sqlite"
    assert c.output_path == tmp_path / "out"
