"""Serving the web face with uvicorn on the arena's own event loop.

Why on the arena's loop and not a thread or a process of its own: the pages read the
store in the web's own threads (:meth:`arena.web.app.WebApp.read`), so the loop only
parses HTTP and renders templates, and the admin pages can use the arena's own
:class:`arena.auth.KeyChecker` (one failure lockout for ``hello`` and the web). The
arena owns the signals: uvicorn is told not to install its own (:class:`QuietServer`), and
:meth:`WebFace.stop` ends the event streams first so that the server's shutdown waits on
nothing. The socket is bound here, before uvicorn starts, so that port 0 works and the
address is known at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Iterator
from typing import Any

import uvicorn

from ..auth import KeyChecker
from ..config import ConfigError, parse_web
from ..store import Store
from .app import WebApp

__all__ = ["MAX_CONNECTIONS", "WEB_PREFIX", "QuietServer", "WebFace", "web_line"]

#: ``okgin arena`` prints ``okgin arena web on http://HOST:PORT/`` as its second line.
WEB_PREFIX = "okgin arena web on "
#: Open HTTP connections at once (uvicorn answers 503 beyond), event streams included.
MAX_CONNECTIONS = 400
log = logging.getLogger("arena.web")


def web_line(url: str) -> str:
    return f"{WEB_PREFIX}{url}"


class QuietServer(uvicorn.Server):
    """uvicorn without its signal handlers: the arena's Ctrl+C stops the arena, which stops this."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class WebFace:
    """The web app and its server: ``await start()`` returns the address (``http://HOST:PORT/``)."""

    def __init__(self, store: Store, checker: KeyChecker | None, address: str, arena_name: str = "okgin arena",
                 **settings: Any) -> None:
        self.host, self.port = parse_web(address)
        self.web = WebApp(store, checker, arena_name, **settings)
        self.server: QuietServer | None = None
        self.task: asyncio.Task[None] | None = None
        self.sock: socket.socket | None = None
        self.url = ""

    async def start(self) -> str:
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        # IPPROTO_TCP named, not left 0: asyncio turns Nagle off (TCP_NODELAY) only on sockets
        # whose proto says TCP, and an accepted socket inherits it. With proto 0 every small
        # page waited ~40 ms: uvicorn writes the headers and the body apart, Nagle held the body
        # until the client's delayed ACK of the headers (bench/arena_web.py saw every page
        # under 14 KB take 44 ms, the 100 KB viewer 6 ms).
        sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        try:
            addr = socket.getaddrinfo(self.host, self.port, family, socket.SOCK_STREAM)[0][4]
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(addr)
        except OSError as e:
            sock.close()
            raise ConfigError(f"cannot serve the web on {self.host}:{self.port}: {e.strerror or e}") from None
        sock.listen(128)
        sock.setblocking(False)
        self.sock = sock
        port = sock.getsockname()[1]
        config = uvicorn.Config(self.web.app, lifespan="off", log_level="warning", access_log=False,
                                limit_concurrency=MAX_CONNECTIONS, timeout_keep_alive=5, timeout_graceful_shutdown=5,
                                server_header=False, proxy_headers=False)
        self.server = QuietServer(config)
        await self.web.start()
        self.task = asyncio.get_running_loop().create_task(self.server.serve(sockets=[sock]))
        deadline = asyncio.get_running_loop().time() + 30
        while not self.server.started:  # startup only binds handlers to the socket made above
            if self.task.done() or asyncio.get_running_loop().time() > deadline:
                if self.task.done():
                    self.task.result()
                raise ConfigError("the web server did not start")
            await asyncio.sleep(0.01)
        shown = f"[{self.host}]" if ":" in self.host else self.host
        self.url = f"http://{shown}:{port}/"
        return self.url

    async def stop(self) -> None:
        await self.web.close()  # ends every event stream: nothing left for the server to wait on
        if self.server is not None:
            self.server.should_exit = True
        if self.task is not None:
            try:
                await asyncio.wait_for(self.task, 10)
            except (TimeoutError, asyncio.CancelledError):
                self.task.cancel()
            except Exception:
                log.exception("arena web: the server failed")
            self.task = None
        if self.sock is not None:
            self.sock.close()
            self.sock = None
