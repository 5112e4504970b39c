"""Bot against bot with duplicate deals: the importable match runner behind ``okgin match``.

Why duplicate deals: luck of the cards swamps skill in gin. Every *deal* (one game seed:
every hand's cards, the first dealer, the Box roles) is played once per seating of the
bots (twice with two bots, seats swapped; six times with three, every permutation), so
each bot gets every other bot's cards exactly as often as its own and most of the luck
cancels. ``games`` is rounded up to a whole number of deals.

Seeds and order are :mod:`okgin.schedule`'s, the scheme ``okgin tournament`` uses: a
match seeded ``S`` has the fixed secret SHA-256(``S``'s text); deal ``d`` is the game seed
HMAC-SHA256(secret, ASCII decimal of ``d``) and the bot with index ``i`` gets
HMAC-SHA256(secret, ``"bot/d/i"``) (whatever its seat). So a match is a pure function
of its arguments and replays exactly, in-process or through a referee
(:mod:`clients.match_referee` uses the same seeds and gets the same games), a
tournament with ``seed = S`` deals the same deals, and no bot can derive a deal from
its own seed or from an earlier deal's. (Reproducible is not secret: whoever knows
``S`` knows every deal; a tournament's default random secret is for that.)

**Intervals are per deal.** The games of one deal share their cards, so they are not
independent trials: every interval here is clustered by deal (:mod:`okgin.stats`: the
deal's games are one observation, Student's t below 30 deals, never zero-width), and
with two bots the head-to-head is the pentanomial of fishtest and fastchess on deal
pairs (:class:`okgin.stats.Paired`: bot 0's points per pair 0, 1/2, 1, 3/2, 2).

Use from Python (the strength tests of ``clients/bots/strong`` do)::

    from clients.match import run_match
    res = run_match(["strong", "simple"], games=400, seed=7, jobs=2)
    s = res.stats()[0]
    print(s.win_rate, s.win_ci, s.points_per_game)

A bot is a built-in name, ``module:Class``, ``path/to/file.py:Class`` (see
:mod:`clients.bots`), or any callable ``seed -> Bot`` (a configured instance factory).
Games run in this process, or in ``jobs`` forked worker processes, or as tasks on a
Dask cluster (``lanes``: :mod:`clients.match_dask`, ``okgin match --dask``). Each
deal's games are independent; every way of running plays the same chunks of whole
deals with the one chunk runner :meth:`MatchWork.play` and gathers the results in deal
order, so neither ``jobs`` nor the cluster ever changes them.
"""

from __future__ import annotations

import json
import math
import multiprocessing
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from okgin import Game, RuleSet
from okgin import schedule as deals_scheme
from okgin.roles import draw_roles, rotate
from okgin.stats import Paired, cluster_mean, small_sample_warning

from .bot import Bot
from .bots import get_bot
from .local import play_local

BotSpec = str | Callable[[str], Bot]
"""A bot name/spec for :func:`clients.bots.get_bot`, or a factory ``seed -> Bot``."""

Z95 = 1.959963984540054


# --------------------------------------------------------------------------- seeds
seatings = deals_scheme.seatings
"""Every seating of ``num_seats`` bots: ``seating[seat]`` is the bot index there."""


def game_seed(seed: int | str, deal: int) -> str:
    """The game seed of deal ``deal`` in a match seeded ``seed`` (okgin.schedule)."""
    return deals_scheme.deal_seed(deals_scheme.secret_from_seed(seed), deal)


def bot_seed(seed: int | str, deal: int, bot_index: int) -> str:
    """The seed given to bot ``bot_index`` for deal ``deal`` (the same in every seating)."""
    return deals_scheme.bot_seed(deals_scheme.secret_from_seed(seed), deal, bot_index)


def plan(num_bots: int, games: int) -> tuple[int, list[tuple[int, tuple[int, ...]]]]:
    """The number of deals and the (deal, seating) of every game, in play order: the
    tournament's order (okgin.schedule.DealSchedule) for one group of ``num_bots``."""
    sched = deals_scheme.DealSchedule(groups=1, seats=num_bots, games_per_group=max(1, games))
    return sched.deals, [(sl.deal, sl.order) for sl in map(sched.slot, range(len(sched)))]


# ------------------------------------------------------------------------ results
@dataclass(frozen=True)
class HandSummary:
    """One hand, with seats translated to bot indices."""

    number: int
    outcome: str  # knock gin big_gin undercut tie drawn
    players: tuple[int, int]  # the two bots that played it (dealer first)
    winner: int | None
    knocker: int | None
    points: int


@dataclass
class GameSummary:
    """One game of a match. Bot indices, not seats, everywhere but ``seating``."""

    deal: int
    seating: tuple[int, ...]  # seating[seat] = bot index
    seed: str
    winner: int | None
    scores: tuple[int, ...]  # per bot index
    termination: str
    at_fault: int | None  # the bot that forfeited (illegal action, timeout, ...), if any
    hands: tuple[HandSummary, ...]
    actions: int
    record: dict[str, Any] | None = None  # the engine's full record, when asked for

    def key(self) -> tuple[Any, ...]:
        """Everything that must agree between two runs of the same game."""
        return (self.deal, self.seating, self.seed, self.winner, self.scores, self.termination, self.at_fault, self.hands,
                self.actions)

    def to_json(self) -> dict[str, Any]:
        """The summary without the engine's record, as JSON values (a line of an SPRT's
        journal, bench/sprt.py: enough to count the game again, not to replay it)."""
        d = asdict(self)
        d.pop("record")
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> GameSummary:
        """The inverse of :meth:`to_json` (KeyError or TypeError on a malformed line)."""
        return cls(
            deal=int(d["deal"]), seating=tuple(d["seating"]), seed=str(d["seed"]), winner=d["winner"],
            scores=tuple(d["scores"]), termination=str(d["termination"]), at_fault=d["at_fault"],
            hands=tuple(
                HandSummary(h["number"], h["outcome"], (h["players"][0], h["players"][1]), h["winner"], h["knocker"], h["points"])
                for h in d["hands"]
            ),
            actions=int(d["actions"]),
        )


def summarize(game: Game, deal: int, seating: Sequence[int], keep_record: bool = False) -> GameSummary:
    """Translate a finished game (played in-process or rebuilt from a referee's journal)."""
    bot = list(seating)
    n = game.num_seats
    roles = draw_roles(game.seed)[0] if game.rules.variant == "box" else None
    hands = []
    for r in game.results:
        if roles is not None:
            players = (roles[0], roles[1])
            roles = rotate(roles, None if r.winner is None else r.winner == roles[0])
        else:
            players = (r.dealer, 1 - r.dealer)
        hands.append(
            HandSummary(
                r.hand_number,
                r.outcome,
                (bot[players[0]], bot[players[1]]),
                None if r.winner is None else bot[r.winner],
                None if r.knocker is None else bot[r.knocker],
                r.points,
            )
        )
    scores = [0] * n
    for seat in range(n):
        scores[bot[seat]] = game.scores[seat]
    at_fault = next((bot[e[1]] for e in game.log if e[0] == "resign"), None)
    actions = sum(1 for e in game.log if e[0] == "action")
    return GameSummary(
        deal=deal,
        seating=tuple(seating),
        seed=game.seed,
        winner=None if game.winner is None else bot[game.winner],
        scores=tuple(scores),
        termination=game.termination or "unfinished",
        at_fault=at_fault,
        hands=tuple(hands),
        actions=actions,
        record=game.to_record() if keep_record else None,
    )


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a proportion k/n (good near 0 and 1, unlike k/n ± z·se).

    >>> lo, hi = wilson(198, 200); round(lo, 3), round(hi, 3)
    (0.964, 0.997)
    """
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    # At k = 0 or k = n the exact bound is 0 or 1; floating point would miss it by 1e-16.
    return (0.0 if k == 0 else max(0.0, c - h), 1.0 if k == n else min(1.0, c + h))


def mean_ci(xs: Sequence[float], z: float = Z95) -> tuple[float, float, float]:
    """Mean and its normal-approximation 95% interval."""
    n = len(xs)
    if n == 0:
        return (0.0, 0.0, 0.0)
    m = sum(xs) / n
    if n == 1:
        return (m, m, m)
    var = sum((x - m) ** 2 for x in xs) / (n - 1)
    h = z * math.sqrt(var / n)
    # Clamped to the data's range: points are never negative, so neither is a bound.
    return (m, max(min(xs), m - h), min(max(xs), m + h))


@dataclass
class Rate:
    """A count out of a total, with its 95% interval: clustered by deal (:meth:`by_deal`),
    or Wilson's for independent trials (:meth:`of`)."""

    count: int
    total: int
    rate: float
    ci: tuple[float, float]

    @staticmethod
    def of(count: int, total: int) -> Rate:
        return Rate(count, total, count / total if total else 0.0, wilson(count, total))

    @staticmethod
    def by_deal(per_deal: Sequence[tuple[int, int]]) -> Rate:
        """From (count, total) per deal: the rate over all, and its interval clustered by
        deal (:func:`okgin.stats.cluster_mean`, clipped to [0, 1])."""
        count = sum(c for c, _ in per_deal)
        total = sum(t for _, t in per_deal)
        cm = cluster_mean([(float(c), float(t)) for c, t in per_deal])
        return Rate(count, total, count / total if total else 0.0, cm.interval(0.0, 1.0) if total else (0.0, 1.0))


@dataclass
class BotStats:
    """One bot's figures over a match (rates per game or per hand it played)."""

    index: int
    name: str
    games: int
    wins: Rate  # games won
    points: int  # total points scored (final scores)
    points_per_game: float
    points_ci: tuple[float, float]
    hands_played: int  # hands it played (as box or captain in the box game)
    hands_won: Rate  # of hands played
    knock: Rate  # it knocked (gin included), of hands played
    gin: Rate  # it went gin (big gin included), of hands played
    undercut: Rate  # it undercut the knocker, of hands played
    drawn: Rate  # the hand was drawn, of hands played
    forfeits: int  # games lost by its own illegal action / timeout / disconnect

    @property
    def win_rate(self) -> float:
        return self.wins.rate

    @property
    def win_ci(self) -> tuple[float, float]:
        return self.wins.ci


def bot_stats(index: int, name: str, games: Sequence[GameSummary]) -> BotStats:
    """One bot's figures; every interval clustered by deal (the module docstring)."""
    # Per deal: games, wins, points, and per hand played: hands, won, knock, gin, undercut, drawn.
    per: dict[int, list[int]] = {}
    for g in games:
        d = per.setdefault(g.deal, [0] * 9)
        d[0] += 1
        d[1] += g.winner == index
        d[2] += g.scores[index]
        for h in g.hands:
            if index not in h.players:
                continue
            d[3] += 1
            d[4] += h.winner == index
            d[8] += h.outcome == "drawn"
            if h.knocker == index:
                d[5] += 1
                d[6] += h.outcome in ("gin", "big_gin")
            elif h.outcome == "undercut" and h.winner == index:
                d[7] += 1
    deals = [per[k] for k in sorted(per)]
    pts = [g.scores[index] for g in games]
    m = sum(pts) / len(pts) if pts else 0.0
    # Points: the virtual deal has the spread of the bot's own points per game (there is
    # no natural scale like a fair coin's for them); a bot whose points never varied (0 in
    # every game) takes the spread of every bot's points pooled, so that its interval is
    # not zero-width.
    game_var = _sample_var([float(x) for x in pts]) or _sample_var([float(x) for g in games for x in g.scores])
    lo, hi = cluster_mean([(float(d[2]), float(d[0])) for d in deals], game_var).interval(0.0, math.inf) if pts else (0.0, 0.0)

    def rate(k: int) -> Rate:
        return Rate.by_deal([(d[k], d[3]) for d in deals])

    return BotStats(
        index=index,
        name=name,
        games=len(games),
        wins=Rate.by_deal([(d[1], d[0]) for d in deals]),
        points=sum(pts),
        points_per_game=m,
        points_ci=(lo, hi),
        hands_played=sum(d[3] for d in deals),
        hands_won=rate(4),
        knock=rate(5),
        gin=rate(6),
        undercut=rate(7),
        drawn=rate(8),
        forfeits=sum(1 for g in games if g.at_fault == index),
    )


def _sample_var(xs: Sequence[float]) -> float:
    if len(xs) < 2:
        return 0.0
    m = sum(xs) / len(xs)
    return sum((x - m) ** 2 for x in xs) / (len(xs) - 1)


def deal_pairs(games: Sequence[GameSummary]) -> Paired:
    """Bot 0 against bot 1 on deal pairs (two bots): the pentanomial of
    :class:`okgin.stats.Paired`, cell ``k`` the deals in which bot 0 scored ``k/2``
    points over the deal's seatings. A deal with a seating missing is ``unpaired``."""
    per: dict[int, list[float]] = {}
    for g in games:
        per.setdefault(g.deal, []).append(0.5 if g.winner is None else 1.0 if g.winner == 0 else 0.0)
    counts = [0] * 5
    singles = [0, 0, 0]
    unpaired = 0
    for k in sorted(per):
        sc = per[k]
        if len(sc) != 2:
            unpaired += len(sc)
            continue
        counts[round(2 * sum(sc))] += 1
        for x in sc:
            singles[round(2 * x)] += 1
    return Paired(tuple(counts), (singles[0], singles[1], singles[2]), unpaired)


@dataclass
class MatchResult:
    """Every game of a match, and the figures computed from them."""

    bots: list[str]  # display names, made unique ("simple", "simple#2")
    rules: RuleSet
    seed: int | str
    deals: int
    games: list[GameSummary]
    elapsed: float
    via: str = "in-process"
    extra: dict[str, Any] = field(default_factory=dict)

    def stats(self) -> list[BotStats]:
        return [bot_stats(i, name, self.games) for i, name in enumerate(self.bots)]

    def paired(self) -> Paired | None:
        """Bot 0 against bot 1 on deal pairs, for a two-bot match (None otherwise)."""
        return deal_pairs(self.games) if len(self.bots) == 2 else None

    @property
    def deals_played(self) -> int:
        return len({g.deal for g in self.games})

    @property
    def hands(self) -> int:
        return sum(len(g.hands) for g in self.games)

    def to_json(self) -> dict[str, Any]:
        """Plain data for ``--json`` and tools (intervals as [low, high])."""
        return {
            "bots": self.bots,
            "variant": self.rules.variant,
            "rules": self.rules.to_dict(),
            "seed": self.seed,
            "deals": self.deals,
            "seatings": len(seatings(len(self.bots))),
            "games": len(self.games),
            "hands": self.hands,
            "via": self.via,
            "elapsed_s": round(self.elapsed, 3),
            "deals_played": self.deals_played,
            "stats": [_jsonable(asdict(s)) for s in self.stats()],
            "paired": None if (p := self.paired()) is None else _jsonable(p.to_dict()),
            "small_sample_warning": small_sample_warning(self.deals_played),
            "terminations": _count(g.termination for g in self.games),
            **self.extra,
        }

    def table(self) -> str:
        """The human report of ``okgin match``."""
        stats = self.stats()
        rate_s = self.hands / self.elapsed if self.elapsed > 0 else 0.0
        head = [
            f"okgin match: {' vs '.join(self.bots)} | {self.rules.variant} | {len(self.games)} games "
            f"({self.deals} deals x {len(seatings(len(self.bots)))} seatings) | seed {self.seed} | {self.via}",
            f"{self.hands} hands in {self.elapsed:.1f} s ({rate_s:.0f} hands/s); "
            "intervals are 95%, clustered by deal (a deal's seatings are one observation)",
            "",
        ]
        games = [["bot", "wins", "win%", "", "points/game", "", "hands won", "forfeits"]]
        for s in stats:
            games.append([
                s.name, f"{s.wins.count}/{s.games}", f"{100 * s.wins.rate:.1f}", _pct_ci(s.wins.ci),
                f"{s.points_per_game:.1f}", f"[{s.points_ci[0]:.1f}, {s.points_ci[1]:.1f}]",
                f"{s.hands_won.count}/{s.hands_played}", str(s.forfeits),
            ])
        rates = [["per hand played", "knock%", "", "gin%", "", "undercut%", "", "drawn%", ""]]
        for s in stats:
            row = [s.name]
            for r in (s.knock, s.gin, s.undercut, s.drawn):
                row += [f"{100 * r.rate:.1f}", _pct_ci(r.ci)]
            rates.append(row)
        lines = head + _grid(games) + [""] + _grid(rates)
        p = self.paired()
        if p is not None:
            lines += ["", format_pairs(self.bots, p)]
        if warn := small_sample_warning(self.deals_played):
            lines += [warn]
        terms = _count(g.termination for g in self.games)
        if set(terms) != {"normal"}:
            lines += ["", "terminations: " + ", ".join(f"{k} {v}" for k, v in sorted(terms.items()))]
        return "\n".join(lines)


def _elo(e: float) -> str:
    return ("+inf" if e > 0 else "-inf") if math.isinf(e) else f"{round(e):+d}"


def format_pairs(bots: Sequence[str], p: Paired) -> str:
    """The head-to-head line: ``a - b on deal pairs (a's points 0/½/1/1½/2): ...``."""
    cells = "/".join(f"{c:g}" for c in p.counts)
    unpaired = f", {p.unpaired} unpaired" if p.unpaired else ""
    head = f"{bots[0]} - {bots[1]} on deal pairs ({bots[0]}'s points 0/½/1/1½/2): "
    if not p.units:
        return head + f"no complete pair yet{unpaired}"
    lo, hi = p.elo_interval()
    return (head + f"{p.units:g} pair{'' if p.units == 1 else 's'} {cells}{unpaired}; Elo difference {_elo(p.elo())} "
            f"[{_elo(lo)}, {_elo(hi)}], LOS {100 * p.los():.1f}%")


def _grid(rows: list[list[str]]) -> list[str]:
    """Columns padded to their widest cell: names left, figures right, intervals left."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for r in rows:
        cells = []
        for i, c in enumerate(r):
            left = i == 0 or c.startswith("[") or (c == "" and i > 0)
            cells.append(c.ljust(widths[i]) if left else c.rjust(widths[i]))
        out.append("  ".join(cells).rstrip())
    return out


def _pct_ci(ci: tuple[float, float]) -> str:
    return f"[{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"


def _count(items: Iterable[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for x in items:
        out[x] = out.get(x, 0) + 1
    return out


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, float):
        return round(obj, 6)
    return obj


# ------------------------------------------------------------------------ running
def display_names(bots: Sequence[BotSpec]) -> list[str]:
    """Names for the report: the built-in name, the class of a ``file.py:Class`` spec, or
    the factory's name; numbered when repeated (``simple``, ``simple#2``)."""
    raw = [(b.rpartition(":")[2] or b) if isinstance(b, str) else getattr(b, "__name__", type(b).__name__) for b in bots]
    out = []
    for i, name in enumerate(raw):
        k = raw[:i].count(name)
        out.append(name if k == 0 else f"{name}#{k + 1}")
    return out


def make_bot(spec: BotSpec, seed: str) -> Bot:
    return get_bot(spec, seed) if isinstance(spec, str) else spec(seed)


def play_game(
    bots: Sequence[BotSpec], rules: RuleSet, seed: int | str, deal: int, seating: Sequence[int], keep_record: bool = False
) -> GameSummary:
    """Play one game of a match in-process and summarize it."""
    players = [make_bot(bots[i], bot_seed(seed, deal, i)) for i in seating]
    game = play_local(players, rules, game_seed(seed, deal), illegal="forfeit")
    return summarize(game, deal, seating, keep_record)


Chunk = list[tuple[int, tuple[int, ...]]]
"""Games to play together: (deal, seating) pairs, whole deals, in play order."""


@dataclass(frozen=True)
class MatchWork:
    """What every game of one match shares: the one chunk runner of every way to play.

    Why one object: the forked pool of ``--jobs`` and the Dask tasks of ``--dask`` run
    the same :meth:`play` on the same chunks, and the results are put back in chunk
    order, so no way of running can give other figures than another. It pickles (for
    Dask) when its bots are specs (strings) or importable factories.
    """

    bots: tuple[BotSpec, ...]
    rules: RuleSet
    seed: int | str
    keep_record: bool = False

    def play(self, chunk: Chunk) -> list[GameSummary]:
        return [play_game(self.bots, self.rules, self.seed, d, s, self.keep_record) for d, s in chunk]


def chunked(order: Chunk, num_bots: int, deals: int, lanes: int, per_lane: int = 8) -> list[Chunk]:
    """``order`` cut into chunks of whole deals, ``per_lane`` chunks per lane so that
    slow deals even out (a lane: a forked process, or a Dask worker thread)."""
    per = len(seatings(num_bots))
    step = per * max(1, math.ceil(deals / (max(1, lanes) * per_lane)))
    return [order[i : i + step] for i in range(0, len(order), step)]


class Lanes(Protocol):
    """A way to run chunks in parallel (``--jobs``: :class:`ForkLanes`; ``--dask``:
    :class:`clients.match_dask.DaskLanes`)."""

    via: str  # for the report ("in-process", "dask tcp://...")
    width: int  # chunks that can run at once (sizes the chunks)

    def map(self, work: MatchWork, chunks: list[Chunk]) -> Iterator[list[GameSummary]]:
        """Every chunk's summaries, yielded in the order of ``chunks``."""
        ...


# Work for forked workers: set just before the pool forks, so factories and classes
# loaded from files reach the workers without pickling.
_WORK: dict[str, MatchWork] = {}


def _play_chunk(chunk: Chunk) -> list[GameSummary]:
    return _WORK["work"].play(chunk)


class ForkLanes:
    """``jobs`` forked processes of this one (``okgin match --jobs``)."""

    via = "in-process"

    def __init__(self, jobs: int) -> None:
        self.width = max(1, jobs)

    def map(self, work: MatchWork, chunks: list[Chunk]) -> Iterator[list[GameSummary]]:
        _WORK["work"] = work
        try:
            ctx = multiprocessing.get_context("fork")
            with ctx.Pool(min(self.width, len(chunks))) as pool:
                yield from pool.imap(_play_chunk, chunks)
        finally:
            _WORK.clear()


def check_bots(bots: Sequence[BotSpec], rules: RuleSet, count: int | None = None) -> None:
    """Fail early, with a sentence, on a wrong number of bots or an unloadable one
    (``count``: how many bots play, when ``bots`` are only those to load)."""
    n = len(bots) if count is None else count
    if n != rules.num_players:
        raise ValueError(f"{rules.variant} is played by {rules.num_players} bots, got {n}")
    for b in bots:
        if isinstance(b, str):
            get_bot(b, "check")  # raises BotNotFound with the reason


def run_match(
    bots: Sequence[BotSpec],
    games: int = 100,
    seed: int | str = 0,
    rules: RuleSet | None = None,
    jobs: int = 1,
    keep_records: bool = False,
    progress: Callable[[int, int], None] | None = None,
    lanes: Lanes | None = None,
) -> MatchResult:
    """Play ``games`` games (rounded up to whole deals) in-process; see the module doc.

    ``progress(done, total)`` is called as games finish. ``keep_records`` keeps each
    game's full engine record in its summary (for equivalence checks and replays).
    ``lanes`` runs the chunks elsewhere (a Dask cluster); else ``jobs`` forked
    processes, or this one. The results never depend on which.
    """
    rules = rules or RuleSet(variant="box" if len(bots) == 3 else "oklahoma")
    check_bots(bots, rules)
    deals, order = plan(len(bots), games)
    t0 = time.perf_counter()
    results: list[GameSummary] = []
    work = MatchWork(tuple(bots), rules, seed, keep_records)
    jobs = max(1, min(jobs, len(order)))
    if lanes is None and jobs > 1:
        lanes = ForkLanes(jobs)
    if lanes is None:
        for d, s in order:
            results.append(play_game(bots, rules, seed, d, s, keep_records))
            if progress:
                progress(len(results), len(order))
    else:
        for part in lanes.map(work, chunked(order, len(bots), deals, lanes.width)):
            results.extend(part)
            if progress:
                progress(len(results), len(order))
    via = "in-process" if lanes is None else lanes.via
    return MatchResult(display_names(bots), rules, seed, deals, results, time.perf_counter() - t0, via=via)


def dumps(result: MatchResult) -> str:
    return json.dumps(result.to_json(), sort_keys=True)
