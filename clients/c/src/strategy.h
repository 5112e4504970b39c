/* The bot's play: the "simple player" of gin rummy AI competitions, both variants.
 *
 * Pure functions of what a prompt carries (the seat's hand, the phase, the upcard, the
 * top of the discard pile, the card taken this turn, the knock limit and the legal
 * actions), so the same code decides a move and, as the box game's sitter, the advice
 * for the captain. */
#ifndef OKGIN_STRATEGY_H
#define OKGIN_STRATEGY_H

#include <stdbool.h>

#include "melds.h"

typedef enum { ACT_TAKE, ACT_PASS, ACT_DRAW_STOCK, ACT_DRAW_DISCARD, ACT_DISCARD, ACT_KNOCK, ACT_BIG_GIN, ACT_UNKNOWN } act_kind_t;

#define MAX_LEGAL 64

typedef struct {
    act_kind_t kind;
    int card;           /* CARD_NONE when the action has none */
    bool declare_melds; /* knock/big_gin: send `melds` (the arrangement of the cards kept) */
} action_t;

typedef struct {
    hand_t hand;     /* the hand being played (the captain's, for the sitter) */
    const char *phase; /* offer | draw | discard */
    int upcard;
    int top_discard; /* CARD_NONE if the pile is empty */
    int taken_card;  /* CARD_NONE unless a card was taken from the pile this turn */
    int knock_limit;
    int nlegal;
    action_t legal[MAX_LEGAL];
} situation_t;

/* Would `card` make a set or a run with cards already in `hand`? */
bool joins_meld(hand_t hand, int card);
/* The move to make; always one of the legal actions (or a knock in it with melds). */
action_t choose(const situation_t *s);
const char *act_kind_name(act_kind_t kind);
act_kind_t act_kind_parse(const char *name, size_t len);

#endif
