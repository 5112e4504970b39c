package okgin.bot;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * okgin-bot (Java): an example bot for the okgin referee. It plays Oklahoma Gin and Gin
 * in the Box in every role with the "simple player" strategy; see ../README.md.
 */
public final class Main {
    private static final String USAGE = """
            usage: okgin-bot --connect ENDPOINT [--token TOKEN | --table NAME | --variant oklahoma|box]
                             [--name NAME] [--games N] [--give-up-ms MS] [--verbose]
                   okgin-bot --eval

              --connect ENDPOINT  the referee, e.g. tcp://127.0.0.1:7117 (or $OKGIN_ENDPOINT)
              --token TOKEN       a reserved seat's token from the organiser (or $OKGIN_TOKEN)
              --table NAME        join (or create) this named table
              --variant V         otherwise: quick-match queue of this variant (default oklahoma)
              --name NAME         display name (default java-bot)
              --games N           games to play, then leave (default 1; 0 = until the referee stops)
              --give-up-ms MS     stop reconnecting to a silent referee after this long (default 60000)
              --verbose           log every move to stderr
              --eval              print the least deadwood of each hand read from stdin""";

    private Main() {}

    private static int usageError(String what) {
        System.err.println("okgin-bot: " + what + "\n\n" + USAGE);
        return 2;
    }

    /** Prints the least deadwood of each hand on stdin, then the found arrangement's deadwood. */
    private static int evalHands() throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder out = new StringBuilder();
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            if (line.isBlank()) {
                continue;
            }
            long hand = Cards.handOf(Arrays.asList(line.trim().split("\\s+")));
            out.append(Melds.deadwood(hand)).append(' ').append(Melds.best(hand).deadwood()).append('\n');
        }
        System.out.print(out);
        return 0;
    }

    private static int run(String[] args) throws IOException {
        String endpoint = System.getenv("OKGIN_ENDPOINT");
        String token = System.getenv("OKGIN_TOKEN");
        if (token != null && token.isEmpty()) {
            token = null;
        }
        String table = null, variant = "oklahoma", name = "java-bot";
        int games = 1;
        long giveUpMs = 60_000;
        boolean verbose = false;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            switch (arg) {
                case "--eval":
                    return evalHands();
                case "-h", "--help":
                    System.out.println(USAGE);
                    return 0;
                case "--verbose":
                    verbose = true;
                    continue;
                default:
                    break;
            }
            if (i + 1 >= args.length) {
                return usageError("missing value or unknown option " + arg);
            }
            String value = args[++i];
            try {
                switch (arg) {
                    case "--connect" -> endpoint = value;
                    case "--token" -> token = value;
                    case "--table" -> table = value;
                    case "--variant" -> variant = value;
                    case "--name" -> name = value;
                    case "--games" -> games = Integer.parseInt(value);
                    case "--give-up-ms" -> giveUpMs = Long.parseLong(value);
                    default -> {
                        return usageError("unknown option " + arg);
                    }
                }
            } catch (NumberFormatException e) {
                return usageError(arg + " needs a number");
            }
        }
        if (endpoint == null || endpoint.isEmpty()) {
            return usageError("--connect ENDPOINT is required");
        }
        if (!variant.equals("oklahoma") && !variant.equals("box")) {
            return usageError("--variant must be oklahoma or box");
        }
        if (games < 0 || giveUpMs <= 0) {
            return usageError("--games must be >= 0 and --give-up-ms > 0");
        }
        if (name.isEmpty() || name.length() > 40) {
            return usageError("--name must have 1 to 40 characters");
        }
        Client client = new Client(new Client.Options(endpoint, name, token, table, variant, games, giveUpMs, verbose));
        Thread main = Thread.currentThread();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            // SIGINT / SIGTERM: let the loop say bye and close, for at most two seconds.
            client.stopRequested = true;
            try {
                main.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }));
        return client.run();
    }

    public static void main(String[] args) throws IOException {
        int status = run(args);
        System.out.flush();
        Runtime.getRuntime().halt(status); // exit now: the shutdown hook is for signals only
    }
}
