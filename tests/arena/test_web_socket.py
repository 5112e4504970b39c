"""The web face's connections send at once (Nagle off).

Why a test: uvicorn writes a response's headers and body apart, and asyncio turns Nagle off
(TCP_NODELAY) only on sockets whose proto says TCP. The web face binds its own listening
socket (port 0 known at once), and made it with proto 0, so every accepted connection kept
Nagle: each page under a segment or so waited for the client's delayed ACK of the headers,
~40 ms a page (bench/arena_web.py: /about 44 ms, a 100 KB viewer page 6 ms). The fix names
IPPROTO_TCP (arena.web.serve); this test reads the option on the server's side of a live
connection.
"""

from __future__ import annotations

import http.client
import socket
from urllib.parse import urlsplit

import pytest

pytest.importorskip("starlette", reason="the web needs okgin[arena-web]")

from webkit import WebThread

from arena.store import Store


async def _nodelay_of_connections(thread: WebThread) -> list[int]:
    server = thread.face.server
    assert server is not None
    out = []
    for proto in list(server.server_state.connections):
        sock = proto.transport.get_extra_info("socket")  # type: ignore[attr-defined]
        out.append(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
    return out


def test_an_accepted_connection_has_nagle_off() -> None:
    store = Store.open("sqlite://:memory:")
    web = WebThread(store)
    try:
        parts = urlsplit(web.url)
        conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=30)
        try:
            conn.request("GET", "/about")  # kept alive: the connection is still the server's after the reply
            resp = conn.getresponse()
            assert resp.status == 200 and resp.read()
            flags = web.call(_nodelay_of_connections(web))
            assert flags and all(flags), flags
        finally:
            conn.close()
    finally:
        web.stop()
        store.close()
