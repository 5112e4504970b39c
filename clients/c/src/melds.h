/* Minimum deadwood and a best meld arrangement (RULES.md section 2).
 *
 * Why it is fast without a general search: once the sets of an arrangement are chosen,
 * the best runs are independent per suit, and within a suit they are unique (every
 * maximal block of three or more consecutive ranks is melded whole, since melding a card
 * never raises deadwood). Two tables over the 8192 possible suit rows give a row's value
 * and its best run value; the only search left is over the ranks held in three or more
 * suits (at most three of them in 11 cards, six choices each). */
#ifndef OKGIN_MELDS_H
#define OKGIN_MELDS_H

#include "cards.h"

#define MAX_MELDS 4 /* 11 cards hold at most three melds; one spare */

typedef struct {
    int count;            /* number of melds */
    hand_t melds[MAX_MELDS];
    hand_t deadwood_cards;
    int deadwood;
} arrangement_t;

/* Build the tables once before any other call. */
void melds_init(void);
/* Least deadwood of any set of cards. */
int deadwood(hand_t hand);
/* Sum of the values of all cards. */
int hand_value(hand_t hand);
/* One arrangement of least deadwood (deterministic). */
arrangement_t best_arrangement(hand_t hand);

#endif
