// Cards as the protocol writes them ("As", "Td", "7h") and as the bot computes with them.
//
// A card is an index 0..51 = suit * 13 + rank (ranks A23456789TJQK, suits cdhs), the
// referee's own numbering. A hand is four 13-bit suit rows: JavaScript's bitwise
// operators work on 32 bits, so one 52-bit mask would need BigInt, while rows stay plain
// fast numbers and are exactly what the meld search wants.

export const RANKS = "A23456789TJQK";
export const SUITS = "cdhs";

/** Point value: A = 1, 2-10 face value, J Q K = 10. */
export function value(card) {
  const rank = card % 13;
  return rank >= 9 ? 10 : rank + 1;
}

/** Parse a wire card ("As"); throws on anything else. */
export function parseCard(text) {
  const rank = typeof text === "string" && text.length === 2 ? RANKS.indexOf(text[0]) : -1;
  const suit = rank >= 0 ? SUITS.indexOf(text[1]) : -1;
  if (suit < 0) throw new Error(`not a card: ${JSON.stringify(text)}`);
  return suit * 13 + rank;
}

export function cardStr(card) {
  return RANKS[card % 13] + SUITS[Math.floor(card / 13)];
}

/** A hand as four 13-bit suit rows, from card indices. */
export function rowsOf(cards) {
  const rows = [0, 0, 0, 0];
  for (const c of cards) rows[Math.floor(c / 13)] |= 1 << c % 13;
  return rows;
}

/** Card indices of four suit rows, ascending. */
export function cardsOf(rows) {
  const out = [];
  for (let s = 0; s < 4; s++) for (let r = 0; r < 13; r++) if ((rows[s] >> r) & 1) out.push(s * 13 + r);
  return out;
}
