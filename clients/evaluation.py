"""okgin's evaluation protocol for agents: fixed deals, duplicate seatings, one table.

Why a protocol and not "play a match": figures from two papers compare only if the deals,
the seatings, the length of a game and the statistics are the same. ``okgin-eval-1``
fixes all four, per variant:

- **Deals**: ``okgin match``'s deals with the published seed ``okgin-eval-1/VARIANT``
  (okgin.schedule: deal d's game seed is HMAC-SHA256(SHA-256(seed), d)), the first
  ``deals`` of them; anyone can replay every game.
- **Seatings**: every seating of each deal (2 in Oklahoma Gin, 6 in Gin in the Box, where
  the agent plays against two copies of the opponent), so no agent gets the better cards.
- **Length**: games to the variant's ``target_score`` (100), with the event game limit
  ``max_hands`` = 100 (docs/rules.md §3.7.1) so that every game ends.
- **Statistics**: the agent's win rate and its net points per hand (+ won, - lost, 0 as
  the Box sitter or in a drawn hand), each with a 95% interval clustered by deal
  (okgin.stats: every seating of a deal shares its cards), Student's t below 30 deals.

The agent is a built-in bot, a Python class (``module:Class``, ``file.py:Class``), played
in-process, or a program in any language (:class:`clients.match_referee.CommandBot`),
played through a referee subprocess exactly as ``okgin match --via-referee`` plays: same
deals, same seatings, same statistics.

A **language-model agent** plays through the MCP seat (``okgin mcp``): a CommandBot with
``mcp=True`` is an MCP host given the seat's command, and the seat counts what it did.
Its rows add the **refused move rate** (moves the seat refused, as illegal, unreadable,
negated or ambiguous, over every move it was sent) and the **text per decision**: the
characters of every tool answer and of the instructions the agent was shown, over the
moves it played, and that divided by 4 as tokens (:data:`CHARS_PER_TOKEN`, the usual
rule of thumb for English; no tokenizer is assumed, since each model has its own).

A run with fewer deals (``deals=``) is marked non-standard. Reference results for the
built-in agents (``random``, ``simple``, ``strong``) are kept in
``clients/eval_reference.json``, written by ``okgin eval --reference``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from okgin import RuleSet
from okgin.rules import EVENT_MAX_HANDS
from okgin.stats import cluster_mean

from .match import GameSummary, bot_stats, run_match, seatings
from .match_referee import CommandBot, run_match_via_referee

__all__ = [
    "EVAL_PROTOCOL", "REFERENCE_AGENTS", "REFERENCE_FILE", "SPECS", "EvalResult", "EvalSpec", "evaluate",
    "format_table", "load_reference", "merge_reference", "net_points_per_hand", "write_reference",
]

EVAL_PROTOCOL = "okgin-eval-1"
CHARS_PER_TOKEN = 4  # tokens of text are estimated as characters / 4 (see the module doc)
REFERENCE_AGENTS = ("random", "simple", "strong")
REFERENCE_FILE = Path(__file__).with_name("eval_reference.json")


@dataclass(frozen=True)
class EvalSpec:
    """One variant's part of the protocol."""

    variant: str
    deals: int

    @property
    def seed(self) -> str:
        return f"{EVAL_PROTOCOL}/{self.variant}"

    @property
    def rules(self) -> RuleSet:
        return RuleSet(variant=self.variant, max_hands=EVENT_MAX_HANDS)

    @property
    def seats(self) -> int:
        return self.rules.num_players

    def games(self, deals: int) -> int:
        return deals * len(seatings(self.seats))


# Oklahoma Gin: 60 deals x 2 seatings = 120 games; Gin in the Box: 20 deals x 6 = 120 games.
SPECS: dict[str, EvalSpec] = {"oklahoma": EvalSpec("oklahoma", 60), "box": EvalSpec("box", 20)}


@dataclass(frozen=True)
class EvalResult:
    """The agent's figures against one opponent in one variant."""

    protocol: str
    variant: str
    agent: str
    opponent: str
    deals: int
    standard: bool  # the protocol's own number of deals
    games: int
    hands: int  # hands the agent played (as the Box sitter it plays none)
    win_rate: float
    win_ci: tuple[float, float]
    points_per_hand: float
    points_ci: tuple[float, float]
    forfeits: int  # games the agent lost by its own illegal move
    # A language-model agent through the MCP seat only (None otherwise):
    refused_rate: float | None = None  # moves refused / moves sent
    chars_per_decision: float | None = None  # characters of text shown / moves played

    @property
    def tokens_per_decision(self) -> float | None:
        return None if self.chars_per_decision is None else self.chars_per_decision / CHARS_PER_TOKEN

    def to_json(self) -> dict[str, Any]:
        """Plain JSON: an interval too wide to state (one deal) is null, never Infinity."""
        d = asdict(self)
        for k in ("win_ci", "points_ci"):
            d[k] = [x if math.isfinite(x) else None for x in getattr(self, k)]
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> EvalResult:
        def ci(v: list[float | None]) -> tuple[float, float]:
            return (-math.inf if v[0] is None else v[0], math.inf if v[1] is None else v[1])

        return cls(**{**d, "win_ci": ci(d["win_ci"]), "points_ci": ci(d["points_ci"])})


def net_points_per_hand(games: Sequence[GameSummary], index: int) -> tuple[float, tuple[float, float], int]:
    """Bot ``index``'s mean net points per hand it played, its 95% interval clustered by
    deal, and the number of such hands."""
    per: dict[int, list[float]] = {}
    nets: list[float] = []
    for g in games:
        d = per.setdefault(g.deal, [0.0, 0.0])
        for h in g.hands:
            if index not in h.players:
                continue
            net = 0.0 if h.winner is None else float(h.points if h.winner == index else -h.points)
            d[0] += net
            d[1] += 1
            nets.append(net)
    if not nets:
        return 0.0, (0.0, 0.0), 0
    m = sum(nets) / len(nets)
    var = sum((x - m) ** 2 for x in nets) / max(1, len(nets) - 1)
    cm = cluster_mean([(y, n) for y, n in per.values()], var or 1.0)
    return cm.mean, cm.interval(), len(nets)


def evaluate(agent: str | CommandBot, opponent: str, variant: str, deals: int | None = None, jobs: int = 1,
             progress: Callable[[int, int], None] | None = None, timeout: float | None = None) -> EvalResult:
    """Play the protocol's games of ``agent`` against ``opponent`` (built-in names or
    ``module:Class`` / ``file.py:Class`` specs, as ``okgin match`` takes them; the agent
    may also be a :class:`CommandBot`, played through a referee, ``timeout`` seconds at
    most)."""
    spec = SPECS[variant]
    n = spec.deals if deals is None else deals
    if n < 1:
        raise ValueError("deals must be at least 1")
    if isinstance(agent, CommandBot):
        res = run_match_via_referee([agent] + [opponent] * (spec.seats - 1), games=spec.games(n), seed=spec.seed,
                                    rules=spec.rules, jobs=jobs, progress=progress, timeout=timeout)
        usage = res.extra.get("mcp")
        agent = agent.name
    else:
        usage = None
        bots = [agent] + [opponent] * (spec.seats - 1)
        res = run_match(bots, games=spec.games(n), seed=spec.seed, rules=spec.rules, jobs=jobs, progress=progress)
    st = bot_stats(0, res.bots[0], res.games)
    pph, pci, hands = net_points_per_hand(res.games, 0)
    return EvalResult(
        protocol=EVAL_PROTOCOL, variant=variant, agent=agent, opponent=opponent, deals=n, standard=n == spec.deals,
        games=len(res.games), hands=hands, win_rate=st.win_rate, win_ci=st.win_ci, points_per_hand=pph,
        points_ci=pci, forfeits=st.forfeits, **mcp_figures(usage),
    )


def mcp_figures(usage: dict[str, int] | None) -> dict[str, float | None]:
    """The refused move rate and characters per decision from the MCP seat's counts
    (:func:`clients.match_referee.mcp_usage`); nothing for other agents."""
    if usage is None:
        return {}
    sent = usage["moves"] + usage["refused"]
    return {
        "refused_rate": usage["refused"] / sent if sent else 0.0,
        "chars_per_decision": usage["chars"] / usage["moves"] if usage["moves"] else float(usage["chars"]),
    }


def load_reference(path: Path = REFERENCE_FILE) -> list[EvalResult]:
    """The stored reference results (empty when the file is absent or of another protocol)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    if not isinstance(data, dict) or data.get("protocol") != EVAL_PROTOCOL:
        return []
    return [EvalResult.from_json(r) for r in data.get("results", [])]


def write_reference(rows: Sequence[EvalResult], path: Path = REFERENCE_FILE) -> None:
    """Write ``rows`` as the reference file (``okgin eval --reference`` or ``--add-to-reference``)."""
    payload = {"protocol": EVAL_PROTOCOL, "results": [r.to_json() for r in rows]}
    path.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")


def merge_reference(new: Sequence[EvalResult], path: Path = REFERENCE_FILE) -> list[EvalResult]:
    """The stored reference rows with ``new`` laid over them: a row of the same variant,
    agent and opponent is replaced, every other kept, new ones appended. Why: an agent too
    slow for every ``--reference`` rebuild (the ISMCTS through OpenSpiel, about a CPU-hour
    for its 120 games against ``simple``) is measured once and kept beside the others."""
    key = {(r.variant, r.agent, r.opponent) for r in new}
    rows = [r for r in load_reference(path) if (r.variant, r.agent, r.opponent) not in key]
    return [*rows, *new]


def format_table(rows: Sequence[EvalResult], reference: Sequence[EvalResult] = ()) -> str:
    """The results, each opponent's reference rows beside the agent's."""
    out = []
    for variant in dict.fromkeys(r.variant for r in rows):
        mine = [r for r in rows if r.variant == variant]
        spec = SPECS[variant]
        fair = 1 / spec.seats
        out.append(f"{EVAL_PROTOCOL}, {variant}: {spec.deals} deals x {len(seatings(spec.seats))} seatings, "
                   f"games to {spec.rules.target_score}; fair win rate {fair:.0%}")
        out.append(f"  {'agent':<18} {'opponent':<10} {'games':>5} {'win rate [95%]':>22} {'points/hand [95%]':>26}")
        for r in mine:
            for x in [r, *(ref for ref in reference if ref.variant == variant and ref.opponent == r.opponent)]:
                tag = "" if x is r else " (ref)"
                flag = "" if x.standard else "  non-standard: " + str(x.deals) + " deals"
                win = f"{x.win_rate:6.1%} [{x.win_ci[0]:.1%}, {x.win_ci[1]:.1%}]"
                if math.isfinite(x.points_ci[0]) and math.isfinite(x.points_ci[1]):
                    pts = f"{x.points_per_hand:+6.2f} [{x.points_ci[0]:+.2f}, {x.points_ci[1]:+.2f}]"
                else:  # one deal: no spread between deals to measure
                    pts = f"{x.points_per_hand:+6.2f} [one deal: none]"
                out.append(f"  {(x.agent + tag)[:18]:<18} {x.opponent[:10]:<10} {x.games:>5} {win:>22} {pts:>26}{flag}")
                if x.refused_rate is not None and x.chars_per_decision is not None:
                    out.append(f"  {'':<18} MCP seat: refused moves {x.refused_rate:.1%}, {x.chars_per_decision:,.0f} characters "
                               f"(~{x.tokens_per_decision:,.0f} tokens) of text per decision")
        out.append("")
    return "\n".join(out).rstrip() + "\n"

