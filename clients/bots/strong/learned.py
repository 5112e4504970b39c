"""The learned utility: what ending a draw with ``d`` deadwood is worth, from self-play.

``strong-v1`` counts a hand after the next draw at its deadwood: a linear utility, in
which gin is one point better than one deadwood and crossing the knock limit is nothing
special. ``valuetable.json`` (next to this file, fitted by bench/strength/valuefit.py)
holds, per knock limit and stock depth, the mean points that ``strong-v1``'s hands went
on to score from each deadwood. This module turns a row of it into the evaluator's
utility, in deadwood points, so that the discard-safety penalty (``danger_weight``, in
deadwood points) keeps its meaning: points are divided by ``scale``, the hand points one
deadwood point is worth early in a hand (about 0.5 in the Oklahoma rows' slopes). One
scale serves every row, so that where a row is flat (late in a hand, far above the
limit, where deadwood hardly changes the outcome) safety weighs more, as it should.

A game whose scoring rules no table was fitted under (another undercut bonus, Gin in
the Box, ...) gets ``None``: the linear utility, exactly ``strong-v1``'s.
"""

from __future__ import annotations

import json
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from okgin import RuleSet

SIZE = 120
TABLE_FILE = Path(__file__).with_name("valuetable.json")


@cache
def tables() -> dict[str, Any]:
    """The fitted tables (read once per process)."""
    doc: dict[str, Any] = json.loads(TABLE_FILE.read_text())
    if doc.get("format") != 1:
        raise ValueError(f"{TABLE_FILE}: unknown format {doc.get('format')!r}")
    return doc


def stock_bucket(stock_size: int) -> int:
    """The fit's stock buckets: 0 for a deep stock, 1 for a middle one, 2 for a short one."""
    deep, short = tables()["stock_edges"]
    return 0 if stock_size > deep else (1 if stock_size > short else 2)


def table_for(rules: RuleSet) -> str | None:
    """The name of the table fitted under ``rules``' scoring, if any."""
    for name, fitted in tables()["rules"].items():
        if all(getattr(rules, f) == v for f, v in fitted.items()):
            return str(name)
    return None


@lru_cache(maxsize=512)
def _row_utility(name: str, limit: int, bucket: int, scale: float) -> tuple[float, ...] | None:
    rows = tables()["tables"][name].get(str(limit))
    if rows is None:
        return None
    v = rows[bucket]
    top = len(v) - 1
    out = [(v[0] - v[min(d, top)]) / scale for d in range(SIZE)]
    for d in range(top + 1, SIZE):  # beyond the fitted range: one point per point
        out[d] = out[top] + (d - top)
    return tuple(out)


def utility(rules: RuleSet, limit: int, stock_size: int, scale: float = 0.5) -> tuple[float, ...] | None:
    """The learned utility (deadwood points, 0 at gin, non-decreasing) for this decision,
    or ``None`` where no table applies. ``scale``: hand points per deadwood point."""
    name = table_for(rules)
    if name is None:
        return None
    return _row_utility(name, limit, stock_bucket(stock_size), scale)
