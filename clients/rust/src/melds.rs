//! Minimum deadwood and a best meld arrangement (RULES.md section 2).
//!
//! No general search is needed: once the sets of an arrangement are chosen, the best
//! runs are independent per suit and unique within a suit (every maximal block of three or
//! more consecutive ranks is melded whole, since melding a card never raises deadwood).
//! Two tables over the 8192 possible suit rows give a row's value and its best run value;
//! the only search left is over the ranks held in three or more suits (at most three in
//! 11 cards, six choices each).

use crate::cards::{bit, Card, Hand};

/// Per 13-bit suit row: the value of its cards, and the value of its best runs. Built at
/// compile time.
struct Tables {
    suit_value: [u16; 1 << 13],
    run_value: [u16; 1 << 13],
}

static TABLES: Tables = build_tables();

const fn build_tables() -> Tables {
    let mut t = Tables { suit_value: [0; 1 << 13], run_value: [0; 1 << 13] };
    let mut m = 0;
    while m < 1 << 13 {
        let (mut total, mut runs, mut len, mut val) = (0u16, 0u16, 0, 0u16);
        let mut r = 0;
        while r <= 13 {
            if r < 13 && m >> r & 1 == 1 {
                let v = if r >= 9 { 10 } else { r as u16 + 1 };
                total += v;
                len += 1;
                val += v;
            } else {
                if len >= 3 {
                    runs += val;
                }
                len = 0;
                val = 0;
            }
            r += 1;
        }
        t.suit_value[m] = total;
        t.run_value[m] = runs;
        m += 1;
    }
    t
}

fn row(hand: Hand, suit: u32) -> usize {
    ((hand >> (13 * suit)) & 0x1FFF) as usize
}

/// Total value of every card in the hand.
pub fn hand_value(hand: Hand) -> u32 {
    (0..4).map(|s| u32::from(TABLES.suit_value[row(hand, s)])).sum()
}

fn run_points(hand: Hand) -> u32 {
    (0..4).map(|s| u32::from(TABLES.run_value[row(hand, s)])).sum()
}

fn ranks_in_three_suits(hand: Hand) -> u32 {
    let (s0, s1, s2, s3) = (row(hand, 0), row(hand, 1), row(hand, 2), row(hand, 3));
    ((s0 & s1 & (s2 | s3)) | (s2 & s3 & (s0 | s1))) as u32
}

/// The most points that sets (from `ranks3`) plus runs can meld; returns the set cards.
fn search_sets(hand: Hand, ranks3: u32, in_sets: Hand) -> (u32, Hand) {
    if ranks3 == 0 {
        return (hand_value(in_sets) + run_points(hand & !in_sets), in_sets);
    }
    let rank = ranks3.trailing_zeros() as Card;
    let later = ranks3 & (ranks3 - 1);
    let of_rank: Hand = (0..4u8).map(|s| bit(s * 13 + rank)).filter(|&b| hand & b != 0).fold(0, |a, b| a | b);
    let mut options = vec![0, of_rank];
    if of_rank.count_ones() == 4 {
        options.extend((0..4u8).map(|s| of_rank & !bit(s * 13 + rank)));
    }
    options
        .into_iter()
        .map(|set| search_sets(hand, later, in_sets | set))
        .fold((0, 0), |best, cand| if cand.0 > best.0 { cand } else { best })
}

/// Least deadwood of any set of cards.
pub fn deadwood(hand: Hand) -> u32 {
    let three = ranks_in_three_suits(hand);
    if three == 0 {
        return hand_value(hand) - run_points(hand);
    }
    hand_value(hand) - search_sets(hand, three, 0).0
}

/// A way to lay out a hand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arrangement {
    pub melds: Vec<Vec<Card>>,
    pub deadwood_cards: Hand,
    pub deadwood: u32,
}

/// One arrangement of least deadwood (deterministic).
pub fn best_arrangement(hand: Hand) -> Arrangement {
    let (_, sets) = search_sets(hand, ranks_in_three_suits(hand), 0);
    let mut melds: Vec<Vec<Card>> = Vec::new();
    for rank in 0..13u8 {
        let set: Vec<Card> = (0..4u8).map(|s| s * 13 + rank).filter(|&c| sets & bit(c) != 0).collect();
        if !set.is_empty() {
            melds.push(set);
        }
    }
    let rest = hand & !sets;
    for suit in 0..4u8 {
        let r = row(rest, u32::from(suit));
        let mut rank = 0u8;
        while rank < 13 {
            if r >> rank & 1 == 0 {
                rank += 1;
                continue;
            }
            let start = rank;
            while rank < 13 && r >> rank & 1 == 1 {
                rank += 1;
            }
            if rank - start >= 3 {
                melds.push((start..rank).map(|k| suit * 13 + k).collect());
            }
        }
    }
    let melded = melds.iter().flatten().fold(0, |h, &c| h | bit(c));
    let dead = hand & !melded;
    Arrangement { melds, deadwood_cards: dead, deadwood: hand_value(dead) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cards::hand_of;

    #[test]
    fn known_hands() {
        let h = hand_of("As 2s 3s 7h 7d 7c Kd Qd 9c 2h".split(' ')).unwrap();
        assert_eq!(deadwood(h), 31);
        let h = hand_of("4h 5h 6h 7h 7s 7c Kd".split(' ')).unwrap();
        assert_eq!(deadwood(h), 10);
        assert_eq!(best_arrangement(h).deadwood, 10);
    }
}
