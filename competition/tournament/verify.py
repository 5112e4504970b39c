"""``okgin tournament verify DB``: check a tournament's results file, and say what was checked.

Why anyone can do it: the seeds are not the organiser's word. The secret's commitment
was printed and stored before the first game; each game's ``seed_hash`` was published by
the referee at ``game_start``. Once the event is over its secret is revealed, and the
results chain's head (:mod:`.chain`) is printed. Then every check below runs, each
printed as one line, ``ok`` or ``FAIL`` with its counts, followed by the problems found:

- **file**: the stored config gives the stored fingerprint (and the schedule's size).
- **secret**: SHA-256(revealed secret) is the stored commitment.
- **secret origin**: whether the organiser chose the secret (``tournament.seed`` or
  ``.secret``), from the stored config; ``meta.secret_fixed`` must agree with it (a
  cleared or edited flag fails), and a fixed seed must give the revealed secret.
- **nonces**: the participants' nonces (:mod:`.entropy`) hash to their commitments and
  the stored commitments hash; with ``--nonce NAME=HEX`` a participant checks its own
  nonce went into every deal. The deals derive from the secret and the nonces
  (``okgin.schedule.deal_key``); the deals and binding checks use that key.
- **games**: every scheduled game is recorded, and nothing else (for an SPRT event,
  exactly as many games as the decision counted). An unfinished event fails here,
  naming what is missing, unless ``--partial`` asks to check what is there.
- **deals**: every revealed deal seed is HMAC-SHA256(secret, k) (okgin.schedule), and
  no deal was revealed before all of its games were recorded.
- **binding**: each game is the schedule's at its index (deal, seating, seats, key), its
  table is named for its index, and its row and its record have the deal's seed and
  the event's rules.
- **commitments**: each game's ``seed_hash`` is SHA-256(salt || seed) (protocol.md
  §5.10, 12.1) with a valid salt, no two games share one, and no commitment is kept for
  a game that is not recorded.
- **records**: each record replays through the engine (``Game.from_record`` with
  ``verify``) to its stored scores, winner and number of hands.
- **terminations**: each game's termination (and culprit) is backed by its record: the
  record's own ``final.termination`` and its resigning seat. The runner's labels
  ``crash``, ``timeout`` (stall), ``no_show`` (a remote participant that never
  came) and ``withheld`` (a participant that committed a nonce and did not reveal it)
  are backed by a resignation of that seat.
- **journals**: when the referee journals are at hand (the run directory beside the
  results file, or ``--journals DIR``), each game's journal names its table and
  ``seed_hash``, and its ``end`` line has the game's seed, salt, termination and
  record. Games with no journal here (remote referees, Dask workers) are counted.
- **chain**: the results chain recomputed from the file equals the stored head.

Then the secret's commitment and the chain head, to compare with what was published.
Exit status 0 when every check holds, 1 on any failure, 2 when the file cannot be read
(not a results file, or made before secret deals).

Extending: a check is a function of a :class:`Context` returning a :class:`Check`,
added to :data:`CHECKS` (``@check``); the order of :data:`CHECKS` is the order printed.
The participants' nonces (issue 24, item 7) add theirs so.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from okgin import Game
from okgin.journal import JournalError, read_journal
from okgin.rng import is_salt, seed_hash
from okgin.schedule import commitment, deal_key, deal_seed, parse_secret, secret_from_seed

from . import entropy
from .chain import Chain, chain_head
from .config import ConfigError, TournamentConfig, parse_config
from .records import find_journal
from .schedule import Schedule
from .store import GameResult, ResultsStore, StoreError

MAX_SHOWN = 50  # problems printed one by one; the rest are counted
FORFEITS = ("timeout", "illegal", "disconnect", "resigned")  # the engine's own forfeit terminations
# The runner's: it resigned the seat itself (a crash, a stall, a remote no-show).
RUNNER_LABELS = ("crash", "timeout", "no_show", "withheld")  # withheld: a nonce committed and not revealed (.entropy)


def secrecy_lines(store: ResultsStore) -> list[str]:
    """What a report may say about the deals: the commitment, the revealed deals, the
    secret only once it was revealed (never while the event is in progress), and the
    results chain's head."""
    com = store.get_meta("secret_commitment")
    if com is None:
        return ["deals: made before secret deals (each deal's seed was public)"]
    deals = store.revealed_deals()
    lines = [f"secret deals: commitment {com}; {len(deals)} deal(s) revealed"]
    if store.get_meta("secret_fixed") == "1":
        lines.append("  the secret was fixed by the config: these deals were reproducible, not secret")
    revealed = store.secret_revealed()
    if revealed is None:
        lines.append("  the secret stays secret until the event is complete (a --resume keeps it)")
    else:
        lines.append(f"  secret {revealed} (check every deal: okgin tournament verify {store.path})")
    total, played = store.get_meta("games_total"), store.count_games()
    if (store.get_meta("finished") is not None and total is not None and played < int(total)
            and store.get_meta("sprt_decision") is None):
        lines.append(f"WARNING: the file says the event finished, but {int(total) - played} of its {total} games are "
                     f"missing: okgin tournament verify {store.path}")
    head = store.get_meta("chain_head")
    if head is not None:
        lines.append(f"results chain head {head} over {store.get_meta('chain_games')} game(s): publish it with the "
                     "commitment; okgin tournament verify recomputes it")
    return lines


def config_from_store(data: dict[str, Any]) -> TournamentConfig:
    """The parts of the config that decide the schedule, from the stored fingerprint data."""
    t: dict[str, Any] = {"format": data["format"], "duplicate": data["duplicate"],
                         "remote_duplicate": data.get("remote_duplicate", False)}
    if data["format"] != "sprt":
        t["games_per_pairing"] = data["games_per_pairing"]
    if data.get("champion"):
        t["champion"] = data["champion"]
    # Which participants are remote decides which pairings had a deal per game.
    remote = [p["name"] for p in data["participants"] if p.get("kind") == "remote"]
    if remote:
        t["gateway"] = "tcp://127.0.0.1:1"  # a remote participant needs one; never opened here
    doc: dict[str, Any] = {
        "tournament": t,
        "participant": [{"name": p["name"], **({"remote": True} if p["name"] in remote else {"bot": "random"})}
                        for p in data["participants"]],
        "rules": {"max_hands": 0, **data["rules"]},  # a stored rule set without max_hands had none
    }
    if data.get("sprt"):
        doc["sprt"] = data["sprt"]
    return parse_config(doc)


def fingerprint_of(data: dict[str, Any]) -> str:
    """:meth:`TournamentConfig.fingerprint` of stored fingerprint data."""
    return hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]


# ------------------------------------------------------------------ the checks
@dataclass
class Check:
    """One line of verify's output: what was checked, ok / FAIL / skip, and why."""

    name: str
    summary: str
    problems: list[str] = field(default_factory=list)
    skipped: bool = False

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def status(self) -> str:
        return "FAIL" if self.problems else "skip" if self.skipped else "ok"


@dataclass
class Context:
    """What every check reads: the file, and what is derived from it once."""

    store: ResultsStore
    partial: bool = False
    journal_dirs: list[Path] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)  # the stored config (fingerprint data)
    secret: bytes | None = None  # the revealed secret, if revealed and well formed
    key: bytes | None = None  # the deals' key: the secret and the participants' nonces (okgin.schedule.deal_key)
    nonces: list[tuple[str, str]] = field(default_factory=list)  # --nonce NAME=HEX: a participant's own check
    schedule: Schedule | None = None
    games: list[GameResult] = field(default_factory=list)  # with records, in index order
    commits: dict[int, tuple[str, str]] = field(default_factory=dict)
    deals: dict[int, str] = field(default_factory=dict)
    expected: set[int] = field(default_factory=set)  # the indices the event must hold
    complete: bool = False
    chain: Chain | None = None
    schedule_error: str = ""

    @property
    def name(self) -> str:
        return self.store.get_meta("name") or ""


CHECKS: list[Callable[[Context], Check]] = []


def check(fn: Callable[[Context], Check]) -> Callable[[Context], Check]:
    """Add ``fn`` to :data:`CHECKS` (printed in the order added)."""
    CHECKS.append(fn)
    return fn


def _where(g: GameResult) -> str:
    return f"game {g.index} ({g.key})"


def _deal_seed(ctx: Context, deal: int) -> str | None:
    """Deal ``deal``'s seed as anyone can know it: from the revealed secret, else from
    the revealed deal (a partial check), else None."""
    if ctx.key is not None:
        return deal_seed(ctx.key, deal)
    return ctx.deals.get(deal)


@check
def check_file(ctx: Context) -> Check:
    problems = []
    fp = ctx.store.get_meta("fingerprint")
    if fp != fingerprint_of(ctx.data):
        problems.append(f"the stored config's fingerprint is {fingerprint_of(ctx.data)}, the file says {fp}: "
                        "the config was edited after the event was created")
    if ctx.schedule is None:
        return Check("file", "the stored config gives no schedule", [*problems, ctx.schedule_error])
    total = ctx.store.get_meta("games_total")
    if total is not None and total != str(len(ctx.schedule)):
        problems.append(f"games_total is {total}, the stored config schedules {len(ctx.schedule)}")
    return Check("file", f"config fingerprint {fp}; {ctx.data.get('format')}, {len(ctx.schedule)} game(s) scheduled",
                 problems)


@check
def check_secret(ctx: Context) -> Check:
    com = ctx.store.get_meta("secret_commitment")
    revealed = ctx.store.secret_revealed()
    if revealed is None:
        if ctx.partial and not ctx.complete:
            return Check("secret", "not revealed yet (the event is not complete): deals checked only where revealed",
                         skipped=True)
        why = "the event is complete" if ctx.complete else "the event is not complete"
        return Check("secret", "not revealed", [f"{why} and its secret was not revealed (an unfinished event: "
                                                "finish it with --resume, or check what is there with --partial)"])
    try:
        secret = parse_secret(revealed)
    except ValueError as e:
        return Check("secret", "malformed", [f"the revealed secret is malformed ({e})"])
    if commitment(secret) != com:
        return Check("secret", "does not match", [f"the revealed secret does not match the commitment {com} "
                                                  f"(SHA-256 of it is {commitment(secret)})"])
    return Check("secret", "the revealed secret's SHA-256 is the commitment")


@check
def check_secret_origin(ctx: Context) -> Check:
    """Whether the organiser chose the secret, and whether the file says so honestly.

    ``meta.secret_fixed`` is "1" when the run took its secret from the config
    (``tournament.seed`` or ``.secret``), "0" when it drew one from the OS. The stored
    config keeps ``seed`` (its text) and ``secret`` (the fixed secret's commitment), so
    the flag can be checked against it: a flag cleared or edited to hide a chosen secret
    fails. What no file can show is a secret the organiser chose and then wrote in as
    if drawn (the whole file rewritten): only the participants' nonces rule that out."""
    flag = ctx.store.get_meta("secret_fixed")
    seed, fixed_com = ctx.data.get("seed"), ctx.data.get("secret")
    configured = seed is not None or fixed_com is not None
    problems = []
    if flag not in ("0", "1"):
        problems.append(f"meta.secret_fixed is {flag!r} (missing or cleared): it must say whether the organiser "
                        "chose the secret")
    elif (flag == "1") != configured:
        problems.append(f"meta.secret_fixed is {flag} but the stored config {'fixes' if configured else 'does not fix'} "
                        "the secret: the flag was edited")
    com = ctx.store.get_meta("secret_commitment")
    if fixed_com is not None and fixed_com != com:
        problems.append(f"the config's fixed secret has commitment {fixed_com}, the event's is {com}")
    if seed is not None and commitment(secret_from_seed(seed)) != com:
        problems.append(f"the config's seed {seed!r} does not give the event's commitment {com}")
    if configured or flag == "1":
        summary = ("CHOSEN BY THE ORGANISER (tournament.seed / .secret): the deals were reproducible, not secret, "
                   "and may have been chosen")
    else:
        summary = ("drawn by the runner, as the file says (a file cannot prove the organiser did not choose it: "
                   "see docs/tournaments.md, Verifying an event)")
    return Check("secret origin", summary, problems)


@check
def check_nonces(ctx: Context) -> Check:
    """The participants' nonces (:mod:`.entropy`): the stored record is consistent (each
    nonce hashes to its commitment, the commitments hash is the stored list's). Whether
    the deals were dealt from them is the deals and binding checks' (they use the key)."""
    rec = ctx.store.entropy()
    if rec is None:
        return Check("nonces", "none stored: the deals derive from the organiser's secret alone", skipped=True)
    if ctx.secret is None:
        return Check("nonces", "the secret is not revealed: not checked", skipped=True)
    problems = entropy.record_problems(ctx.store, ctx.secret)
    return Check("nonces", f"{len(rec.get('nonces') or {})} participant nonce(s) hash to their commitments, the "
                 "commitments hash is the stored list's", problems)


def own_nonce_check(name: str, nonce_hex: str) -> Callable[[Context], Check]:
    """``--nonce NAME=HEX``: a participant's check that its own nonce went into every deal."""
    def run(ctx: Context) -> Check:
        if ctx.secret is None:
            return Check(f"nonce of {name}", "the secret is not revealed", ["the secret is needed to check a nonce"])
        return Check(f"nonce of {name}", "your nonce went into every deal (it is the one stored)",
                     entropy.check_nonce(ctx.store, ctx.secret, name, nonce_hex))
    return run


@check
def check_games(ctx: Context) -> Check:
    have = {g.index for g in ctx.games}
    problems = []
    extra = sorted(have - ctx.expected) if ctx.schedule is not None and ctx.data.get("sprt") is None else []
    if ctx.schedule is not None:
        extra = sorted(i for i in have if not 0 <= i < len(ctx.schedule)) if ctx.data.get("sprt") else extra
    if extra:
        problems.append(f"{len(extra)} game(s) not in the schedule: {_ids(extra)}")
    keys = [g.key for g in ctx.games]
    if len(set(keys)) != len(keys):
        problems.append("a game key is recorded twice")
    decision = ctx.store.get_meta("sprt_decision")
    if ctx.data.get("sprt") and decision is not None:
        want = int(json.loads(decision).get("games", -1))
        if len(have) != want:
            problems.append(f"the SPRT decided after {want} game(s); the file holds {len(have)}")
        dropped = sorted(set(range(max(have, default=-1) + 1)) - have)
        return Check("games", f"{len(have)} game(s) recorded, as many as the SPRT decision counted"
                     + (f" ({len(dropped)} in progress at the decision, dropped)" if dropped else ""), problems)
    missing = sorted(ctx.expected - have)
    if missing and ctx.store.get_meta("finished") is not None and ctx.data.get("sprt") is None:
        problems.append(f"the file says the event finished, with {len(missing)} scheduled game(s) missing: {_ids(missing)}")
    elif missing and not ctx.partial:
        problems.append(f"{len(missing)} scheduled game(s) missing: {_ids(missing)} (an unfinished event: finish it with "
                        "--resume, or check what is there with --partial)")
    summary = f"{len(have & ctx.expected)} of {len(ctx.expected)} scheduled game(s) present, each once"
    if missing and ctx.partial:
        summary += f"; {len(missing)} not played yet (--partial)"
    return Check("games", summary + ("" if extra else ", none other"), problems)


def _ids(xs: list[int], n: int = 10) -> str:
    return ", ".join(map(str, xs[:n])) + (f" ... ({len(xs) - n} more)" if len(xs) > n else "")


@check
def check_deals(ctx: Context) -> Check:
    problems = []
    have = {g.index for g in ctx.games}
    for deal in sorted(ctx.deals):
        if ctx.key is not None and ctx.deals[deal] != deal_seed(ctx.key, deal):
            problems.append(f"deal {deal}: the revealed seed {ctx.deals[deal]} is not the one the secret and the "
                            "participants' nonces give")
        if ctx.schedule is not None and ctx.data.get("sprt") is None:
            if deal >= ctx.schedule.deals.deal_count:
                problems.append(f"deal {deal} is revealed but not in the schedule")
            elif not set(ctx.schedule.deal_games(deal)) <= have:
                problems.append(f"deal {deal} is revealed but not every game of it is recorded")
    if ctx.complete:
        unrevealed = sorted({g.deal for g in ctx.games} - set(ctx.deals))
        if unrevealed:
            problems.append(f"{len(unrevealed)} deal(s) played but never revealed: {_ids(unrevealed)}")
    how = "each from the secret and nonces" if ctx.key is not None else "(secret not revealed: not checked against it)"
    return Check("deals", f"{len(ctx.deals)} deal seed(s) revealed, {how}, each after its last game", problems)


@check
def check_binding(ctx: Context) -> Check:
    problems = []
    rules = ctx.data.get("rules")
    names = {p["name"] for p in ctx.store.participants()}
    for g in ctx.games:
        where = _where(g)
        if ctx.schedule is not None and 0 <= g.index < len(ctx.schedule):
            sg = ctx.schedule[g.index]
            if (sg.deal, sg.seating, sg.seats, sg.key) != (g.deal, g.seating, g.seats, g.key):
                problems.append(f"{where}: the schedule has deal {sg.deal}, seating {sg.seating}, seats "
                                f"{' v '.join(sg.seats)} at this index; the file has deal {g.deal}, seating "
                                f"{g.seating}, seats {' v '.join(g.seats)}")
        if not set(g.seats) <= names:
            problems.append(f"{where}: seats {' v '.join(g.seats)} are not the event's participants")
        prefix = f"{ctx.name}-{g.index}-"
        attempt = g.table_id[len(prefix):] if g.table_id.startswith(prefix) else ""
        if not attempt.isdigit() or not 1 <= int(attempt) <= g.attempts:
            problems.append(f"{where}: its table {g.table_id!r} is not this game's (NAME-{g.index}-ATTEMPT, attempt "
                            f"1..{g.attempts})")
        seed = _deal_seed(ctx, g.deal)
        if seed is not None and g.seed != seed:
            problems.append(f"{where}: seed {g.seed} is not deal {g.deal}'s ({seed})")
        if str(g.record.get("seed")) != g.seed:
            problems.append(f"{where}: its record was dealt from {g.record.get('seed')!r}, not the game's seed {g.seed}")
        if rules is not None and g.record.get("rules") != rules:
            problems.append(f"{where}: its record was played under other rules than the event's")
    return Check("binding", f"{len(ctx.games)} game(s): deal, seating, seats and key as scheduled; table, seed and "
                 "rules the game's", problems)


@check
def check_commitments(ctx: Context) -> Check:
    problems = []
    seen: dict[str, int] = {}
    have = {g.index for g in ctx.games}
    for g in ctx.games:
        where = _where(g)
        if g.index not in ctx.commits:
            problems.append(f"{where}: no seed_hash and salt were kept for it")
            continue
        h, salt = ctx.commits[g.index]
        if not is_salt(salt):
            problems.append(f"{where}: the referee revealed no valid salt ({salt!r})")
        elif seed_hash(g.seed, salt) != h:
            problems.append(f"{where}: game_start's seed_hash {h} is not SHA-256(salt || seed) = {seed_hash(g.seed, salt)}")
        if salt in seen:
            problems.append(f"{where}: its salt is game {seen[salt]}'s too (each game's referee draws its own)")
        seen.setdefault(salt, g.index)
    orphans = sorted(set(ctx.commits) - have)
    if orphans:
        problems.append(f"commitments kept for {len(orphans)} game(s) not recorded: {_ids(orphans)}")
    return Check("commitments", f"{len(ctx.games)} seed_hash = SHA-256(salt || seed), salts distinct", problems)


@check
def check_records(ctx: Context) -> Check:
    problems = []
    for g in ctx.games:
        where = _where(g)
        try:
            game = Game.from_record(g.record, verify=True)
        except Exception as e:  # any failure to replay is a problem to report
            problems.append(f"{where}: its record does not replay: {type(e).__name__}: {e}")
            continue
        if not game.is_over:
            problems.append(f"{where}: its record replays to an unfinished game")
            continue
        winner = None if game.winner is None else g.seats[game.winner] if game.winner < len(g.seats) else "?"
        if tuple(game.scores) != tuple(g.scores) or winner != g.winner:
            problems.append(f"{where}: the record replays to scores {list(game.scores)}, winner {winner}; the file says "
                            f"{list(g.scores)}, winner {g.winner}")
        if len(g.record.get("results") or []) != g.hands:
            problems.append(f"{where}: the record has {len(g.record.get('results') or [])} hand(s), the file says {g.hands}")
    return Check("records", f"{len(ctx.games)} record(s) replay to their scores, winner and hands", problems)


def resigner(record: dict[str, Any]) -> int | None:
    """The seat whose resignation (a forfeit of any kind) ended the record, if one did."""
    for e in reversed(record.get("entries") or []):
        if "resign" in e:
            return e.get("seat") if isinstance(e.get("seat"), int) else None
    return None


@check
def check_terminations(ctx: Context) -> Check:
    problems = []
    counts: dict[str, int] = {}
    rec = ctx.store.entropy()
    withheld = set((rec or {}).get("withheld") or [])
    for g in ctx.games:
        where = _where(g)
        counts[g.termination] = counts.get(g.termination, 0) + 1
        final = g.record.get("final") or {}
        rec_term = final.get("termination")
        seat = resigner(g.record) if rec_term != "normal" else None
        culprit = None if seat is None or not 0 <= seat < len(g.seats) else g.seats[seat]
        if g.termination == rec_term:
            ok = True
        else:  # the runner's own labels for a seat it resigned (a crashed or stalled bot)
            ok = g.termination in RUNNER_LABELS and rec_term == "resigned"
        if not ok:
            problems.append(f"{where}: the file says {g.termination}, its record ends {rec_term}")
        elif g.culprit != culprit:
            problems.append(f"{where}: the file blames {g.culprit}, its record {culprit or 'nobody'}")
        elif g.termination == "withheld" and g.culprit not in withheld:
            problems.append(f"{where}: forfeited as withheld, but the nonce record does not say {g.culprit} withheld")
    summary = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
    return Check("terminations", f"{len(ctx.games)} game(s) end as their records do ({summary or 'none'})", problems)


def default_journal_dirs(store: ResultsStore) -> list[Path]:
    """The local referees' journal directories in the run directory beside the file."""
    run = store.path.with_name(store.path.stem + "-run")
    return sorted(p for p in run.glob("journals-*") if p.is_dir())


@check
def check_journals(ctx: Context) -> Check:
    if not ctx.journal_dirs:
        return Check("journals", "no journal directory here (NAME-run/journals-*, or --journals DIR): not checked",
                     skipped=True)
    problems = []
    found = 0
    for g in ctx.games:
        path = next((p for d in ctx.journal_dirs if (p := find_journal(d, g.table_id)) is not None), None)
        if path is None:
            continue
        found += 1
        where = f"{_where(g)}, journal {path.name}"
        try:
            j = read_journal(path)
        except JournalError as e:
            problems.append(f"{where}: unreadable: {e}")
            continue
        start, end = j.start, j.end
        h, salt = ctx.commits.get(g.index, ("", ""))
        if start.get("table") != g.table_id:
            problems.append(f"{where}: it is table {start.get('table')!r}'s")
        # (Its players are the names the bots gave in hello, not the participants': the
        # table, the salted seed_hash and the record bind the journal to its seats.)
        if start.get("seed_hash") != h:
            problems.append(f"{where}: its seed_hash {start.get('seed_hash')} is not the file's {h}")
        if end is None:
            problems.append(f"{where}: it has no end line")
            continue
        if end.get("seed") != g.seed or end.get("salt") != salt:
            problems.append(f"{where}: its end line has another seed or salt than the file")
        if end.get("termination") != (g.record.get("final") or {}).get("termination"):
            problems.append(
                f"{where}: it ends {end.get('termination')}, the record {(g.record.get('final') or {}).get('termination')}"
            )
        jrec = end.get("record") or {}
        if g.clocks.get("source") == "journal":
            same = jrec == g.record
        else:  # rebuilt from the public feed (no journal then): its results and final only
            same = (jrec.get("results"), jrec.get("final")) == (g.record.get("results"), g.record.get("final"))
        if not same:
            problems.append(f"{where}: its record is not the file's")
    return Check("journals", f"{found} of {len(ctx.games)} game(s) agree with their referee journal"
                 + (f" ({len(ctx.games) - found} have none here: remote referees, Dask workers)"
                    if found < len(ctx.games) else ""), problems)


@check
def check_chain(ctx: Context) -> Check:
    assert ctx.chain is not None
    stored = ctx.store.get_meta("chain_head")
    games = ctx.store.get_meta("chain_games")
    problems = []
    if stored is None:
        if ctx.complete:
            problems.append("the event is complete and no chain head is stored (deleted, or a file made before "
                            "results chains)")
        else:
            return Check("chain", f"over the {ctx.chain.games} game(s) recorded so far (no head is stored until the "
                         "event is complete)", skipped=True)
    elif stored != ctx.chain.head or games != str(ctx.chain.games):
        problems.append(f"the file's games give the chain head {ctx.chain.head} over {ctx.chain.games} game(s); "
                        f"the stored head is {stored} over {games}: a game, its record or the event header was "
                        "changed after the head was made")
    return Check("chain", f"recomputed over {ctx.chain.games} game(s) in schedule order", problems)


def context(store: ResultsStore, partial: bool = False, journal_dirs: list[Path] | None = None) -> Context:
    """Everything the checks read, read once. Raises :class:`StoreError` when the file
    cannot be verified at all."""
    if store.get_meta("secret_commitment") is None:
        raise StoreError(f"{store.path} was made before secret deals: there is no secret to verify")
    ctx = Context(store, partial=partial)
    ctx.journal_dirs = default_journal_dirs(store) if journal_dirs is None else journal_dirs
    try:
        ctx.data = store.config_data()
    except ValueError as e:
        raise StoreError(f"{store.path}: its stored config is not JSON ({e})") from None
    revealed = store.secret_revealed()
    if revealed is not None:
        try:
            ctx.secret = parse_secret(revealed)
        except ValueError:
            ctx.secret = None  # the secret check says so
        else:
            if commitment(ctx.secret) != store.get_meta("secret_commitment"):
                ctx.secret = None
    try:
        nonces = store.entropy_nonces()
    except ValueError as e:
        raise StoreError(f"{store.path}: its participants' nonces are unreadable ({e})") from None
    if ctx.secret is not None:
        ctx.key = deal_key(ctx.secret, nonces)
    try:
        ctx.schedule = Schedule(config_from_store(ctx.data), ctx.secret, nonces)
    except (ConfigError, KeyError, TypeError) as e:
        ctx.schedule = None  # the file check reports it
        ctx.schedule_error = f"the stored config does not give a schedule: {e}"
    ctx.games = store.games(with_records=True)
    ctx.commits = store.commitments()
    ctx.deals = store.revealed_deals()
    if ctx.schedule is not None and not ctx.data.get("sprt"):
        ctx.expected = set(range(len(ctx.schedule)))
    else:
        ctx.expected = {g.index for g in ctx.games}
    have = {g.index for g in ctx.games}
    ctx.complete = ctx.expected <= have and (not ctx.data.get("sprt") or store.get_meta("sprt_decision") is not None)
    ctx.chain = chain_head(store.conn)
    return ctx


def verify(store: ResultsStore, partial: bool = False, journal_dirs: list[Path] | None = None,
           nonces: list[tuple[str, str]] | None = None) -> tuple[list[Check], Context]:
    """Every check's outcome, in :data:`CHECKS` order (then each ``--nonce`` given)."""
    ctx = context(store, partial, journal_dirs)
    return [fn(ctx) for fn in [*CHECKS, *(own_nonce_check(n, h) for n, h in nonces or [])]], ctx


def verify_main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="okgin tournament verify",
                                description="Check a tournament's results file: every game present once, bound to its "
                                "deal and seats, replayed, its termination and journal, every deal and commitment from the "
                                "revealed secret, and the results chain (docs/tournaments.md, Verifying an event).")
    p.add_argument("db", help="the results file (.sqlite) of a tournament")
    p.add_argument("--partial", action="store_true",
                   help="check an event that is not complete (interrupted, or still running): games not played yet "
                   "and the unrevealed secret do not fail")
    p.add_argument("--journals", metavar="DIR", action="append", type=Path,
                   help="a directory of the referees' journals (default: NAME-run/journals-* beside the file); repeatable")
    p.add_argument("--nonce", action="append", default=[], metavar="NAME=HEX",
                   help="a participant's own nonce (its bot printed it): check that it went into every deal")
    args = p.parse_args(argv)
    own: list[tuple[str, str]] = []
    for item in args.nonce:
        name, sep, hexed = item.partition("=")
        if not sep or not name:
            print(f"okgin tournament verify: --nonce wants NAME=HEX, got {item!r}", file=sys.stderr)
            return 2
        own.append((name, hexed.strip().lower()))
    try:
        store = ResultsStore.open_existing(args.db)
    except StoreError as e:
        print(f"okgin tournament verify: {e}", file=sys.stderr)
        return 2
    try:
        checks, ctx = verify(store, partial=args.partial, journal_dirs=args.journals, nonces=own)
        com = store.get_meta("secret_commitment")
    except StoreError as e:
        print(f"okgin tournament verify: {e}", file=sys.stderr)
        return 2
    finally:
        store.close()
    shown = 0
    for c in checks:
        print(f"{c.status:4s}  {c.name}: {c.summary}" + (f" -- {len(c.problems)} problem(s)" if c.problems else ""))
        for line in c.problems:
            if shown < MAX_SHOWN:
                print(f"        MISMATCH {line}")
            shown += 1
    if shown > MAX_SHOWN:
        print(f"        ... and {shown - MAX_SHOWN} more")
    assert ctx.chain is not None
    print(f"commitment  {com}")
    print(f"chain head  {ctx.chain.head} ({ctx.chain.games} game(s){'' if ctx.complete else ', not complete'})")
    failed = [c.name for c in checks if not c.ok]
    if failed:
        print(f"okgin tournament verify: FAILED: {', '.join(failed)}")
        return 1
    print(f"okgin tournament verify: {len(ctx.games)} game(s), every check holds")
    return 0
