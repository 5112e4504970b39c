"""From protocol messages (protocol.md §5) to the :class:`TableState` the screens draw.

``reduce(state, msg, now)`` is pure: it returns the new state and the app messages to
post (a hand ended, the game ended, the referee refused something). It reads the SDK's
typed messages (:mod:`clients.sdk.messages`), the very objects a bot's driver reads, so
the wire is parsed in one place. The network worker feeds it every message of the table
it plays at; the tests feed it recorded messages (through
:func:`clients.sdk.messages.parse_message`). Message types it does not draw are ignored,
and so are unknown fields (protocol.md §14).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from textual.message import Message

from clients.sdk import messages as sdk
from okgin import RuleSet

from .messages import GameEnded, HandEnded, RefereeError
from .model import CONNECTED, ClockReading, TableState


def _rules(rules: RuleSet) -> RuleSet:
    """The table's rules with a knock limit at its variant's default written as unset,
    so that they compare equal to the same rules made here (``RuleSet()``)."""
    if rules.knock_limit == ("upcard" if rules.variant == "oklahoma" else 10):
        data = rules.to_dict()
        data["knock_limit"] = None
        return RuleSet.from_dict(data)
    return rules


def _names(players: list[str | None]) -> tuple[str, ...]:
    return tuple(p if isinstance(p, str) else "(empty seat)" for p in players)


def _bank_clocks(state: TableState, banks: Any, now: float) -> tuple[ClockReading | None, ...]:
    if not isinstance(banks, list):
        return state.clocks
    return tuple(ClockReading(b, None, now, False) if isinstance(b, int) else None for b in banks)


def reduce(state: TableState, msg: sdk.Message, now: float = 0.0) -> tuple[TableState, list[Message]]:
    """Apply one message from the referee, typed by the SDK (:mod:`clients.sdk.messages`).
    ``now`` is the app's monotonic time."""
    out: list[Message] = []
    table = getattr(msg, "table", None)
    if isinstance(msg, sdk.Seated | sdk.GameStart | sdk.Snapshot):  # may move us to another table
        grace = (msg.policies or {}).get("disconnect_grace_ms")
    elif table is not None and state.table is not None and table != state.table:
        return state, out  # another table's news (we play at one table at a time)
    else:
        grace = None
    if isinstance(grace, int) and state.extra.get("disconnect_grace_ms") != grace:
        # How long the referee holds our seat if we go: the quit confirmation says it.
        state = replace(state, extra={**state.extra, "disconnect_grace_ms": grace})
    if isinstance(msg, sdk.SeatStatus):  # 1.4: another seat's connection went or came back
        away = dict(state.extra.get("away") or {})
        seat = msg.seat
        if not isinstance(seat, int):
            return state, out
        if msg.connected:
            away.pop(seat, None)
        else:
            ms = msg.forfeit_in_ms
            # (name, monotonic deadline or None): the screen counts down to the deadline
            away[seat] = (msg.name or state.name(seat), now + ms / 1000 if isinstance(ms, int) else None)
        return replace(state, extra={**state.extra, "away": away}), out
    if isinstance(msg, sdk.Welcome):
        return replace(state, connection=CONNECTED, notice=None), out
    if isinstance(msg, sdk.Queued):
        return replace(
            state, notice=f"In the quick-match queue: {msg.waiting} of {msg.needed} players here, waiting for the rest…"
        ), out
    if isinstance(msg, sdk.Seated):
        missing = sum(1 for p in msg.players if p is None)
        notice = (
            f"sdk.Seated at table {table} (seat {msg.seat}): waiting for {missing} more player{'s' if missing != 1 else ''}…"
            if missing
            else None
        )
        return replace(state, table=table, names=_names(msg.players), rules=_rules(msg.rules), notice=notice,
                       extra={**state.extra, "seat": msg.seat}), out
    if isinstance(msg, sdk.GameStart):
        return replace(
            state, table=table, view=msg.view, names=_names(msg.players) or state.names,
            rules=_rules(msg.rules), results=(), final=None, legal=(), seq=None, advice_legal=(),
            error=None, notice=None, spectator=msg.seat is None,
            extra={**state.extra, "game": msg.game, "seed_hash": msg.seed_hash, "clock": msg.clock},
        ), out
    if isinstance(msg, sdk.Prompt):
        view = msg.view
        clock = msg.clock or {}
        clocks = list(_bank_clocks(state, clock.get("bank_ms"), now))
        while len(clocks) < view.num_seats:
            clocks.append(None)
        seat = msg.seat
        if isinstance(seat, int) and seat < len(clocks) and clock.get("remaining_ms") is not None:
            clocks[seat] = ClockReading(int(clock["remaining_ms"]), clock.get("move_ms"), now, True)
        err = msg.error
        return replace(
            state, view=view, legal=tuple(msg.legal), seq=msg.seq, clocks=tuple(clocks),
            error=err.get("message") if isinstance(err, dict) else None,
        ), out
    if isinstance(msg, sdk.AdvisePrompt):
        # 1.6: the captain waits for our advice until ``advice_until`` (on ``now``'s clock)
        until = now + msg.window_ms / 1000 if msg.window_ms else None
        return replace(state, view=msg.view, advice_legal=tuple(msg.legal),
                       extra={**state.extra, "advice_seq": msg.seq, "advice_until": until}), out
    if isinstance(msg, sdk.AdviceReceived):
        v = state.view
        if v is None:
            return state, out
        return replace(state, view=replace(v, advice=(*v.advice, msg.advice))), out
    if isinstance(msg, sdk.MoveEvent):
        st = state
        if msg.view is not None:
            st = replace(st, view=msg.view)
        mover = msg.move.seat
        if st.view is not None and mover == st.view.seat:
            st = replace(st, legal=(), seq=None, error=None, clocks=tuple(
                replace(c, running=False) if c is not None else None for c in st.clocks))
        if st.view is not None and mover == st.view.hand_of:
            st = replace(st, advice_legal=())
        return st, out
    if isinstance(msg, sdk.HandEnd):
        st = replace(state, view=msg.view, legal=(), seq=None, advice_legal=()).with_result(msg.result)
        out.append(HandEnded(msg.result))
        return st, out
    if isinstance(msg, sdk.GameEnd):
        final = dict(msg.final)
        for k, value in (("termination", msg.termination), ("winner", msg.winner), ("at_fault", msg.at_fault),
                         ("seed", msg.seed), ("seed_hash", msg.seed_hash)):
            final.setdefault(k, value)
        final["loser"] = msg.at_fault
        st = replace(state, view=msg.view or state.view, final=final, legal=(), seq=None, advice_legal=(),
                     extra={**state.extra, "away": {}})  # a forfeited seat is no longer counted down
        out.append(GameEnded(final))
        return st, out
    if isinstance(msg, sdk.RematchStatus):
        waiting = [state.name(s) for s, r in enumerate(msg.ready) if not r]
        note = "Rematch: waiting for " + ", ".join(waiting) + "…" if waiting else "Rematch: starting…"
        return replace(state, notice=note), out
    if isinstance(msg, sdk.Snapshot):
        st = replace(
            state, table=table, view=msg.view or state.view, names=_names(msg.players) or state.names,
            rules=_rules(msg.rules), spectator=msg.seat is None,
            clocks=_bank_clocks(state, msg.clocks, now), connection=CONNECTED,
        )
        if msg.status == "waiting":
            st = replace(st, notice="Waiting for players…")
        return st, out
    if isinstance(msg, sdk.ErrorMessage):
        sentence = msg.message or msg.name or "error"
        out.append(RefereeError(sentence, msg.name, msg.code))
        return replace(state, error=sentence), out
    if isinstance(msg, sdk.TableClosed):
        return replace(state, legal=(), notice=f"Table closed: {msg.reason}".strip()), out
    if isinstance(msg, sdk.Shutdown):
        return replace(state, legal=(), notice=f"The referee stopped: {msg.reason}".strip()), out
    return state, out
