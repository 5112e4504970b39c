"""Injected states for the TUI tests: real games from the engine, seen from one seat.

The snapshot and Pilot tests never open a socket; they build the :class:`TableState`
a referee would have sent (the seat's ``View``, its legal actions when prompted), from
a real :class:`okgin.Game` played by a fixed policy to the situation wanted. The wire
round trip (``View.from_wire(view.to_wire())``) is applied so the TUI sees exactly
what it would get over the network.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from clients.tui.model import CONNECTED, TableState
from okgin import Action, Game, HandResult, RuleSet, View
from okgin.cards import mask_of
from okgin.melds import deadwood_after_discard_mask

NAMES2 = ("Ada", "simple-bot")
NAMES3 = ("Ada", "simple-bot", "random-bot")


def greedy(game: Game) -> Action:
    """A decent deterministic policy: knock when possible, keep the least deadwood."""
    legal = game.legal_actions()
    kinds = {a.kind for a in legal}
    h = game.hand
    seat = h.to_act
    if "knock" in kinds:
        return min((a for a in legal if a.kind == "knock"), key=lambda a: (a.card or 0))
    if "discard" in kinds:
        hand = h.hands[seat]
        _, best = deadwood_after_discard_mask(hand)
        for c in best:
            if Action("discard", c) in legal:
                return Action("discard", c)
        return next(a for a in legal if a.kind == "discard")
    if "take" in kinds:
        return Action("pass")
    if "draw_discard" in kinds:
        top = h.discard_pile[-1]
        now, _ = deadwood_after_discard_mask(h.hands[seat] | (1 << top))
        from okgin import deadwood_mask

        if now < deadwood_mask(h.hands[seat]) - 3:
            return Action("draw_discard")
    return Action("draw_stock")


def wire(view: View) -> View:
    return View.from_wire(view.to_wire())


def state_of(game: Game, seat: int | None, names: tuple[str, ...] | None = None, spectator: bool = False) -> TableState:
    """The state the TUI at ``seat`` would hold now."""
    names = names or (NAMES2 if game.num_seats == 2 else NAMES3)
    view = wire(game.view(seat) if seat is not None else game.view(None))
    legal: tuple[Action, ...] = ()
    advice_legal: tuple[Action, ...] = ()
    if seat is not None and not game.is_over and game.current_player == seat:
        legal = tuple(game.legal_actions())
    if seat is not None and game.roles is not None and seat == game.roles[2] and game.current_player == game.roles[1]:
        advice_legal = tuple(game.legal_actions())
    final = game.final_scores() if game.is_over else None
    return TableState(
        view=view, legal=legal, seq=len(game.log), advice_legal=advice_legal, names=names, rules=game.rules,
        results=tuple(HandResult.from_wire(r.to_wire()) for r in game.results), final=final,
        spectator=spectator, connection=CONNECTED, table="t1",
    )


def play_until(game: Game, stop: Callable[[Game], bool], policy: Callable[[Game], Action] = greedy, limit: int = 5000) -> Game:
    for _ in range(limit):
        if stop(game):
            return game
        if game.is_over:
            break
        game.apply(policy(game))
    raise AssertionError("situation not reached")


def at(variant: str, seed: int, stop: Callable[[Game], bool], rules: dict | None = None) -> Game:
    r = RuleSet(variant=variant, **(rules or {}))
    return play_until(Game(r, seed), stop)


def phase_is(phase: str, seat: int | None = None, *, knock: bool | None = None, hand: int = 0) -> Callable[[Game], bool]:
    def f(g: Game) -> bool:
        if g.is_over or g.hand.number < hand or g.hand.phase != phase:
            return False
        if seat is not None and g.current_player != seat:
            return False
        if knock is not None:
            can = any(a.kind == "knock" for a in g.legal_actions())
            if can != knock:
                return False
        return True

    return f


def game_over(g: Game) -> bool:
    return g.is_over


def with_error(state: TableState, msg: str) -> TableState:
    return replace(state, error=msg)


__all__ = ["NAMES2", "NAMES3", "at", "game_over", "mask_of", "phase_is", "play_until", "state_of", "with_error", "write_journal"]


def write_journal(game: Game, path, names: tuple[str, ...], table: str = "demo", end: bool = True) -> None:
    """A journal in the referee's format (protocol.md §12) for a game played in-process."""
    from okgin import canonical_json

    lines = [{"t": "start", "format": "okgin-journal", "version": 1, "table": table, "game": 1, "rules": game.rules.to_dict(),
              "seed_hash": "-", "players": list(names), "clock": {}, "policies": {}, "referee": "test", "started": "-"}]
    replayed = Game(game.rules, game.seed_value)
    seq = 0
    for e in game.to_record()["entries"]:
        seq += 1
        if "action" in e:
            r = replayed.apply(Action.from_wire(e["action"]), seat=e["seat"])
            lines.append({"t": "action", "seat": e["seat"], "action": e["action"], "seq": seq, "ms": 1, "auto": False, "n": seq})
            if r is not None:
                lines.append({"t": "hand_end", "result": r.to_wire(), "n": seq})
    if end:
        lines.append({"t": "end", "seed": game.seed_value, "seed_hash": "-", "final": game.final_scores(),
                      "termination": game.termination, "record": game.to_record()})
    with open(path, "w", encoding="utf-8") as f:
        for line in lines:
            f.write(canonical_json(line) + "\n")
