"""The SDK's arena side (protocol 1.6, protocol.md §19), without an arena: what the client
sends (hello with account and key, the arena's requests), how it reads the arena's
messages, where it takes its key from, and how ``okgin bot --arena`` words its refusals.

The games themselves are played against a real ``okgin arena`` in
tests/clients/test_cl_arena_play.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from clients.sdk import requests as rq
from clients.sdk.arena import (
    ArenaClient,
    KeyFileError,
    arena_key,
    describe_refusal,
    private_key_file,
    read_key,
    shard_curve,
)
from clients.sdk.errors import RefereeError
from clients.sdk.messages import (
    ChallengeClosed,
    ChallengeOffer,
    ErrorMessage,
    GameOver,
    GameReady,
    Leaderboard,
    LobbyState,
    Sought,
    Welcome,
    parse_message,
)
from okgin.protocol import validate
from okgin.protocol.session import Session

KEY = "okga_" + "k" * 43


def test_hello_carries_account_and_key_only_when_given() -> None:
    plain = Session("ann").hello(0.0)
    assert "account" not in plain and "key" not in plain
    h = Session("ann", account="ann", key=KEY).hello(0.0)
    assert h["account"] == "ann" and h["key"] == KEY and h["role"] == "player"


def test_a_resume_authenticates_again() -> None:
    s = Session("ann", account="ann", key=KEY)
    s.hello(0.0)
    s.receive({"type": "welcome", "id": 1, "token": "t" * 32, "heartbeat_ms": 1000, "liveness": 3}, 0.1)
    again = s.hello(1.0)
    assert again["token"] == "t" * 32 and again["account"] == "ann" and again["key"] == KEY


def test_the_key_is_never_in_a_repr() -> None:
    a = ArenaClient("tcp://127.0.0.1:1", "ann", KEY)
    assert KEY not in repr(a) and KEY not in repr(a.client)
    ready = parse_message(_game_ready())
    assert "secret-seat-token" not in repr(ready)


@pytest.mark.parametrize(
    "msg",
    [
        rq.seek("oklahoma"),
        rq.seek("box", "blitz", False),
        rq.challenge(["bob"], "oklahoma", "standard", True),
        rq.challenge(["bob", "cyd"], "box"),
        rq.accept("c1"),
        rq.decline("c1"),
        rq.cancel(seek_id="s1"),
        rq.cancel(challenge_id="c1"),
        rq.lobby(),
        rq.leaderboard("box", 50, 100),
    ],
)
def test_requests_have_the_catalogue_shape(msg: dict) -> None:
    """Every arena request the SDK builds passes the protocol core's own check (the
    catalogue of 1.6), so a real arena never answers bad_message to the SDK."""
    from okgin.protocol.catalogue import FIELDS

    if msg["type"] not in FIELDS:
        pytest.skip("the 1.6 catalogue has not landed in this tree yet")
    assert validate({**msg, "id": 1}) == msg["type"]


def test_cancel_names_exactly_one_thing() -> None:
    with pytest.raises(ValueError):
        rq.cancel()
    with pytest.raises(ValueError):
        rq.cancel(seek_id="s", challenge_id="c")


def _game_ready() -> dict:
    return {
        "type": "game_ready", "game": "g7", "endpoint": "tcp://127.0.0.1:9", "server_key": None, "table": "a-g7",
        "token": "secret-seat-token", "seat": 1, "variant": "oklahoma", "clock": {"initial_ms": 60000}, "rated": True,
        "players": [{"account": "bob", "kind": "bot", "rating": 1500}, {"account": "ann", "kind": "human", "rating": 1612}],
        "show_up_ms": 30000,
    }


def test_the_arena_messages_parse_to_their_types() -> None:
    ready = parse_message(_game_ready())
    assert isinstance(ready, GameReady) and ready.token == "secret-seat-token" and ready.seat == 1
    over = parse_message({"type": "game_over", "game": "g7", "result": "win", "scores": [12, 104], "termination": "normal",
                          "rating": {"before": 1612, "after": 1630, "deviation": 80, "provisional": False}})
    assert isinstance(over, GameOver) and over.rating is not None and over.rating["after"] == 1630
    void = parse_message({"type": "game_over", "game": "g8", "result": "void", "scores": [], "termination": "no_show",
                          "rating": None})
    assert isinstance(void, GameOver) and void.rating is None
    offer = parse_message({"type": "challenge_offer", "challenge": "c1", "from": {"account": "bob", "kind": "bot",
                           "rating": 1500}, "to": ["ann"], "variant": "oklahoma", "clock": "standard", "rated": True,
                           "expires_ms": 60000})
    assert isinstance(offer, ChallengeOffer) and offer.sender["account"] == "bob"
    closed = parse_message({"type": "challenge_closed", "challenge": "c1", "reason": "declined", "by": "ann"})
    assert isinstance(closed, ChallengeClosed) and closed.by == "ann"
    assert isinstance(parse_message({"type": "sought", "id": 3, "seek": "s1"}), Sought)
    lobby = parse_message({"type": "lobby_state", "id": 4, "online": [], "seeks": [], "challenges": [], "me": None})
    assert isinstance(lobby, LobbyState) and lobby.me is None
    board = parse_message({"type": "leaderboard_page", "id": 5, "variant": "box", "rows": [{"rank": 1, "account": "x"}]})
    assert isinstance(board, Leaderboard) and board.rows[0]["rank"] == 1
    w = parse_message({"type": "welcome", "id": 1, "token": "t", "role": "player", "name": "ann", "heartbeat_ms": 5000,
                       "arena": {"name": "okgin", "variants": ["oklahoma", "box"], "clocks": {}},
                       "account": {"name": "ann", "kind": "human", "admin": False}})
    assert isinstance(w, Welcome) and w.account == {"name": "ann", "kind": "human", "admin": False}


def test_cooldown_keeps_its_retry_time() -> None:
    err = parse_message({"type": "error", "id": 2, "code": 6003, "name": "cooldown", "message": "no-show", "retry_ms": 30000})
    assert isinstance(err, ErrorMessage)
    e = err.exception()
    assert e.retry_ms == 30000
    assert "cooldown" in describe_refusal(e) and "30 s" in describe_refusal(e)


def test_refusals_are_one_line_each() -> None:
    for name, code in (("auth_failed", 2005), ("banned", 6007), ("busy", 6004), ("limit_reached", 3011),
                       ("no_such_seek", 6005)):
        text = describe_refusal(RefereeError(code, name, "the arena's words"))
        assert "\n" not in text and name in text


def test_a_key_file_must_be_private(tmp_path: Path) -> None:
    f = tmp_path / "ann.key"
    private_key_file(f, KEY)
    assert os.stat(f).st_mode & 0o777 == 0o600
    assert read_key(f) == KEY
    f.chmod(0o644)
    with pytest.raises(KeyFileError, match="readable by others"):
        read_key(f)
    f.chmod(0o600)
    f.write_text("\n")
    with pytest.raises(KeyFileError, match="empty"):
        read_key(f)
    with pytest.raises(KeyFileError, match="cannot read"):
        read_key(tmp_path / "missing")


def test_the_key_comes_from_the_environment_without_a_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OKGIN_ARENA_KEY", KEY)
    assert arena_key(None) == KEY
    monkeypatch.delenv("OKGIN_ARENA_KEY")
    with pytest.raises(KeyFileError, match="OKGIN_ARENA_KEY"):
        arena_key(None)


def test_a_curve_shard_gets_its_key() -> None:
    ready = parse_message({**_game_ready(), "server_key": "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"})
    assert isinstance(ready, GameReady)
    keys = shard_curve(ready, None)
    assert keys is not None and keys.server_public == ready.server_key.encode()  # type: ignore[union-attr]
    plain = parse_message(_game_ready())
    assert isinstance(plain, GameReady) and shard_curve(plain, None) is None


def _bot(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "okgin", "bot", "simple", *args], capture_output=True, text=True,
                          timeout=60, env={**os.environ, **(env or {})})


def test_okgin_bot_arena_argument_errors(tmp_path: Path) -> None:
    """No key, a key file others can read, no account: one line and status 2, before any
    connection is tried."""
    env = {"OKGIN_ARENA_KEY": ""}
    got = _bot("--arena", "tcp://127.0.0.1:9", "--account", "ann", env=env)
    assert got.returncode == 2 and "--key-file" in got.stderr and len(got.stderr.strip().splitlines()) == 1
    loose = tmp_path / "k"
    loose.write_text(KEY)
    loose.chmod(0o644)
    got = _bot("--arena", "tcp://127.0.0.1:9", "--account", "ann", "--key-file", str(loose), env=env)
    assert got.returncode == 2 and "chmod 600" in got.stderr
    got = _bot("--arena", "tcp://127.0.0.1:9", "--key-file", str(loose), env=env)
    assert got.returncode == 2 and "--account" in got.stderr
    got = _bot("--account", "ann", env=env)
    assert got.returncode == 2 and "--arena" in got.stderr
