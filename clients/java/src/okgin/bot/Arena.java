package okgin.bot;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Map;
import java.util.Set;
import java.util.function.BooleanSupplier;
import org.zeromq.ZMQ;

/**
 * The arena (protocol.md 19, protocol 1.6): sign in once with an account and its key, then
 * for each game seek, read the {@code game_ready} that says where to play it, play it exactly
 * as a reserved seat (a {@link Client} with game_ready's endpoint and token), and read the
 * arena's {@code game_over} (the result and the rating). The arena session stays open the
 * whole time: a thread of its own owns its socket and keeps its heartbeats going while the
 * game is played.
 *
 * <p>A shard that requires CURVE ({@code game_ready.server_key}) is refused with a sentence:
 * JeroMQ 0.3.6, the version Debian packages (libjeromq-java), has no CURVE.
 */
final class Arena {
    static final int ARENA_MINOR = 6; // hello.account and hello.key are protocol 1.6
    static final long WELCOME_WAIT_MS = 30_000; // an arena that says nothing this long after hello is unreachable
    static final long BUSY_PATIENCE_MS = 10_000; // how long `busy` is retried after a game (the arena files it first)
    static final long BUSY_RETRY_MS = 250;
    static final long TICK_MS = 100; // how often a waiting thread looks at a signal or an ask

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

    /** The arena's game_over of a game; {@code rated} false: no rating change (unrated or void). */
    record Over(String game, String result, String termination, boolean rated, long before, long after, long deviation,
            boolean provisional) {
        String line(String name) {
            String rating = rated ? "rating " + before + " -> " + after + " (deviation " + deviation
                    + (provisional ? ", provisional" : "") + ")" : "not rated";
            return "okgin-bot[java " + name + "] arena game " + game + ": " + result + " (" + termination + "), " + rating;
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

    /**
     * One arena session (see the class comment). Its thread is the only one that touches the
     * socket; the rest is shared under the session's monitor.
     */
    static final class Session implements Runnable {
        private final Options o;
        private final BooleanSupplier stopped;
        private final Thread thread;
        private boolean welcomed;
        private ArenaException failure;
        private boolean closing;
        private boolean wantSeek;
        private boolean seeking;
        private long busyUntil;
        private long seekAgainAt;
        private Game ready;
        private final Deque<Over> overs = new ArrayDeque<>();

        private Session(Options o, BooleanSupplier stopped) {
            this.o = o;
            this.stopped = stopped;
            this.thread = new Thread(this, "arena");
            this.thread.setDaemon(true);
        }

        /** Sign in and wait for the welcome. */
        static Session open(Options o, BooleanSupplier stopped) throws ArenaException {
            Session s = new Session(o, stopped);
            s.thread.start();
            synchronized (s) {
                s.waitFor(() -> s.welcomed, 0);
            }
            return s;
        }

        /** Seek one game and wait for its game_ready. */
        synchronized Game nextGame() throws ArenaException {
            ready = null;
            wantSeek = true;
            busyUntil = now() + BUSY_PATIENCE_MS;
            waitFor(() -> ready != null, 0);
            Game g = ready;
            ready = null;
            return g;
        }

        /** The arena's game_over of {@code game} within {@code waitMs}, or null. */
        synchronized Over gameOver(String game, long waitMs) throws ArenaException {
            try {
                waitFor(() -> find(game) != null, now() + waitMs);
            } catch (ArenaException e) {
                if (e.status != -1) {
                    throw e;
                }
            }
            return find(game);
        }

        /** Say bye and stop the session's thread. */
        void close() {
            synchronized (this) {
                closing = true;
                notifyAll();
            }
            try {
                thread.join(5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        private Over find(String game) {
            for (Over v : overs) {
                if (v.game().equals(game)) {
                    return v;
                }
            }
            return null;
        }

        /** With the monitor held: until {@code done}, a failure, a stop (status 0) or the deadline (status -1). */
        private void waitFor(BooleanSupplier done, long deadline) throws ArenaException {
            while (true) {
                if (done.getAsBoolean()) {
                    return;
                }
                if (failure != null) {
                    throw failure;
                }
                if (stopped.getAsBoolean()) {
                    throw new ArenaException("stopped by a signal", 0);
                }
                if (deadline != 0 && now() >= deadline) {
                    throw new ArenaException("deadline", -1);
                }
                try {
                    wait(TICK_MS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new ArenaException("interrupted", 0);
                }
            }
        }

        private synchronized void fail(ArenaException e) {
            if (failure == null) {
                failure = e;
            }
            notifyAll();
        }

        private void send(ZMQ.Socket socket, Object... fields) {
            socket.send(Wire.encode(Wire.message(fields)), ZMQ.DONTWAIT); // a full queue: the silence check says so
        }

        private void seek(ZMQ.Socket socket) {
            if (o.verbose()) {
                System.err.println("okgin-bot[java " + o.name() + "] seeking " + o.variant());
            }
            send(socket, "type", "seek", "variant", o.variant());
        }

        @Override
        public void run() {
            ZMQ.Context ctx = ZMQ.context(1);
            ZMQ.Socket socket = ctx.socket(ZMQ.DEALER);
            socket.setLinger(0);
            try {
                socket.connect(o.endpoint());
                send(socket, "type", "hello", "protocol", Client.PROTOCOL_MAJOR, "minor", ARENA_MINOR, "role", "player",
                        "name", o.account(), "account", o.account(), "key", o.key());
                long heartbeatMs = 5000, liveness = 3;
                long start = now(), lastSent = start, lastRecv = start;
                while (true) {
                    long t = now();
                    boolean seekNow;
                    synchronized (this) {
                        if (closing || failure != null) {
                            break;
                        }
                        if (!welcomed && t - start >= WELCOME_WAIT_MS) {
                            throw new ArenaException("no arena answered at " + o.endpoint() + " within "
                                    + WELCOME_WAIT_MS / 1000 + " s (is it running, and is this its endpoint?)", 1);
                        }
                        if (welcomed && t - lastRecv >= heartbeatMs * liveness) {
                            throw new ArenaException("the arena at " + o.endpoint() + " went silent", 1);
                        }
                        seekNow = welcomed && (wantSeek || (seekAgainAt != 0 && t >= seekAgainAt));
                        if (seekNow) {
                            wantSeek = false;
                            seekAgainAt = 0;
                            seeking = true;
                        }
                    }
                    if (seekNow) {
                        seek(socket);
                        lastSent = t;
                    }
                    if (welcomed && t - lastSent >= heartbeatMs) {
                        send(socket, "type", "heartbeat");
                        lastSent = t;
                    }
                    long wait = welcomed ? Math.max(1, lastSent + heartbeatMs - t) : TICK_MS;
                    socket.setReceiveTimeOut((int) Math.min(TICK_MS, wait));
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
                    synchronized (this) {
                        if ("welcome".equals(type)) {
                            welcomed = true;
                            heartbeatMs = Math.max(10, Wire.integer(msg, "heartbeat_ms", heartbeatMs));
                            liveness = Math.max(1, Wire.integer(msg, "liveness", liveness));
                            if (o.verbose()) {
                                System.err.println("okgin-bot[java " + o.name() + "] signed in to the arena as " + o.account());
                            }
                        } else if ("game_ready".equals(type)) {
                            if (Wire.str(msg, "server_key") != null) {
                                throw new ArenaException("the arena's shard requires CURVE, which JeroMQ 0.3.6 (the version "
                                        + "Debian packages) does not speak: play this bot at an arena whose shards are plain "
                                        + "TCP on loopback, or use the C, JavaScript or Rust example bot", 1);
                            }
                            String endpoint = Wire.str(msg, "endpoint"), token = Wire.str(msg, "token");
                            if (endpoint == null || endpoint.isEmpty() || token == null || token.isEmpty()) {
                                throw new ArenaException("a game_ready without an endpoint or a token", 1);
                            }
                            ready = new Game(Wire.str(msg, "game"), endpoint, token);
                            seeking = false;
                            seekAgainAt = 0;
                            if (o.verbose()) {
                                System.err.println("okgin-bot[java " + o.name() + "] arena " + ready);
                            }
                        } else if ("game_over".equals(type)) {
                            Object r = msg.get("rating");
                            @SuppressWarnings("unchecked")
                            Map<String, Object> rating = r instanceof Map ? (Map<String, Object>) r : null;
                            overs.addLast(new Over(Wire.str(msg, "game"), Wire.str(msg, "result"), Wire.str(msg, "termination"),
                                    rating != null, rating != null ? Wire.integer(rating, "before", 0) : 0,
                                    rating != null ? Wire.integer(rating, "after", 0) : 0,
                                    rating != null ? Wire.integer(rating, "deviation", 0) : 0,
                                    rating != null && Boolean.TRUE.equals(rating.get("provisional"))));
                            if (overs.size() > 4) {
                                overs.removeFirst();
                            }
                        } else if ("error".equals(type)) {
                            if ("busy".equals(Wire.str(msg, "name")) && seeking && now() < busyUntil) {
                                seekAgainAt = now() + BUSY_RETRY_MS; // the arena is still filing our last game
                            } else {
                                long retry = Wire.integer(msg, "retry_ms", -1);
                                throw new ArenaException("the arena refused: " + Wire.str(msg, "name") + ": "
                                        + Wire.str(msg, "message")
                                        + (retry >= 0 ? " (try again in " + (retry + 999) / 1000 + " s)" : ""), 1);
                            }
                        } else if ("shutdown".equals(type)) {
                            throw new ArenaException("the arena is shutting down: " + Wire.str(msg, "reason"), 1);
                        }
                        // heartbeat, sought, ok, challenge_offer (not answered: it expires), challenge_closed
                        notifyAll();
                    }
                }
            } catch (ArenaException e) {
                fail(e);
            } catch (RuntimeException e) {
                fail(new ArenaException("the arena session failed: " + e, 1));
            } finally {
                send(socket, "type", "bye");
                socket.setLinger(500); // let the bye go out
                socket.close();
                ctx.term();
                synchronized (this) {
                    if (failure == null) {
                        failure = new ArenaException("the arena session is closed", 1);
                    }
                    notifyAll();
                }
            }
        }
    }
}
