"""okgin/wording.py: the one wording of moves and results (issue 25 item 3).

The MCP seat (okgin.harness) and the terminal UI (clients/tui/describe.py) used to word a
move each in their own way; now both call okgin.wording, and differ only in how they write
a card and a seat. These tests pin the sentences, and that the harness says what the TUI
says."""

from __future__ import annotations

from okgin import Action, Event, Game, HandResult, RuleSet
from okgin.cards import parse_card
from okgin.harness import card_text, event_text, result_text
from okgin.layoffs import Defence
from okgin.melds import Arrangement
from okgin.wording import (
    action_phrase,
    event_sentence,
    knocker_verb,
    outcome_words,
    points_words,
    result_cell,
    result_headline,
    result_sentence,
)


def test_every_move_in_words() -> None:
    assert event_sentence("take", "Ada", "7♥") == "Ada took the upcard 7♥"
    assert event_sentence("pass", "Ada") == "Ada passed the upcard"
    assert event_sentence("draw_stock", "Ada", "7♥") == "Ada drew 7♥ from the stock"
    assert event_sentence("draw_stock", "Bob") == "Bob drew from the stock"  # hidden from this reader
    assert event_sentence("draw_discard", "Ada", "7♥") == "Ada took 7♥ from the discard pile"
    assert event_sentence("discard", "Ada", "7♥") == "Ada discarded 7♥"
    assert event_sentence("knock", "Ada") == "Ada knocked"
    assert event_sentence("big_gin", "Ada") == "Ada went big gin"
    assert event_sentence("new_kind", "Ada", "7♥") == "Ada: new kind 7♥"


def test_moves_as_imperatives() -> None:
    card = lambda c: f"<{c}>"  # noqa: E731
    seven = parse_card("7h")
    assert action_phrase(Action("take"), card, upcard=seven) == f"take the upcard <{seven}>"
    assert action_phrase(Action("take"), card) == "take the upcard"
    assert action_phrase(Action("pass"), card) == "pass"
    assert action_phrase(Action("draw_stock"), card) == "draw from the stock"
    assert action_phrase(Action("draw_discard"), card) == "take the top card from the discard pile"
    assert action_phrase(Action("discard", seven), card) == f"discard <{seven}>"
    assert action_phrase(Action("knock", seven), card) == f"knock, throwing <{seven}> face down"
    assert action_phrase(Action("big_gin"), card) == "go big gin"


def _result(**kw: object) -> HandResult:
    """An undercut of hand 3: the knocker (seat 0) has 8 deadwood, the defender 5."""
    base: dict = dict(
        hand_number=2, outcome="undercut", winner=1, points=27, doubled=True, knock_limit=10, upcard=0, dealer=1,
        knocker=0, defender=1, knocker_layout=Arrangement((), (), 8), defender_layout=Defence(Arrangement((), (), 5), ()),
        scores_after=(0, 27),
    )
    base.update(kw)
    return HandResult(**base)


def test_results_in_words() -> None:
    names = {None: "nobody", 0: "You", 1: "Bob"}
    name = names.__getitem__
    r = _result()
    assert result_sentence(r, name) == "You knocked with 8 but were undercut (5): Bob scores 27 points (doubled: spade upcard)."
    assert result_cell(r, name) == "undercut by Bob (5 v 8) x2"
    assert result_headline(r, name) == "Hand 3: undercut, won by Bob for 27 points (doubled: spade upcard)"
    gin = _result(outcome="big_gin", winner=0, points=1, doubled=False, knocker=0)
    assert result_sentence(gin, name) == "You went big gin: You score 1 point."
    assert result_headline(gin, name) == "Hand 3: big gin, won by You for 1 point"
    drawn = _result(outcome="drawn", winner=None, points=0, knocker=None, defender=None)
    assert result_sentence(drawn, name, max_pile_draws=4) == (
        "Hand 3 was drawn: the stock ran down to 2 cards or the discard pile was drawn from 4 times. Nobody scores."
    )
    assert result_headline(drawn, name) == "Hand 3: drawn hand"  # a doubling scored nothing: not worth a word
    verbs = [knocker_verb(o) for o in ("gin", "big_gin", "knock", "undercut")]
    assert verbs == ["went gin", "went big gin", "knocked", "knocked"]
    assert outcome_words("big_gin") == "big gin" and points_words(0, True) == "0 points"


def test_the_harness_words_moves_and_results_as_the_wording_module_does() -> None:
    # Before the wording module the harness said "drew from the stock: 7♥ (7h)" and
    # "(card hidden)", and headed a result with the raw outcome ("big_gin").
    g = Game(RuleSet(knock_limit=10), 3)
    for a in (Action("pass"), Action("pass"), Action("draw_stock")):
        g.apply(a)
    mine, theirs = g.view(1), g.view(0)  # the non-dealer (seat 1) drew
    ev_mine = mine.events[-1]
    assert ev_mine.kind == "draw_stock" and ev_mine.card is not None
    assert event_text(ev_mine, mine) == f"you [seat 1 (non-dealer)] drew {card_text(ev_mine.card)} from the stock"
    assert event_text(theirs.events[-1], theirs) == "seat 1 (non-dealer) drew from the stock"
    assert event_text(Event(0, "discard", parse_card("7h")), theirs) == "you [seat 0 (dealer)] discarded 7♥ (7h)"
    r = _result(outcome="big_gin", doubled=False)
    assert result_text(r, mine).splitlines()[0] == "Hand 3: big gin, won by you [seat 1] for 27 points"


def test_the_harness_menu_leads_with_the_wording_modules_imperative() -> None:
    from okgin.harness import describe_move

    assert describe_move(Action("pass")) == "pass — pass (refuse the upcard)"
    assert describe_move(Action("draw_discard")) == "draw discard — take the top card from the discard pile (everyone sees it)"
    seven = parse_card("7h")
    assert describe_move(Action("knock", seven)) == "knock 7h — knock, throwing 7♥ (7h) face down and lay out your other 10 cards"
