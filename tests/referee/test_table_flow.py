"""The table's game flow without I/O (referee/table/flow.py): inputs in, frames and timers out.

No socket, no event loop, no clock: each test builds a table's parts, hands the flow an
input and the time, and reads what it asked for: the frames in order (``feed.sends``),
the move timer (``pending.deadline``), the full-feed releases due (``feed.releases``).
The last tests drive the IO shell (``Table``) with the referee's ``Host``, its timers recorded, so
the shell's own work (sending in order, setting and cancelling the move timer) is
checked without a loop either.
"""

from __future__ import annotations

from typing import Any

import msgpack
import pytest

from okgin import RuleSet
from okgin.protocol import ProtocolError, encode
from okgin.protocol.settings import Clock, Policies
from referee.config import RefereeConfig
from referee.sessions import Session
from referee.table import REVEAL_DEFERRED, Table
from referee.table.deals import DealSecrets
from referee.table.feed import Feed
from referee.table.flow import GameFlow
from referee.table.fullfeed import FullFeed
from referee.table.seating import Seating
from referee.tablehost import Host


class Timers:
    """A stand-in for the loop's call_at/call_later: it records, it never runs."""

    class Handle:
        def __init__(self, when: float, fn: Any, args: tuple[Any, ...]) -> None:
            self.when, self.fn, self.args, self.cancelled = when, fn, args, False

        def cancel(self) -> None:
            self.cancelled = True

    def __init__(self) -> None:
        self.set: list[Timers.Handle] = []

    def call_at(self, when: float, fn: Any, *args: Any) -> Any:
        h = Timers.Handle(when, fn, args)
        self.set.append(h)
        return h

    def call_later(self, delay: float, fn: Any, *args: Any) -> Any:
        return self.call_at(-delay, fn, *args)  # (a delay, kept apart from absolute times by its sign)

    def live(self) -> list[Timers.Handle]:
        return [h for h in self.set if not h.cancelled]


def make_flow(
    clock: Clock | None = None,
    policies: Policies | None = None,
    full_delay_ms: int | None = None,
    reveal: str = "game_end",
    variant: str = "oklahoma",
    seed: int = 7,
) -> tuple[GameFlow, list[Session]]:
    rules = RuleSet(variant=variant)  # type: ignore[call-arg]
    seating = Seating("t", rules.num_players, Timers().call_later)
    full = FullFeed(full_delay_ms) if full_delay_ms is not None else None
    feed = Feed(seating, full)
    flow = GameFlow("t", rules, clock or Clock(), policies or Policies(), seating, feed, DealSecrets(seed, reveal))
    players = [Session(f"tok{i}", f"p{i}", "player", rid=b"r%d" % i) for i in range(rules.num_players)]
    for i, s in enumerate(players):
        seating.sit(s, i)
    return flow, players


def take(flow: GameFlow) -> list[tuple[str, dict[str, Any]]]:
    """The frames the flow asked to send since the last take: (recipient's name, message)."""
    out = [(s.name, msgpack.unpackb(d, raw=False)) for s, d in flow.feed.sends]
    flow.feed.sends.clear()
    return out


def start(flow: GameFlow, now: float = 0.0) -> list[tuple[str, dict[str, Any]]]:
    flow.deal()
    flow.announce({}, now)
    return take(flow)


def act_msg(flow: GameFlow, action: dict[str, Any] | None = None) -> dict[str, Any]:
    p = flow.pending
    assert p is not None
    return {"type": "act", "table": "t", "seq": p.seq, "action": action or flow.views.legal()[0]}


def test_a_deal_announces_the_game_then_prompts_the_first_seat() -> None:
    flow, _ = make_flow()
    sent = start(flow)
    assert [(who, m["type"]) for who, m in sent] == [("p0", "game_start"), ("p1", "game_start"), (sent[-1][0], "prompt")]
    p = flow.pending
    assert p is not None and sent[-1][0] == f"p{p.seat}" and sent[-1][1]["seq"] == p.seq
    assert "seed" not in sent[0][1] and sent[0][1]["seed_hash"] == flow.secrets.seed_hash  # a commitment, no seed
    assert p.deadline is None  # an untimed move: no timer for the shell to set


def test_an_act_gives_the_next_seat_its_event_then_its_prompt_before_the_others_hear() -> None:
    flow, players = make_flow()
    start(flow)
    p = flow.pending
    assert p is not None
    before = p.seq
    assert flow.act(players[p.seat], p.seat, act_msg(flow), None, 0.5) is True
    sent = take(flow)
    q = flow.pending
    assert q is not None and q.seq == before + 1
    nxt = f"p{q.seat}"
    assert [(who, m["type"]) for who, m in sent[:2]] == [(nxt, "event"), (nxt, "prompt")]
    assert {who for who, m in sent[2:] if m["type"] == "event"} == {f"p{i}" for i in range(2)} - {nxt}
    assert all(m["n"] == 1 for _, m in sent if m["type"] == "event")


def test_a_refused_act_raises_and_changes_nothing() -> None:
    flow, players = make_flow()
    start(flow)
    p = flow.pending
    assert p is not None
    other = 1 - p.seat
    with pytest.raises(ProtocolError) as e:
        flow.act(players[other], other, {"type": "act", "table": "t", "seq": p.seq, "action": {"kind": "pass"}}, 1, 0.1)
    assert e.value.name == "not_your_turn"
    with pytest.raises(ProtocolError) as e:
        flow.act(players[p.seat], p.seat, {**act_msg(flow), "seq": p.seq + 5}, 1, 0.1)
    assert e.value.name == "stale_seq"
    assert flow.pending is p and flow.feed.sends == [] and flow.n == 0


def test_an_illegal_act_errs_and_reprompts_with_its_start_then_forfeits_at_the_limit() -> None:
    flow, players = make_flow(clock=Clock(move_ms=10_000), policies=Policies(illegal="forfeit", illegal_limit=2))
    start(flow, now=100.0)
    p = flow.pending
    assert p is not None and p.deadline == pytest.approx(100.0 + 11.0)
    seat = p.seat
    bad = {"kind": "discard", "card": "ZZ"}
    assert flow.act(players[seat], seat, act_msg(flow, bad), 9, 101.0) is True  # the first refusal is free
    sent = take(flow)
    assert [m["type"] for _, m in sent] == ["error", "prompt"] and sent[0][1]["id"] == 9
    assert sent[1][1]["error"]["name"] == "bad_action"
    q = flow.pending
    assert q is not None and q.seq == p.seq + 1 and q.start == p.start and q.deadline == p.deadline  # the same move's clock
    assert flow.act(players[seat], seat, act_msg(flow, bad), 10, 102.0) is False  # the second is charged
    sent = take(flow)
    assert [m["type"] for _, m in sent] == ["error", "game_end", "game_end"]
    assert sent[-1][1]["at_fault"] == seat and sent[-1][1]["termination"] == "illegal"
    assert flow.pending is None and flow.changed  # the shell saves the table's state


def test_a_deadline_plays_the_default_move_and_charges_the_bank() -> None:
    clock = Clock(bank_ms=5000, increment_ms=100, grace_ms=200)
    flow, _ = make_flow(clock=clock, policies=Policies(timeout="default_move"))
    start(flow, now=0.0)
    p = flow.pending
    assert p is not None and p.allowance_ms == 5000 and p.deadline == pytest.approx(5.2)
    assert not flow.deadline_passed(p.seq + 1, 6.0)  # a stale timer: nothing happens
    assert flow.feed.sends == []
    assert flow.deadline_passed(p.seq, 5.2)
    sent = take(flow)
    assert any(m["type"] == "event" and m["auto"] for _, m in sent)
    banks = flow.prompts.clocks.banks()
    assert banks is not None and banks[p.seat] == 100 and banks[1 - p.seat] == 5000


def test_an_answer_after_the_grace_is_refused_after_the_timeout_policy() -> None:
    flow, players = make_flow(clock=Clock(move_ms=1000, grace_ms=100))
    start(flow, now=0.0)
    p = flow.pending
    assert p is not None
    with pytest.raises(ProtocolError) as e:
        flow.act(players[p.seat], p.seat, act_msg(flow), None, 1.2)
    assert e.value.name == "stale_seq" and "forfeit" in e.value.message
    assert [m["type"] for _, m in take(flow)] == ["game_end", "game_end"]


def test_a_bank_pays_for_a_move_and_earns_the_increment() -> None:
    flow, players = make_flow(clock=Clock(bank_ms=5000, increment_ms=100))
    start(flow, now=10.0)
    p = flow.pending
    assert p is not None
    flow.act(players[p.seat], p.seat, act_msg(flow), None, 11.5)
    banks = flow.prompts.clocks.banks()
    assert banks is not None and banks[p.seat] == 5000 - 1500 + 100
    prompt = next(m for _, m in take(flow) if m["type"] == "prompt")
    q = flow.pending
    assert q is not None and prompt["clock"]["banks_ms"] == banks and prompt["clock"]["remaining_ms"] == banks[q.seat]


def quick(legal: list[dict[str, Any]]) -> dict[str, Any]:
    """Knock when allowed, else pass or draw from the stock, else the first action (hands end soon)."""
    for kinds in (("knock", "big_gin"), ("pass", "draw_stock")):
        for a in legal:
            if a["kind"] in kinds:
                return a
    return legal[0]


def play_until(flow: GameFlow, players: list[Session], done: Any, limit: int = 2000) -> list[tuple[str, dict[str, Any]]]:
    """Answer each prompt (:func:`quick`) until ``done()``."""
    sent: list[tuple[str, dict[str, Any]]] = []
    t = 1.0
    for _ in range(limit):
        if done():
            return sent
        p = flow.pending
        assert p is not None
        flow.act(players[p.seat], p.seat, act_msg(flow, quick(flow.views.legal())), None, t)
        sent += take(flow)
        t += 0.01
    raise AssertionError("not done")


def test_the_full_feed_holds_a_hand_until_it_ends_then_one_release_is_due() -> None:
    flow, players = make_flow(full_delay_ms=500)
    watcher = Session("w", "w", "admin", rid=b"w")
    flow.seating.add_watcher(watcher, True)
    start(flow)
    full = flow.feed.full
    assert full is not None and len(full.held) == 1 and flow.feed.releases == 0  # game_start, held
    sent = play_until(flow, players, lambda: flow.feed.releases > 0)
    assert all(who != "w" for who, _ in sent)  # nothing reaches the full watcher by itself
    assert any(m["type"] == "hand_end" for _, m in sent) and flow.feed.releases == 1 and len(full.out) == 1
    flow.feed.release_full()
    released = take(flow)
    assert released and {who for who, _ in released} == {"w"} and released[0][1]["type"] == "game_start"
    assert released[-1][1]["type"] == "hand_end"


def test_a_deferred_table_ends_with_null_secrets_and_keeps_them_for_reveal() -> None:
    flow, _ = make_flow(reveal=REVEAL_DEFERRED, seed=99)
    start(flow)
    flow.forfeit(0, "resigned")
    ends = [m for _, m in take(flow) if m["type"] == "game_end"]
    assert ends and all(m["seed"] is None and m["salt"] is None for m in ends)
    seed, salt, hash_ = flow.secrets.history[1]
    assert seed == 99 and salt and hash_ == ends[0]["seed_hash"]


def test_a_disconnected_seat_is_kept_its_missed_game_end() -> None:
    flow, players = make_flow()
    start(flow)
    players[1].rid = None
    flow.forfeit(0, "resigned")
    assert {who for who, m in take(flow) if m["type"] == "game_end"} == {"p0"}
    assert flow.missed_end[1][0] is players[1]


def test_box_advice_reaches_the_captain_and_is_capped_per_prompt() -> None:
    flow, players = make_flow(variant="box")
    start(flow)
    game = flow.game
    assert game is not None and game.roles is not None
    # play until the captain is to act
    for _ in range(50):
        p = flow.pending
        assert p is not None
        if p.seat == game.roles[1]:
            break
        flow.act(players[p.seat], p.seat, act_msg(flow), None, 1.0)
    take(flow)
    p = flow.pending
    assert p is not None and p.seat == game.roles[1]
    sitter = game.roles[2]
    msg = {"type": "advise", "table": "t", "seq": p.seq, "text": "knock"}
    flow.advise(players[sitter], sitter, msg, 3)
    sent = take(flow)
    assert [(who, m["type"]) for who, m in sent] == [(f"p{sitter}", "ok"), (f"p{p.seat}", "advice")]
    flow.advise(players[sitter], sitter, msg, 4)
    take(flow)
    with pytest.raises(ProtocolError) as e:
        flow.advise(players[sitter], sitter, msg, 5)
    assert e.value.name == "limit_reached" and flow.feed.sends == []


NOW = [50.0]  # make_table's clock: tests move it on


def make_table(clock: Clock | None = None, policies: Policies | None = None) -> tuple[Table, Timers, list[bytes]]:
    """A Table with the referee's own Host, its sends recorded and its loop a :class:`Timers`;
    its clock reads ``NOW[0]`` (50.0 at the start)."""
    timers = Timers()
    out: list[bytes] = []
    NOW[0] = 50.0
    host = Host(
        RefereeConfig(journal_dir=None), "test", lambda: NOW[0], encode, lambda sess, msg: out.append(encode(msg)),
        lambda sess, data: out.append(data), lambda: None,
    )
    host.loop = timers  # type: ignore[assignment]  # (only call_at and call_later are used)
    return Table(host, "t", "admin", RuleSet(), clock or Clock(), policies or Policies(), seed=3), timers, out


def test_the_shell_sends_in_order_and_keeps_one_move_timer_on_the_pending_prompt() -> None:
    t, timers, out = make_table(clock=Clock(move_ms=2000, grace_ms=0))
    players = [Session(f"k{i}", f"p{i}", "player", rid=b"r%d" % i) for i in range(2)]
    for i, s in enumerate(players):
        t.sit(s, i)
    t.start_game()
    types = [msgpack.unpackb(d, raw=False)["type"] for d in out]
    assert types == ["game_start", "game_start", "prompt"]
    p = t.pending
    assert p is not None
    assert [(h.when, h.args) for h in timers.live()] == [(52.0, (p.seq,))]
    t.on_act(players[p.seat], p.seat, act_msg(t.flow), None)
    q = t.pending
    assert q is not None and [(h.when, h.args) for h in timers.live()] == [(52.0, (q.seq,))]  # the old one cancelled
    fired = timers.live()[0]
    fired.cancelled = True  # (it runs: a loop's handle is spent)
    NOW[0] = 52.0
    fired.fn(*fired.args)  # the deadline fires: the default policy forfeits
    assert t.status == "finished" and timers.live() == []


def test_a_snapshot_shows_no_banks_before_the_first_game_and_the_running_bank_during_it() -> None:
    t, _, _ = make_table(clock=Clock(bank_ms=4000))
    assert t.snapshot(None, False)["clocks"] is None
    players = [Session(f"k{i}", f"p{i}", "player", rid=b"r%d" % i) for i in range(2)]
    for i, s in enumerate(players):
        t.sit(s, i)
    t.start_game()
    assert t.snapshot(None, False)["clocks"] == [4000, 4000]  # (the host's clock stands still)


# ---------------------------------------------------------------- issue 28: time nobody is charged (protocol.md §7, §8)
def seated_table(policies: Policies | None = None) -> tuple[Table, Timers, list[Session]]:
    t, timers, _out = make_table(clock=Clock(move_ms=10_000, grace_ms=1000), policies=policies)
    players = [Session(f"k{i}", f"p{i}", "player", rid=b"r%d" % i) for i in range(2)]
    for i, s in enumerate(players):
        t.sit(s, i)
    t.start_game()
    return t, timers, players


def test_a_stall_of_the_referee_moves_the_running_move_on_and_its_timer_fires_again_later() -> None:
    """The referee did not run for 20 s (referee.stalls): the move's 10 s are still there
    after it, the timer that fires at the old deadline is set again, and an answer right
    after the stall is a move, not a timeout. Fails on the old main (no credit_stall)."""
    t, timers, players = seated_table()
    p = t.pending
    assert p is not None and p.deadline == 61.0
    NOW[0] = 55.0  # 5 s thought, then the referee stops for 20 s
    t.credit_stall(20.0)
    NOW[0] = 75.5  # past the old deadline
    assert p.deadline == 81.0
    old = timers.live()[0]
    old.cancelled = True
    old.fn(*old.args)  # the old timer fires late: not a timeout
    assert t.status == "playing" and t.pending is p
    assert [(h.when, h.args) for h in timers.live()] == [(81.0, (p.seq,))]
    assert t.flow.prompts.clock_state(p, NOW[0])["remaining_ms"] == 4500  # 10 s - 5 s - 0.5 s
    t.on_act(players[p.seat], p.seat, act_msg(t.flow), None)
    assert t.pending is not None and t.pending.seq != p.seq and t.status == "playing"


def test_the_away_clock_pauses_a_disconnected_seat_at_a_table_of_people_and_runs_at_others() -> None:
    t, timers, _players = seated_table(Policies(away_clock="pause"))
    p = t.pending
    assert p is not None
    NOW[0] = 53.0
    t.seat_away(p.seat, 52.0)  # silent since 52 (its last message and a heartbeat)
    assert p.deadline is None and timers.live() == []  # no timeout while away: the grace rules
    NOW[0] = 200.0
    assert t.flow.prompts.clock_state(p, NOW[0])["remaining_ms"] == 8000  # stopped at 2 s spent
    t.seat_back(p.seat)
    assert p.deadline == 209.0 and [(h.when, h.args) for h in timers.live()] == [(209.0, (p.seq,))]
    # At a table that runs the clock (competitions: the default), away changes nothing.
    t2, timers2, _ = seated_table()
    p2 = t2.pending
    assert p2 is not None
    t2.seat_away(p2.seat, 50.5)
    assert p2.deadline == 61.0 and len(timers2.live()) == 1


def test_a_move_already_late_when_its_seat_went_away_is_not_paused() -> None:
    t, _timers, _players = seated_table(Policies(away_clock="pause"))
    p = t.pending
    assert p is not None
    NOW[0] = 70.0
    t.seat_away(p.seat, 65.0)  # silent only after its deadline (61)
    assert p.deadline == 61.0 and p.paused_since is None


# ---------------------------------------------------------------- issue 28: an advice window for a person or an agent (1.6)
def to_captain(flow: GameFlow, players: list[Session], now: float) -> Any:
    """Play on (whoever is prompted) until the captain's prompt is pending; return it."""
    game = flow.game
    assert game is not None and game.roles is not None
    for _ in range(200):
        p = flow.pending
        assert p is not None
        if p.seat == game.roles[1]:
            return p
        flow.act(players[p.seat], p.seat, act_msg(flow), None, now)
    raise AssertionError("the captain was never prompted")


def test_a_captains_prompt_waits_for_a_persons_advice_then_goes_out_with_it() -> None:
    flow, players = make_flow(policies=Policies(advice_window_ms=5000), variant="box", clock=Clock(move_ms=10_000))
    for s in players:
        s.advice_wait, s.minor = True, 6  # people (or agents) all
    sent = start(flow, 1.0)
    game = flow.game
    assert game is not None and game.roles is not None
    captain, sitter = game.roles[1], game.roles[2]
    p = to_captain(flow, players, 1.0)
    sent += take(flow)
    # Held: no prompt for the captain yet; the sitter's advise_prompt says how long it waits.
    assert not [m for who, m in sent if who == f"p{captain}" and m["type"] == "prompt" and m["seq"] == p.seq]
    ap = [m for who, m in sent if who == f"p{sitter}" and m["type"] == "advise_prompt"]
    assert ap and ap[-1]["window_ms"] == 5000 and p.held_until == 6.0 and p.deadline == 6.0
    # The advice comes at 3.0: ok, the advice, and only now the captain's prompt, with its whole move.
    msg = {"type": "advise", "table": "t", "seq": p.seq, "action": flow.views.legal()[0]}
    flow.advise(players[sitter], sitter, msg, 9, 3.0)
    sent = take(flow)
    assert [(who, m["type"]) for who, m in sent] == [(f"p{sitter}", "ok"), (f"p{captain}", "advice"), (f"p{captain}", "prompt")]
    assert sent[-1][1]["clock"]["remaining_ms"] == 10_000 and p.held_until is None and p.deadline == 14.0
    # The captain plays; advice for that move now is late, and says so (1.5 sessions: stale_seq).
    flow.act(players[captain], captain, act_msg(flow), None, 4.0)
    take(flow)
    late = {**msg, "seq": p.seq}
    with pytest.raises(ProtocolError) as e:
        flow.advise(players[sitter], sitter, late, 10, 4.5)
    assert e.value.name == "advice_late" and "already played" in e.value.message
    players[sitter].minor = 5
    with pytest.raises(ProtocolError) as e:
        flow.advise(players[sitter], sitter, late, 11, 4.5)
    assert e.value.name == "stale_seq"


def test_without_advice_the_window_ends_and_a_bot_sitter_never_holds_the_captain() -> None:
    flow, players = make_flow(policies=Policies(advice_window_ms=2000), variant="box")
    start(flow)
    game = flow.game
    assert game is not None and game.roles is not None
    captain, sitter = game.roles[1], game.roles[2]
    p = to_captain(flow, players, 1.0)  # the sitter is a bot (no advice_wait): sent at once
    assert p.held_until is None
    players[sitter].advice_wait = True  # from the next prompt on, a person sits out
    flow.act(players[captain], captain, act_msg(flow), None, 2.0)
    q = to_captain(flow, players, 2.0)
    assert q.held_until == 4.0
    take(flow)
    assert flow.deadline_passed(q.seq, 3.9) is False  # not yet
    assert flow.deadline_passed(q.seq, 4.0) is True  # the window ends: the prompt goes out
    assert [(who, m["type"]) for who, m in take(flow)] == [(f"p{captain}", "prompt")]
    assert flow.status == "playing" and q.held_until is None and q.deadline is None  # untimed: no timeout
