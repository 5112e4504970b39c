"""Every local participant in a bubblewrap sandbox, a fresh one per game.

Why: a bot launched unconfined runs as the organiser, in the config's directory. It can
read the config, the results file (the event's secret), the referee's journals and
state, other participants' programs, the home directory, and keep notes from one game
to the next. In the sandbox it sees only:

- the system directories, read-only: ``/usr`` (with ``/bin``, ``/lib*``, ``/sbin`` as on
  the host) and a short list of ``/etc`` entries programs need (:data:`ETC_ENTRIES`:
  the dynamic linker's cache, ``passwd``/``group``, ``alternatives`` and the JDK's
  ``/etc/java-*`` for ``java``, ``localtime``, ``hosts``, ``nsswitch.conf``);
- its program files, read-only: the participant's ``dir`` (default: the directory of
  each word of its command that names a file, see :func:`default_dirs`); for a Python
  program (``bot = ...`` or a command run by a ``python`` interpreter) also the Python
  installation (:func:`python_dirs`: ``sys.prefix``/``base_prefix`` and the directories
  of the ``okgin`` and ``clients`` packages, which an editable install keeps in the
  source tree). Inside those, the runner's own files (config, results file, run
  directory with journals, logs and referee state, outputs) and other participants'
  directories are covered by empty read-only mounts;
- a fresh, empty, writable ``/tmp`` (a tmpfs of ``file_mb``; ``HOME`` and ``TMPDIR`` point
  at it), gone when the game's sandbox ends;
- its own processes only (a pid namespace; ``/proc`` is the namespace's), a private
  ``/dev`` (null, zero, random, urandom, tty), no SysV IPC or abstract sockets of the host;
- no network (``--unshare-net``: only a loopback of its own), and its seat's door,
  reached through the door relay (:mod:`.relay`) at :data:`SOCKET_PATH` (its
  ``{endpoint}``), or at ``127.0.0.1:``:data:`TCP_PORT` of its own loopback for a
  participant with ``network = "tcp"``. Nothing of the door is mounted: the relay gets
  the door as a file descriptor (:func:`door_channel`), so no host path of it shows in
  ``/proc/self/mountinfo``.

The environment is cleared: the bot gets ``PATH``, ``HOME``, ``TMPDIR``, ``LANG``, the
``OKGIN_*`` variables (its seat token in ``OKGIN_TOKEN``) and its own ``env`` (never, say,
the organiser's ``OKGIN_ADMIN_KEY``). bwrap's options reach it through a file descriptor
(:func:`conceal`), so neither ``ps`` on the host nor ``/proc/1/cmdline`` in the sandbox
shows the token or a path the organiser binds or hides. A working directory the bot may
not see (by default the config's directory) is replaced by its ``/tmp``.

Limits (:class:`Limits`): memory, processes and CPU count for the whole sandbox, in a
cgroup of its own where the machine offers one (:mod:`.cgroups`). Otherwise (the
fallback): address space (``RLIMIT_AS``), CPU seconds (``RLIMIT_CPU``,
per process: a game's bot is one process), file size (``RLIMIT_FSIZE``, also the size of
``/tmp``; the bot's log has bounds of its own, :mod:`.botlog`) are set before ``bwrap`` is exec'd and inherited.
Processes (and threads) are counted by ``RLIMIT_NPROC``, which the kernel ignores for
uid 0 and counts per user: so when the runner is root, the bot runs as an unprivileged
uid of its own (:meth:`Sandbox.next_uid`, ``setpriv`` inside the sandbox), and the limit
is set inside the sandbox's namespaces (``prlimit``), where it counts that bot's
processes only (Linux >= 5.14 counts ``RLIMIT_NPROC`` per user namespace). Running as
another uid, the bot can read only files that others may read (mode ``o+r``).

A Java bot cannot use ``ipc://``: JeroMQ 0.3-0.5 (Debian's ``libjeromq-java``) emulates
it over TCP. Such a participant says ``network = "tcp"`` (``"host"``, its old name, means
the same): the relay also listens on ``127.0.0.1:``:data:`TCP_PORT` inside the sandbox's
own network namespace, and the bot is given ``tcp://127.0.0.1:7117``. It keeps no network
of the host: its connections reach its seat's door and nothing else, as every other
sandboxed bot's do. (It once kept the host's network namespace and got the referee's TCP
endpoint, where it could open tokenless sessions, use the lobby and reach every port of
the host: issue 24.)
"""

from __future__ import annotations

import array
import importlib.util
import os
import resource
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from socket import AF_UNIX, SCM_RIGHTS, SOCK_STREAM, SOL_SOCKET, socketpair

BWRAP = "/usr/bin/bwrap"
PRLIMIT = "/usr/bin/prlimit"
SETPRIV = "/usr/bin/setpriv"
SOCKET_DIR = "/run/okgin"
SOCKET_PATH = f"{SOCKET_DIR}/referee.sock"
RELAY_PATH = f"{SOCKET_DIR}/relay.py"  # the relay's copy in the sandbox (bwrap --file)
RELAY_PYTHON = "/usr/bin/python3"  # runs the relay: the system's, in /usr, which every sandbox shows
TCP_PORT = 7117  # where the relay listens on the sandbox's own loopback for network = "tcp"
TMP = "/tmp"
ETC_ENTRIES = ("alternatives", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "passwd", "group", "nsswitch.conf",
               "hosts", "localtime", "host.conf")
SYSTEM_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
# Bots run as uids far above any real account or subordinate-id range when the runner
# is root: one per bot, so RLIMIT_NPROC counts that bot alone.
UID_BASE = 1_000_000_000
NETWORKS = ("none", "tcp")  # how a sandboxed bot reaches its door: ipc:// or tcp:// (.relay)


@dataclass
class Wrapped:
    """A bot's command confined: ``argv`` (bwrap's), ``preexec`` (the limits set before
    exec) and ``fds``, descriptors the child must inherit (``pass_fds``): the relay's
    source and the door's channel. The caller closes them once the child is started."""

    argv: list[str]
    preexec: Callable[[], None]
    fds: tuple[int, ...] = field(default=())

    def close(self) -> None:
        for fd in self.fds:
            os.close(fd)


class SandboxError(RuntimeError):
    """The sandbox cannot be used here (the message says why and what to do)."""


@dataclass(frozen=True)
class Limits:
    """Per-participant limits (``[limits]`` defaults, a participant's ``limits = {...}``)."""

    # With a cgroup (.cgroups) memory, processes and CPU count for the whole sandbox;
    # without one (rlimits) memory is each process's address space and CPU each one's.
    memory_mb: int = 1024  # memory of the sandbox (its /tmp included); rlimits: address space
    cpu_s: int = 300  # CPU seconds per game; the config's default grows with the clock (cgroups.default_cpu_s)
    processes: int = 64  # processes and threads in the sandbox
    file_mb: int = 64  # the largest file and the size of /tmp (the log: .botlog)
    cpus: int = 1  # CPUs the sandbox may use at once (cgroups only), so it cannot starve the opponent

    def merged(self, overrides: Sequence[tuple[str, int]]) -> Limits:
        return Limits(**{**self.__dict__, **dict(overrides)})

    def rlimits(self) -> list[tuple[int, int, int]]:
        """The limits set before exec (``resource.setrlimit`` arguments), the fallback
        without a cgroup (.cgroups). CPU: SIGXCPU at the soft limit, SIGKILL a second later
        for a program that catches it. Address space: :data:`AS_FACTOR` x ``memory_mb``,
        since address space is not memory (a JVM reserves a 1 GB class space and its heap
        up front, V8 its cage): the default 1 GB gives the 4 GB such bots need."""
        mb = 1024 * 1024
        space = AS_FACTOR * self.memory_mb * mb
        return [(resource.RLIMIT_AS, space, space),
                (resource.RLIMIT_CPU, self.cpu_s, self.cpu_s + 1),
                (resource.RLIMIT_FSIZE, self.file_mb * mb, self.file_mb * mb)]


LIMIT_KEYS = tuple(Limits.__dataclass_fields__)
AS_FACTOR = 4  # rlimits only: the address space a process gets per MB of memory_mb


def python_dirs() -> list[Path]:
    """What ``python -m okgin bot NAME`` needs: the interpreter's prefixes (standard
    library, site-packages, the editable install's finder) and the okgin/clients
    package directories (in the source tree for an editable install). Found without
    importing clients/ (competition code never imports bots)."""
    dirs = {Path(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}
    dirs.add(Path(os.path.realpath(sys.executable)).parent)
    # A venv's bin too (sys.executable as named, a symlink there): else a participant whose
    # command starts with VENV/bin/python hides it from the Python participants.
    dirs.add(Path(os.path.abspath(sys.executable)).parent)
    for pkg in ("okgin", "clients"):
        spec = importlib.util.find_spec(pkg)
        for loc in (spec.submodule_search_locations or []) if spec else []:
            dirs.add(Path(loc))
    return sorted(dirs)


def is_python(word: str) -> bool:
    """Is this command word a Python interpreter (it then needs the Python installation)?"""
    name = Path(word).name
    return name.startswith("python") or os.path.realpath(shutil.which(word) or word) == os.path.realpath(sys.executable)


def _system(path: Path) -> bool:
    return path.parts[:2] in {("/", "usr"), *(("/", s) for s in SYSTEM_LINKS)}


def default_dirs(argv: Sequence[str], cwd: Path, python: bool) -> list[Path]:
    """A participant's program files when it declares no ``dir``: the directory of each
    word of its command that names an existing file (the program, or the script an
    interpreter runs), outside the system directories, plus the Python installation
    for a Python program."""
    dirs: list[Path] = []
    for word in argv:
        if not word or word.startswith("-") or "{" in word:
            continue
        path = Path(word) if "/" in word else None
        if path is None:
            found = shutil.which(word) if word is argv[0] else None
            path = Path(found) if found else cwd / word
        path = path if path.is_absolute() else cwd / path
        if path.is_file():
            real = Path(os.path.realpath(path))
            for p in {path.parent, real.parent}:
                if not _system(p):
                    dirs.append(p)
    if python or (argv and is_python(argv[0])):
        dirs += python_dirs()
    return dirs


def private_dirs(mine: Sequence[Path], theirs: Sequence[Path]) -> list[Path]:
    """Another participant's directories (``theirs``) to hide from one whose sandbox shows
    ``mine``: all of them but those inside a directory both show.

    Why: both show the Python installation (:func:`python_dirs`), and a command run by a
    venv's interpreter (``VENV/bin/python bot.py``) names ``VENV/bin`` among its own
    directories. Hidden from everyone else, that emptied the very interpreter of every
    other Python participant (the built-in ``simple`` failed its preflight, 127): one
    participant's command changed what the others' sandboxes see. A directory inside
    one both share is part of the shared installation, not anyone's own files."""
    shared = {Path(os.path.abspath(d)) for d in mine} & {Path(os.path.abspath(d)) for d in theirs}
    return [Path(os.path.abspath(d)) for d in theirs if not any(_inside(Path(os.path.abspath(d)), c) for c in shared)]


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _minimal(dirs: Sequence[Path]) -> list[Path]:
    """Absolute, deduplicated, without any directory inside another one."""
    out: list[Path] = []
    for d in sorted({Path(os.path.abspath(d)) for d in dirs}, key=lambda p: len(p.parts)):
        if not any(_inside(d, o) for o in out):
            out.append(d)
    return out


def probe(bwrap: str = BWRAP) -> str | None:
    """None if a sandbox can be started here, else why not (run once, at the start)."""
    if not os.path.exists(bwrap):
        return f"bubblewrap is not installed ({bwrap}; Debian/Ubuntu package bubblewrap)"
    for tool in (PRLIMIT, RELAY_PYTHON) + ((SETPRIV,) if os.geteuid() == 0 else ()):
        if not os.path.exists(tool):
            package = "python3" if tool == RELAY_PYTHON else "util-linux"
            return f"{tool} is missing (Debian/Ubuntu package {package})"
    sb = Sandbox([], bwrap=bwrap)
    w = sb.wrap(["/bin/true"], visible=[], cwd=Path("/"), env={}, socket=None, limits=Limits())
    try:
        proc = subprocess.run(w.argv, capture_output=True, text=True, timeout=20, preexec_fn=w.preexec)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"bubblewrap could not run: {e}"
    if proc.returncode != 0:
        why = (proc.stderr or proc.stdout).strip().splitlines()
        return (f"bubblewrap cannot create a sandbox here (exit status {proc.returncode}: {why[-1] if why else 'no output'}); "
                "unprivileged user namespaces may be disabled (sysctl kernel.unprivileged_userns_clone, "
                "or an AppArmor restriction)")
    return None


class Sandbox:
    """Builds the ``bwrap`` command of one bot in one game.

    ``hidden``: the runner's own paths (config, results file and its -wal/-shm, run
    directory, outputs, the referees' socket directory); any of them that lies inside a
    directory a bot sees is covered by an empty read-only mount.
    """

    def __init__(self, hidden: Sequence[Path], bwrap: str = BWRAP) -> None:
        self.hidden = [Path(os.path.abspath(h)) for h in hidden]
        self.bwrap = bwrap
        self.root = os.geteuid() == 0
        self._uids = 0

    def next_uid(self) -> int:
        """A uid of its own for the next bot (root only): ``RLIMIT_NPROC`` counts per uid.
        Spread by the runner's pid, so two runners on one host do not share uids."""
        self._uids += 1
        return UID_BASE + (os.getpid() % 16384) * 65536 + self._uids % 65536

    def wrap(self, argv: Sequence[str], *, visible: Sequence[Path], cwd: Path, env: dict[str, str],
             socket: Path | None, limits: Limits, network: str = "none",
             others: Sequence[Path] = ()) -> Wrapped:
        """``argv`` confined. ``others``: other participants' directories, hidden where they
        lie inside ``visible``. ``socket``: the seat's door on the host, reached through the
        relay (:mod:`.relay`) at :data:`SOCKET_PATH`, and with ``network = "tcp"`` at
        ``127.0.0.1:``:data:`TCP_PORT` too; nothing of it is mounted."""
        if network not in NETWORKS:
            raise ValueError(f"network must be one of {', '.join(NETWORKS)}, not {network!r}")
        a = [self.bwrap, "--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
             "--unshare-cgroup-try", "--hostname", "okgin-bot"]
        a.append("--unshare-net")
        if not self.root:
            a += ["--unshare-user", "--disable-userns"]
        a += ["--ro-bind", "/usr", "/usr"]
        for name in SYSTEM_LINKS:
            host = Path("/") / name
            if host.is_symlink():
                a += ["--symlink", os.readlink(host), str(host)]
            elif host.is_dir():
                a += ["--ro-bind", str(host), str(host)]
        a += ["--perms", "0755", "--dir", "/etc"]
        for name in ETC_ENTRIES + tuple(sorted(p.name for p in Path("/etc").glob("java-*"))):
            if os.path.lexists(f"/etc/{name}"):
                a += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
        a += ["--proc", "/proc", "--dev", "/dev",
              "--perms", "1777", "--size", str(limits.file_mb * 1024 * 1024), "--tmpfs", TMP]
        made: set[Path] = {Path("/"), Path(TMP), Path("/etc")}
        listable = {Path(os.path.abspath(e)) for e in sys.path if e}

        def parents(p: Path) -> None:
            # bwrap makes missing parents 0700 (unreadable by the bot's uid): make them
            # 0711, traversable but not listable, so only the bound entries can be reached.
            # But 0755 for a directory on the runner's Python path: Python lists such a
            # directory to import from it (an editable install's .pth may name the source
            # tree, of which only okgin/ and clients/ are bound); it holds nothing but the
            # entries bound into it.
            for anc in reversed(p.parents):
                if anc not in made:
                    a.extend(["--perms", "0755" if anc in listable else "0711", "--dir", str(anc)])
                    made.add(anc)

        mine = {Path(os.path.abspath(d)) for d in visible}
        shown = _minimal([d for d in mine if d.exists()])
        for d in shown:
            parents(d)
            a += ["--ro-bind", str(d), str(d)]
            made.add(d)
        # Another participant's directory is hidden unless it is also one of this one's
        # (the shared Python installation) or holds one of them.
        theirs = [Path(os.path.abspath(o)) for o in others]
        for h in _minimal([*self.hidden, *(o for o in theirs if not any(_inside(m, o) for m in mine))]):
            if not any(_inside(h, d) and h != d for d in shown) or not os.path.lexists(h):
                continue
            if h.is_dir():
                a += ["--perms", "0000", "--tmpfs", str(h), "--remount-ro", str(h)]
            else:
                a += ["--ro-bind", "/dev/null", str(h)]
        fds: list[int] = []
        relay: list[str] = []
        if socket is not None:
            # A tmpfs of the sandbox's own (the relay, as the bot's uid, binds the socket
            # there), the relay's source copied in, and the door as a descriptor: no
            # mount whose source is a host path (mountinfo would name it).
            parents(Path(SOCKET_DIR))
            a += ["--perms", "1777", "--size", str(1 << 20), "--tmpfs", SOCKET_DIR]
            try:
                fds.append(relay_source())
                a += ["--perms", "0444", "--file", str(fds[-1]), RELAY_PATH]
                fds.append(door_channel(socket))
            except OSError:
                for fd in fds:
                    os.close(fd)
                raise
            relay = [RELAY_PYTHON, "-I", "-S", RELAY_PATH, "--channel", str(fds[-1]), "--unix", SOCKET_PATH,
                     *(("--tcp", str(TCP_PORT)) if network == "tcp" else ()), "--"]
        cwd = Path(os.path.abspath(cwd))
        if not any(_inside(cwd, d) or _inside(d, cwd) for d in shown):
            # A working directory that neither is nor holds anything the bot may see (by
            # default the config's directory) would only tell it the organiser's path: it
            # starts in its own /tmp instead. One that holds its program (``bot =
            # "bots/x.py:X"`` relative to it) is kept, empty but for what is bound there:
            # its path is part of the program's anyway.
            cwd = Path(TMP)
        elif not any(_inside(cwd, d) for d in shown) and cwd not in made:
            parents(cwd)
            a += ["--perms", "0711", "--dir", str(cwd)]
        a += ["--remount-ro", "/", "--chdir", str(cwd), "--clearenv"]
        base = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": TMP, "TMPDIR": TMP, "LANG": "C.UTF-8",
                "PYTHONDONTWRITEBYTECODE": "1"}
        for k, v in {**base, **env}.items():
            a += ["--setenv", k, v]
        a += ["--", PRLIMIT, f"--nproc={limits.processes}:{limits.processes}", "--"]
        if self.root:
            uid = str(self.next_uid())
            a += [SETPRIV, "--reuid", uid, "--regid", uid, "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--"]
        a += relay + list(argv)
        return Wrapped(a, rlimit_preexec(limits), tuple(fds))


def endpoint_inside(network: str) -> str:
    """The endpoint a sandboxed bot is given for its door (the relay's, .relay)."""
    return f"tcp://127.0.0.1:{TCP_PORT}" if network == "tcp" else f"ipc://{SOCKET_PATH}"


def relay_source() -> int:
    """A memory file holding :mod:`.relay`'s source, for ``bwrap --file``: the sandbox
    gets a copy in its own tmpfs, not a mount of the package's directory."""
    data = Path(__file__).with_name("relay.py").read_bytes()
    fd = os.memfd_create("okgin-relay")
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def door_channel(door: Path) -> int:
    """One end of a socket pair that holds the door's socket file, opened ``O_PATH``, in
    flight (``SCM_RIGHTS``); the relay receives it and connects through
    ``/proc/self/fd/N``. Whoever holds only this end (bubblewrap, the sandbox's init)
    holds an anonymous socket: no path. Raises OSError if the door is gone."""
    opath = os.open(door, os.O_PATH | os.O_CLOEXEC)
    ours, theirs = socketpair(AF_UNIX, SOCK_STREAM)
    try:
        ours.sendmsg([b"d"], [(SOL_SOCKET, SCM_RIGHTS, array.array("i", [opath]))])
    except OSError:
        theirs.close()
        raise
    finally:
        ours.close()
        os.close(opath)
    return theirs.detach()


def conceal(argv: Sequence[str]) -> tuple[list[str], int]:
    """``(argv, fd)``: bwrap's options moved off its command line into a memory file
    (``bwrap --args FD``), which bwrap reads and closes before the sandbox starts.

    Why: a process's arguments are public. Any local user reads ``/proc/PID/cmdline`` (and
    ``ps`` shows it), and inside the sandbox ``/proc/1/cmdline`` is bwrap's own (the
    namespace's init is a copy of bwrap): the ``--setenv OKGIN_TOKEN`` value (a seat
    token: whoever has it plays, or resigns, that seat) and every host path bound or
    hidden (config, run directory, referee socket) were readable there. What stays on
    the command line is ``bwrap --args FD --`` and the command run inside the sandbox (the
    participant's own, with the sandbox's endpoint, never a token). The caller passes
    ``fd`` to the child (``pass_fds``) and closes its own copy once it is started.
    """
    argv = list(argv)
    cut = argv.index("--")  # the first: bwrap's options end there, the command follows
    data = b"".join(a.encode() + b"\0" for a in argv[1:cut])
    fd = os.memfd_create("okgin-sandbox-args")
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    os.lseek(fd, 0, os.SEEK_SET)
    return [argv[0], "--args", str(fd), *argv[cut:]], fd


def rlimit_preexec(limits: Limits) -> Callable[[], None]:
    """A ``preexec_fn`` setting the limits that are inherited through ``exec``."""
    rl = limits.rlimits()

    def apply() -> None:
        for which, soft, hard in rl:
            resource.setrlimit(which, (soft, hard))

    return apply


SIGNAL_LIMITS = {128 + 24: "cpu_s", -24: "cpu_s", 128 + 25: "file_mb", -25: "file_mb"}  # SIGXCPU, SIGXFSZ
TAIL_LIMITS = (
    ("file_mb", ("File too large", "EFBIG", "SIGXFSZ", "No space left on device", "ENOSPC")),  # /tmp is file_mb too
    ("processes", ("Resource temporarily unavailable", "can't start new thread", "EAGAIN", "unable to create native thread",
                   "fork: retry", "BlockingIOError")),
    ("memory_mb", ("MemoryError", "Cannot allocate memory", "out of memory", "OutOfMemoryError", "bad_alloc", "ENOMEM",
                   "Could not reserve enough space", "failed to map", "memory allocation of", "heap out of memory")),
)


def limit_hit(code: int | None, tail: str, limits: Limits) -> str | None:
    """Which limit a bot that exited probably hit, as a phrase for the forfeit's reason.

    CPU and file size are certain (the kernel's SIGXCPU and SIGXFSZ: exit status 152 and
    153 through bwrap). Memory and processes show only as failed calls, so they are read
    from the bot's last words (MemoryError, ENOMEM, EAGAIN from fork...): "probably"."""
    what = SIGNAL_LIMITS.get(code if code is not None else 0)
    sure = what is not None
    if what is None:
        for key, needles in TAIL_LIMITS:
            if any(n in tail for n in needles):
                what = key
                break
    if what is None:
        return None
    text = {"cpu_s": f"the CPU limit of {limits.cpu_s} s", "file_mb": f"the file size limit of {limits.file_mb} MB",
            "processes": f"the limit of {limits.processes} processes", "memory_mb": f"the memory limit of {limits.memory_mb} MB"}
    return ("hit " if sure else "probably hit ") + text[what]
