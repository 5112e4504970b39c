"""The text harness (okgin/harness.py): render a seat's view, list and parse moves.

The property that matters most for a model: every legal move, in each form the harness
itself shows (its number, its canonical text, the symbol form, the wire form), parses back
to exactly that move; and anything else is refused with the legal moves named.
"""

from __future__ import annotations

import dataclasses
import json
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from okgin import Action, Game, RuleSet, card_str, game_from_position, parse_card, pretty
from okgin.harness import (
    MAX_MOVE_CHARS,
    IllegalMove,
    describe_move,
    legal_moves_text,
    move_text,
    parse_move,
    render,
    result_text,
    rules_text,
)


def _advance(variant: str, seed: int, steps: int) -> Game:
    """A game after ``steps`` random legal moves (new hands included)."""
    g = Game(RuleSet(variant=variant, target_score=1000), seed=seed)
    rng = random.Random(seed)
    for _ in range(steps):
        if g.is_over:
            break
        g.apply(rng.choice(g.legal_actions()))
    return g


def _symbol_form(a: Action) -> str:
    """``discard 10♠``: the form a person (or a model) writes with suit symbols."""
    return a.kind.replace("_", " ") + ("" if a.card is None else " " + pretty(a.card))


@given(variant=st.sampled_from(["oklahoma", "box"]), seed=st.integers(0, 10_000), steps=st.integers(0, 60))
def test_every_legal_move_in_every_shown_form_parses_back(variant: str, seed: int, steps: int) -> None:
    g = _advance(variant, seed, steps)
    if g.is_over:
        return
    seat = g.current_player
    assert seat is not None
    view, legal = g.view(seat), g.legal_actions()
    listing = legal_moves_text(legal, view).splitlines()
    assert len(listing) == len(legal)
    for i, (a, line) in enumerate(zip(legal, listing, strict=True), 1):
        shown = line.split(". ", 1)[1].split(" — ", 1)[0]  # "3. discard 7h — ..." -> "discard 7h"
        for form in (str(i), f"#{i}", shown, move_text(a), _symbol_form(a), json.dumps(a.to_wire()), move_text(a).upper()):
            assert parse_move(form, legal, view) == a, form
        assert parse_move(a.to_wire(), legal, view) == a
        assert parse_move(a, legal, view) == a
        assert describe_move(a, view).startswith(move_text(a))
    text = render(view, legal, rules=g.rules, players=["a", "b", "c"][: g.num_seats], time_left_s=12.0)
    assert "Your legal moves" in text and f"Knock limit this hand: {view.knock_limit}" in text
    for s in range(g.num_seats):  # every seat's text renders, whoever is to act
        assert f"You are seat {s}." in render(g.view(s), rules=g.rules)


@given(
    seed=st.integers(0, 10_000),
    steps=st.integers(0, 40),
    kind=st.sampled_from(["take", "pass", "draw_stock", "draw_discard", "discard", "knock", "big_gin"]),
    card=st.integers(0, 51),
)
def test_an_illegal_move_is_refused_naming_the_legal_ones(seed: int, steps: int, kind: str, card: int) -> None:
    g = _advance("oklahoma", seed, steps)
    if g.is_over:
        return
    view, legal = g.view(g.current_player), g.legal_actions()
    a = Action(kind, card if kind in ("discard", "knock") else None)
    if a in legal:
        return
    twin = {"take": Action("draw_discard"), "draw_discard": Action("take")}.get(kind)
    if twin in legal:  # documented: both mean "the top of the pile" (the upcard at the offer)
        assert parse_move(move_text(a), legal, view) == twin
        return
    with pytest.raises(IllegalMove) as e:
        parse_move(move_text(a), legal, view)
    for la in legal:
        assert move_text(la) in str(e.value)
    assert e.value.legal == legal


def test_forms_from_the_brief() -> None:
    # Seat 0 holds a near-gin hand; the upcard 7h is on offer (limit 7).
    g = game_from_position(
        RuleSet(),
        hands={0: "As 2s 3s 4d 5d 6d 9c 9h 9s Kc", 1: "Ac 2c 3c 4c 5c 6c 7c 8c Td Jd"},
        upcard="7h",
        stock=["2h", "Qd"],
        dealer=1,
    )
    v, legal = g.view(0), g.legal_actions()
    assert parse_move("take 7♥", legal, v) == Action("take")
    assert parse_move("take the upcard", legal, v) == Action("take")
    assert parse_move("pass", legal, v) == Action("pass")
    with pytest.raises(IllegalMove, match="not the top of the discard pile"):
        parse_move("take 8♥", legal, v)
    g.apply(Action("pass"))
    g.apply(Action("pass"))
    v, legal = g.view(0), g.legal_actions()
    assert legal == [Action("draw_stock")]
    assert parse_move("draw stock", legal, v) == Action("draw_stock")
    assert parse_move("draw", legal, v) == Action("draw_stock")  # the only draw there is
    with pytest.raises(IllegalMove, match="must come from the stock"):
        parse_move("draw from the discard pile", legal, v)
    g.apply(Action("draw_stock"))  # 2h
    v, legal = g.view(0), g.legal_actions()
    assert parse_move("discard 2♥", legal, v) == Action.discard(parse_card("2h"))
    assert parse_move("throw the two of hearts.", legal, v) == Action.discard(parse_card("2h"))
    assert parse_move("discard 9♠", legal, v) == Action.discard(parse_card("9s"))
    assert parse_move("Kc", legal, v) == Action.discard(parse_card("Kc"))
    assert parse_move("`discard 9♠`", legal, v) == Action.discard(parse_card("9s"))
    assert parse_move("**3**", legal, v) == legal[2]
    assert parse_move("I will discard the king of clubs, it is deadwood.", legal, v) == Action.discard(parse_card("Kc"))
    assert parse_move("I discard 9s as it is deadwood", legal, v) == Action.discard(parse_card("9s"))
    assert parse_move("discard as", legal, v) == Action.discard(parse_card("As"))
    with pytest.raises(IllegalMove, match="discard which card"):
        parse_move("discard", legal, v)
    with pytest.raises(IllegalMove, match="names 2 cards"):
        parse_move("discard Kc or 9s", legal, v)
    # Knocking: only throwing Kc leaves deadwood within the limit 7 (the 2h: 2)
    assert [a for a in legal if a.kind == "knock"] == [Action.knock(parse_card("Kc"))]
    assert parse_move("knock", legal, v) == Action.knock(parse_card("Kc"))
    assert parse_move("knock with K♣", legal, v) == Action.knock(parse_card("Kc"))
    with pytest.raises(IllegalMove, match="over the knock limit"):
        parse_move("knock 2h", legal, v)
    with pytest.raises(IllegalMove, match="no knock now is gin"):
        parse_move("gin", legal, v)
    with pytest.raises(IllegalMove, match="you do not hold"):
        parse_move("discard Qh", legal, v)
    with pytest.raises(IllegalMove, match="numbered 1 to"):
        parse_move("99", legal, v)
    with pytest.raises(IllegalMove, match="at most"):
        parse_move("x" * (MAX_MOVE_CHARS + 1), legal, v)
    with pytest.raises(IllegalMove, match="not a valid wire action"):
        parse_move({"kind": "discard", "card": "10h"}, legal, v)  # the wire form is strict: Th
    with pytest.raises(IllegalMove, match="understand"):
        parse_move("hello there", legal, v)
    text = render(v, legal)
    assert "Knocks available" in text and "the defender could lay off" in text


def test_a_knock_declaring_melds() -> None:
    g = game_from_position(
        RuleSet(),
        hands={0: "As 2s 3s 4s 4d 5d 6d 9c 9h 9s", 1: "Ac 2c 3c 4c 5c 6c 7c 8c Td Jd"},
        upcard="Kh",
        stock=["Kc"],
        dealer=1,
    )
    for a in (Action("pass"), Action("pass"), Action("draw_stock")):
        g.apply(a)
    v, legal = g.view(0), g.legal_actions()
    a = parse_move("knock Kc [As 2s 3s 4s | 4d 5d 6d | 9c 9h 9s]", legal, v)
    assert a.kind == "knock" and a.card == parse_card("Kc") and a.melds is not None and len(a.melds) == 3
    assert parse_move(str(a), legal, v) == a  # str(action) with melds reads back
    with pytest.raises(IllegalMove, match="declared melds are refused"):
        parse_move("knock Kc [As 2s 3s 4s | 4d 5d 6d | 9c 9h 8s]", legal, v)
    assert parse_move("gin", legal, v) == Action.knock(parse_card("Kc"))
    g.apply(a)
    r = g.results[-1]
    text = result_text(r, g.view(1))
    assert "Knocker" in text and "Defender" in text and "gin" in text.lower()


def test_layoffs_are_shown_in_the_last_hand() -> None:
    # Seat 0 knocks with the run 5h 6h 7h; seat 1 holds 8h and 4h: both are laid off.
    g = game_from_position(
        RuleSet(knock_limit=10),
        hands={0: "5h 6h 7h Ac Ad As 2c 2d 2s 3c", 1: "8h 4h Kc Kd Qs Js 9d 9s 7c Tc"},
        upcard="Qh",
        stock=["Kh"],
        dealer=1,
    )
    g.apply(Action("take"))
    g.apply(
        Action.knock(parse_card("Qh")) if Action.knock(parse_card("Qh")) in g.legal_actions() else Action.knock(parse_card("3c"))
    )
    v = g.view(1)
    text = render(v)
    assert "Last hand:" in text and "Laid off onto the knocker's melds" in text
    assert pretty(parse_card("8h")) in text.split("Laid off", 1)[1]


def test_box_roles_and_the_sitter() -> None:
    g = _advance("box", 3, 0)
    assert g.roles is not None
    box, _captain, sitter = g.roles
    v = g.view(sitter)
    text = render(v, g.legal_actions(), advising=True)
    assert "sits out" in text and "captain" in text and "Your captain's hand" in text
    assert "Your captain's legal moves" in text
    # The sitter's text never shows the box's hand: it is not in the sitter's view.
    box_cards = [c for c in range(52) if g.hand.hands[box] >> c & 1]
    hand_line = next(line for line in text.splitlines() if line.startswith("Your captain's hand"))
    assert not any(card_str(c) in hand_line.split("wire:")[1].split() for c in box_cards)


def test_the_wall_is_announced() -> None:
    g = game_from_position(
        RuleSet(),
        hands={0: "As 3s 5s 7d 9d Jc Kc 2h 4h 6h", 1: "Ac 3c 5c 7c 9c Jd Kd 2s 4s 6s"},
        upcard="8h",
        stock=["Ts", "Td", "Th"],
        dealer=1,
    )
    v = g.view(0)
    text = render(dataclasses.replace(v, stock_size=3), g.legal_actions())  # the next stock draw reaches the Wall
    assert "Wall" in text and "One stock draw is left" in text
    text = render(dataclasses.replace(v, stock_size=2, phase="discard"))
    assert "AT the Wall" in text


def test_rules_text_follows_the_options() -> None:
    t = rules_text(RuleSet())
    assert "upcard's value" in t and "25 +" in t and "100 points" in t and "2 cards in the stock" in t
    t = rules_text(RuleSet(variant="box", big_gin=True, tie_is_undercut=False, target_score=50))
    assert "Gin in the Box" in t and "Knock limit: 10" in t and "Big gin" in t and "tie scores nothing" in t and "50 points" in t


@given(
    seed=st.integers(0, 10_000),
    steps=st.integers(0, 40),
    text=st.one_of(
        st.text(max_size=60),
        st.from_regex(r"(take|draw|discard|knock|pass|gin|big)? ?[0-9AaTtJjQqKk]{0,2}[cdhs♣♦♥♠]? ?(\[.*\])?", fullmatch=True),
    ),
)
def test_any_reply_is_a_legal_move_or_a_clear_refusal(seed: int, steps: int, text: str) -> None:
    g = _advance("oklahoma", seed, steps)
    if g.is_over:
        return
    view, legal = g.view(g.current_player), g.legal_actions()
    try:
        a = parse_move(text, legal, view)
    except IllegalMove as e:
        assert "Legal moves now" in str(e)
        return
    assert a.without_melds() in legal


# ----------------------------------------------------- negation, sign, two moves (issue 29)
def _offer_and_discard() -> tuple[tuple[object, list[Action]], tuple[object, list[Action]]]:
    """(view, legal) at the upcard offer (1. take, 2. pass), and at a discard of seat 0."""
    g = game_from_position(
        RuleSet(),
        hands={0: "As 2s 3s 4d 5d 6d 9c 9h 9s 3c", 1: "Ac 2c 4h 4c 5c 6c 7c 8c Td Jd"},
        upcard="7h",
        stock=["2h", "Qd"],
        dealer=1,
    )
    offer = (g.view(0), g.legal_actions())
    g.apply(Action("take"))
    return offer, (g.view(0), g.legal_actions())


@pytest.mark.parametrize(
    "reply",
    [
        "I will not take the upcard",
        "take, don't pass",
        "take, don’t pass",  # a typographic apostrophe
        "do not take",
        "never pass",
        "I won't take it",
        "can't pass",
        "you shouldn't take",
        "no take",
        "no, pass",
        "pass instead of taking",
        "take rather than pass",
        "take or pass",
        "either take or pass",
        "I'd rather pass than take",
        "pass, then draw stock",
        "1. pass",  # the number and the text name two different moves
        "-1",
        "- 1",
        "+2",
        "−1",  # U+2212
        "1.0",
        "1.5",
        "move -1",
        "#-1",
    ],
)
def test_a_negated_signed_or_double_reply_is_refused_not_guessed(reply: str) -> None:
    (v, legal), _ = _offer_and_discard()
    with pytest.raises(IllegalMove) as e:
        parse_move(reply, legal, v)  # type: ignore[arg-type]
    assert "Legal moves now:\n1. take" in str(e.value)


@pytest.mark.parametrize("reply", ["don't discard 3c", "do not discard 7h", "discard 3c, not 9s", "draw stock and discard 3c"])
def test_a_negated_discard_is_refused(reply: str) -> None:
    _, (v, legal) = _offer_and_discard()
    with pytest.raises(IllegalMove, match="Legal moves now"):
        parse_move(reply, legal, v)  # type: ignore[arg-type]


@pytest.mark.parametrize("move", [True, False, 1.0, -1, 0, 2.5])
def test_a_move_number_is_a_plain_positive_integer(move: object) -> None:
    (v, legal), _ = _offer_and_discard()
    with pytest.raises(IllegalMove, match="Legal moves now"):
        parse_move(move, legal, v)  # type: ignore[arg-type]


def test_honest_forms_still_read() -> None:
    (v, legal), _ = _offer_and_discard()
    take, pss = Action("take"), Action("pass")
    for reply, want in [
        (1, take), (2, pss), ("1", take), ("#2", pss), ("move 2", pss), ("number 2", pss), ("no. 2", pss),
        ("pass the upcard", pss), ("take the upcard", take), ("Take 7♥.", take), ("refuse the upcard", pss),
        ("2. pass — pass (refuse the upcard)", pss),
        ("2. pass — refuse the upcard", pss), ("1. take — take the upcard 7♥ (7h), then discard or knock", take),
        ("take — take the upcard", take), ("I will take the upcard", take), ("I want to take it", take),
    ]:
        assert parse_move(reply, legal, v) == want, reply  # type: ignore[arg-type]
