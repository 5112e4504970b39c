"""``okgin match --dask ADDRESS``: a match's chunks of deals as Dask tasks.

Why Dask and not a pool of our own: the scheduler already knows how to spread tasks
over hosts, replay a task whose worker died, and show progress on its dashboard. What
is ours is the same as for ``--jobs``: :class:`clients.match.MatchWork` plays a chunk
of whole deals, and the chunks' summaries are put back in chunk order, so a Dask run's
figures are exactly a local run's (``tests/cluster/test_match_dask.py``).

- A task is ``MatchWork.play(chunk)``; a game is a pure function of the match seed,
  the deal and the seating, so a chunk replayed on another worker after its first one
  died gives the same games, and no game is counted twice (only one result per chunk
  is ever taken).
- The bots are sent as their specs (names, ``module:Class``, ``path/file.py:Class``):
  a worker loads them itself, so every worker host needs the same okgin and the same
  bot files at the same paths. :func:`check_workers` asks every worker first and
  says which one lacks what.
- ``ADDRESS`` is a scheduler (``tcp://HOST:8786``, ``tls://HOST:8786``) or ``local``
  (a ``LocalCluster`` on 127.0.0.1); ``--dask-tls DIR`` gives the certificates of
  ``okgin cluster certs`` (:mod:`competition.cluster.certs`).

The connection is :func:`competition.cluster.connect.open_client`, imported only when a
Dask run is asked for (``okgin match`` without ``--dask`` needs no Dask at all).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from okgin import RuleSet

from .bots import BotNotFound, get_bot
from .match import BotSpec, Chunk, GameSummary, MatchResult, MatchWork, run_match

RESULT_TIMEOUT_S = 60.0  # fetching a finished chunk's result, not waiting for it to run


class MatchDaskError(RuntimeError):
    """The cluster cannot play this match (a sentence naming what is missing)."""


def _worker_check(bots: Sequence[str]) -> dict[str, str]:
    """Run on every worker: its okgin version, and why a bot would not load there."""
    import okgin

    out = {"okgin": okgin.__version__}
    for b in bots:
        try:
            get_bot(b, "check")
        except BotNotFound as e:
            out[b] = str(e)
        except Exception as e:  # an import error inside the bot's own file
            out[b] = f"{type(e).__name__}: {e}"
    return out


def check_workers(client: Any, bots: Sequence[BotSpec]) -> None:
    """Refuse early, naming the worker and the reason, if a worker runs another okgin or
    cannot load a bot (a file missing on its host, a module not installed there)."""
    import okgin

    specs = [b for b in bots if isinstance(b, str)]
    answers: dict[str, dict[str, str]] = client.run(_worker_check, specs)
    problems = []
    for worker, got in sorted(answers.items()):
        if got.get("okgin") != okgin.__version__:
            problems.append(f"worker {worker} runs okgin {got.get('okgin')}, this runner {okgin.__version__}")
        problems += [f"worker {worker} cannot load bot {b!r}: {got[b]}" for b in specs if b in got]
    if problems:
        raise MatchDaskError("; ".join(problems))


class DaskLanes:
    """The lanes of :func:`clients.match.run_match` on a Dask cluster: one task per chunk."""

    def __init__(self, client: Any, via: str) -> None:
        self.client = client
        self.via = via
        self.width = max(1, sum(client.nthreads().values()))

    def map(self, work: MatchWork, chunks: list[Chunk]) -> Iterator[list[GameSummary]]:
        """Submit every chunk, yield their summaries in chunk order as the prefix completes."""
        from distributed import as_completed

        # pure=False: the same chunk of two runs is two tasks (no result reused from a
        # run with other bot code); one task per chunk, retried by Dask if its worker dies.
        futures = self.client.map(
            work.play, chunks, pure=False, key=[f"okgin-match-{i}-{time.time_ns()}" for i in range(len(chunks))]
        )
        index = {f.key: i for i, f in enumerate(futures)}
        done: dict[int, list[GameSummary]] = {}
        nxt = 0
        try:
            # No bound on the wait itself: a cluster that lost every worker keeps the
            # tasks until one joins again (the recovery docs/cluster.md describes).
            for fut in as_completed(futures, loop=self.client.loop):
                try:
                    done[index[fut.key]] = fut.result(timeout=RESULT_TIMEOUT_S)
                except BotNotFound as e:
                    raise BotNotFound(f"on a Dask worker: {e}") from e
                except Exception as e:
                    if type(e).__name__ == "KilledWorker":
                        raise MatchDaskError(
                            f"a chunk of games killed every worker that ran it ({e}); see the workers' logs"
                        ) from e
                    raise
                while nxt in done:
                    yield done.pop(nxt)
                    nxt += 1
        finally:
            self.client.cancel(futures)


def run_match_dask(
    bots: Sequence[BotSpec],
    address: str,
    games: int = 100,
    seed: int | str = 0,
    rules: RuleSet | None = None,
    tls: str | None = None,
    keep_records: bool = False,
    progress: Callable[[int, int], None] | None = None,
    timeout: float = 30.0,
) -> MatchResult:
    """:func:`clients.match.run_match` with its chunks on the Dask cluster at ``address``.

    Raises :class:`MatchDaskError` (or ``competition.cluster.connect.ClusterError``) with a
    sentence when the cluster cannot be reached or cannot run the bots.
    """
    from competition.cluster.connect import open_client

    scheme = address.strip().partition("://")[0] if "://" in address else ""
    if scheme == "tls" and not tls:
        raise MatchDaskError(f"{address} is a TLS scheduler: give its certificates with --dask-tls DIR (okgin cluster certs DIR)")
    if tls and scheme not in ("", "tls") and address.strip() != "local":
        raise MatchDaskError(f"--dask-tls encrypts the links, so the scheduler's address must be tls://HOST:PORT, not {address}")
    security = None
    if tls:
        from competition.cluster.certs import load_security

        security = load_security(tls)
    # workers=1 for a scheduler: wait (bounded) for one, so the chunks are sized on the
    # threads there and not on an empty cluster's zero; "local" starts one per CPU.
    with open_client(address, security=security, timeout=timeout, workers=None if address.strip() == "local" else 1) as handle:
        client = handle.client
        check_workers(client, bots)
        lanes = DaskLanes(client, via=f"dask {address}")
        return run_match(bots, games=games, seed=seed, rules=rules, keep_records=keep_records, progress=progress, lanes=lanes)
