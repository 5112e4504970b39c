"""Hosted bots (issue 27 item 2), with a real arena, real sandboxed bot processes and the real store.

Bots are ``tests/tournament/protobot.py`` (the protocol spoken directly, with ways to
misbehave), run by this interpreter (``sys.executable``): the system ``python3``'s okgin
may be another checkout's, which the sandbox does not show (as tests/tournament/test_sandbox.py).

One arena plays the whole story: two good bots pass their validation game against
themselves and then play rated duplicate deals until the budget stops them (counted in the
store, never timed); a crashing bot, an illegal one and a spy that tries to read another
bot's directory and the arena's database fail their validation, each with its reason. The
hostile submissions the submit command refuses need no arena.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from arenakit import ArenaProcess, add_accounts

from arena.keys import write_key_file
from arena.store import Store, state_db_url
from arena.submissions import copy_bot
from arena.submissions import main as submit_main
from competition.tournament.sandbox import probe
from okgin.launch import okgin_argv

PROTOBOT = Path(__file__).resolve().parents[1] / "tournament" / "protobot.py"
WAIT_S = 300.0  # bounds for a loaded machine, never asserted on
BUDGET = 2  # one deal: its two seatings; then the budget holds (a second deal would wait for the ratings gap)

pytestmark = pytest.mark.skipif(probe() is not None, reason=f"no bubblewrap sandbox here: {probe()}")

SPY = '''
import os, sys
for path in sys.argv[1:]:
    try:
        if os.path.isdir(path):
            os.listdir(path)
        else:
            open(path, "rb").read(16)
        print("LEAKED", path, flush=True)
    except OSError as e:
        print("blocked", path, type(e).__name__, flush=True)
sys.exit(3)
'''

TOML = """show_up_ms = 5000
hosted_clock = "fast"
hosted_concurrency = 4
match_every_ms = 200
[clocks.standard]
move_ms = 60000
[clocks.fast]
move_ms = 5000
grace_ms = 2000
[rules]
target_score = 10
max_hands = 2
"""


def bot_dir(base: Path, name: str, script: str | None = None) -> Path:
    d = base / name
    d.mkdir(parents=True)
    if script is None:
        shutil.copy(PROTOBOT, d / "protobot.py")
    else:
        (d / "protobot.py").write_text(script)
    return d


def submit(state: Path, account: str, d: Path, command: str, *extra: str) -> int:
    return submit_main([account, str(d), "--command", command, "--state", str(state), *extra])


def wait_for(what: str, pred: Callable[[], bool], arena: ArenaProcess | None = None) -> None:
    """Poll ``pred`` (a look at the store or the log) until it holds; bounded, never asserted on time."""
    deadline = time.monotonic() + WAIT_S
    while not pred():
        if arena is not None and arena.proc.poll() is not None:
            raise AssertionError(f"the arena exited while waiting for {what}:\n{arena.stderr()[-3000:]}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}" + (f":\n{arena.stderr()[-3000:]}" if arena else ""))
        time.sleep(0.2)


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, ArenaProcess]]:
    base = tmp_path_factory.mktemp("hosted")
    state = base / "arena"
    keys = add_accounts(state, "alpha", "beta", "crashy", "cheat", "spy", "conn")
    write_key_file(base / "conn.key", keys["conn"])  # a connected account, for the events
    py = sys.executable
    assert submit(state, "alpha", bot_dir(base, "a"), f"{py} protobot.py {{endpoint}}") == 0  # submission 1
    assert submit(state, "beta", bot_dir(base, "b"), f"{py} protobot.py {{endpoint}} --random 7") == 0
    assert submit(state, "crashy", bot_dir(base, "c"), f"{py} protobot.py {{endpoint}} --crash-after 2") == 0
    assert submit(state, "cheat", bot_dir(base, "d"), f"{py} protobot.py {{endpoint}} --illegal-after 1") == 0
    targets = [str(state / "bots" / "1" / "protobot.py"), str(state / "bots" / "1"), str(state / "arena.db"), str(state)]
    assert submit(state, "spy", bot_dir(base, "e", SPY), f"{py} protobot.py {' '.join(targets)}") == 0
    arena = ArenaProcess(state, shards=1, toml=TOML, extra=("--hosted-games-per-hour", str(BUDGET)))
    try:
        yield state, arena
    finally:
        arena.stop()


def statuses(state: Path) -> dict[str, tuple[str, str | None]]:
    with Store.open(state_db_url(state)) as store:
        return {s.account: (s.status, s.reason) for s in store.submissions()}


def test_bad_bots_fail_their_validation_with_the_reason(league: tuple[Path, ArenaProcess]) -> None:
    state, arena = league
    wait_for("every validation", lambda: all(s in ("active", "failed") for s, _ in statuses(state).values()), arena)
    st = statuses(state)
    assert st["alpha"] == ("active", None) and st["beta"] == ("active", None), st
    assert st["crashy"][0] == "failed" and st["crashy"][1].startswith("crash:"), st
    assert "exited with status" in st["crashy"][1]
    assert st["cheat"][0] == "failed" and st["cheat"][1].startswith("illegal move:"), st
    # The spy ran in its sandbox and could read neither another bot's directory nor the database.
    assert st["spy"][0] == "failed" and st["spy"][1].startswith("crash:"), st
    assert "blocked" in st["spy"][1] and "LEAKED" not in st["spy"][1], st["spy"][1]
    with Store.open(state_db_url(state)) as store:
        queue = store.submissions(["failed"])
        assert sorted(s.account for s in queue) == ["cheat", "crashy", "spy"]
        assert all(not s.games for s in queue)


def test_active_bots_play_rated_duplicate_deals_within_the_budget(league: tuple[Path, ArenaProcess]) -> None:
    state, arena = league

    def done() -> bool:
        with Store.open(state_db_url(state)) as store:
            games = [store.game(h.game_id) for h in store.hosted_games()]
        return len(games) >= BUDGET and all(g is not None and g.status != "playing" for g in games) \
            and "hosted budget reached" in arena.stderr()

    wait_for(f"{BUDGET} hosted games and the budget", done, arena)
    with Store.open(state_db_url(state)) as store:
        hosted = store.hosted_games()
        assert len(hosted) == BUDGET == store.count_hosted_games(0)  # the budget held: no game past it
        games = {h.game_id: store.game(h.game_id) for h in hosted}
        assert all(g is not None and g.status == "finished" and g.rated for g in games.values()), games
        by_deal: dict[str, list] = {}
        for h in hosted:
            by_deal.setdefault(h.deal, []).append(games[h.game_id])
            assert h.attempts == 1
        for deal, pair in by_deal.items():  # both seatings of one deal: one seed, seats swapped
            assert len(pair) == 2, deal
            assert pair[0].seed == pair[1].seed and pair[0].seed
            assert pair[0].players == tuple(reversed(pair[1].players))
            assert all(g.record and g.seed_hash for g in pair)
        for name in ("alpha", "beta"):
            r = store.rating(name, "oklahoma")
            assert r.games == BUDGET and r.deviation < 350.0, r  # rated: the uncertainty fell
            assert len(store.history(name, "oklahoma")) == BUDGET
            assert store.submissions(account=name)[0].games == BUDGET
        assert store.rating("crashy", "oklahoma").games == 0
    # The operators' queue view.
    from arena.submissions import main_list

    assert main_list(["--state", str(state)]) == 0


def test_hostile_submissions_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "arena"
    add_accounts(state, "bot1")
    add_accounts(state, "ann", kind="human")
    py = sys.executable
    outside = tmp_path / "secret.txt"
    outside.write_text("the operator's")

    def refused(account: str, d: Path, command: str, needle: str, *extra: str) -> None:
        assert submit(state, account, d, command, *extra) == 2
        err = capsys.readouterr().err
        assert needle in err, err
        assert not [p for p in (state / "bots").iterdir()], "a refused submission left files"

    d = bot_dir(tmp_path, "links")
    (d / "key").symlink_to(outside)
    refused("bot1", d, f"{py} protobot.py {{endpoint}}", "leads outside")
    (d / "key").unlink()
    (d / "up").symlink_to("..")
    refused("bot1", d, f"{py} protobot.py {{endpoint}}", "leads outside")
    (d / "up").unlink()
    os.mkfifo(d / "pipe")
    refused("bot1", d, f"{py} protobot.py {{endpoint}}", "FIFO")
    (d / "pipe").unlink()
    refused("bot1", d, f"{py} protobot.py {{endpoint}} {{token}}", "token")
    refused("bot1", d, "./nothing-here", "file not found")
    refused("ann", d, f"{py} protobot.py {{endpoint}}", "human account")
    refused("nobody", d, f"{py} protobot.py {{endpoint}}", "no account named")
    big = bot_dir(tmp_path, "big")
    with open(big / "blob", "wb") as f:
        f.truncate(3 * 1024 * 1024)  # sparse on disk, 3 MB to read
    cfg = tmp_path / "small.toml"
    cfg.write_text(f'state = "{state}"\nhosted_max_mb = 1\n')
    assert submit_main(["bot1", str(big), "--command", f"{py} protobot.py {{endpoint}}", "--config", str(cfg)]) == 2
    assert "more than 1 MB" in capsys.readouterr().err
    assert not list((state / "bots").iterdir())
    # A link inside the directory is kept (relative), and the copy is the arena's own.
    (d / "same").symlink_to(d / "protobot.py")
    assert submit(state, "bot1", d, f"{py} protobot.py {{endpoint}}") == 0
    copy = state / "bots" / "1"
    assert os.readlink(copy / "same") == "protobot.py"
    assert (copy / "protobot.py").read_bytes() == PROTOBOT.read_bytes()
    assert oct((state / "bots").stat().st_mode & 0o777) == "0o700"
    with Store.open(state_db_url(state)) as store:
        (sub,) = store.submissions(account="bot1")
        assert (sub.status, sub.path, sub.files) == ("pending", str(copy), 2)


def test_copy_bounds_the_work_of_a_huge_directory(tmp_path: Path) -> None:
    """Counting stops the copy at the bound: a directory of many files costs what the bound allows."""
    src = tmp_path / "many"
    src.mkdir()
    for i in range(50):
        (src / f"f{i}").write_text("x")
    from arena.submissions import SubmitError

    with pytest.raises(SubmitError, match="more than 10 files"):
        copy_bot(src, tmp_path / "out", 10**9, 10)
    assert not (tmp_path / "out").exists()


def test_an_event_runs_through_the_tournament_and_stores_standings_and_verify(
        league: tuple[Path, ArenaProcess], capsys: pytest.CaptureFixture[str]) -> None:
    """Item 3: an admin schedules a round robin of two hosted accounts, a round robin of a
    hosted account and a connected one (``okgin bot --arena``, signed in and seeking unrated
    games, which no hosted bot takes), and a gauntlet with an account that is never signed in.
    The arena runs each through the tournament machinery (each results file verifies): the
    connected bot is sent its two event games (deals of their own) and plays them at the
    event's referee; the absent account forfeits its games as a tournament's no-show."""
    from arena.events import main as event_main

    state, arena = league
    wait_for("validations", lambda: statuses(state)["alpha"][0] == "active" and statuses(state)["beta"][0] == "active",
             arena)
    bot = subprocess.Popen(
        okgin_argv("bot", "random", "--arena", arena.endpoint, "--account", "conn", "--key-file",
                   str(state.parent / "conn.key"), "--games", "0", "--unrated"),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    try:
        assert event_main(["add", "friday", "--accounts", "alpha,beta", "--state", str(state)]) == 0
        assert event_main(["add", "mixed", "--accounts", "alpha,conn", "--state", str(state)]) == 0
        assert event_main(["add", "gauntlet", "--format", "gauntlet", "--accounts", "alpha,crashy", "--champion", "alpha",
                           "--state", str(state)]) == 0
        assert event_main(["add", "bad", "--accounts", "alpha", "--state", str(state)]) == 2  # one account is no event
        capsys.readouterr()

        def settled() -> bool:
            with Store.open(state_db_url(state)) as store:
                return all(e.status in ("finished", "failed") for e in store.events())

        wait_for("the events", settled, arena)
    finally:
        bot.kill()
        out, err = bot.communicate(timeout=30)
    with Store.open(state_db_url(state)) as store:
        friday, mixed, gauntlet = sorted(store.events(), key=lambda e: e.id)
    for ev in (friday, mixed, gauntlet):
        assert ev.status == "finished" and ev.error is None, ev
        assert ev.verified and {c["status"] for c in ev.verify} <= {"ok", "skip"}, ev.verify
        assert sum(r["games"] for r in ev.standings) == 2 * 2
    assert sorted(r["account"] for r in friday.standings) == ["alpha", "beta"]
    assert friday.results and Path(friday.results).is_file()
    # The connected account played both its games (no forfeit), told of each by the front.
    conn = next(r for r in mixed.standings if r["account"] == "conn")
    assert conn["games"] == 2 and conn["forfeits"] == 0 and conn["plays"] == "connected", mixed.standings
    assert out.count("arena game event-") == 2 and "no result from the arena" not in out, (out, err)  # game_over told
    # Never signed in: a no-show, its games forfeited.
    crashy = next(r for r in gauntlet.standings if r["account"] == "crashy")
    assert crashy["wins"] == 0 and crashy["games"] == 2, gauntlet.standings
    assert event_main(["show", str(friday.id), "--state", str(state)]) == 0
    shown = capsys.readouterr().out
    assert "alpha" in shown and "verify ok" in shown
