"""The sandbox's door relay: the one program the runner runs inside a sandbox before the bot.

Why (issue 24, items 1 and 3): a sandboxed bot must reach its seat's door (referee.doors)
and nothing else, and see no host path. Binding the door's socket file into the sandbox
did the first but not the second: ``/proc/self/mountinfo`` names the source of every
bind mount by its path on the host (the referee's door directory). And a bot whose ZeroMQ
has no ``ipc://`` (JeroMQ, so every Java bot) had to keep the host's network and the
referee's TCP endpoint, where it could open tokenless sessions, use the lobby and reach
every port of the host.

So nothing of the door is mounted. The runner opens the door's socket file with
``O_PATH`` and sends that descriptor over a socket pair the sandbox inherits
(:func:`competition.tournament.sandbox.door_channel`); bubblewrap's own init and the bot
hold only the pair's end, an anonymous socket. This program, started in the sandbox
after the bot's uid and limits are set, receives the descriptor, listens where the bot
is told to connect (``--unix PATH``: the sandbox's ``/run/okgin/referee.sock``, a tmpfs
of the sandbox; ``--tcp PORT``: ``127.0.0.1:PORT`` in the sandbox's own network
namespace, which has a loopback and nothing else), forks the relay into the background
and executes the bot in its own place (so the bot's exit status is the sandbox's).
Each connection the bot makes is relayed, byte for byte, to a new connection to its door
(``connect("/proc/self/fd/N")``): the door still sees one connection per bot connection,
admits only that seat's token and business, caps its connections and closes for good
when flooded, exactly as if the bot had connected to it directly.

The relay process is not dumpable (``PR_SET_DUMPABLE`` 0), so the bot, although it runs
as the same uid, cannot read its ``/proc/PID/fd`` (the door's host path) nor attach to
it. It ends with the sandbox (the pid namespace's init exits when the bot does). It
counts toward the sandbox's limits: one process of about 10 MB.

This file runs in the sandbox as a script (``python3 -I -S``), from a copy bubblewrap
writes there (``--file``): it imports the standard library only.
"""

from __future__ import annotations

import array
import ctypes
import errno
import os
import resource
import selectors
import socket
import sys

__all__ = ["MAX_PAIRS", "main", "receive_fd"]

# Live relayed connections; more are accepted and closed at once. Well above the door's own
# cap (8), so that the door, not the relay, sees a flood and closes for good (referee.doors):
# the relay passes every connection on as it comes.
MAX_PAIRS = 1000
BACKLOG = 1024
CHUNK = 65536
HIGH_WATER = 1 << 20  # bytes held for a slow side before its source is no longer read
PR_SET_DUMPABLE = 4


def receive_fd(channel: int) -> int:
    """The descriptor the runner sent over the inherited socket ``channel`` (closed after)."""
    sock = socket.socket(fileno=channel)
    try:
        _, anc, _, _ = sock.recvmsg(1, socket.CMSG_LEN(array.array("i").itemsize))
    finally:
        sock.close()
    for level, kind, data in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds = array.array("i")
            fds.frombytes(data[: len(data) - len(data) % fds.itemsize])
            if fds:
                return fds[0]
    raise SystemExit("okgin relay: the runner sent no door")


class Pair:
    """A bot connection and its door connection, with what each still owes the other."""

    def __init__(self, down: socket.socket, up: socket.socket) -> None:
        self.down = down
        self.up = up
        self.out = {down: bytearray(), up: bytearray()}  # bytes waiting to be written to that socket
        self.eof: set[socket.socket] = set()

    def other(self, s: socket.socket) -> socket.socket:
        return self.up if s is self.down else self.down


class Relay:
    """The relay loop: accepts the bot's connections and pumps bytes both ways."""

    def __init__(self, door: int, listeners: list[socket.socket]) -> None:
        self.door = f"/proc/self/fd/{door}"
        self.sel = selectors.DefaultSelector()
        self.pairs: dict[socket.socket, Pair] = {}
        self.masks: dict[socket.socket, int] = {}
        for lst in listeners:
            lst.setblocking(False)
            self.sel.register(lst, selectors.EVENT_READ, None)

    def run(self) -> None:
        while True:
            for key, events in self.sel.select():
                s = key.fileobj
                assert isinstance(s, socket.socket)
                if key.data is None:
                    self.accept(s)
                    continue
                pair = self.pairs.get(s)
                if pair is not None and events & selectors.EVENT_WRITE:
                    self.flush(pair, s)
                pair = self.pairs.get(s)
                if pair is not None and events & selectors.EVENT_READ:
                    self.pump(pair, s)

    def accept(self, lst: socket.socket) -> None:
        try:
            down, _ = lst.accept()
        except OSError:
            return
        if len(self.pairs) >= 2 * MAX_PAIRS:
            down.close()
            return
        up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            up.connect(self.door)  # a Unix socket connects at once or not at all
        except OSError:
            up.close()
            down.close()  # the door is closed (its table ended, or it was flooded)
            return
        if down.family != socket.AF_UNIX:
            # Bytes are relayed as they come, often a small ZMTP frame at a time: with Nagle
            # on, a frame written while the previous one is unacknowledged waits for the
            # bot's delayed ACK (~40 ms) before it leaves.
            down.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        pair = Pair(down, up)
        for s in (down, up):
            s.setblocking(False)
            self.pairs[s] = pair
        self.update(pair)

    def pump(self, pair: Pair, s: socket.socket) -> None:
        try:
            data = s.recv(CHUNK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            pair.eof.add(s)
            if not pair.out[pair.other(s)]:
                self.close(pair)  # nothing left to pass on
                return
        else:
            pair.out[pair.other(s)] += data
            self.flush(pair, pair.other(s))
            return
        self.update(pair)

    def flush(self, pair: Pair, s: socket.socket) -> None:
        buf = pair.out[s]
        while buf:
            try:
                n = s.send(buf)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                self.close(pair)
                return
            del buf[:n]
        if not buf and pair.eof:
            self.close(pair)  # one side ended and the other has been given all it sent
            return
        self.update(pair)

    def update(self, pair: Pair) -> None:
        """Read a side unless it ended or its peer is owed too much; write it while it is owed."""
        for s in (pair.down, pair.up):
            ev = 0
            if s not in pair.eof and len(pair.out[pair.other(s)]) < HIGH_WATER:
                ev |= selectors.EVENT_READ
            if pair.out[s]:
                ev |= selectors.EVENT_WRITE
            old = self.masks.get(s, 0)
            if ev == old:
                continue
            if not ev:
                self.sel.unregister(s)
                del self.masks[s]
            elif not old:
                self.sel.register(s, ev, pair)
                self.masks[s] = ev
            else:
                self.sel.modify(s, ev, pair)
                self.masks[s] = ev

    def close(self, pair: Pair) -> None:
        for s in (pair.down, pair.up):
            self.pairs.pop(s, None)
            if self.masks.pop(s, 0):
                self.sel.unregister(s)
            s.close()


def listen(args: list[str]) -> list[socket.socket]:
    out = []
    for flag, value in zip(args[::2], args[1::2], strict=True):
        if flag == "--unix":
            with_path = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                os.unlink(value)
            except FileNotFoundError:
                pass
            with_path.bind(value)
            os.chmod(value, 0o600)
            out.append(with_path)
        elif flag == "--tcp":
            tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            tcp.bind(("127.0.0.1", int(value)))
            out.append(tcp)
        else:
            raise SystemExit(f"okgin relay: unknown option {flag}")
    for s in out:
        s.listen(BACKLOG)
    return out


def main(argv: list[str]) -> None:
    """``relay.py --channel FD [--unix PATH] [--tcp PORT] -- COMMAND...``"""
    try:
        cut = argv.index("--")
    except ValueError:
        raise SystemExit("usage: relay.py --channel FD [--unix PATH] [--tcp PORT] -- COMMAND...") from None
    opts, command = argv[:cut], argv[cut + 1 :]
    if len(opts) < 2 or opts[0] != "--channel" or not command:
        raise SystemExit("usage: relay.py --channel FD [--unix PATH] [--tcp PORT] -- COMMAND...")
    # Before the door's descriptor is in this process: the bot (the same uid) must never
    # read /proc/PID/fd of the relay. execve gives the bot a dumpable process again.
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise SystemExit(f"okgin relay: prctl: {os.strerror(ctypes.get_errno())}")
    door = receive_fd(int(opts[1]))
    listeners = listen(opts[2:])
    child = os.fork()
    if child == 0:
        # The relay is a grandchild, handed to the sandbox's init: the bot never has it
        # as a child of its own (a bot that waits for any child would reap it). Its
        # process ends only with the sandbox (or by an error here, with status 1).
        if os.fork() != 0:
            raise SystemExit(0)
        os.setsid()
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)  # the bot's output pipe stays the bot's alone
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        want = 2 * MAX_PAIRS + 16
        if soft != resource.RLIM_INFINITY and soft < want:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want if hard == resource.RLIM_INFINITY else min(want, hard), hard))
        Relay(door, listeners).run()
        raise SystemExit(1)
    while True:
        try:
            os.waitpid(child, 0)
            break
        except ChildProcessError:
            break
        except InterruptedError:
            continue
    for s in listeners:
        s.close()
    os.closerange(3, 1 << 16)  # the door, the channel, the listeners: the bot gets none of them
    try:
        os.execvp(command[0], command)
    except OSError as e:
        print(f"okgin relay: cannot run {command[0]}: {e.strerror}", file=sys.stderr, flush=True)
        raise SystemExit(127 if e.errno == errno.ENOENT else 126) from None


if __name__ == "__main__":
    main(sys.argv[1:])
