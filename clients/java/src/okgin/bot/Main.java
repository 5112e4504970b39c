package okgin.bot;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/** okgin-bot (Java): entry point. The protocol client is being written against protocol.md. */
public final class Main {
    private Main() {}

    public static void main(String[] args) throws IOException {
        if (args.length == 1 && args[0].equals("--eval")) {
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            StringBuilder out = new StringBuilder();
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                long hand = line.isBlank() ? 0 : Cards.handOf(Arrays.asList(line.trim().split("\\s+")));
                out.append(Melds.deadwood(hand)).append(' ').append(Melds.best(hand).deadwood()).append('\n');
            }
            System.out.print(out);
            return;
        }
        System.err.println("usage: okgin-bot --eval");
        System.exit(2);
    }
}
