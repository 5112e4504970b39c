"""A private PostgreSQL server for the arena's store tests, and a fresh database per test.

Why a real server: the store's PostgreSQL path (placeholders, ``FOR UPDATE``, types, what
psycopg returns for a DOUBLE PRECISION) is only tested by running it. The server is this
session's own: ``initdb`` in a temporary directory, ``pg_ctl start`` listening on a Unix
socket in that directory only (no TCP port, not even loopback), trust authentication for
its own superuser, fsync off (a test database need not survive a power cut). It runs as
the unprivileged user ``postgres`` when the tests run as root (PostgreSQL refuses to run as
root), else as the current user. At the end it is stopped by its PID (SIGINT: PostgreSQL's
fast shutdown) and the directory removed. Without the binaries (``initdb``, ``pg_ctl``,
``postgres``, on PATH or in Debian's /usr/lib/postgresql/N/bin) or psycopg, the PostgreSQL
tests skip and say which is missing; ``.ci/run`` installs both and sets ``OKGIN_REQUIRE_PG=1``, under which a missing part fails
the tests instead: CI never skips them.
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import pwd
import select
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from okgin import env

PG_USER = "okgin"
_counter = itertools.count()


def pg_bin_dir() -> Path | None:
    """Where initdb, pg_ctl and postgres are: PATH if initdb is on it, else the newest of
    Debian's /usr/lib/postgresql/N/bin."""
    found = shutil.which("initdb")
    if found and shutil.which("postgres"):
        return Path(found).parent
    cands = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]) if
                   p.split("/")[4].isdigit() else 0)
    return Path(cands[-1]).parent if cands else None


class PgServer:
    def __init__(self, base: Path, sockdir: Path, port: int, pid: int) -> None:
        self.base, self.sockdir, self.port, self.pid = base, sockdir, port, pid

    def url(self, db: str) -> str:
        return f"postgresql://{PG_USER}@/{db}?host={self.sockdir}&port={self.port}"

    def new_database(self) -> str:
        import psycopg

        name = f"arena_{os.getpid()}_{next(_counter)}"
        with psycopg.connect(self.url("postgres"), autocommit=True, connect_timeout=10) as c:
            c.execute(f"CREATE DATABASE {name}")
        return self.url(name)


def _exited(pid: int, timeout: float) -> bool:
    """Wait (bounded) for a process that is not our child (pg_ctl daemonised it) to exit: a
    pidfd becomes readable when it does."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([fd], [], [], timeout)[0])
    finally:
        os.close(fd)


def _missing(why: str) -> None:
    """Skip, saying what is missing; fail instead under OKGIN_REQUIRE_PG=1 (CI installs it all)."""
    if env.flag("OKGIN_REQUIRE_PG"):
        pytest.fail(f"OKGIN_REQUIRE_PG=1 and {why}", pytrace=False)
    pytest.skip(why)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    try:
        import psycopg  # noqa: F401
    except ImportError:
        _missing("psycopg is not installed (pip install 'okgin[arena-pg]'): the PostgreSQL store tests need it")
    bindir = pg_bin_dir()
    if bindir is None or not (bindir / "pg_ctl").exists() or not (bindir / "postgres").exists():
        _missing("PostgreSQL's initdb/pg_ctl/postgres are not installed (apt-get install postgresql)")
    run_as: str | None = None
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            _missing("running as root and there is no user 'postgres' to run the test server as")
        run_as = "postgres"
    base = Path(tempfile.mkdtemp(prefix="okgin-pg-"))
    data, sockdir, log = base / "data", base / "sock", base / "server.log"
    sockdir.mkdir()
    if run_as:
        ent = pwd.getpwnam(run_as)
        for p in (base, sockdir):
            os.chown(p, ent.pw_uid, ent.pw_gid)
    port = 5432
    pid = 0
    try:
        subprocess.run([str(bindir / "initdb"), "-D", str(data), "-U", PG_USER, "--auth=trust", "-E", "UTF8",
                        "--no-sync", "--no-instructions"],
                       check=True, capture_output=True, text=True, timeout=180, user=run_as, cwd=base)
        opts = f"-c listen_addresses='' -c unix_socket_directories='{sockdir}' -p {port} -c fsync=off " \
               "-c full_page_writes=off -c synchronous_commit=off -c max_connections=20"
        subprocess.run([str(bindir / "pg_ctl"), "start", "-D", str(data), "-w", "-t", "120", "-l", str(log), "-o", opts],
                       check=True, capture_output=True, text=True, timeout=180, user=run_as, cwd=base)
        pid = int((data / "postmaster.pid").read_text().split("\n", 1)[0])
        yield PgServer(base, sockdir, port, pid)
    except subprocess.CalledProcessError as e:
        tail = log.read_text()[-2000:] if log.exists() else ""
        pytest.fail(f"the test PostgreSQL server did not start: {e.cmd[0]} exited {e.returncode}\n{e.stdout}{e.stderr}{tail}")
    finally:
        if pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGINT)  # fast shutdown: roll back open transactions, stop
            if not _exited(pid, 60):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                _exited(pid, 10)
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def pg_url(pg_server: PgServer) -> str:
    """A new, empty database on the session's PostgreSQL server."""
    return pg_server.new_database()
