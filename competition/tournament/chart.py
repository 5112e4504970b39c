"""The ratings chart: each participant's Elo with its 95% interval, drawn by matplotlib.

matplotlib is an optional extra (``pip install 'okgin[charts]'``): a tournament runs and
reports without it, and only the picture is missing (:data:`CHART_HINT` says how to get
it). The format follows the file's extension, PNG or SVG. We draw on a bare
:class:`matplotlib.figure.Figure` instead of ``pyplot``: no global backend is chosen, no
display is needed (PNG goes through Agg, SVG through matplotlib's SVG writer), and a run
that imports this module cannot change anyone else's plotting state.

Layout: one row per participant, best at the top; a dot at the rating, a whisker for the
95% interval, a vertical line at 0 (the mean, or the anchor's rating); the rating and
interval printed at the right of each row.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from .report import Report

CHART_HINT = "the ratings chart needs matplotlib: pip install 'okgin[charts]'"
FORMATS = (".png", ".svg")
BLUE = "#1f5caa"


class ChartError(Exception):
    """The chart cannot be written (matplotlib missing, or an unknown file type)."""


def _figure_class() -> Any:
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ChartError(CHART_HINT) from None
    return Figure


def chart_format(path: str | Path) -> str:
    """``"png"`` or ``"svg"`` from the file's extension (checked before anything is drawn)."""
    ext = Path(path).suffix.lower()
    if ext not in FORMATS:
        raise ChartError(f"{path}: the chart is written as PNG or SVG; name the file .png or .svg")
    return ext[1:]


def _label(elo: float, err95: float | None) -> str:
    """The figure beside a row. An infinite interval (one deal, or too few to tell) is
    written "±inf": its bar cannot be drawn, and a row without one must not look exact."""
    if err95 is not None and math.isfinite(err95):
        return f"{round(elo):+d} ±{err95:.0f}"
    if err95 is not None:
        return f"{round(elo):+d} ±inf"
    return f"{round(elo):+d}"


def draw(report: Report) -> Any:
    """The chart for ``report`` as a matplotlib Figure (raises :class:`ChartError` without matplotlib)."""
    figure = _figure_class()
    rows = [s for s in report.standings if s.elo is not None]
    fig = figure(figsize=(9, 1.2 + 0.45 * max(1, len(rows))), dpi=100, layout="constrained")
    ax = fig.add_subplot()
    deals = f", {report.deals} deal{'' if report.deals == 1 else 's'}" if report.deals else ""
    rough = f"\n{report.warning.split(' (')[0]}" if report.warning else ""
    ax.set_title(f"{report.name}: Elo with 95% intervals ({report.games_played} games{deals}){rough}")
    if not rows:
        ax.text(0.5, 0.5, "no rated games yet", ha="center", va="center", color="grey", transform=ax.transAxes)
        ax.set_axis_off()
        return fig
    ys = list(range(len(rows)))[::-1]  # best at the top
    elos = [float(s.elo) for s in rows if s.elo is not None]
    errs = [s.err95 if s.err95 is not None and math.isfinite(s.err95) else 0.0 for s in rows]
    ax.axvline(0.0, color="#6e6e6e", linewidth=1.5, zorder=1)
    ax.errorbar(elos, ys, xerr=errs, fmt="o", color=BLUE, ecolor=BLUE, elinewidth=2.5, capsize=5, markersize=7, zorder=3)
    ax.set_yticks(ys, [s.name for s in rows])
    ax.set_ylim(-0.6, len(rows) - 0.4)
    ax.set_xlabel("Elo")
    ax.grid(axis="x", color="#c8c8c8", linewidth=0.8, zorder=0)
    ax.set_axisbelow(True)
    right = ax.secondary_yaxis("right")
    right.set_yticks(ys, [_label(e, s.err95) for e, s in zip(elos, rows, strict=True)])
    right.tick_params(length=0)
    return fig


def write_chart(report: Report, path: str | Path) -> Path:
    """Write the chart to ``path``, PNG or SVG by its extension."""
    path = Path(path)
    fmt = chart_format(path)
    fig = draw(report)
    from matplotlib import rc_context

    # No creation date and fixed SVG ids: the same report gives the same file.
    metadata: dict[str, str | None] = {"Date": None} if fmt == "svg" else {}
    with rc_context({"svg.hashsalt": "okgin"}):
        fig.savefig(path, format=fmt, metadata=metadata)
    return path
