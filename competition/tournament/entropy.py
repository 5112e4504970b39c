"""Participants' nonces: collected at the preflight, stored, shown, and checked.

Why (docs/tournaments.md, *Deals nobody can choose*): with the organiser's secret alone,
an organiser could try secrets offline until the deals favour someone. So, after the
secret's commitment is published (printed and stored before the preflight), every
participant that can contributes a random nonce, in two rounds:

1. **Commit.** Each participant's bot sends the SHA-256 commitment of its nonce with its
   ``hello`` (protocol 1.5, protocol.md 5.27): a local bot at its preflight table on the
   referee, a remote bot to the gateway (the runner waits up to :data:`REMOTE_WAIT_S` for remote bots
   to connect). The runner reads them; the list of every
   commitment is then fixed, stored, printed, and hashed (``commitments_hash``, which
   binds the organiser's secret commitment too).
2. **Reveal.** Only then is each committed participant asked (``entropy_request`` with
   that hash) and answers with its nonce, which must hash to its commitment. A participant
   gets :data:`REVEAL_TIMEOUT_S` (from the request); then the event goes on without it.

The deals derive from the secret and every revealed nonce (:func:`okgin.schedule.deal_key`).
Who contributed, who sent no commitment (``absent``: a 1.4 bot, a remote bot not
connected by the end of the preflight) and who committed but
did not reveal (``withheld``) are stored in ``meta.entropy`` and named in the report.
A withheld nonce is left out, and the participant forfeits every one of its games
(termination ``withheld``: the runner takes its seat and resigns it). Alone it could not
tell which of the two outcomes (its nonce in or out) it preferred without the organiser's
secret; colluding with the organiser, withholding is the one bit commit-reveal leaves, and
it costs the whole event; an organiser who claimed an honest reveal was withheld would
have to forfeit that participant in public. See docs/tournaments.md.

Resumed events keep the stored record (the deals never change mid-event); an event
started before nonces (no record, games already played) keeps the old derivation.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from okgin.schedule import commitments_hash, deal_key, deal_seed, nonce_commitment, parse_hex32

from .link import RefereeGone, RequestFailed

if TYPE_CHECKING:
    from .config import TournamentConfig
    from .gateway import Gateway
    from .referees import Slot
    from .store import ResultsStore

REVEAL_TIMEOUT_S = 10.0
REMOTE_WAIT_S = 10.0  # how long the commit round waits for remote bots to connect to the gateway
POLL_S = 0.05
RECORD_VERSION = 1


@dataclass
class Contributor:
    """A participant that can be asked for its nonce: ``ask(hash)`` sends the request,
    ``nonce()`` reads what it revealed (hex or None)."""

    name: str
    commit: str | None
    ask: Callable[[str], Awaitable[None]]
    nonce: Callable[[], Awaitable[str | None]]


async def referee_seat(slot: Slot, name: str, table: str) -> Contributor:
    """A local participant seated at its preflight table ``table``."""

    async def state(h: str | None = None) -> dict[str, Any]:
        """The seat's entropy_state. A lost referee is the organiser's failure, never the
        participant's: it stops the event (RuntimeError) rather than count as a withheld nonce."""
        msg: dict[str, Any] = {"type": "entropy", "table": table}
        if h is not None:
            msg["commitments_hash"] = h
        try:
            return await slot.link.request(msg, timeout=5.0)
        except RequestFailed:
            return {}  # a referee of protocol 1.4 (unknown_type): nobody's nonce through it
        except RefereeGone as e:
            raise RuntimeError(f"preflight: the referee was lost while collecting the participants' nonces ({e}); "
                               "no game was played") from None

    async def ask(h: str) -> None:
        await state(h)

    async def nonce() -> str | None:
        got = (await state()).get("nonces") or [None]
        return got[0] if isinstance(got[0], str) else None

    commits = (await state()).get("commits") or [None]
    return Contributor(name, commits[0] if isinstance(commits[0], str) else None, ask, nonce)


def gateway_seat(gw: Gateway, event: str, name: str) -> Contributor:
    """A remote participant connected to the gateway (of the event named ``event``)."""
    table = f"{event}-preflight-{name}"

    async def ask(h: str) -> None:
        await gw.request_entropy(name, table, h)

    async def nonce() -> str | None:
        return gw.entropy_nonce(name)

    return Contributor(name, gw.entropy_commit(name), ask, nonce)


def wanted(store: ResultsStore) -> bool:
    """Whether this run collects nonces: a new event (no record, no game yet) whose secret
    is not fixed. A fixed secret (``tournament.seed`` / ``.secret``) makes an event
    reproducible by design, which nonces would undo: it takes none."""
    return store.entropy() is None and store.count_games() == 0 and store.get_meta("secret_fixed") != "1"


async def _remotes_connected(cfg: TournamentConfig, gw: Gateway | None, stop: asyncio.Event) -> None:
    """Wait, at most :data:`REMOTE_WAIT_S`, for every remote participant to connect."""
    if gw is None:
        return
    loop = asyncio.get_running_loop()
    deadline = loop.time() + REMOTE_WAIT_S
    remote = [p.name for p in cfg.participants if p.kind == "remote"]
    while not all(gw.is_connected(n) for n in remote) and loop.time() < deadline and not stop.is_set():
        await asyncio.sleep(POLL_S)


async def collect(store: ResultsStore, cfg: TournamentConfig, gateway: Gateway | None, stop: asyncio.Event,
                  seats: list[Contributor], timeout: float | None = None) -> None:
    """The two rounds (see the module doc), with the local ``seats`` and the remote
    participants connected to ``gateway``; stores the record (the runner then deals its
    schedule again from it). Nothing happens unless :func:`wanted`."""
    if not wanted(store):
        return
    timeout = REVEAL_TIMEOUT_S if timeout is None else timeout
    await _remotes_connected(cfg, gateway, stop)
    if gateway is not None:
        seats = seats + [gateway_seat(gateway, cfg.name, p.name) for p in cfg.participants
                         if p.kind == "remote" and gateway.is_connected(p.name)]
    com = store.get_meta("secret_commitment") or ""
    committed = {s.name: s.commit for s in seats if s.commit is not None}
    absent = sorted(p.name for p in cfg.participants if p.name not in committed)
    h = commitments_hash(com, committed)
    store.log_event("entropy", f"nonce commitments of {len(committed)} participant(s) fixed, hash {h}: "
                    + ", ".join(f"{n} {c}" for n, c in sorted(committed.items())))
    print(f"participants' nonces: {len(committed)} commitment(s) fixed (hash {h}); asking for the nonces", flush=True)
    asking = [s for s in seats if s.commit is not None]
    await asyncio.gather(*(s.ask(h) for s in asking))
    nonces: dict[str, str] = {}
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        for s in asking:
            if s.name in nonces:
                continue
            got = await s.nonce()
            with contextlib.suppress(ValueError):
                if got is not None and nonce_commitment(parse_hex32(got)) == s.commit:
                    nonces[s.name] = got
        if len(nonces) == len(asking) or loop.time() >= deadline:
            break
        await asyncio.sleep(POLL_S)
    withheld = sorted(set(committed) - set(nonces))
    record = {"version": RECORD_VERSION, "secret_commitment": com, "commitments": committed, "commitments_hash": h,
              "nonces": nonces, "withheld": withheld, "absent": absent}
    store.set_entropy(record)
    store.log_event("entropy", f"nonces revealed by {len(nonces)} participant(s)"
                    + (f"; withheld by {', '.join(withheld)} (left out)" if withheld else "")
                    + (f"; none from {', '.join(absent)}" if absent else ""))
    for line in report_lines(store):
        print(line, flush=True)


def withheld(store: ResultsStore) -> frozenset[str]:
    """The participants who committed a nonce and did not reveal it: each forfeits every
    one of its games (termination ``withheld``)."""
    rec = store.entropy()
    return frozenset(rec.get("withheld") or []) if rec is not None else frozenset()


def report_lines(store: ResultsStore) -> list[str]:
    """What the report says about the participants' nonces."""
    rec = store.entropy()
    if rec is None:
        if store.get_meta("secret_commitment") is None:
            return []
        if store.get_meta("secret_fixed") == "1":
            return ["participants' nonces: none (a fixed secret makes the event reproducible: it takes no nonces)"]
        return ["participants' nonces: none (the deals derive from the organiser's secret alone)"]
    nonces = rec.get("nonces") or {}
    lines = [f"participants' nonces: {len(nonces)} went into every deal ({', '.join(sorted(nonces)) or 'none'}); "
             f"commitments hash {rec.get('commitments_hash')}"]
    if rec.get("withheld"):
        lines.append(f"  committed but withheld (left out; each forfeits every game): {', '.join(rec['withheld'])}")
    if rec.get("absent"):
        lines.append(f"  sent no commitment: {', '.join(rec['absent'])}")
    return lines


def check_nonce(store: ResultsStore, secret: bytes, name: str, nonce_hex: str) -> list[str]:
    """A participant's own check that its nonce went into every deal: each mismatch as a
    sentence (none: it did). Uses only its nonce, the stored record and the revealed
    secret and deals; the commitment it compares is the one stored (and printed at the
    event: compare it with what was published)."""
    rec = store.entropy()
    if rec is None:
        return [f"{store.path} holds no participants' nonces (an event from before them)"]
    try:
        nonce = parse_hex32(nonce_hex)
    except ValueError as e:
        return [f"--nonce {name}=...: {e}"]
    bad = []
    commit = (rec.get("commitments") or {}).get(name)
    if commit is None:
        bad.append(f"{name} has no stored commitment (absent: {name in (rec.get('absent') or [])})")
    elif commit != nonce_commitment(nonce):
        bad.append(f"{name}'s stored commitment {commit} is not the commitment of this nonce ({nonce_commitment(nonce)})")
    stored = (rec.get("nonces") or {}).get(name)
    if stored != nonce.hex():
        bad.append(f"{name}'s nonce is not the one stored ({stored or 'none stored'})")
    nonces = {n: parse_hex32(v) for n, v in (rec.get("nonces") or {}).items()}
    nonces[name] = nonce
    key = deal_key(secret, nonces)
    for deal, seed in sorted(store.revealed_deals().items()):
        if deal_seed(key, deal) != seed:
            bad.append(f"deal {deal}: its seed is not dealt from this nonce")
    for g in store.games():
        if g.seed != deal_seed(key, g.deal):
            bad.append(f"game {g.index} ({g.key}): its seed is not dealt from this nonce")
    return bad


def record_problems(store: ResultsStore, secret: bytes) -> list[str]:
    """The stored record's own consistency, for ``verify``: every nonce hashes to its
    commitment, and the commitments hash is that of the stored list and commitment."""
    rec = store.entropy()
    if rec is None:
        return []
    bad = []
    commits = rec.get("commitments") or {}
    for n, v in sorted((rec.get("nonces") or {}).items()):
        try:
            ok = nonce_commitment(parse_hex32(v)) == commits.get(n)
        except ValueError:
            ok = False
        if not ok:
            bad.append(f"participant {n}'s stored nonce does not hash to its stored commitment")
    try:
        h = commitments_hash(store.get_meta("secret_commitment") or "", commits)
    except ValueError as e:
        h = f"unreadable ({e})"
    if h != rec.get("commitments_hash"):
        bad.append(f"the stored commitments hash {rec.get('commitments_hash')} is not that of the stored list ({h})")
    return bad
