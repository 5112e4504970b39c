"""Build the example bots of clients/{c,js,rust,java} with their native tools, once per run.

Why here and not in the kit: the conformance kit takes any command (it must not know how
a bot is built); the tests are what build the four examples, the way their READMEs tell
a user to. Each build is incremental (make, cargo, a stamped npm ci, build.sh skipping an
up-to-date jar), so a warm run costs a few seconds.

Every build holds an exclusive lock on its directory: the suite runs in several processes
(pytest-xdist), and two ``make`` runs writing one binary while a third process starts it
would give "text file busy" or a torn file. The second builder waits, then finds the build
up to date.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CLIENTS = REPO / "clients"
LANGUAGES = ("c", "js", "rust", "java")


@dataclass(frozen=True)
class BuiltBot:
    """A built example bot: how to run it (``{endpoint}`` is the kit's placeholder)."""

    language: str
    command: tuple[str, ...]

    def argv(self, *extra: str) -> list[str]:
        return [*self.command, *extra]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    cargo_home = Path.home() / ".cargo" / "bin"
    if cargo_home.is_dir():
        env["PATH"] = f"{cargo_home}{os.pathsep}{env.get('PATH', '')}"
    return env


@contextlib.contextmanager
def _build_lock(directory: Path) -> Iterator[None]:
    """Hold an exclusive lock on one build directory (a lock file in the temporary
    directory, named by the directory's path) until the block ends."""
    digest = hashlib.sha256(str(directory).encode()).hexdigest()[:16]
    fd = os.open(Path(tempfile.gettempdir()) / f"okgin-build-{digest}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _run(cmd: list[str], cwd: Path) -> None:
    proc = subprocess.run(cmd, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"build failed in {cwd}: {' '.join(cmd)}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")


def build(language: str) -> BuiltBot:
    """Build one example bot and return how to run it; raise with the tool's output on failure."""
    with _build_lock(CLIENTS / language):
        return _build(language)


def _build(language: str) -> BuiltBot:
    d = CLIENTS / language
    if language == "c":
        _run(["make", "-s"], d)
        return BuiltBot("c", (str(d / "build" / "okgin-bot"),))
    if language == "js":
        stamp = d / "node_modules" / ".okgin-installed-lock"
        lock = d / "package-lock.json"
        if not stamp.is_file() or stamp.read_bytes() != lock.read_bytes():
            _run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], d)
            shutil.copyfile(lock, stamp)
        return BuiltBot("js", ("node", str(d / "src" / "bot.js")))
    if language == "rust":
        _run(["cargo", "build", "--release", "--quiet"], d)
        return BuiltBot("rust", (str(d / "target" / "release" / "okgin-bot"),))
    if language == "java":
        _run(["sh", "build.sh"], d)
        return BuiltBot("java", (str(d / "build" / "okgin-bot"),))
    raise ValueError(f"no example bot in {language!r}; languages: {', '.join(LANGUAGES)}")
