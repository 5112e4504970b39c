package okgin.bot;

import java.util.ArrayList;
import java.util.List;

/**
 * Cards as the protocol writes them ("As", "Td", "7h") and as the bot computes with them:
 * an index 0..51 = suit * 13 + rank (ranks A23456789TJQK, suits cdhs), the referee's own
 * numbering, so a hand is one {@code long} bit mask.
 */
public final class Cards {
    private static final String RANKS = "A23456789TJQK";
    private static final String SUITS = "cdhs";

    private Cards() {}

    /** Point value: A = 1, 2-10 face value, J Q K = 10. */
    public static int value(int card) {
        int rank = card % 13;
        return rank >= 9 ? 10 : rank + 1;
    }

    /** Parses a wire card such as "As"; throws IllegalArgumentException otherwise. */
    public static int parse(String text) {
        int rank = text != null && text.length() == 2 ? RANKS.indexOf(text.charAt(0)) : -1;
        int suit = rank >= 0 ? SUITS.indexOf(text.charAt(1)) : -1;
        if (suit < 0) {
            throw new IllegalArgumentException("not a card: " + text);
        }
        return suit * 13 + rank;
    }

    public static String format(int card) {
        return "" + RANKS.charAt(card % 13) + SUITS.charAt(card / 13);
    }

    public static long bit(int card) {
        return 1L << card;
    }

    /** The cards of a hand, ascending. */
    public static List<Integer> of(long hand) {
        List<Integer> out = new ArrayList<>();
        for (int c = 0; c < 52; c++) {
            if ((hand & bit(c)) != 0) {
                out.add(c);
            }
        }
        return out;
    }

    public static long handOf(Iterable<String> names) {
        long hand = 0;
        for (String n : names) {
            hand |= bit(parse(n));
        }
        return hand;
    }
}
