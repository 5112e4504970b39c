/* Cards as the protocol writes them ("As", "Td", "7h") and as the bot computes with them.
 *
 * A card is an index 0..51 = suit * 13 + rank (ranks A23456789TJQK = 0..12, suits cdhs
 * = 0..3), the referee's own numbering, so a hand fits one 64-bit mask and the meld
 * search works on four 13-bit suit rows. */
#ifndef OKGIN_CARDS_H
#define OKGIN_CARDS_H

#include <stdint.h>
#include <stddef.h>

typedef uint64_t hand_t;

#define CARD_NONE (-1)

/* Point value: A = 1, 2-10 face value, J Q K = 10. */
int card_value(int card);
/* Parse a two-character wire card ("As"); CARD_NONE if it is not one. */
int card_parse(const char *text, size_t len);
/* Write the two-character wire form and a NUL into out[3]. */
void card_format(int card, char out[3]);
int hand_count(hand_t hand);

#endif
