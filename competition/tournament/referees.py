"""The referees a run plays on: started here or given, each reached as an admin.

``--referees N`` starts N ``okgin referee`` processes on free loopback ports (one per
core is a good N); ``--referee-endpoints`` uses running ones. The pool speaks to each as
an admin over the documented protocol (:mod:`.link`). A game goes to the referee with the
fewest games in progress. A referee that dies (its process exits, it shuts down, or it
goes silent) is marked dead; once none is left, a local one is restarted (at most
:data:`MAX_RESTARTS` times per slot).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import zmq
import zmq.asyncio

from okgin import env

from .config import TournamentConfig
from .executor import EventLog, RunOptions, StartError
from .link import AdminLink, CurveClient, RefereeGone, RequestFailed
from .procs import LocalReferee
from .sandbox import Sandbox

__all__ = ["MAX_RESTARTS", "RefereePool", "Slot"]

MAX_RESTARTS = 3


@dataclass
class Slot:
    """One referee the runner plays on."""

    label: str
    endpoint: str
    link: AdminLink
    local: LocalReferee | None = None
    active: int = 0
    restarts: int = 0
    dead: bool = False
    games: int = 0
    watcher: asyncio.Future[None] | None = None


class RefereePool:
    """The run's referees (:class:`Slot`), the admin key they are opened with, and the
    ipc socket of each local one (where sandboxed bots get their seat doors)."""

    def __init__(self, cfg: TournamentConfig, opts: RunOptions, log: EventLog, workdir: Path,
                 ctx: zmq.asyncio.Context) -> None:
        self.cfg = cfg
        self.opts = opts
        self.log = log
        self.workdir = workdir
        self.ctx = ctx
        self.slots: list[Slot] = []
        self.admin_key = opts.admin_key or cfg.admin_key or env.get("OKGIN_ADMIN_KEY")
        # The referees this runner starts itself get this key (admin is closed on a referee
        # without one): the given key, else a random one that never leaves this process.
        self.local_admin_key = self.admin_key or secrets.token_hex(16)
        # The ipc socket of each referee, by the endpoint the runner knows it by; where the
        # local ones put theirs (set with the sandbox).
        self.ipc_for: dict[str, Path] = {}
        self.ipc_dir: Path | None = None
        self.note: Callable[[str], None] = lambda _: None
        self._lock = asyncio.Lock()

    async def start(self, sandbox: Sandbox | None) -> None:
        """Start the local referees, or connect to the given ones."""
        endpoints = self.opts.referee_endpoints or self.cfg.referee_endpoints
        if endpoints:
            for i, ep in enumerate(endpoints):
                if ep.startswith("ipc://"):
                    self.ipc_for[ep] = Path(ep[len("ipc://"):])
                    if sandbox is not None and sandbox.root:
                        # The bots run as other uids and need write permission to connect.
                        with contextlib.suppress(OSError):
                            os.chmod(self.ipc_for[ep], 0o666)
                elif sandbox is not None and any(p.kind != "remote" for p in self.cfg.participants):
                    raise StartError(
                        f"referee endpoint {ep}: sandboxed local bots have no network and reach a referee only through an "
                        "ipc:// socket on this host: give its ipc endpoint (okgin referee --also-bind ipc://PATH), let the "
                        "runner start its referees, or set tournament.sandbox = false (docs/tournaments.md, Sandbox)")
                # A remote referee may run --curve-keys: the runner is then its CURVE client
                # like any other (OKGIN_CURVE_SERVER_KEY / OKGIN_CURVE_CLIENT_KEY, .link).
                try:
                    curve = CurveClient.from_env()
                except ValueError as e:
                    raise StartError(f"referee endpoint {ep}: {e}") from None
                link = AdminLink(self.ctx, ep, f"organiser-{self.cfg.name}", self.admin_key, curve=curve)
                try:
                    await link.connect(timeout=15.0)
                except (RefereeGone, RequestFailed) as e:
                    await link.close()
                    raise RuntimeError(f"cannot use the referee at {ep}: {e}") from None
                except zmq.ZMQError as e:
                    await link.close()
                    raise StartError(f"referee endpoint {ep!r}: {e.strerror}") from None
                slot = Slot(f"r{i}", ep, link)
                link.on_gone(functools.partial(self._slot_gone, slot))
                self.slots.append(slot)
            return
        n = self.opts.referees or self.cfg.referees
        self.slots = list(await asyncio.gather(*(self._start_local(f"r{i}") for i in range(n))))

    async def _start_local(self, label: str, restarts: int = 0) -> Slot:
        ipc = None if self.ipc_dir is None else self.ipc_dir / f"{label}.sock"
        ref = await LocalReferee.start(self.workdir, label, self.local_admin_key, ipc=ipc, bind=self.opts.referee_bind,
                                       args=self.opts.referee_args)
        if ipc is not None:
            self.ipc_for[ref.endpoint] = ipc
        link = AdminLink(self.ctx, ref.endpoint, f"organiser-{self.cfg.name}", self.local_admin_key,
                         curve=self.opts.referee_curve)
        try:
            await link.connect(timeout=30.0)
        except (RefereeGone, RequestFailed):
            await link.close()
            await ref.stop()
            raise
        slot = Slot(label, ref.endpoint, link, ref, restarts=restarts)
        link.on_gone(functools.partial(self._slot_gone, slot))
        slot.watcher = asyncio.ensure_future(self._watch_referee(slot))
        return slot

    async def _watch_referee(self, slot: Slot) -> None:
        assert slot.local is not None
        code = await slot.local.proc.wait()
        slot.link.mark_gone(f"its process exited with status {code}")

    def _slot_gone(self, slot: Slot, why: str) -> None:
        if slot.dead:
            return
        slot.dead = True
        self.log.log_event("referee-died", f"referee {slot.label} at {slot.endpoint}: {why}")
        self.note(f"referee {slot.label} died")

    def first_alive(self) -> Slot | None:
        return next((s for s in self.slots if not s.dead), None)

    async def pick(self) -> Slot | None:
        """The least busy live referee, its ``active`` count taken (the caller gives it
        back); a dead local one restarted when none is left; None if none can be."""
        async with self._lock:
            alive = [s for s in self.slots if not s.dead]
            if not alive:
                # Restart local referees that died (remote ones cannot be restarted from here).
                for i, s in enumerate(self.slots):
                    if s.local is not None and s.restarts < MAX_RESTARTS:
                        await self.retire(s)
                        try:
                            new = await self._start_local(s.label, s.restarts + 1)
                        except (RuntimeError, RefereeGone, RequestFailed, OSError) as e:
                            self.log.log_event("referee-restart-failed", f"{s.label}: {e}")
                            s.restarts = MAX_RESTARTS
                            continue
                        self.slots[i] = new
                        self.log.log_event("referee-restarted", f"{new.label} at {new.endpoint} (restart {new.restarts})")
                        alive.append(new)
                        break
            if not alive:
                return None
            slot = min(alive, key=lambda s: (s.active, self.slots.index(s)))
            slot.active += 1
            return slot

    async def retire(self, slot: Slot) -> None:
        """Close ``slot``'s link and stop its referee if it is ours; its end from here on
        is not a failure."""
        slot.dead = True
        await slot.link.close()
        if slot.local is not None:
            await slot.local.stop()

    async def close(self) -> None:
        await asyncio.gather(*(self.retire(s) for s in self.slots), return_exceptions=True)
