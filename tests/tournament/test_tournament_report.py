"""The final table, its exports and the PNG chart, from a results file."""

from __future__ import annotations

import csv
import io
import json
import struct
import zlib
from pathlib import Path

import pytest

from referee.tournament.chart import ratings_png
from referee.tournament.cli import main
from referee.tournament.config import parse_config
from referee.tournament.report import build_report, report_from_store
from referee.tournament.store import GameResult, ResultsStore


def g(i: int, seats: tuple[str, ...], scores: tuple[int, ...], winner: str | None, termination: str = "normal",
      culprit: str | None = None) -> GameResult:
    return GameResult(i, f"g{i}", 0, 0, "s/0", seats, scores, winner, termination, culprit, "", 3)


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


def read_png(data: bytes) -> tuple[int, int, bytes]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    w = h = 0
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        (crc,) = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])
        assert crc == zlib.crc32(kind + body) & 0xFFFFFFFF
        if kind == b"IHDR":
            w, h = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    assert len(raw) == h * (1 + 3 * w)
    return w, h, raw


def test_chart_is_a_valid_png_with_a_row_per_player() -> None:
    r = build_report("cup", "round_robin", ["a", "b", "c"], GAMES)
    png = ratings_png(r)
    w, h, raw = read_png(png)
    assert w == 900 and h == 64 + 3 * 34 + 60
    assert bytes((31, 92, 170)) in raw  # the whiskers are drawn
    assert png == ratings_png(r)  # deterministic bytes
    empty = build_report("cup", "round_robin", ["a", "b"], [])
    read_png(ratings_png(empty))


def test_report_command_reads_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = parse_config({"tournament": {"seed": "s"}, "participant": [{"name": n, "bot": "random"} for n in "abc"]})
    st = ResultsStore.for_run(cfg, tmp_path / "cup.sqlite", resume=False)
    for x in GAMES:
        st.record_game(x)
    st.set_meta("games_total", "6")
    st.close()
    out = tmp_path / "out"
    assert main(["report", str(tmp_path / "cup.sqlite"), "--csv", str(out / "t.csv"), "--json", str(out / "t.json"),
                 "--chart", str(out / "t.png")]) == 0
    text = capsys.readouterr().out
    assert "6/6 games" in text and "Elo" in text
    assert (out / "t.csv").read_text().startswith("rank,name,games")
    read_png((out / "t.png").read_bytes())
    st = ResultsStore.open_existing(tmp_path / "cup.sqlite")
    assert report_from_store(st).to_json() == (out / "t.json").read_text()
    assert main(["report", str(tmp_path / "nope.sqlite")]) == 2
    assert "no such results file" in capsys.readouterr().err
