"""bench/sprt.py, the small fishtest: it plays okgin match's games, counts okgin match's
pairs, asks the tournament's SPRT, and stops at the first pair where the LLR crosses a
bound, whatever the batch size or the number of workers."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from clients.match import MatchWork, deal_pairs, plan, run_match
from competition.tournament.sprt import Sprt
from okgin import RuleSet
from okgin.rules import EVENT_MAX_HANDS

ROOT = Path(__file__).resolve().parents[2]


def _load():
    spec = importlib.util.spec_from_file_location("bench_sprt", ROOT / "bench" / "sprt.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["bench_sprt"] = mod
    spec.loader.exec_module(mod)
    return mod


sprt = _load()


def test_stops_at_the_first_crossing_and_agrees_with_okgin_match() -> None:
    rules = RuleSet(max_hands=EVENT_MAX_HANDS)
    test = Sprt(0, 300)  # far from the truth: H0 comes quickly
    _, order = plan(2, 200)
    work = MatchWork(("random", "simple"), rules, "t")
    games, decision = sprt.play_sequential(work, order, test, batch=7, jobs=1)
    assert decision == "H0"
    # the prefix of okgin match's own games, cut at the first pair whose LLR crosses
    ref = run_match(["random", "simple"], games=len(games), seed="t", rules=rules)
    assert [g.key() for g in games] == [g.key() for g in ref.games]
    for n in range(2, len(games), 2):
        assert test.decide(deal_pairs(games[:n]).counts) is None
    assert test.decide(deal_pairs(games).counts) == "H0"
    # another batch size, and two workers: the same stopping point
    again, d2 = sprt.play_sequential(work, order, test, batch=3, jobs=2)
    assert d2 == "H0" and [g.key() for g in again] == [g.key() for g in games]


def test_parameters_build_a_configured_bot() -> None:
    make = sprt.bot_factory("strong:mc_samples=8,equity=false")
    bot = make("s")
    assert bot.params.mc_samples == 8 and bot.params.equity is False
    assert sprt.bot_factory("simple") == "simple"
    with pytest.raises(ValueError, match="unknown StrongBot parameter"):
        sprt.bot_factory("strong:nope=1")


def test_summary_and_limit(capsys: pytest.CaptureFixture[str]) -> None:
    assert sprt.main(["simple", "eaai-simple", "--max-games", "6", "--batch", "2", "--elo1", "50", "--seed", "q"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    data = json.loads(out[-1])
    assert data["games"] == 6 and data["decision"] is None and len(data["cells"]) == 5
    text = "\n".join(out[:-1])
    assert "inconclusive" in text and "pentanomial" in text and "bench/sprt.py simple eaai-simple" in text


def test_a_time_limit_stops_without_a_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    assert sprt.main(["simple", "random", "--max-minutes", "0", "--elo1", "50", "--seed", "q"]) == 0
    data = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert data["games"] == 0 and data["decision"] is None and data["stopped"] == "time limit"


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert sprt.main(["simple", "eaai-simple", "--batch", "2", "--seed", "j", *args]) == 0
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_a_journal_resumes_the_run_that_was_cut_short(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    whole = _run(capsys, "--max-games", "12")  # the run never stopped, for reference
    journal = tmp_path / "run.jsonl"
    first = _run(capsys, "--max-games", "6", "--journal", str(journal))
    assert first["games"] == 6 and first["resumed"] == 0
    lines = journal.read_text().splitlines()
    assert len(lines) == 1 + 6 and json.loads(lines[0])["candidate"] == "simple"
    # a kill in the middle of writing a pair: half a line at the end, dropped on reading
    with journal.open("a") as f:
        f.write(lines[-1][: len(lines[-1]) // 2])
    resumed = _run(capsys, "--max-games", "12", "--journal", str(journal))
    assert resumed["resumed"] == 6 and resumed["games"] == 12
    assert resumed["cells"] == whole["cells"] and resumed["llr"] == whole["llr"]
    assert len(journal.read_text().splitlines()) == 1 + 12
    # nothing left to play: the same verdict from the journal alone
    again = _run(capsys, "--max-games", "12", "--journal", str(journal))
    assert again["resumed"] == 12 and again["cells"] == whole["cells"]


def test_a_journal_replays_the_decision_it_holds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    journal = tmp_path / "run.jsonl"
    # with no bounds to cross (elo1 far away) 40 games are played and kept...
    assert sprt.main(["random", "simple", "--max-games", "40", "--seed", "d", "--elo1", "2000",
                      "--journal", str(journal)]) == 0
    capsys.readouterr()
    # ...and a test that decides early stops at the same pair as a fresh run of it
    assert sprt.main(["random", "simple", "--max-games", "40", "--seed", "d", "--elo1", "300"]) == 0
    fresh = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert fresh["decision"] == "H0" and fresh["games"] < 40
    assert sprt.main(["random", "simple", "--max-games", "40", "--seed", "d", "--elo1", "300",
                      "--journal", str(journal)]) == 0
    replayed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert (replayed["decision"], replayed["games"], replayed["cells"]) == (fresh["decision"], fresh["games"], fresh["cells"])


@pytest.mark.parametrize(("change", "field"), [
    (["--seed", "other"], "seed"),
    (["--rule", "knock_limit=10"], "rules"),
])
def test_a_journal_of_another_match_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               change: list[str], field: str) -> None:
    journal = tmp_path / "run.jsonl"
    _run(capsys, "--max-games", "2", "--journal", str(journal))
    before = journal.read_bytes()
    with pytest.raises(SystemExit, match=f"another match \\({field} differs"):
        sprt.main(["simple", "eaai-simple", "--max-games", "4", "--seed", "j", "--journal", str(journal), *change])
    assert journal.read_bytes() == before  # nothing written over


def test_a_journal_of_other_code_or_damaged_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    journal = tmp_path / "run.jsonl"
    _run(capsys, "--max-games", "4", "--journal", str(journal))
    head, *games = journal.read_text().splitlines()
    other = json.loads(head) | {"code": "0" * 64}
    journal.write_text("\n".join([json.dumps(other), *games]) + "\n")
    with pytest.raises(SystemExit, match="code differs"):
        _run(capsys, "--max-games", "4", "--journal", str(journal))
    journal.write_text("\n".join([head, games[0], "{not json", *games[1:]]) + "\n")
    with pytest.raises(SystemExit, match="line 3 is damaged"):
        _run(capsys, "--max-games", "4", "--journal", str(journal))
    journal.write_text("\n".join([head, games[1], games[0]]) + "\n")
    with pytest.raises(SystemExit, match="not the game this match plays next"):
        _run(capsys, "--max-games", "4", "--journal", str(journal))
    journal.write_text("\n".join([head, *games]) + "\n")
    with pytest.raises(SystemExit, match="more than --max-games 2"):
        _run(capsys, "--max-games", "2", "--journal", str(journal))
