"""The final table, its exports and the ratings chart, from a results file."""

from __future__ import annotations

import csv
import io
import json
import re
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from bounded import readline

from competition.tournament.chart import CHART_HINT, ChartError, write_chart
from competition.tournament.cli import main
from competition.tournament.config import parse_config
from competition.tournament.report import build_report, report_from_store
from competition.tournament.runner import write_outputs
from competition.tournament.store import GameResult, ResultsStore

REPO = Path(__file__).resolve().parents[2]


def g(i: int, seats: tuple[str, ...], scores: tuple[int, ...], winner: str | None, termination: str = "normal",
      culprit: str | None = None) -> GameResult:
    return GameResult(i, f"g{i}", i // 2, i % 2, f"s/{i // 2}", seats, scores, winner, termination, culprit, "", 3)


GAMES = [
    g(0, ("a", "b"), (104, 30), "a"),
    g(1, ("b", "a"), (20, 110), "a"),
    g(2, ("a", "c"), (101, 90), "a"),
    g(3, ("c", "a"), (100, 60), "c"),
    g(4, ("b", "c"), (12, 40), "c", "timeout", "b"),
    g(5, ("c", "b"), (0, 0), "b", "crash", "c"),
]


def test_table_counts_and_order() -> None:
    r = build_report("cup", "round_robin", ["a", "b", "c"], GAMES, games_total=6, prior_draws=1)
    by = {s.name: s for s in r.standings}
    assert [s.name for s in r.standings] == ["a", "c", "b"]
    assert (by["a"].games, by["a"].wins, by["a"].losses, by["a"].points_for, by["a"].points_against) == (4, 3, 1, 375, 240)
    assert (by["b"].wins, by["b"].losses, by["b"].forfeits) == (1, 3, 1)
    assert by["c"].forfeits == 1
    assert by["a"].score == pytest.approx(0.75)
    assert r.terminations == {"normal": 4, "timeout": 1, "crash": 1}
    assert by["a"].los_next is not None and 0.5 < by["a"].los_next < 1
    assert by["b"].los_next is None  # last row
    text = r.to_text()
    assert "Tournament cup: round robin, 6/6 games" in text
    assert "terminations: crash 1, normal 4, timeout 1" in text


def test_box_points_against_is_the_mean_of_the_opponents() -> None:
    r = build_report("box", "box", ["a", "b", "c"], [g(0, ("a", "b", "c"), (100, 40, 20), "a")])
    by = {s.name: s for s in r.standings}
    assert by["a"].points_against == 30 and by["b"].points_against == 60
    assert [s.name for s in r.standings] == ["a", "b", "c"]
    assert by["a"].score == pytest.approx(1.0) and by["b"].score == pytest.approx(0.5)


def test_exports_round_trip() -> None:
    r = build_report("cup", "round_robin", ["a", "b", "c"], GAMES, games_total=6)
    rows = list(csv.DictReader(io.StringIO(r.to_csv())))
    assert [x["name"] for x in rows] == ["a", "c", "b"]
    assert rows[0]["wins"] == "3"
    data = json.loads(r.to_json())
    assert data["standings"][0]["name"] == "a" and data["games_played"] == 6
    assert {(p["a"], p["b"]) for p in data["pairs"]} == {("a", "b"), ("a", "c"), ("b", "c")}


def png_size(data: bytes) -> tuple[int, int]:
    """The size from a PNG's header, after checking its signature and the IHDR chunk's CRC."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    (n,) = struct.unpack(">I", data[8:12])
    assert data[12:16] == b"IHDR" and n == 13
    (crc,) = struct.unpack(">I", data[16 + n:20 + n])
    assert crc == zlib.crc32(data[12:16 + n]) & 0xFFFFFFFF
    return struct.unpack(">II", data[16:24])


def test_chart_is_written_as_png_or_svg_by_the_extension(tmp_path: Path) -> None:
    r = build_report("cup", "round_robin", ["a", "b", "c"], GAMES)
    w, h = png_size(write_chart(r, tmp_path / "c.png").read_bytes())
    assert w > 400 and h > 100
    svg = write_chart(r, tmp_path / "c.svg").read_text(encoding="utf-8")
    assert svg.startswith("<?xml") and "<svg" in svg and "</svg>" in svg
    assert svg == write_chart(r, tmp_path / "again.svg").read_text(encoding="utf-8")  # no date, fixed ids
    png_size(write_chart(build_report("cup", "round_robin", ["a", "b"], []), tmp_path / "empty.png").read_bytes())
    with pytest.raises(ChartError, match=r"\.png or \.svg"):
        write_chart(r, tmp_path / "c.gif")


def without_matplotlib(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every ``import matplotlib...`` fail, as on an installation without okgin[charts]."""
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")] + ["matplotlib"]:
        monkeypatch.setitem(sys.modules, name, None)


def test_without_matplotlib_the_report_says_how_to_get_the_chart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    without_matplotlib(monkeypatch)
    r = build_report("cup", "round_robin", ["a", "b", "c"], GAMES)
    with pytest.raises(ChartError, match=re.escape(CHART_HINT)):
        write_chart(r, tmp_path / "c.png")
    assert "pip install 'okgin[charts]'" in CHART_HINT
    db = results_file(tmp_path)
    out = tmp_path / "out"
    assert main(["report", str(db), "--csv", str(out / "t.csv"), "--json", str(out / "t.json"),
                 "--chart", str(out / "t.png")]) == 1
    cap = capsys.readouterr()
    assert "6/6 games" in cap.out and "pip install 'okgin[charts]'" in cap.err
    assert (out / "t.csv").is_file() and (out / "t.json").is_file() and not (out / "t.png").exists()
    # The end of a run: CSV and JSON written, the chart's absence explained.
    cfg = parse_config({"tournament": {"seed": "s", "name": "cup"}, "participant": [{"name": n, "bot": "random"} for n in "abc"]})
    st = ResultsStore.open_existing(db)
    try:
        paths = write_outputs(cfg, st, tmp_path / "run")
    finally:
        st.close()
    assert [p.name for p in paths] == ["cup.csv", "cup.json"]
    assert "pip install 'okgin[charts]'" in capsys.readouterr().out


def results_file(tmp_path: Path) -> Path:
    cfg = parse_config({"tournament": {"seed": "s"}, "participant": [{"name": n, "bot": "random"} for n in "abc"]})
    st = ResultsStore.for_run(cfg, tmp_path / "cup.sqlite", resume=False)
    for x in GAMES:
        st.record_game(x)
    st.set_meta("games_total", "6")
    st.close()
    return tmp_path / "cup.sqlite"


def test_report_command_reads_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results_file(tmp_path)
    out = tmp_path / "out"
    assert main(["report", str(tmp_path / "cup.sqlite"), "--csv", str(out / "t.csv"), "--json", str(out / "t.json"),
                 "--chart", str(out / "t.svg")]) == 0
    text = capsys.readouterr().out
    assert "6/6 games" in text and "Elo" in text
    assert (out / "t.csv").read_text().startswith("rank,name,games")
    assert "<svg" in (out / "t.svg").read_text(encoding="utf-8")
    st = ResultsStore.open_existing(tmp_path / "cup.sqlite")
    assert report_from_store(st).to_json() == (out / "t.json").read_text()
    st.close()
    assert main(["report", str(tmp_path / "nope.sqlite")]) == 2
    assert "no such results file" in capsys.readouterr().err
    assert main(["report", str(tmp_path / "cup.sqlite"), "--chart", str(out / "t.jpeg")]) == 2
    assert ".png or .svg" in capsys.readouterr().err


def test_report_into_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    """`okgin tournament report DB --games | head -1`: exit 141 (as a shell reports a writer
    ended by SIGPIPE), no traceback, and the files asked for are still written."""
    db = results_file(tmp_path)
    st = ResultsStore.open_existing(db)
    for i in range(6, 3000):  # more than a pipe's buffer, so the writer meets the closed end
        st.record_game(g(i, ("a", "b"), (104, 30), "a"))
    st.close()
    csv_path = tmp_path / "t.csv"
    proc = subprocess.Popen([sys.executable, "-m", "okgin", "tournament", "report", str(db), "--games", "--csv", str(csv_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO, text=True)
    assert proc.stdout is not None
    first = readline(proc.stdout, 60, "okgin tournament report")
    proc.stdout.close()  # what head -1 does after its line
    _, err = proc.communicate(timeout=60)
    assert first.startswith("Tournament tournament: round robin")
    assert proc.returncode == 141, err
    assert err == ""
    assert csv_path.read_text().startswith("rank,name,games")
