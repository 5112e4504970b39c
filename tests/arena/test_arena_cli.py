"""okgin arena account / ratings, as a user runs them (the real `okgin` entry point in a
subprocess): the key is printed once, the database is 0600 in a 0700 state directory, and
the key never appears on disk."""

from __future__ import annotations

import stat
import subprocess
import sys
from pathlib import Path

from arena.store import Store


def okgin(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "okgin", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_account_commands_end_to_end(tmp_path: Path) -> None:
    p = okgin("arena", "account", "list", cwd=tmp_path)
    assert p.returncode == 1 and "no arena database" in p.stderr
    p = okgin("arena", "account", "add", "alice", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    key = p.stdout.strip()
    assert key.startswith("okga_") and "shown once" in p.stderr
    state = tmp_path / "okgin-arena"
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    assert stat.S_IMODE((state / "arena.db").stat().st_mode) == 0o600
    for f in state.iterdir():
        assert key.encode() not in f.read_bytes(), f
    p = okgin("arena", "account", "add", "Alice", cwd=tmp_path)
    assert p.returncode == 1 and "taken" in p.stderr
    p = okgin("arena", "account", "add", "robo", "--bot", "--admin", "--key-file", "robo.key", cwd=tmp_path)
    assert p.returncode == 0 and p.stdout == "", p.stderr
    assert stat.S_IMODE((tmp_path / "robo.key").stat().st_mode) == 0o600
    robo_key = (tmp_path / "robo.key").read_text().strip()
    p = okgin("arena", "account", "ban", "alice", "--reason", "spam", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    p = okgin("arena", "account", "list", cwd=tmp_path)
    assert p.returncode == 0
    lines = p.stdout.splitlines()
    assert "alice" in lines[1] and "banned: spam" in lines[1]
    assert "robo" in lines[2] and "bot admin" in lines[2] and "active" in lines[2]
    p = okgin("arena", "account", "rotate", "robo", cwd=tmp_path)
    new = p.stdout.strip()
    with Store.open(f"sqlite:///{state / 'arena.db'}") as s:
        assert s.check_key("alice", key) is not None and s.check_key("alice", key).banned == "spam"
        assert s.check_key("robo", robo_key) is None and s.check_key("robo", new).admin
    p = okgin("arena", "account", "revoke", "nobody", cwd=tmp_path)
    assert p.returncode == 1 and "no account named 'nobody'" in p.stderr
    p = okgin("arena", "account", "add", "bad name", cwd=tmp_path)
    assert p.returncode == 1 and "ASCII" in p.stderr
    p = okgin("arena", "ratings", cwd=tmp_path)
    assert p.returncode == 0 and "oklahoma: 0 rated" in p.stdout
    p = okgin("arena", "ratings", "--rebuild", cwd=tmp_path)
    assert p.returncode == 0 and "rebuilt from 0 rated games: the same numbers" in p.stdout


def test_ratings_command_shows_boards_history_and_rebuilds(tmp_path: Path) -> None:
    from arena.store import GameResult, NewGame

    db = tmp_path / "arena.db"
    with Store.open(f"sqlite:///{db}") as s:
        for n in ("ann", "bob", "cat"):
            s.add_account(n, "bot" if n == "bob" else "human")
        for i in range(6):
            s.new_game(NewGame(f"g{i}", "oklahoma", True, ("ann", "bob"), {}, "s", "t", i))
            s.finish_game(f"g{i}", GameResult(0 if i < 5 else 1, (100, 10), "normal", i))
        s.new_game(NewGame("b", "box", True, ("ann", "bob", "cat"), {}, "s", "t", 9))
        s.finish_game("b", GameResult(2, (1, 2, 100), "normal", 9))
    p = okgin("arena", "ratings", "--variant", "oklahoma", "--db", f"sqlite:///{db}", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith("oklahoma: 2 rated") and "ann" in lines[1] and "bob" in lines[2] and "bot" in lines[2]
    assert "?" in lines[1]  # 6 games: still provisional
    p = okgin("arena", "ratings", "--history", "ann", "--db", f"sqlite:///{db}", cwd=tmp_path)
    steps = [ln for ln in p.stdout.splitlines() if ln.startswith("  ") and " -> " in ln]
    assert p.returncode == 0 and len(steps) == 7 and "(box)" in p.stdout
    p = okgin("arena", "ratings", "--rebuild", "--variant", "box", "--db", f"sqlite:///{db}", cwd=tmp_path)
    assert p.returncode == 0 and "rebuilt from 7 rated games: the same numbers" in p.stdout and "cat" in p.stdout
    with Store.open(f"sqlite:///{db}") as s:
        s.conn.execute("UPDATE ratings SET rating = 3000 WHERE name_key = 'cat'")
    p = okgin("arena", "ratings", "--rebuild", "--db", f"sqlite:///{db}", cwd=tmp_path)
    assert "the ratings CHANGED" in p.stdout


def test_account_commands_find_the_database_as_the_arena_does(tmp_path: Path, capsys, monkeypatch) -> None:
    """--config arena.toml gives the account commands the arena's own database (its state, or its
    db URL), with --state/--db over it, exactly as `okgin arena --config` resolves it."""
    from arena import accounts
    from arena.config import load_config

    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.toml").write_text(f'state = "{tmp_path / "st"}"\n')
    (tmp_path / "b.toml").write_text(f'db = "sqlite:///{tmp_path / "other.db"}"\n')
    assert accounts.main(["add", "ann", "--config", "a.toml"]) == 0
    assert accounts.main(["add", "bea", "--config", "b.toml"]) == 0
    assert accounts.main(["add", "cy", "--config", "a.toml", "--state", str(tmp_path / "st2")]) == 0
    capsys.readouterr()
    for toml, state, who in (("a.toml", None, "ann"), ("b.toml", None, "bea"), ("a.toml", str(tmp_path / "st2"), "cy")):
        cfg = load_config(tmp_path / toml, state=state)
        with Store.open(cfg.db or f"sqlite:///{cfg.state / 'arena.db'}") as s:
            assert [a.name for a in s.accounts()] == [who]
    (tmp_path / "bad.toml").write_text("shards = 'many'\n")
    assert accounts.main(["list", "--config", "bad.toml"]) == 1
    assert "shards" in capsys.readouterr().err


def test_the_per_host_connection_cap_is_a_setting(tmp_path: Path) -> None:
    """Many bots behind one address (a competition's bot server) need more than the
    referee's 512 connections per host, at the front and at each shard: bench/arena.py's
    1,000 bots on 127.0.0.1 were cut off at 512 before this setting."""
    import pytest

    from arena.config import ConfigError, load_config

    (tmp_path / "a.toml").write_text("max_connections_per_host = 4096\n")
    assert load_config(tmp_path / "a.toml").max_connections_per_host == 4096
    assert load_config(None).max_connections_per_host == 512
    (tmp_path / "b.toml").write_text("max_connections_per_host = -1\n")
    with pytest.raises(ConfigError, match="max_connections_per_host"):
        load_config(tmp_path / "b.toml")
