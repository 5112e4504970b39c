"""The Python SDK against a real referee subprocess over loopback: handshake and token,
errors with the referee's code and sentence, full games, resuming with the token
(on demand, and automatically after the referee fell silent), the asyncio client."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from collections.abc import Callable

import pytest

from clients.bots.random_bot import RandomBot
from clients.bots.simple import SimpleBot, simple_choice
from clients.match_referee import RefereeProcess
from clients.sdk import (
    AdviceReceived,
    AdvisePrompt,
    AsyncClient,
    BotDriver,
    Client,
    ConnectionLost,
    Disconnected,
    ErrorMessage,
    GameEnd,
    GameStart,
    HandEnd,
    Message,
    MoveEvent,
    Prompt,
    Reconnected,
    RefereeError,
    Snapshot,
    drive,
    run_bot,
)
from clients.sdk.runner import Inbox
from okgin import Action, View


def test_handshake_token_and_errors(referee: RefereeProcess) -> None:
    with Client(referee.endpoint, "tester") as c:
        w = c.connect()
        assert w.role == "player" and not w.resumed and len(w.token) == 32 and c.token == w.token
        assert w.heartbeat_ms == 5000 and w.liveness == 3
        with pytest.raises(RefereeError) as e:
            c.join("not a valid name!")
        assert (e.value.code, e.value.name, e.value.group) == (1003, "bad_message", "framing")
        assert "table name" in e.value.message and e.value.request == "join"
        with pytest.raises(RefereeError) as e:
            c.create_table(table="x")
        assert (e.value.code, e.value.name) == (2004, "forbidden")
        with pytest.raises(RefereeError) as e:
            c.resign("nowhere")
        assert e.value.name in ("not_seated", "no_such_table") and e.value.message
        # A fire-and-forget act comes back as an ErrorMessage in the stream.
        c.act("nowhere", 1, Action("pass"))
        m = c.recv(timeout=5)
        assert isinstance(m, ErrorMessage) and m.request == "act" and m.exception().code == m.code
        assert c.ping() > 0
        assert c.list_tables() == []
    with pytest.raises(RefereeError) as e:
        Client(referee.endpoint, "thief", token="0" * 32).connect()
    assert (e.value.code, e.value.name) == (2003, "bad_token")


def test_two_bots_play_games_through_run_bot(referee: RefereeProcess) -> None:
    ends: dict[str, list[GameEnd]] = {}

    def play(key: str, bot: Callable[[], object]) -> None:
        ends[key] = run_bot(bot, referee.endpoint, table="duo", games=2)  # type: ignore[arg-type]

    t = threading.Thread(target=play, args=("random", lambda: RandomBot(7)))
    t.start()
    play("simple", lambda: SimpleBot())
    t.join(60)
    assert not t.is_alive(), "the random bot's games did not end within 60 s"
    assert [e.game for e in ends["simple"]] == [e.game for e in ends["random"]] == [1, 2]
    for a, b in zip(ends["simple"], ends["random"], strict=True):
        assert a.final == b.final and a.termination == "normal"
        assert a.winner == a.view.seat  # type: ignore[union-attr]  # simple beats random


def _drive_until_end(
    c: Client, driver: BotDriver, seen: list[Message], on_prompt: Callable[[int], None] | None = None
) -> GameEnd:
    prompts = 0
    while True:
        m = c.recv(timeout=30)
        assert m is not None, "the referee went quiet"
        seen.append(m)
        if isinstance(m, Prompt) and on_prompt is not None:
            prompts += 1
            on_prompt(prompts)
        for out in driver.handle(m):
            c.send(out)
        if isinstance(m, GameEnd):
            return m


def test_resume_with_the_token_mid_game(referee: RefereeProcess, spawn_bot: Callable[..., object]) -> None:
    c = Client(referee.endpoint, "resumer")
    c.connect()
    token = c.token
    driver = BotDriver(SimpleBot())
    driver.handle(c.join("resume-me", seat=0))
    spawn_bot("random", "--connect", referee.endpoint, "--table", "resume-me", "--seed", "3")
    seen: list[Message] = []
    dropped: list[int] = []

    def drop_then_resume(n: int) -> None:
        if n == 3 and not dropped:
            dropped.append(n)
            # The prompt just received (seq pending) is left unanswered: the connection
            # dies, and a new one resumes with the token alone.
            c.drop_connection()
            w = c.reconnect()
            assert w.resumed and w.token == token

    # Answer prompts through the driver, except that the 3rd prompt triggers the cut
    # before it is answered (on_prompt runs before handle()).
    end = _drive_until_end(c, driver, seen, drop_then_resume)
    c.close()
    assert end.termination == "normal" and c.reconnects == 1
    i = next(k for k, m in enumerate(seen) if isinstance(m, Reconnected))
    assert seen[i].welcome.token == token  # type: ignore[attr-defined]
    after = seen[i + 1 :]
    assert isinstance(after[0], Snapshot) and after[0].table == "resume-me" and after[0].seat == 0
    # The unanswered prompt comes again with the same seq.
    cut = [m for m in seen[:i] if isinstance(m, Prompt)][-1]
    again = next(m for m in after if isinstance(m, Prompt))
    assert again.seq == cut.seq


def test_automatic_resume_after_the_referee_falls_silent(fast_referee: RefereeProcess, spawn_bot: Callable[..., object]) -> None:
    """The referee is frozen (SIGSTOP) longer than liveness x heartbeat: the client
    notices the silence, reconnects with its token once the referee answers again, and
    the game goes on to its end."""
    referee = fast_referee
    c = Client(referee.endpoint, "patient")
    c.connect()
    driver = BotDriver(SimpleBot())
    driver.handle(c.join("freeze", seat=0))
    spawn_bot("simple", "--connect", referee.endpoint, "--table", "freeze")
    seen: list[Message] = []
    frozen: list[bool] = []

    def freeze(n: int) -> None:
        if n == 2 and not frozen:
            frozen.append(True)
            os.kill(referee.proc.pid, signal.SIGSTOP)
            threading.Timer(1.5, os.kill, (referee.proc.pid, signal.SIGCONT)).start()

    end = _drive_until_end(c, driver, seen, freeze)
    c.close()
    assert end.termination == "normal"
    kinds = [type(m).__name__ for m in seen]
    assert "Disconnected" in kinds and "Reconnected" in kinds and c.reconnects >= 1
    assert kinds.index("Disconnected") < kinds.index("Reconnected")


def test_a_lost_session_is_reported(start_referee: Callable[..., RefereeProcess]) -> None:
    ref = start_referee("--heartbeat-ms", "100", "--liveness", "2")
    c = Client(ref.endpoint, "lonely", reconnect_timeout=1.0)
    c.connect()
    ref.stop()
    with pytest.raises(ConnectionLost):
        while True:
            c.recv(timeout=5)


# ----------------------------------------------------------------- asyncio client
async def _human(client: AsyncClient, table: str, seen: list[Message], drop_at: int | None = None) -> GameEnd:
    """A 'human' that plays simple's moves through the asyncio API, waiting briefly for
    advice as captain and advising as sitter."""
    prompts = 0
    pending_advice: dict[int, AdviceReceived] = {}
    async for m in client:
        seen.append(m)
        if isinstance(m, AdviceReceived):
            pending_advice[m.seq] = m
        elif isinstance(m, AdvisePrompt):
            try:
                await client.advise(m.table, m.seq, simple_choice(m.view, m.legal), "from the async sitter")
            except RefereeError as e:
                assert e.name in ("advice_late", "stale_seq", "forbidden", "no_game")  # too late (§5.14; advice_late from 1.6)
        elif isinstance(m, Prompt):
            prompts += 1
            if drop_at is not None and prompts == drop_at:
                await client.drop_connection()
                w = await client.reconnect()
                assert w.resumed  # Reconnected, a snapshot and this prompt again follow
                continue
            if m.view.roles[m.seat] == "captain" and m.seq not in pending_advice:
                # Wait for the sitter's advice on this prompt: until the first advice of the
                # game has come, up to 20 s (inside the 60 s move clock: a bot sitter on a
                # loaded machine can take seconds, its advice after our move is refused as
                # advice_late, and a 0.5 s wait alone saw none in a whole game); then 0.5 s.
                deadline = time.monotonic() + (20.0 if not pending_advice else 0.5)
                while m.seq not in pending_advice and (left := deadline - time.monotonic()) > 0:
                    nxt = await client.next(timeout=left)
                    if nxt is None:
                        break
                    seen.append(nxt)
                    if isinstance(nxt, AdviceReceived):
                        pending_advice[nxt.seq] = nxt
            await client.act(m.table, m.seq, simple_choice(m.view, m.legal))
        elif isinstance(m, GameEnd):
            return m
    raise AssertionError("the stream ended before the game did")


async def test_async_client_plays_a_box_game_with_advice(referee: RefereeProcess, spawn_bot: Callable[..., object]) -> None:
    client = AsyncClient(referee.endpoint, "ann")
    w = await client.connect()
    assert w.token == client.token
    with pytest.raises(RefereeError) as e:
        await client.join("bad name")
    assert e.value.code == 1003
    seated = await client.join("box-table", variant="box")
    assert seated.num_seats == 3 and seated.rules.variant == "box"
    for seed in ("1", "2"):
        spawn_bot("simple", "--connect", referee.endpoint, "--table", "box-table", "--seed", seed)
    seen: list[Message] = []
    end = await asyncio.wait_for(_human(client, "box-table", seen), 120)
    await client.close()
    assert end.termination == "normal"
    assert any(isinstance(m, GameStart) for m in seen) and any(isinstance(m, HandEnd) for m in seen)
    assert any(isinstance(m, MoveEvent) and isinstance(m.view, View) for m in seen)
    assert any(isinstance(m, AdvisePrompt) for m in seen), "never sat out"
    assert any(isinstance(m, AdviceReceived) and m.advice.text == "I would " + str(m.advice.action) for m in seen)


async def test_async_client_resumes_with_its_token(referee: RefereeProcess, spawn_bot: Callable[..., object]) -> None:
    client = AsyncClient(referee.endpoint, "bea")
    await client.connect()
    await client.join("async-resume", seat=1)
    spawn_bot("random", "--connect", referee.endpoint, "--table", "async-resume")
    seen: list[Message] = []
    end = await asyncio.wait_for(_human(client, "async-resume", seen, drop_at=2), 120)
    await client.close()
    assert end.termination == "normal" and client.reconnects == 1
    i = next(k for k, m in enumerate(seen) if isinstance(m, Reconnected))
    assert isinstance(seen[i + 1], Snapshot)
    cut = [m for m in seen[:i] if isinstance(m, Prompt)][-1]
    assert next(m for m in seen[i:] if isinstance(m, Prompt)).seq == cut.seq


async def test_async_client_notices_silence_and_resumes(fast_referee: RefereeProcess, spawn_bot: Callable[..., object]) -> None:
    referee = fast_referee
    client = AsyncClient(referee.endpoint, "cid")
    await client.connect()
    await client.join("async-freeze", seat=0)
    spawn_bot("simple", "--connect", referee.endpoint, "--table", "async-freeze")
    m = await client.next(timeout=30)
    while not isinstance(m, Prompt):
        m = await client.next(timeout=30)
    os.kill(referee.proc.pid, signal.SIGSTOP)
    try:
        d = await client.next(timeout=10)
        assert isinstance(d, Disconnected)
    finally:
        time.sleep(0.3)
        os.kill(referee.proc.pid, signal.SIGCONT)
    r = await client.next(timeout=30)
    while not isinstance(r, Reconnected):
        r = await client.next(timeout=30)
    assert r.welcome.resumed
    seen: list[Message] = []
    end = await asyncio.wait_for(_human(client, "async-freeze", seen), 120)
    await client.close()
    assert end.termination == "normal"


async def test_async_spectator_sees_no_private_card(referee: RefereeProcess, spawn_bot: Callable[..., object]) -> None:
    """The TUI's watch path: a spectator gets a snapshot then the public feed, and no
    view in it holds a hand or a card drawn from the stock."""
    watcher = AsyncClient(referee.endpoint, "eve", role="spectator")
    await watcher.connect()
    # The second bot starts only once the watch holds: a game cannot start with one seat
    # taken, so the feed from game_start on is the watcher's whatever the machine's load
    # (spawning both at once let a loaded test watch a game that had already ended: a
    # 'finished' snapshot, then nothing).
    spawn_bot("simple", "--connect", referee.endpoint, "--table", "show")
    snap = None
    deadline = time.monotonic() + 60
    while snap is None:  # the table exists once the first bot has joined
        try:
            snap = await watcher.watch("show")
        except RefereeError as e:
            assert e.name == "no_such_table" and time.monotonic() < deadline, e
            await asyncio.sleep(0.05)
    assert isinstance(snap, Snapshot) and snap.seat is None and snap.status == "waiting", snap
    spawn_bot("random", "--connect", referee.endpoint, "--table", "show")
    events = 0
    while True:
        m = await watcher.next(timeout=60)
        assert m is not None
        if isinstance(m, MoveEvent):
            events += 1
            if m.move.kind == "draw_stock":
                assert m.move.card is None
            if m.view is not None:
                assert m.view.hand is None and m.view.all_hands is None and m.view.stock is None
        if isinstance(m, GameEnd):
            break
    await watcher.close()
    assert events > 0


class AdviceLogger(SimpleBot):
    """simple, logging what advice it got and what its view showed when choosing."""

    def __init__(self) -> None:
        super().__init__()
        self.log: list[tuple[str, object]] = []

    def on_advice(self, advice, view):  # type: ignore[no-untyped-def]
        self.log.append(("advice", advice))

    def choose(self, view: View, legal: list[Action]) -> Action:
        self.log.append(("choose", view.advice[-1] if view.advice and view.roles[view.seat] == "captain" else None))
        return super().choose(view, legal)


def test_a_captain_that_listens_gets_the_advice_before_choosing(
    referee: RefereeProcess, spawn_bot: Callable[..., object]
) -> None:
    """As in-process: advise -> on_advice -> choose with the advice in view.advice (the
    runner holds the prompt briefly for the sitter's advice, for bots that listen)."""
    bot = AdviceLogger()
    # The named table deals from a random seed, and advice that comes after the captain's
    # move is legal (protocol.md §5.14): play up to three games so that this bot is a
    # captain advised in time at least once, whatever the deal and the machine's load.
    for seed in ("1", "2"):
        spawn_bot(
            "simple", "--connect", referee.endpoint, "--table", "listen", "--variant", "box", "--seed", seed, "--games", "3"
        )
    ends = run_bot(bot, referee.endpoint, table="listen", variant="box", games=3)
    assert ends and all(e.termination == "normal" for e in ends)
    advised = [i for i, (k, _) in enumerate(bot.log) if k == "advice" and i + 1 < len(bot.log)]
    assert advised, "this bot was never a captain advised by simple in three games"
    for i in advised:
        kind, shown = bot.log[i + 1]
        assert kind == "choose" and shown == bot.log[i][1]


async def test_async_client_resumes_after_a_referee_restart(tmp_path, spawn_bot: Callable[..., object]) -> None:  # type: ignore[no-untyped-def]
    """Protocol 1.2 §10.1: the referee is killed (-9) and restarted with --recover on the
    same endpoint; the first message of the welcomed client is answered hello_first, and
    the client resumes with its token at once and finishes the game."""
    first = RefereeProcess(tmp_path, ["--recover"])
    second = None
    client = AsyncClient(first.endpoint, "phoenix")
    try:
        await client.connect()
        await client.join("crash", seat=0)
        spawn_bot("simple", "--connect", first.endpoint, "--table", "crash")
        m = await client.next(timeout=30)
        while not isinstance(m, Prompt):
            m = await client.next(timeout=30)
        first.proc.kill()
        first.proc.wait(30)
        second = RefereeProcess(tmp_path, ["--recover", "--bind", first.endpoint], log_path=tmp_path / "second.log")
        with pytest.raises(RefereeError) as e:
            await client.ping()  # any message will do: the new process does not know us
        assert e.value.name == "hello_first"
        d = await client.next(timeout=30)
        while not isinstance(d, Disconnected):
            d = await client.next(timeout=30)
        assert "restarted" in d.reason
        r = await client.next(timeout=30)
        while not isinstance(r, Reconnected):
            r = await client.next(timeout=30)
        assert r.welcome.resumed
        seen: list[Message] = []
        end = await asyncio.wait_for(_human(client, "crash", seen), 120)
        assert end.termination == "normal"
        assert any(isinstance(x, Prompt) and x.seq == m.seq for x in seen), "the pending prompt came again, same seq"
    finally:
        await client.close()
        first.stop()
        if second is not None:
            second.stop()


class ChoiceLogger(SimpleBot):
    """simple, noting each choice (for the order of hook and choice)."""

    def __init__(self, log: list[tuple[str, int]]) -> None:
        super().__init__()
        self.log = log

    def choose(self, view: View, legal: list[Action]) -> Action:
        self.log.append(("choose", len(view.events)))
        return super().choose(view, legal)


def test_drive_asks_before_prompt_once_per_prompt_and_stops_on_its_event(referee: RefereeProcess) -> None:
    """The public hook a launcher paces its bots with (okgin play's house): it hears each
    prompt of this seat once, before the bot chooses, and may hold messages meanwhile
    (they reach the bot afterwards, in order); ``stop`` ends the drive."""
    other: list[GameEnd] = []
    t = threading.Thread(target=lambda: other.extend(run_bot(RandomBot(3), referee.endpoint, table="hook", games=1)))
    t.start()
    log: list[tuple[str, int]] = []
    stop = threading.Event()
    with Client(referee.endpoint, "hooked") as c:
        c.connect()
        driver = BotDriver(ChoiceLogger(log))
        driver.handle(c.join("hook"))

        def before_prompt(p: Prompt, inbox: Inbox) -> None:
            assert not driver.answered(p.seq)
            log.append(("hook", len(p.view.events)))
            inbox.hold(lambda: False, 0.01)  # a short pause, reading the socket meanwhile
            if sum(1 for k, _ in log if k == "hook") == 6:
                stop.set()  # the sixth prompt is still answered; then the drive ends

        ends = drive(c, driver, 1, before_prompt=before_prompt, stop=stop)
        hooks = [n for k, n in log if k == "hook"]
        chosen = [n for k, n in log if k == "choose"]
        if ends:  # the game ended before a sixth prompt of ours (a quick knock)
            assert ends[0].termination == "normal" and len(hooks) < 6
        else:
            assert len(hooks) == 6 and stop.is_set()
            c.resign("hook")  # so that the other bot's game ends
        assert hooks == chosen and log[0][0] == "hook"
        assert [k for k, _ in log] == ["hook", "choose"] * len(hooks)  # each hook right before its choice
    t.join(60)
    assert not t.is_alive() and other, "the other bot's game did not end"
