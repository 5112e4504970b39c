"""A small fishtest: okgin's pentanomial SPRT between two bots over duplicate deals.

    python3 bench/sprt.py strong strong-v1 --elo0 0 --elo1 50 --max-games 3000
    python3 bench/sprt.py "strong:take_margin=2" strong --rule knock_limit=10 --rule undercut_bonus=25

Nothing here is a second SPRT or a second match runner: the games are ``okgin match``'s
(:class:`clients.match.MatchWork`: the same deals, seeds and seatings as ``okgin match
CANDIDATE BASELINE --seed SEED``, in the same order, so any prefix of a run is a prefix
of that match), the pairs are ``okgin match``'s (:func:`clients.match.deal_pairs`, the
pentanomial of :class:`okgin.stats.Paired`), and the test is the tournament's
(:class:`competition.tournament.sprt.Sprt`, the logistic GSPRT of fishtest and
fastchess). What this script adds is the loop: play a batch of deals, update the
LLR after every complete deal pair, stop at the first pair where it crosses a bound
(the games of that batch after it are dropped, so the verdict does not depend on the
batch size or ``--jobs``), or at ``--max-games`` (no verdict: "inconclusive").

A bot is a built-in name, ``module:Class``, ``path/to/file.py:Class``, or a built-in
with parameters, ``NAME:key=value,key=value`` (``strong:mc_samples=96``), which builds
``bot_class(NAME)(seed=..., key=value, ...)``: that is how a candidate setting is
tested against the bot of today before it becomes the default.

The summary (last lines) is Markdown for bench/strength.md: bots, rules, games and
deals, the pentanomial cells, the Elo difference with its 95% interval, the LLR with
its bounds, the verdict and the command that reproduces it. The last line is JSON.

``--journal FILE`` keeps every complete deal pair on disk as it is played (JSON lines
after a header naming the bots, the seed, the rules and a digest of the code that plays
the games), so a run cut short by a session's end or kill -9 goes on where it stopped:
the same command again reads the pairs back, checks they are this match's (same header,
the deals in ``okgin match``'s order), re-asks the test after each of them as the first
run did, and plays on from the next deal. Games are deterministic for a seed, so a
resumed run is the run that was never stopped; a journal written by other bots, rules,
seed or code is refused rather than mixed in.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from clients.bot import Bot
from clients.bots import BUILTIN_BOTS, bot_class, get_bot
from clients.match import Chunk, ForkLanes, GameSummary, MatchWork, deal_pairs, plan
from competition.tournament.sprt import Sprt
from okgin import RuleSet
from okgin.launch import add_rule_flag
from okgin.rules import EVENT_MAX_HANDS
from okgin.stats import Paired


def parse_value(raw: str) -> Any:
    """``"3"`` -> 3, ``"2.5"`` -> 2.5, ``"true"``/``"false"`` -> bool, else the text.

    >>> [parse_value(x) for x in ("3", "2.5", "true", "x")]
    [3, 2.5, True, 'x']
    """
    if raw.lower() in ("true", "false"):
        return raw.lower() == "true"
    for kind in (int, float):
        try:
            return kind(raw)
        except ValueError:
            pass
    return raw


def bot_factory(spec: str) -> str | Callable[[str], Bot]:
    """A spec for :func:`clients.match.make_bot`: the spec itself, or for
    ``NAME:key=value,...`` (NAME built in) a factory with those parameters."""
    name, _, rest = spec.partition(":")
    if name not in BUILTIN_BOTS or "=" not in rest:
        return spec
    params = {}
    for item in rest.split(","):
        key, eq, raw = item.partition("=")
        if not eq or not key.strip():
            raise SystemExit(f"bench/sprt.py: bad parameter {item!r} in {spec!r} (expected key=value)")
        params[key.strip()] = parse_value(raw.strip())
    cls = bot_class(name)
    cls(seed="check", **params)  # an unknown parameter fails here, with the bot's own sentence

    def make(seed: str) -> Bot:
        bot = cls(seed=seed, **params)
        bot.name = spec
        return bot

    make.__name__ = spec
    return make


def git_commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10,
                             cwd=Path(__file__).resolve().parent)
        return out.stdout.strip() or "?"
    except (OSError, subprocess.SubprocessError):
        return "?"


JOURNAL_FORMAT = 1


def code_digest(specs: tuple[str, ...]) -> str:
    """SHA-256 over the sources that decide how the games go: the engine (``okgin/``),
    the built-in bots and the match runner, and a bot file named in a spec. A journal
    written by other code holds other games, so it must not be resumed."""
    root = Path(__file__).resolve().parent.parent
    files = [*root.joinpath("okgin").rglob("*.py"), *root.joinpath("clients", "bots").rglob("*.py"),
             root / "clients" / "bot.py", root / "clients" / "match.py"]
    files += [Path(spec.rsplit(":", 1)[0]).resolve() for spec in specs if ".py:" in spec]
    h = hashlib.sha256()
    for f in sorted(set(files)):
        h.update(str(f.relative_to(root) if f.is_relative_to(root) else f).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


class Journal:
    """An SPRT run's complete deal pairs on disk, one JSON line per game after a header.

    Each pair is written and flushed to the disk as it completes, so a kill loses at
    most the pair being played; a line cut short by the kill is dropped on reading."""

    def __init__(self, path: Path, header: dict[str, Any]) -> None:
        self.path = path
        self.header = header

    def load(self, order: Chunk) -> list[GameSummary]:
        """The games already played (whole pairs, in ``order``), the file truncated to
        them; [] and a new file with the header if there is none. SystemExit on a journal
        of another match or a damaged one, naming what differs."""
        if not self.path.exists() or self.path.stat().st_size == 0:
            self.path.write_text(json.dumps(self.header, sort_keys=True) + "\n")
            return []
        raw = self.path.read_bytes()
        lines = raw.split(b"\n")
        try:
            head = json.loads(lines[0])
        except ValueError:
            raise SystemExit(f"bench/sprt.py: {self.path} is not an SPRT journal (its first line is not JSON)") from None
        if not isinstance(head, dict) or head.get("format") != JOURNAL_FORMAT:
            raise SystemExit(f"bench/sprt.py: {self.path} is not an SPRT journal of format {JOURNAL_FORMAT}")
        for key, want in self.header.items():
            if head.get(key) != want:
                raise SystemExit(f"bench/sprt.py: {self.path} was written for another match ({key} differs: "
                                 f"{json.dumps(head.get(key))[:80]} there, {json.dumps(want)[:80]} now); "
                                 "name another --journal file to start afresh")
        games: list[GameSummary] = []
        kept = len(lines[0]) + 1
        ends = [kept]
        for n, line in enumerate(lines[1:], start=2):
            if not line:
                continue
            try:
                g = GameSummary.from_json(json.loads(line))
            except (ValueError, KeyError, TypeError, IndexError):
                if n == len(lines) or (n == len(lines) - 1 and not lines[-1]):
                    break  # the last line, cut short by a kill: dropped
                raise SystemExit(f"bench/sprt.py: {self.path} line {n} is damaged; the journal cannot be resumed") from None
            if len(games) >= len(order):
                raise SystemExit(f"bench/sprt.py: {self.path} holds more than --max-games {len(order)} games; "
                                 "raise --max-games to go on from it")
            if (g.deal, g.seating) != order[len(games)]:
                raise SystemExit(f"bench/sprt.py: {self.path} line {n} is not the game this match plays next "
                                 f"(deal {g.deal}, seating {list(g.seating)})")
            games.append(g)
            kept += len(line) + 1
            ends.append(kept)
        games = games[: len(games) // 2 * 2]
        with self.path.open("r+b") as f:
            f.truncate(ends[len(games)])
        return games

    def append(self, pair: list[GameSummary]) -> None:
        with self.path.open("a") as f:
            f.write("".join(json.dumps(g.to_json(), sort_keys=True) + "\n" for g in pair))
            f.flush()
            os.fsync(f.fileno())


def replay_decision(test: Sprt, games: list[GameSummary]) -> tuple[list[GameSummary], str | None]:
    """Ask the test after each complete pair of ``games``, as the run that played them
    did: the games up to the first deciding pair and that decision, or all and None."""
    for end in range(2, len(games) + 1, 2):
        decision = test.decide(deal_pairs(games[:end]).counts)
        if decision is not None:
            return games[:end], decision
    return games, None


def play_sequential(work: MatchWork, order: Chunk, test: Sprt, batch: int, jobs: int,
                    progress: Callable[[int, float, Paired], None] | None = None,
                    deadline: float | None = None,
                    games: list[GameSummary] | None = None,
                    on_pair: Callable[[list[GameSummary]], None] | None = None) -> tuple[list[GameSummary], str | None]:
    """Play ``order`` (two seatings per deal) in batches of ``batch`` deals until the test
    decides; the games up to the deciding pair, and the decision (None: not reached).

    ``deadline`` (a ``time.monotonic()`` value) stops it after the batch running then;
    ``games``, if given, is filled as pairs complete, so a caller interrupted with
    Ctrl-C still holds every complete pair played; games already in it (a resumed
    journal's) count in the test before ``order``'s. ``on_pair`` is given each complete
    pair as it is counted (the journal)."""
    games = [] if games is None else games
    lanes = ForkLanes(jobs) if jobs > 1 else None
    step = 2 * batch
    for start in range(0, len(order), step):
        if deadline is not None and time.monotonic() >= deadline:
            break
        part = order[start:start + step]
        if lanes is None:
            done = work.play(part)
        else:
            sub = max(2, 2 * ((len(part) // 2 + jobs - 1) // jobs))
            done = [g for chunk in lanes.map(work, [part[i:i + sub] for i in range(0, len(part), sub)]) for g in chunk]
        for i in range(0, len(done), 2):
            games.extend(done[i:i + 2])
            if on_pair is not None:
                on_pair(done[i:i + 2])
            p = deal_pairs(games)
            decision = test.decide(p.counts)
            if decision is not None:
                return games, decision
        if progress is not None:
            p = deal_pairs(games)
            progress(len(games), test.llr(p.counts), p)
    return games, None


def summary(cand: str, base: str, rules: RuleSet, test: Sprt, games: list[GameSummary], decision: str | None,
            elapsed: float, command: str, stopped: str = "game limit", resumed: int = 0) -> tuple[str, dict[str, Any]]:
    p = deal_pairs(games)
    llr = test.llr(p.counts)
    lo, hi = p.elo_interval()
    wins = sum(1 for g in games if g.winner == 0)
    verdict = {"H1": "H1 accepted (pass)", "H0": "H0 accepted (fail)", None: f"inconclusive ({stopped})"}[decision]
    default = RuleSet(variant=rules.variant, max_hands=EVENT_MAX_HANDS).to_dict()
    changed = {k: v for k, v in rules.to_dict().items() if v != default.get(k)}
    rule_text = rules.variant + ("" if not changed else ", " + ", ".join(f"{k}={v}" for k, v in sorted(changed.items())))
    cells = "/".join(f"{c:g}" for c in p.counts)
    text = "\n".join([
        f"- **{cand}** vs **{base}** ({rule_text}; SPRT elo0 {test.elo0:g}, elo1 {test.elo1:g}, "
        f"alpha {test.alpha:g}, beta {test.beta:g}, {test.model})",
        f"  - games {len(games)} ({p.units:g} deal pairs); {cand} won {wins} ({100 * wins / max(len(games), 1):.1f}%)",
        f"  - pentanomial ({cand}'s points per pair 0/½/1/1½/2): {cells}",
        f"  - Elo {p.elo():+.1f} [{lo:+.1f}, {hi:+.1f}] (95%), LOS {100 * p.los():.1f}%",
        f"  - LLR {llr:.2f} [{test.lower:.2f}, {test.upper:.2f}]: **{verdict}**",
        f"  - {elapsed:.0f} s wall{f' (this run; {resumed} games read back from its journal)' if resumed else ''}, "
        f"commit {git_commit()}, Python {platform.python_version()}",
        f"  - `{command}`",
    ])
    data = {
        "candidate": cand, "baseline": base, "rules": rules.to_dict(), "elo0": test.elo0, "elo1": test.elo1,
        "alpha": test.alpha, "beta": test.beta, "games": len(games), "pairs": p.units, "cells": list(p.counts),
        "elo": round(p.elo(), 2), "elo_low95": round(lo, 2), "elo_high95": round(hi, 2), "llr": round(llr, 4),
        "lower": round(test.lower, 4), "upper": round(test.upper, 4), "decision": decision, "wins": wins,
        "elapsed_s": round(elapsed, 1), "command": command, "stopped": None if decision else stopped, "resumed": resumed,
    }
    return text, data


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench/sprt.py", description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("candidate")
    ap.add_argument("baseline")
    ap.add_argument("--elo0", type=float, default=0.0)
    ap.add_argument("--elo1", type=float, default=50.0)
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--beta", type=float, default=0.05)
    ap.add_argument("--max-games", type=int, default=3000, help="stop without a verdict after this many games (default 3000)")
    ap.add_argument("--batch", type=int, default=10, help="deals per batch between progress lines (default 10)")
    ap.add_argument("--seed", default="sprt", help="the match seed (okgin match --seed): the deals")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--max-minutes", type=float, help="stop without a verdict after the batch running at this time")
    ap.add_argument("--journal", type=Path, metavar="FILE",
                    help="keep the games here as they are played, and resume from them if FILE exists (see above)")
    add_rule_flag(ap)
    args = ap.parse_args(argv)
    if args.max_games < 2 or args.batch < 1 or args.jobs < 1:
        ap.error("--max-games must be at least 2, --batch and --jobs at least 1")
    rules = RuleSet(variant="oklahoma", max_hands=EVENT_MAX_HANDS).with_assignments(args.rule)
    test = Sprt(args.elo0, args.elo1, args.alpha, args.beta)
    bots = (bot_factory(args.candidate), bot_factory(args.baseline))
    for b in bots:
        if isinstance(b, str):
            get_bot(b, "check")
    seed: int | str = int(args.seed) if args.seed.lstrip("-").isdigit() else args.seed
    _, order = plan(2, args.max_games)
    work = MatchWork(bots, rules, seed)

    def progress(n: int, llr: float, p: Paired) -> None:
        print(f"{n} games, pairs {'/'.join(f'{c:g}' for c in p.counts)}, Elo {p.elo():+.0f}, "
              f"LLR {llr:.2f} [{test.lower:.2f}, {test.upper:.2f}]", file=sys.stderr, flush=True)

    t0 = time.perf_counter()
    deadline = None if args.max_minutes is None else time.monotonic() + 60 * args.max_minutes
    games: list[GameSummary] = []
    journal = None
    if args.journal is not None:
        header = {"format": JOURNAL_FORMAT, "candidate": args.candidate, "baseline": args.baseline, "seed": args.seed,
                  "rules": rules.to_dict(), "code": code_digest((args.candidate, args.baseline))}
        journal = Journal(args.journal, header)
        games = journal.load(order)
    resumed = len(games)
    games, decision = replay_decision(test, games)
    if resumed:
        print(f"{resumed} games read back from {args.journal}", file=sys.stderr, flush=True)
    stopped = "game limit"
    try:
        if decision is None:
            games, decision = play_sequential(work, order[len(games):], test, args.batch, args.jobs, progress, deadline,
                                              games, None if journal is None else journal.append)
        if decision is None and len(games) < len(order):
            stopped = "time limit"
    except KeyboardInterrupt:  # the summary of the complete pairs so far
        decision, stopped = None, "interrupted"
        games = games[: len(games) // 2 * 2]
    command = "python3 bench/sprt.py " + shlex.join(argv if argv is not None else sys.argv[1:])
    text, data = summary(args.candidate, args.baseline, rules, test, games, decision, time.perf_counter() - t0, command,
                         stopped, resumed)
    print(text)
    print(json.dumps(data, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
