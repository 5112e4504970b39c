"""Views: exactly what one seat or a spectator may see (docs/rules.md §5 "Information").

A seat sees its own hand; the sitter of Gin in the Box sees its captain's hand (§4).
Everyone sees the public table: the upcard and knock limit, the discard pile, every card
taken from the discard pile (so the cards *known* to be in each hand), stock size, hand
sizes, scores, roles and the previous hand's result. A card drawn from the stock is shown
only to the seat that drew it (and, in the box game, to that seat's sitting partner).
Advice is shown to the captain and the sitter only.

The same :class:`View` reaches a bot in-process and over the network (``to_wire`` /
``from_wire``), so one bot class serves both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .actions import Action
from .cards import Card, card_str, cards_of, parse_card
from .enums import Phase
from .scoring import HandResult

if TYPE_CHECKING:
    from .game import Game
    from .hand import Hand
    from .roles import Roles

__all__ = ["Advice", "Event", "View", "make_view"]


@dataclass(frozen=True)
class Event:
    """One move of the current hand as a viewer saw it (``card`` None when hidden)."""

    seat: int
    kind: str
    card: Card | None = None

    def to_wire(self) -> dict[str, Any]:
        return {"seat": self.seat, "kind": self.kind, "card": None if self.card is None else card_str(self.card)}

    @staticmethod
    def from_wire(d: dict[str, Any]) -> Event:
        c = d.get("card")
        return Event(int(d["seat"]), str(d["kind"]), None if c is None else parse_card(c))


@dataclass(frozen=True)
class Advice:
    """A sitter's advice to its captain."""

    seat: int
    action: Action | None
    text: str

    def to_wire(self) -> dict[str, Any]:
        return {"seat": self.seat, "action": None if self.action is None else self.action.to_wire(), "text": self.text}

    @staticmethod
    def from_wire(d: dict[str, Any]) -> Advice:
        a = d.get("action")
        return Advice(int(d["seat"]), None if a is None else Action.from_wire(a), str(d.get("text", "")))


@dataclass(frozen=True)
class View:
    """One viewer's picture of the game. Cards are indices (see :mod:`okgin.cards`)."""

    seat: int | None
    variant: str
    num_seats: int
    hand_number: int
    phase: str  # a Phase: offer | draw | discard | game_over
    to_act: int | None
    dealer: int
    nondealer: int
    roles: tuple[str, ...]  # per seat: box/captain/sitter or dealer/nondealer
    hand: tuple[Card, ...] | None  # own hand; the captain's for the sitter; None for spectators
    hand_of: int | None  # whose hand ``hand`` is
    upcard: Card
    knock_limit: int  # 0 = gin only
    doubled: bool  # spade upcard with spade_upcard_doubles
    discard_pile: tuple[Card, ...]  # bottom first; the top is the last
    stock_size: int
    hand_sizes: tuple[int, ...]
    known_cards: tuple[tuple[Card, ...], ...]  # per seat: taken from the discard pile, not thrown since
    taken_card: Card | None  # taken from the discard pile this turn: may not be discarded now
    events: tuple[Event, ...]  # this hand so far
    scores: tuple[int, ...]
    hands_won: tuple[int, ...]
    target_score: int
    last_result: HandResult | None
    winner: int | None
    advice: tuple[Advice, ...] = ()
    all_hands: tuple[tuple[Card, ...], ...] | None = None  # full-visibility feeds only
    stock: tuple[Card, ...] | None = None  # full-visibility feeds only (top last)
    role_draws: tuple[tuple[tuple[int, Card], ...], ...] = field(default=())

    @property
    def top_discard(self) -> Card | None:
        return self.discard_pile[-1] if self.discard_pile else None

    def to_wire(self) -> dict[str, Any]:
        cs = card_str
        d: dict[str, Any] = {
            "seat": self.seat,
            "variant": self.variant,
            "num_seats": self.num_seats,
            "hand_number": self.hand_number,
            "phase": self.phase,
            "to_act": self.to_act,
            "dealer": self.dealer,
            "nondealer": self.nondealer,
            "roles": list(self.roles),
            "hand": None if self.hand is None else [cs(c) for c in self.hand],
            "hand_of": self.hand_of,
            "upcard": cs(self.upcard),
            "knock_limit": self.knock_limit,
            "doubled": self.doubled,
            "discard_pile": [cs(c) for c in self.discard_pile],
            "stock_size": self.stock_size,
            "hand_sizes": list(self.hand_sizes),
            "known_cards": [[cs(c) for c in k] for k in self.known_cards],
            "taken_card": None if self.taken_card is None else cs(self.taken_card),
            "events": [e.to_wire() for e in self.events],
            "scores": list(self.scores),
            "hands_won": list(self.hands_won),
            "target_score": self.target_score,
            "last_result": None if self.last_result is None else self.last_result.to_wire(),
            "winner": self.winner,
            "advice": [a.to_wire() for a in self.advice],
            "role_draws": [[[s, cs(c)] for s, c in rnd] for rnd in self.role_draws],
        }
        if self.all_hands is not None:
            d["all_hands"] = [[cs(c) for c in h] for h in self.all_hands]
        if self.stock is not None:
            d["stock"] = [cs(c) for c in self.stock]
        return d

    @staticmethod
    def from_wire(d: dict[str, Any]) -> View:
        """Rebuild a view from its wire form (the SDK hands bots this same type)."""
        pc = parse_card

        def cards(xs: Any) -> tuple[Card, ...]:
            return tuple(pc(x) for x in xs)

        lr = d.get("last_result")
        tc = d.get("taken_card")
        return View(
            seat=d.get("seat"),
            variant=d["variant"],
            num_seats=int(d["num_seats"]),
            hand_number=int(d["hand_number"]),
            phase=_phase(d["phase"]),
            to_act=d.get("to_act"),
            dealer=int(d["dealer"]),
            nondealer=int(d["nondealer"]),
            roles=tuple(d["roles"]),
            hand=None if d.get("hand") is None else cards(d["hand"]),
            hand_of=d.get("hand_of"),
            upcard=pc(d["upcard"]),
            knock_limit=int(d["knock_limit"]),
            doubled=bool(d["doubled"]),
            discard_pile=cards(d["discard_pile"]),
            stock_size=int(d["stock_size"]),
            hand_sizes=tuple(d["hand_sizes"]),
            known_cards=tuple(cards(k) for k in d["known_cards"]),
            taken_card=None if tc is None else pc(tc),
            events=tuple(Event.from_wire(e) for e in d.get("events", [])),
            scores=tuple(d["scores"]),
            hands_won=tuple(d["hands_won"]),
            target_score=int(d["target_score"]),
            last_result=None if lr is None else HandResult.from_wire(lr),
            winner=d.get("winner"),
            advice=tuple(Advice.from_wire(a) for a in d.get("advice", [])),
            all_hands=None if d.get("all_hands") is None else tuple(cards(h) for h in d["all_hands"]),
            stock=None if d.get("stock") is None else cards(d["stock"]),
            role_draws=tuple(tuple((int(s), pc(c)) for s, c in rnd) for rnd in d.get("role_draws", [])),
        )


def _phase(text: str) -> str:
    """A wire phase as a :class:`Phase` (equal to the string); an unknown one as it came."""
    try:
        return Phase(text)
    except ValueError:
        return text


def _partner_of(roles: Roles | None, seat: int | None) -> int | None:
    """Whose private cards ``seat`` may see: itself, or the captain for the sitter."""
    if seat is None:
        return None
    if roles is not None and seat == roles[2]:
        return roles[1]
    return seat


def _filtered_events(game: Game, seat: int | None, owner: int | None, full: bool,
                     ended: Hand | None = None) -> tuple[list[Event], list[list[Card]]]:
    """This hand's events as ``seat`` may see them, and the cards known in each hand.

    Why incremental: a hand's events only ever grow, and bots ask for a view at every
    decision, so rebuilding the filtered list from the first event made each view cost
    O(events) and a long hand O(events²). A per-game cache keyed by viewer remembers how
    far it got in the current hand (a new hand object resets it); the result is exactly
    what the full rebuild gave.
    """
    h = game.hand if ended is None else ended
    cache = game.view_cache
    entry = None if ended is not None else cache.get((seat, full))  # an ended hand: built once, not kept
    if entry is None or entry[0] is not h or entry[1] > len(h.events):
        entry = [h, 0, [], [[] for _ in range(game.num_seats)]]
        if ended is None:
            cache[(seat, full)] = entry
    _, done, events, known = entry
    if done < len(h.events):
        may_see = {seat, owner} if seat is not None else set()
        for s, kind, card in h.events[done:]:
            if kind in ("take", "draw_discard"):
                assert card is not None
                known[s].append(card)
            elif kind == "discard" and card in known[s]:
                known[s].remove(card)
            if kind == "draw_stock" and not full and s not in may_see:
                card = None
            events.append(Event(s, kind, card))
        entry[1] = len(h.events)
    return events, known


def make_view(game: Game, seat: int | None, full: bool = False,
              ended: tuple[Hand, Roles | None] | None = None) -> View:
    """Build the view of ``seat`` (None: spectator; ``full``: everything, for broadcasts).

    ``ended`` (:attr:`Game.ended`) shows that hand, as it was when it ended, in place of
    the current one (:meth:`Game.hand_end_view`)."""
    if seat is not None and not 0 <= seat < game.num_seats:
        raise ValueError(f"no seat {seat} in a {game.num_seats}-seat game")
    h, game_roles = (game.hand, game.roles) if ended is None else ended
    owner = _partner_of(game_roles, seat)
    events, known = _filtered_events(game, seat, owner, full, None if ended is None else h)
    hand_over = h.phase == Phase.OVER
    if game.over:
        phase = Phase.GAME_OVER
    else:
        phase = h.phase
    if game_roles is not None:
        roles = [""] * 3
        for name, s in zip(("box", "captain", "sitter"), game_roles, strict=True):
            roles[s] = name
    else:
        roles = ["dealer" if s == h.dealer else "nondealer" for s in range(game.num_seats)]
    advice: tuple[Advice, ...] = ()
    if game_roles is not None and (full or (seat is not None and seat in (game_roles[1], game_roles[2]))):
        advice = tuple(Advice(s, a, t) for n, s, a, t in game.advice if n == h.number)
    last = game.results[-1] if game.results else None
    return View(
        seat=seat,
        variant=game.rules.variant,
        num_seats=game.num_seats,
        hand_number=h.number,
        phase=phase,
        to_act=None if (game.over or hand_over) else h.to_act,
        dealer=h.dealer,
        nondealer=h.nondealer,
        roles=tuple(roles),
        hand=None if owner is None else tuple(cards_of(h.hands[owner])),
        hand_of=owner,
        upcard=h.upcard,
        knock_limit=h.knock_limit,
        doubled=h.doubled,
        discard_pile=tuple(h.discard_pile),
        stock_size=len(h.stock),
        hand_sizes=tuple(bin(m).count("1") for m in h.hands),
        known_cards=tuple(tuple(k) for k in known),
        taken_card=h.taken,
        events=tuple(events),
        scores=tuple(game.scores),
        hands_won=tuple(game.hands_won),
        target_score=game.rules.target_score,
        last_result=last,
        winner=game.winner,
        advice=advice,
        all_hands=tuple(tuple(cards_of(m)) for m in h.hands) if full else None,
        stock=tuple(h.stock) if full else None,
        role_draws=tuple(tuple(r) for r in game.role_draws),
    )
