//! Cards as the protocol writes them (`"As"`, `"Td"`, `"7h"`) and as the bot computes
//! with them: an index 0..51 = suit * 13 + rank (ranks `A23456789TJQK`, suits `cdhs`),
//! the referee's own numbering, so a hand is one `u64` bit mask.

pub type Card = u8;
pub type Hand = u64;

const RANKS: &[u8; 13] = b"A23456789TJQK";
const SUITS: &[u8; 4] = b"cdhs";

/// Point value: A = 1, 2-10 face value, J Q K = 10.
pub fn value(card: Card) -> u32 {
    let rank = u32::from(card % 13);
    if rank >= 9 { 10 } else { rank + 1 }
}

/// Parses a two-character wire card such as `"As"`.
pub fn parse(text: &str) -> Option<Card> {
    let b = text.as_bytes();
    if b.len() != 2 {
        return None;
    }
    let rank = RANKS.iter().position(|&r| r == b[0])?;
    let suit = SUITS.iter().position(|&s| s == b[1])?;
    Some((suit * 13 + rank) as Card)
}

pub fn to_str(card: Card) -> String {
    let (rank, suit) = (usize::from(card % 13), usize::from(card / 13));
    format!("{}{}", RANKS[rank] as char, SUITS[suit] as char)
}

pub fn bit(card: Card) -> Hand {
    1u64 << card
}

/// The cards of a hand, ascending.
pub fn cards(hand: Hand) -> impl Iterator<Item = Card> {
    (0..52u8).filter(move |&c| hand & bit(c) != 0)
}

pub fn hand_of<'a>(names: impl IntoIterator<Item = &'a str>) -> Option<Hand> {
    names.into_iter().try_fold(0, |h, n| parse(n).map(|c| h | bit(c)))
}
