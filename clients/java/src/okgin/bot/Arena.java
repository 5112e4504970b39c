package okgin.bot;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.function.BooleanSupplier;
import org.zeromq.ZMQ;

/**
 * The arena (protocol.md 19, protocol 1.6): sign in with an account and its key, seek one
 * game, and read the {@code game_ready} that says where to play it. The game itself is
 * then played exactly as a reserved seat: a {@link Client} with game_ready's endpoint and token.
 */
final class Arena {
    static final int ARENA_MINOR = 6; // hello.account and hello.key are protocol 1.6
    static final long WELCOME_WAIT_MS = 30_000; // an arena that says nothing this long after hello is unreachable

    /** A one-line reason the bot cannot go on, with its exit status. */
    static final class ArenaException extends Exception {
        private static final long serialVersionUID = 1L;
        final int status;

        ArenaException(String message, int status) {
            super(message);
            this.status = status;
        }
    }

    /** Where to play one game. The token is a secret: never printed. */
    record Game(String game, String endpoint, String token) {
        @Override
        public String toString() {
            return "Game[" + game + " at " + endpoint + "]";
        }
    }

    record Options(String endpoint, String account, String key, String variant, String name, boolean verbose) {
        @Override
        public String toString() {
            return "Arena.Options[" + endpoint + ", " + account + "]"; // never the key
        }
    }

    private Arena() {}

    /** The key on the first line of {@code path}, a file its owner alone may read (mode 0600). */
    static String readKey(String path) throws ArenaException {
        if (path == null || path.isEmpty()) {
            throw new ArenaException("OKGIN_ARENA needs OKGIN_KEY_FILE (a file holding the account's key, mode 0600)", 2);
        }
        Path p = Path.of(path);
        try {
            Set<PosixFilePermission> others = EnumSet.of(PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_WRITE,
                    PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.OTHERS_READ, PosixFilePermission.OTHERS_WRITE,
                    PosixFilePermission.OTHERS_EXECUTE);
            Set<PosixFilePermission> perms = Files.getPosixFilePermissions(p);
            perms.retainAll(others);
            if (!perms.isEmpty()) {
                throw new ArenaException("the key file " + path + " is readable by others: chmod 600 " + path, 2);
            }
            String text = Files.readString(p, StandardCharsets.UTF_8);
            String key = text.lines().findFirst().orElse("").trim();
            if (key.isEmpty()) {
                throw new ArenaException("the key file " + path + " is empty", 2);
            }
            return key;
        } catch (IOException e) {
            throw new ArenaException("cannot read the key file " + path + ": " + e.getMessage(), 2);
        }
    }

    private static long now() {
        return System.nanoTime() / 1_000_000;
    }

    /** Sign in, seek, wait for game_ready (heartbeats meanwhile), say bye. */
    static Game findGame(Options o, BooleanSupplier stopped) throws ArenaException {
        ZMQ.Context ctx = ZMQ.context(1);
        ZMQ.Socket socket = ctx.socket(ZMQ.DEALER);
        socket.setLinger(0);
        try {
            socket.connect(o.endpoint());
            socket.send(Wire.encode(Wire.message("type", "hello", "protocol", Client.PROTOCOL_MAJOR, "minor", ARENA_MINOR,
                    "role", "player", "name", o.account(), "account", o.account(), "key", o.key())), ZMQ.DONTWAIT);
            boolean welcomed = false;
            long heartbeatMs = 5000, liveness = 3;
            long start = now(), lastSent = start, lastRecv = start;
            while (true) {
                if (stopped.getAsBoolean()) {
                    socket.send(Wire.encode(Wire.message("type", "bye")), ZMQ.DONTWAIT);
                    throw new ArenaException("stopped by a signal", 0);
                }
                long t = now();
                if (!welcomed && t - start >= WELCOME_WAIT_MS) {
                    throw new ArenaException("no arena answered at " + o.endpoint() + " within " + WELCOME_WAIT_MS / 1000
                            + " s (is it running, and is this its endpoint?)", 1);
                }
                if (welcomed && t - lastRecv >= heartbeatMs * liveness) {
                    throw new ArenaException("the arena at " + o.endpoint() + " went silent", 1);
                }
                if (welcomed && t - lastSent >= heartbeatMs) {
                    socket.send(Wire.encode(Wire.message("type", "heartbeat")), ZMQ.DONTWAIT);
                    lastSent = t;
                }
                long wait = welcomed ? Math.max(1, lastSent + heartbeatMs - t) : 200;
                socket.setReceiveTimeOut((int) Math.min(200, wait));
                byte[] frame = socket.recv(0);
                if (frame == null) {
                    continue;
                }
                lastRecv = now();
                Map<String, Object> msg;
                try {
                    msg = Wire.decode(frame);
                } catch (Wire.BadFrame e) {
                    continue;
                }
                String type = Wire.str(msg, "type");
                if ("welcome".equals(type)) {
                    welcomed = true;
                    heartbeatMs = Math.max(10, Wire.integer(msg, "heartbeat_ms", heartbeatMs));
                    liveness = Math.max(1, Wire.integer(msg, "liveness", liveness));
                    if (o.verbose()) {
                        System.err.println("okgin-bot[java " + o.name() + "] signed in to the arena as " + o.account()
                                + "; seeking " + o.variant());
                    }
                    socket.send(Wire.encode(Wire.message("type", "seek", "variant", o.variant())), ZMQ.DONTWAIT);
                    lastSent = now();
                } else if ("game_ready".equals(type)) {
                    if (Wire.str(msg, "server_key") != null) {
                        throw new ArenaException("the arena's shard requires CURVE, which this example bot does not speak", 1);
                    }
                    String endpoint = Wire.str(msg, "endpoint"), token = Wire.str(msg, "token");
                    if (endpoint == null || endpoint.isEmpty() || token == null || token.isEmpty()) {
                        throw new ArenaException("a game_ready without an endpoint or a token", 1);
                    }
                    Game game = new Game(Wire.str(msg, "game"), endpoint, token);
                    if (o.verbose()) {
                        System.err.println("okgin-bot[java " + o.name() + "] arena " + game);
                    }
                    // Leave the arena: the game is at the shard now (protocol.md 19: it is unaffected).
                    socket.send(Wire.encode(Wire.message("type", "bye")), ZMQ.DONTWAIT);
                    socket.setLinger(500);
                    return game;
                } else if ("error".equals(type)) {
                    long retry = Wire.integer(msg, "retry_ms", -1);
                    throw new ArenaException("the arena refused: " + Wire.str(msg, "name") + ": " + Wire.str(msg, "message")
                            + (retry >= 0 ? " (try again in " + (retry + 999) / 1000 + " s)" : ""), 1);
                }
                // heartbeat, sought, challenge_offer (not answered: it expires), game_over of an earlier game
            }
        } finally {
            socket.close();
            ctx.term();
        }
    }
}
