// The bot's play: the "simple player" of gin rummy AI competitions, for both variants.
//
// A pure function of what a prompt carries (the hand, the phase, the upcard, the top
// discard, the card taken this turn, the knock limit, the legal actions), so the same
// code picks a move and, as the box game's sitter, the advice for the captain.

import { parseCard, rowsOf, value, cardStr } from "./cards.js";
import { bestArrangement, deadwood } from "./melds.js";

/** Would `card` make a set or a run with cards already in the hand (suit rows)? */
export function joinsMeld(rows, card) {
  const rank = card % 13, suit = Math.floor(card / 13);
  let sameRank = 0;
  for (let s = 0; s < 4; s++) if (s !== suit && (rows[s] >> rank) & 1) sameRank++;
  if (sameRank >= 2) return true;
  const row = rows[suit];
  const has = (r) => r >= 0 && r < 13 && ((row >> r) & 1) === 1;
  return (has(rank - 1) && (has(rank - 2) || has(rank + 1))) || (has(rank + 1) && has(rank + 2));
}

/** Discard preference among cards leaving equal deadwood: value, then rank, then suit. */
function prefer(a, b) {
  if (b === null) return true;
  if (value(a) !== value(b)) return value(a) > value(b);
  if (a % 13 !== b % 13) return a % 13 > b % 13;
  return a > b;
}

/** The card to throw from 11 (never `barred`) and the deadwood it leaves. */
export function bestDiscard(cards, barred) {
  const rows = rowsOf(cards);
  const base = deadwood(rows);
  let best = null, bestDw = Infinity;
  for (const c of cards) {
    if (c === barred || base - value(c) > bestDw) continue;
    const s = Math.floor(c / 13);
    rows[s] &= ~(1 << c % 13);
    const d = deadwood(rows);
    rows[s] |= 1 << c % 13;
    if (d < bestDw || (d === bestDw && prefer(c, best))) [best, bestDw] = [c, d];
  }
  return { card: best, deadwood: bestDw };
}

/**
 * The move for a prompt. `view` is the protocol's view object (cards as strings);
 * `legal` the prompt's legal actions in wire form. Returns a wire action.
 */
export function choose(view, legal) {
  const hand = view.hand.map(parseCard);
  const rows = rowsOf(hand);
  const has = (kind, card) => legal.some((a) => a.kind === kind && (card === undefined || a.card === card));
  const fallback = (a) => (legal.some((l) => l.kind === a.kind && (a.card === undefined || l.card === a.card)) ? a : legal[0]);
  if (view.phase === "offer") {
    return fallback({ kind: joinsMeld(rows, parseCard(view.upcard)) ? "take" : "pass" });
  }
  if (view.phase === "draw") {
    const pile = view.discard_pile;
    const top = pile.length ? parseCard(pile[pile.length - 1]) : null;
    if (top !== null && has("draw_discard") && joinsMeld(rows, top)) return { kind: "draw_discard" };
    return fallback({ kind: "draw_stock" });
  }
  // Discard phase: big gin if offered, else knock as soon as allowed, else discard.
  if (has("big_gin")) {
    return { kind: "big_gin", melds: bestArrangement(rows).melds.map((m) => m.map(cardStr)) };
  }
  const barred = view.taken_card == null ? null : parseCard(view.taken_card);
  const { card, deadwood: left } = bestDiscard(hand, barred);
  const name = cardStr(card);
  if (left <= view.knock_limit && has("knock", name)) {
    const action = { kind: "knock", card: name };
    if (left === 0) {
      // Gin: every arrangement scores alike, so declare ours. Otherwise the referee's
      // default leaves the defender the fewest layoffs, which is better than ours.
      const kept = hand.filter((c) => c !== card);
      action.melds = bestArrangement(rowsOf(kept)).melds.map((m) => m.map(cardStr));
    }
    return action;
  }
  return fallback({ kind: "discard", card: name });
}
