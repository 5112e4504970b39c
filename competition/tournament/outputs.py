"""Where a run's outputs go and what they are: the CSV, the JSON and the ratings chart,
written from the results file alone (:func:`.report.report_from_store`)."""

from __future__ import annotations

from pathlib import Path

from .config import TournamentConfig
from .report import report_from_store
from .store import ResultsStore

__all__ = ["output_dir", "output_files", "write_outputs"]


def output_dir(cfg: TournamentConfig, db: Path, output: str | None) -> Path:
    """Where the CSV, JSON and chart go: ``--output``, else the config's ``output_dir``,
    else beside the results file (wherever ``--db`` put it)."""
    if output:
        return Path(output).expanduser()
    return cfg.resolve_path(cfg.output_dir) if cfg.output_dir else db.parent


def output_files(db: Path, output: Path) -> list[Path]:
    """The files a run writes in ``output``: CSV, JSON, PNG chart (and the SVG a report
    may write), named after the results file (``cup.sqlite`` gives ``cup.csv``...), so
    that two events with two results files (``--db``) never overwrite each other's."""
    stem = db.stem
    return [output / f"{stem}.csv", output / f"{stem}.json", output / f"{stem}-ratings.png", output / f"{stem}-ratings.svg"]


def write_outputs(cfg: TournamentConfig, store: ResultsStore, output: Path) -> list[Path]:
    from .chart import ChartError, write_chart

    rep = report_from_store(store)
    output.mkdir(parents=True, exist_ok=True)
    csv_path, json_path, png_path = output_files(store.path, output)[:3]
    csv_path.write_text(rep.to_csv(), encoding="utf-8")
    json_path.write_text(rep.to_json(), encoding="utf-8")
    paths = [csv_path, json_path]
    try:
        paths.append(write_chart(rep, png_path))
    except ChartError as e:  # matplotlib is an optional extra: the run's results do not depend on it
        print(f"okgin tournament: no chart: {e}", flush=True)
    print(rep.to_text())
    return paths

