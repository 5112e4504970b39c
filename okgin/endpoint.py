"""Referee endpoints as people type them: one parser for every command that connects.

Why one helper: ``okgin tui``, ``okgin watch``, ``okgin bot`` and ``okgin tournament
--referee-endpoints`` used to hand whatever was typed to ZeroMQ, which took ``HOST:PORT``
(no ``tcp://``) as an error: a Python traceback from ``okgin bot``, "Connecting…" for
ever in ``okgin tui``. Here ``HOST:PORT`` means ``tcp://HOST:PORT``, an IPv6 address is
written in brackets (``[::1]:7117``), and anything else gets a sentence saying what is
expected (argparse then exits 2 with it).
"""

from __future__ import annotations

import argparse
import ipaddress
import re

__all__ = ["EndpointError", "endpoint_arg", "is_ipv6", "parse_endpoint"]

_HOSTNAME = re.compile(
    r"(?=.{1,253}\Z)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?\Z"
)
_EXPECTED = "expected HOST:PORT, tcp://HOST:PORT, [IPv6]:PORT or ipc://PATH (e.g. 127.0.0.1:7117)"


class EndpointError(ValueError):
    """An endpoint that cannot be parsed; the message says why and what is expected."""


def _host_port(rest: str, given: str) -> str:
    """``HOST:PORT`` (or ``[V6]:PORT``) checked, returned as written (brackets kept)."""
    if rest.startswith("["):
        close = rest.find("]")
        if close < 0 or rest[close + 1 : close + 2] != ":":
            raise EndpointError(f"{given!r}: an IPv6 address is written [ADDRESS]:PORT; {_EXPECTED}")
        host, port = rest[1:close], rest[close + 2 :]
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise EndpointError(f"{given!r}: {host!r} is not an IPv6 address; {_EXPECTED}") from None
    else:
        host, sep, port = rest.rpartition(":")
        if not sep or not host:
            raise EndpointError(f"{given!r}: no port; {_EXPECTED}")
        _check_port(port, given)
        if ":" in host:
            raise EndpointError(f"{given!r}: an IPv6 address must be in brackets, [ADDRESS]:PORT; {_EXPECTED}")
        if not _HOSTNAME.match(host):
            raise EndpointError(f"{given!r}: {host!r} is not a host name or address; {_EXPECTED}")
    _check_port(port, given)
    return rest


def _check_port(port: str, given: str) -> None:
    if not (port.isascii() and port.isdigit()) or not 1 <= int(port) <= 65535:
        raise EndpointError(f"{given!r}: the port must be a number from 1 to 65535, not {port!r}; {_EXPECTED}")


def parse_endpoint(text: str) -> str:
    """The ZeroMQ endpoint for what was typed: ``HOST:PORT`` -> ``tcp://HOST:PORT``;
    ``tcp://`` and ``ipc://`` endpoints checked and kept. Raises :class:`EndpointError`."""
    given = text
    text = text.strip()
    if not text:
        raise EndpointError(f"an empty endpoint; {_EXPECTED}")
    scheme, sep, rest = text.partition("://")
    if not sep:
        return "tcp://" + _host_port(text, given)
    scheme = scheme.lower()
    if scheme == "tcp":
        return "tcp://" + _host_port(rest, given)
    if scheme == "ipc":
        if not rest:
            raise EndpointError(f"{given!r}: ipc:// needs a socket path")
        return "ipc://" + rest
    raise EndpointError(f"{given!r}: unknown transport {scheme!r}; {_EXPECTED}")


def is_ipv6(endpoint: str) -> bool:
    """Whether a parsed endpoint names an IPv6 address (ZeroMQ sockets need IPV6 set)."""
    return endpoint.startswith("tcp://[")


def endpoint_arg(text: str) -> str:
    """``argparse`` ``type=``: a bad endpoint is a usage error (exit 2, the sentence)."""
    try:
        return parse_endpoint(text)
    except EndpointError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
