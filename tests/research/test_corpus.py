"""okgin corpus (issue 29 item 3): one row per decision, from self-play and from real
referee journals, as Parquet (pyarrow) and JSON Lines; the shipped sample loads."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
np = pytest.importorskip("numpy")

from clients.corpus_cli import main  # noqa: E402
from okgin import Action, Game, RuleSet  # noqa: E402
from okgin.corpus import COLUMNS, CORPUS_VERSION, CorpusError, decision_rows, read_corpus, records_in  # noqa: E402
from okgin.envs.encoding import NO_ADVICE, encode_view, observation_size  # noqa: E402
from okgin.record import game_to_record  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
JOURNALS13 = ROOT / "tests" / "referee" / "journals13"  # written by a real referee (protocol 1.3)
SAMPLE = ROOT / "docs" / "data" / "corpus-sample.parquet"


def _check_rows(rows: list[dict], games: dict[str, dict]) -> None:
    """Every row against an independent replay of its game's record."""
    assert rows
    by_game: dict[str, list[dict]] = {}
    for r in rows:
        assert list(r) == list(COLUMNS) and r["corpus_version"] == CORPUS_VERSION
        by_game.setdefault(r["game_id"], []).append(r)
    assert set(by_game) == set(games)
    for gid, grows in by_game.items():
        record = games[gid]
        g = Game(RuleSet.from_dict(record["rules"]), record["seed"])
        decisions = [e for e in record["entries"] if "action" in e or "advice" in e]
        assert [r["decision"] for r in grows] == list(range(len(decisions)))
        it = iter(grows)
        for e in record["entries"]:
            if "action" in e or "advice" in e:
                r = next(it)
                seat = e["seat"]
                view = g.view(seat)
                assert r["seat"] == seat and r["hand"] == g.hand_number
                assert json.loads(r["view"]) == json.loads(json.dumps(view.to_wire()))
                assert json.loads(r["view"]).get("all_hands") is None and json.loads(r["view"]).get("stock") is None
                assert np.allclose(r["observation"], encode_view(view)) and len(r["observation"]) == observation_size(g.num_seats)
                assert r["action"] in r["legal"] and len(r["legal"]) == len(r["legal_text"])
                if "action" in e:
                    assert r["kind"] == "move" and json.loads(r["action_text"]) == e["action"]
                    assert len(r["legal"]) == len(g.legal_actions())
                else:
                    assert r["kind"] == "advice" and r["role"] == "sitter" and NO_ADVICE in r["legal"]
            if "action" in e:
                g.apply(Action.from_wire(e["action"]), seat=e["seat"])
            elif "advice" in e:
                g.advise(e["seat"], None if e["advice"] is None else Action.from_wire(e["advice"]), e.get("text", ""))
            elif "resign" in e:
                g.resign(e["seat"], e["resign"])
        # The hand's outcome: a scored two-player hand is zero-sum, and the points are the result's.
        for r in grows:
            if r["hand"] < len(g.results):
                res = g.results[r["hand"]]
                assert r["hand_outcome"] == res.outcome and r["hand_winner"] == res.winner
                if res.winner == r["seat"]:
                    assert r["hand_points"] == res.points
            assert r["final_score"] == g.scores[r["seat"]] and r["game_winner"] == g.winner


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
@pytest.mark.parametrize("bots", ["strong,simple", "simple,random,strong"])
def test_selfplay_corpus(tmp_path: Path, fmt: str, bots: str, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / f"c.{fmt}"
    names = bots.split(",")
    games = len(names)  # one deal, every seating
    short = RuleSet(variant="oklahoma" if len(names) == 2 else "box", target_score=25)  # a few hands
    assert main(["--bots", bots, "--games", str(games), "--seed", "t", "--rule", "target_score=25", "--out", str(out)]) == 0
    rows = read_corpus(out)
    assert f"{len(rows)} decisions written" in capsys.readouterr().out
    # okgin match's games with the same seed: the same records.
    from clients.match import run_match

    res = run_match(names, games=games, seed="t", rules=short, keep_records=True)
    records = {}
    for gs in res.games:
        gid = f"selfplay/t/{gs.deal}/{'-'.join(map(str, gs.seating))}"
        records[gid] = gs.record
        assert {r["player"] for r in rows if r["game_id"] == gid and r["seat"] == 0} == {names[gs.seating[0]]}
    _check_rows(rows, records)
    if fmt == "parquet":
        schema = pq.read_schema(out)
        assert schema.names == list(COLUMNS)
        assert str(schema.field("observation").type) == "list<element: float>"
    if len(names) == 3:
        assert any(r["kind"] == "advice" for r in rows)


def test_corpus_from_real_referee_journals(tmp_path: Path) -> None:
    out = tmp_path / "j.parquet"
    assert main(["--records", str(JOURNALS13), "--out", str(out)]) == 0
    rows = read_corpus(out)
    games = {gid: rec for gid, rec, _ in records_in([JOURNALS13])}
    assert len(games) == 2
    _check_rows(rows, games)
    assert {r["player"] for r in rows if "box" in r["game_id"]} == {"p0", "p1", "p2"}


def test_corpus_from_record_files_and_journal_in_play(tmp_path: Path) -> None:
    """A record file (one record or a list), and a journal whose game is still being
    played (no end line: skipped, as its seed is still secret)."""
    g = Game(RuleSet(), "rec")
    from clients.bots.simple import SimpleBot
    from clients.local import play_local

    g = play_local([SimpleBot(), SimpleBot()], RuleSet(target_score=30), "rec")
    (tmp_path / "one.json").write_text(json.dumps(game_to_record(g)))
    (tmp_path / "many.json").write_text(json.dumps([game_to_record(g), game_to_record(g)]))
    src = next(JOURNALS13.glob("oklahoma-*.jsonl")).read_text().split("\n")
    (tmp_path / "live.jsonl").write_text("\n".join(src[:5]) + "\n")  # start and a few moves, no end
    found = list(records_in([tmp_path]))
    assert [gid.rsplit("/", 1)[-1] for gid, _, _ in found] == ["many.json#0", "many.json#1", "one.json"]
    rows = list(decision_rows(found[2][1], "x"))
    _check_rows(rows, {"x": found[2][1]})


def test_bad_sources_and_outputs_say_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--records", str(tmp_path / "nope"), "--out", str(tmp_path / "a.parquet")]) == 1
    assert "no such file" in capsys.readouterr().err
    (tmp_path / "bad.json").write_text("{not json")
    assert main(["--records", str(tmp_path / "bad.json"), "--out", str(tmp_path / "a.parquet")]) == 1
    assert "not a JSON record" in capsys.readouterr().err
    rec = game_to_record(Game(RuleSet(), 1))
    rec["entries"] = [{"seat": 0, "action": {"kind": "discard", "card": "Ah"}}]  # illegal on replay
    (tmp_path / "bad.json").write_text(json.dumps(rec))
    assert main(["--records", str(tmp_path / "bad.json"), "--out", str(tmp_path / "a.parquet")]) == 1
    assert "not a replayable record" in capsys.readouterr().err
    assert not list(tmp_path.glob("a.parquet*"))  # no half corpus left behind
    assert main(["--bots", "simple,simple", "--out", str(tmp_path / "a.csv")]) == 1
    assert ".parquet or .jsonl" in capsys.readouterr().err
    assert main(["--bots", "simple", "--out", str(tmp_path / "a.jsonl")]) == 2
    assert main(["--bots", "simple,simple", "--rule", "variant=box", "--out", str(tmp_path / "a.jsonl")]) == 2
    assert main(["--bots", "simple,nosuchbot", "--out", str(tmp_path / "a.jsonl")]) == 2
    with pytest.raises(CorpusError, match="no journal"):
        list(records_in([tmp_path / "empty"] if (tmp_path / "empty").mkdir() is None else []))


def test_the_shipped_sample_loads() -> None:
    """docs/data/corpus-sample.parquet: written by `okgin corpus --bots strong,simple
    --games 2 --out docs/data/corpus-sample.parquet`; pyarrow (and pandas) read it."""
    table = pq.read_table(SAMPLE)
    assert table.schema.names == list(COLUMNS) and table.num_rows > 100
    rows = table.to_pylist()
    assert {r["corpus_version"] for r in rows} == {CORPUS_VERSION}
    assert {r["player"] for r in rows} == {"strong", "simple"}
    for r in rows:
        assert r["action"] in r["legal"]
        assert len(r["observation"]) == observation_size(2)
    # Each scored hand is zero-sum between its two players, seen from each row's side.
    per_hand: dict[tuple[str, int], set[tuple[int, int]]] = {}
    for r in rows:
        per_hand.setdefault((r["game_id"], r["hand"]), set()).add((r["seat"], r["hand_points"]))
    for pts in per_hand.values():
        if len(pts) == 2:
            assert sum(p for _, p in pts) == 0


def test_okgin_corpus_is_a_command(tmp_path: Path) -> None:
    out = tmp_path / "c.jsonl"
    r = subprocess.run([sys.executable, "-m", "okgin", "corpus", "--bots", "random,simple", "--games", "1", "--out", str(out)],
                       capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert out.exists() and "decisions written" in r.stdout
    h = subprocess.run([sys.executable, "-m", "okgin", "--help"], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert "corpus" in h.stdout
