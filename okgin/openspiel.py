"""Oklahoma Gin and Gin in the Box as OpenSpiel games (``pyspiel`` Python games).

Importing this module registers two games with OpenSpiel::

    import pyspiel
    import okgin.openspiel  # noqa: F401  (registers the games)
    game = pyspiel.load_game("oklahoma_gin")          # or "gin_in_the_box"
    game = pyspiel.load_game("oklahoma_gin", {"returns": "game", "rules": "target_score=50"})

The rules are okgin's engine, unchanged (docs/rules.md); this module only adds what
OpenSpiel needs on top of it:

- **Chance nodes.** The start of the game is one chance node (the first dealer of
  Oklahoma Gin: 2 outcomes; the Box roles: 6 orders of the seats). Every deal is 21
  chance nodes (the non-dealer's 10 cards, the dealer's 10, the upcard), and every draw
  from the stock is a chance node over the cards left in it. Why draws and not a
  shuffled stock: that is what the players know (the stock's order is nobody's
  information), it is how OpenSpiel's own ``gin_rummy`` deals, and it keeps the
  hidden part of a state small, so :meth:`OkginState.resample_from_infostate` only
  has to redeal the opponent's unseen cards.
- **Actions** (``num_distinct_actions`` = 109): 0 take, 1 pass, 2 draw from the stock,
  3 draw the top discard, 4 + c discard card c, 56 + c knock throwing card c (the
  referee lays the melds out, docs/rules.md §3.4), 108 big gin. Cards are okgin's
  0-51 (``Ac`` = 0 ... ``Ks`` = 51).
- **Players.** Seats 0-1 (Oklahoma Gin) or 0-2 (Gin in the Box). The Box game's
  sitter never acts in OpenSpiel: advice never moves the game (docs/rules.md §4.3), so
  it is no move of a game tree; :mod:`okgin.envs` offers it as an action.
- **Returns**, the game parameter ``returns``: ``"hand"`` (default) plays one hand and
  returns its points, the winner +points and the loser -points (a drawn hand or a tie
  0; the sitter 0): zero-sum. ``"game"`` plays hands to ``target_score`` and returns +1
  for the winner and -1/(n-1) for each other player; a game still running after
  ``max_hands`` hands (default 50) ends with all 0, since OpenSpiel needs a bounded
  length and the rules have none (docs/rules.md §3.7).
- **Observations.** An observer (``make_py_observer``) builds strings and tensors from
  okgin's :class:`okgin.View` of the player's seat, so they hold exactly what that seat
  may see (docs/rules.md §5). The information state (perfect recall) adds the hand's
  events as the seat saw them and, in a whole game, every earlier hand's (in the string;
  the tensor holds the current hand's events only, since earlier hands change nothing
  that is still to come, and a tensor of every hand would have no bound).

Other game parameters: ``rules``, comma-separated ``NAME=VALUE`` rule options as
``okgin --rule`` takes them (``"knock_limit=10,undercut_bonus=25"``), or the same as
``NAME:VALUE`` joined by ``;``, the spelling the game string uses (``str(game)`` is
``oklahoma_gin(...,rules=knock_limit:10;undercut_bonus:25,...)``: OpenSpiel's parser
splits at ``,`` and ``=``, so this is the form that loads back); ``max_hands``;
``seed``: -1 (default) makes every chance node uniform over the cards left; a seed >= 0
makes it a **sampled deal**, okgin's own (docs/rules.md §6): each chance node has one
outcome, the one ``okgin.Game(rules, seed)`` deals (first dealer, Box roles, hands,
upcard, stock order), so a game with the same actions is that okgin game, card for card,
and a referee's record can be replayed in OpenSpiel. A state resampled from it is no
longer the seed's world: its later chance nodes are uniform.
"""

from __future__ import annotations

import random
from typing import Any

try:
    import numpy as np
    import pyspiel
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError(
        "okgin.openspiel needs OpenSpiel (the 'open_spiel' package): pip install 'okgin[research]'"
    ) from e

from .actions import DRAW_DISCARD, DRAW_STOCK, PASS, TAKE, Action
from .cards import card_str, cards_of
from .game import Game
from .hand import BIG_GIN, HAND_SIZE, Hand, max_hand_actions
from .hand import DISCARDS as _ENGINE_DISCARDS
from .hand import KNOCKS as _ENGINE_KNOCKS
from .rng import SeedStream
from .rules import RuleSet

# ---------------------------------------------------------------- action encoding
TAKE_ID, PASS_ID, DRAW_STOCK_ID, DRAW_DISCARD_ID = 0, 1, 2, 3
DISCARD_BASE, KNOCK_BASE, BIG_GIN_ID = 4, 56, 108
NUM_ACTIONS = 109
_SIMPLE = {TAKE: TAKE_ID, PASS: PASS_ID, DRAW_STOCK: DRAW_STOCK_ID, DRAW_DISCARD: DRAW_DISCARD_ID}
_BY_ID: list[Action] = [TAKE, PASS, DRAW_STOCK, DRAW_DISCARD]
_BY_ID += [Action("discard", c) for c in range(52)] + [Action("knock", c) for c in range(52)] + [BIG_GIN]
# The 6 orders of three seats: the Box roles' chance outcomes, as (box, captain, sitter).
_ROLE_ORDERS = ((0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0))
_DEAL_CARDS = 2 * HAND_SIZE + 1  # both hands and the upcard
_STOCK_DRAWS = 52 - _DEAL_CARDS - 2  # the stock never goes below 2 (docs/rules.md §3.6.1)
_IDENTITY_DECK = list(range(52))
_EVENT_KINDS = ("take", "pass", "draw_stock", "draw_discard", "discard", "knock", "big_gin")


# The engine hands out the same Action objects every time (okgin.hand's tables), so the
# hot path (legal_actions in every rollout step) maps them by identity, not by hash.
_ID_OF_OBJECT = {id(a): i for i, a in enumerate(_BY_ID)}
_ID_OF_OBJECT.update({id(a): DISCARD_BASE + a.card for a in _ENGINE_DISCARDS if a.card is not None})
_ID_OF_OBJECT.update({id(a): KNOCK_BASE + a.card for a in _ENGINE_KNOCKS if a.card is not None})
_ID_OF_OBJECT[id(BIG_GIN)] = BIG_GIN_ID


def action_id(action: Action) -> int:
    """OpenSpiel's action number for an okgin action (declared melds are dropped)."""
    fast = _ID_OF_OBJECT.get(id(action))
    if fast is not None:
        return fast
    simple = _SIMPLE.get(action)
    if simple is not None:
        return simple
    if action.kind == "discard":
        assert action.card is not None
        return DISCARD_BASE + action.card
    if action.kind == "knock":
        assert action.card is not None
        return KNOCK_BASE + action.card
    if action.kind == "big_gin":
        return BIG_GIN_ID
    raise ValueError(f"no OpenSpiel action for {action}")


def id_action(action: int) -> Action:
    """The okgin action for OpenSpiel's action number."""
    return _BY_ID[action]


# ------------------------------------------------------------------ the game types
_START, _DEAL, _PLAY, _DRAW, _OVER = "start", "deal", "play", "draw", "over"
_DEFAULT_PARAMS: dict[str, Any] = {"returns": "hand", "rules": "", "max_hands": 50, "seed": -1}


def _game_type(short_name: str, long_name: str, players: int) -> Any:
    return pyspiel.GameType(
        short_name=short_name,
        long_name=long_name,
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=players,
        min_num_players=players,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=dict(_DEFAULT_PARAMS),
    )


OKLAHOMA_TYPE = _game_type("oklahoma_gin", "Oklahoma Gin (okgin)", 2)
BOX_TYPE = _game_type("gin_in_the_box", "Gin in the Box (okgin)", 3)


def _rules_from_params(variant: str, params: dict[str, Any]) -> RuleSet:
    """The rule set of a ``rules`` parameter, in either spelling.

    ``knock_limit=10,undercut_bonus=25`` is ``okgin --rule``'s; ``knock_limit:10;undercut_bonus:25``
    is the game string's, since OpenSpiel's parser splits a game string at every ``,`` and
    ``=`` (``oklahoma_gin(rules=knock_limit=10)`` reads back as a parameter named
    ``rules=knock_limit``).
    """
    text = str(params.get("rules", "") or "")
    assignments = [a.replace(":", "=", 1) if "=" not in a else a
                   for a in (p.strip() for p in text.replace(";", ",").split(",")) if a]
    if any(a.split("=", 1)[0].strip() == "variant" for a in assignments):
        raise ValueError("the variant is the game's name (oklahoma_gin or gin_in_the_box), not a rule here")
    return RuleSet(variant=variant).with_assignments(assignments)


def rules_param(rules: RuleSet) -> str:
    """The ``rules`` parameter that makes ``rules``, as the game string carries it.

    Only the options that differ from the variant's defaults, in the rule set's own order,
    as ``NAME:VALUE`` joined by ``;``: neither character is one OpenSpiel's game-string
    parser splits at, so ``load_game(str(game))``, ``serialize_game_and_state``, pickling
    (and with it multiprocessing workers) give back the same game with custom rules too.
    """
    mine, default = rules.to_dict(), RuleSet(variant=rules.variant).to_dict()
    parts = []
    for name in mine.keys() | default.keys():
        if name == "variant" or mine.get(name) == default.get(name):
            continue
        value = mine.get(name, 0)  # absent: max_hands unset
        parts.append((list(mine).index(name) if name in mine else len(mine),
                      f"{name}:{str(value).lower() if isinstance(value, bool) else value}"))
    return ";".join(text for _, text in sorted(parts))


class OkginGame(pyspiel.Game):
    """Either variant; the concrete classes below fix the variant and the game type."""

    variant = "oklahoma"
    game_type: Any = OKLAHOMA_TYPE

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = {**_DEFAULT_PARAMS, **(params or {})}
        returns = params["returns"]
        if returns not in ("hand", "game"):
            raise ValueError(f"parameter returns must be 'hand' or 'game', not {returns!r}")
        self.rules = _rules_from_params(self.variant, params)
        self.whole_game = returns == "game"
        self.max_hands = int(params["max_hands"])
        if self.max_hands < 1:
            raise ValueError("max_hands must be at least 1")
        seed = int(params["seed"])
        # seed >= 0: the sampled deal of okgin's own seeded stream (docs/rules.md §6), one
        # outcome per chance node; -1: every chance node uniform over what is left.
        self.seed: int | None = seed if seed >= 0 else None
        n = self.rules.num_players
        hands = self.max_hands if self.whole_game else 1
        # Per hand: the deal, every stock draw, every player action; plus the start node.
        per_hand = _DEAL_CARDS + _STOCK_DRAWS + max_hand_actions(self.rules)
        if self.whole_game:
            lo, hi = -1.0 / (n - 1), 1.0
        else:
            r = self.rules
            top = max(r.gin_bonus, r.big_gin_bonus, r.undercut_bonus + 10) + 100
            hi = float(top * 2)  # a spade upcard may double every point
            lo = -hi
        info = pyspiel.GameInfo(
            num_distinct_actions=NUM_ACTIONS,
            max_chance_outcomes=52,
            num_players=n,
            min_utility=lo,
            max_utility=hi,
            utility_sum=0.0,
            max_game_length=1 + hands * per_hand,
        )
        # The game string (str(game), serialization, pickling) must read back as this game.
        params["rules"] = rules_param(self.rules)
        super().__init__(self.game_type, info, params)
        self.prototype = Game(self.rules, seed=0 if self.seed is None else self.seed)

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        """Pickle as the game string. pybind11's own pickling rebuilds the C++ game under
        a Python object whose ``__init__`` never ran (no ``rules``, no prototype), so an
        unpickled game (in a multiprocessing worker, say) could not make a state."""
        return pyspiel.load_game, (str(self),)

    def new_initial_state(self) -> OkginState:
        return OkginState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> OkginObserver:
        return OkginObserver(self, iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False), params)


class OklahomaGinGame(OkginGame):
    """Oklahoma Gin, two players (docs/rules.md §3)."""

    variant = "oklahoma"
    game_type = OKLAHOMA_TYPE


class GinInTheBoxGame(OkginGame):
    """Gin in the Box, three players (docs/rules.md §4); the sitter never acts here."""

    variant = "box"
    game_type = BOX_TYPE


# ------------------------------------------------------------------------ the state
def _copy_game(g: Game) -> Game:
    """An independent copy of an okgin game: :meth:`okgin.Game.copy`, made for search
    (it copies what a move mutates and shares the immutable rest; ``copy.deepcopy``
    would cost many times more on every ISMCTS simulation)."""
    return g.copy()


class _Core:
    """Everything an :class:`OkginState` holds, in one object with a cheap deep copy.

    OpenSpiel clones a Python state by deep-copying its attributes; giving them one
    owner with ``__deepcopy__`` makes ``clone()`` a shallow copy of a few lists instead
    of a recursive copy of the engine.
    """

    def __init__(self, rules: RuleSet, prototype: Game) -> None:
        # A copy of the game's prototype, not a new Game: OpenSpiel's clone() builds a
        # fresh state before copying the old one's attributes over it, and a new Game
        # shuffles a deck (and draws Box roles), many times the cost of a copy. The
        # prototype's own deal and roles are replaced by the chance nodes'.
        self.game = _copy_game(prototype)
        # The seeded deal (parameter seed), or None: the seed's deck of the hand being dealt.
        self.seeded = False
        self.seed_deck: list[int] = []
        self.stage = _START
        self.dealt: list[int] = []
        # This hand's chance outcomes: (index in the history, seat that got the card or
        # None for the upcard). resample_from_infostate redeals the hidden ones.
        self.hand_chance: list[tuple[int, int | None]] = []
        self.moves = 0  # OpenSpiel history length: every chance outcome and action
        # Per seat: what it saw of each finished hand (its information state's memory).
        self.past: list[list[str]] = [[] for _ in range(rules.num_players)]
        self.returns: list[float] = [0.0] * rules.num_players

    def __deepcopy__(self, memo: dict[int, Any]) -> _Core:
        new = _Core.__new__(_Core)
        new.game = _copy_game(self.game)
        new.seeded = self.seeded
        new.seed_deck = self.seed_deck  # never changed in place
        new.stage = self.stage
        new.dealt = list(self.dealt)
        new.hand_chance = list(self.hand_chance)
        new.moves = self.moves
        new.past = [list(p) for p in self.past]
        new.returns = list(self.returns)
        return new


class OkginState(pyspiel.State):
    """One state of either game: the okgin :class:`Game` plus the pending chance node."""

    def __init__(self, game: OkginGame) -> None:
        super().__init__(game)
        self._s = _Core(game.rules, game.prototype)
        if game.seed is not None:
            self._s.seeded = True
            p = game.prototype
            self._seed_start = _ROLE_ORDERS.index(p.roles) if p.roles is not None else p.hand.dealer
        self._whole_game = game.whole_game
        self._max_hands = game.max_hands

    # ------------------------------------------------------------- engine access
    @property
    def okgin_game(self) -> Game:
        """The engine's game behind this state (read it; move it only through this state)."""
        return self._s.game

    # -------------------------------------------------------------- pyspiel API
    def current_player(self) -> int:
        s = self._s
        if s.stage == _OVER:
            return pyspiel.PlayerId.TERMINAL
        if s.stage in (_START, _DEAL, _DRAW):
            return pyspiel.PlayerId.CHANCE
        to_act = s.game.current_player
        assert to_act is not None
        return to_act

    def is_terminal(self) -> bool:
        return self._s.stage == _OVER

    def _legal_actions(self, player: int) -> list[int]:
        assert player >= 0
        if self._s.stage != _PLAY or player != self._s.game.current_player:
            return []
        ids = _ID_OF_OBJECT
        out = [ids.get(id(a)) or action_id(a) for a in self._s.game.legal_actions()]
        # The engine's order is ascending here already (take, pass; stock, pile; discards,
        # knocks, big gin), so this sort is a linear check; OpenSpiel requires the order.
        out.sort()
        return out

    def chance_outcomes(self) -> list[tuple[int, float]]:
        s = self._s
        if s.seeded:  # one outcome, okgin's seeded stream's (rules.md §6.3-6.5)
            if s.stage == _START:
                return [(self._seed_start, 1.0)]
            if s.stage == _DEAL:
                return [(s.seed_deck[len(s.dealt)], 1.0)]
            if s.stage == _DRAW:
                return [(s.game.hand.stock[-1], 1.0)]
            return []
        if s.stage == _START:
            n = 6 if s.game.roles is not None else 2
            return [(i, 1.0 / n) for i in range(n)]
        if s.stage == _DEAL:
            left = sorted(set(range(52)) - set(s.dealt))
        elif s.stage == _DRAW:
            left = sorted(s.game.hand.stock)
        else:
            return []
        p = 1.0 / len(left)
        return [(c, p) for c in left]

    def _apply_action(self, action: int) -> None:
        s = self._s
        stage = s.stage
        index = s.moves
        s.moves += 1
        if stage == _START:
            self._start(action)
        elif stage == _DEAL:
            self._deal_card(action, index)
        elif stage == _DRAW:
            h = s.game.hand
            seat = h.to_act
            h.stock.remove(action)
            h.stock.append(action)  # the chance outcome is the top of the stock
            s.hand_chance.append((index, seat))
            s.game.apply(DRAW_STOCK)
            s.stage = _PLAY
        else:
            a = id_action(action)
            if a is DRAW_STOCK:
                s.game.check(a)
                s.stage = _DRAW
                return
            number = s.game.hand_number
            finished_hand = s.game.hand
            result = s.game.apply(a)
            if result is not None:
                self._hand_over(finished_hand, number, result.winner, result.points)

    def _start(self, outcome: int) -> None:
        g = self._s.game
        if g.roles is not None:
            roles = _ROLE_ORDERS[outcome]
            if roles != g.roles:  # the seeded draw keeps its public rounds of draws
                g.role_draws = []
            g.roles = roles
            dealer, nondealer = g.roles[0], g.roles[1]
        else:
            dealer, nondealer = outcome, 1 - outcome
        # A placeholder hand (no shuffle): it names the dealer and the non-dealer for the
        # deal's chance nodes, and is replaced when the 21st card is dealt.
        g.hand = Hand(g.rules, g.seed, 0, dealer, nondealer, g.num_seats, deck=_IDENTITY_DECK)
        self._enter_deal(0)

    def _enter_deal(self, number: int) -> None:
        s = self._s
        s.stage = _DEAL
        if s.seeded:
            s.seed_deck = SeedStream(s.game.seed, f"deal/{number}").shuffle(list(range(52)))

    def _deal_card(self, card: int, index: int) -> None:
        s = self._s
        h = s.game.hand
        k = len(s.dealt)
        s.dealt.append(card)
        seat = h.nondealer if k < HAND_SIZE else h.dealer if k < 2 * HAND_SIZE else None
        s.hand_chance.append((index, seat))
        if len(s.dealt) < _DEAL_CARDS:
            return
        if s.seeded and s.dealt == s.seed_deck[:_DEAL_CARDS]:
            deck = s.seed_deck  # the stock in the seed's order too: its draws follow it
        else:
            deck = s.dealt + sorted(set(range(52)) - set(s.dealt))
        s.game.hand = Hand(s.game.rules, s.game.seed, h.number, h.dealer, h.nondealer, s.game.num_seats, deck=deck)
        s.game.view_cache = {}
        s.stage = _PLAY

    def _hand_over(self, hand: Hand, number: int, winner: int | None, points: int) -> None:
        s = self._s
        g = s.game
        n = g.num_seats
        if not self._whole_game:
            if winner is not None:
                loser = hand.other(winner)
                s.returns[winner] = float(points)
                s.returns[loser] = -float(points)
            s.stage = _OVER
            return
        for seat in range(n):  # the information state's memory of this hand
            s.past[seat].append(_hand_summary(hand, seat, g, number))
        if g.is_over:
            # The rule max_hands (docs/rules.md §3.7.1) may end a game with no winner: all 0.
            if g.winner is not None:
                s.returns = [1.0 if p == g.winner else -1.0 / (n - 1) for p in range(n)]
            s.stage = _OVER
        elif len(g.results) >= self._max_hands:
            s.stage = _OVER  # truncated: every return stays 0
        else:
            s.dealt = []
            s.hand_chance = []
            g.view_cache = {}
            self._enter_deal(g.hand_number)

    def returns(self) -> list[float]:
        return list(self._s.returns)

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            if self._s.stage == _START:
                if self._s.game.roles is not None:
                    b, c, t = _ROLE_ORDERS[action]
                    return f"roles: box {b}, captain {c}, sitter {t}"
                return f"first dealer: seat {action}"
            return f"chance card {card_str(action)}"
        return str(id_action(action))

    def __str__(self) -> str:
        s = self._s
        g = s.game
        if s.stage in (_START, _DEAL):
            return f"{s.stage}: dealt {' '.join(card_str(c) for c in s.dealt)}; scores {g.scores}"
        h = g.hand
        hands = " / ".join(f"seat {p}: {' '.join(card_str(c) for c in cards_of(m))}" for p, m in enumerate(h.hands))
        top = card_str(h.discard_pile[-1]) if h.discard_pile else "-"
        return (
            f"{s.stage}, hand {h.number}, {h.phase}, seat {h.to_act} to act; {hands}; top {top}; stock {len(h.stock)}; "
            f"scores {g.scores}"
        )

    # --------------------------------------------------------------- resampling
    def resample_from_infostate(self, player_id: int, probability_sampler: Any = None) -> OkginState:
        """A state that ``player_id`` cannot tell from this one, its hidden cards redealt.

        What ``player_id`` does not see is the other player's cards that never went
        through the discard pile; every card it has not seen (those and the stock) is
        equally likely to be any of them, whatever the opponent's strategy may be
        (ISMCTS does not model it). So: let the engine redeal them
        (:meth:`okgin.Game.resample`), rename the hidden chance outcomes of this hand to
        the new cards, and replay the history, so that the new state's ``history()`` is
        a legal one. Earlier hands are left as they were: they no longer change anything.
        """
        s = self._s
        if s.stage in (_START, _OVER):
            return self.clone()
        rng = random.Random(_sampler_seed(probability_sampler))
        g = s.game
        owner = _owner(g, player_id)
        if s.stage == _DEAL:
            # Mid-deal: only the cards dealt to others are hidden; the rest is undealt.
            hidden_idx = [
                (i, c) for (i, seat), c in zip(s.hand_chance, s.dealt, strict=True) if seat is not None and seat != owner
            ]
            pool = sorted((set(range(52)) - set(s.dealt)) | {c for _, c in hidden_idx})
        else:
            h = g.hand
            view = g.view(player_id)
            hidden_seats = [p for p in (h.nondealer, h.dealer) if p != owner]
            hidden: set[int] = set()
            for p in hidden_seats:
                hidden |= set(cards_of(h.hands[p])) - set(view.known_cards[p])
            history = self.history()
            hidden_idx = [(i, history[i]) for i, seat in s.hand_chance if history[i] in hidden]
            # The engine's own redeal (Game.resample, the one implementation of what a
            # seat cannot see and of dealing it) chooses the other hand's new cards; the
            # stock's order it also deals is no information here (draws are chance nodes).
            redealt = g.resample(player_id, rng).hand
            fresh: list[int] = []
            for p in hidden_seats:
                fresh += sorted(set(cards_of(redealt.hands[p])) - set(view.known_cards[p]))
            rng.shuffle(fresh)  # which hidden draw got which card: uniform too
        old = [c for _, c in hidden_idx]
        new = rng.sample(pool, len(old)) if s.stage == _DEAL else fresh
        rename = dict(zip(old, new, strict=True))
        patched = list(self.history())
        for i, c in hidden_idx:
            patched[i] = rename[c]
        state = self.get_game().new_initial_state()
        # The redealt world is no longer the seed's: its chance nodes become uniform.
        state._s.seeded = False
        for a in patched:
            state.apply_action(a)
        return state


def _sampler_seed(sampler: Any) -> int:
    """A seed from OpenSpiel's probability sampler (a callable giving floats in [0, 1))."""
    try:
        if callable(sampler):
            return int(float(sampler()) * 2**53)
    except (TypeError, ValueError):
        pass
    return random.getrandbits(53)


def _owner(g: Game, player: int) -> int:
    """Whose cards ``player`` sees: its own, or the captain's for the Box sitter."""
    if g.roles is not None and player == g.roles[2]:
        return g.roles[1]
    return player


def _event_text(seat: int, kind: str, card: int | None) -> str:
    return f"{seat}:{kind}" + ("" if card is None else f":{card_str(card)}")


def _hand_summary(hand: Hand, viewer: int, g: Game, number: int) -> str:
    """One finished hand as ``viewer`` saw it: the events it saw and the public result."""
    owner = _owner_of_hand(hand, viewer, g)
    may_see = {viewer, owner}
    events = []
    for seat, kind, card in hand.events:
        if kind == "draw_stock" and seat not in may_see:
            card = None
        events.append(_event_text(seat, kind, card))
    r = hand.result
    tail = "" if r is None else f" result {r.outcome} winner {r.winner} points {r.points}"
    return f"[hand {number}: {' '.join(events)}{tail}]"


def _owner_of_hand(hand: Hand, viewer: int, g: Game) -> int:
    # The sitter of that hand is the seat that was dealt nothing in it.
    if g.num_seats == 3 and viewer not in (hand.dealer, hand.nondealer):
        return hand.nondealer  # the captain: the box always deals (docs/rules.md §4.2)
    return viewer


# ------------------------------------------------------------------------ observer
class OkginObserver:
    """Strings and tensors for one player, from okgin's :class:`okgin.View` of its seat.

    Why from the View: the View is what the referee sends that seat, so nothing here can
    show a card the rules hide (docs/rules.md §5). ``perfect_recall`` adds the hand's
    events (and earlier hands in a whole game): the information state.
    """

    def __init__(self, game: OkginGame, iig_obs_type: Any, params: Any) -> None:
        if params:
            raise ValueError(f"observation parameters not supported; got {params}")
        self.n = game.num_players()
        self.perfect_recall = bool(iig_obs_type.perfect_recall)
        self.private = iig_obs_type.private_info == pyspiel.PrivateInfoType.SINGLE_PLAYER
        self.public = bool(iig_obs_type.public_info)
        n = self.n
        pieces: list[tuple[str, int, tuple[int, ...]]] = [("player", n, (n,))]
        if self.private:
            pieces.append(("hand", 52, (52,)))
        if self.public:
            pieces += [
                ("stage", 4, (4,)),  # dealing, offer, draw, discard
                ("to_act", n, (n,)),
                ("roles", 3 * n, (n, 3)),  # box/captain/sitter, or dealer/nondealer/-
                ("upcard", 52, (52,)),
                ("knock_limit", 11, (11,)),
                ("top_discard", 52, (52,)),
                ("discard_pile", 52, (52,)),
                ("known", 52 * n, (n, 52)),  # cards known to be in each hand
                ("taken", 52, (52,)),
                ("stock_size", 1, (1,)),  # the cards left in the stock / 31
                ("scores", n, (n,)),  # / target_score
            ]
            if self.perfect_recall:
                steps = max_hand_actions(game.rules)
                width = n + len(_EVENT_KINDS) + 52
                pieces.append(("events", steps * width, (steps, width)))
        total = sum(size for _, size, _ in pieces)
        self.tensor = np.zeros(total, np.float32)
        self.dict: dict[str, Any] = {}
        at = 0
        for name, size, shape in pieces:
            self.dict[name] = self.tensor[at : at + size].reshape(shape)
            at += size

    def set_from(self, state: OkginState, player: int) -> None:
        self.tensor.fill(0)
        d = self.dict
        d["player"][player] = 1
        s = state._s
        g = s.game
        if s.stage in (_START, _DEAL):
            if self.private:
                for c in _dealt_to(s, player):
                    d["hand"][c] = 1
            if self.public:
                d["stage"][0] = 1
                for p in range(self.n):
                    d["scores"][p] = g.scores[p] / g.rules.target_score
            return
        v = g.view(player)
        if self.private and v.hand is not None:
            for c in v.hand:
                d["hand"][c] = 1
        if not self.public:
            return
        stage_index = {"offer": 1, "draw": 2, "discard": 3}.get(v.phase)
        if stage_index is not None and s.stage != _OVER:
            d["stage"][stage_index] = 1
        if v.to_act is not None and s.stage != _OVER:
            d["to_act"][v.to_act] = 1
        for p, role in enumerate(v.roles):
            i = {"box": 0, "captain": 1, "sitter": 2, "dealer": 0, "nondealer": 1}[role]
            d["roles"][p, i] = 1
        d["upcard"][v.upcard] = 1
        d["knock_limit"][v.knock_limit] = 1
        if v.discard_pile:
            d["top_discard"][v.discard_pile[-1]] = 1
            for c in v.discard_pile:
                d["discard_pile"][c] = 1
        for p, known in enumerate(v.known_cards):
            for c in known:
                d["known"][p, c] = 1
        if v.taken_card is not None:
            d["taken"][v.taken_card] = 1
        d["stock_size"][0] = v.stock_size / 31
        for p in range(self.n):
            d["scores"][p] = v.scores[p] / v.target_score
        if self.perfect_recall:
            ev = d["events"]
            kinds = {k: i for i, k in enumerate(_EVENT_KINDS)}
            for i, e in enumerate(v.events[: ev.shape[0]]):
                ev[i, e.seat] = 1
                ev[i, self.n + kinds[e.kind]] = 1
                if e.card is not None:
                    ev[i, self.n + len(_EVENT_KINDS) + e.card] = 1

    def string_from(self, state: OkginState, player: int) -> str:
        s = state._s
        g = s.game
        parts = [f"p{player}"]
        if self.perfect_recall and self.public and s.past[player]:
            parts.append(" ".join(s.past[player]))
        if s.stage in (_START, _DEAL):
            if self.private:
                parts.append("dealt " + " ".join(card_str(c) for c in _dealt_to(s, player)))
            if self.public:
                parts.append(f"dealing hand {g.hand_number} ({len(s.dealt)} cards); scores {g.scores}")
            return " | ".join(parts)
        v = g.view(player)
        if self.private and v.hand is not None:
            parts.append("hand " + " ".join(card_str(c) for c in sorted(v.hand)))
        if self.public:
            top = card_str(v.discard_pile[-1]) if v.discard_pile else "-"
            known = ";".join(" ".join(card_str(c) for c in k) for k in v.known_cards)
            taken = "-" if v.taken_card is None else card_str(v.taken_card)
            parts.append(
                f"hand {v.hand_number} {v.phase} to_act {v.to_act} roles {','.join(v.roles)} upcard {card_str(v.upcard)} "
                f"limit {v.knock_limit} top {top} pile {' '.join(card_str(c) for c in v.discard_pile)} "
                f"known [{known}] taken {taken} stock {v.stock_size} scores {list(v.scores)}"
            )
            if self.perfect_recall:
                parts.append("events " + " ".join(_event_text(e.seat, e.kind, e.card) for e in v.events))
        return " | ".join(parts)


def _dealt_to(s: _Core, player: int) -> list[int]:
    """The cards dealt so far to ``player``'s hand (the sitter: the captain's)."""
    g = s.game
    owner = _owner(g, player)
    h = g.hand
    out = []
    for k, c in enumerate(s.dealt):
        seat = h.nondealer if k < HAND_SIZE else h.dealer if k < 2 * HAND_SIZE else None
        if seat is not None and seat == owner:
            out.append(c)
    return out


pyspiel.register_game(OKLAHOMA_TYPE, OklahomaGinGame)
pyspiel.register_game(BOX_TYPE, GinInTheBoxGame)

__all__ = [
    "BOX_TYPE",
    "NUM_ACTIONS",
    "OKLAHOMA_TYPE",
    "GinInTheBoxGame",
    "OkginGame",
    "OkginObserver",
    "OkginState",
    "OklahomaGinGame",
    "action_id",
    "id_action",
    "rules_param",
]
