#include "melds.h"

#define ROW(hand, s) ((unsigned)(((hand) >> (13 * (s))) & 0x1FFF))

static int suit_value[1 << 13];
static int run_value[1 << 13];

void melds_init(void) {
    for (unsigned m = 0; m < (1u << 13); m++) {
        int total = 0, runs = 0, block_len = 0, block_val = 0;
        for (int r = 0; r <= 13; r++) {
            if (r < 13 && (m >> r & 1)) {
                int v = r >= 9 ? 10 : r + 1;
                total += v;
                block_len++;
                block_val += v;
            } else {
                if (block_len >= 3) runs += block_val;
                block_len = block_val = 0;
            }
        }
        suit_value[m] = total;
        run_value[m] = runs;
    }
}

int hand_value(hand_t hand) {
    return suit_value[ROW(hand, 0)] + suit_value[ROW(hand, 1)] + suit_value[ROW(hand, 2)] + suit_value[ROW(hand, 3)];
}

/* The search over sets: for each rank held in 3+ suits, no set, each set of three, or
 * the set of four. `removed` is the hand minus the cards put in sets so far. Returns the
 * most points that can be melded; records the best choice of set cards in *best_sets. */
static int search_sets(hand_t hand, unsigned ranks3, hand_t in_sets, hand_t *best_sets) {
    if (ranks3 == 0) {
        hand_t rest = hand & ~in_sets;
        int melded = hand_value(in_sets) + run_value[ROW(rest, 0)] + run_value[ROW(rest, 1)] +
                     run_value[ROW(rest, 2)] + run_value[ROW(rest, 3)];
        *best_sets = in_sets;
        return melded;
    }
    int rank = __builtin_ctz(ranks3);
    unsigned later = ranks3 & (ranks3 - 1);
    hand_t suits_mask = 0;
    for (int s = 0; s < 4; s++)
        if (hand >> (s * 13 + rank) & 1) suits_mask |= (hand_t)1 << (s * 13 + rank);
    hand_t choice;
    int best = search_sets(hand, later, in_sets, &choice);
    hand_t best_choice = choice;
    int held = hand_count(suits_mask);
    if (held == 3) {
        int v = search_sets(hand, later, in_sets | suits_mask, &choice);
        if (v > best) best = v, best_choice = choice;
    } else { /* four held: each set of three, then the set of four */
        for (int drop = 0; drop < 4; drop++) {
            hand_t three = suits_mask & ~((hand_t)1 << (drop * 13 + rank));
            int v = search_sets(hand, later, in_sets | three, &choice);
            if (v > best) best = v, best_choice = choice;
        }
        int v = search_sets(hand, later, in_sets | suits_mask, &choice);
        if (v > best) best = v, best_choice = choice;
    }
    *best_sets = best_choice;
    return best;
}

static unsigned ranks_in_three_suits(hand_t hand) {
    unsigned s0 = ROW(hand, 0), s1 = ROW(hand, 1), s2 = ROW(hand, 2), s3 = ROW(hand, 3);
    return (s0 & s1 & (s2 | s3)) | (s2 & s3 & (s0 | s1));
}

int deadwood(hand_t hand) {
    hand_t sets;
    return hand_value(hand) - search_sets(hand, ranks_in_three_suits(hand), 0, &sets);
}

arrangement_t best_arrangement(hand_t hand) {
    arrangement_t a = {0};
    hand_t sets;
    search_sets(hand, ranks_in_three_suits(hand), 0, &sets);
    hand_t melded = 0;
    /* Each rank among the set cards is one set. */
    for (int rank = 0; rank < 13; rank++) {
        hand_t m = 0;
        for (int s = 0; s < 4; s++) m |= sets & ((hand_t)1 << (s * 13 + rank));
        if (m) a.melds[a.count++] = m, melded |= m;
    }
    hand_t rest = hand & ~sets;
    for (int s = 0; s < 4; s++) {
        unsigned row = ROW(rest, s);
        int r = 0;
        while (r < 13) {
            if (!(row >> r & 1)) { r++; continue; }
            int start = r;
            while (r < 13 && (row >> r & 1)) r++;
            if (r - start >= 3 && a.count < MAX_MELDS) {
                hand_t m = 0;
                for (int k = start; k < r; k++) m |= (hand_t)1 << (s * 13 + k);
                a.melds[a.count++] = m;
                melded |= m;
            }
        }
    }
    a.deadwood_cards = hand & ~melded;
    a.deadwood = hand_value(a.deadwood_cards);
    return a;
}
