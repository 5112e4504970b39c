#include "strategy.h"

#include <string.h>

static const char *KIND_NAMES[] = {"take", "pass", "draw_stock", "draw_discard", "discard", "knock", "big_gin"};

const char *act_kind_name(act_kind_t kind) { return kind < ACT_UNKNOWN ? KIND_NAMES[kind] : "unknown"; }

act_kind_t act_kind_parse(const char *name, size_t len) {
    for (int k = 0; k < ACT_UNKNOWN; k++)
        if (strlen(KIND_NAMES[k]) == len && memcmp(KIND_NAMES[k], name, len) == 0) return (act_kind_t)k;
    return ACT_UNKNOWN;
}

bool joins_meld(hand_t hand, int card) {
    int rank = card % 13, suit = card / 13, same_rank = 0;
    for (int s = 0; s < 4; s++)
        if (s != suit && (hand >> (s * 13 + rank) & 1)) same_rank++;
    if (same_rank >= 2) return true;
    unsigned row = (unsigned)(hand >> (suit * 13)) & 0x1FFF;
#define HAS(r) ((r) >= 0 && (r) < 13 && (row >> (r) & 1))
    return (HAS(rank - 1) && (HAS(rank - 2) || HAS(rank + 1))) || (HAS(rank + 1) && HAS(rank + 2));
#undef HAS
}

/* Discard preference among cards leaving equal deadwood: highest value, then rank, then suit. */
static bool prefer(int a, int b) {
    if (b == CARD_NONE) return true;
    if (card_value(a) != card_value(b)) return card_value(a) > card_value(b);
    if (a % 13 != b % 13) return a % 13 > b % 13;
    return a / 13 > b / 13;
}

static bool is_legal(const situation_t *s, act_kind_t kind, int card) {
    for (int i = 0; i < s->nlegal; i++)
        if (s->legal[i].kind == kind && (card == CARD_NONE || s->legal[i].card == card)) return true;
    return false;
}

/* Among the cards that may be thrown (any but `barred`), the one leaving least deadwood. */
static int best_discard(hand_t hand, int barred, int *deadwood_left) {
    int base = deadwood(hand), best_dw = 1 << 30, best = CARD_NONE;
    for (int c = 0; c < 52; c++) {
        if (!(hand >> c & 1) || c == barred) continue;
        if (base - card_value(c) > best_dw) continue; /* cannot even tie the best */
        int d = deadwood(hand & ~((hand_t)1 << c));
        if (d < best_dw || (d == best_dw && prefer(c, best))) best_dw = d, best = c;
    }
    *deadwood_left = best_dw;
    return best;
}

action_t choose(const situation_t *s) {
    action_t a = {ACT_DRAW_STOCK, CARD_NONE, false};
    if (strcmp(s->phase, "offer") == 0) {
        a.kind = joins_meld(s->hand, s->upcard) && is_legal(s, ACT_TAKE, CARD_NONE) ? ACT_TAKE : ACT_PASS;
        if (!is_legal(s, a.kind, CARD_NONE) && s->nlegal > 0) a = s->legal[0];
        return a;
    }
    if (strcmp(s->phase, "draw") == 0) {
        if (s->top_discard != CARD_NONE && is_legal(s, ACT_DRAW_DISCARD, CARD_NONE) && joins_meld(s->hand, s->top_discard))
            a.kind = ACT_DRAW_DISCARD;
        else if (!is_legal(s, ACT_DRAW_STOCK, CARD_NONE) && s->nlegal > 0)
            a = s->legal[0];
        return a;
    }
    /* Discard phase: big gin if offered, else knock as soon as allowed, else discard. */
    if (is_legal(s, ACT_BIG_GIN, CARD_NONE)) {
        a.kind = ACT_BIG_GIN;
        a.declare_melds = true;
        return a;
    }
    int left;
    int card = best_discard(s->hand, s->taken_card, &left);
    if (left <= s->knock_limit && is_legal(s, ACT_KNOCK, card)) {
        a.kind = ACT_KNOCK;
        a.card = card;
        /* Gin: every arrangement scores alike, so declare ours. Otherwise let the referee
         * pick the arrangement that leaves the defender the fewest layoffs. */
        a.declare_melds = left == 0;
        return a;
    }
    a.kind = ACT_DISCARD;
    a.card = card;
    if (!is_legal(s, ACT_DISCARD, card)) {
        /* Never expected: fall back to any legal discard so the game goes on. */
        for (int i = 0; i < s->nlegal; i++)
            if (s->legal[i].kind == ACT_DISCARD) return s->legal[i];
        if (s->nlegal > 0) return s->legal[0];
    }
    return a;
}
