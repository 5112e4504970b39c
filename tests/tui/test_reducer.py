"""The reducer from protocol messages to the TUI's state, message by message, with the
wire forms of protocol.md §5 built from a real engine game and typed by the SDK's parser
(the one the TUI's network worker reads them with)."""

from __future__ import annotations

from clients.sdk.messages import parse_message
from clients.tui.messages import GameEnded, HandEnded, RefereeError
from clients.tui.model import TableState
from clients.tui.reducer import reduce as reduce_typed
from okgin import Action, Game, RuleSet

from .states import at, game_over


def reduce(state: TableState, wire: dict, now: float = 0.0) -> tuple:
    """The reducer, given a message as it comes off the wire."""
    return reduce_typed(state, parse_message(wire), now)


def start_msg(g: Game, seat: int | None, table: str = "demo") -> dict:
    return {"type": "game_start", "table": table, "game": 1, "n": 0, "seat": seat, "variant": g.rules.variant,
            "rules": g.rules.to_dict(), "num_seats": g.num_seats, "players": ["ann", "bob"], "seed_hash": "x",
            "clock": {}, "policies": {}, "view": g.view(seat).to_wire()}


def test_game_start_prompt_event_clear_the_prompt() -> None:
    g = Game(RuleSet(), seed=871)
    seat = g.current_player
    st, out = reduce(TableState(), start_msg(g, seat))
    assert st.table == "demo" and st.names == ("ann", "bob") and st.rules == RuleSet() and not out
    prompt = {"type": "prompt", "table": "demo", "game": 1, "seq": 1, "seat": seat,
              "legal": [a.to_wire() for a in g.legal_actions()], "view": g.view(seat).to_wire(),
              "clock": {"remaining_ms": 9000, "move_ms": 10000, "bank_ms": None}}
    st, _ = reduce(st, prompt, now=100.0)
    assert st.my_turn and st.seq == 1 and st.legal == (Action("take"), Action("pass"))
    assert st.clocks[seat] is not None and st.clocks[seat].remaining_ms == 9000 and st.clocks[seat].running
    g.apply(Action("pass"))
    event = {"type": "event", "table": "demo", "game": 1, "n": 1, "move": {"seat": seat, "kind": "pass", "card": None},
             "auto": False, "view": g.view(seat).to_wire()}
    st, _ = reduce(st, event)
    assert not st.my_turn and st.legal == () and st.seq is None
    assert not st.clocks[seat].running


def test_refused_move_keeps_the_sentence_until_the_next_move() -> None:
    st = TableState()
    st, out = reduce(st, {"type": "error", "code": 4004, "name": "illegal_action", "message": "not now", "request": "act"})
    assert st.error == "not now"
    assert isinstance(out[0], RefereeError) and out[0].code == 4004


def test_hand_end_and_game_end_are_announced_once() -> None:
    g = at("oklahoma", 5, game_over)
    r = g.results[-1]
    st = TableState(table="demo")
    msg = {"type": "hand_end", "table": "demo", "game": 1, "n": 9, "result": r.to_wire(), "view": g.view(0).to_wire()}
    st, out = reduce(st, msg)
    assert [type(m) for m in out] == [HandEnded] and st.results == (r,)
    st, _ = reduce(st, msg)  # re-sent after a reconnect: not counted twice
    assert st.results == (r,)
    end = {"type": "game_end", "table": "demo", "game": 1, "n": 10, "final": g.final_scores(), "termination": "normal",
           "winner": g.winner, "at_fault": None, "seed": 5, "seed_hash": "x", "view": g.view(0).to_wire()}
    st, out = reduce(st, end)
    assert [type(m) for m in out] == [GameEnded]
    assert st.game_over and st.final["seed"] == 5 and st.final["winner"] == g.winner


def test_advice_is_added_to_the_captains_view() -> None:
    g = at("box", 7, lambda g: g.current_player == g.roles[1] and g.hand.phase == "discard")
    captain, sitter = g.roles[1], g.roles[2]
    st = TableState(table="box7", view=g.view(captain))
    st, _ = reduce(st, {"type": "advice", "table": "box7", "game": 1, "seq": 4, "seat": sitter,
                        "action": g.legal_actions()[0].to_wire(), "text": "this"})
    assert st.view.advice[-1].text == "this" and st.view.advice[-1].seat == sitter


def test_other_tables_and_unknown_types_change_nothing() -> None:
    st = TableState(table="mine", notice="hello")
    assert reduce(st, {"type": "event", "table": "other", "game": 1, "n": 1, "move": {"seat": 0, "kind": "pass", "card": None},
                      "auto": False, "view": None})[0] == st
    assert reduce(st, {"type": "future_message", "x": 1})[0] == st


def test_waiting_rematch_closed_shutdown_sentences() -> None:
    st = TableState(table="t", names=("ann", "bob"))
    st, _ = reduce(st, {"type": "seated", "table": "t", "seat": 0, "variant": "oklahoma", "num_seats": 2,
                        "players": ["ann", None], "rules": RuleSet().to_dict()})
    assert "waiting for 1 more player" in st.notice
    st, _ = reduce(st, {"type": "queued", "queue": "box", "variant": "box", "rules": RuleSet(variant="box").to_dict(),
                        "waiting": 1, "needed": 3})
    assert "1 of 3" in st.notice
    st, _ = reduce(
        TableState(table="t", names=("ann", "bob")), {"type": "rematch_status", "table": "t", "ready": [True, False], "game": 2}
    )
    assert st.notice == "Rematch: waiting for bob…"
    st, _ = reduce(st, {"type": "table_closed", "table": "t", "reason": "the organiser closed it"})
    assert "organiser" in st.notice
    st, _ = reduce(st, {"type": "shutdown", "reason": "maintenance"})
    assert "maintenance" in st.notice
