"""Child processes of the runner: referees and bots, tied to the runner's life.

Why ``PR_SET_PDEATHSIG``: the runner must survive ``kill -9`` and be resumed, and a
``kill -9`` gives it no chance to clean up. Every child it starts asks the kernel to be
killed when the runner dies, so a killed run leaves no referee holding a port and no bot
spinning. (Linux only; elsewhere the children are ended by the runner's normal shutdown.)

Bots run with their output in a log file per game (so a crash leaves its traceback
behind); the runner keeps the logs of games that ended abnormally and deletes the rest.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import signal
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

from okgin.launch import endpoint_from_line, referee_argv
from referee.private import open_private, private_dir

PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int) -> None:
    """``preexec_fn``: SIGKILL this child when the runner dies (even by kill -9)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the runner died between fork and prctl
        os._exit(1)


PRIVATE_UMASK = 0o077  # what the runner's children create is theirs alone (docs/tournaments.md, Files)
# The environment of a process that must not see the runner's (bubblewrap: its own
# environment is what /proc/1/environ shows inside the sandbox).
BARE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}


async def spawn(argv: Sequence[str], cwd: str | None = None, env: dict[str, str] | None = None,
                log: IO[bytes] | None = None, stdout_pipe: bool = False,
                preexec: Callable[[], None] | None = None, pass_fds: Sequence[int] = (),
                inherit_env: bool = True, output_pipe: bool = False) -> asyncio.subprocess.Process:
    """``preexec``: more to do in the child before exec (a sandbox's resource limits).
    ``inherit_env=False``: the child gets :data:`BARE_ENV` and ``env``, not the runner's
    environment. ``output_pipe``: standard output and error both to one pipe
    (``proc.stdout``; a bot's log, written by the runner within its bounds: .botlog).
    Every child starts with the umask :data:`PRIVATE_UMASK`: journals, logs and state
    files a referee writes are readable by the organiser alone."""
    parent = os.getpid()
    full_env = dict(os.environ) if inherit_env else dict(BARE_ENV)
    if env:
        full_env.update(env)

    def before_exec() -> None:
        os.umask(PRIVATE_UMASK)
        if sys.platform.startswith("linux"):
            _die_with_parent(parent)
        if preexec is not None:
            preexec()

    if output_pipe:
        stdout: Any = asyncio.subprocess.PIPE
        stderr: Any = asyncio.subprocess.STDOUT
    else:
        stdout = asyncio.subprocess.PIPE if stdout_pipe else (log or asyncio.subprocess.DEVNULL)
        stderr = log or asyncio.subprocess.DEVNULL
    return await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=full_env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=stdout,
        stderr=stderr,
        preexec_fn=before_exec,
        pass_fds=tuple(pass_fds),
    )


def _children(pid: int) -> list[int]:
    """``pid``'s direct children, from ``/proc/PID/task/*/children`` (Linux)."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for t in tasks:
        try:
            with open(f"/proc/{pid}/task/{t}/children") as f:
                found += [int(k) for k in f.read().split()]
        except (OSError, ValueError):
            continue
    return found


def _wait_stopped(pid: int, tries: int = 5000) -> None:
    """Until ``pid`` is really stopped (state T) or gone: a SIGSTOP is only pending when
    ``kill`` returns, and a bwrap in the middle of its clone finishes it first; reading its
    children before then can miss the one being made (a fresh-clone CI run did, 1 in 40).
    Bounded: a few milliseconds at most in practice, 5,000 short polls at worst."""
    for _ in range(tries):
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            return
        if state in (b"T", b"t", b"Z", b"X"):
            return
        time.sleep(0.0002)


def kill_sandbox(pid: int) -> None:
    """SIGKILL a bubblewrap process and the sandbox inside it, whatever its state.

    Why not just signal bwrap: its child, the init of the sandbox's pid namespace, is
    tied to bwrap by ``--die-with-parent`` only once it has set that up itself. bwrap
    killed in the moment after the clone (a game stopped just as its bots start, as when
    an SPRT decides or the run is interrupted) left that init, and the bot under it,
    running for ever: reproduced in 100 of 180 stops under load. So bwrap is stopped
    first (SIGSTOP, waited for until it has taken effect: it can then start no other
    child and cannot reap the one it has, so that pid stays its child), its children are
    read from /proc and killed (killing a pid namespace's init kills every process in
    it), then bwrap itself.
    """
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGSTOP)
    _wait_stopped(pid)
    for child in _children(pid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(child, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGKILL)


async def stop(proc: asyncio.subprocess.Process, grace: float = 2.0, sandboxed: bool = False) -> int | None:
    """End a child we started: SIGTERM, then SIGKILL after ``grace`` seconds.

    ``sandboxed``: ``proc`` is bubblewrap; it and its sandbox are killed at once
    (:func:`kill_sandbox`). A sandboxed bot never saw the SIGTERM anyway: bwrap does not
    pass it on, it dies of it, and its sandbox is killed with it.
    """
    if proc.returncode is not None:
        return proc.returncode
    if sandboxed and sys.platform.startswith("linux"):
        kill_sandbox(proc.pid)
        return await proc.wait()
    with contextlib.suppress(ProcessLookupError):
        proc.terminate()
    try:
        return await asyncio.wait_for(proc.wait(), grace)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        return await proc.wait()


class LocalReferee:
    """An ``okgin referee`` process the runner started on a free loopback port."""

    def __init__(self, proc: asyncio.subprocess.Process, endpoint: str, journal_dir: Path, log_path: Path) -> None:
        self.proc = proc
        self.endpoint = endpoint
        self.journal_dir = journal_dir
        self.log_path = log_path
        self._drain: asyncio.Future[None] | None = None  # set by start(): reads stdout until EOF

    @classmethod
    async def start(cls, workdir: Path, label: str, admin_key: str | None = None, timeout: float = 60.0,
                    ipc: Path | None = None, args: Sequence[str] = (), bind: str | None = None) -> LocalReferee:
        """``ipc``: also bind this Unix socket (sandboxed bots have no network; .sandbox).
        ``args``: more ``okgin referee`` flags (the arena's shards: CURVE); ``bind``: its
        endpoint (default loopback, a free port)."""
        journal_dir = private_dir(workdir / f"journals-{label}")
        log_path = workdir / f"referee-{label}.log"
        extra: list[str] = list(args)
        if ipc is not None:
            with contextlib.suppress(FileNotFoundError):
                ipc.unlink()  # a dead referee's socket: bind would take it over anyway
            extra += ["--also-bind", f"ipc://{ipc}"]
        env = {"OKGIN_ADMIN_KEY": admin_key} if admin_key else None
        with open_private(log_path, "ab") as log:  # the child keeps its own copy
            argv = referee_argv(journal_dir, *extra) if bind is None else referee_argv(journal_dir, *extra, bind=bind)
            proc = await spawn(argv, env=env, stdout_pipe=True, log=log)
        assert proc.stdout is not None
        # The referee prints its real endpoint on its first line (protocol.md §2).
        try:
            first = await asyncio.wait_for(proc.stdout.readline(), timeout)
        except TimeoutError:
            await stop(proc)
            raise RuntimeError(f"referee {label} printed no endpoint within {timeout:.0f} s (see {log_path})") from None
        endpoint = endpoint_from_line(first)
        if endpoint is None:
            await stop(proc)
            raise RuntimeError(f"referee {label} did not start: {first.decode(errors='replace').strip() or 'no output'} "
                               f"(see {log_path})")
        if ipc is not None:
            # Bound before the endpoint line. A bot running as another uid needs write
            # permission to connect; its directory (the runner's, 0700) keeps others out.
            try:
                os.chmod(ipc, 0o666)
            except OSError as e:
                await stop(proc)
                raise RuntimeError(f"referee {label} did not make its socket {ipc}: {e.strerror} (see {log_path})") from None
        ref = cls(proc, endpoint, journal_dir, log_path)
        # Keep draining its standard output so that it can never block on a full pipe.
        ref._drain = asyncio.ensure_future(ref._drain_stdout())
        return ref

    async def _drain_stdout(self) -> None:
        assert self.proc.stdout is not None
        with open_private(self.log_path, "ab") as f:
            while True:
                line = await self.proc.stdout.readline()
                if not line:
                    return
                f.write(line)
                f.flush()

    @property
    def alive(self) -> bool:
        return self.proc.returncode is None

    async def stop(self) -> None:
        await stop(self.proc, grace=3.0)
        drain = getattr(self, "_drain", None)
        if drain is not None:
            drain.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await drain
