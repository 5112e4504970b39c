"""From protocol messages (protocol.md §5) to the :class:`TableState` the screens draw.

``reduce(state, msg, now)`` is pure: it returns the new state and the app messages to
post (a hand ended, the game ended, the referee refused something). The network worker
feeds it every message of the table it plays at; the tests feed it recorded messages.
Unknown message types and unknown fields are ignored (protocol.md §14).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from textual.message import Message

from okgin import Action, Advice, HandResult, RuleSet, View

from .messages import GameEnded, HandEnded, RefereeError
from .model import CONNECTED, ClockReading, TableState


def _rules(d: Any) -> RuleSet | None:
    if not isinstance(d, dict):
        return None
    try:
        data = dict(d)
        if data.get("knock_limit") == ("upcard" if data.get("variant", "oklahoma") == "oklahoma" else 10):
            data["knock_limit"] = None
        return RuleSet.from_dict(data)
    except Exception:
        return None


def _names(players: Any, n: int | None = None) -> tuple[str, ...]:
    if not isinstance(players, list):
        return ()
    return tuple(p if isinstance(p, str) else "(empty seat)" for p in players)


def _view(d: Any) -> View | None:
    return View.from_wire(d) if isinstance(d, dict) else None


def _bank_clocks(state: TableState, banks: Any, now: float) -> tuple[ClockReading | None, ...]:
    if not isinstance(banks, list):
        return state.clocks
    return tuple(ClockReading(b, None, now, False) if isinstance(b, int) else None for b in banks)


def reduce(state: TableState, msg: dict[str, Any], now: float = 0.0) -> tuple[TableState, list[Message]]:
    """Apply one message from the referee. ``now`` is the app's monotonic time."""
    t = msg.get("type")
    out: list[Message] = []
    table = msg.get("table")
    if table is not None and state.table is not None and table != state.table and t not in ("seated", "game_start", "snapshot"):
        return state, out  # another table's news (we play at one table at a time)
    grace = (msg.get("policies") or {}).get("disconnect_grace_ms") if t in ("seated", "game_start", "snapshot") else None
    if isinstance(grace, int) and state.extra.get("disconnect_grace_ms") != grace:
        # How long the referee holds our seat if we go: the quit confirmation says it.
        state = replace(state, extra={**state.extra, "disconnect_grace_ms": grace})
    if t == "seat_status":  # 1.4: another seat's connection went or came back
        away = dict(state.extra.get("away") or {})
        seat = msg.get("seat")
        if not isinstance(seat, int):
            return state, out
        if msg.get("connected"):
            away.pop(seat, None)
        else:
            ms = msg.get("forfeit_in_ms")
            # (name, monotonic deadline or None): the screen counts down to the deadline
            away[seat] = (msg.get("name") or state.name(seat), now + ms / 1000 if isinstance(ms, int) else None)
        return replace(state, extra={**state.extra, "away": away}), out
    if t == "welcome":
        return replace(state, connection=CONNECTED, notice=None), out
    if t == "queued":
        waiting, needed = msg.get("waiting", 1), msg.get("needed", 2)
        return replace(state, notice=f"In the quick-match queue: {waiting} of {needed} players here, waiting for the rest…"), out
    if t == "seated":
        names = _names(msg.get("players"))
        missing = sum(1 for p in msg.get("players", []) if p is None)
        notice = (
            f"Seated at table {table} (seat {msg.get('seat')}): waiting for {missing} more player{'s' if missing != 1 else ''}…"
            if missing
            else None
        )
        return replace(state, table=table, names=names, rules=_rules(msg.get("rules")) or state.rules, notice=notice,
                       extra={**state.extra, "seat": msg.get("seat")}), out
    if t == "game_start":
        view = _view(msg.get("view"))
        return replace(
            state, table=table, view=view, names=_names(msg.get("players")) or state.names,
            rules=_rules(msg.get("rules")) or state.rules, results=(), final=None, legal=(), seq=None, advice_legal=(),
            error=None, notice=None, spectator=msg.get("seat") is None,
            extra={**state.extra, "game": msg.get("game"), "seed_hash": msg.get("seed_hash"), "clock": msg.get("clock")},
        ), out
    if t == "prompt":
        view = _view(msg.get("view")) or state.view
        legal = tuple(Action.from_wire(a) for a in msg.get("legal", []))
        err = msg.get("error")
        clock = msg.get("clock") or {}
        clocks = list(_bank_clocks(state, clock.get("bank_ms"), now))
        n = view.num_seats if view is not None else 0
        while len(clocks) < n:
            clocks.append(None)
        seat = msg.get("seat", view.seat if view else None)
        if isinstance(seat, int) and seat < len(clocks) and clock.get("remaining_ms") is not None:
            clocks[seat] = ClockReading(int(clock["remaining_ms"]), clock.get("move_ms"), now, True)
        return replace(
            state, view=view, legal=legal, seq=msg.get("seq"), clocks=tuple(clocks),
            error=err.get("message") if isinstance(err, dict) else None,
        ), out
    if t == "advise_prompt":
        view = _view(msg.get("view")) or state.view
        legal = tuple(Action.from_wire(a) for a in msg.get("legal", []))
        return replace(state, view=view, advice_legal=legal, extra={**state.extra, "advice_seq": msg.get("seq")}), out
    if t == "advice":
        v = state.view
        if v is None:
            return state, out
        a = msg.get("action")
        adv = Advice(int(msg.get("seat", 0)), None if a is None else Action.from_wire(a), str(msg.get("text", "")))
        return replace(state, view=replace(v, advice=(*v.advice, adv))), out
    if t == "event":
        move = msg.get("move") or {}
        view = _view(msg.get("view"))
        st = state
        if view is not None:
            st = replace(st, view=view)
        mover = move.get("seat")
        if st.view is not None and mover == st.view.seat:
            st = replace(st, legal=(), seq=None, error=None, clocks=tuple(
                replace(c, running=False) if c is not None else None for c in st.clocks))
        if st.view is not None and mover == st.view.hand_of:
            st = replace(st, advice_legal=())
        return st, out
    if t == "hand_end":
        result = HandResult.from_wire(msg["result"])
        view = _view(msg.get("view")) or state.view
        st = replace(state, view=view, legal=(), seq=None, advice_legal=()).with_result(result)
        out.append(HandEnded(result))
        return st, out
    if t == "game_end":
        final = dict(msg.get("final") or {})
        for k in ("termination", "winner", "at_fault", "seed", "seed_hash"):
            if k in msg:
                final.setdefault(k, msg[k])
        if "at_fault" in msg:
            final["loser"] = msg["at_fault"]
        view = _view(msg.get("view")) or state.view
        st = replace(state, view=view, final=final, legal=(), seq=None, advice_legal=(),
                     extra={**state.extra, "away": {}})  # a forfeited seat is no longer counted down
        out.append(GameEnded(final))
        return st, out
    if t == "rematch_status":
        ready = msg.get("ready") or []
        waiting = [state.name(s) for s, r in enumerate(ready) if not r]
        note = "Rematch: waiting for " + ", ".join(waiting) + "…" if waiting else "Rematch: starting…"
        return replace(state, notice=note), out
    if t == "snapshot":
        view = _view(msg.get("view")) or state.view
        st = replace(
            state, table=table, view=view, names=_names(msg.get("players")) or state.names,
            rules=_rules(msg.get("rules")) or state.rules, spectator=msg.get("seat") is None,
            clocks=_bank_clocks(state, msg.get("clocks"), now), connection=CONNECTED,
        )
        if msg.get("status") == "waiting":
            st = replace(st, notice="Waiting for players…")
        return st, out
    if t == "error":
        sentence = str(msg.get("message") or msg.get("name") or "error")
        out.append(RefereeError(sentence, str(msg.get("name", "")), msg.get("code")))
        return replace(state, error=sentence), out
    if t == "table_closed":
        return replace(state, legal=(), notice=f"Table closed: {msg.get('reason', '')}".strip()), out
    if t == "shutdown":
        return replace(state, legal=(), notice=f"The referee stopped: {msg.get('reason', '')}".strip()), out
    return state, out
