"""A hostile tournament participant: it plays legal moves (the SDK's simple bot), but
first tries to learn or damage what a sandboxed bot must not reach, and writes one JSON
line per attempt to its standard error (its log, kept with ``--keep-logs``):

    {"spy": "read", "path": ..., "ok": false, "error": "ENOENT"}

``ok`` true means the attempt worked (the test fails on any). Attempts:
reading files (``--read PATH``), listing directories (``--list PATH``), writing files
(``--write PATH``), TCP connections (``--tcp HOST:PORT``), forking until refused
(``--fork N``), allocating ``--alloc-mb`` megabytes, and a note in ``$TMPDIR`` left for
the next game (``note``: ok if one was already there), and what the sandbox shows of itself
(``introspect``: ok if its seat token shows anywhere but its own environment).

With ``--hog cpu|file|memory|fork`` it instead exhausts one limit at its first prompt
(the runner's forfeit reason must name it).

    python spy_bot.py ENDPOINT TOKEN [--read P]... [--list P]... [--write P]... [--tcp H:P]...
                      [--fork N] [--alloc-mb N] [--hog KIND]
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import socket
import sys
import tempfile
from pathlib import Path
from typing import Any

from clients.bots import get_bot
from clients.sdk import run_bot

NOTE = "okgin-spy-note"


def report(kind: str, target: str, ok: bool, **extra: Any) -> None:
    sys.stderr.write(json.dumps({"spy": kind, "target": target, "ok": ok, **extra}) + "\n")
    sys.stderr.flush()


def err(e: OSError | MemoryError) -> str:
    if isinstance(e, MemoryError):
        return "MemoryError"
    return errno.errorcode.get(e.errno or 0, str(e))


def attack(args: argparse.Namespace) -> None:
    for p in args.read:
        try:
            data = Path(p).read_bytes()
            report("read", p, bool(data), size=len(data))  # an empty mount over it reads as nothing
        except OSError as e:
            report("read", p, False, error=err(e))
    for p in args.list:
        try:
            report("list", p, True, entries=sorted(os.listdir(p)))
        except OSError as e:
            report("list", p, False, error=err(e))
    for p in args.write:
        try:
            with open(p, "w") as f:
                f.write("spy")
            report("write", p, True)
        except OSError as e:
            report("write", p, False, error=err(e))
    for hp in args.tcp:
        host, port = hp.rsplit(":", 1)
        try:
            with socket.create_connection((host, int(port)), timeout=3):
                report("tcp", hp, True)
        except OSError as e:
            report("tcp", hp, False, error=err(e))
    if args.fork:
        fork(args.fork)
    if args.alloc_mb:
        try:
            block = bytearray(args.alloc_mb * 1024 * 1024)
            report("alloc", f"{args.alloc_mb} MB", True, size=len(block))
            del block
        except MemoryError as e:
            report("alloc", f"{args.alloc_mb} MB", False, error=err(e))
    note = Path(tempfile.gettempdir()) / NOTE
    home_note = Path.home() / NOTE
    found = [str(p) for p in (note, home_note) if p.exists()]
    report("note", str(note), bool(found), found=found, tmpdir=tempfile.gettempdir())
    for p in (note, home_note):
        try:
            p.write_text("seen before")
        except OSError:
            pass
    report("env", "environ", "OKGIN_ADMIN_KEY" in os.environ, keys=sorted(os.environ))
    introspect()


def introspect() -> None:
    """What the sandbox shows of itself and the host: ``/proc/1/cmdline`` (bwrap's
    arguments: the namespace's init is a copy of bwrap), ``/proc/1/environ``, the mounts,
    the working directory, and every process's arguments, environment, mounts and open
    files (``/proc/PID/fd`` links: the door relay's is refused) it can read.
    ``ok``: its own seat token showed anywhere but in its own environment."""
    token = os.environ.get("OKGIN_TOKEN", "")

    def read(path: str) -> str:
        try:
            return Path(path).read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError as e:
            return f"<{err(e)}>"

    def links(pid: str) -> str:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError as e:
            return f"<{err(e)}>"
        out = []
        for fd in fds:
            try:
                out.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
            except OSError as e:
                out.append(f"<{err(e)}>")
        return " ".join(out)

    others = {}
    for pid in sorted(p for p in os.listdir("/proc") if p.isdigit()):
        if int(pid) != os.getpid():
            others[pid] = " | ".join((read(f"/proc/{pid}/cmdline"), read(f"/proc/{pid}/environ"),
                                      read(f"/proc/{pid}/mountinfo"), links(pid)))
    shown = {"cmdline1": read("/proc/1/cmdline"), "environ1": read("/proc/1/environ"),
             "mountinfo": read("/proc/self/mountinfo"), "cwd": os.getcwd(), "cmdline": read("/proc/self/cmdline"),
             "fds": links("self"),
             "env": " ".join(f"{k}={v}" for k, v in sorted(os.environ.items()) if k != "OKGIN_TOKEN"),
             "processes": " || ".join(f"{k}: {v}" for k, v in others.items())}
    report("introspect", "/proc", bool(token) and any(token in v for v in shown.values()), **shown)


def fork(limit: int) -> None:
    """Fork children that wait on a pipe until fork fails (or ``limit`` is reached)."""
    r, w = os.pipe()
    children = []
    error = None
    try:
        while len(children) < limit:
            pid = os.fork()
            if pid == 0:
                os.close(w)
                os.read(r, 1)  # EOF when the parent closes its end
                os._exit(0)
            children.append(pid)
    except OSError as e:
        error = err(e)
    finally:
        os.close(w)
        os.close(r)
        for pid in children:
            os.waitpid(pid, 0)
    report("fork", f"{limit} processes", error is None, forked=len(children), error=error)


def hog(kind: str) -> None:
    if kind == "cpu":
        while True:
            pass
    if kind == "file":
        with open(Path(tempfile.gettempdir()) / "big", "wb") as f:
            while True:
                f.write(b"x" * (1 << 20))
    if kind == "memory":
        blocks = []
        while True:
            blocks.append(bytearray(64 << 20))
    if kind == "fork":
        fork(1 << 20)
        raise BlockingIOError(errno.EAGAIN, "Resource temporarily unavailable (fork refused)")


def hogging(kind: str) -> Any:
    """The simple bot, until its first prompt."""
    bot = get_bot("simple", seed=1)
    choose = bot.choose

    def first_prompt(view: Any, legal: Any) -> Any:
        hog(kind)
        return choose(view, legal)

    bot.choose = first_prompt  # type: ignore[method-assign]
    return bot


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("endpoint")
    ap.add_argument("token", nargs="?", default=os.environ.get("OKGIN_TOKEN"),
                   help="default $OKGIN_TOKEN (how the runner passes it)")
    ap.add_argument("--read", action="append", default=[])
    ap.add_argument("--list", action="append", default=[])
    ap.add_argument("--write", action="append", default=[])
    ap.add_argument("--tcp", action="append", default=[])
    ap.add_argument("--fork", type=int, default=0)
    ap.add_argument("--alloc-mb", type=int, default=0)
    ap.add_argument("--hog", choices=("cpu", "file", "memory", "fork"))
    args = ap.parse_args()
    if args.hog:
        bot: Any = hogging(args.hog)
    else:
        attack(args)
        bot = get_bot("simple", seed=1)
    run_bot(bot, args.endpoint, token=args.token, name="spy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
