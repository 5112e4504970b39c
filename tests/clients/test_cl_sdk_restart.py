"""One token, two lives: a bot process killed mid-game and started again with its
reserved token resumes its seat and plays the game to its end; and when the first
process is still alive, the older connection is told ``session_taken`` and stops
(issue 18).

On a resume the referee sends the welcome, a snapshot of the table and the pending
prompt: no ``seated``, no ``game_start``. The SDK's ``BotDriver`` used to learn its table
only from those two, so the restarted bot dropped the snapshot and every prompt, and the
game waited for it until the seat lost on time. Real processes: a referee subprocess, two
``okgin bot`` processes, the one under test killed with SIGKILL; an organiser watches the
table through the SDK to see who moves."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
from collections.abc import Callable

import pytest

from clients.match_referee import RefereeProcess
from clients.sdk import AsyncClient, Client, GameEnd, MoveEvent, SessionTaken

pytestmark = pytest.mark.timeout(240)

WAIT_S = 90.0  # an upper bound for failures only; never asserted on


def _next_move_of(watcher: Client, seat: int) -> MoveEvent:
    while True:
        m = watcher.recv(timeout=WAIT_S)
        assert m is not None, f"no move of seat {seat} within {WAIT_S} s"
        assert not isinstance(m, GameEnd), f"the game ended before seat {seat} moved: {m}"
        if isinstance(m, MoveEvent) and m.move.seat == seat:
            return m


def test_a_bot_killed_and_restarted_with_its_token_plays_on_to_the_end(
        start_referee: Callable[..., RefereeProcess], spawn_bot: Callable[..., subprocess.Popen[str]]) -> None:
    # Untimed, and a long disconnect grace: the seat must wait for the restarted process
    # however loaded the machine, so the game can only end by being played.
    ref = start_referee("--untimed", "--disconnect-grace-ms", "600000")
    org = Client(ref.endpoint, "organiser", "admin", admin_key=ref.admin_key, reconnect=False)
    org.connect()
    try:
        toks = org.create_table(table="phoenix", reserved=True).seat_tokens
        assert toks is not None and len(toks) == 2
        org.watch("phoenix")
        first = spawn_bot("simple", "--connect", ref.endpoint, "--token", toks[0], "--quiet")
        opponent = spawn_bot("simple", "--connect", ref.endpoint, "--token", toks[1], "--quiet")
        _next_move_of(org, 0)
        os.kill(first.pid, signal.SIGKILL)
        assert first.wait(30) == -signal.SIGKILL
        again = spawn_bot("simple", "--connect", ref.endpoint, "--token", toks[0], "--quiet")
        # Only the restarted process can play seat 0's remaining moves, so the game's
        # normal end is the proof that it resumed the seat and played on.
        while True:
            m = org.recv(timeout=WAIT_S)
            assert m is not None, f"the game did not end within {WAIT_S} s of a move"
            if isinstance(m, GameEnd):
                break
        assert m.termination == "normal", m
        assert again.wait(60) == 0 and opponent.wait(60) == 0
    finally:
        org.close()


def test_two_async_clients_with_one_token_the_older_gets_session_taken_and_stops(referee: RefereeProcess) -> None:
    """The other half of a restart gone wrong: the first process is still alive. The
    newer connection keeps the session; the older is told ``session_taken`` and stops
    (no resume: with ``hello_first``'s meaning it would take the seat back, for ever)."""

    async def run() -> None:
        old = AsyncClient(referee.endpoint, "twin")
        await old.connect()
        await old.join("twins")
        new = AsyncClient(referee.endpoint, "twin", token=old.token)
        try:
            assert (await new.connect()).resumed
            with pytest.raises(SessionTaken):
                while True:  # what the older had queued comes first, then the verdict
                    await old.next(timeout=WAIT_S)
            with pytest.raises(SessionTaken):
                await old.ping()  # every later call says so too, without asking the referee
            with pytest.raises(SessionTaken):
                await old.reconnect()
            assert old.taken is not None and not old.connected and old.reconnects == 0
            assert await new.ping() > 0 and new.reconnects == 0
            assert (await new.sync("twins")).seat == 0  # the seat is the newer one's
        finally:
            await new.close()
            await old.close()

    asyncio.run(asyncio.wait_for(run(), WAIT_S))
