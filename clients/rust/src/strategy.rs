//! The bot's play: the "simple player" of gin rummy AI competitions, both variants.
//!
//! A pure function of what a prompt carries (hand, phase, upcard, top discard, the card
//! taken this turn, knock limit, legal actions), so the same code picks a move and, as
//! the box game's sitter, the advice for the captain.

use crate::cards::{bit, cards, value, Card, Hand};
use crate::melds::{best_arrangement, deadwood};

/// An action in the engine's vocabulary; `melds` only on knock / big gin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Action {
    pub kind: String,
    pub card: Option<Card>,
    pub melds: Option<Vec<Vec<Card>>>,
}

impl Action {
    pub fn new(kind: &str, card: Option<Card>) -> Self {
        Action { kind: kind.to_string(), card, melds: None }
    }
}

/// What the bot needs to know to move.
pub struct Situation<'a> {
    pub hand: Hand,
    pub phase: &'a str,
    pub upcard: Card,
    pub top_discard: Option<Card>,
    pub taken_card: Option<Card>,
    pub knock_limit: u32,
    pub legal: &'a [Action],
}

/// Would `card` make a set or a run with cards already in `hand`?
pub fn joins_meld(hand: Hand, card: Card) -> bool {
    let (rank, suit) = (card % 13, card / 13);
    let same_rank = (0..4u8).filter(|&s| s != suit && hand & bit(s * 13 + rank) != 0).count();
    if same_rank >= 2 {
        return true;
    }
    let has = |r: i32| (0..13).contains(&r) && hand & bit(suit * 13 + r as u8) != 0;
    let r = i32::from(rank);
    (has(r - 1) && (has(r - 2) || has(r + 1))) || (has(r + 1) && has(r + 2))
}

/// Discard preference among equals: highest value, then rank, then suit.
fn order(card: Card) -> (u32, u8, u8) {
    (value(card), card % 13, card / 13)
}

/// The card to throw from 11 (never `barred`) and the deadwood it leaves.
pub fn best_discard(hand: Hand, barred: Option<Card>) -> Option<(Card, u32)> {
    let base = deadwood(hand);
    let mut best: Option<(Card, u32)> = None;
    for c in cards(hand) {
        if Some(c) == barred {
            continue;
        }
        if let Some((_, dw)) = best {
            if base.saturating_sub(value(c)) > dw {
                continue; // cannot even tie the best
            }
        }
        let d = deadwood(hand & !bit(c));
        best = match best {
            Some((bc, bd)) if d > bd || (d == bd && order(c) < order(bc)) => Some((bc, bd)),
            _ => Some((c, d)),
        };
    }
    best
}

impl Situation<'_> {
    fn is_legal(&self, kind: &str, card: Option<Card>) -> bool {
        self.legal.iter().any(|a| a.kind == kind && (card.is_none() || a.card == card))
    }

    /// `wanted` if it is legal, else the first legal action (so the game always goes on).
    fn or_first_legal(&self, wanted: Action) -> Action {
        if self.is_legal(&wanted.kind, wanted.card) || self.legal.is_empty() {
            wanted
        } else {
            self.legal[0].clone()
        }
    }

    /// The move to make.
    pub fn choose(&self) -> Action {
        match self.phase {
            "offer" => {
                let kind = if joins_meld(self.hand, self.upcard) { "take" } else { "pass" };
                self.or_first_legal(Action::new(kind, None))
            }
            "draw" => match self.top_discard {
                Some(top) if self.is_legal("draw_discard", None) && joins_meld(self.hand, top) => {
                    Action::new("draw_discard", None)
                }
                _ => self.or_first_legal(Action::new("draw_stock", None)),
            },
            _ => self.choose_discard(),
        }
    }

    fn choose_discard(&self) -> Action {
        if self.is_legal("big_gin", None) {
            let mut a = Action::new("big_gin", None);
            a.melds = Some(best_arrangement(self.hand).melds);
            return a;
        }
        let (card, left) = match best_discard(self.hand, self.taken_card) {
            Some(best) => best,
            None => return self.or_first_legal(Action::new("discard", None)),
        };
        if left <= self.knock_limit && self.is_legal("knock", Some(card)) {
            let mut a = Action::new("knock", Some(card));
            // Gin: every arrangement scores alike, so declare ours. Otherwise the
            // referee's default leaves the defender the fewest layoffs: better than ours.
            if left == 0 {
                a.melds = Some(best_arrangement(self.hand & !bit(card)).melds);
            }
            return a;
        }
        self.or_first_legal(Action::new("discard", Some(card)))
    }
}
