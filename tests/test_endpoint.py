"""okgin.endpoint: what people type as a referee endpoint (issue 17 item 2), and the
commands that take one exiting 2 with a sentence (not a traceback) on a bad one."""

from __future__ import annotations

import subprocess
import sys

import pytest

from okgin.endpoint import EndpointError, is_ipv6, parse_endpoint


@pytest.mark.parametrize(("typed", "endpoint"), [
    ("127.0.0.1:7117", "tcp://127.0.0.1:7117"),
    ("localhost:7117", "tcp://localhost:7117"),
    (" referee.example.org:1 ", "tcp://referee.example.org:1"),
    ("tcp://127.0.0.1:7117", "tcp://127.0.0.1:7117"),
    ("TCP://host:65535", "tcp://host:65535"),
    ("[::1]:7117", "tcp://[::1]:7117"),
    ("tcp://[fe80::1]:9", "tcp://[fe80::1]:9"),
    ("ipc:///tmp/okgin.sock", "ipc:///tmp/okgin.sock"),
])
def test_accepted(typed: str, endpoint: str) -> None:
    assert parse_endpoint(typed) == endpoint


@pytest.mark.parametrize(("typed", "why"), [
    ("bad::endpoint", "port"),
    ("::1:7117", "brackets"),
    ("localhost", "no port"),
    ("localhost:", "port"),
    ("host:0", "port"),
    ("host:70000", "port"),
    ("host:７１", "port"),  # full-width digits are digits to str.isdigit, not to ZeroMQ
    ("[::1]7117", "[ADDRESS]:PORT"),
    ("[nope]:7117", "not an IPv6 address"),
    ("ws://host:1", "unknown transport"),
    ("tcp://", "no port"),
    ("ipc://", "socket path"),
    ("", "empty"),
    ("bad host:1", "not a host name"),
])
def test_refused_with_a_reason(typed: str, why: str) -> None:
    with pytest.raises(EndpointError, match=r"expected|socket path") as e:
        parse_endpoint(typed)
    assert why in str(e.value)


def test_ipv6_detected() -> None:
    assert is_ipv6(parse_endpoint("[::1]:7117")) and not is_ipv6(parse_endpoint("127.0.0.1:7117"))


@pytest.mark.parametrize("argv", [
    ["bot", "random", "--connect", "bad::endpoint"],
    ["tui", "--connect", "bad::endpoint"],
    ["watch", "--connect", "bad::endpoint", "--table", "t"],
])
def test_commands_exit_2_with_a_message(argv: list[str]) -> None:
    p = subprocess.run([sys.executable, "-m", "okgin", *argv], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2
    assert "argument --connect: 'bad::endpoint': the port must be a number" in p.stderr
    assert "Traceback" not in p.stderr
