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
              --eval              print the least deadwood of each hand read from stdin

            At an arena (protocol 1.6): set OKGIN_ARENA (its endpoint), OKGIN_ACCOUNT and
            OKGIN_KEY_FILE (the account's key, mode 0600). The bot then seeks --games games of
            --variant and plays each where the arena says.""";

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
        String arena = System.getenv("OKGIN_ARENA");
        if ((endpoint == null || endpoint.isEmpty()) && (arena == null || arena.isEmpty())) {
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
        if (arena != null && !arena.isEmpty()) {
            return playAtArena(arena, name, variant, games, giveUpMs, verbose);
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

    private static volatile boolean stopRequested;
    private static volatile Client current;

    /**
     * OKGIN_ARENA set: sign in once; for each game seek, play the game the arena names at its
     * shard exactly as a reserved seat (the token replaces --token, the shard --connect), then
     * read the arena's game_over.
     */
    private static int playAtArena(String arena, String name, String variant, int games, long giveUpMs, boolean verbose) {
        String account = System.getenv("OKGIN_ACCOUNT");
        if (account == null || account.isEmpty() || account.length() > 40) {
            return usageError("OKGIN_ARENA needs OKGIN_ACCOUNT (the account's name, 1 to 40 characters)");
        }
        Thread main = Thread.currentThread();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            // SIGINT / SIGTERM: let the loop say bye and close, for at most two seconds.
            stopRequested = true;
            Client c = current;
            if (c != null) {
                c.stopRequested = true;
            }
            try {
                main.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }));
        Arena.Session session = null;
        try {
            Arena.Options o = new Arena.Options(arena, account, Arena.readKey(System.getenv("OKGIN_KEY_FILE")), variant, name,
                    verbose);
            session = Arena.Session.open(o, () -> stopRequested);
            for (int played = 0; games == 0 || played < games; played++) {
                Arena.Game game = session.nextGame();
                Client client = new Client(new Client.Options(game.endpoint(), name, game.token(), null, variant, 1, giveUpMs,
                        verbose));
                current = client;
                client.stopRequested = stopRequested;
                int status = client.run();
                current = null;
                if (status != 0 || stopRequested) {
                    return status;
                }
                Arena.Over over = session.gameOver(game.game(), 30_000);
                System.err.println(over != null ? over.line(name)
                        : "okgin-bot[java " + name + "] arena game " + game.game() + ": no game_over from the arena");
            }
            return 0;
        } catch (Arena.ArenaException e) {
            if (e.status != 0) {
                System.err.println("okgin-bot: " + e.getMessage());
            }
            return e.status;
        } finally {
            if (session != null) {
                session.close();
            }
        }
    }

    public static void main(String[] args) throws IOException {
        int status = run(args);
        System.out.flush();
        Runtime.getRuntime().halt(status); // exit now: the shutdown hook is for signals only
    }
}
