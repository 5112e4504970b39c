"""A sandboxed bot stopped as it starts leaves nothing running (competition.tournament.procs).

Found by a fresh-clone CI run: after it, bubblewrap sandboxes of
``test_sprt_stops_as_soon_as_it_decides`` and ``test_interrupt_stops_cleanly_...`` were
still running, orphaned, their bots connected to a referee long gone. Those games were
stopped just as their bots started. bwrap's child (the sandbox's pid-namespace init)
ties itself to bwrap only after its own setup, so a bwrap killed in that moment left it
behind. An event would leak one such process tree per game stopped early.

The test stops sandboxes at once, and after a few scheduler ticks, with one CPU-bound
process beside them. On a loaded machine the window is wide, and the old stop leaked in
most tries. It asserts only on which processes are left, never on time.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from competition.tournament.procs import spawn, stop
from competition.tournament.sandbox import Limits, Sandbox, probe

pytestmark = [
    pytest.mark.skipif(probe() is not None, reason=f"no bubblewrap sandbox here: {probe()}"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc"),
]

TRIES = 40


def _with_marker(marker: str) -> list[int]:
    """Live processes whose command line holds ``marker`` (a zombie has none)."""
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    found.append(int(d))
        except OSError:
            continue
    return found


async def _stop_soon_after_start(marker: str) -> None:
    sb = Sandbox([])
    for i in range(TRIES):
        w = sb.wrap(["/bin/sleep", marker], visible=[], cwd=Path("/"), env={}, socket=None, limits=Limits())
        proc = await spawn(w.argv, cwd="/", env={}, preexec=w.preexec)
        for _ in range(i % 4):  # at once, or after a few ticks of the loop
            await asyncio.sleep(0)
        assert await stop(proc, grace=2.0, sandboxed=True) is not None


def test_a_sandbox_stopped_as_it_starts_leaves_no_process() -> None:
    marker = f"{3000 + os.getpid() % 600}.{os.getpid()}"  # a sleep length no one else uses
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        asyncio.run(_stop_soon_after_start(marker))
    finally:
        hog.kill()
        hog.wait(timeout=30)
    left = _with_marker(marker)
    for _ in range(500):  # killed processes leave /proc once reaped: wait for that, bounded
        if not left:
            break
        asyncio.run(asyncio.sleep(0.02))
        left = _with_marker(marker)
    for pid in left:  # never leak, even when failing
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert not left, f"{len(left)} sandbox processes outlived their stop ({TRIES} stopped)"
