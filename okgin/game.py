"""A whole game to ``target_score`` (docs/rules.md §3.1, §3.7, §4): the state object.

Modelled on python-chess and OpenSpiel: ``legal_actions()``, ``apply(action)``,
``view(seat)``, ``is_over``, results. The seed fixes every deal, the first dealer and
the Box roles, so seed + actions = the whole game (docs/rules.md §6); :mod:`okgin.record`
turns that into a replayable record.

>>> from okgin import Game, RuleSet
>>> g = Game(RuleSet(), seed=1)
>>> g.current_player in (0, 1), [str(a) for a in g.legal_actions()]
(True, ['take', 'pass'])
"""

from __future__ import annotations

import random
from typing import Any

from .actions import DRAW_DISCARD, DRAW_STOCK, Action
from .enums import Termination, termination
from .errors import IllegalAction
from .hand import DISCARD, DISCARDS, DRAW, EV_DISCARD, EVENTS, OVER, STOCK_FLOOR, Hand
from .infostate import resample as resample_hidden
from .rng import SeedStream, seed_text
from .roles import BOX, CAPTAIN, SITTER, Roles, draw_roles, rotate
from .rules import BOX_BONUS, GAME_BONUS, RuleSet
from .scoring import HandResult

# views imports game only for type checking, so a module-level import is safe; importing
# inside view() cost more than building the view itself (bots ask for one per decision).
from .views import make_view

__all__ = ["MAX_ADVICE_TEXT", "TERMINATIONS", "Game"]

MAX_ADVICE_TEXT = 280
# The log entries of the legal list's own draw and discard actions, built once and shared
# (as okgin.hand.EVENTS, and for the same reason: no new tracked tuple per move, so no
# garbage collection in a playout). _LOG_DRAWS[kind][seat], _LOG_DISCARDS[seat][card].
_LOG_DRAWS: dict[str, tuple[tuple[str, int, Action], ...]] = {
    a.kind: tuple(("action", s, a) for s in range(3)) for a in (DRAW_STOCK, DRAW_DISCARD)
}
_LOG_DISCARDS = tuple(tuple(("action", s, DISCARDS[c]) for c in range(52)) for s in range(3))
TERMINATIONS: tuple[Termination, ...] = tuple(Termination)  # the values, in this order: normal first
# The reasons Game.resign takes: every termination but the game's own endings.
_RESIGN_REASONS: tuple[Termination, ...] = tuple(t for t in Termination if t not in ("normal", "hand_limit"))


class Game:
    """One game of Oklahoma Gin (2 seats) or Gin in the Box (3 seats)."""

    def __init__(self, rules: RuleSet | None = None, seed: int | str = 0) -> None:
        self.rules = rules or RuleSet()
        self.seed = seed_text(seed)
        self.seed_value: int | str = seed
        self.num_seats = self.rules.num_players
        self.scores = [0] * self.num_seats
        self.hands_won = [0] * self.num_seats
        self.results: list[HandResult] = []
        # The record's entries: ("action", seat, Action) | ("advice", seat, Action|None, text)
        # | ("resign", seat, reason) | ("abandon", reason).
        self.log: list[tuple[Any, ...]] = []
        self.advice: list[tuple[int, int, Action | None, str]] = []  # (hand number, seat, action, text)
        self.over = False
        # The same as ``over``, as a plain attribute rather than a property: random
        # playouts read it before every move (set together with ``over``, and only here).
        self.is_over = False
        self.winner: int | None = None
        self.termination: Termination | str | None = None
        self.roles: Roles | None = None
        self.role_draws: list[list[tuple[int, int]]] = []
        # Set only by okgin.position.game_from_position: the constructed first hand.
        self.position: dict[str, Any] | None = None
        # Set by resample(): the hidden cards came from a sampler, not from the seed.
        self.resampled = False
        # okgin.views' per-viewer cache of this hand's filtered events (views._filtered_events).
        self.view_cache: dict[tuple[int | None, bool], list[Any]] = {}
        # The last hand that ended while the game went on, and its roles: the hand after
        # it is dealt at once, yet an environment whose episode is one hand must show
        # the hand as it ended (hand_end_view). Both are immutable once the hand is over.
        self.ended: tuple[Hand, Roles | None] | None = None
        if self.rules.variant == "box":
            self.roles, self.role_draws = draw_roles(self.seed)
            dealer, nondealer = self.roles[0], self.roles[1]
        else:
            # §3.1: the first dealer is chosen at random from the game's seed.
            dealer = SeedStream(self.seed, "dealer").below(2)
            nondealer = 1 - dealer
        self.hand = Hand(self.rules, self.seed, 0, dealer, nondealer, self.num_seats)

    def copy(self) -> Game:
        """An independent copy of the game, cheap enough for tree search.

        Only mutable state is copied (the scores, the lists that grow, the current
        hand's lists: :meth:`Hand.copy`); immutable values (the rules, seeds, frozen hand
        results, log entries, roles) are shared. The views' cache is not carried over:
        its entries are filled in place, so sharing them would let one game's views
        leak into the other's; the copy rebuilds its own on its first view.
        """
        g = Game.__new__(Game)
        g.rules = self.rules
        g.seed = self.seed
        g.seed_value = self.seed_value
        g.num_seats = self.num_seats
        g.scores = self.scores.copy()
        g.hands_won = self.hands_won.copy()
        g.results = self.results.copy()
        g.log = self.log.copy()
        g.advice = self.advice.copy()
        g.over = g.is_over = self.over
        g.winner = self.winner
        g.termination = self.termination
        g.roles = self.roles
        g.role_draws = self.role_draws  # written once by draw_roles, never changed
        g.position = self.position
        g.resampled = self.resampled
        g.view_cache = {}
        g.ended = self.ended
        g.hand = self.hand.copy()
        return g

    clone = copy  # OpenSpiel's name

    def resample(self, seat: int | None, rng: random.Random) -> Game:
        """A copy in which the cards ``seat`` cannot see are redealt at random.

        As OpenSpiel's ``ResampleFromInfostate``: the copy gives ``seat`` exactly the same
        :meth:`view` (its hand, the discard pile, the cards known to be in the other
        hands, the whole public history), and is a legal state of the same hand, to be
        played on; the hidden cards (the other hands' unknown cards and the stock) are
        dealt uniformly among their places with ``rng`` (:mod:`okgin.infostate`, whose
        :func:`~okgin.infostate.deal_hidden` is the one implementation of that deal).
        ``seat`` None resamples for a spectator (both hands hidden). The copy has no
        record (:meth:`to_record` refuses it): its seed no longer deals its cards.
        """
        return resample_hidden(self, seat, rng)

    # ----------------------------------------------------------------- queries
    @property
    def current_player(self) -> int | None:
        """The seat to act, or None when the game is over."""
        return None if self.over else self.hand.to_act

    @property
    def hand_number(self) -> int:
        return self.hand.number

    def legal_actions(self) -> list[Action]:
        """Legal actions of the seat to act (knocks listed without declared melds)."""
        if self.over:
            return []
        # Hand.legal_actions() inlined (the hottest call of random playouts): the cached
        # list, computed on first use, copied so that callers may keep or change it.
        h = self.hand
        legal = h.legal_cache
        if legal is None:
            if h.phase == DRAW:  # half the states: no need to cache two constants
                return [DRAW_STOCK] if h.stock_only else [DRAW_STOCK, DRAW_DISCARD]
            legal = h.legal_cache = h.compute_legal()
        return list(legal)

    def role_of(self, seat: int) -> str:
        """``box``/``captain``/``sitter`` in the box game, ``dealer``/``nondealer`` otherwise."""
        if self.roles is not None:
            return (BOX, CAPTAIN, SITTER)[self.roles.index(seat)]
        return "dealer" if seat == self.hand.dealer else "nondealer"

    def is_legal(self, action: Action) -> bool:
        try:
            self.check(action)
        except IllegalAction:
            return False
        return True

    def check(self, action: Action, seat: int | None = None) -> None:
        """Raise :class:`IllegalAction` if ``action`` (by ``seat``, if given) is illegal now."""
        if self.over:
            raise IllegalAction("the game is over")
        if seat is not None and seat != self.hand.to_act:
            if self.roles is not None and seat == self.roles[2]:
                raise IllegalAction("the sitter does not play this hand; it may only advise the captain")
            raise IllegalAction(f"it is not seat {seat}'s turn: seat {self.hand.to_act} is to act")
        self.hand.check(action)

    # ------------------------------------------------------------------ moves
    def apply(self, action: Action, seat: int | None = None) -> HandResult | None:
        """Play ``action`` for the seat to act; returns the hand's result if it ended it.

        Raises :class:`IllegalAction` (state untouched) if the action is illegal, or if
        ``seat`` is given and is not the seat to act.
        """
        hand = self.hand
        actor = hand.to_act
        if self.over or (seat is not None and seat != actor):
            self.check(action, seat)  # raises, saying why
        # Hand.apply's two fast paths (a draw, a discard: nearly every move), written out
        # here once more because the call into the hand cost about a twentieth of a
        # random playout. The same tests, the same changes, in the same order;
        # tests/engine/test_search_support.py plays Hand.apply and Game.apply side by side.
        kind = action.kind
        phase = hand.phase
        if phase == DRAW and (kind == "draw_stock" or (kind == "draw_discard" and not hand.stock_only)):
            hand.legal_cache = None
            if kind == "draw_stock":
                c = hand.stock.pop()
                hand.stock_only = False
                hand.taken = None
            else:
                c = hand.discard_pile.pop()
                hand.taken = c
                hand.pile_draws += 1
            hand.hands[actor] |= 1 << c
            hand.phase = DISCARD
            hand.events.append(EVENTS[kind][actor][c])
            self.log.append(
                _LOG_DRAWS[kind][actor] if action is DRAW_STOCK or action is DRAW_DISCARD else ("action", actor, action)
            )
            return None
        if phase == DISCARD and kind == "discard":
            card = action.card
            assert card is not None  # Action refuses a discard without a card
            held = hand.hands[actor]
            if not held >> card & 1 or (card == hand.taken and not hand.rules.allow_discard_of_taken_card):
                hand.check(action)  # raises
                raise AssertionError("check() accepted an illegal discard")
            hand.legal_cache = None
            hand.hands[actor] = held & ~(1 << card)
            hand.discard_pile.append(card)
            hand.taken = None
            hand.events.append(EV_DISCARD[actor][card])
            self.log.append(_LOG_DISCARDS[actor][card] if action is DISCARDS[card] else ("action", actor, action))
            if len(hand.stock) <= STOCK_FLOOR or hand.pile_draws >= hand.rules.max_pile_draws:
                hand.finish_drawn()
                return self._end_hand()
            hand.to_act = hand.nondealer if actor == hand.dealer else hand.dealer
            hand.phase = DRAW
            return None
        hand.apply(action)  # checks the action itself before changing anything
        self.log.append(("action", actor, action))
        if hand.phase == OVER:
            return self._end_hand()
        return None

    apply_action = apply  # OpenSpiel's name

    def advise(self, seat: int, action: Action | None, text: str = "") -> None:
        """The sitter's advice to its captain (docs/rules.md §4 [resolved]).

        Recorded, shown to the captain and sitter only, and never moves the game. A
        suggested action must be legal for the captain at that moment.
        """
        if self.over:
            raise IllegalAction("the game is over")
        if self.roles is None:
            raise IllegalAction("advice exists only in Gin in the Box")
        if seat != self.roles[2]:
            raise IllegalAction("only the player sitting out may advise the captain")
        if not isinstance(text, str) or len(text) > MAX_ADVICE_TEXT:
            raise IllegalAction(f"advice text must be a string of at most {MAX_ADVICE_TEXT} characters")
        if any(ord(ch) < 32 and ch not in "\t" for ch in text):
            raise IllegalAction("advice text may not contain control characters")
        if action is not None:
            if self.hand.to_act != self.roles[1]:
                raise IllegalAction("a suggested action must wait for the captain's turn")
            try:
                self.hand.check(action)
            except IllegalAction as e:
                raise IllegalAction(f"suggested action {action} is not legal for the captain: {e}") from None
        if action is None and not text:
            raise IllegalAction("advice needs a suggested action, a text, or both")
        self.log.append(("advice", seat, action, text))
        self.advice.append((self.hand.number, seat, action, text))

    def resign(self, seat: int, reason: str = Termination.RESIGNED) -> None:
        """End the game with ``seat`` forfeiting (timeout, illegal moves, disconnect...).

        Two players: the other wins. Three: the best score among the others wins (the
        lower seat on a tie). ``reason`` is the termination reason recorded.
        """
        if self.over:
            raise IllegalAction("the game is over")
        if not 0 <= seat < self.num_seats:
            raise IllegalAction(f"no seat {seat}")
        if reason not in _RESIGN_REASONS:
            raise ValueError(f"termination reason must be one of {', '.join(_RESIGN_REASONS)}")
        self.log.append(("resign", seat, reason))
        others = [s for s in range(self.num_seats) if s != seat]
        self.winner = max(others, key=lambda s: (self.scores[s], -s))
        self.over = self.is_over = True
        self.termination = Termination(reason)

    def abandon(self, reason: str = Termination.ABANDONED) -> None:
        """End the game with no winner (e.g. the referee is shut down)."""
        if self.over:
            raise IllegalAction("the game is over")
        self.log.append(("abandon", reason))
        self.over = self.is_over = True
        self.termination = termination(reason)

    # ------------------------------------------------------------ hand endings
    def _end_hand(self) -> HandResult:
        hand = self.hand
        r = hand.result
        assert r is not None
        if r.winner is not None:
            self.scores[r.winner] += r.points
            self.hands_won[r.winner] += 1
        # The hand's own result, made by this very apply() and seen by no one yet, is
        # completed in place: dataclasses.replace cost more than the rest of a hand's end.
        object.__setattr__(r, "scores_after", tuple(self.scores))
        self.results.append(r)
        if r.winner is not None and self.scores[r.winner] >= self.rules.target_score:
            self.over = self.is_over = True
            self.winner = r.winner
            self.termination = Termination.NORMAL
            return r
        if self.rules.max_hands and len(self.results) >= self.rules.max_hands:
            # §3.7.1: the game limit. The higher score wins; equal top scores, nobody.
            top = max(self.scores)
            leaders = [s for s in range(self.num_seats) if self.scores[s] == top]
            self.over = self.is_over = True
            self.winner = leaders[0] if len(leaders) == 1 else None
            self.termination = Termination.HAND_LIMIT
            return r
        self.ended = (hand, self.roles)
        if self.roles is not None:
            box_won = None if r.winner is None else r.winner == self.roles[0]
            self.roles = rotate(self.roles, box_won)
            dealer, nondealer = self.roles[0], self.roles[1]
        else:
            # §3.1: the winner deals the next hand; after a drawn hand the same dealer.
            dealer = hand.dealer if r.winner is None else r.winner
            nondealer = 1 - dealer
        self.hand = Hand(self.rules, self.seed, hand.number + 1, dealer, nondealer, self.num_seats)
        return r

    # ----------------------------------------------------------------- results
    def final_scores(self) -> dict[str, Any]:
        """Plain scores, and with ``classic_bonuses`` the bonus totals beside them (§3.7)."""
        out: dict[str, Any] = {
            "scores": list(self.scores),
            "hands_won": list(self.hands_won),
            "winner": self.winner,
            "termination": self.termination,
        }
        if self.rules.classic_bonuses and self.over and self.winner is not None:
            totals = []
            shutout = all(self.scores[s] == 0 for s in range(self.num_seats) if s != self.winner)
            for s in range(self.num_seats):
                t = self.scores[s] + BOX_BONUS * self.hands_won[s]
                if s == self.winner:
                    t += GAME_BONUS
                    if shutout:  # "all of the winner's points": plain score and both bonuses
                        t *= 2
                totals.append(t)
            out["classic_totals"] = totals
            out["shutout"] = shutout
        return out

    # ------------------------------------------------------------------- views
    def view(self, seat: int | None):
        """What ``seat`` may see (docs/rules.md §5); ``None`` is a spectator."""
        return make_view(self, seat)

    def hand_end_view(self, seat: int | None):
        """What ``seat`` saw as the last scored hand ended (phase ``over``), although the
        next hand is already dealt; ``None`` before any hand has ended. When the game is
        over, its last hand is the one that ended, and this is :meth:`view`."""
        if self.over or self.ended is None:
            return make_view(self, seat) if self.over else None
        return make_view(self, seat, ended=self.ended)

    def full_view(self):
        """Everything, for delayed broadcast feeds and debugging (never for a seat)."""
        return make_view(self, None, full=True)

    def to_record(self) -> dict[str, Any]:
        from .record import game_to_record

        return game_to_record(self)

    @classmethod
    def from_record(cls, record: dict[str, Any], verify: bool = True) -> Game:
        from .record import game_from_record

        return game_from_record(record, verify=verify)

    def __repr__(self) -> str:
        state = (
            f"over, winner {self.winner}"
            if self.over
            else f"hand {self.hand.number}, {self.hand.phase}, seat {self.hand.to_act} to act"
        )
        return f"<Game {self.rules.variant} seed={self.seed!r} scores={self.scores} {state}>"
