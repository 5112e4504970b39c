"""Sentences: what happened, what to do now, and what the hint suggests.

Pure functions of the :class:`TableState` (and the selected card), so the words on the
screen can be tested without a terminal and read the same in every screen. The hints
use only the engine's pure helpers on cards this client was sent (its own hand and the
public piles): no hidden information, no back door.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rich.text import Text

from okgin import Action, Event, HandResult, deadwood, wording
from okgin.cards import Card, mask_of, parse_card
from okgin.melds import deadwood_after_discard_mask, deadwood_mask

from .model import TableState
from .options import DisplayOptions
from .widgets.cards import card_label, card_text


def event_sentence(state: TableState, ev: Event, opts: DisplayOptions, outcome: str | None = None) -> str:
    """One move of the hand as this viewer saw it (:func:`okgin.wording.event_sentence`);
    ``outcome``, for the move that ended the hand, says how it ended (a gin is no mere knock)."""
    return wording.event_sentence(ev.kind, state.name(ev.seat), None if ev.card is None else card_label(ev.card, opts),
                                  outcome)


def action_phrase(action: Action, opts: DisplayOptions, upcard: Card | None = None, top: Card | None = None) -> str:
    """A legal action as a short imperative: "take the upcard 7♦", "discard 9♠"."""
    return wording.action_phrase(action, lambda c: card_label(c, opts), upcard, top)


_CARD_CODE = re.compile(r"\b(10|[2-9TJQKA])([cdhs])\b")


def card_codes_to_labels(text: str, opts: DisplayOptions) -> str:
    """Card codes in free text (a bot's advice note: "I would discard Ts") written as the
    table writes cards ("10♠", or "10S" in ASCII mode), so one hand never reads in two
    notations. "As" and "Ah" open sentences too: they are cards only after a word."""

    def label(m: re.Match[str]) -> str:
        if m.group(0) in ("As", "Ah") and not re.search(r"\w\s+$", text[: m.start()]):
            return m.group(0)  # "As I said", "Ah, ...": English words, unless a word leads to them
        rank = "T" if m.group(1) == "10" else m.group(1)
        return card_label(parse_card(rank + m.group(2)), opts)

    return _CARD_CODE.sub(label, text)


def advice_phrase(action: Action | None, text: str, opts: DisplayOptions, upcard: Card | None = None,
                  top: Card | None = None) -> str:
    """One piece of advice as the sitter meant it: the move, then the note, cards as on the table."""
    parts = []
    if action is not None:
        parts.append(action_phrase(action, opts, upcard, top))
    if text:
        parts.append(f'"{card_codes_to_labels(text, opts)}"')
    return " — ".join(parts) if parts else "(nothing)"


def result_sentence(state: TableState, r: HandResult) -> str:
    """How a hand ended, in one sentence (:func:`okgin.wording.result_sentence`)."""
    return wording.result_sentence(r, state.name, state.rules.max_pile_draws if state.rules is not None else None)


# ------------------------------------------------------------------ hints
@dataclass(frozen=True)
class HandInfo:
    """Deadwood facts about the hand we hold (or advise)."""

    deadwood: int  # of the cards held now
    best_after: int | None = None  # with 11 cards: least deadwood after one discard
    best_discards: tuple[Card, ...] = ()
    after_selected: int | None = None  # deadwood after discarding the selected card
    can_knock_selected: bool = False
    knock_cards: tuple[Card, ...] = ()  # legal knock discards, best first


def hand_info(state: TableState, selected: Card | None) -> HandInfo | None:
    v = state.view
    if v is None or v.hand is None or not v.hand:
        return None
    hand = list(v.hand)
    mask = mask_of(hand)
    dw = deadwood_mask(mask)
    if len(hand) != 11:
        return HandInfo(dw)
    barred = v.taken_card if not (state.rules and state.rules.allow_discard_of_taken_card) else None
    candidates = mask if barred is None else mask & ~(1 << barred)
    best = 10**9
    best_cards: list[Card] = []
    after: dict[Card, int] = {}
    for c in hand:
        if not candidates >> c & 1:
            continue
        d = deadwood_mask(mask & ~(1 << c))
        after[c] = d
        if d < best:
            best, best_cards = d, [c]
        elif d == best:
            best_cards.append(c)
    legal_source = state.legal if state.legal else state.advice_legal
    knocks = sorted(
        (a.card for a in legal_source if a.kind == "knock" and a.card is not None), key=lambda c: (after.get(c, 99), -c)
    )
    sel_after = after.get(selected) if selected is not None else None
    return HandInfo(dw, best, tuple(best_cards), sel_after, selected in knocks, tuple(knocks))


def best_discard(state: TableState) -> Card | None:
    """The discard that leaves the least deadwood (highest card among equals)."""
    info = hand_info(state, None)
    if info is None or not info.best_discards:
        return None
    from okgin.cards import value

    return max(info.best_discards, key=lambda c: (value(c), c))


def deadwood_with(hand: tuple[Card, ...], extra: Card, barred: Card | None) -> int:
    """Least deadwood after adding ``extra`` and throwing the best other card."""
    m = mask_of(hand) | (1 << extra)
    if barred is None:
        return deadwood_after_discard_mask(m)[0]
    return min(deadwood_mask(m & ~(1 << c)) for c in hand)


def status_line(state: TableState, selected: Card | None, opts: DisplayOptions) -> Text:
    """The line above the hand: deadwood now and, holding 11 cards, after the discard."""
    v = state.view
    if v is None:
        return Text("")
    info = hand_info(state, selected)
    limit = "gin only" if v.knock_limit == 0 else f"knock limit {v.knock_limit}"
    if info is None:
        return Text(limit)
    t = Text()
    t.append(f"Deadwood {info.deadwood}", style="bold")
    if info.best_after is not None:
        if selected is not None and info.after_selected is not None:
            t.append(" · discarding ")
            t.append_text(card_text(selected, opts))
            t.append(f" leaves {info.after_selected}")
        if opts.hints and info.best_discards:
            bd = best_discard(state)
            t.append(" · best: ")
            t.append_text(card_text(bd, opts))
            t.append(f" → {info.best_after}")
    t.append(f" · {limit}", style="dim")
    return t


def what_now(state: TableState, selected: Card | None, opts: DisplayOptions) -> Text:
    """The sentence that tells the person at the keyboard what to do now (or whom we wait
    for), led by the referee's sentence when it refused our last request: the player is
    looking here, not at the top of the screen."""
    line = _what_now(state, selected, opts)
    if state.error and state.replay is None:
        t = Text("Refused: " if opts.ascii else "✗ Refused: ", style="bold red")
        t.append(state.error.rstrip(".") + ". ", style="bold red")
        t.append_text(line)
        return t
    return line


def _what_now(state: TableState, selected: Card | None, opts: DisplayOptions) -> Text:
    v = state.view
    t = Text()
    if state.replay is not None:
        step, total = state.replay
        t.append(f"Replay: move {step} of {total}. ", style="bold")
        if state.final is not None:
            from .screens.game_over import headline

            term = state.final.get("termination")
            t.append(headline(state) + (f" ({term})" if term and term != "normal" else "") + " ", style="bold")
        t.append("←/→ step, Home/End jump, PgUp/PgDn by hand, q quit.")
        return t
    if v is None:
        return Text(state.notice or "Waiting for the game to start…")
    if state.game_over:
        if state.spectator:  # a rematch is the players' to ask for
            return Text("The game is over. Press q to quit.", style="bold")
        return Text("The game is over. Press r for a rematch, q to quit.", style="bold")
    up = v.top_discard
    if state.spectator:
        t.append("Spectating. ", style="bold")
        t.append(f"{state.name(v.to_act)} to {_phase_verb(v.phase)}.")
        return t
    if state.is_sitter:
        captain = state.name(v.hand_of)
        if state.can_advise:
            t.append("You sit out this hand. ", style="bold")
            t.append(
                f"{captain} (your captain) is to {_phase_verb(v.phase)}: suggest a move with its key, or press m to write a note."
            )
        else:
            t.append(f"You sit out this hand and advise {captain}. ")
            t.append(f"Waiting for {state.name(v.to_act)} to {_phase_verb(v.phase)}.")
        return t
    held = state.extra.get("held_discard")
    if held is not None and v.to_act == v.seat:
        t.append("Discarding ", style="bold")
        t.append_text(card_text(held, opts))
        t.append(f" in {state.extra.get('undo_seconds', 2):g} s: press u to take it back.", style="bold")
        return t
    if not state.my_turn:
        if v.to_act is None:
            return Text("Waiting for the next hand…")
        if v.to_act == v.seat:
            return Text("Your turn: waiting for the referee's prompt…")
        return Text(f"Waiting for {state.name(v.to_act)} to {_phase_verb(v.phase)}…")
    kinds = state.legal_kinds()
    t.append("Your turn. ", style="bold")
    if v.phase == "offer":
        t.append("The upcard is ")
        t.append_text(card_text(up, opts))
        t.append(": take it (t) or pass (p).")
        t.append_text(_take_hint(state, opts))
        return t
    if v.phase == "draw":
        if "draw_discard" in kinds:
            t.append("Draw from the stock (s) or take ")
            t.append_text(card_text(up, opts))
            t.append(" from the discard pile (d).")
            t.append_text(_take_hint(state, opts))
        else:
            t.append("Both passed the upcard: draw from the stock (s).")
        return t
    if v.phase == "discard":
        info = hand_info(state, selected)
        if "big_gin" in kinds:
            t.append("All 11 cards meld: press g for big gin! ", style="bold green")
        if info is not None and info.knock_cards:
            if info.can_knock_selected and selected is not None:
                gin = info.after_selected == 0
                t.append("You can knock" + (" with gin" if gin else "") + ": press k to knock, throwing ", style="bold green")
                t.append_text(card_text(selected, opts))
                t.append(" face down. ", style="bold green")
                t.append_text(knock_preview(v.hand or (), selected, opts))
            else:
                t.append("You can knock: press k. ", style="bold green")
        t.append("Pick a card with ←/→ (or click it), Enter discards it.")
        if v.taken_card is not None and not (state.rules and state.rules.allow_discard_of_taken_card):
            t.append(" ")
            t.append_text(card_text(v.taken_card, opts))
            t.append(" was just taken from the pile: it may not go back this turn.", style="dim")
        return t
    return t


def knock_preview(hand: tuple[Card, ...], thrown: Card, opts: DisplayOptions) -> Text:
    """What a knock throwing ``thrown`` would lay out, before it is committed: the melds
    and the deadwood left ("You lay out [3♠ 4♠ 5♠] [6♥ 6♣ 6♦], deadwood 2♣ 3♦ = 5.").
    The engine's own best arrangement of the ten cards kept, the one the referee lays out."""
    from okgin import best_melds

    kept = [c for c in hand if c != thrown]
    arr = best_melds(kept)
    t = Text("You lay out ")
    for i, m in enumerate(arr.melds):
        t.append(" [" if i else "[")
        t.append_text(Text(" ").join(card_text(c, opts) for c in m))
        t.append("]")
    if arr.deadwood_cards:
        t.append(", deadwood " if arr.melds else "no meld, deadwood ")
        t.append_text(Text(" ").join(card_text(c, opts) for c in arr.deadwood_cards))
        t.append(f" = {arr.deadwood}. ")
    else:
        t.append(", no deadwood. ")
    return t


def _take_hint(state: TableState, opts: DisplayOptions) -> Text:
    """With hints on: whether taking the top card could lower the deadwood (after the best
    discard; the card itself may not go back unless the rules allow it)."""
    v = state.view
    if not opts.hints or v is None or v.hand is None or v.top_discard is None:
        return Text("")
    hand, card = v.hand, v.top_discard
    barred = None if state.rules and state.rules.allow_discard_of_taken_card else card
    now = deadwood(hand)
    d = deadwood_with(hand, card, barred)
    label = card_label(card, opts)
    if d < now:
        return Text(f" Hint: with {label} your deadwood could drop from {now} to {d}.", style="dim")
    return Text(f" Hint: {label} would not lower your deadwood ({now}).", style="dim")


def _phase_verb(phase: str | None) -> str:
    return {"offer": "decide on the upcard", "draw": "draw", "discard": "discard"}.get(phase or "", "play")
