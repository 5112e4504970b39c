"""A connection flood from inside a sandbox, through a seat door (issue 24 item 1).

The issue's attack: a sandboxed bot opened 10,000 idle ipc connections to the referee's
socket in 2-6 s; every new client was refused for 19 s, the referee grew from 32 to
261 MB, and a bystander lost 2 games on time. With seat doors (referee.doors) the bot's
sandbox shows only its seat's door, which caps its own connections apart from the
referee's total.

A door that accepts too many connections too fast is closed for good (referee.doors,
FLOOD_CONNECTIONS): the flooder then meets only refusals from the kernel
(``refused_at_connect``), which cost the referee nothing.

This script starts a real ``okgin referee`` process and measures a bystander's game
played over TCP by two clients in this process: moves per second and the referee's
resident memory (``VmRSS``, sampled every 20 ms), first quiet, then while a flooder in a
real bubblewrap sandbox (competition.tournament.sandbox) opens ``--flood`` connections to a
seat door (at most ``--hold`` open at once, oldest closed first), round after round
until the bystander has played its moves (at most 100 rounds: it stops by itself; it
reports its rounds completed and connections made). Quiet and flood phases of the same number of moves are
interleaved ``--reps`` times (a flood phase goes on until the flooder has finished a
whole round); moves/s is the median over windows of 50 moves of each kind, memory the
peak of each kind.

    python -m bench.door_flood [--flood 10000] [--moves 2000]

Prints one line per phase and the ratios (flood / quiet), then one JSON line.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import select
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

import msgpack
import zmq

from okgin.launch import endpoint_from_line, referee_argv

ADMIN_KEY = "d" * 32
WINDOW = 50  # moves per throughput window
RECV_MS = 30_000


class Client:
    def __init__(self, ctx: zmq.Context, endpoint: str) -> None:
        self.sock = ctx.socket(zmq.DEALER)
        self.sock.linger = 0
        self.sock.connect(endpoint)
        self.n = 0

    def send(self, msg: dict[str, Any]) -> None:
        self.sock.send(msgpack.packb(msg, use_bin_type=True))

    def recv(self) -> dict[str, Any]:
        if not self.sock.poll(RECV_MS):
            raise TimeoutError("the referee said nothing for 30 s")
        return msgpack.unpackb(self.sock.recv(), raw=False)

    def ask(self, msg: dict[str, Any]) -> dict[str, Any]:
        self.n += 1
        self.send({**msg, "id": self.n})
        while True:
            m = self.recv()
            if m.get("id") == self.n:
                return m

    def close(self) -> None:
        self.sock.close(0)


def choose(legal: list[dict[str, Any]]) -> dict[str, Any]:
    """Knock when allowed, pass or draw from the stock, throw the first discard."""
    for kinds in (("knock", "big_gin"), ("pass", "draw_stock"), ("discard",)):
        for a in legal:
            if a["kind"] in kinds:
                return a
    return legal[0]


class Bystander:
    """Plays reserved tables over TCP, game after game, and times its moves."""

    def __init__(self, ctx: zmq.Context, endpoint: str, admin: Client) -> None:
        self.ctx = ctx
        self.endpoint = endpoint
        self.admin = admin
        self.games = 0

    def play(self, moves: int) -> list[float]:
        """Play ``moves`` moves; the time each window of WINDOW moves took."""
        stamps = [time.perf_counter()]
        done = 0
        while done < moves:
            self.games += 1
            name = f"bystander-{self.games}"
            made = self.admin.ask({"type": "create_table", "table": name, "reserved": True, "clock": {"move_ms": 0}})
            if made.get("type") != "table_created":
                raise RuntimeError(f"the referee refused the bystander's table: {made}")
            seats = [Client(self.ctx, self.endpoint) for _ in made["seat_tokens"]]
            try:
                for c, tok in zip(seats, made["seat_tokens"], strict=True):
                    c.ask({"type": "hello", "protocol": 1, "role": "player", "name": "bystander", "token": tok, "events": False})
                poller = zmq.Poller()
                for c in seats:
                    poller.register(c.sock, zmq.POLLIN)
                ended = 0
                while ended < len(seats) and done < moves:
                    ready = dict(poller.poll(RECV_MS))
                    if not ready:
                        raise TimeoutError("the bystander's game stalled for 30 s")
                    for c in seats:
                        if c.sock not in ready:
                            continue
                        m = c.recv()
                        if m.get("type") == "prompt":
                            c.send({"type": "act", "table": name, "seq": m["seq"], "action": choose(m["legal"])})
                            done += 1
                            if done % WINDOW == 0:
                                stamps.append(time.perf_counter())
                        elif m.get("type") == "game_end":
                            ended += 1
            finally:
                for c in seats:
                    c.close()
                self.admin.ask({"type": "close_table", "table": name})
        return [b - a for a, b in itertools.pairwise(stamps)]


class Rss:
    """Samples a process's VmRSS (kB) every 20 ms from a thread."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.samples: list[int] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.02):
            try:
                for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        self.samples.append(int(line.split()[1]))
            except OSError:
                return

    def mark(self) -> int:
        return len(self.samples)

    def peak(self, since: int) -> int:
        return max(self.samples[since:] or [0])

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)


def flooder(path: str, n: int, hold: int, rounds: int) -> int:
    """Inside the sandbox: open ``n`` connections to the door, ``hold`` at most at once,
    ``rounds`` times over (the bench stops it sooner, once its bystander has played)."""
    live: deque[socket.socket] = deque()
    made = refused = 0
    for r in range(rounds):
        for i in range(n):
            if i % 1000 == 999:  # progress, for the bench that stops it
                print(json.dumps({"rounds": r, "connected": made, "refused_at_connect": refused}), flush=True)
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.setblocking(False)
            try:
                s.connect(path)
                made += 1
                live.append(s)
            except BlockingIOError:
                refused += 1
                s.close()
                time.sleep(0.001)  # the listen backlog is full: let the referee accept
            except OSError:  # refused by the kernel (a closed door): costs the referee nothing
                refused += 1
                s.close()
            while len(live) >= hold:
                live.popleft().close()
        while live:
            live.popleft().close()
            print(json.dumps({"rounds": r + 1, "connected": made, "refused_at_connect": refused}), flush=True)
    return 0


def cpu_s(pid: int) -> float:
    """A process's CPU time so far (user + system, all its threads), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_referee(tmp: Path) -> tuple[subprocess.Popen[bytes], str]:
    proc = subprocess.Popen(referee_argv(tmp / "journals", "--admin-key", ADMIN_KEY),
                            stdout=subprocess.PIPE, stderr=(tmp / "referee.log").open("wb"))
    assert proc.stdout is not None
    endpoint = endpoint_from_line(proc.stdout.readline())
    if endpoint is None:
        raise RuntimeError(f"the referee did not start (see {tmp / 'referee.log'})")
    threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()  # type: ignore[union-attr]
    return proc, endpoint


def measure(flood: int, moves: int, hold: int, reps: int = 2, rounds: int = 100) -> dict[str, Any]:
    """Quiet and flood phases of ``moves`` moves each, interleaved ``reps`` times (the
    machine's load drifts: interleaving spreads it over both); their figures."""
    import asyncio

    from competition.tournament import cgroups
    from competition.tournament.sandbox import Limits, Sandbox, python_dirs

    tmp = Path(tempfile.mkdtemp(prefix="okgin-door-flood-"))
    proc, endpoint = start_referee(tmp)
    ctx = zmq.Context()
    rss = Rss(proc.pid)
    windows: dict[str, list[float]] = {"quiet": [], "flood": []}
    peaks: dict[str, int] = {"quiet": 0, "flood": 0}
    cpu: dict[str, float] = {"quiet": 0.0, "flood": 0.0}  # the referee's CPU seconds per phase kind
    reports: list[Any] = []
    backend = None
    confinement = "?"
    flood_proc: subprocess.Popen[bytes] | None = None
    try:
        admin = Client(ctx, endpoint)
        admin.ask({"type": "hello", "protocol": 1, "role": "admin", "name": "bench", "admin_key": ADMIN_KEY})
        by = Bystander(ctx, endpoint, admin)
        by.play(WINDOW * 4)  # warm up
        sb = Sandbox([])
        here = Path(__file__).resolve().parent
        # As the runner confines a bot: the sandbox in a cgroup of its own where the machine
        # offers one (1 CPU, .cgroups), else the rlimits only.
        backend, why = cgroups.probe()
        confinement = backend.mechanism if backend is not None else f"rlimits ({why})"

        def flooder_argv(k: int) -> tuple[Any, Any, Any]:
            """A fresh door (a table of its own) and the sandboxed flooder aimed at it."""
            made = admin.ask({"type": "create_table", "table": f"spy-{k}", "reserved": True, "doors": True})
            door = made["doors"][0]
            w = sb.wrap([sys.executable, str(here / "door_flood.py"), "--flooder", "/run/okgin/referee.sock",
                         "--flood", str(flood), "--hold", str(hold), "--rounds", str(rounds)],
                        visible=[here, *python_dirs()], cwd=Path("/tmp"), env={}, socket=Path(door[len("ipc://"):]),
                        limits=Limits())
            group = backend.group(f"door-flood-{os.getpid()}-{k}", Limits()) if backend is not None else None
            return w, (group.preexec() if group is not None else w.preexec), group

        last: dict[str, Any] = {}  # the flooder's latest progress line
        for k in range(reps):
            for phase in ("quiet", "flood"):
                mark = rss.mark()
                if phase == "flood":
                    # (not waiting for it: the admin session must not fall silent meanwhile)
                    wrapped, preexec, group = flooder_argv(k)
                    flood_proc = subprocess.Popen(wrapped.argv, preexec_fn=preexec, stdout=subprocess.PIPE,
                                                  stderr=subprocess.DEVNULL, pass_fds=wrapped.fds)
                    wrapped.close()
                    # The moves start once the flood is on (its first progress line, after
                    # 1,000 connects: well under the referee's 15 s liveness for the admin).
                    assert flood_proc.stdout is not None
                    if not select.select([flood_proc.stdout], [], [], 30)[0]:
                        raise RuntimeError("the sandboxed flooder said nothing for 30 s")
                    last = json.loads(flood_proc.stdout.readline() or "{}")
                    admin.ask({"type": "ping"})
                c0 = cpu_s(proc.pid)
                played = 0
                while True:
                    windows[phase] += by.play(WINDOW * 4)
                    played += WINDOW * 4
                    if flood_proc is not None and flood_proc.stdout is not None:  # its latest progress, without waiting
                        while select.select([flood_proc.stdout], [], [], 0)[0]:
                            line = flood_proc.stdout.readline()
                            if not line:
                                break
                            last = json.loads(line)
                    # the phase lasts its moves, and a flood phase at least one whole round
                    if played >= moves and (flood_proc is None or last.get("rounds", 0) >= 1 or played >= 20 * moves):
                        break
                cpu[phase] += (cpu_s(proc.pid) - c0) * moves / played
                peaks[phase] = max(peaks[phase], rss.peak(mark))
                if flood_proc is not None:
                    flood_proc.kill()  # (bwrap --die-with-parent takes the sandbox with it)
                    out, _ = flood_proc.communicate(timeout=30)
                    if group is not None:
                        group.kill_all()
                        asyncio.run(group.remove())
                    lines = out.decode().strip().splitlines()
                    reports.append(json.loads(lines[-1]) if lines else last)
                    flood_proc = None
    finally:
        if flood_proc is not None and flood_proc.poll() is None:
            flood_proc.kill()
            flood_proc.wait(30)
        rss.stop()
        if backend is not None:
            backend.close()
        ctx.destroy(0)
        proc.terminate()
        proc.wait(30)
    q = WINDOW / statistics.median(windows["quiet"])
    f = WINDOW / statistics.median(windows["flood"])
    return {"moves": moves, "reps": reps, "quiet_moves_per_s": round(q, 1), "flood_moves_per_s": round(f, 1),
            "moves_ratio": round(f / q, 3), "quiet_rss_kb": peaks["quiet"], "flood_rss_kb": peaks["flood"],
            "rss_ratio": round(peaks["flood"] / peaks["quiet"], 3) if peaks["quiet"] else None,
            "referee_cpu_ms_per_move": {k: round(1000 * v / (moves * reps), 3) for k, v in cpu.items()},
            "flooder": reports, "flooder_confined_by": confinement}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--flood", type=int, default=10_000)
    ap.add_argument("--moves", type=int, default=2_000)
    ap.add_argument("--hold", type=int, default=256)
    ap.add_argument("--reps", type=int, default=2, help="quiet/flood phase pairs (interleaved)")
    ap.add_argument("--rounds", type=int, default=100, help=argparse.SUPPRESS)
    ap.add_argument("--flooder", metavar="PATH", help=argparse.SUPPRESS)  # the sandboxed side
    a = ap.parse_args()
    if a.flooder:
        return flooder(a.flooder, a.flood, a.hold, a.rounds)
    r = measure(a.flood, a.moves, a.hold, a.reps)
    print(f"quiet: {r['quiet_moves_per_s']} moves/s, referee peak RSS {r['quiet_rss_kb'] / 1024:.1f} MB")
    print(f"flood: {r['flood_moves_per_s']} moves/s, referee peak RSS {r['flood_rss_kb'] / 1024:.1f} MB "
          f"(the flooder in each flood phase: {r['flooder']})")
    print(f"flood/quiet: moves/s x{r['moves_ratio']}, RSS x{r['rss_ratio']}; the referee's CPU per move "
          f"{r['referee_cpu_ms_per_move']} ms")
    print(json.dumps(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
