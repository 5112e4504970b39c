"""A participant that spreads its use of resources over child processes (issue 24 item 4):
each child stays inside a per-process limit, the sandbox as a whole does not. It plays
legal moves (the SDK's simple bot); at its first prompt it first starts its children and
then plays on, so only a limit for the whole sandbox can end it:

- ``memory N MB``: N children that each hold MB megabytes (every page touched); the bot
  plays on once all of them hold theirs (so the game cannot end first, however loaded
  the machine: if the memory runs out, it waits until the runner ends it);
- ``busy N``: N children that spin on the CPU;
- ``spin N``: the same, but the bot then waits for ever instead of playing on (until
  the CPU limit or the runner's stall_timeout ends it);
- ``forkbomb``: children until a fork is refused; one JSON line on stderr says how many.

    python hog_bot.py ENDPOINT MODE [N [MB]]   (the seat token in $OKGIN_TOKEN)
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from clients.bots import get_bot
from clients.sdk import run_bot

KEEP: list[Any] = []  # pipes and children live as long as the bot


def child(body: Any) -> int:
    pid = os.fork()
    if pid == 0:
        try:
            body()
        finally:
            os._exit(0)
    return pid


def hold(mb: int, ready: int) -> None:
    block = bytearray(mb << 20)
    for i in range(0, len(block), 4096):
        block[i] = 1
    os.write(ready, b"+")
    r, _w = KEEP[0]
    os.read(r, 1)  # until the bot's pipe closes, that is, never while it plays


def spin() -> None:
    while True:
        pass


def start(mode: str, n: int, mb: int) -> None:
    KEEP.append(os.pipe())
    if mode == "memory":
        r, w = os.pipe()
        for _ in range(n):
            KEEP.append(child(lambda: hold(mb, w)))
        got = 0
        while got < n:  # each child says when it holds its memory
            got += len(os.read(r, n - got))
    elif mode in ("busy", "spin"):
        for _ in range(n):
            KEEP.append(child(spin))
        if mode == "spin":
            os.read(KEEP[0][0], 1)
    elif mode == "forkbomb":
        forked, error = 0, None
        try:
            while forked < 100_000:
                KEEP.append(child(lambda: os.read(KEEP[0][0], 1)))
                forked += 1
        except OSError as e:
            error = e.strerror
        sys.stderr.write(json.dumps({"hog": "forkbomb", "forked": forked, "error": error}) + "\n")
    sys.stderr.flush()


def main() -> int:
    # The seat token comes in the environment (the runner never puts it on a command line).
    endpoint, mode = sys.argv[1:3]
    token = os.environ["OKGIN_TOKEN"]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    mb = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    bot = get_bot("simple", seed=1)
    choose = bot.choose

    def first_prompt(view: Any, legal: Any) -> Any:
        if not KEEP:
            start(mode, n, mb)
        return choose(view, legal)

    bot.choose = first_prompt  # type: ignore[method-assign]
    run_bot(bot, endpoint, token=token, name="hog")
    return 0


if __name__ == "__main__":
    sys.exit(main())
