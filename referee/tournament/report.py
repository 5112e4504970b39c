"""The final table, its CSV and JSON exports, from the results file alone.

Everything here is computed from the SQLite file (and the config copy kept in it), so
``okgin tournament report DB`` prints the same table at any time, during a run or years
later, without the config file. Ratings come from :mod:`.ratings` (method in its
docstring); the SPRT verdict from :mod:`.sprt`.

Columns: games, wins, losses, draws (a game nobody won), score (the pairwise score used
for ratings, as a percentage), points for and against (final game scores; in a 3-player
game "against" is the mean of the two opponents' scores), Elo with its 95% interval,
and LOS, the likelihood that the player is stronger than the one ranked below it.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from .ratings import RatingError, RatingTable, game_pairs, rate
from .sprt import Sprt
from .store import GameResult, ResultsStore

FORFEITS = ("timeout", "illegal", "disconnect", "crash", "resigned")


@dataclass
class Standing:
    rank: int
    name: str
    games: int = 0
    wins: int = 0
    losses: int = 0
    draws: int = 0
    score: float = 0.0  # pairwise score fraction (0..1)
    points_for: int = 0
    points_against: float = 0.0
    elo: float | None = None
    err95: float | None = None
    los_next: float | None = None  # likelihood of superiority over the next row
    forfeits: int = 0  # games this participant lost by timeout, illegal move, crash, disconnect


@dataclass
class Report:
    name: str
    format: str
    games_played: int
    games_total: int | None
    standings: list[Standing]
    terminations: dict[str, int]
    pairs: list[dict[str, Any]] = field(default_factory=list)
    sprt: dict[str, Any] | None = None
    rating_note: str = ""
    finished: bool = False

    # ------------------------------------------------------------------- text
    def to_text(self) -> str:
        total = f"/{self.games_total}" if self.games_total else ""
        state = "finished" if self.finished else "in progress"
        lines = [f"Tournament {self.name}: {self.format.replace('_', ' ')}, {self.games_played}{total} games, {state}"]
        head = ["#", "name", "games", "W", "L", "D", "score", "pts for", "pts agst", "Elo", "±95%", "LOS", "forfeits"]
        rows = [head]
        for s in self.standings:
            rows.append([
                str(s.rank), s.name, str(s.games), str(s.wins), str(s.losses), str(s.draws),
                f"{100 * s.score:.1f}%" if s.games else "-",
                str(s.points_for), f"{s.points_against:.0f}",
                _fmt_elo(s.elo), "-" if s.err95 is None else ("inf" if math.isinf(s.err95) else f"{s.err95:.0f}"),
                "-" if s.los_next is None else f"{100 * s.los_next:.1f}%",
                str(s.forfeits),
            ])
        widths = [max(len(r[c]) for r in rows) for c in range(len(head))]
        left = {1}
        for r in rows:
            lines.append("  ".join(r[c].ljust(widths[c]) if c in left else r[c].rjust(widths[c]) for c in range(len(head))).rstrip())
        if self.terminations:
            lines.append("terminations: " + ", ".join(f"{k} {v}" for k, v in sorted(self.terminations.items())))
        if self.rating_note:
            lines.append(self.rating_note)
        if self.sprt:
            sp = self.sprt
            verdict = {"H1": f"H1 accepted: {sp['candidate']} is at least {sp['elo1']:g} Elo stronger",
                       "H0": f"H0 accepted: {sp['candidate']} is not {sp['elo1']:g} Elo stronger (at most {sp['elo0']:g})",
                       None: "no decision yet"}[sp["decision"]]
            lines.append(
                f"SPRT elo0={sp['elo0']:g} elo1={sp['elo1']:g} alpha={sp['alpha']:g} beta={sp['beta']:g}: "
                f"{sp['wins']}-{sp['losses']}-{sp['draws']} (W-L-D of {sp['candidate']}), LLR {sp['llr']:.3f} "
                f"[{sp['lower']:.3f}, {sp['upper']:.3f}]: {verdict}"
            )
        return "\n".join(lines)

    # -------------------------------------------------------------- exports
    def to_csv(self) -> str:
        buf = io.StringIO()
        fields = list(asdict(self.standings[0]).keys()) if self.standings else [f for f in Standing.__dataclass_fields__]
        w = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        for s in self.standings:
            row = asdict(s)
            for k in ("score", "elo", "err95", "los_next", "points_against"):
                if isinstance(row[k], float):
                    row[k] = "inf" if math.isinf(row[k]) else f"{row[k]:.4f}"
            w.writerow(row)
        return buf.getvalue()

    def to_json(self) -> str:
        def clean(v: Any) -> Any:
            if isinstance(v, float) and not math.isfinite(v):
                return None
            if isinstance(v, dict):
                return {k: clean(x) for k, x in v.items()}
            if isinstance(v, list):
                return [clean(x) for x in v]
            return v

        data = {
            "tournament": self.name,
            "format": self.format,
            "finished": self.finished,
            "games_played": self.games_played,
            "games_total": self.games_total,
            "standings": [asdict(s) for s in self.standings],
            "pairs": self.pairs,
            "terminations": self.terminations,
            "sprt": self.sprt,
            "rating_note": self.rating_note,
        }
        return json.dumps(clean(data), indent=2, sort_keys=False) + "\n"


def _fmt_elo(e: float | None) -> str:
    if e is None:
        return "-"
    return f"{round(e):+d}"


def build_report(
    name: str,
    fmt: str,
    participants: Sequence[str],
    games: Sequence[GameResult],
    games_total: int | None = None,
    prior_draws: float = 1.0,
    anchor: str | None = None,
    anchor_rating: float = 0.0,
    sprt: dict[str, Any] | None = None,
    finished: bool = False,
) -> Report:
    """The table for ``games`` among ``participants`` (in file order)."""
    st = {n: Standing(0, n) for n in participants}
    terms: Counter[str] = Counter()
    pair_results = []
    h2h: dict[tuple[str, str], list[float]] = {}
    for g in games:
        terms[g.termination] += 1
        n = len(g.seats)
        for s, who in enumerate(g.seats):
            row = st[who]
            row.games += 1
            row.points_for += int(g.scores[s])
            row.points_against += sum(g.scores[o] for o in range(n) if o != s) / max(n - 1, 1)
            if g.winner is None:
                row.draws += 1
            elif g.winner == who:
                row.wins += 1
            else:
                row.losses += 1
            if g.culprit == who and g.termination in FORFEITS:
                row.forfeits += 1
        for pr in game_pairs(g.seats, g.scores, g.winner, g.culprit):
            pair_results.append(pr)
            key = (pr.a, pr.b) if participants.index(pr.a) < participants.index(pr.b) else (pr.b, pr.a)
            sc = pr.score if key[0] == pr.a else pr.games - pr.score
            acc = h2h.setdefault(key, [0.0, 0.0])
            acc[0] += sc
            acc[1] += pr.games
    own: dict[str, list[float]] = {n: [0.0, 0.0] for n in participants}
    for pr in pair_results:
        own[pr.a][0] += pr.score
        own[pr.a][1] += pr.games
        own[pr.b][0] += pr.games - pr.score
        own[pr.b][1] += pr.games
    for n, (sc, gm) in own.items():
        st[n].score = sc / gm if gm else 0.0

    table: RatingTable | None = None
    note = ""
    try:
        table = rate(participants, pair_results, prior_draws=prior_draws, anchor=anchor, anchor_rating=anchor_rating)
    except RatingError as e:
        note = f"no ratings: {e}"
    if table is not None:
        for n in participants:
            if st[n].games:
                st[n].elo = table.rating[n]
                st[n].err95 = table.error95(n)
        if not table.comparable:
            note = "ratings are relative within groups of players that met: " + " | ".join(", ".join(g) for g in table.groups)
        elif prior_draws:
            note = f"Elo: Bradley-Terry maximum likelihood, mean 0{'' if anchor is None else f' ({anchor} held at {anchor_rating:g})'}, " \
                   f"{prior_draws:g} virtual draw(s) per pair as prior; ±95% = 1.96 standard errors"

    # Elo rounded for the order: equal records must not be split by floating-point noise.
    order = sorted(participants, key=lambda n: (
        -(round(st[n].elo, 6) if st[n].elo is not None else -math.inf), -st[n].score, -st[n].points_for,
        participants.index(n)))
    standings = []
    for rank, n in enumerate(order, 1):
        s = st[n]
        s.rank = rank
        standings.append(s)
    if table is not None:
        for a, b in itertools.pairwise(standings):
            if a.games and b.games:
                a.los_next = table.los(a.name, b.name)
    pairs = [
        {"a": a, "b": b, "score_a": round(v[0], 6), "games": round(v[1], 6)}
        for (a, b), v in sorted(h2h.items(), key=lambda kv: (participants.index(kv[0][0]), participants.index(kv[0][1])))
    ]
    return Report(name, fmt, len(games), games_total, standings, dict(terms), pairs, sprt, note, finished)


def sprt_status(cfg: dict[str, Any], games: Sequence[GameResult]) -> dict[str, Any]:
    """The SPRT's counts, log-likelihood ratio and decision for the games so far."""
    t = Sprt(cfg["elo0"], cfg["elo1"], cfg["alpha"], cfg["beta"])
    cand = cfg["candidate"]
    w = lo = d = 0
    for g in games:
        if g.winner is None:
            d += 1
        elif g.winner == cand:
            w += 1
        else:
            lo += 1
    return {
        **{k: cfg[k] for k in ("candidate", "baseline", "elo0", "elo1", "alpha", "beta")},
        "wins": w, "losses": lo, "draws": d,
        "llr": t.llr(w, lo, d), "lower": t.lower, "upper": t.upper, "decision": t.decide(w, lo, d),
    }


def report_from_store(store: ResultsStore, prior_draws: float | None = None, anchor: str | None = None,
                      anchor_rating: float | None = None) -> Report:
    """Rebuild the report from a results file (ratings settings as stored unless overridden)."""
    cfg = store.config_data()
    rat = json.loads(store.get_meta("ratings") or "{}")
    names = [p["name"] for p in store.participants()]
    games = store.games()
    total = store.get_meta("games_total")
    sp = sprt_status(cfg["sprt"], games) if cfg.get("sprt") else None
    return build_report(
        store.get_meta("name") or "tournament",
        cfg.get("format", "?"),
        names,
        games,
        games_total=int(total) if total else None,
        prior_draws=rat.get("prior_draws", 1.0) if prior_draws is None else prior_draws,
        anchor=rat.get("anchor") if anchor is None else anchor,
        anchor_rating=rat.get("anchor_rating", 0.0) if anchor_rating is None else anchor_rating,
        sprt=sp,
        finished=store.get_meta("finished") is not None,
    )
