"""One hand, from the deal to a knock or a drawn hand (docs/rules.md §3.1-3.6).

Phases (:class:`okgin.enums.Phase`): ``offer`` (the upcard offer, §3.2), ``draw`` and
``discard`` (a turn, §3.3; knocking happens in ``discard``, §3.4), ``over``. The hand is
played by two seats, the dealer and the non-dealer; in Gin in the Box those are the box
and the captain (§4).

Validation always happens before mutation, so an illegal action leaves the hand as it
was. ``legal_actions()`` is cached per state: bots call it, then ``apply`` checks
membership against the same list.
"""

from __future__ import annotations

from .actions import DRAW_DISCARD, DRAW_STOCK, PASS, TAKE, Action
from .cards import CARD_VALUES, SUIT_MASK, Card, card_str, cards_of
from .enums import Phase
from .errors import IllegalAction
from .layoffs import best_defence, knocker_default_arrangement
from .melds import SUIT_DEADWOOD, SUIT_VALUE, Arrangement, deadwood_mask, validate_arrangement
from .rng import SeedStream
from .rules import RuleSet
from .scoring import HandResult, score_knock

__all__ = [
    "BIG_GIN", "DISCARD", "DRAW", "EVENTS", "HAND_SIZE", "MAX_STOCK_DRAWS", "OFFER", "OVER",
    "STOCK_FLOOR", "Hand", "max_hand_actions",
]

OFFER, DRAW, DISCARD, OVER = Phase.OFFER, Phase.DRAW, Phase.DISCARD, Phase.OVER
# One Action object per possible discard and knock, built once: legal_actions() is the
# engine's hottest path and only hands these out. DISCARDS, KNOCKS, EV_DISCARD, legal_cache,
# compute_legal and finish_drawn carry no underscore because okgin/game.py (which inlines
# legal_actions() and apply() for playouts) and okgin/openspiel.py use them; they are engine
# plumbing, so __all__ leaves them out (tests/test_private_names.py: no module touches another's
# underscored names).
DISCARDS = tuple(Action("discard", c) for c in range(52))
KNOCKS = tuple(Action("knock", c) for c in range(52))
BIG_GIN = Action("big_gin")
# The legal lists of the offer and the draw, shared by every state: the cached legal
# list is replaced, never changed, and legal_actions() hands out copies.
_OFFER_LEGAL = [TAKE, PASS]
_DRAW_LEGAL = [DRAW_STOCK, DRAW_DISCARD]
_STOCK_ONLY_LEGAL = [DRAW_STOCK]
# Per byte of the 52-bit hand mask (seven: bits 0-7, 8-15, ..., 48-51), per value of that
# byte: the discard actions of its cards, ascending. The discard phase's legal list is
# seven look-ups. Why bytes and not suits (as okgin.cards.cards_of): 1,792 small tuples
# stay in the processor's caches; 4 x 8,192 lazily built ones did not, and the misses
# cost more than the look-ups (random playouts meet thousands of different suit masks).
_BYTE_DISCARDS: tuple[tuple[tuple[Action, ...], ...], ...] = tuple(
    tuple(tuple(DISCARDS[8 * k + b] for b in range(8) if m >> b & 1 and 8 * k + b < 52) for m in range(256))
    for k in range(7)
)


# The event tuples of the moves that name a card, built once and shared by every hand:
# EVENTS[kind][seat][card] == (seat, kind, card). Why: a playout's draws and discards then
# allocate nothing for the hand's log, so the garbage collector, which a new tuple per move
# kept running (about 9% of a random playout), has nearly nothing to do. Tuples are
# immutable, so sharing them is invisible to readers of ``events``.
EVENTS: dict[str, tuple[tuple[tuple[int, str, Card], ...], ...]] = {
    kind: tuple(tuple((s, kind, c) for c in range(52)) for s in range(3)) for kind in ("draw_stock", "draw_discard", "discard")
}
EV_DISCARD = EVENTS["discard"]


HAND_SIZE = 10
STOCK_FLOOR = 2  # §3.6: the hand is drawn when a discard leaves 2 cards in the stock
# Stock draws possible in one hand: the 31 cards of the stock down to STOCK_FLOOR.
MAX_STOCK_DRAWS = 52 - 2 * HAND_SIZE - 1 - STOCK_FLOOR


def max_hand_actions(rules: RuleSet) -> int:
    """The most actions one hand can take, which the drawn-hand rules guarantee.

    Every turn but the first is a draw and a discard (or a knock). A stock draw shrinks
    the stock, so at most ``MAX_STOCK_DRAWS`` turns draw from it; ``max_pile_draws``
    bounds the turns that draw from the discard pile (the discard after the last one
    ends the hand). The longest offer is a pass and then the dealer's take (1 + 2
    actions), so: 3 + 2 * (MAX_STOCK_DRAWS + max_pile_draws).
    """
    return 3 + 2 * (MAX_STOCK_DRAWS + rules.max_pile_draws)


class Hand:
    """The state of one hand. Built by :class:`okgin.game.Game`; use that in programs."""

    __slots__ = (
        "dealer",
        "discard_pile",
        "doubled",
        "events",
        "hands",
        "knock_limit",
        "legal_cache",
        "nondealer",
        "number",
        "passes",
        "phase",
        "pile_draws",
        "result",
        "rules",
        "stock",
        "stock_only",
        "taken",
        "to_act",
        "upcard",
    )

    def __init__(
        self, rules: RuleSet, seed: str, number: int, dealer: int, nondealer: int, num_seats: int, deck: list[Card] | None = None
    ) -> None:
        """Deal hand ``number`` from the seed; ``deck`` (52 cards, dealt in order) replaces
        the shuffle for constructed positions (:mod:`okgin.position`)."""
        self.rules = rules
        self.number = number
        self.dealer = dealer
        self.nondealer = nondealer
        if deck is None:
            deck = SeedStream(seed, f"deal/{number}").shuffle(list(range(52)))
        # §3.1: 10 cards each, the next card is the upcard, the other 31 the stock.
        self.hands = [0] * num_seats
        for c in deck[0:HAND_SIZE]:
            self.hands[nondealer] |= 1 << c
        for c in deck[HAND_SIZE : 2 * HAND_SIZE]:
            self.hands[dealer] |= 1 << c
        self.upcard: Card = deck[2 * HAND_SIZE]
        self.stock: list[Card] = deck[2 * HAND_SIZE + 1 :][::-1]  # top of the stock is the end
        self.discard_pile: list[Card] = [self.upcard]
        self.knock_limit = rules.knock_limit_for_upcard(self.upcard)
        self.doubled = rules.spade_upcard_doubles and self.upcard // 13 == 3
        self.phase = OFFER
        self.to_act = nondealer
        self.passes = 0
        # draw_discard actions so far (the upcard taken at the offer does not count, as
        # in OpenSpiel): at rules.max_pile_draws the next discard draws the hand.
        self.pile_draws = 0
        self.stock_only = False
        self.taken: Card | None = None
        # Full-information log of this hand: (seat, kind, card or None). Views filter it.
        self.events: list[tuple[int, str, Card | None]] = []
        self.result: HandResult | None = None
        # The legal list of this state, computed on first use; cleared by every move. Also read
        # and filled by Game.legal_actions(), which inlines legal_actions() for speed.
        self.legal_cache: list[Action] | None = None

    def copy(self) -> Hand:
        """An independent copy: the lists that moves change are copied, the rest shared.

        Why not ``copy.deepcopy``: tree search copies a state per simulation, and almost
        everything here is immutable (ints, the rules, frozen results, the tuples of
        ``events`` and the ``Action`` objects of the cached legal list, which is
        replaced, never changed, by :meth:`apply`). Only ``hands``, ``stock``,
        ``discard_pile`` and ``events`` are mutated in place, so only they are copied.
        """
        h = Hand.__new__(Hand)
        h.rules = self.rules
        h.number = self.number
        h.dealer = self.dealer
        h.nondealer = self.nondealer
        h.hands = self.hands.copy()
        h.upcard = self.upcard
        h.stock = self.stock.copy()
        h.discard_pile = self.discard_pile.copy()
        h.knock_limit = self.knock_limit
        h.doubled = self.doubled
        h.phase = self.phase
        h.to_act = self.to_act
        h.passes = self.passes
        h.pile_draws = self.pile_draws
        h.stock_only = self.stock_only
        h.taken = self.taken
        h.events = self.events.copy()
        h.result = self.result
        h.legal_cache = self.legal_cache
        return h

    # ------------------------------------------------------------------ queries
    def other(self, seat: int) -> int:
        return self.nondealer if seat == self.dealer else self.dealer

    def legal_actions(self) -> list[Action]:
        """The legal actions of the seat to act, in a fixed order. Knocks are listed
        without declared melds. A fresh list each call: callers may keep or change it."""
        if self.legal_cache is None:
            self.legal_cache = self.compute_legal()
        return list(self.legal_cache)

    def compute_legal(self) -> list[Action]:
        """The legal list of this state (cached by the callers in ``legal_cache``).

        Why so much is written out inline: random playouts and tree search call this at
        every state, and in the discard phase the list (the discards, then any knocks)
        used to cost three function calls more than its arithmetic. The discards come
        from per-byte tables (see ``_BYTE_DISCARDS``). Knocks need the hand's deadwood,
        but only when it is within 10 of the knock limit: a lower bound from two table
        sums (:func:`okgin.melds.deadwood_mask`'s own fast path, which is exact when no
        rank is held three times) settles most hands without the search.
        """
        phase = self.phase
        if phase == DRAW:
            return _STOCK_ONLY_LEGAL if self.stock_only else _DRAW_LEGAL
        if phase == OFFER:
            return _OFFER_LEGAL
        if phase != DISCARD:
            return []
        hand = self.hands[self.to_act]
        taken = self.taken
        barred = None if taken is None or self.rules.allow_discard_of_taken_card else taken
        s0 = hand & SUIT_MASK
        s1 = (hand >> 13) & SUIT_MASK
        s2 = (hand >> 26) & SUIT_MASK
        s3 = hand >> 39
        d = hand if barred is None else hand & ~(1 << barred)
        b0, b1, b2, b3, b4, b5, b6 = _BYTE_DISCARDS
        out = [
            *b0[d & 255],
            *b1[d >> 8 & 255],
            *b2[d >> 16 & 255],
            *b3[d >> 24 & 255],
            *b4[d >> 32 & 255],
            *b5[d >> 40 & 255],
            *b6[d >> 48],
        ]
        dw = SUIT_DEADWOOD
        base = dw[s0] + dw[s1] + dw[s2] + dw[s3]  # the deadwood if no card is in a set
        three = (s0 & s1 & (s2 | s3)) | (s2 & s3 & (s0 | s1))  # ranks held three times
        if three:
            # Sets can meld at most the cards of those ranks (and taking cards out of a
            # suit never adds to its runs): a lower bound first, the search only if it
            # leaves a knock possible.
            sv = SUIT_VALUE
            base -= sv[s0 & three] + sv[s1 & three] + sv[s2 & three] + sv[s3 & three]
        limit = self.knock_limit
        # deadwood(hand - c) >= deadwood(hand) - value(c), and no card is worth more than
        # 10: most hands can't knock at all, and are known not to without a loop.
        if base - 10 <= limit:
            if three:
                base = deadwood_mask(hand)
            values = CARD_VALUES
            for c in cards_of(hand):
                if base - values[c] <= limit and c != barred and deadwood_mask(hand & ~(1 << c)) <= limit:
                    out.append(KNOCKS[c])
            if base == 0 and self.rules.big_gin:
                out.append(BIG_GIN)
        return out

    # ------------------------------------------------------------------ moves
    def check(self, action: Action) -> None:
        """Raise :class:`IllegalAction` with the reason if ``action`` is not legal now.

        Decided from the state directly (no list of legal actions is built):
        ``legal_actions()`` lists exactly the actions that pass this check, which the
        tests verify action by action.
        """
        phase = self.phase
        kind = action.kind
        if phase == DRAW:
            ok = kind == "draw_stock" or (kind == "draw_discard" and not self.stock_only)
        elif phase == DISCARD:
            hand = self.hands[self.to_act]
            c = action.card
            if kind == "big_gin":
                ok = self.rules.big_gin and deadwood_mask(hand) == 0
            elif c is None or not hand >> c & 1 or (c == self.taken and not self.rules.allow_discard_of_taken_card):
                ok = False
            elif kind == "discard":
                ok = True
            else:
                ok = kind == "knock" and deadwood_mask(hand & ~(1 << c)) <= self.knock_limit
        elif phase == OFFER:
            ok = kind == "take" or kind == "pass"
        else:
            raise IllegalAction("the hand is over")
        if not ok:
            raise IllegalAction(self._why_illegal(action.without_melds()))
        if action.melds is not None:
            self._declared_layout(action)

    def _why_illegal(self, a: Action) -> str:
        phase_moves = {
            OFFER: "take or pass the upcard", DRAW: "draw from the stock or the discard pile", DISCARD: "discard or knock",
        }
        if self.phase == OFFER and a.kind not in ("take", "pass"):
            return f"the upcard is on offer: {phase_moves[OFFER]}"
        if self.phase == DRAW:
            if a.kind == "draw_discard" and self.stock_only:
                return "both players passed the upcard: the first draw must come from the stock (docs/rules.md §3.2)"
            if a.kind not in ("draw_stock", "draw_discard"):
                return f"it is time to draw: {phase_moves[DRAW]}"
        if self.phase == DISCARD:
            if a.kind not in ("discard", "knock", "big_gin"):
                return f"you have drawn: {phase_moves[DISCARD]}"
            hand = self.hands[self.to_act]
            if a.card is not None and not hand >> a.card & 1:
                return f"{card_str(a.card)} is not in your hand"
            if a.card is not None and a.card == self.taken:
                return (
                    f"{card_str(a.card)} was taken from the discard pile this turn "
                    "and may not be thrown back (docs/rules.md §3.3)"
                )
            if a.kind == "knock":
                assert a.card is not None
                dw = deadwood_mask(hand & ~(1 << a.card))
                need = "gin (deadwood 0)" if self.knock_limit == 0 else f"deadwood at most {self.knock_limit}"
                return f"knocking needs {need}; discarding {card_str(a.card)} leaves {dw}"
            if a.kind == "big_gin":
                if not self.rules.big_gin:
                    return "big gin is not allowed by these rules (option big_gin)"
                return "big gin needs all 11 cards in melds"
        return f"{a} is not legal now"

    def _declared_layout(self, action: Action) -> Arrangement:
        hand = self.hands[self.to_act]
        if action.kind == "big_gin":
            rest = hand
        else:
            assert action.card is not None  # a knock names its discard
            rest = hand & ~(1 << action.card)
        try:
            layout = validate_arrangement(rest, action.melds or ())
        except ValueError as e:
            raise IllegalAction(f"declared melds refused: {e}") from None
        if action.kind == "big_gin" and layout.deadwood:
            raise IllegalAction("big gin needs all 11 cards in the declared melds")
        if layout.deadwood > self.knock_limit:
            raise IllegalAction(f"the declared melds leave deadwood {layout.deadwood}, over the knock limit {self.knock_limit}")
        return layout

    def apply(self, action: Action) -> None:
        """Play ``action`` for the seat to act (validated first).

        Why the two fast paths: a hand is mostly draws and discards (random play: about
        115 of its 117 moves), and their legality is one or two comparisons, tested here
        exactly as :meth:`check` tests it; anything else, or anything that fails them, goes
        through :meth:`check`, which raises saying why.
        """
        seat = self.to_act
        kind = action.kind
        phase = self.phase
        if phase == DISCARD and kind == "discard":
            card = action.card
            assert card is not None  # Action refuses a discard without a card
            hand = self.hands[seat]
            if not hand >> card & 1 or (card == self.taken and not self.rules.allow_discard_of_taken_card):
                self.check(action)  # raises
                raise AssertionError("check() accepted an illegal discard")
            self.legal_cache = None
            self.hands[seat] = hand & ~(1 << card)
            self.discard_pile.append(card)
            self.taken = None
            self.events.append(EV_DISCARD[seat][card])
            if len(self.stock) <= STOCK_FLOOR or self.pile_draws >= self.rules.max_pile_draws:
                self.finish_drawn()
            else:
                self.to_act = self.nondealer if seat == self.dealer else self.dealer
                self.phase = DRAW
            return
        if phase == DRAW and (kind == "draw_stock" or (kind == "draw_discard" and not self.stock_only)):
            self.legal_cache = None
            if kind == "draw_stock":
                c = self.stock.pop()
                self.stock_only = False
                self.taken = None
            else:
                c = self.discard_pile.pop()
                self.taken = c
                self.pile_draws += 1
            self.hands[seat] |= 1 << c
            self.phase = DISCARD
            self.events.append(EVENTS[kind][seat][c])
            return
        self.check(action)
        self.legal_cache = None
        if kind == "draw_stock":
            c = self.stock.pop()
            self.hands[seat] |= 1 << c
            self.taken = None
            self.stock_only = False
            self.phase = DISCARD
            self.events.append((seat, "draw_stock", c))
        elif kind == "discard":
            card = action.card
            assert card is not None
            self.hands[seat] &= ~(1 << card)
            self.discard_pile.append(card)
            self.taken = None
            self.events.append((seat, "discard", card))
            if len(self.stock) <= STOCK_FLOOR or self.pile_draws >= self.rules.max_pile_draws:
                self.finish_drawn()
            else:
                self.to_act = self.other(seat)
                self.phase = DRAW
        elif kind == "take":
            self.discard_pile.pop()
            self.hands[seat] |= 1 << self.upcard
            self.taken = self.upcard
            self.phase = DISCARD
            self.events.append((seat, "take", self.upcard))
        elif kind == "pass":
            self.passes += 1
            self.events.append((seat, "pass", None))
            if self.passes == 1:
                self.to_act = self.other(seat)
            else:  # §3.2.4: both passed; the non-dealer draws from the stock
                self.phase = DRAW
                self.to_act = self.nondealer
                self.stock_only = True
        elif kind == "draw_discard":
            c = self.discard_pile.pop()
            self.hands[seat] |= 1 << c
            self.taken = c
            self.pile_draws += 1
            self.phase = DISCARD
            self.events.append((seat, "draw_discard", c))
        else:  # knock or big gin
            self._finish_knock(seat, action)

    def finish_drawn(self) -> None:
        """§3.6: two cards left in the stock after a discard and nobody knocked; or
        (``max_pile_draws``, docs/rules.md §3.6.2) the discard after the hand's last allowed
        draw from the discard pile. The same outcome, ``drawn``, with the same
        consequences: judged after a discard, so the player who made the last draw may
        still knock instead, exactly as at the Wall."""
        self.phase = OVER
        self.result = HandResult(self.number, "drawn", None, 0, self.doubled, self.knock_limit, self.upcard, self.dealer)

    def _finish_knock(self, seat: int, action: Action) -> None:
        defender = self.other(seat)
        big = action.kind == "big_gin"
        if big:
            rest = self.hands[seat]
            self.events.append((seat, "big_gin", None))
        else:
            assert action.card is not None
            rest = self.hands[seat] & ~(1 << action.card)
            self.hands[seat] = rest
            self.events.append((seat, "knock", None))  # face down: revealed in the result
        if action.melds is not None:
            layout = validate_arrangement(rest, action.melds)  # already checked in check()
            gin = layout.deadwood == 0
            defence = best_defence(self.hands[defender], layout.melds, layoffs_allowed=not gin)
        else:
            layout, defence = knocker_default_arrangement(rest, self.hands[defender])
            gin = layout.deadwood == 0
        outcome, knocker_won, pts = score_knock(self.rules, layout.deadwood, defence.deadwood, gin, big, self.doubled)
        winner = None if outcome == "tie" else (seat if knocker_won else defender)
        self.phase = OVER
        self.result = HandResult(
            self.number,
            outcome,
            winner,
            pts,
            self.doubled,
            self.knock_limit,
            self.upcard,
            self.dealer,
            knocker=seat,
            defender=defender,
            knock_discard=action.card,
            knocker_layout=layout,
            defender_layout=defence,
        )
