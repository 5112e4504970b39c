/* okgin-bot (C): entry point. The protocol client is being written against protocol.md;
 * for now: --eval (least deadwood of each hand read from stdin, one hand a line). */
#include <stdio.h>
#include <string.h>

#include "melds.h"

static int eval_hands(void) {
    char line[512];
    while (fgets(line, sizeof line, stdin)) {
        hand_t hand = 0;
        for (char *tok = strtok(line, " \t\r\n"); tok; tok = strtok(NULL, " \t\r\n")) {
            int c = card_parse(tok, strlen(tok));
            if (c == CARD_NONE) {
                fprintf(stderr, "okgin-bot: not a card: %s\n", tok);
                return 2;
            }
            hand |= (hand_t)1 << c;
        }
        arrangement_t a = best_arrangement(hand);
        printf("%d %d\n", deadwood(hand), a.deadwood);
    }
    return 0;
}

int main(int argc, char **argv) {
    melds_init();
    if (argc > 1 && strcmp(argv[1], "--eval") == 0) return eval_hands();
    fprintf(stderr, "usage: okgin-bot --eval\n");
    return 2;
}
