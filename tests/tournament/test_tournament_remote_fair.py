"""Issue 24, items 2 and 5: no memory across seatings for remote participants, and every
game and every event ends.

- A remote participant (relayed by the gateway) could remember the cards of one seating
  of a duplicate deal and use them at the other. By default its pairings get a deal per
  game (independent deals), the schedule and ``verify`` agree on their seeds, and the
  report says so; with ``remote_duplicate = true`` it is never seated at two seatings of
  one deal at once and the report says the event trusts it.
- The game limit (rule ``max_hands``, docs/rules.md §3.7.1) ends a game of two bots that
  never knock; tournaments set it by default.
- A remote participant that never connects forfeits its games after ``no_show_s``
  (termination ``no_show``), and the other games are played meanwhile.

Real processes: the tournament runner with its own referee, protocol bots, a remote bot
through the gateway.
"""

from __future__ import annotations

import itertools
import re
import subprocess
import sys
from pathlib import Path

import pytest
from bounded import readline

from competition.tournament.config import ConfigError, parse_config
from competition.tournament.report import build_report, report_from_store
from competition.tournament.schedule import Schedule
from competition.tournament.store import GameResult, ResultsStore
from okgin import Game
from okgin.schedule import DealSchedule

from .tourkit import PROTOBOT, REPO, protobot, write_config

pytestmark = pytest.mark.timeout(240)

FAST_RULES = {"target_score": 40}


def local(name: str, *args: str) -> dict[str, object]:
    """A sandboxed protocol bot. Its sandbox shows the source tree (``dir``): a plain
    ``.pth`` install of okgin puts the tree on the path, and the sandbox's default, the
    package directories inside an unlistable parent, is not enough for that."""
    return {"name": name, "command": protobot(*args), "dir": [str(REPO)]}


def _run(cfg: Path, remote: tuple[str, str] | None = None, timeout: float = 180) -> str:
    """Run the tournament ``cfg`` to its end (with a remote protobot ``(name, token)``
    connected to its gateway, if given); its output."""
    runner = subprocess.Popen([sys.executable, "-m", "okgin", "tournament", str(cfg), "--quiet"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    bot = None
    try:
        if remote is not None:
            assert runner.stdout is not None
            endpoint = None
            for _ in range(30):
                m = re.search(r"remote bots connect to (tcp://\S+)", readline(runner.stdout, 60, "the runner"))
                if m:
                    endpoint = m.group(1)
                    break
            assert endpoint, "the runner prints the gateway's endpoint"
            bot = subprocess.Popen([sys.executable, PROTOBOT, endpoint, remote[1], "--serve", "--random", "5"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        out, _ = runner.communicate(timeout=timeout)
        assert runner.returncode == 0, out
        return out
    finally:
        for p in (runner, bot):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait(30)


def _verify(db: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "okgin", "tournament", "verify", str(db)],
                          capture_output=True, text=True, timeout=120)


def _games(db: Path) -> list[GameResult]:
    st = ResultsStore.open_existing(db)
    try:
        return st.games(with_records=True)
    finally:
        st.close()


# ------------------------------------------------------------------ schedule, pure
def _cfg(**t: object) -> object:
    return parse_config({"tournament": {"gateway": "tcp://127.0.0.1:7200", "games_per_pairing": 4, **t}, "participant": [
        {"name": "a", "bot": "random"}, {"name": "b", "bot": "simple"}, {"name": "far", "remote": True}]})


def test_pairings_with_a_remote_participant_get_a_deal_per_game_by_default() -> None:
    s = Schedule(_cfg(), bytes(32))
    games = list(s)
    local = [g for g in games if "far" not in g.seats]
    remote = [g for g in games if "far" in g.seats]
    # The local pairing keeps its duplicate deals 0 and 1, seeds as before (no remote in them).
    assert sorted(g.deal for g in local) == [0, 0, 1, 1]
    assert [g.seed for g in local] == [g.seed for g in Schedule(parse_config({"tournament": {"games_per_pairing": 4},
                                       "participant": [{"name": "a", "bot": "random"}, {"name": "b", "bot": "simple"}]}),
                                       bytes(32))]
    # Every remote game has a deal of its own, numbered after the shared ones, and no
    # other game (of any pairing) plays it.
    deals = [g.deal for g in remote]
    assert len(set(deals)) == len(deals) == 8 and min(deals) >= s.deals.deals and max(deals) < s.deals.deal_count
    assert len({g.seed for g in remote}) == 8 and not {g.seed for g in remote} & {g.seed for g in local}
    for g in games:
        assert g.index in s.deal_games(g.deal)
        assert all(games[i].deal == g.deal for i in s.deal_games(g.deal))
    # The remote still sits in both seats, alternately.
    assert sorted(g.seats.index("far") for g in remote) == [0] * 4 + [1] * 4


def test_remote_duplicate_keeps_duplicate_deals_and_the_config_is_validated() -> None:
    s = Schedule(_cfg(remote_duplicate=True), bytes(32))
    remote = [g for g in s if "far" in g.seats]
    assert sorted(g.deal for g in remote) == [0, 0, 0, 0, 1, 1, 1, 1]
    assert _cfg().no_show_s == 300 and _cfg(no_show_s=2.5).no_show_s == 2.5  # type: ignore[attr-defined]
    for bad in ({"no_show_s": 0}, {"no_show_s": "soon"}, {"remote_duplicate": "yes"}):
        with pytest.raises(ConfigError):
            _cfg(**bad)
    # The game limit is on by default in an event; an organiser may turn it off.
    assert _cfg().rules.max_hands == 100  # type: ignore[attr-defined]
    off = parse_config({"tournament": {}, "rules": {"max_hands": 0},
                        "participant": [{"name": "a", "bot": "random"}, {"name": "b", "bot": "simple"}]})
    assert off.rules.max_hands == 0


def test_deal_schedule_independent_groups_cover_every_game_once() -> None:
    for groups, seats, games, indep in ((3, 2, 6, {0, 2}), (4, 3, 12, {1}), (1, 2, 2, {0})):
        s = DealSchedule(groups, seats, games, independent=indep)
        owners: dict[int, list[int]] = {}
        for i in range(len(s)):
            owners.setdefault(s.slot(i).deal, []).append(i)
        assert all(list(s.deal_games(d)) == ix for d, ix in owners.items())
        for ix in owners.values():
            independent = {s.slot(i).group for i in ix} & indep
            assert (len(ix) == 1) if independent else (len(ix) == s.per_deal * (groups - len(indep)))


def _g(i: int, deal: int, seats: tuple[str, str], winner: str | None) -> GameResult:
    return GameResult(index=i, key=f"g{i}", deal=deal, seating=i % 2, seed="", seats=seats, scores=(0, 0), winner=winner,
                      termination="normal", culprit=None, reason="", hands=1, clocks={}, record={}, referee="",
                      table_id="", attempts=1, started=0.0, finished=0.0)


def test_the_statistics_of_an_independent_pairing_count_games_not_pairs() -> None:
    games = [_g(i, 10 + i, ("a", "far") if i % 2 == 0 else ("far", "a"), "a" if i < 5 else "far") for i in range(8)]
    rep = build_report("t", "round_robin", ["a", "far"], games, per_unit=2, independent=frozenset({"far"}))
    (p,) = [p for p in rep.pairs if "units" in p]
    assert p["units"] == 8 and p["unpaired"] == 0 and p["deals"] == "independent"
    assert list(p["cells"]) == [3, 0, 5]  # a's losses, draws, wins: a game is the unit
    assert "independent deals" in rep.to_text() and "8 games 3/0/5" in rep.to_text()
    # The same games read as duplicate deals would pair nothing (each deal has one game).
    (q,) = [p for p in build_report("t", "round_robin", ["a", "far"], games, per_unit=2).pairs if "units" in p]
    assert q["units"] == 0 and q["unpaired"] == 8


# ------------------------------------------------------------------ real runs
def test_two_bots_that_never_knock_end_at_the_game_limit(tmp_path: Path) -> None:
    parts = [local("p1", "--never-knock"), local("p2", "--never-knock")]
    cfg = write_config(tmp_path / "limit.toml", parts, rules={"max_hands": 3},
                       tournament={"seed": "limit", "games_per_pairing": 2})
    out = _run(cfg)
    games = _games(tmp_path / "limit.sqlite")
    assert len(games) == 2, out
    for g in games:
        assert g.termination == "hand_limit" and g.winner is None and g.culprit is None, g
        assert g.hands == 3 and tuple(g.scores) == (0, 0)
        replayed = Game.from_record(g.record, verify=True)
        assert replayed.termination == "hand_limit" and len(replayed.results) == 3
    assert "hand_limit 2" in out
    v = _verify(tmp_path / "limit.sqlite")
    assert v.returncode == 0, v.stdout + v.stderr


def test_a_remote_participant_gets_its_own_deals_and_verify_rebuilds_them(tmp_path: Path) -> None:
    parts = [local("local", "--random", "1"), {"name": "far", "remote": True, "token": "far-tok-1"}]
    cfg = write_config(tmp_path / "far.toml", parts, rules=FAST_RULES,
                       tournament={"seed": "far", "games_per_pairing": 4, "gateway": "tcp://127.0.0.1:0"},
                       clock={"move_ms": 10000})
    out = _run(cfg, remote=("far", "far-tok-1"))
    games = _games(tmp_path / "far.sqlite")
    assert len(games) == 4 and all(g.termination == "normal" for g in games), out
    # Four games, four deals: the remote never sees the cards of one game again.
    assert len({g.deal for g in games}) == 4 and len({g.seed for g in games}) == 4
    assert "independent deals" in out and "TRUSTS" not in out
    v = _verify(tmp_path / "far.sqlite")
    assert v.returncode == 0, v.stdout + v.stderr


def test_remote_duplicate_never_seats_a_remote_at_two_seatings_of_a_deal_at_once(tmp_path: Path) -> None:
    parts = [local("l1", "--random", "1"), local("l2", "--random", "2"),
             {"name": "far", "remote": True, "token": "far-tok-2"}]
    cfg = write_config(tmp_path / "dup.toml", parts, rules=FAST_RULES,
                       tournament={"seed": "dup", "games_per_pairing": 4, "gateway": "tcp://127.0.0.1:0",
                                   "remote_duplicate": True, "concurrency": 4},
                       clock={"move_ms": 10000})
    out = _run(cfg, remote=("far", "far-tok-2"))
    games = _games(tmp_path / "dup.sqlite")
    assert len(games) == 12, out
    mine = [g for g in games if "far" in g.seats]
    by_deal: dict[int, list[GameResult]] = {}
    for g in mine:
        by_deal.setdefault(g.deal, []).append(g)
    assert sorted(len(v) for v in by_deal.values()) == [4, 4]  # duplicate deals: 2 pairings x 2 seatings
    for gs in by_deal.values():
        gs.sort(key=lambda g: g.started)
        for before, after in itertools.pairwise(gs):
            assert before.finished <= after.started, (before.key, after.key)
    assert "TRUSTS" in out
    st = ResultsStore.open_existing(tmp_path / "dup.sqlite")
    try:
        assert any("TRUSTS" in n for n in report_from_store(st).deals_notes)
    finally:
        st.close()


def test_a_remote_no_show_forfeits_its_games_and_the_others_play_meanwhile(tmp_path: Path) -> None:
    # The absent remote comes first in the file, so every one of its games comes before
    # the local pairing's in the schedule: those must not wait for it.
    parts = [{"name": "ghost", "remote": True, "token": "ghost-tok"},
             local("a", "--random", "1"), local("b", "--random", "2")]
    cfg = write_config(tmp_path / "ns.toml", parts, rules=FAST_RULES,
                       tournament={"seed": "ns", "games_per_pairing": 2, "gateway": "tcp://127.0.0.1:0", "no_show_s": 4},
                       clock={"move_ms": 10000})
    out = _run(cfg)
    games = _games(tmp_path / "ns.sqlite")
    assert len(games) == 6, out
    ghost = [g for g in games if "ghost" in g.seats]
    others = [g for g in games if "ghost" not in g.seats]
    assert len(ghost) == 4 and len(others) == 2
    for g in ghost:
        assert g.termination == "no_show" and g.culprit == "ghost" and g.winner != "ghost", g
        assert "no_show_s" in g.reason and "ghost" in g.reason
    assert all(g.termination == "normal" for g in others)
    # The local games did not wait for the absent one: both began before any no-show forfeit.
    assert max(g.started for g in others) < min(g.started for g in ghost)
    st = ResultsStore.open_existing(tmp_path / "ns.sqlite")
    try:
        rep = report_from_store(st)
    finally:
        st.close()
    assert {s.name: s.forfeits for s in rep.standings}["ghost"] == 4
    v = _verify(tmp_path / "ns.sqlite")
    assert v.returncode == 0, v.stdout + v.stderr
