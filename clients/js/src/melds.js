// Minimum deadwood and a best meld arrangement (RULES.md section 2).
//
// Why no general search is needed: once the sets of an arrangement are chosen, the best
// runs are independent per suit and unique within a suit (every maximal block of three or
// more consecutive ranks is melded whole, since melding a card never raises deadwood).
// Two tables over the 8192 possible suit rows give a row's value and its best run value;
// the only search left is over ranks held in three or more suits (at most three of them
// in 11 cards, with at most six choices each).

import { cardsOf } from "./cards.js";

const SUIT_VALUE = new Int32Array(1 << 13);
const RUN_VALUE = new Int32Array(1 << 13);
for (let m = 0; m < 1 << 13; m++) {
  let total = 0, runs = 0, blockLen = 0, blockVal = 0;
  for (let r = 0; r <= 13; r++) {
    if (r < 13 && (m >> r) & 1) {
      const v = r >= 9 ? 10 : r + 1;
      total += v;
      blockLen++;
      blockVal += v;
    } else {
      if (blockLen >= 3) runs += blockVal;
      blockLen = blockVal = 0;
    }
  }
  SUIT_VALUE[m] = total;
  RUN_VALUE[m] = runs;
}

export function handValue(rows) {
  return SUIT_VALUE[rows[0]] + SUIT_VALUE[rows[1]] + SUIT_VALUE[rows[2]] + SUIT_VALUE[rows[3]];
}

/** Every way to put the ranks held in 3+ suits into sets: lists of [rank, suitMask]. */
function setChoices(rows) {
  const [s0, s1, s2, s3] = rows;
  let ranks3 = (s0 & s1 & (s2 | s3)) | (s2 & s3 & (s0 | s1));
  let choices = [[]];
  for (let rank = 0; ranks3; rank++, ranks3 >>= 1) {
    if (!(ranks3 & 1)) continue;
    let held = 0;
    for (let s = 0; s < 4; s++) if ((rows[s] >> rank) & 1) held |= 1 << s;
    const options = [];
    if (held === 15) {
      for (let drop = 0; drop < 4; drop++) options.push(15 & ~(1 << drop));
    }
    options.push(held);
    const next = [];
    for (const c of choices) {
      next.push(c);
      for (const o of options) next.push([...c, [rank, o]]);
    }
    choices = next;
  }
  return choices;
}

function scoreChoice(rows, sets) {
  const rest = rows.slice();
  let melded = 0;
  for (const [rank, suits] of sets) {
    for (let s = 0; s < 4; s++) {
      if ((suits >> s) & 1) {
        rest[s] &= ~(1 << rank);
        melded += rank >= 9 ? 10 : rank + 1;
      }
    }
  }
  for (let s = 0; s < 4; s++) melded += RUN_VALUE[rest[s]];
  return { melded, rest };
}

/** Least deadwood of a hand given as four suit rows. */
export function deadwood(rows) {
  const total = handValue(rows);
  const [s0, s1, s2, s3] = rows;
  if (!((s0 & s1 & (s2 | s3)) | (s2 & s3 & (s0 | s1)))) {
    return total - RUN_VALUE[s0] - RUN_VALUE[s1] - RUN_VALUE[s2] - RUN_VALUE[s3];
  }
  let best = 0;
  for (const sets of setChoices(rows)) best = Math.max(best, scoreChoice(rows, sets).melded);
  return total - best;
}

/** One arrangement of least deadwood: { melds: [[card...]...], deadwoodCards, deadwood }. */
export function bestArrangement(rows) {
  let best = null;
  for (const sets of setChoices(rows)) {
    const scored = scoreChoice(rows, sets);
    if (best === null || scored.melded > best.melded) best = { ...scored, sets };
  }
  const melds = best.sets.map(([rank, suits]) => [0, 1, 2, 3].filter((s) => (suits >> s) & 1).map((s) => s * 13 + rank));
  for (let s = 0; s < 4; s++) {
    let r = 0;
    while (r < 13) {
      if (!((best.rest[s] >> r) & 1)) {
        r++;
        continue;
      }
      const start = r;
      while (r < 13 && (best.rest[s] >> r) & 1) r++;
      if (r - start >= 3) melds.push(Array.from({ length: r - start }, (_, k) => s * 13 + start + k));
    }
  }
  const dead = rows.slice();
  for (const m of melds) for (const c of m) dead[Math.floor(c / 13)] &= ~(1 << c % 13);
  return { melds, deadwoodCards: cardsOf(dead), deadwood: handValue(dead) };
}
