"""The final table, its CSV and JSON exports, from the results file alone.

Everything here is computed from the SQLite file (and the config copy kept in it), so
``okgin tournament report DB`` prints the same table at any time, during a run or years
later, without the config file. Ratings come from :mod:`.ratings` (method in its
docstring); the SPRT verdict from :mod:`.sprt`.

Columns: games, wins, losses, draws (a game nobody won), score (the share of opponents
finished ahead of, as a percentage: wins + draws/2 in a two-player game), points for and
against (final game scores; in a 3-player game "against" is the mean of the two
opponents' scores), Elo with its 95% interval, and LOS, the likelihood that the player
is stronger than the one ranked below it. Gin in the Box shows each participant's mean
finish above the deal's par instead of Elo (:class:`.ratings.BoxDuplicate`), with its
95% interval and LOS.

Every interval is clustered by *deal* across the whole event (every pairing that played
a deal shares its cards), the header prints the number of deals, and below 30 deals the
intervals use Student's t and the report says they are rough (:mod:`okgin.stats`).

Two-player events also get the head-to-head of every pairing on *deal pairs* (the games
of one deal in both seatings, :mod:`.pairs`): the pair cells, the Elo difference with its
95% interval and the LOS; games whose deal is not complete are counted as unpaired.
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

from okgin.stats import small_sample_warning

from .config import independent_names
from .pairs import paired
from .ratings import BoxDuplicate, RatingError, RatingTable, deal_key, finish_ranks, finish_scores, game_pairs, rate
from .sprt import Sprt, status_of
from .store import GameResult, ResultsStore

FORFEITS = ("timeout", "illegal", "disconnect", "crash", "resigned", "no_show", "withheld")


@dataclass
class Standing:
    rank: int
    name: str
    games: int = 0
    wins: int = 0
    losses: int = 0
    draws: int = 0
    score: float = 0.0  # share of opponents finished ahead of (0..1)
    points_for: int = 0
    points_against: float = 0.0
    elo: float | None = None
    err95: float | None = None
    los_next: float | None = None  # likelihood of superiority over the next row
    forfeits: int = 0  # games this participant lost by timeout, illegal move, crash, disconnect
    par: float | None = None  # Gin in the Box: mean finish above the deal's par, per game (-1..1)
    par_low95: float | None = None  # its 95% interval, clustered by deal
    par_high95: float | None = None


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
    unsandboxed: bool = False  # tournament.sandbox = false: local bots ran unconfined (.sandbox)
    replayed: list[dict[str, Any]] = field(default_factory=list)  # games played more than once, with their attempts
    chain_head: str | None = None  # the results chain's head (.chain), once the event is complete
    deals: int = 0  # distinct deals among the games: the clusters of every interval
    limits_by: str = ""  # what enforced the sandbox limits: "cgroup v2", "cgroup v1", "rlimits (per process)" (.cgroups)
    # How the deals of pairings with remote participants were dealt (deals_notes()).
    deals_notes: list[str] = field(default_factory=list)
    # The participants' nonces (.entropy): who contributed, withheld or sent none, the
    # commitments and their hash; None for an event without them.
    nonces: dict[str, Any] | None = None

    @property
    def warning(self) -> str:
        """``only N deals: intervals are rough ...`` below 30 deals, else ''."""
        return small_sample_warning(self.deals) if self.games_played else ""

    # ------------------------------------------------------------------- text
    def to_text(self) -> str:
        total = f"/{self.games_total}" if self.games_total else ""
        state = "finished" if self.finished else "in progress"
        lines = [f"Tournament {self.name}: {self.format.replace('_', ' ')}, {self.games_played}{total} games, {state} "
                 f"({self.deals} deal{'' if self.deals == 1 else 's'})"
                 + (", UNSANDBOXED (local bots ran unconfined: tournament.sandbox = false)" if self.unsandboxed else "")]
        if self.limits_by:
            lines.append(f"Sandbox limits (memory, processes, CPU) enforced by {self.limits_by}"
                         + (" for each sandbox as a whole" if self.limits_by.startswith("cgroup") else ""))
        box = any(s.par is not None for s in self.standings)
        rating_head = ["par", "95% interval", "LOS"] if box else ["Elo", "±95%", "LOS"]
        head = ["#", "name", "games", "W", "L", "D", "score", "pts for", "pts agst", *rating_head, "forfeits"]
        rows = [head]
        for s in self.standings:
            if box:
                rating_cells = ["-" if s.par is None else f"{100 * s.par:+.1f}%",
                                "-" if s.par_low95 is None or s.par_high95 is None
                                else f"[{100 * s.par_low95:+.1f}, {100 * s.par_high95:+.1f}]",
                                "-" if s.los_next is None else f"{100 * s.los_next:.1f}%"]
            else:
                rating_cells = [_fmt_elo(s.elo), "-" if s.err95 is None else ("inf" if math.isinf(s.err95) else f"{s.err95:.0f}"),
                                "-" if s.los_next is None else f"{100 * s.los_next:.1f}%"]
            rows.append([
                str(s.rank), s.name, str(s.games), str(s.wins), str(s.losses), str(s.draws),
                f"{100 * s.score:.1f}%" if s.games else "-",
                str(s.points_for), f"{s.points_against:.0f}",
                *rating_cells,
                str(s.forfeits),
            ])
        widths = [max(len(r[c]) for r in rows) for c in range(len(head))]
        left = {1}
        for r in rows:
            lines.append(
                "  ".join(r[c].ljust(widths[c]) if c in left else r[c].rjust(widths[c]) for c in range(len(head))).rstrip()
            )
        if self.terminations:
            lines.append("terminations: " + ", ".join(f"{k} {v}" for k, v in sorted(self.terminations.items())))
        if self.rating_note:
            lines.append(self.rating_note)
        if self.warning:
            lines.append(self.warning)
        lines.extend(self.deals_notes)
        h2h = [p for p in self.pairs if "elo_diff" in p]
        if h2h and not self.sprt:
            if len(h2h) <= MAX_TEXT_PAIRINGS:
                lines.append(
                    "head-to-head on deal pairs (a's points per pair 0/½/1/1½/2; Elo difference a - b, 95% interval, LOS):"
                )
                lines.extend("  " + _fmt_h2h(p) for p in h2h)
            else:
                lines.append(f"head-to-head on deal pairs: {len(h2h)} pairings, in the JSON export")
        if self.sprt:
            sp = self.sprt
            who = f"{sp['candidate']} - {sp['baseline']}"
            unit = "normalized Elo" if sp.get("model") == "normalized" else "Elo"
            verdict = {"H1": f"H1 accepted: {unit} difference {who} >= {sp['elo1']:g}",
                       "H0": f"H0 accepted: {unit} difference {who} <= {sp['elo0']:g}",
                       None: "no decision yet"}[sp["decision"]]
            lines.append(
                f"SPRT elo0={sp['elo0']:g} elo1={sp['elo1']:g}"
                + (" (normalized Elo)" if sp.get("model") == "normalized" else "")
                + f" alpha={sp['alpha']:g} beta={sp['beta']:g} on deal pairs: "
                f"{_fmt_h2h(sp)}; LLR {sp['llr']:.3f} [{sp['lower']:.3f}, {sp['upper']:.3f}]: {verdict}"
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
            for k in ("score", "elo", "err95", "los_next", "points_against", "par", "par_low95", "par_high95"):
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
            "sandbox_limits": self.limits_by or None,  # "cgroup v2", "cgroup v1", "rlimits (per process)"
            "deals": self.deals,
            "small_sample_warning": self.warning,
            "standings": [asdict(s) for s in self.standings],
            "pairs": self.pairs,
            "terminations": self.terminations,
            "sprt": self.sprt,
            "rating_note": self.rating_note,
            "replayed": self.replayed,
            "chain_head": self.chain_head,
            "deals_notes": self.deals_notes,
            "nonces": self.nonces,
        }
        return json.dumps(clean(data), indent=2, sort_keys=False) + "\n"


def _fmt_elo(e: float | None) -> str:
    if e is None:
        return "-"
    if math.isinf(e):
        return "+inf" if e > 0 else "-inf"
    return f"{round(e):+d}"


MAX_TEXT_PAIRINGS = 28  # head-to-head lines in the text table (8 players); more go to JSON only


def _fmt_h2h(p: dict[str, Any]) -> str:
    """One pairing (or the SPRT) on deal pairs: cells, Elo difference, interval, LOS."""
    who = f"{p['a']} - {p['b']}: " if "a" in p else ""
    unit = "pair"
    if p.get("deals") == "independent":  # a deal per game: the unit is a game (a's losses/draws/wins), not a pair
        who += "(independent deals: a's L/D/W per game) "
        unit = "game"
    cells = "/".join(f"{c:g}" for c in p["cells"])
    unpaired = f", {p['unpaired']} unpaired" if p["unpaired"] else ""
    if not p["units"]:
        return f"{who}no complete {unit} yet{unpaired}"
    return (
        f"{who}{p['units']:g} {unit}{'' if p['units'] == 1 else 's'} {cells}{unpaired}; Elo difference {_fmt_elo(p['elo_diff'])} "
        f"[{_fmt_elo(p['elo_diff_low95'])}, {_fmt_elo(p['elo_diff_high95'])}], LOS {100 * p['los']:.1f}%"
    )


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
    per_unit: int = 2,
    independent: frozenset[str] = frozenset(),
) -> Report:
    """The table for ``games`` among ``participants`` (in file order).

    ``per_unit``: the games of one deal in one pairing (2 with duplicate deals, 1
    without), the unit of the pair statistics and of the rating error bars.
    ``independent``: participants whose pairings had a deal per game (remote ones,
    :attr:`.config.TournamentConfig.independent_names`): their unit is one game."""
    st = {n: Standing(0, n) for n in participants}
    terms: Counter[str] = Counter()
    pair_results = []
    box = fmt == "box" or any(len(g.seats) > 2 for g in games)
    pos = {n: i for i, n in enumerate(participants)}
    # Head-to-head: the games of each pairing (2 players), or finishing-order scores (box).
    by_pairing: dict[tuple[str, str], list[GameResult]] = {}
    h2h: dict[tuple[str, str], list[float]] = {}
    own: dict[str, list[float]] = {n: [0.0, 0.0] for n in participants}
    for g in games:
        terms[g.termination] += 1
        nseats = len(g.seats)
        shares = finish_scores(g.seats, g.scores, g.winner, g.culprit)
        for s, who in enumerate(g.seats):
            row = st[who]
            row.games += 1
            row.points_for += int(g.scores[s])
            row.points_against += sum(g.scores[o] for o in range(nseats) if o != s) / max(nseats - 1, 1)
            own[who][0] += shares[s]
            own[who][1] += 1
            if g.winner is None:
                row.draws += 1
            elif g.winner == who:
                row.wins += 1
            else:
                row.losses += 1
            if g.culprit == who and g.termination in FORFEITS:
                row.forfeits += 1
        if nseats == 2:
            a, b = sorted(g.seats, key=pos.__getitem__)
            by_pairing.setdefault((a, b), []).append(g)
            pair_results.extend(game_pairs(g.seats, g.scores, g.winner, g.culprit, unit=deal_key(g.deal, g.seed)))
        else:
            # Descriptive only (who finished ahead of whom); the ratings are BoxDuplicate's.
            place = dict(zip(g.seats, finish_ranks(g.seats, g.scores, g.winner, g.culprit), strict=True))
            for x, y in itertools.combinations(sorted(g.seats, key=pos.__getitem__), 2):
                acc = h2h.setdefault((x, y), [0.0, 0.0])
                acc[0] += 1.0 if place[x] < place[y] else 0.5 if place[x] == place[y] else 0.0
                acc[1] += 1.0
    for n, (sc, gm) in own.items():
        st[n].score = sc / gm if gm else 0.0

    table: RatingTable | None = None
    note = ""
    boxd: BoxDuplicate | None = None
    if box:
        boxd = BoxDuplicate(participants)
        for g in sorted(games, key=lambda g: g.index):
            boxd.add(g.deal, g.seed, g.seats, g.scores, g.winner, g.culprit)
        for n, e in boxd.table().items():
            st[n].par, st[n].par_low95, st[n].par_high95 = e.par, e.low95, e.high95
        note = ("par: mean finish per game (1 first, 1/2 second, 0 last) minus what the other seatings of the same "
                "deal made of the same seat's cards; 95% interval and LOS clustered by deal")
    else:
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
        else:
            note = (
                "Elo: Bradley-Terry maximum likelihood, mean 0"
                + ("" if anchor is None else f" ({anchor} held at {anchor_rating:g})")
                + (f", {prior_draws:g} virtual draw(s) per pair as prior" if prior_draws else "")
                + "; ±95% and LOS clustered by deal (every game of a deal, whatever the pairing, is one observation)"
            )

    # Elo (or the par) rounded for the order: equal records must not be split by floating-point noise.
    def strength(n: str) -> float:
        v = st[n].par if box else st[n].elo
        return round(v, 6) if v is not None else -math.inf

    order = sorted(participants, key=lambda n: (-strength(n), -st[n].score, -st[n].points_for, participants.index(n)))
    standings = []
    for rank, n in enumerate(order, 1):
        row = st[n]
        row.rank = rank
        standings.append(row)
    if table is not None:
        for upper, lower in itertools.pairwise(standings):
            if upper.games and lower.games:
                upper.los_next = table.los(upper.name, lower.name)
    if boxd is not None:
        res = boxd.residuals()
        for upper, lower in itertools.pairwise(standings):
            if upper.games and lower.games:
                upper.los_next = boxd.los(upper.name, lower.name, res)
    pairs: list[dict[str, Any]] = []
    for (a, b), gs in sorted(by_pairing.items(), key=lambda kv: (pos[kv[0][0]], pos[kv[0][1]])):
        own_deals = bool(independent & {a, b})
        pr = paired(gs, a, b, 1 if own_deals else per_unit)
        score_a = sum(1.0 if g.winner == a else 0.5 if g.winner is None else 0.0 for g in gs)
        pairs.append({"a": a, "b": b, "score_a": round(score_a, 6), "games": len(gs), **pr.to_dict(),
                      **({"deals": "independent"} if own_deals else {})})
    for (a, b), v in sorted(h2h.items(), key=lambda kv: (pos[kv[0][0]], pos[kv[0][1]])):
        pairs.append({"a": a, "b": b, "score_a": round(v[0], 6), "games": round(v[1], 6)})
    deals = len({deal_key(g.deal, g.seed) for g in games})
    return Report(name, fmt, len(games), games_total, standings, dict(terms), pairs, sprt, note, finished, deals=deals)


def sprt_status(cfg: dict[str, Any], games: Sequence[GameResult], per_unit: int = 2) -> dict[str, Any]:
    """The SPRT on the deal pairs so far (:mod:`.sprt`): cells, Elo difference, LLR, decision.

    ``wins``/``losses``/``draws`` count every game of the candidate, paired or not."""
    t = Sprt(cfg["elo0"], cfg["elo1"], cfg["alpha"], cfg["beta"], cfg.get("model", "logistic"))
    cand, base = cfg["candidate"], cfg["baseline"]
    st = status_of(t, games, cand, base, per_unit)
    w = lo = d = 0
    for g in games:
        if cand not in g.seats:
            continue
        if g.winner is None:
            d += 1
        elif g.winner == cand:
            w += 1
        else:
            lo += 1
    return {
        **{k: cfg[k] for k in ("candidate", "baseline", "elo0", "elo1", "alpha", "beta")},
        "model": t.model,
        "wins": w, "losses": lo, "draws": d,
        **st.paired.to_dict(),
        "llr": st.llr, "lower": st.lower, "upper": st.upper, "decision": st.decision,
    }


def report_from_store(store: ResultsStore, prior_draws: float | None = None, anchor: str | None = None,
                      anchor_rating: float | None = None) -> Report:
    """Rebuild the report from a results file (ratings settings as stored unless overridden)."""
    cfg = store.config_data()
    rat = json.loads(store.get_meta("ratings") or "{}")
    names = [p["name"] for p in store.participants()]
    games = store.games()
    total = store.get_meta("games_total")
    # A unit is the games of one deal in one pairing: both seatings with duplicate deals.
    per_unit = 2 if cfg.get("duplicate", True) else 1
    remote = [p["name"] for p in cfg.get("participants", []) if p.get("kind") == "remote"]
    independent = independent_names(cfg.get("duplicate", True), cfg.get("remote_duplicate", False), remote)
    sp = None
    if cfg.get("sprt"):
        own_deals = bool(independent & {cfg["sprt"]["candidate"], cfg["sprt"]["baseline"]})
        sp = sprt_status(cfg["sprt"], games, 1 if own_deals else per_unit)
    rep = build_report(
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
        per_unit=per_unit,
        independent=independent,
    )
    rep.unsandboxed = store.get_meta("unsandboxed") == "1"
    rep.limits_by = store.get_meta("limits_by") or ""
    rep.replayed = [{"game": g.index, "key": g.key, "attempts": g.attempts} for g in games if g.attempts > 1]
    rep.chain_head = store.get_meta("chain_head")
    ent = store.entropy()
    if ent is not None:
        rep.nonces = {"contributed": sorted(ent.get("nonces") or {}), "withheld": list(ent.get("withheld") or []),
                      "absent": list(ent.get("absent") or []), "commitments": dict(ent.get("commitments") or {}),
                      "commitments_hash": ent.get("commitments_hash")}
    rep.deals_notes = deals_notes(cfg.get("duplicate", True), cfg.get("remote_duplicate", False), remote)
    return rep


def deals_notes(duplicate: bool, remote_duplicate: bool, remote: Sequence[str]) -> list[str]:
    """What the report says about the deals of remote participants' pairings: a deal
    per game by default, or the organiser's trust when it chose duplicate deals for them
    (docs/tournaments.md, What each participant can learn)."""
    if not remote or not duplicate:
        return []
    names = ", ".join(remote)
    if remote_duplicate:
        return [f"duplicate deals for remote participants ({names}): tournament.remote_duplicate = true, so this "
                "event TRUSTS them not to remember a deal from one seating to the other (nothing stops a remote bot "
                "from doing so)"]
    return [f"independent deals: every game of a pairing with a remote participant ({names}) had a deal of its own "
            "(a remote bot could remember a deal across its seatings); their statistics count single games, not deal pairs"]
