mod cards;
mod melds;
mod strategy;

use std::io::BufRead;

/// Reads hands (one per line, wire cards separated by spaces) and prints, per line, the
/// least deadwood, then the deadwood of the arrangement found (they must agree).
fn main() {
    let ctx = zmq::Context::new();
    let _dealer = ctx.socket(zmq::DEALER).expect("zmq DEALER socket");
    for line in std::io::stdin().lock().lines() {
        let line = line.unwrap();
        let hand = cards::hand_of(line.split_whitespace()).expect("cards");
        let a = melds::best_arrangement(hand);
        println!("{} {} {}", melds::deadwood(hand), a.deadwood, melds::hand_value(a.deadwood_cards));
    }
}
