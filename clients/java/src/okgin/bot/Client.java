package okgin.bot;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.zeromq.ZMQ;

/**
 * The protocol client: handshake, sitting down, answering prompts, heartbeats, and
 * reconnection with the session token (protocol.md sections 4, 5 and 10).
 *
 * <p>One loop owns the socket: it waits for a frame at most until the next heartbeat is
 * due or the referee's silence reaches {@code liveness} beats.
 */
public final class Client {
    static final int PROTOCOL_MAJOR = 1;
    static final int PROTOCOL_MINOR = 2; // 1.1: hello.events; 1.2: hello_first after welcome = resume

    /** Errors after which the session cannot exist: no point in trying again. */
    // 1.4: session_taken = another connection resumed our session with the token: stop, never
    // resume (the two would take the seat from each other for ever); bad_identity = do not set a routing id.
    private static final Set<String> FATAL_ERRORS = Set.of("version_mismatch", "bad_token", "auth_failed", "session_taken", "bad_identity");

    /** How the bot was asked to play. */
    public record Options(String endpoint, String name, String token, String table, String variant, int games,
                          long giveUpMs, boolean verbose) {}

    private final Options opt;
    private final ZMQ.Context ctx = ZMQ.context(1);
    private ZMQ.Socket socket;
    private String token;
    private final boolean seatedByToken;
    private long heartbeatMs = 5000; // until welcome says otherwise
    private long liveness = 3;
    private long lastSent;
    private long lastRecv;
    private long lostSince = -1;
    private int gamesDone;
    private Integer status; // exit status once finished
    volatile boolean stopRequested;
    // 1.5 (protocol.md 5.27): a random nonce for a tournament's deals, committed in hello
    // (SHA-256 of "okgin-entropy-nonce-v1", a zero byte, the 32 bytes), revealed when asked.
    private final byte[] nonce = new byte[32];
    private final String entropyCommit;

    public Client(Options opt) {
        this.opt = opt;
        this.token = opt.token();
        this.seatedByToken = opt.token() != null;
        new SecureRandom().nextBytes(nonce);
        try {
            var sha = MessageDigest.getInstance("SHA-256");
            sha.update("okgin-entropy-nonce-v1\0".getBytes(StandardCharsets.ISO_8859_1));
            entropyCommit = HexFormat.of().formatHex(sha.digest(nonce));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this Java", e);
        }
    }

    private static long now() {
        return System.nanoTime() / 1_000_000;
    }

    private void log(boolean always, String text) {
        if (always || opt.verbose()) {
            System.err.println("okgin-bot[java " + opt.name() + "] " + text);
        }
    }

    /** Sends one frame without blocking; if it cannot be queued the silence check reconnects. */
    private void send(Map<String, Object> message) {
        lastSent = now();
        socket.send(Wire.encode(message), ZMQ.DONTWAIT);
    }

    /** A new DEALER (a new routing id) and a hello, with the token when we have one. */
    private void openSocket() {
        if (socket != null) {
            socket.close();
        }
        socket = ctx.socket(ZMQ.DEALER);
        socket.setLinger(0);
        socket.connect(opt.endpoint());
        // events: false: every prompt carries the full view, per-move events would only be dropped.
        var hello = Wire.message("type", "hello", "protocol", PROTOCOL_MAJOR, "minor", PROTOCOL_MINOR,
                "role", "player", "name", opt.name(), "events", false);
        if (token != null) {
            hello.put("token", token);
        }
        if (seatedByToken) {
            hello.put("entropy_commit", entropyCommit);
        }
        send(hello);
        lastRecv = now(); // the silence timer starts with the hello
    }

    /** Leave cleanly: bye, flushed for up to a second. */
    private void finish(int exitStatus) {
        send(Wire.message("type", "bye"));
        socket.setLinger(1000);
        status = exitStatus;
    }

    private void sitDown() {
        if (opt.table() != null) {
            send(Wire.message("type", "join", "table", opt.table(), "variant", opt.variant()));
        } else {
            send(Wire.message("type", "queue", "variant", opt.variant()));
        }
    }

    /** Plays until done; returns the process exit status. */
    public int run() {
        openSocket();
        try {
            while (status == null) {
                if (stopRequested) {
                    log(true, "stopped by a signal");
                    finish(0);
                    break;
                }
                long silentLimit = heartbeatMs * liveness;
                long wait = Math.max(0, Math.min(lastSent + heartbeatMs, lastRecv + silentLimit) - now());
                socket.setReceiveTimeOut((int) Math.max(1, wait));
                byte[] frame = socket.recv(0);
                while (frame != null && status == null) {
                    lastRecv = now();
                    lostSince = -1;
                    handleFrame(frame);
                    frame = status == null ? socket.recv(ZMQ.DONTWAIT) : null;
                }
                if (status != null) {
                    break;
                }
                long t = now();
                if (t - lastSent >= heartbeatMs) {
                    send(Wire.message("type", "heartbeat"));
                }
                if (t - lastRecv >= silentLimit) {
                    if (lostSince < 0) {
                        lostSince = t;
                    }
                    if (t - lostSince >= opt.giveUpMs()) {
                        log(true, "referee silent for " + (t - lostSince) + " ms: giving up");
                        status = 1;
                        break;
                    }
                    log(true, "referee silent for " + silentLimit + " ms: reconnecting with the session token");
                    openSocket();
                }
            }
        } finally {
            socket.close();
            ctx.term();
        }
        return status;
    }

    private void handleFrame(byte[] frame) {
        Map<String, Object> msg;
        try {
            msg = Wire.decode(frame);
        } catch (Wire.BadFrame e) {
            log(true, "ignored a frame (" + frame.length + " bytes): " + e.getMessage());
            return;
        }
        String type = Wire.str(msg, "type");
        if (type == null) {
            return;
        }
        switch (type) {
            case "welcome" -> {
                token = Wire.str(msg, "token");
                heartbeatMs = Math.max(10, Wire.integer(msg, "heartbeat_ms", heartbeatMs));
                liveness = Math.max(1, Wire.integer(msg, "liveness", liveness));
                boolean resumed = Wire.bool(msg, "resumed");
                log(false, "welcome (" + (resumed ? "resumed" : "new session") + "), heartbeat " + heartbeatMs + " ms");
                if (!resumed && !seatedByToken) {
                    sitDown();
                }
            }
            case "entropy_request" -> {
                String hex = HexFormat.of().formatHex(nonce);
                log(true, "my nonce " + hex + " (commitment " + entropyCommit + ") goes into the deals; keep it: "
                        + "okgin tournament verify DB --nonce NAME=" + hex);
                send(Wire.message("type", "entropy_reveal", "table", Wire.str(msg, "table"), "nonce", hex));
            }
            case "prompt" -> onPrompt(msg, false);
            case "advise_prompt" -> onPrompt(msg, true);
            case "game_end" -> onGameEnd(msg);
            case "error" -> onError(msg);
            case "shutdown" -> {
                log(true, "referee shutting down: " + Wire.str(msg, "reason"));
                status = 0;
            }
            case "table_closed" -> {
                if (seatedByToken || opt.table() != null) {
                    finish(0); // our only table is gone
                }
            }
            case "hand_end" -> log(false, "hand over: " + Wire.str(Wire.map(msg, "result"), "outcome"));
            default -> {
                // heartbeat, seated, queued, game_start, event, advice, snapshot, ok, and
                // types this version does not know: nothing to do (each prompt carries the view).
            }
        }
    }

    private void onPrompt(Map<String, Object> msg, boolean advise) {
        String table = Wire.str(msg, "table");
        long seq = Wire.integer(msg, "seq", -1);
        Map<String, Object> view = Wire.map(msg, "view");
        List<Object> legal = Wire.list(msg, "legal");
        if (table == null || seq < 0 || view == null || Wire.list(view, "hand") == null || legal == null || legal.isEmpty()) {
            log(true, "ignored a " + msg.get("type") + " without a usable view, legal list or seq");
            return;
        }
        Map<String, Object> error = Wire.map(msg, "error");
        if (error != null) {
            log(true, "re-prompted after " + Wire.str(error, "name") + ": " + Wire.str(error, "message"));
        }
        Map<String, Object> action;
        try {
            action = Strategy.choose(view, legal);
        } catch (IllegalArgumentException | ClassCastException e) {
            log(true, "ignored a " + msg.get("type") + " with a malformed view: " + e.getMessage());
            return;
        }
        String described = action.get("kind") + (action.containsKey("card") ? " " + action.get("card") : "");
        if (advise) {
            send(Wire.message("type", "advise", "table", table, "seq", seq, "action", action, "text", "I would " + described));
        } else {
            send(Wire.message("type", "act", "table", table, "seq", seq, "action", action));
        }
        log(false, (advise ? "advise" : "act") + " seq " + seq + " at " + table + ": " + described);
    }

    private void onGameEnd(Map<String, Object> msg) {
        gamesDone++;
        String table = Wire.str(msg, "table");
        log(true, "game " + gamesDone + " at " + table + " over (" + Wire.str(msg, "termination") + "), winner "
                + msg.get("winner") + ", scores " + Wire.list(Wire.map(msg, "final"), "scores"));
        if (opt.games() > 0 && gamesDone >= opt.games()) {
            finish(0);
        } else if (seatedByToken || opt.table() != null) {
            send(Wire.message("type", "rematch", "table", table));
        } else {
            send(Wire.message("type", "leave", "table", table));
            sitDown();
        }
    }

    private void onError(Map<String, Object> msg) {
        String name = String.valueOf(Wire.str(msg, "name"));
        // Advice racing the captain's move (or the hand's end) is refused as stale: expected.
        boolean lateAdvice = "advise".equals(Wire.str(msg, "request")) && (name.equals("stale_seq") || name.equals("forbidden"));
        log(!lateAdvice, "error " + msg.get("code") + " " + name + " (to " + Wire.str(msg, "request") + "): " + Wire.str(msg, "message"));
        if (FATAL_ERRORS.contains(name)) {
            finish(1);
        } else if (name.equals("hello_first")) {
            openSocket(); // this connection lost its session: resume it with the token
        }
    }
}
