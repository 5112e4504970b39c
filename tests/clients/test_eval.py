"""okgin eval (issue 29 item 2): the protocol's games, its statistics, the reference table."""

from __future__ import annotations

import json
import math

import pytest

from clients.eval_cli import main
from clients.evaluation import (
    EVAL_PROTOCOL,
    REFERENCE_AGENTS,
    SPECS,
    evaluate,
    format_table,
    load_reference,
    net_points_per_hand,
)
from clients.match import GameSummary, HandSummary, run_match


def test_the_protocol_plays_okgin_matchs_games_with_the_published_seed() -> None:
    r = evaluate("simple", "random", "oklahoma", deals=2)
    assert (r.protocol, r.deals, r.standard, r.games) == (EVAL_PROTOCOL, 2, False, 4)
    spec = SPECS["oklahoma"]
    m = run_match(["simple", "random"], games=4, seed="okgin-eval-1/oklahoma", rules=spec.rules)
    wins = sum(g.winner == 0 for g in m.games)
    assert r.win_rate == pytest.approx(wins / 4)
    assert spec.rules.max_hands == 100 and spec.rules.target_score == 100
    assert evaluate("simple", "random", "oklahoma", deals=2) == r  # deterministic


def test_box_seats_the_agent_against_two_copies_and_every_seating() -> None:
    r = evaluate("random", "simple", "box", deals=1)
    assert r.games == 6 and 0 <= r.win_rate <= 1 and r.win_ci[0] <= r.win_rate <= r.win_ci[1]


def test_an_agent_against_itself_nets_zero_per_hand_on_duplicate_deals() -> None:
    """Every seating of a deal is played, so a deterministic bot against itself wins on one
    seating exactly what it loses on the other."""
    r = evaluate("simple", "simple", "oklahoma", deals=2)
    assert r.points_per_hand == 0 and r.win_rate == 0.5


def _game(deal: int, hands: list[tuple[int | None, int]]) -> GameSummary:
    hs = tuple(HandSummary(i, "knock" if w is not None else "drawn", (0, 1), w, w, p) for i, (w, p) in enumerate(hands))
    return GameSummary(deal, (0, 1), f"s{deal}", None, (0, 0), "normal", None, hs, 0)


def test_net_points_per_hand_is_clustered_by_deal() -> None:
    games = [_game(0, [(0, 10), (1, 4)]), _game(0, [(None, 0)]), _game(1, [(0, 20)]), _game(1, [(1, 6)])]
    mean, (lo, hi), hands = net_points_per_hand(games, 0)
    assert hands == 5 and mean == pytest.approx((10 - 4 + 0 + 20 - 6) / 5)
    assert lo < mean < hi and math.isfinite(lo)
    # Two deals only: Student's t with one degree of freedom, so a wide interval.
    assert hi - lo > 20


def test_table_puts_reference_rows_beside_the_agents() -> None:
    mine = evaluate("random", "simple", "oklahoma", deals=1)
    ref = evaluate("simple", "simple", "oklahoma", deals=1)
    text = format_table([mine], [ref])
    assert "okgin-eval-1, oklahoma" in text and "simple (ref)" in text and "non-standard: 1 deals" in text


def test_the_stored_reference_is_the_protocols() -> None:
    """clients/eval_reference.json: `okgin eval --reference` (every reference agent
    against every reference opponent, both variants, the protocol's own deals)."""
    ref = load_reference()
    assert len([r for r in ref if r.agent in REFERENCE_AGENTS]) == len(REFERENCE_AGENTS) ** 2 * len(SPECS)
    assert all(r.standard and r.protocol == EVAL_PROTOCOL for r in ref)
    # Added with --add-to-reference (docs/research.md): the ISMCTS through OpenSpiel, too slow
    # for every rebuild, measured once against simple in Oklahoma Gin.
    (ismcts,) = [r for r in ref if r.agent == "ismcts"]
    assert (ismcts.variant, ismcts.opponent, ismcts.games) == ("oklahoma", "simple", 120)
    by = {(r.variant, r.agent, r.opponent): r for r in ref}
    for v in SPECS:
        assert by[(v, "strong", "random")].win_rate > by[(v, "simple", "random")].win_rate - 0.1
        assert by[(v, "simple", "random")].points_per_hand > 0


def test_cli(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simple", "--variant", "oklahoma", "--against", "random", "--deals", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["protocol"] == EVAL_PROTOCOL and out["results"][0]["games"] == 2
    assert main(["simple", "--variant", "oklahoma", "--against", "random", "--deals", "1"]) == 0
    text = capsys.readouterr().out
    assert "simple" in text and "(ref)" in text  # the stored reference rows for opponent random
    assert main([]) == 2
    assert main(["nosuchbot", "--deals", "1"]) == 2
    assert main(["simple", "--deals", "0"]) == 2
    assert "at least 1" in capsys.readouterr().err


def test_an_agent_is_added_to_the_reference_and_replaced_when_measured_again(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "ref.json"
    out.write_text(json.dumps({"protocol": EVAL_PROTOCOL, "results": [r.to_json() for r in load_reference()]}))
    before = load_reference(out)
    args = ["simple", "--variant", "oklahoma", "--against", "random", "--name", "mine", "--add-to-reference", "--out", str(out)]
    assert main(args) == 0
    assert "added to" in capsys.readouterr().out
    after = load_reference(out)
    assert after[: len(before)] == before and [(r.agent, r.opponent, r.games) for r in after[len(before):]] == [
        ("mine", "random", 120)]
    assert main(args) == 0  # measured again: replaced, not repeated
    assert load_reference(out) == after
    assert main([*args, "--deals", "1"]) == 2  # only standard results go into the reference
    assert main(["--reference", "--add-to-reference", "--out", str(out)]) == 2
    assert load_reference(out) == after


def test_docs_show_the_stored_reference() -> None:
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "research.md").read_text(encoding="utf-8")
    block = text.split("<!-- eval-reference -->\n```text\n", 1)[1].split("```\n<!-- /eval-reference -->", 1)[0]
    assert block == format_table(load_reference())


def _c_bot() -> str:
    """clients/c built with its Makefile, as its README tells a user (skipped without make)."""
    import shutil
    import sys
    from pathlib import Path

    if shutil.which("make") is None or shutil.which("pkg-config") is None:
        pytest.skip("make or pkg-config missing: cannot build clients/c")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "conformance"))
    try:
        from botbuild import build
    finally:
        sys.path.pop(0)
    return build("c").command[0]


@pytest.mark.timeout(300)
def test_a_command_agent_in_c_is_evaluated_through_a_referee(capsys: pytest.CaptureFixture[str]) -> None:
    """AGENT as a program of another language (issue 29 item 2): the C example bot, started
    once per game with its seat token in OKGIN_TOKEN, on the protocol's own deals and
    seatings against random, through a real referee subprocess; then the same by the
    command line, beside the reference rows."""
    from clients.match_referee import CommandBot

    agent = CommandBot((_c_bot(), "--connect", "{endpoint}", "--name", "{name}"), "c-simple")
    r = evaluate(agent, "random", "oklahoma", deals=1, timeout=240)
    assert (r.agent, r.opponent, r.games, r.deals, r.standard, r.forfeits) == ("c-simple", "random", 2, 1, False, 0)
    assert r.hands > 0 and r.win_rate == 1.0 and r.points_per_hand > 0  # the simple player never loses to random
    assert main(["--command", f"{agent.argv[0]} --connect {{endpoint}} --name {{name}}", "--name", "c-simple",
                 "--variant", "oklahoma", "--against", "random", "--deals", "1", "--timeout", "240"]) == 0
    text = capsys.readouterr().out
    assert "c-simple" in text and "non-standard: 1 deals" in text and "simple (ref)" in text


def test_a_command_never_carries_the_token(capsys: pytest.CaptureFixture[str]) -> None:
    from clients.match_referee import CommandBot

    with pytest.raises(ValueError, match="OKGIN_TOKEN"):
        CommandBot(("bot", "--token", "{token}"))
    assert main(["--command", "bot --token {token}", "--deals", "1"]) == 2
    assert "OKGIN_TOKEN" in capsys.readouterr().err
    assert main(["simple", "--command", "bot", "--deals", "1"]) == 2
