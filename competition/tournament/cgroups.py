"""Limits for a whole sandbox: one control group per bot per game (issue 24 item 4).

Why: rlimits count per process. Eight children of one bot held 1,271 MB under
``memory_mb = 256``, 128 processes of 4 GB and 300 CPU-s each were allowed per game, and
twelve busy children doubled the opponent's slowest move. A cgroup counts the sandbox as
a whole: every process in it, its threads, and its ``/tmp`` (a tmpfs, charged as memory).

For each sandboxed bot of each game the runner makes a group (:meth:`Backend.group`)
under a directory of its own (``okgin-PID``, inside the runner's own cgroup, so a
limit placed on the runner by whoever started it still holds for its bots):

- memory: ``memory_mb`` for everything in the sandbox, swap included (v2 ``memory.max``
  and ``memory.swap.max = 0``; v1 ``memory.limit_in_bytes`` and
  ``memory.memsw.limit_in_bytes`` where swap accounting exists). Past it the kernel's
  OOM killer ends a process of the sandbox, and the runner (:func:`enforce`) then ends
  the whole sandbox: the game is a forfeit naming the limit.
- processes: ``processes`` (``pids.max``): a fork beyond it fails with EAGAIN. The bot
  is *not* ended for trying (a fork bomb is contained, the bot may play on); a bot that
  dies of it is named as having hit the limit, with certainty (``pids.events``).
- CPU: ``cpus`` CPUs at most at any moment (v2 ``cpu.max``, v1 CFS quota), so a busy
  sandbox cannot starve the opponent, and ``cpu_s`` CPU-seconds per game for the whole
  sandbox (v2 ``cpu.stat``, v1 ``cpuacct.usage``), enforced by the runner polling the
  usage (:func:`enforce`). The default ``cpu_s`` grows with the clock
  (:func:`default_cpu_s`).

The bot's process (bubblewrap) joins its group in ``preexec_fn``, between fork and exec,
so nothing of the sandbox ever runs outside it. After the game everything in the group
is killed and the group removed (also for a cancelled run; a ``kill -9`` of the runner
leaves empty groups behind, which the next runner on the machine removes).

Which mechanism is used is probed once (:func:`probe`): cgroup v2 if its memory and pids
controllers can be delegated to the runner's directory, else cgroup v1 if its memory and
pids hierarchies are writable, else none: the per-process rlimits of :mod:`.sandbox`
(not root, no cgroupfs, a container without delegation). The report names it
(:data:`V2`, :data:`V1`, :data:`RLIMITS`).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import resource
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .sandbox import Limits

V2 = "cgroup v2"
V1 = "cgroup v1"
RLIMITS = "rlimits (per process)"
CGROUP_FS = Path("/sys/fs/cgroup")
SELF_CGROUP = Path("/proc/self/cgroup")
PREFIX = "okgin-"
PERIOD_US = 100_000  # the CFS period for a CPU quota (the kernel's default)
POLL_S = 0.25  # how often the runner reads a sandbox's usage (a few small files)
# The default CPU-seconds of a sandbox per game: this factor times a long game's clock
# budget, at least the floor; without a clock, the same 300 s as before.
CPU_FACTOR = 2
CPU_FLOOR_S = 60
CPU_NO_CLOCK_S = 300
LONG_GAME_MOVES = 200  # a bot's moves in a long game (4-8 hands of 15-30 moves)


def default_cpu_s(clock: Any) -> int:
    """CPU-seconds per game for a sandbox, in proportion to the clock.

    A bot's clock allows it at most ``bank + moves * (move + increment)`` of thinking in
    a game of ``moves`` moves; the sandbox may use :data:`CPU_FACTOR` times that for a
    long game (:data:`LONG_GAME_MOVES`), at least :data:`CPU_FLOOR_S` (the interpreter's
    start, a JVM's JIT), and :data:`CPU_NO_CLOCK_S` without a clock. ``clock``: an
    ``okgin.protocol.settings.Clock`` (move_ms, bank_ms, increment_ms)."""
    if not (clock.move_ms or clock.bank_ms):
        return CPU_NO_CLOCK_S
    budget_ms = clock.bank_ms + LONG_GAME_MOVES * (clock.move_ms + clock.increment_ms)
    return max(CPU_FLOOR_S, math.ceil(CPU_FACTOR * budget_ms / 1000))


@dataclass
class Usage:
    """What a sandbox has used so far (from its group's files)."""

    cpu_s: float | None = None  # None: no CPU accounting here
    oom_kills: int = 0  # processes the OOM killer ended at the memory limit
    pid_refusals: int = 0  # forks refused at the processes limit


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _keyed(text: str, key: str) -> int:
    """The number after ``key`` in a flat-keyed file (``memory.events``, ``pids.events``,
    ``memory.oom_control``, ``cpu.stat``); 0 when absent."""
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == key:
            with contextlib.suppress(ValueError):
                return int(parts[1])
    return 0


def _write(path: Path, value: str) -> None:
    """Write a control file, which must exist (never created: a directory that is not a
    cgroup has none, and then this is no cgroupfs)."""
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    try:
        os.write(fd, value.encode())
    finally:
        os.close(fd)


def _mkdir(path: Path, exist_ok: bool = False) -> None:
    """A new cgroup (the kernel fills it with its control files)."""
    path.mkdir(exist_ok=exist_ok)


def _rmdir(path: Path) -> None:
    """Remove a cgroup: only an empty one (no processes, no child groups) can be; its
    control files go with it."""
    path.rmdir()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass
class Group:
    """One sandbox's cgroup: a directory per hierarchy (one for v2)."""

    mechanism: str
    name: str
    limits: Limits
    dirs: dict[str, Path]  # controller ("memory", "pids", "cpu", "cpuacct", "freezer"; v2: "") -> directory
    removed: bool = field(default=False)

    def _all(self) -> list[Path]:
        return list(dict.fromkeys(self.dirs.values()))

    def _dir(self, controller: str) -> Path | None:
        return self.dirs.get("" if self.mechanism == V2 else controller)

    # ------------------------------------------------------------ in the child
    def preexec(self) -> Callable[[], None]:
        """A ``preexec_fn``: the rlimits that still apply (CPU seconds and file size per
        process; not the address space, which the group's memory limit replaces: the JVM
        and V8 reserve far more than they use), then this process joins the group. A
        failure ends the child with a message in its log (status 125), never a
        half-confined bot."""
        mb = 1024 * 1024
        lim = self.limits
        rl = [(resource.RLIMIT_CPU, lim.cpu_s, lim.cpu_s + 1), (resource.RLIMIT_FSIZE, lim.file_mb * mb, lim.file_mb * mb)]
        procs = [str(d / "cgroup.procs") for d in self._all()]

        def apply() -> None:
            try:
                for which, soft, hard in rl:
                    resource.setrlimit(which, (soft, hard))
                pid = str(os.getpid()).encode()
                for p in procs:
                    fd = os.open(p, os.O_WRONLY)
                    try:
                        os.write(fd, pid)
                    finally:
                        os.close(fd)
            except OSError as e:
                os.write(2, f"okgin: cannot join the sandbox's cgroup: {e}\n".encode())
                os._exit(125)

        return apply

    # ------------------------------------------------------------ in the runner
    def usage(self) -> Usage:
        u = Usage()
        if self.mechanism == V2:
            d = self.dirs[""]
            stat = _read(d / "cpu.stat")
            if "usage_usec" in stat:
                u.cpu_s = _keyed(stat, "usage_usec") / 1e6
            u.oom_kills = _keyed(_read(d / "memory.events"), "oom_kill")
            u.pid_refusals = _keyed(_read(d / "pids.events"), "max")
            return u
        acct = self._dir("cpuacct")
        if acct is not None:
            text = _read(acct / "cpuacct.usage").strip()
            if text.isdigit():
                u.cpu_s = int(text) / 1e9
        mem = self._dir("memory")
        if mem is not None:
            u.oom_kills = _keyed(_read(mem / "memory.oom_control"), "oom_kill")
        pids = self._dir("pids")
        if pids is not None:
            u.pid_refusals = _keyed(_read(pids / "pids.events"), "max")
        return u

    def exceeded(self, u: Usage | None = None) -> str | None:
        """The limit that ends the bot (memory, total CPU), as a phrase for the forfeit's
        reason, or None."""
        u = u or self.usage()
        lim = self.limits
        if u.oom_kills:
            return f"hit the memory limit of {lim.memory_mb} MB for the whole sandbox ({self.mechanism})"
        if u.cpu_s is not None and u.cpu_s > lim.cpu_s:
            return f"hit the CPU limit of {lim.cpu_s} s for the whole sandbox ({self.mechanism}: {u.cpu_s:.1f} CPU-s used)"
        return None

    def verdict(self) -> str | None:
        """Which of the sandbox's limits a bot that exited hit, for certain (the
        processes limit too: a bot that dies of a refused fork), or None."""
        u = self.usage()
        hit = self.exceeded(u)
        if hit is None and u.pid_refusals:
            hit = (f"hit the limit of {self.limits.processes} processes for the whole sandbox ({self.mechanism}: "
                   f"{u.pid_refusals} fork(s) refused)")
        return hit

    def pids(self) -> list[int]:
        out: set[int] = set()
        for d in self._all():
            for w in _read(d / "cgroup.procs").split():
                if w.isdigit():
                    out.add(int(w))
        return sorted(out)

    def kill_all(self) -> None:
        """SIGKILL everything in the group. v2's ``cgroup.kill`` does it atomically;
        otherwise the group is frozen first where a freezer exists (nothing forks while
        being killed), and its members are killed until none is left to read."""
        d2 = self.dirs.get("")
        if self.mechanism == V2 and d2 is not None and (d2 / "cgroup.kill").exists():
            with contextlib.suppress(OSError):
                _write(d2 / "cgroup.kill", "1")
                return
        freezer = d2 / "cgroup.freeze" if self.mechanism == V2 and d2 is not None else None
        if self.mechanism == V1 and self._dir("freezer") is not None:
            freezer = self._dir("freezer") / "freezer.state"  # type: ignore[operator]
        frozen = False
        if freezer is not None and freezer.exists():
            with contextlib.suppress(OSError):
                _write(freezer, "1" if self.mechanism == V2 else "FROZEN")
                frozen = True
        try:
            for _ in range(100):
                pids = self.pids()
                if not pids:
                    break
                for pid in pids:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(pid, signal.SIGKILL)
                if frozen:
                    break  # frozen: nobody forked meanwhile; thawing lets the SIGKILLs land
        finally:
            if frozen and freezer is not None:
                with contextlib.suppress(OSError):
                    _write(freezer, "0" if self.mechanism == V2 else "THAWED")

    async def remove(self, timeout: float = 10.0) -> bool:
        """Kill what is left and remove the group's directories (bounded: a process takes
        a moment to exit and leave the group). False if one could not be removed."""
        if self.removed:
            return True
        deadline = time.monotonic() + timeout
        while True:
            self.kill_all()
            if not self.pids() or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.02)
        ok = True
        for d in self._all():
            while True:
                try:
                    _rmdir(d)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        ok = False
                        break
                    self.kill_all()
                    await asyncio.sleep(0.02)
        self.removed = ok
        return ok


async def enforce(group: Group, kill: Callable[[], None], poll: float = POLL_S) -> str:
    """Watch a sandbox's group until a limit ends it (a process OOM-killed at the memory
    limit, more CPU-seconds than ``cpu_s``), then ``kill`` it (the runner's stop of the
    sandbox) and everything in the group. Returns the phrase; cancelled when the game ends."""
    while True:
        hit = group.exceeded()
        if hit is not None:
            kill()
            group.kill_all()
            return hit
        await asyncio.sleep(poll)


class Backend:
    """Makes the groups of one runner: ``base`` holds the runner's directory
    (``okgin-PID``) in each hierarchy it uses."""

    def __init__(self, mechanism: str, base: dict[str, Path]) -> None:
        self.mechanism = mechanism
        self.base = base
        self._n = 0
        self.groups: set[str] = set()

    def controllers(self) -> list[str]:
        return sorted(c for c in self.base if c)

    def group(self, name: str, limits: Limits) -> Group:
        """A new group for one sandbox, limits set (OSError if the cgroupfs refuses)."""
        self._n += 1
        leaf = f"{name}-{self._n}"
        dirs = {c: b / leaf for c, b in self.base.items()}
        g = Group(self.mechanism, leaf, limits, dirs)
        made: list[Path] = []
        try:
            for d in g._all():
                _mkdir(d)
                made.append(d)
            (_limit_v2 if self.mechanism == V2 else _limit_v1)(g)
        except OSError:
            for d in reversed(made):
                with contextlib.suppress(OSError):
                    _rmdir(d)
            raise
        return g

    def close(self) -> None:
        """Remove the runner's directories (their groups are gone by now; one a failed
        launch left behind is removed too, if nothing runs in it any more)."""
        for d in dict.fromkeys(self.base.values()):
            with contextlib.suppress(OSError):
                for sub in [s for s in d.iterdir() if s.is_dir()]:
                    with contextlib.suppress(OSError):
                        _rmdir(sub)
                _rmdir(d)


def _limit_v2(g: Group) -> None:
    d, lim = g.dirs[""], g.limits
    _write(d / "memory.max", str(lim.memory_mb * 1024 * 1024))
    if (d / "memory.swap.max").exists():
        _write(d / "memory.swap.max", "0")
    _write(d / "pids.max", str(lim.processes))
    if (d / "cpu.max").exists():
        _write(d / "cpu.max", f"{lim.cpus * PERIOD_US} {PERIOD_US}")


def _limit_v1(g: Group) -> None:
    lim = g.limits
    mem = g.dirs["memory"]
    limit = str(lim.memory_mb * 1024 * 1024)
    _write(mem / "memory.limit_in_bytes", limit)
    if (mem / "memory.memsw.limit_in_bytes").exists():  # swap accounting: memory + swap, the same
        _write(mem / "memory.memsw.limit_in_bytes", limit)
    _write(g.dirs["pids"] / "pids.max", str(lim.processes))
    cpu = g.dirs.get("cpu")
    if cpu is not None:
        _write(cpu / "cpu.cfs_period_us", str(PERIOD_US))
        _write(cpu / "cpu.cfs_quota_us", str(lim.cpus * PERIOD_US))


# ------------------------------------------------------------------------ probe
def own_cgroups(self_cgroup: Path = SELF_CGROUP) -> tuple[str | None, dict[str, str]]:
    """This process's cgroup: (its v2 path or None, {v1 controller: path})."""
    v2: str | None = None
    v1: dict[str, str] = {}
    for line in _read(self_cgroup).splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        hid, ctrls, path = parts
        if hid == "0" and ctrls == "":
            v2 = path
        else:
            for c in ctrls.split(","):
                if c:
                    v1[c] = path
    return v2, v1


def _under(mount: Path, path: str) -> Path:
    """The directory of cgroup ``path`` in a hierarchy mounted at ``mount``. A container
    may mount only its own subtree (its cgroup is then the mount itself)."""
    d = mount / path.lstrip("/")
    return d if d.is_dir() else mount


def _sweep(parent: Path) -> None:
    """Remove the empty directories of runners that are gone (a ``kill -9`` leaves them)."""
    try:
        entries = list(parent.iterdir())
    except OSError:
        return
    for d in entries:
        if not d.name.startswith(PREFIX) or not d.name[len(PREFIX):].isdigit() or not d.is_dir():
            continue
        pid = int(d.name[len(PREFIX):])
        if pid == os.getpid() or _alive(pid):
            continue
        # Only empty groups: their bots died with the runner (PR_SET_PDEATHSIG); a group
        # that still holds processes may be another pid namespace's runner's.
        for sub in [s for s in d.iterdir() if s.is_dir()]:
            with contextlib.suppress(OSError):
                _rmdir(sub)
        with contextlib.suppress(OSError):
            _rmdir(d)


def _try(make: Callable[[], Backend]) -> tuple[Backend | None, str]:
    try:
        backend = make()
    except OSError as e:
        return None, f"{e.strerror or e}" + (f" ({e.filename})" if e.filename else "")
    # A trial group: the limits must really be settable, not just the directories made.
    try:
        g = backend.group("probe", Limits())
    except OSError as e:
        backend.close()
        return None, f"{e.strerror or e}" + (f" ({e.filename})" if e.filename else "")
    for d in g._all():
        with contextlib.suppress(OSError):
            _rmdir(d)
    return backend, ""


def _v2(fs: Path, path: str) -> Backend:
    mount = fs / "unified" if (fs / "unified" / "cgroup.controllers").exists() else fs
    if not (mount / "cgroup.controllers").exists():
        raise OSError(0, "no cgroup2 mount")
    own = _under(mount, path)
    offered = set(_read(own / "cgroup.controllers").split())
    if not {"memory", "pids"} <= offered:
        raise OSError(0, f"the memory and pids controllers are not delegated to {own} "
                         f"(it offers: {' '.join(sorted(offered)) or 'none'})")
    want = [c for c in ("memory", "pids", "cpu") if c in offered]
    enabled = set(_read(own / "cgroup.subtree_control").split())
    missing = [c for c in want if c not in enabled]
    if missing:  # EBUSY when the runner's own cgroup holds processes (not the root)
        _write(own / "cgroup.subtree_control", " ".join(f"+{c}" for c in missing))
    _sweep(own)
    base = own / f"{PREFIX}{os.getpid()}"
    _mkdir(base, exist_ok=True)
    try:
        _write(base / "cgroup.subtree_control", " ".join(f"+{c}" for c in want))
    except OSError:
        with contextlib.suppress(OSError):
            _rmdir(base)
        raise
    return Backend(V2, {"": base})


def _v1(fs: Path, paths: dict[str, str]) -> Backend:
    mounts: dict[str, Path] = {}
    try:
        entries = sorted(fs.iterdir())
    except OSError as e:
        raise OSError(e.errno, f"cannot list {fs}") from None
    for d in entries:
        if d.is_dir() and not d.is_symlink() and (d / "cgroup.procs").exists():
            for c in d.name.split(","):
                mounts.setdefault(c, d)
    if not {"memory", "pids"} <= set(mounts):
        raise OSError(0, f"no cgroup v1 memory and pids hierarchies under {fs}")
    base: dict[str, Path] = {}
    try:
        for c in ("memory", "pids", "cpu", "cpuacct", "freezer"):
            if c not in mounts:
                continue
            own = _under(mounts[c], paths.get(c, "/"))
            if own in {b.parent for b in base.values()}:  # co-mounted (cpu,cpuacct): one directory
                base[c] = next(b for b in base.values() if b.parent == own)
                continue
            _sweep(own)
            b = own / f"{PREFIX}{os.getpid()}"
            _mkdir(b, exist_ok=True)
            base[c] = b
    except OSError:
        Backend(V1, base).close()
        raise
    return Backend(V1, base)


def probe(fs: Path = CGROUP_FS, self_cgroup: Path = SELF_CGROUP) -> tuple[Backend | None, str]:
    """The mechanism for whole-sandbox limits: ``(backend, "")`` for cgroup v2 or v1,
    else ``(None, why not)``: the runner then uses per-process rlimits."""
    if not fs.is_dir():
        return None, f"no cgroup filesystem at {fs}"
    v2path, v1paths = own_cgroups(self_cgroup)
    why: list[str] = []
    if v2path is not None:
        b, err = _try(lambda: _v2(fs, v2path))
        if b is not None:
            return b, ""
        why.append(f"cgroup v2: {err}")
    if v1paths:
        b, err = _try(lambda: _v1(fs, v1paths))
        if b is not None:
            return b, ""
        why.append(f"cgroup v1: {err}")
    return None, "; ".join(why) or f"this process is in no cgroup ({self_cgroup})"
