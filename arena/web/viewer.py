"""A finished game, step by step, as the web's viewer shows it: only what the rules made public.

The record (seed and every move) replays through the engine (:func:`okgin.record.game_from_record`
with no entries gives the dealt game; :func:`okgin.record.apply_entry` applies each move), and
every step is the full view of the table after it: all hands, the stock's size, the discard
pile, the scores. All hands are secret while their hand runs, so the steps go through the
referee's own broadcast rule before they reach a page: each is held in a
:class:`referee.table.fullfeed.FullFeed`, exactly as a table's full feed holds its messages,
and only what that feed releases (a hand closed by its ``hand_end``, or the ``game_end``) is
returned. A record that stops inside a hand (it cannot, for a finished game; a bug might)
therefore shows nothing of that hand. Why reuse the feed rather than test "is the hand over"
here: there must be one rule of when cards become public, and the broadcast feed is where
okgin already defines and tests it.

Names and advice text go into the step as plain strings; the page escapes them (the JSON is
written by Jinja's ``tojson``, and the script writes text nodes, never HTML).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from okgin.cards import card_str
from okgin.game import Game
from okgin.protocol import decode_from_referee
from okgin.record import apply_entry, game_from_record
from okgin.views import View, make_view
from okgin.wording import event_sentence, game_headline, result_sentence, role_words, variant_words
from referee.table.fullfeed import FullFeed

__all__ = ["MAX_STEPS", "public_steps"]

#: A page shows at most this many steps, about 250 bytes each (the rules bound a hand to about
#: 2,100 moves, but not a game's hands): a bound on the page's size, whatever a record holds.
#: A game between sensible players has a few hundred; random play to 150 can have 30,000.
MAX_STEPS = 4000


def _table(view: View) -> dict[str, Any]:
    """The part of a full view the viewer draws (cards as their wire strings, hands sorted)."""
    hands = view.all_hands or ()
    return {
        "hands": [sorted((card_str(c) for c in h), key=_order) for h in hands],
        "discard": [card_str(c) for c in view.discard_pile[-4:]],  # the top last
        "discards": len(view.discard_pile),
        "stock": view.stock_size,
        "upcard": card_str(view.upcard),
        "knock_limit": view.knock_limit,
        "doubled": view.doubled,
        "scores": list(view.scores),
        "to_act": view.to_act,
        "roles": [role_words(r) for r in view.roles],
        "hand": view.hand_number + 1,
    }


def _order(card: str) -> tuple[int, int]:
    return "cdhs".index(card[1]), "A23456789TJQK".index(card[0])


def _nice(card: str | None) -> str | None:
    """A card for a sentence: ``7♥``."""
    if card is None:
        return None
    return card[0].replace("T", "10") + {"c": "♣", "d": "♦", "h": "♥", "s": "♠"}[card[1]]


def _full(game: Game, ended: bool) -> View:
    if ended and not game.over and game.ended is not None:
        return make_view(game, None, full=True, ended=game.ended)
    return make_view(game, None, full=True)


def public_steps(record: dict[str, Any], players: Sequence[str]) -> list[dict[str, Any]]:
    """The steps of a game that its players' hands may show, in order (see the module
    docstring). ``players``: the names in seat order. Each step is a map: ``type`` (``deal``,
    ``move``, ``advice``, ``hand_end``, ``game_end``), ``n``, ``text`` (one sentence), ``seat``,
    ``table`` (:func:`_table`), and for ``hand_end`` the ``result`` (melds, layoffs, deadwood,
    points: the hand result's wire form)."""
    game = game_from_record({**record, "entries": []}, verify=False)
    names = list(players) + [f"seat {i}" for i in range(len(players), game.num_seats)]

    def name(seat: int | None) -> str:
        return "nobody" if seat is None else names[seat]

    feed = FullFeed(0)
    out: list[dict[str, Any]] = []
    n = 0

    def put(step: dict[str, Any]) -> None:
        nonlocal n
        n += 1
        if feed.hold({**step, "n": n}, 0):
            out.extend(decode_from_referee(b) for b in feed.release())

    dealt = -1
    for entry in record.get("entries") or []:
        if n >= MAX_STEPS or game.over:
            break
        if game.hand.number != dealt:
            dealt = game.hand.number
            v = make_view(game, None, full=True)
            put({"type": "deal", "seat": v.dealer, "table": _table(v),
                 "text": f"Hand {dealt + 1}: {name(v.dealer)} deals; the upcard is {_nice(card_str(v.upcard))}"})
        hand = game.hand
        results = len(game.results)
        apply_entry(game, entry)
        ended = len(game.results) > results
        seat = entry.get("seat")
        if "action" in entry:
            s, kind, card = hand.events[-1] if hand.events else (seat, entry["action"].get("kind", "?"), None)
            outcome = game.results[-1].outcome if ended else None
            text = event_sentence(kind, name(s), _nice(None if card is None else card_str(card)), outcome)
            step_type = "move"
        elif "advice" in entry:
            text = f"{name(seat)} advised: {entry.get('text') or '(no note)'}"
            step_type = "advice"
        elif "resign" in entry:
            text = f"{name(seat)} resigned ({entry['resign']})"
            step_type = "move"
        else:
            text = f"the game was abandoned ({entry.get('abandon')})"
            step_type = "move"
        put({"type": step_type, "seat": seat, "text": text, "table": _table(_full(game, ended))})
        if ended:
            r = game.results[-1]
            put({"type": "hand_end", "seat": r.winner, "text": result_sentence(r, name), "result": r.to_wire(),
                 "table": _table(_full(game, True))})
    if game.over:
        v = make_view(game, None, full=True)
        text = (game_headline(game.winner, game.scores, name) if game.winner is not None
                else f"The game ended: {game.termination}")
        put({"type": "game_end", "seat": game.winner, "text": text, "final": game.final_scores(), "table": _table(v)})
    return out


def describe(record: dict[str, Any] | None) -> str:
    """The game's rules in words, for the viewer's heading."""
    if not record:
        return ""
    rules = record.get("rules") or {}
    return f"{variant_words(str(rules.get('variant', '')))} to {rules.get('target_score', '?')}"
