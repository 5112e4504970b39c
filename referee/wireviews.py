"""Wire views and message frames, built fast: the referee's main cost per decision.

Why not ``game.view(seat).to_wire()`` for every message: after each move the referee
shows the new state to every seat and spectator, and the next seat's ``event`` and
``prompt`` carry the same view. Building a :class:`okgin.View` and converting it costs
tens of microseconds per viewer; here the wire form is built straight from the game
state, the parts every viewer shares (discard pile, scores, last result, ...) once per
state, the filtered event list incrementally per viewer and hand, and each viewer's view
is packed to msgpack **once** and spliced as bytes into every frame that carries it.

The result is exactly ``View.to_wire()`` (a differential test over many random games
checks every state and viewer); full-visibility views still come from the engine.
"""

from __future__ import annotations

from typing import Any

import msgpack

from okgin import Game, card_str
from okgin.cards import cards_of

CS: tuple[str, ...] = tuple(card_str(c) for c in range(52))

_packb = msgpack.Packer(use_bin_type=True, autoreset=True).pack


def pack(obj: Any) -> bytes:
    return _packb(obj)


def frame(fields: dict[str, Any], *tail: tuple[str, bytes]) -> bytes:
    """One msgpack map: ``fields`` packed normally, then ``tail`` keys with pre-packed values.

    A msgpack map is a header (its entry count) followed by key/value pairs, so packed
    values can be appended after patching the count.
    """
    if not tail:
        return _packb(fields)
    n = len(fields) + len(tail)
    body = _packb(fields)
    k = len(fields)
    if k < 16:
        body = body[1:]
    elif k < 65536:
        body = body[3:]
    else:  # never in this protocol; stay correct anyway
        body = body[5:]
    head = bytes((0x80 | n,)) if n < 16 else b"\xde" + n.to_bytes(2, "big")
    parts = [head, body]
    for key, value in tail:
        kb = _KEYS.get(key)
        if kb is None:
            kb = _KEYS[key] = _packb(key)  # a handful of field names: "view", "legal", ...
        parts.append(kb)
        parts.append(value)
    return b"".join(parts)


_KEYS: dict[str, bytes] = {}


def pack_array(items: list[bytes]) -> bytes:
    """A msgpack array of already-packed items."""
    n = len(items)
    head = bytes((0x90 | n,)) if n < 16 else b"\xdc" + n.to_bytes(2, "big") if n < 65536 else b"\xdd" + n.to_bytes(4, "big")
    return head + b"".join(items)


def with_field(packed_map: bytes, key: str, value: bytes) -> bytes:
    """``packed_map`` (a packed msgpack map) with one more key and its pre-packed value."""
    b0 = packed_map[0]
    if 0x80 <= b0 <= 0x8F:
        n, body = b0 & 0x0F, packed_map[1:]
    elif b0 == 0xDE:
        n, body = int.from_bytes(packed_map[1:3], "big"), packed_map[3:]
    else:
        raise ValueError("not a packed msgpack map of fewer than 65536 entries")
    n += 1
    head = bytes((0x80 | n,)) if n < 16 else b"\xde" + n.to_bytes(2, "big")
    kb = _KEYS.get(key)
    if kb is None:
        kb = _KEYS[key] = _packb(key)
    return b"".join((head, body, kb, value))


_VIEW_KEYS = 27  # View.to_wire() of a seat or spectator
_VIEW_HEAD = b"\xde" + _VIEW_KEYS.to_bytes(2, "big")
_K_LAST = _packb("last_result")
_K_DRAWS = _packb("role_draws")
_K_EVENTS = _packb("events")


class ViewCache:
    """Wire views, packed views and legal actions of one game, for its current state."""

    __slots__ = (
        "_b", "_base", "_hand", "_last", "_last_b", "_last_len", "_legal", "_legal_b", "_mine", "_pub_b",
        "_role_draws", "_role_draws_b", "_roles", "_viewers", "_w", "game",
    )

    def __init__(self) -> None:
        self.game: Game | None = None
        self._hand: Any = None
        self._viewers: dict[int | None, list[Any]] = {}
        self._mine: dict[int | None, tuple[int, bytes]] = {}  # viewer -> (hand mask, packed own part)
        self._roles: list[str] = []
        self._role_draws: list[Any] = []
        self._last: dict[str, Any] | None = None
        self._last_b = b"\xc0"
        self._last_len = -1
        self._role_draws_b = b"\x90"
        self.touch()

    def reset(self, game: Game) -> None:
        self.game = game
        self._hand = None
        self._viewers = {}
        self._mine = {}
        self._last = None
        self._last_len = -1
        self._role_draws = [[[s, CS[c]] for s, c in rnd] for rnd in game.role_draws]
        self._role_draws_b = _packb(self._role_draws)
        self.touch()

    def touch(self) -> None:
        """The state changed (a move, advice, the end): forget this state's views."""
        self._w: dict[int | None, dict[str, Any]] = {}
        self._b: dict[int | None, bytes] = {}
        self._base: dict[str, Any] | None = None
        self._pub_b: bytes | None = None
        self._legal: list[dict[str, Any]] | None = None
        self._legal_b: bytes | None = None

    # ----------------------------------------------------------------- pieces
    def _owner(self, seat: int | None) -> int | None:
        """Whose cards ``seat`` sees: its own, or the captain's for the sitter."""
        g = self.game
        assert g is not None
        if seat is None:
            return None
        if g.roles is not None and seat == g.roles[2]:
            return g.roles[1]
        return seat

    def _new_hand(self) -> None:
        g = self.game
        assert g is not None
        h = g.hand
        self._hand = h
        self._viewers = {}
        self._mine = {}
        if g.roles is not None:
            roles = [""] * 3
            for name, s in zip(("box", "captain", "sitter"), g.roles, strict=True):
                roles[s] = name
        else:
            roles = ["dealer" if s == h.dealer else "nondealer" for s in range(g.num_seats)]
        self._roles = roles

    def _events(self, seat: int | None) -> tuple[list[dict[str, Any]], list[list[str]]]:
        """This hand's moves as ``seat`` saw them, and the known cards per seat (incremental)."""
        g = self.game
        assert g is not None
        h = g.hand
        if self._hand is not h:
            self._new_hand()
        entry = self._viewers.get(seat)
        if entry is None:
            entry = self._viewers[seat] = [0, [], [[] for _ in range(g.num_seats)], []]
        done, events, known, packed = entry
        n = len(h.events)
        if done < n:
            owner = self._owner(seat)
            for s, kind, card in h.events[done:]:
                cs = None if card is None else CS[card]
                if kind == "take" or kind == "draw_discard":
                    known[s].append(cs)
                elif kind == "discard" and cs in known[s]:
                    known[s].remove(cs)
                if kind == "draw_stock" and s != seat and s != owner:
                    cs = None
                ev = {"seat": s, "kind": kind, "card": cs}
                events.append(ev)
                packed.append(_packb(ev))
            entry[0] = n
        return events, known

    def _public(self) -> dict[str, Any]:
        base = self._base
        if base is not None:
            return base
        g = self.game
        assert g is not None
        h = g.hand
        if self._hand is not h:
            self._new_hand()
        if len(g.results) != self._last_len:
            self._last_len = len(g.results)
            self._last = g.results[-1].to_wire() if g.results else None
            self._last_b = _packb(self._last)
        over = g.over
        base = self._base = {
            "variant": g.rules.variant,
            "num_seats": g.num_seats,
            "hand_number": h.number,
            "phase": "game_over" if over else h.phase,
            "to_act": None if (over or h.phase == "over") else h.to_act,
            "dealer": h.dealer,
            "nondealer": h.nondealer,
            "roles": self._roles,
            "upcard": CS[h.upcard],
            "knock_limit": h.knock_limit,
            "doubled": h.doubled,
            "discard_pile": [CS[c] for c in h.discard_pile],
            "stock_size": len(h.stock),
            "hand_sizes": [m.bit_count() for m in h.hands],
            "taken_card": None if h.taken is None else CS[h.taken],
            "scores": list(g.scores),
            "hands_won": list(g.hands_won),
            "target_score": g.rules.target_score,
            "last_result": self._last,
            "winner": g.winner,
        }
        return base

    # ----------------------------------------------------------------- views
    def wire(self, seat: int | None) -> dict[str, Any]:
        """Exactly ``game.view(seat).to_wire()`` for the current state."""
        w = self._w.get(seat)
        if w is not None:
            return w
        g = self.game
        assert g is not None
        b = self._public()
        h = g.hand
        owner = self._owner(seat)
        events, known = self._events(seat)
        advice: list[dict[str, Any]] = []
        if g.roles is not None and seat is not None and seat in (g.roles[1], g.roles[2]):
            num = h.number
            advice = [
                {"seat": s, "action": None if a is None else a.to_wire(), "text": t} for n, s, a, t in g.advice if n == num
            ]
        w = self._w[seat] = {
            "seat": seat,
            "variant": b["variant"],
            "num_seats": b["num_seats"],
            "hand_number": b["hand_number"],
            "phase": b["phase"],
            "to_act": b["to_act"],
            "dealer": b["dealer"],
            "nondealer": b["nondealer"],
            "roles": b["roles"],
            "hand": None if owner is None else [CS[c] for c in cards_of(h.hands[owner])],
            "hand_of": owner,
            "upcard": b["upcard"],
            "knock_limit": b["knock_limit"],
            "doubled": b["doubled"],
            "discard_pile": b["discard_pile"],
            "stock_size": b["stock_size"],
            "hand_sizes": b["hand_sizes"],
            "known_cards": [list(k) for k in known],
            "taken_card": b["taken_card"],
            "events": list(events),
            "scores": b["scores"],
            "hands_won": b["hands_won"],
            "target_score": b["target_score"],
            "last_result": b["last_result"],
            "winner": b["winner"],
            "advice": advice,
            "role_draws": self._role_draws,
        }
        return w

    def packed(self, seat: int | None) -> bytes:
        """The msgpack bytes of :meth:`wire`, packed once per state and viewer.

        Built from pieces rather than by packing :meth:`wire`: the public part once per
        state, the last result once per hand, each event once per viewer, so a view costs
        a few small packs and one join. Keys come in another order than ``to_wire``'s;
        maps have no order, and the decoded map is the same.
        """
        b = self._b.get(seat)
        if b is not None:
            return b
        g = self.game
        assert g is not None
        pub = self._pub_b
        if pub is None:
            base = self._public()
            _, known = self._events(None)
            fields = dict(base)  # same key order as filtering it, at C speed
            del fields["last_result"]
            fields["known_cards"] = known
            assert 16 <= len(fields) < 65536  # packed with a 3-byte map16 header, dropped here
            pub = _packb(fields)[3:]
            self._pub_b = pub = pub + _K_LAST + self._last_b + _K_DRAWS + self._role_draws_b
        events = self._viewers_packed(seat)
        owner = self._owner(seat)
        h = g.hand
        if g.roles is not None and seat is not None and seat in (g.roles[1], g.roles[2]):
            num = h.number
            advice = [{"seat": s, "action": None if a is None else a.to_wire(), "text": t} for n, s, a, t in g.advice if n == num]
            mine_b = _packb({
                "seat": seat,
                "hand": None if owner is None else [CS[c] for c in cards_of(h.hands[owner])],
                "hand_of": owner,
                "advice": advice,
            })[1:]
        else:
            # no advice for this viewer: its own part changes only with its hand's cards
            # (an opponent's move leaves it as it was), so it is packed once per hand mask
            mask = -1 if owner is None else h.hands[owner]
            cached = self._mine.get(seat)
            if cached is not None and cached[0] == mask:
                mine_b = cached[1]
            else:
                mine_b = _packb({
                    "seat": seat,
                    "hand": None if owner is None else [CS[c] for c in cards_of(mask)],
                    "hand_of": owner,
                    "advice": [],
                })[1:]
                self._mine[seat] = (mask, mine_b)
        n_ev = len(events)
        ev_head = bytes((0x90 | n_ev,)) if n_ev < 16 else b"\xdc" + n_ev.to_bytes(2, "big")
        b = self._b[seat] = b"".join((_VIEW_HEAD, mine_b, _K_EVENTS, ev_head, *events, pub))
        return b

    def last_event_packed(self, seat: int | None) -> bytes:
        """The packed last event of ``seat``'s view (``wire(seat)["events"][-1]``)."""
        return self._viewers_packed(seat)[-1]

    def _viewers_packed(self, seat: int | None) -> list[bytes]:
        self._events(seat)
        return self._viewers[seat][3]

    def legal(self) -> list[dict[str, Any]]:
        if self._legal is None:
            assert self.game is not None
            self._legal = [_action_wire(a)[0] for a in self.game.legal_actions()]
        return self._legal

    def legal_packed(self) -> bytes:
        if self._legal_b is None:
            assert self.game is not None
            acts = self.game.legal_actions()
            n = len(acts)
            head = bytes((0x90 | n,)) if n < 16 else b"\xdc" + n.to_bytes(2, "big")
            # The engine lists the same few hundred Action objects over and over: their
            # packed bytes are found by identity (a C-level look-up), checked with ``is``.
            by_id = _PACKED_BY_ID
            parts = []
            for a in acts:
                hit = by_id.get(id(a))
                if hit is not None and hit[0] is a:
                    parts.append(hit[1])
                else:
                    packed = _action_wire(a)[1]
                    parts.append(packed)
                    if a.melds is None and len(by_id) < 4096:
                        by_id[id(a)] = (a, packed)  # keeps ``a`` alive: its id stays its own
            self._legal_b = head + b"".join(parts)
        return self._legal_b


_ACTIONS: dict[tuple[str, int | None], tuple[dict[str, Any], bytes]] = {}
_PACKED_BY_ID: dict[int, tuple[Any, bytes]] = {}


def _action_wire(a: Any) -> tuple[dict[str, Any], bytes]:
    """An action's wire map and its packed bytes, computed once per distinct action
    (legal actions carry no melds: at most a few hundred distinct ones exist). Keyed by
    ``(kind, card)``: a tuple hashes in C, the frozen dataclass's ``__hash__`` in Python."""
    if a.melds is not None:
        wire = a.to_wire()
        return wire, _packb(wire)
    key = (a.kind, a.card)
    w = _ACTIONS.get(key)
    if w is None:
        wire = a.to_wire()
        w = _ACTIONS[key] = (wire, _packb(wire))
    return w
