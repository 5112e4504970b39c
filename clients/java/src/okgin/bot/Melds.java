package okgin.bot;

import java.util.ArrayList;
import java.util.List;

/**
 * Minimum deadwood and a best meld arrangement (RULES.md section 2).
 *
 * <p>No general search is needed: once the sets of an arrangement are chosen, the best runs
 * are independent per suit and unique within a suit (every maximal block of three or more
 * consecutive ranks is melded whole, since melding a card never raises deadwood). Two
 * tables over the 8192 possible suit rows give a row's value and its best run value; the
 * only search left is over the ranks held in three or more suits (at most three in 11
 * cards, six choices each).
 */
public final class Melds {
    private static final int[] SUIT_VALUE = new int[1 << 13];
    private static final int[] RUN_VALUE = new int[1 << 13];

    static {
        for (int m = 0; m < 1 << 13; m++) {
            int total = 0, runs = 0, len = 0, val = 0;
            for (int r = 0; r <= 13; r++) {
                if (r < 13 && (m >> r & 1) == 1) {
                    int v = Cards.value(r);
                    total += v;
                    len++;
                    val += v;
                } else {
                    if (len >= 3) {
                        runs += val;
                    }
                    len = 0;
                    val = 0;
                }
            }
            SUIT_VALUE[m] = total;
            RUN_VALUE[m] = runs;
        }
    }

    /** A way to lay out a hand. */
    public record Arrangement(List<List<Integer>> melds, long deadwoodCards, int deadwood) {}

    private Melds() {}

    private static int row(long hand, int suit) {
        return (int) (hand >>> (13 * suit)) & 0x1FFF;
    }

    public static int handValue(long hand) {
        return SUIT_VALUE[row(hand, 0)] + SUIT_VALUE[row(hand, 1)] + SUIT_VALUE[row(hand, 2)] + SUIT_VALUE[row(hand, 3)];
    }

    private static int runPoints(long hand) {
        return RUN_VALUE[row(hand, 0)] + RUN_VALUE[row(hand, 1)] + RUN_VALUE[row(hand, 2)] + RUN_VALUE[row(hand, 3)];
    }

    private static int ranksInThreeSuits(long hand) {
        int s0 = row(hand, 0), s1 = row(hand, 1), s2 = row(hand, 2), s3 = row(hand, 3);
        return (s0 & s1 & (s2 | s3)) | (s2 & s3 & (s0 | s1));
    }

    /** Best melded points over the set choices of {@code ranks3}; {@code out[0]} gets the set cards. */
    private static int searchSets(long hand, int ranks3, long inSets, long[] out) {
        if (ranks3 == 0) {
            out[0] = inSets;
            return handValue(inSets) + runPoints(hand & ~inSets);
        }
        int rank = Integer.numberOfTrailingZeros(ranks3);
        int later = ranks3 & (ranks3 - 1);
        long ofRank = 0;
        for (int s = 0; s < 4; s++) {
            ofRank |= hand & Cards.bit(s * 13 + rank);
        }
        List<Long> options = new ArrayList<>(List.of(0L, ofRank));
        if (Long.bitCount(ofRank) == 4) {
            for (int s = 0; s < 4; s++) {
                options.add(ofRank & ~Cards.bit(s * 13 + rank));
            }
        }
        int best = -1;
        long bestSets = 0;
        long[] sub = new long[1];
        for (long set : options) {
            int v = searchSets(hand, later, inSets | set, sub);
            if (v > best) {
                best = v;
                bestSets = sub[0];
            }
        }
        out[0] = bestSets;
        return best;
    }

    /** Least deadwood of any set of cards. */
    public static int deadwood(long hand) {
        int three = ranksInThreeSuits(hand);
        if (three == 0) {
            return handValue(hand) - runPoints(hand);
        }
        return handValue(hand) - searchSets(hand, three, 0, new long[1]);
    }

    /** One arrangement of least deadwood (deterministic). */
    public static Arrangement best(long hand) {
        long[] out = new long[1];
        searchSets(hand, ranksInThreeSuits(hand), 0, out);
        long sets = out[0];
        List<List<Integer>> melds = new ArrayList<>();
        for (int rank = 0; rank < 13; rank++) {
            List<Integer> set = new ArrayList<>();
            for (int s = 0; s < 4; s++) {
                if ((sets & Cards.bit(s * 13 + rank)) != 0) {
                    set.add(s * 13 + rank);
                }
            }
            if (!set.isEmpty()) {
                melds.add(set);
            }
        }
        long rest = hand & ~sets;
        for (int suit = 0; suit < 4; suit++) {
            int r = row(rest, suit);
            int rank = 0;
            while (rank < 13) {
                if ((r >> rank & 1) == 0) {
                    rank++;
                    continue;
                }
                int start = rank;
                while (rank < 13 && (r >> rank & 1) == 1) {
                    rank++;
                }
                if (rank - start >= 3) {
                    List<Integer> run = new ArrayList<>();
                    for (int k = start; k < rank; k++) {
                        run.add(suit * 13 + k);
                    }
                    melds.add(run);
                }
            }
        }
        long melded = 0;
        for (List<Integer> m : melds) {
            for (int c : m) {
                melded |= Cards.bit(c);
            }
        }
        long dead = hand & ~melded;
        return new Arrangement(melds, dead, handValue(dead));
    }
}
