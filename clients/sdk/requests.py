"""Builders for the client-to-referee messages of protocol.md §5 (shared by both clients).

Plain functions returning maps, so the blocking :class:`~clients.sdk.client.Client` and
the asyncio :class:`~clients.sdk.aio.AsyncClient` send byte-identical requests, and
optional fields are only present when given (the referee treats absent and nil alike,
but transcripts stay short).
"""

from __future__ import annotations

from typing import Any

from okgin import Action, RuleSet
from okgin.protocol import PROTOCOL_MAJOR, PROTOCOL_MINOR

__all__ = [
    "Rules", "accept", "act", "advise", "cancel", "challenge", "create_table", "decline", "hello", "join", "leaderboard",
    "lobby", "queue", "rules_map", "seek", "simple",
]

Rules = RuleSet | dict[str, Any] | None


def rules_map(rules: Rules) -> dict[str, Any] | None:
    """A RuleSet (sent in full) or a partial map (sent as is)."""
    if rules is None:
        return None
    return rules.to_dict() if isinstance(rules, RuleSet) else dict(rules)


def _put(d: dict[str, Any], **kw: Any) -> dict[str, Any]:
    for k, v in kw.items():
        if v is not None:
            d[k] = v
    return d


def hello(name: str, role: str, token: str | None = None, admin_key: str | None = None, events: bool = True) -> dict[str, Any]:
    """``events=False`` (protocol 1.1): this session's seats get no ``event`` messages,
    for bots that decide from each prompt alone (most of a game's messages are events)."""
    return _put(
        {"type": "hello", "protocol": PROTOCOL_MAJOR, "minor": PROTOCOL_MINOR, "role": role, "name": name},
        token=token, admin_key=admin_key, events=None if events else False,
    )


def join(
    table: str, seat: int | None = None, variant: str | None = None, rules: Rules = None, any_rules: bool = False,
    clock: dict[str, Any] | None = None, policies: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A join asks for ``variant`` (default oklahoma) with ``rules`` (default: its defaults):
    an existing table with other rules refuses it with ``rules_mismatch`` listing them.
    ``any_rules`` (protocol 1.4): sit whatever the existing table's rules are. ``clock``
    and ``policies`` (1.6, partial maps): the settings of the table if this join creates
    it (ignored at an existing table); send them only to a referee of minor 6 or more."""
    return _put({"type": "join", "table": table}, seat=seat, variant=variant, rules=rules_map(rules), any_rules=any_rules or None,
                clock=clock, policies=policies)


def queue(variant: str = "oklahoma", rules: Rules = None) -> dict[str, Any]:
    return _put({"type": "queue", "variant": variant}, rules=rules_map(rules))


def act(table: str, seq: int, action: Action | dict[str, Any]) -> dict[str, Any]:
    return {"type": "act", "table": table, "seq": seq, "action": action.to_wire() if isinstance(action, Action) else action}


def advise(table: str, seq: int, action: Action | None = None, text: str | None = None) -> dict[str, Any]:
    d: dict[str, Any] = {"type": "advise", "table": table, "seq": seq, "action": None if action is None else action.to_wire()}
    if text is not None:
        d["text"] = text
    return d


def create_table(
    table: str | None = None,
    variant: str = "oklahoma",
    rules: Rules = None,
    seed: int | str | None = None,
    clock: dict[str, Any] | None = None,
    policies: dict[str, Any] | None = None,
    reserved: bool = False,
    players: list[str] | None = None,
    full_feed_delay_ms: int | None = None,
) -> dict[str, Any]:
    d: dict[str, Any] = {"type": "create_table", "variant": variant, "reserved": reserved}
    return _put(
        d,
        table=table,
        rules=rules_map(rules),
        seed=seed,
        clock=clock,
        policies=policies,
        players=players,
        full_feed_delay_ms=full_feed_delay_ms,
    )


def simple(type_: str, **fields: Any) -> dict[str, Any]:
    """A request whose fields need no conversion (leave, resign, watch, sync, ...)."""
    return _put({"type": type_}, **fields)


# ------------------------------------------------------------------ the arena (1.6, protocol.md §19)
def seek(variant: str = "oklahoma", clock: str | None = None, rated: bool | None = None) -> dict[str, Any]:
    """Ask the arena for a game of ``variant`` with the clock preset ``clock`` (the
    arena's default, ``standard``, when None); ``rated`` defaults to true there."""
    return _put({"type": "seek", "variant": variant}, clock=clock, rated=rated)


def challenge(to: list[str], variant: str = "oklahoma", clock: str | None = None, rated: bool | None = None) -> dict[str, Any]:
    """Challenge named accounts (one for Oklahoma Gin, two for Gin in the Box)."""
    return _put({"type": "challenge", "to": list(to), "variant": variant}, clock=clock, rated=rated)


def accept(challenge_id: str) -> dict[str, Any]:
    return {"type": "accept", "challenge": challenge_id}


def decline(challenge_id: str) -> dict[str, Any]:
    return {"type": "decline", "challenge": challenge_id}


def cancel(seek_id: str | None = None, challenge_id: str | None = None) -> dict[str, Any]:
    """Withdraw one open seek or challenge (exactly one of the two)."""
    if (seek_id is None) == (challenge_id is None):
        raise ValueError("cancel takes a seek or a challenge, not both or neither")
    return _put({"type": "cancel"}, seek=seek_id, challenge=challenge_id)


def lobby() -> dict[str, Any]:
    return {"type": "lobby"}


def leaderboard(variant: str = "oklahoma", offset: int | None = None, limit: int | None = None) -> dict[str, Any]:
    return _put({"type": "leaderboard", "variant": variant}, offset=offset, limit=limit)
