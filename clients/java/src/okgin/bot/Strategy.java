package okgin.bot;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The bot's play: the "simple player" of gin rummy AI competitions, both variants.
 *
 * <p>A pure function of what a prompt carries (the view and the legal actions), so the
 * same code picks a move and, as the box game's sitter, the advice for the captain:
 * take the upcard or the top discard only if it joins a meld, else pass / draw from the
 * stock; discard, among the cards leaving the least deadwood, the highest-valued (never
 * the card just taken); knock as soon as the rules allow.
 */
public final class Strategy {
    private Strategy() {}

    /** Would {@code card} make a set or a run with cards already in {@code hand}? */
    public static boolean joinsMeld(long hand, int card) {
        int rank = card % 13, suit = card / 13, sameRank = 0;
        for (int s = 0; s < 4; s++) {
            if (s != suit && (hand & Cards.bit(s * 13 + rank)) != 0) {
                sameRank++;
            }
        }
        if (sameRank >= 2) {
            return true;
        }
        int row = (int) (hand >>> (suit * 13)) & 0x1FFF;
        return (has(row, rank - 1) && (has(row, rank - 2) || has(row, rank + 1))) || (has(row, rank + 1) && has(row, rank + 2));
    }

    private static boolean has(int row, int rank) {
        return rank >= 0 && rank < 13 && (row >> rank & 1) == 1;
    }

    /** Discard preference among equals: highest value, then rank, then suit. */
    private static boolean prefer(int a, int b) {
        if (b < 0) {
            return true;
        }
        if (Cards.value(a) != Cards.value(b)) {
            return Cards.value(a) > Cards.value(b);
        }
        return a % 13 != b % 13 ? a % 13 > b % 13 : a > b;
    }

    /** The best card to throw (never {@code barred}, -1 for none) and the deadwood it leaves. */
    record Discard(int card, int deadwood) {}

    static Discard bestDiscard(long hand, int barred) {
        int base = Melds.deadwood(hand);
        int best = -1, bestDw = Integer.MAX_VALUE;
        for (int c : Cards.of(hand)) {
            if (c == barred || base - Cards.value(c) > bestDw) {
                continue;
            }
            int d = Melds.deadwood(hand & ~Cards.bit(c));
            if (d < bestDw || (d == bestDw && prefer(c, best))) {
                best = c;
                bestDw = d;
            }
        }
        return new Discard(best, bestDw);
    }

    private static boolean isLegal(List<Object> legal, String kind, String card) {
        for (Object o : legal) {
            @SuppressWarnings("unchecked")
            Map<String, Object> a = (Map<String, Object>) o;
            if (kind.equals(a.get("kind")) && (card == null || card.equals(a.get("card")))) {
                return true;
            }
        }
        return false;
    }

    /** {@code wanted} if legal, else the first legal action (so the game always goes on). */
    @SuppressWarnings("unchecked")
    private static Map<String, Object> orFirstLegal(List<Object> legal, Map<String, Object> wanted) {
        return isLegal(legal, (String) wanted.get("kind"), Wire.str(wanted, "card")) ? wanted : (Map<String, Object>) legal.get(0);
    }

    private static List<List<String>> meldsOf(long hand) {
        List<List<String>> out = new ArrayList<>();
        for (List<Integer> meld : Melds.best(hand).melds()) {
            out.add(meld.stream().map(Cards::format).toList());
        }
        return out;
    }

    /** The move for a prompt's view and legal actions (wire form in, wire form out). */
    public static Map<String, Object> choose(Map<String, Object> view, List<Object> legal) {
        List<Object> handList = Wire.list(view, "hand");
        long hand = 0;
        for (Object c : handList) {
            hand |= Cards.bit(Cards.parse((String) c));
        }
        String phase = Wire.str(view, "phase");
        if ("offer".equals(phase)) {
            boolean take = joinsMeld(hand, Cards.parse(Wire.str(view, "upcard")));
            return orFirstLegal(legal, Wire.message("kind", take ? "take" : "pass"));
        }
        if ("draw".equals(phase)) {
            List<Object> pile = Wire.list(view, "discard_pile");
            if (pile != null && !pile.isEmpty() && isLegal(legal, "draw_discard", null)
                    && joinsMeld(hand, Cards.parse((String) pile.get(pile.size() - 1)))) {
                return Wire.message("kind", "draw_discard");
            }
            return orFirstLegal(legal, Wire.message("kind", "draw_stock"));
        }
        // Discard phase: big gin if offered, else knock as soon as allowed, else discard.
        if (isLegal(legal, "big_gin", null)) {
            return Wire.message("kind", "big_gin", "melds", meldsOf(hand));
        }
        String taken = Wire.str(view, "taken_card");
        Discard best = bestDiscard(hand, taken == null ? -1 : Cards.parse(taken));
        String card = Cards.format(best.card());
        if (best.deadwood() <= Wire.integer(view, "knock_limit", 0) && isLegal(legal, "knock", card)) {
            var knock = Wire.message("kind", "knock", "card", card);
            // Gin: every arrangement scores alike, so declare ours. Otherwise the referee's
            // default leaves the defender the fewest layoffs, which is better than ours.
            if (best.deadwood() == 0) {
                knock.put("melds", meldsOf(hand & ~Cards.bit(best.card())));
            }
            return knock;
        }
        return orFirstLegal(legal, Wire.message("kind", "discard", "card", card));
    }
}
