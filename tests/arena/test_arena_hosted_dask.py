"""Hosted bots on a Dask cluster (``okgin arena --dask ADDRESS``, issue 27 item 2): a real
scheduler and two workers on 127.0.0.1 (tests/cluster/daskkit.py), a real arena, real
sandboxed bots. A worker killed (SIGKILL) in the middle of a rated hosted game costs only
that game's attempt: Dask plays it again on the other worker, and the stored game says it
took more than one attempt.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import time
from pathlib import Path

import pytest
from arenakit import ArenaProcess, add_accounts
from test_arena_hosted import TOML, WAIT_S, bot_dir, statuses, submit, wait_for

from arena.hosted import VALIDATION_BASE
from arena.store import Store, state_db_url
from competition.tournament.sandbox import probe

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cluster"))
from daskkit import DASK, ROOT, cluster_env, start_cluster, unfinished_journals

pytestmark = pytest.mark.skipif(probe() is not None, reason=f"no bubblewrap sandbox here: {probe()}")


def test_hosted_games_on_dask_and_a_killed_worker_is_replayed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("distributed")
    if DASK is None:
        pytest.skip("the dask command is not installed (pip install 'okgin[cluster]')")
    for k, v in cluster_env().items():  # the arena (a child process) reaches the workers with this checkout's code
        monkeypatch.setenv(k, v)
    state = tmp_path / "arena"
    add_accounts(state, "alpha", "beta")
    # The workers run `dask` of the base interpreter, not this venv: the bots run that
    # interpreter too, and carry the engine they import in their own directory (a hosted
    # bot is self-contained; the base's okgin may be another checkout's, out of the sandbox).
    py = os.path.realpath(sys.executable)
    # Both think 250 ms a move: a rated game of greedy bots lasts tens of seconds, not the
    # second or two that a loaded machine's poll (and its Dask client) could miss entirely.
    for name, extra in (("alpha", " --pace-ms 250"), ("beta", " --random 3 --pace-ms 250")):
        d = bot_dir(tmp_path, name)
        shutil.copytree(ROOT / "okgin", d / "okgin", ignore=shutil.ignore_patterns("__pycache__"))
        assert submit(state, name, d, f"{py} protobot.py {{endpoint}}{extra}") == 0
    base = tmp_path / "dask"
    base.mkdir()
    slow = TOML.replace("move_ms = 5000\ngrace_ms = 2000", "move_ms = 5000\ngrace_ms = 2000\nincrement_ms = 0")
    slow = slow.replace("target_score = 10\nmax_hands = 2", "target_score = 100\nmax_hands = 3")  # games long enough to kill one
    with start_cluster(base, ("", "")) as cluster:
        arena = ArenaProcess(state, shards=1, toml=slow, extra=("--hosted-games-per-hour", "2", "--dask", cluster.address))
        try:
            wait_for("both validations", lambda: all(s in ("active", "failed") for s, _ in statuses(state).values()), arena)
            assert all(s == "active" for s, _ in statuses(state).values()), statuses(state)
            # A rated game in progress on a worker (its referee's journal has no end yet): kill that worker.
            seen: set[Path] = set()
            deadline = time.monotonic() + WAIT_S
            killed = None
            while killed is None and time.monotonic() < deadline:
                for path in unfinished_journals(base, "hosted", seen):
                    index = int(path.name.split("-g1-")[0].split("-")[1])
                    if index >= VALIDATION_BASE:
                        seen.add(path)
                        continue
                    owner = cluster.worker_of(path)
                    if owner is not None:
                        killed = owner
                        os.kill(owner[1], signal.SIGKILL)
                        break
                time.sleep(0.1)
            assert killed is not None, f"no rated hosted game seen in progress:\n{arena.stderr()[-3000:]}"

            def recorded() -> bool:
                with Store.open(state_db_url(state)) as store:
                    hosted = store.hosted_games()
                    return len(hosted) >= 2 and all((g := store.game(h.game_id)) is not None and g.status != "playing"
                                                    for h in hosted)

            wait_for("2 hosted games recorded", recorded, arena)
        finally:
            arena.stop()
    with Store.open(state_db_url(state)) as store:
        hosted = store.hosted_games()
        assert len(hosted) == 2
        games = [store.game(h.game_id) for h in hosted]
        assert all(g is not None and g.status == "finished" for g in games), games
        assert any(h.attempts >= 2 for h in hosted), hosted
        assert all(" on tcp://127.0.0.1:" in (g.journal or "") for g in games if g is not None)  # played on the workers
    assert "was lost while playing it" in (tmp_path / "arena.stderr").read_text()  # the arena's log (it has stopped)
