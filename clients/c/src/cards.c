#include "cards.h"

static const char RANKS[] = "A23456789TJQK";
static const char SUITS[] = "cdhs";

int card_value(int card) {
    int rank = card % 13;
    return rank >= 9 ? 10 : rank + 1;
}

int card_parse(const char *text, size_t len) {
    if (len != 2) return CARD_NONE;
    int rank = -1, suit = -1;
    for (int i = 0; i < 13; i++)
        if (RANKS[i] == text[0]) rank = i;
    for (int i = 0; i < 4; i++)
        if (SUITS[i] == text[1]) suit = i;
    return rank < 0 || suit < 0 ? CARD_NONE : suit * 13 + rank;
}

void card_format(int card, char out[3]) {
    out[0] = RANKS[card % 13];
    out[1] = SUITS[card / 13];
    out[2] = '\0';
}

int hand_count(hand_t hand) { return __builtin_popcountll(hand); }
