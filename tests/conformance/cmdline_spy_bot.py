"""A bot under the conformance kit that first looks for secrets on command lines.

It plays another local user's view of the host: it reads the ``/proc/PID/cmdline`` of
every process the kit started (the kit's descendants: other work on the host is not this
test's business) and looks for a seat token (its own, from ``$OKGIN_TOKEN``, or any
``--token`` argument) or an admin key (``--admin-key``). It waits until the kit has
started the opponent (an ``okgin bot`` process), so that the opponent's command line is
seen too. Meanwhile it plays, as a child ``okgin bot simple`` that reads the endpoint and
token from the environment. Found anything: it prints ``LEAK`` lines after the game and
exits 3, which the kit reports with the bot's output.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path


def parent_of(pid: int) -> int:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0
    return int(stat.rsplit(")", 1)[1].split()[1])  # the name in parentheses may hold spaces


def command_lines() -> dict[int, list[str]]:
    """The command lines of the kit's other descendants (the kit is this bot's parent)."""
    kit = os.getppid()
    out = {}
    for p in Path("/proc").iterdir():
        if not p.name.isdigit() or int(p.name) == os.getpid():
            continue
        pid = up = int(p.name)
        for _ in range(64):
            up = parent_of(up)
            if up in (0, 1, kit):
                break
        if up != kit:
            continue
        try:
            words = p.joinpath("cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        out[pid] = [w.decode(errors="replace") for w in words if w]
    return out


def main() -> int:
    token = os.environ["OKGIN_TOKEN"]
    # Play at once (the kit's first game waits for this bot's hello before it starts the
    # opponent), and meanwhile look until the opponent's process has been seen.
    player = subprocess.Popen([sys.executable, "-m", "okgin", "bot", "simple", "--quiet"])
    deadline = time.monotonic() + 60.0
    seen: dict[int, list[str]] = {}
    opponent = False
    while not opponent and player.poll() is None and time.monotonic() < deadline:
        lines = command_lines()
        seen.update(lines)
        opponent = any(pid != player.pid and "bot" in words and any(w.endswith("okgin") for w in words)
                       for pid, words in lines.items())
        time.sleep(0.05)
    leaks = [
        f"LEAK pid {pid}: {' '.join(words)[:300]}"
        for pid, words in seen.items()
        if any(w in ("--token", "--admin-key") or w.startswith(("--token=", "--admin-key=")) or token in w for w in words)
    ]
    if not opponent:
        leaks.append("LEAK-CHECK: the opponent's process was never seen")
    status = player.wait(600)
    if leaks:
        print("\n".join(leaks), file=sys.stderr, flush=True)
        return 3
    return status


if __name__ == "__main__":
    sys.exit(main())
