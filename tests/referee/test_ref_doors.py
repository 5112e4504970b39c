"""Seat doors (referee.doors, protocol 1.5; issue 24 item 1).

A table created with ``doors`` gets one ``ipc://`` socket per reserved seat. Through a
door only that seat is played: a tokenless hello, another seat's token and every lobby
request are refused with ``seat_only`` and change nothing; the seat's own token plays a
whole game. Each door caps its own connections, apart from the referee's total, and the
door closes with its table. On 1.4 (before doors) ``create_table`` refused the field.
"""

from __future__ import annotations

import os
import socket
import stat
import time
from pathlib import Path

from bounded import dealer
from refharness import Client, RefereeThread, error_of, play_until_end

from referee.connguard import open_accepted
from referee.doors import FLOOD_CONNECTIONS

DOOR_CAP = 4


def make_table(admin: Client, name: str) -> dict:
    return admin.request({"type": "create_table", "table": name, "reserved": True, "doors": True,
                          "clock": {"move_ms": 0}}, "table_created")


def door_path(ep: str) -> Path:
    assert ep.startswith("ipc://"), ep
    return Path(ep[len("ipc://"):])


def test_a_door_plays_its_own_seat_and_nothing_else(make_referee: object, make_client: object) -> None:
    referee: RefereeThread = make_referee(max_door_connections=DOOR_CAP)  # type: ignore[operator]
    admin: Client = make_client(referee.endpoint)  # type: ignore[operator]
    admin.hello("organiser", role="admin")
    other = make_table(admin, "other")  # a table the door must not reach
    created = make_table(admin, "final")
    doors, tokens = created["doors"], created["seat_tokens"]
    assert len(doors) == len(tokens) == 2 and len(set(doors)) == 2
    d0 = door_path(doors[0])
    assert stat.S_IMODE(d0.parent.stat().st_mode) == 0o700  # only the referee's user reaches the directory
    before = referee.call(lambda: (sorted(referee.ref.lobby.tables), len(referee.ref.desk.sessions)))

    spy: Client = make_client(doors[0])  # type: ignore[operator]
    # tokenless, another seat's token, another table's token, a made-up one: refused
    for extra in ({}, {"token": tokens[1]}, {"token": other["seat_tokens"][0]}, {"token": "0" * 32}):
        m = spy.request({"type": "hello", "protocol": 1, "role": "player", "name": "spy", **extra})
        error_of(m, "seat_only")
    # the lobby, before hello: refused too
    error_of(spy.request({"type": "list_tables"}), "seat_only")
    # its own token: welcome, and it is seated
    w = spy.request({"type": "hello", "protocol": 1, "role": "player", "name": "spy", "token": tokens[0]}, "welcome")
    assert w["minor"] >= 5
    lobby = [
        {"type": "list_tables"},
        {"type": "watch", "table": "other"},
        {"type": "watch", "table": "final"},
        {"type": "create_table", "table": "my-hand-is-AS-2C"},
        {"type": "join", "table": "side-channel"},
        {"type": "queue"},
        {"type": "leave", "table": "final"},
        {"type": "rematch", "table": "final"},
        {"type": "unwatch", "table": "other"},
        {"type": "close_table", "table": "other"},
        {"type": "reveal", "table": "other", "game": 1},
        {"type": "sync", "table": "other"},
        {"type": "act", "table": "other", "seq": 0, "action": {"kind": "pass"}},
        {"type": "hello", "protocol": 1, "role": "player", "name": "again"},
    ]
    for msg in lobby:
        error_of(spy.request(msg, check=False), "seat_only")
    after = referee.call(lambda: (sorted(referee.ref.lobby.tables), len(referee.ref.desk.sessions)))
    assert after == (before[0], before[1] + 1), (before, after)  # only its own session is new
    # the other seat comes through its own door; the game is played through both
    foe: Client = make_client(doors[1])  # type: ignore[operator]
    foe.request({"type": "hello", "protocol": 1, "role": "player", "name": "foe", "token": tokens[1]}, "welcome")
    ends = play_until_end({0: spy, 1: foe}, "final")
    assert ends[0]["termination"] == "normal"
    # the door closes with its table, and its connection with it
    admin.request({"type": "close_table", "table": "final"}, "ok")
    # the ok is sent by the handler that closes the table: once the loop has run it, it is done
    assert referee.call(lambda: sorted(referee.ref.doors.by_table)) == ["other"]
    assert not d0.exists() and len(referee.call(lambda: referee.ref.transport.doors)) == 2


def test_a_client_chosen_routing_id_is_refused_at_a_door_too(referee: RefereeThread, make_client: object) -> None:
    """A door peer's key is the door's prefix and libzmq's routing id: one the client chose
    is refused (bad_identity, answered through the door) before anything is read."""
    admin: Client = make_client(referee.endpoint)  # type: ignore[operator]
    admin.hello("organiser", role="admin")
    created = make_table(admin, "final")
    chosen: Client = make_client(created["doors"][0])  # type: ignore[operator]
    chosen.sock.close(0)
    chosen.sock = dealer(created["doors"][0], ctx=Client.ctx, ROUTING_ID=b"mine")
    chosen.send({"type": "hello", "protocol": 1, "role": "player", "name": "b", "token": created["seat_tokens"][0]})
    error_of(chosen.recv(), "bad_identity")
    assert referee.call(lambda: len(referee.ref.desk.sessions)) == 1  # the admin's only


def test_doors_need_reserved_seats(referee: RefereeThread, make_client: object) -> None:
    admin: Client = make_client(referee.endpoint)  # type: ignore[operator]
    admin.hello("organiser", role="admin")
    # the schema says so too (doors true needs reserved true): send it unchecked
    error_of(admin.request({"type": "create_table", "table": "open", "doors": True}, check=False), "bad_message")
    assert referee.call(lambda: "open" not in referee.ref.lobby.tables)
    plain = admin.request({"type": "create_table", "table": "plain", "reserved": True}, "table_created")
    assert "doors" not in plain  # a 1.4 client's reply is unchanged


def _connect_raw(path: Path) -> socket.socket | None:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    try:
        s.connect(str(path))
    except OSError:
        s.close()
        return None
    return s


def test_a_door_flood_is_cut_at_the_door_and_tcp_clients_still_get_in(make_referee: object, make_client: object) -> None:
    # the referee's total cap is small here: a flood counted toward it would lock TCP clients out
    referee: RefereeThread = make_referee(max_door_connections=DOOR_CAP, max_connections=20)  # type: ignore[operator]
    admin: Client = make_client(referee.endpoint)  # type: ignore[operator]
    admin.hello("organiser", role="admin")
    created = make_table(admin, "final")
    path = door_path(created["doors"][0])
    flood: list[socket.socket] = []
    try:
        for _ in range(200):
            s = _connect_raw(path)
            if s is not None:
                flood.append(s)
        guard = referee.call(lambda: referee.ref.transport.doors[next(iter(referee.ref.transport.doors))].guard)
        deadline = time.monotonic() + 30  # a bound on a hang, not a timing assertion
        assert len(flood) > 2 * DOOR_CAP  # (past the listen backlog a connect is refused at once)
        # every connection past the cap is shut, and (once its end is reported) forgotten
        while sum(guard.refused.values()) < len(flood) - DOOR_CAP or sum(guard.snapshot().values()) > DOOR_CAP + 1:
            assert time.monotonic() < deadline, f"the door refused {sum(guard.refused.values())}, holds {guard.snapshot()}"
            time.sleep(0.02)
        # the flood held nothing of the total: new TCP clients are welcomed
        for i in range(10):
            c: Client = make_client(referee.endpoint)  # type: ignore[operator]
            assert c.hello(f"late{i}")["type"] == "welcome"
        main_guard = referee.call(lambda: referee.ref.transport.guard)
        assert sum(main_guard.refused.values()) == 0
        # the seat's own bot still gets in once the flood lets go
    finally:
        for s in flood:
            s.close()
    seat: Client = make_client(created["doors"][0])  # type: ignore[operator]
    deadline = time.monotonic() + 30
    while True:
        seat.send({"type": "hello", "protocol": 1, "role": "player", "name": "bot", "token": created["seat_tokens"][0], "id": 1})
        if seat.sock.poll(500):
            break
        assert time.monotonic() < deadline, "the seat's bot never got in after the flood"
    assert seat.recv()["type"] == "welcome"


def test_a_door_that_is_flooded_closes_for_good(make_referee: object, make_client: object) -> None:
    """Past FLOOD_CONNECTIONS connections within FLOOD_WINDOW_S a door closes: its seat's
    connection goes with it, and every later connect is refused by the kernel, at no cost
    to the referee. The table's other door and every other client are untouched."""
    referee: RefereeThread = make_referee(max_door_connections=DOOR_CAP)  # type: ignore[operator]
    admin: Client = make_client(referee.endpoint)  # type: ignore[operator]
    admin.hello("organiser", role="admin")
    created = make_table(admin, "final")
    path = door_path(created["doors"][0])
    seat: Client = make_client(created["doors"][0])  # type: ignore[operator]
    seat.request({"type": "hello", "protocol": 1, "role": "player", "name": "flooder", "token": created["seat_tokens"][0]},
                 "welcome")
    other: Client = make_client(created["doors"][1])  # type: ignore[operator]
    other.request({"type": "hello", "protocol": 1, "role": "player", "name": "honest", "token": created["seat_tokens"][1]},
                  "welcome")
    made = 0
    deadline = time.monotonic() + 60  # a bound on a hang, not a timing assertion
    while path.exists():
        assert time.monotonic() < deadline, f"the door stayed open after {made} connections"
        s = _connect_raw(path)
        if s is not None:
            made += 1
            s.close()
    # the seat's own connection is one of the door's FLOOD_CONNECTIONS (the loop usually
    # overshoots while the watcher catches up, but a quick watcher closes it at exactly 499 more)
    assert made >= FLOOD_CONNECTIONS - 1
    assert referee.call(lambda: list(referee.ref.doors.flooded)) == [("final", 0)]
    assert _connect_raw(path) is None  # nothing listens there any more
    # the seat's connection went with its door; the other seat and TCP clients carry on
    assert referee.call(lambda: referee.ref.desk.sessions[created["seat_tokens"][0]].connected) is False
    assert other.request({"type": "ping"}, "pong")
    late: Client = make_client(referee.endpoint)  # type: ignore[operator]
    assert late.hello("late")["type"] == "welcome"


def test_doors_go_with_the_referee(make_referee: object, make_client: object, tmp_path: Path) -> None:
    doors_dir = tmp_path / "doors"
    referee: RefereeThread = make_referee(door_dir=str(doors_dir))  # type: ignore[operator]
    admin: Client = make_client(referee.endpoint)  # type: ignore[operator]
    admin.hello("organiser", role="admin")
    created = make_table(admin, "final")
    assert all(door_path(d).parent == doors_dir for d in created["doors"])
    assert stat.S_IMODE(os.stat(doors_dir).st_mode) == 0o700
    referee.stop()
    assert not any(door_path(d).exists() for d in created["doors"])


def test_a_guard_never_cuts_a_connection_that_is_no_longer_its_own() -> None:
    """Guards read connection events a moment late, and a descriptor a flood closed
    meanwhile may already be another socket's connection (a TCP client's, after a door's
    flood). A guard now checks the descriptor against the listener its event names,
    through the duplicate it would shut, and leaves anything else alone."""
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    client = socket.create_connection(("127.0.0.1", port), timeout=5)
    conn, _ = server.accept()
    try:
        assert open_accepted(conn.fileno(), "ipc:///tmp/some-door.sock") is None  # a door's late event
        assert open_accepted(conn.fileno(), "tcp://127.0.0.1:1") is None  # another listener's
        mine = open_accepted(conn.fileno(), f"tcp://127.0.0.1:{port}")
        assert mine is not None and mine[1] == "127.0.0.1"
        mine[0].close()  # (only the duplicate)
        client.sendall(b"still here")
        conn.settimeout(5)
        assert conn.recv(16) == b"still here"
    finally:
        for s in (client, conn, server):
            s.close()
