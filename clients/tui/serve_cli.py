"""``okgin serve``: the terminal UI in a web browser, through textual-serve.

Each browser tab that opens the page gets its own process running one okgin TUI command
(``okgin play`` unless another is given after the options), drawn in the page by
xterm.js. textual-serve (``pip install 'okgin[web]'``) does the web side; this module
adds what it leaves open:

- **Every process it starts ends.** textual-serve starts each tab's command through a
  shell and, when the tab closes, asks the app to quit and waits for it without a bound;
  a server that is killed leaves its apps running (Textual's web driver ignores the end
  of its input). Here each command runs as its own process (no shell) in its own
  session, is asked to quit, then is sent SIGTERM and SIGKILL by its process group after
  a grace period; the server's shutdown does the same for every tab still open; and the
  child asks Linux to send it SIGTERM if the server dies (``PR_SET_PDEATHSIG``).
- **Loopback unless told otherwise.** There is no authentication: whoever reaches the port
  can start games (and processes) as the user running the server. The default host is
  127.0.0.1; on loopback, requests must name a loopback host (a web page that rebinds its
  own domain to 127.0.0.1 cannot use the server), and the websocket must come from the
  server's own page (another site open in the same browser cannot drive a game).
- **The URL is the first line on stdout**, so ``--port 0`` (a free port) can be scripted;
  textual-serve's banner and logs go to stderr. A line per HTTP request (aiohttp's
  access log) only with ``--access-log``: it buried the server's own lines.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ipaddress
import os
import signal
import socket
import sys
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

# The okgin commands that run a Textual app (anything else would not draw in a browser).
SERVABLE = ("play", "tui", "watch", "replay")
DEFAULT_COMMAND = ["play"]
LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1"}

RISK = (
    "There is no authentication: anyone who can reach the port can start games and processes "
    "as the user running the server (a replay command reads files as you, tui/watch connect "
    "where they are told). The server listens on 127.0.0.1 (this machine only) unless --host "
    "says otherwise; give another address only on a network you trust, or put the server "
    "behind a proxy that authenticates."
)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="okgin serve",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Serve the okgin terminal UI to web browsers (needs: pip install 'okgin[web]').\n\n"
        "Every browser tab that opens the URL runs its own COMMAND, an okgin TUI command with its "
        "options (default: play, against the built-in bots):\n"
        "  okgin serve                                   play against a bot\n"
        "  okgin serve play --variant box --bot simple   any 'okgin play' options\n"
        "  okgin serve tui --connect tcp://HOST:PORT     join a network table\n"
        "  okgin serve watch --connect tcp://HOST:PORT   watch one\n"
        "  okgin serve replay FILE                       step through a journal\n"
        "Closing the tab, or stopping the server, ends that command.\n\n"
        "The first line printed on stdout is the URL to open.\n\n"
        "RISK: " + RISK,
    )
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1, this machine only; 0.0.0.0 is every interface: see RISK)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    p.add_argument("--public-url", metavar="URL",
                   help="the URL browsers use to reach the server, if not the one they asked for (behind a proxy)")
    p.add_argument("--max-sessions", type=int, default=8, metavar="N",
                   help="browser tabs served at once (default 8); more are turned away")
    p.add_argument("--grace", type=float, default=5.0, metavar="SECONDS",
                   help="how long a closed tab's command has to quit before it is stopped (default 5)")
    p.add_argument("--access-log", action="store_true",
                   help="print a line for every HTTP request on stderr (default: quiet)")
    p.add_argument("command", nargs=argparse.REMAINDER, metavar="COMMAND ...",
                   help=f"the okgin command each tab runs: {', '.join(SERVABLE)} (default: play)")
    return p


def parse_command(words: list[str]) -> list[str]:
    """The okgin command a tab runs, from what followed the options (``--`` and a leading
    ``okgin`` are allowed, so ``okgin serve -- okgin play`` reads as it is written)."""
    words = list(words)
    if words[:1] == ["--"]:
        words = words[1:]
    if words[:1] == ["okgin"]:
        words = words[1:]
    if not words:
        return list(DEFAULT_COMMAND)
    if words[0] not in SERVABLE:
        raise ValueError(f"cannot serve {words[0]!r}: COMMAND is one of {', '.join(SERVABLE)}")
    return words


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a listening address or a request's host name) is this machine only."""
    host = host.strip("[]")
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def child_argv(command: list[str]) -> list[str]:
    """The argv of a tab's process: this module's child entry, which runs ``okgin COMMAND``
    after asking to be ended with the server (see :func:`child_main`)."""
    return [sys.executable, "-m", "clients.tui.serve_cli", "--child-of", str(os.getpid()), "--", *command]


def child_main(argv: list[str]) -> int:
    """Run ``okgin COMMAND`` as a tab's process, ended if the server that started it dies.

    Why: Textual's web driver does not exit when its input closes, so an app whose server
    was killed (SIGKILL, a crash) would run on with nobody to see it. ``PR_SET_PDEATHSIG``
    has Linux send SIGTERM when the parent goes; the web driver turns SIGTERM into a clean
    quit (the embedded referee and bots stop with it). The parent check after the call
    covers a parent that died before it.
    """
    parent = int(argv[1])
    command = argv[3:] if argv[2:3] == ["--"] else argv[2:]
    if sys.platform.startswith("linux"):
        import ctypes

        PR_SET_PDEATHSIG = 1
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent:
        return 1
    from okgin.cli import main as okgin_main

    return okgin_main(command)


def _make_app_service(grace: float) -> type:
    """An ``AppService`` that starts its command without a shell, in its own session, and
    ends it (and only it: its own process group) within ``grace`` seconds of a stop."""
    from asyncio.subprocess import Process

    from textual_serve.app_service import AppService

    class BoundedAppService(AppService):
        argv: list[str]

        async def _open_app_process(self, width: int = 80, height: int = 24) -> Process:
            environment = self._build_environment(width=width, height=height)
            self._process = process = await asyncio.create_subprocess_exec(
                *self.argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, env=environment, start_new_session=True)
            assert process.stdin is not None
            self._stdin = process.stdin
            return process

        @property
        def finished(self) -> asyncio.Task[None] | None:
            """The task reading the app's output: done when the app has gone."""
            return self._task

        async def stop(self) -> None:
            """Ask the app to quit; after ``grace`` seconds, SIGTERM its process group,
            then SIGKILL. Safe to call twice (textual-serve's handler does)."""
            task, process = self._task, self._process
            if task is None or process is None:
                return
            self._task = None
            with contextlib.suppress(Exception):
                await self._download_manager.cancel_app_downloads(app_service_id=self.app_service_id)
            if process.returncode is None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(self.send_meta({"type": "quit"}), 1.0)
            for sig in (None, signal.SIGTERM, signal.SIGKILL):
                if sig is not None and process.returncode is None:
                    # The group is the one made for this process (start_new_session): its id
                    # is the pid of a child not yet reaped, so nothing else can be hit.
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(process.pid, sig)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(process.wait(), grace)
                if process.returncode is not None:
                    break
            with contextlib.suppress(TimeoutError, asyncio.CancelledError, Exception):
                await asyncio.wait_for(task, grace)

    return BoundedAppService


def make_server(command: list[str], host: str, port: int, *, public_url: str | None = None,
                max_sessions: int = 8, grace: float = 5.0, access_log: bool = False) -> Any:
    """The textual-serve ``Server`` for ``command``, with okgin's process handling and the
    loopback checks of the module's docstring. ``serve()`` runs it until SIGINT/SIGTERM."""
    from aiohttp import web
    from rich.console import Console
    from textual_serve.server import Server

    service_class = _make_app_service(grace)
    title = "okgin " + " ".join(command)

    class OkginServer(Server):
        def __init__(self) -> None:
            super().__init__(title, host=host, port=port, title=title)
            self.console = Console(stderr=True)  # stdout carries the URL line only
            self.fixed_public_url = public_url
            self.services: set[Any] = set()
            self.loopback = is_loopback(host)
            self.sock: socket.socket | None = None

        def bind(self) -> str:
            """Bind the listening socket now (so ``--port 0`` is known) and return the URL."""
            family = socket.AF_INET6 if ":" in host else socket.AF_INET
            # proto IPPROTO_TCP, not 0: asyncio turns Nagle off only on sockets whose proto says
            # TCP (accepted sockets inherit it), and a terminal's small writes must not wait
            # ~40 ms for the browser's delayed ACK (see arena.web.serve).
            sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((host, port))
            sock.listen(128)
            sock.setblocking(False)
            self.sock = sock
            self.port = sock.getsockname()[1]
            shown = f"[{host}]" if ":" in host else host
            if host in ("0.0.0.0", "::"):
                shown = socket.gethostname()
            self.public_url = self.fixed_public_url or f"http://{shown}:{self.port}"
            return self.public_url

        async def _make_app(self) -> web.Application:
            app = await super()._make_app()
            app.middlewares.append(self.guard)
            return app

        @web.middleware
        async def guard(
            self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
        ) -> web.StreamResponse:
            """Refuse requests a hostile web page could make through the user's browser."""
            name = urlsplit(f"//{request.host}").hostname or ""
            if self.loopback and not self.fixed_public_url and not is_loopback(name):
                raise web.HTTPForbidden(text="okgin serve: this server answers to a loopback host name only\n")
            if request.path == "/ws":
                origin = request.headers.get("Origin")
                allowed = {request.host}
                if self.fixed_public_url:
                    allowed.add(urlsplit(self.fixed_public_url).netloc)
                if origin is not None and urlsplit(origin).netloc not in allowed:
                    raise web.HTTPForbidden(text="okgin serve: the game is played from this server's own page\n")
            return await handler(request)

        async def handle_index(self, request: web.Request) -> Any:
            # The page's websocket URL is absolute: make it the address this browser used
            # (the machine's name, or a forwarded port), not the address we listen on.
            if not self.fixed_public_url:
                self.public_url = f"{request.scheme}://{request.host}"
            return await super().handle_index(request)

        async def on_startup(self, app: web.Application) -> None:
            print(self.public_url, flush=True)
            # From here on stdout is stderr: textual-serve copies an app's stderr to
            # sys.stdout, which a script reading the URL line would otherwise get.
            sys.stdout = sys.stderr
            print(f"okgin serve: serving {title!r} on {self.public_url} (Ctrl+C to stop)", file=sys.stderr)
            if not self.loopback:
                print(f"okgin serve: WARNING: listening on {host}. {RISK}", file=sys.stderr)

        async def on_shutdown(self, app: web.Application) -> None:
            """Stop every tab's process (and close its page) before the server goes."""
            await asyncio.gather(*(s.stop() for s in list(self.services)), return_exceptions=True)

        async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
            websocket = web.WebSocketResponse(heartbeat=15)
            await websocket.prepare(request)
            if len(self.services) >= max_sessions:
                await websocket.send_bytes(f"\r\nokgin serve: {max_sessions} sessions are open already; try later.\r\n".encode())
                await websocket.close()
                return websocket

            def to_int(value: str, default: int) -> int:
                return int(value) if value.isdigit() and 0 < int(value) < 10000 else default

            width = to_int(request.query.get("width", "80"), 80)
            height = to_int(request.query.get("height", "24"), 24)
            service = service_class(self.command, write_bytes=websocket.send_bytes, write_str=websocket.send_str,
                                    close=websocket.close, download_manager=self.download_manager, debug=self.debug)
            service.argv = child_argv(command)
            self.services.add(service)
            reader: asyncio.Task[None] | None = None
            try:
                await service.start(width, height)
                # Whichever ends first, the page (tab closed) or the app (quit, crashed),
                # ends the other.
                reader = asyncio.ensure_future(self._process_messages(websocket, service))
                finished = service.finished
                waiting = {reader} | ({finished} if finished is not None else set())
                await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            except asyncio.CancelledError:
                pass
            finally:
                await service.stop()
                self.services.discard(service)
                if reader is not None:
                    reader.cancel()
                with contextlib.suppress(Exception):
                    await websocket.close()
            return websocket

        def serve(self, debug: bool = False) -> None:
            self.debug = debug
            self.initialize_logging()
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(sig, self.request_exit)
            from aiohttp.log import access_logger

            web.run_app(self._make_app(), sock=self.sock, handle_signals=False, loop=loop,
                        shutdown_timeout=grace + 2, print=lambda *args: None,
                        access_log=access_logger if access_log else None)

    return OkginServer()


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    try:
        command = parse_command(args.command)
    except ValueError as e:
        print(f"okgin serve: {e}", file=sys.stderr)
        return 2
    if not 0 <= args.port <= 65535 or args.max_sessions < 1 or args.grace <= 0:
        print("okgin serve: --port is 0..65535, --max-sessions at least 1, --grace above 0", file=sys.stderr)
        return 2
    try:
        import textual_serve  # noqa: F401
    except ModuleNotFoundError:
        print("okgin serve: textual-serve is not installed (pip install 'okgin[web]')", file=sys.stderr)
        return 2
    server = make_server(command, args.host, args.port, public_url=args.public_url,
                         max_sessions=args.max_sessions, grace=args.grace, access_log=args.access_log)
    try:
        server.bind()
    except OSError as e:
        print(f"okgin serve: cannot listen on {args.host}:{args.port}: {e.strerror or e}", file=sys.stderr)
        return 2
    server.serve()
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child-of"]:
        sys.exit(child_main(sys.argv[1:]))
    sys.exit(main(sys.argv[1:]))
