"""Helpers for the engine tests: short move notation, card-set checks.

Moves are written as on a score sheet: ``"take"``, ``"pass"``, ``"stock"`` (draw from the
stock), ``"pile"`` (draw the top discard), ``"discard 7h"``, ``"knock 7h"``, ``"big_gin"``.
"""

from __future__ import annotations

import random

from okgin import Action, Game, HandResult, IllegalAction, canonical_json, card_str, cards_of, parse_card, parse_cards
from okgin.hand import Hand

_KINDS = {"take": "take", "pass": "pass", "stock": "draw_stock", "pile": "draw_discard", "big_gin": "big_gin"}


def act(move: str) -> Action:
    """An :class:`Action` from score-sheet notation."""
    parts = move.split()
    if parts[0] in _KINDS:
        return Action(_KINDS[parts[0]])
    if parts[0] in ("discard", "knock") and len(parts) == 2:
        return Action(parts[0], parse_card(parts[1]))
    raise ValueError(f"bad move {move!r}")


def play(game: Game, *moves: str) -> HandResult | None:
    """Apply moves in order (each by the seat to act); returns the last move's result."""
    result = None
    for m in moves:
        result = game.apply(act(m))
    return result


def cards(text: str) -> list[int]:
    return parse_cards(text)


def names(cs) -> list[str]:
    return sorted(card_str(c) for c in cs)


def hand_of(game: Game, seat: int) -> list[str]:
    """The cards a seat holds now (test-side inspection of the full state)."""
    return names(cards_of(game.hand.hands[seat]))


def snapshot(game: Game) -> str:
    """Everything observable about a game, as bytes-stable text: used to prove that an
    illegal action or advice left the state untouched."""
    h: Hand = game.hand
    state = {
        "record": game.to_record(),
        "full": game.full_view().to_wire(),
        "views": [game.view(s).to_wire() for s in range(game.num_seats)],
        "spectator": game.view(None).to_wire(),
        "legal": [a.to_wire() for a in game.legal_actions()],
        "current": game.current_player,
        "phase": h.phase,
        "passes": h.passes,
        "stock_only": h.stock_only,
        "hands": list(h.hands),
        "stock": list(h.stock),
    }
    return canonical_json(state)


def assert_illegal(game: Game, action: Action, *fragments: str, seat: int | None = None) -> str:
    """Assert ``action`` is refused with a sentence containing ``fragments`` and that the
    game is exactly as before. Returns the message."""
    before = snapshot(game)
    try:
        game.apply(action, seat=seat)
    except IllegalAction as e:
        msg = str(e)
    else:  # pragma: no cover - the assertion below reports it
        raise AssertionError(f"{action} was accepted")
    assert snapshot(game) == before, "an illegal action changed the state"
    assert len(msg.split()) >= 3, f"not a sentence: {msg!r}"
    for f in fragments:
        assert f in msg, f"{f!r} not in {msg!r}"
    return msg


def all_52(game: Game) -> bool:
    """docs/rules.md §1: every card is in exactly one place (hands, stock, discard pile, or the
    knocker's face-down discard of a finished hand)."""
    h = game.hand
    places: list[int] = []
    for m in h.hands:
        places += cards_of(m)
    places += h.stock
    places += h.discard_pile
    if h.result is not None and h.result.knock_discard is not None:
        places.append(h.result.knock_discard)
    return sorted(places) == list(range(52))


def random_action(game: Game, rng: random.Random, knock_bias: float = 0.0, greedy: float = 0.0) -> Action:
    """A uniformly random legal action; with ``knock_bias`` > 0 a legal knock (or big gin)
    is chosen with that probability first, and with ``greedy`` > 0 a discard that keeps
    the least deadwood. Uniform random play rarely knocks (most hands are drawn), so tests
    that need many knocks, gins and undercuts use these biases."""
    from okgin.melds import deadwood_after_discard_mask

    legal = game.legal_actions()
    if knock_bias and rng.random() < knock_bias:
        knocks = [a for a in legal if a.kind in ("knock", "big_gin")]
        if knocks:
            return rng.choice(knocks)
    if greedy and rng.random() < greedy and game.hand.phase == "discard":
        _, best = deadwood_after_discard_mask(game.hand.hands[game.current_player])
        discards = [a for a in legal if a.kind == "discard" and a.card in best]
        if discards:
            return rng.choice(discards)
    return rng.choice(legal)


def random_play(game: Game, rng: random.Random, max_actions: int = 50000, check=None, knock_bias: float = 0.5) -> Game:
    """Random legal play until the game ends; ``check(game)`` after every action."""
    for _ in range(max_actions):
        if game.is_over:
            return game
        game.apply(random_action(game, rng, knock_bias))
        if check is not None:
            check(game)
    raise AssertionError("random play did not end the game")


def knock_position(
    knocker: str,
    defender: str,
    *,
    draw: str,
    knock: str,
    upcard: str = "Kd",
    rules=None,
    melds=None,
    **kw,
) -> tuple[Game, HandResult]:
    """Seat 1 (the non-dealer) holds ``knocker``, seat 0 (dealer) ``defender``; both pass
    the upcard, seat 1 draws ``draw`` from the stock and knocks with ``knock`` face down
    (declaring ``melds`` if given). Returns the game and the hand's result."""
    from okgin import game_from_position

    g = game_from_position(rules, hands={1: knocker, 0: defender}, upcard=upcard, stock=[draw], dealer=0, **kw)
    play(g, "pass", "pass", "stock")
    a = Action.knock(parse_card(knock), None if melds is None else [parse_cards(m) for m in melds])
    r = g.apply(a)
    assert r is not None
    return g, r


# ----------------------------------------------------------------- oracles and strategies


def plain_is_meld(cs) -> bool:
    """docs/rules.md §2 written out again, independently of okgin.melds: 3-4 of a rank, or 3+
    consecutive ranks (ace low) of one suit."""
    ranks = sorted(c % 13 for c in cs)
    suits = {c // 13 for c in cs}
    if len(cs) < 3:
        return False
    if len(set(ranks)) == 1:
        return len(cs) <= 4
    return len(suits) == 1 and ranks == list(range(ranks[0], ranks[0] + len(cs)))


def plain_value(c: int) -> int:
    return min(c % 13 + 1, 10)


def brute_deadwood(cs) -> int:
    """Least deadwood by exhaustive search over every disjoint choice of melds of 3 to 5
    cards (a longer run splits into such melds without changing the deadwood)."""
    from itertools import combinations

    cs = list(cs)
    melds = []
    for size in (3, 4, 5):
        for combo in combinations(cs, size):
            if plain_is_meld(combo):
                melds.append((sum(1 << c for c in combo), sum(plain_value(c) for c in combo)))
    best = 0

    def search(i: int, used: int, value: int) -> None:
        nonlocal best
        if value > best:
            best = value
        for j in range(i, len(melds)):
            m, v = melds[j]
            if not m & used:
                search(j + 1, used | m, value + v)

    search(0, 0, 0)
    return sum(plain_value(c) for c in cs) - best


def brute_defence(defender: list[int], knocker_melds) -> int:
    """The defender's least deadwood after layoffs, by trying every subset of its cards as
    the cards laid off. A subset is possible if its cards can be attached one at a time (in
    some order, onto some meld: backtracking), each keeping the meld a valid set or run;
    so a card laid off may let the next one go on."""
    best = brute_deadwood(defender)
    # only cards of a knocker's set rank or run suit could ever be attached
    cand = [c for c in defender if any(c % 13 == m[0] % 13 or c // 13 == m[0] // 13 for m in knocker_melds)]

    def can_lay(left: list[int], melds: list[list[int]]) -> bool:
        if not left:
            return True
        for c in left:
            for i, m in enumerate(melds):
                if plain_is_meld([*m, c]):
                    rest = [x for x in left if x != c]
                    if can_lay(rest, [*melds[:i], [*m, c], *melds[i + 1 :]]):
                        return True
        return False

    for bits in range(1, 1 << len(cand)):
        chosen = [cand[i] for i in range(len(cand)) if bits >> i & 1]
        if can_lay(chosen, [list(m) for m in knocker_melds]):
            best = min(best, brute_deadwood([c for c in defender if c not in chosen]))
    return best


def rules_strategy():
    from hypothesis import strategies as st

    from okgin import RuleSet

    return st.builds(
        RuleSet,
        variant=st.sampled_from(["oklahoma", "box"]),
        knock_limit=st.sampled_from([None, "upcard", 0, 1, 5, 10]),
        ace_upcard_gin_only=st.booleans(),
        spade_upcard_doubles=st.booleans(),
        allow_discard_of_taken_card=st.booleans(),
        big_gin=st.booleans(),
        tie_is_undercut=st.booleans(),
        classic_bonuses=st.booleans(),
        gin_bonus=st.sampled_from([20, 25]),
        undercut_bonus=st.sampled_from([10, 25]),
        target_score=st.sampled_from([1, 25, 60]),
        max_pile_draws=st.sampled_from([1, 4, 50]),
    )


VIEW_KEYS = {
    "seat", "variant", "num_seats", "hand_number", "phase", "to_act", "dealer", "nondealer", "roles", "hand",
    "hand_of", "upcard", "knock_limit", "doubled", "discard_pile", "stock_size", "hand_sizes", "known_cards",
    "taken_card", "events", "scores", "hands_won", "target_score", "last_result", "winner", "advice", "role_draws",
}  # a new card-bearing field must be added here, i.e. reviewed against docs/rules.md §5


def check_views(game: Game) -> None:
    """docs/rules.md §5 for every seat and a spectator: the current hand's card-bearing fields
    hold only the viewer's own (or, for the sitter, the captain's) cards, public cards
    (upcard, discards, cards taken from the pile) and the viewer's own stock draws; the
    stock and the other hand are never shown; results and role draws are public."""
    from okgin import View

    h = game.hand
    public = {h.upcard, *h.discard_pile}
    public |= {c for _, k, c in h.events if k in ("take", "draw_discard", "discard")}
    for seat in [*range(game.num_seats), None]:
        v = game.view(seat)
        w = v.to_wire()
        assert set(w) == VIEW_KEYS, f"unexpected view fields {set(w) ^ VIEW_KEYS}"
        owner = seat
        if seat is not None and game.roles is not None and seat == game.roles[2]:
            owner = game.roles[1]
        own = set(cards_of(h.hands[owner])) if owner is not None else set()
        own_draws = {c for s, k, c in h.events if k == "draw_stock" and owner is not None and s == owner}
        visible = public | own | own_draws
        assert v.hand == (None if owner is None else tuple(sorted(own)))
        assert v.hand_of == owner
        shown = {v.upcard, *v.discard_pile, *(e.card for e in v.events if e.card is not None)}
        shown |= {c for k in v.known_cards for c in k}
        if v.taken_card is not None:
            shown.add(v.taken_card)
        if v.hand is not None:
            shown |= set(v.hand)
        leaked = shown - visible
        assert not leaked, f"seat {seat} sees hidden {names(leaked)}"
        assert v.all_hands is None and v.stock is None
        assert v.stock_size == len(h.stock)
        assert v.last_result == (game.results[-1] if game.results else None)
        team = game.roles is not None and seat is not None and seat in game.roles[1:]
        assert team or v.advice == ()
        if len(h.events) % 8 == 0:  # the wire round trip, now and then (it is the slow part)
            assert View.from_wire(w) == v


def check_hand_result(game: Game, hand: Hand, r: HandResult, scores_before: list[int]) -> None:
    """A finished hand's result is valid: layouts are the players' real cards in valid melds,
    the knock was within the limit, the defender got its least deadwood (brute force), the
    knocker's default layout left the defender the most deadwood among least arrangements,
    and the points follow docs/rules.md §3.5."""
    rules = game.rules
    assert r.outcome in ("knock", "gin", "big_gin", "undercut", "tie", "drawn")
    assert r.knock_limit == hand.knock_limit and r.upcard == hand.upcard and r.dealer == hand.dealer
    if r.outcome == "drawn":
        # §3.6 (the Wall), or the rule max_pile_draws (docs/rules.md §3.6.2): both are
        # judged after a discard.
        assert len(hand.stock) == 2 or hand.pile_draws == rules.max_pile_draws
        assert hand.events[-1][1] == "discard"
        assert r.winner is None and r.points == 0 and r.knocker_layout is None and r.defender_layout is None
        assert game.scores == scores_before
        return
    k, d = r.knocker, r.defender
    assert {k, d} == {hand.dealer, hand.nondealer}
    kl, dl = r.knocker_layout, r.defender_layout
    big = r.outcome == "big_gin"
    knocker_cards = sorted(cards_of(hand.hands[k]))
    assert sorted([c for m in kl.melds for c in m] + list(kl.deadwood_cards)) == knocker_cards
    assert len(knocker_cards) == (11 if big else 10)
    assert (r.knock_discard is None) == big
    assert all(plain_is_meld(m) for m in kl.melds)
    kdw = sum(plain_value(c) for c in kl.deadwood_cards)
    assert kdw == kl.deadwood <= hand.knock_limit
    assert kdw == brute_deadwood(knocker_cards)  # undeclared: the least deadwood
    gin = kdw == 0
    assert (r.outcome in ("gin", "big_gin")) == gin
    defender_cards = sorted(cards_of(hand.hands[d]))
    laid = [c for c, _ in dl.layoffs]
    a = dl.arrangement
    assert sorted([c for m in a.melds for c in m] + list(a.deadwood_cards) + laid) == defender_cards
    assert all(plain_is_meld(m) for m in a.melds)
    assert sum(plain_value(c) for c in a.deadwood_cards) == a.deadwood
    if gin:
        assert not laid and a.deadwood == brute_deadwood(defender_cards)
    else:
        grown = [list(m) for m in kl.melds]
        for c, i in dl.layoffs:  # in the order laid, each keeps its meld valid
            grown[i].append(c)
            assert plain_is_meld(grown[i])
        assert a.deadwood == brute_defence(defender_cards, kl.melds)
        # the default arrangement: among least-deadwood layouts, the most defender deadwood
        assert a.deadwood == max(brute_defence(defender_cards, melds) for melds in least_layouts(knocker_cards))
    dd = a.deadwood
    if big:
        outcome, pts, winner = "big_gin", rules.big_gin_bonus + dd, k
    elif gin:
        outcome, pts, winner = "gin", rules.gin_bonus + dd, k
    elif kdw < dd:
        outcome, pts, winner = "knock", dd - kdw, k
    elif kdw == dd and not rules.tie_is_undercut:
        outcome, pts, winner = "tie", 0, None
    else:
        outcome, pts, winner = "undercut", rules.undercut_bonus + kdw - dd, d
    doubled = rules.spade_upcard_doubles and hand.upcard // 13 == 3
    assert r.doubled == doubled
    assert (r.outcome, r.points, r.winner) == (outcome, pts * (2 if doubled else 1), winner)
    expect = list(scores_before)
    if winner is not None:
        expect[winner] += r.points
    assert game.scores == expect and list(r.scores_after) == expect


def least_layouts(cs: list[int]) -> list[list[tuple[int, ...]]]:
    """Every disjoint choice of melds (3-5 cards) leaving the least deadwood (brute force)."""
    from itertools import combinations

    melds = [combo for size in (3, 4, 5) for combo in combinations(cs, size) if plain_is_meld(combo)]
    target = sum(plain_value(c) for c in cs) - brute_deadwood(cs)
    out: list[list[tuple[int, ...]]] = []

    def search(i: int, used: set[int], chosen: list[tuple[int, ...]], value: int) -> None:
        if value == target:
            out.append(list(chosen))
        for j in range(i, len(melds)):
            m = melds[j]
            if not used.intersection(m):
                search(j + 1, used | set(m), [*chosen, m], value + sum(plain_value(c) for c in m))

    search(0, set(), [], 0)
    return out


def play_checked(
    game: Game,
    rng: random.Random,
    max_actions: int,
    knock_bias: float,
    results: bool = True,
    views: bool = False,
    greedy: float = 0.0,
) -> int:
    """Random play checking after every action that all 52 cards are in one place, and
    (``results``) every finished hand's result, (``views``) every view. Returns the number
    of hands finished."""
    finished = 0
    for _ in range(max_actions):
        if game.is_over:
            break
        hand = game.hand
        before = list(game.scores)
        r = game.apply(random_action(game, rng, knock_bias, greedy))
        assert all_52(game)
        for seat, m in enumerate(game.hand.hands):
            playing = seat in (game.hand.dealer, game.hand.nondealer)
            assert (
                m.bit_count() == (0 if not playing else 11 if seat == game.hand.to_act and game.hand.phase == "discard" else 10)
                or game.hand.phase == "over"
            )
        if r is not None:
            finished += 1
            assert hand.phase == "over" and hand.result is r
            if results:
                check_hand_result(game, hand, r, before)
        if views:
            check_views(game)
    return finished
