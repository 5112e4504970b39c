#include "client.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include "entropy.h"
#include "wire.h"

#define PROTOCOL_MAJOR 1
#define PROTOCOL_MINOR 2 /* 1.1: hello.events; 1.2: hello_first after welcome = resume */

typedef struct {
    const options_t *opt;
    void *ctx;
    void *sock;
    char token[128];
    bool seated_by_token; /* started with a token: the referee seats (or resumes) us */
    int64_t heartbeat_ms;
    int64_t liveness;
    int64_t last_sent;
    int64_t last_recv;
    int64_t lost_since; /* 0 while the referee answers */
    int games_done;
    int status; /* exit status once done >= 0 */
    bool done;
    entropy_t entropy; /* 1.5: a nonce for a tournament's deals, when seated by a token */
    char curve_public[41]; /* this client's CURVE key pair (Z85), made once when the referee requires CURVE */
    char curve_secret[41];
} client_t;

static volatile sig_atomic_t stop_requested = 0;

static void on_signal(int sig) {
    (void)sig;
    stop_requested = 1;
}

void client_handle_signals(void) {
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

bool client_stop_requested(void) { return stop_requested != 0; }

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void logf_(const client_t *c, bool always, const char *fmt, ...) {
    if (!always && !c->opt->verbose) return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "okgin-bot[c %s] ", c->opt->name);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* Send the packed buffer as one frame. A full send queue drops the message (the referee
 * is unreachable, and the reconnect logic will notice); it never blocks the bot. */
static void send_buffer(client_t *c, const msgpack_sbuffer *sb) {
    if (zmq_send(c->sock, sb->data, sb->size, ZMQ_DONTWAIT) < 0 && errno != EAGAIN)
        logf_(c, true, "send failed: %s", zmq_strerror(errno));
    c->last_sent = now_ms();
}

/* Start a message: the map header and its type. Every writer below follows this with
 * exactly `nfields` more key/value pairs. */
static void begin(msgpack_packer *pk, msgpack_sbuffer *sb, const char *type, size_t nfields) {
    msgpack_sbuffer_init(sb);
    msgpack_packer_init(pk, sb, msgpack_sbuffer_write);
    msgpack_pack_map(pk, 1 + nfields);
    wire_put_str(pk, "type", type);
}

static void send_simple(client_t *c, const char *type) {
    msgpack_sbuffer sb;
    msgpack_packer pk;
    begin(&pk, &sb, type, 0);
    send_buffer(c, &sb);
    msgpack_sbuffer_destroy(&sb);
}

static void send_with_table(client_t *c, const char *type, const char *table) {
    msgpack_sbuffer sb;
    msgpack_packer pk;
    begin(&pk, &sb, type, 1);
    wire_put_str(&pk, "table", table);
    send_buffer(c, &sb);
    msgpack_sbuffer_destroy(&sb);
}

static void send_hello(client_t *c) {
    msgpack_sbuffer sb;
    msgpack_packer pk;
    bool with_token = c->token[0] != '\0';
    bool with_commit = c->seated_by_token && c->entropy.ok;
    begin(&pk, &sb, "hello", 5 + (with_token ? 1 : 0) + (with_commit ? 1 : 0));
    wire_put_int(&pk, "protocol", PROTOCOL_MAJOR);
    wire_put_int(&pk, "minor", PROTOCOL_MINOR);
    wire_put_str(&pk, "role", "player");
    wire_put_str(&pk, "name", c->opt->name);
    /* Every prompt carries the full view: per-move events would only be read and dropped. */
    wire_key(&pk, "events");
    msgpack_pack_false(&pk);
    if (with_token) wire_put_str(&pk, "token", c->token);
    if (with_commit) wire_put_str(&pk, "entropy_commit", c->entropy.commit);
    send_buffer(c, &sb);
    msgpack_sbuffer_destroy(&sb);
}

/* Take a seat once welcomed without a token: a named table, else the quick-match queue. */
static void sit_down(client_t *c) {
    msgpack_sbuffer sb;
    msgpack_packer pk;
    if (c->opt->table) {
        begin(&pk, &sb, "join", 2);
        wire_put_str(&pk, "table", c->opt->table);
    } else {
        begin(&pk, &sb, "queue", 1);
    }
    wire_put_str(&pk, "variant", c->opt->variant);
    send_buffer(c, &sb);
    msgpack_sbuffer_destroy(&sb);
}

/* Make the socket a CURVE client of the referee (protocol.md 13): its public key from the
 * options (an arena's game_ready.server_key), our own pair made once per run (a fresh pair
 * is as good as any: the referee authenticates the seat by its token, not by our key). */
static bool use_curve(client_t *c) {
    const char *server = c->opt->server_key;
    if (strlen(server) != 40) {
        logf_(c, true, "the referee's CURVE key must have 40 Z85 characters, not %zu", strlen(server));
        return false;
    }
    if (c->curve_public[0] == '\0' && zmq_curve_keypair(c->curve_public, c->curve_secret) != 0) {
        logf_(c, true, "cannot make a CURVE key pair (is libzmq built with CURVE?): %s", zmq_strerror(errno));
        return false;
    }
    if (zmq_setsockopt(c->sock, ZMQ_CURVE_SERVERKEY, server, 41) != 0 ||
        zmq_setsockopt(c->sock, ZMQ_CURVE_PUBLICKEY, c->curve_public, 41) != 0 ||
        zmq_setsockopt(c->sock, ZMQ_CURVE_SECRETKEY, c->curve_secret, 41) != 0) {
        logf_(c, true, "cannot use the referee's CURVE key: %s", zmq_strerror(errno));
        return false;
    }
    return true;
}

static void open_socket(client_t *c) {
    if (c->sock) zmq_close(c->sock);
    c->sock = zmq_socket(c->ctx, ZMQ_DEALER);
    int linger = 0;
    zmq_setsockopt(c->sock, ZMQ_LINGER, &linger, sizeof linger);
    if (c->opt->server_key && !use_curve(c)) {
        c->status = 2;
        c->done = true;
        return;
    }
    if (zmq_connect(c->sock, c->opt->endpoint) != 0) {
        logf_(c, true, "cannot connect to %s: %s", c->opt->endpoint, zmq_strerror(errno));
        c->status = 2;
        c->done = true;
        return;
    }
    send_hello(c);
    c->last_recv = now_ms(); /* the silence timer starts with the hello */
}

/* Leave cleanly: `bye` (so the referee frees us at once), flushed for up to a second. */
static void finish(client_t *c, int status) {
    if (c->sock) {
        send_simple(c, "bye");
        int linger = 1000;
        zmq_setsockopt(c->sock, ZMQ_LINGER, &linger, sizeof linger);
    }
    c->status = status;
    c->done = true;
}

/* The bot's situation from a prompt's (or advise_prompt's) view and legal actions. */
static bool read_situation(const msgpack_object *msg, situation_t *s, char *phase, size_t phase_size) {
    const msgpack_object *view = wire_get(msg, "view");
    const msgpack_object *legal = wire_get(msg, "legal");
    if (view == NULL || legal == NULL || legal->type != MSGPACK_OBJECT_ARRAY) return false;
    memset(s, 0, sizeof *s);
    if (!wire_hand(wire_get(view, "hand"), &s->hand)) return false;
    s->phase = wire_strcpy(view, "phase", phase, phase_size);
    s->upcard = wire_card(wire_get(view, "upcard"));
    s->taken_card = wire_card(wire_get(view, "taken_card"));
    s->knock_limit = (int)wire_int(view, "knock_limit", 0);
    s->top_discard = CARD_NONE;
    const msgpack_object *pile = wire_get(view, "discard_pile");
    if (pile && pile->type == MSGPACK_OBJECT_ARRAY && pile->via.array.size > 0)
        s->top_discard = wire_card(&pile->via.array.ptr[pile->via.array.size - 1]);
    for (uint32_t i = 0; i < legal->via.array.size && s->nlegal < MAX_LEGAL; i++)
        if (wire_action(&legal->via.array.ptr[i], &s->legal[s->nlegal])) s->nlegal++;
    return s->nlegal > 0;
}

/* Cards a knock lays out: the hand less the card thrown face down (all 11 for big gin). */
static hand_t kept_cards(const situation_t *s, const action_t *a) {
    return a->card == CARD_NONE ? s->hand : s->hand & ~((hand_t)1 << a->card);
}

static void on_prompt(client_t *c, const msgpack_object *msg, bool advise) {
    char table[80], phase[16];
    wire_strcpy(msg, "table", table, sizeof table);
    int64_t seq = wire_int(msg, "seq", -1);
    situation_t s;
    if (!read_situation(msg, &s, phase, sizeof phase) || seq < 0) {
        logf_(c, true, "ignored a %s without a usable view, legal list or seq", advise ? "advise_prompt" : "prompt");
        return;
    }
    const msgpack_object *err = wire_get(msg, "error");
    if (err != NULL && err->type == MSGPACK_OBJECT_MAP) {
        char name[64], message[256];
        logf_(c, true, "re-prompted after %s: %s", wire_strcpy(err, "name", name, sizeof name),
              wire_strcpy(err, "message", message, sizeof message));
    }
    action_t a = choose(&s);
    msgpack_sbuffer sb;
    msgpack_packer pk;
    begin(&pk, &sb, advise ? "advise" : "act", advise ? 4 : 3);
    wire_put_str(&pk, "table", table);
    wire_put_int(&pk, "seq", seq);
    wire_put_action(&pk, "action", &a, kept_cards(&s, &a));
    if (advise) {
        char text[64], card[3] = "";
        if (a.card != CARD_NONE) card_format(a.card, card);
        snprintf(text, sizeof text, "I would %s %s", act_kind_name(a.kind), card);
        wire_put_str(&pk, "text", text);
    }
    send_buffer(c, &sb);
    msgpack_sbuffer_destroy(&sb);
    char card[3] = "";
    if (a.card != CARD_NONE) card_format(a.card, card);
    logf_(c, false, "%s seq %lld at %s: %s %s", advise ? "advise" : "act", (long long)seq, table, act_kind_name(a.kind), card);
}

static void on_game_end(client_t *c, const msgpack_object *msg) {
    char table[80], termination[32];
    wire_strcpy(msg, "table", table, sizeof table);
    wire_strcpy(msg, "termination", termination, sizeof termination);
    const msgpack_object *final = wire_get(msg, "final");
    const msgpack_object *scores = wire_get(final, "scores");
    char text[128] = "";
    if (scores && scores->type == MSGPACK_OBJECT_ARRAY) {
        size_t used = 0;
        for (uint32_t i = 0; i < scores->via.array.size && used < sizeof text - 16; i++)
            used += (size_t)snprintf(text + used, sizeof text - used, "%s%lld", i ? " " : "",
                                     (long long)scores->via.array.ptr[i].via.i64);
    }
    c->games_done++;
    logf_(c, true, "game %d at %s over (%s), winner %lld, scores %s", c->games_done, table, termination,
          (long long)wire_int(msg, "winner", -1), text);
    if (c->opt->games > 0 && c->games_done >= c->opt->games) {
        finish(c, 0);
    } else if (c->seated_by_token || c->opt->table) {
        send_with_table(c, "rematch", table);
    } else {
        send_with_table(c, "leave", table);
        sit_down(c);
    }
}

static void on_error(client_t *c, const msgpack_object *msg) {
    char name[64], message[256], request[32];
    wire_strcpy(msg, "name", name, sizeof name);
    wire_strcpy(msg, "message", message, sizeof message);
    wire_strcpy(msg, "request", request, sizeof request);
    /* Advice racing the captain's move (or the hand's end) is refused as stale: expected. */
    bool late_advice = strcmp(request, "advise") == 0 && (strcmp(name, "stale_seq") == 0 || strcmp(name, "forbidden") == 0);
    logf_(c, !late_advice, "error %lld %s (to %s): %s", (long long)wire_int(msg, "code", 0), name, request, message);
    /* 1.4: session_taken = another connection resumed our session with the token: stop, never
     * resume (the two would take the seat from each other for ever); bad_identity = do not set a routing id. */
    if (strcmp(name, "version_mismatch") == 0 || strcmp(name, "bad_token") == 0 || strcmp(name, "auth_failed") == 0 ||
        strcmp(name, "session_taken") == 0 || strcmp(name, "bad_identity") == 0) {
        finish(c, 1); /* the session cannot exist (or is another connection's): nothing more to try */
    } else if (strcmp(name, "hello_first") == 0) {
        open_socket(c); /* this connection lost its session: resume it with the token */
    }
}

static void handle(client_t *c, const msgpack_object *msg) {
    size_t len = 0;
    const char *type = wire_str(msg, "type", &len);
    if (type == NULL) return;
#define IS(name) (len == strlen(name) && memcmp(type, name, len) == 0)
    if (IS("prompt")) {
        on_prompt(c, msg, false);
    } else if (IS("entropy_request")) {
        char table[80];
        if (c->entropy.ok && wire_strcpy(msg, "table", table, sizeof table)[0] != '\0') {
            logf_(c, true, "my nonce %s (commitment %s) goes into the deals; keep it: okgin tournament verify DB --nonce NAME=%s",
                  c->entropy.nonce, c->entropy.commit, c->entropy.nonce);
            msgpack_sbuffer sb;
            msgpack_packer pk;
            begin(&pk, &sb, "entropy_reveal", 2);
            wire_put_str(&pk, "table", table);
            wire_put_str(&pk, "nonce", c->entropy.nonce);
            send_buffer(c, &sb);
            msgpack_sbuffer_destroy(&sb);
        }
    } else if (IS("advise_prompt")) {
        on_prompt(c, msg, true);
    } else if (IS("welcome")) {
        bool resumed = wire_bool(msg, "resumed", false);
        wire_strcpy(msg, "token", c->token, sizeof c->token);
        c->heartbeat_ms = wire_int(msg, "heartbeat_ms", c->heartbeat_ms);
        c->liveness = wire_int(msg, "liveness", c->liveness);
        if (c->heartbeat_ms < 10) c->heartbeat_ms = 10;
        if (c->liveness < 1) c->liveness = 1;
        logf_(c, false, "welcome (%s), heartbeat %lld ms", resumed ? "resumed" : "new session", (long long)c->heartbeat_ms);
        if (!resumed && !c->seated_by_token) sit_down(c);
    } else if (IS("game_end")) {
        on_game_end(c, msg);
    } else if (IS("error")) {
        on_error(c, msg);
    } else if (IS("shutdown")) {
        char reason[128];
        logf_(c, true, "referee shutting down: %s", wire_strcpy(msg, "reason", reason, sizeof reason));
        c->status = 0;
        c->done = true;
    } else if (IS("table_closed")) {
        if (c->seated_by_token || c->opt->table) finish(c, 0); /* our only table is gone */
    } else if (IS("hand_end")) {
        char outcome[16];
        logf_(c, false, "hand over: %s", wire_strcpy(wire_get(msg, "result"), "outcome", outcome, sizeof outcome));
    }
    /* heartbeat, seated, queued, game_start, event, advice, snapshot, ok and any type
     * this version does not know: nothing to do (the next prompt carries the full view). */
#undef IS
}

static void receive_all(client_t *c) {
    for (;;) {
        zmq_msg_t frame;
        zmq_msg_init(&frame);
        if (zmq_msg_recv(&frame, c->sock, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close(&frame);
            return;
        }
        c->last_recv = now_ms();
        c->lost_since = 0;
        msgpack_unpacked unpacked;
        msgpack_unpacked_init(&unpacked);
        size_t offset = 0;
        if (msgpack_unpack_next(&unpacked, zmq_msg_data(&frame), zmq_msg_size(&frame), &offset) == MSGPACK_UNPACK_SUCCESS &&
            unpacked.data.type == MSGPACK_OBJECT_MAP) {
            handle(c, &unpacked.data);
        } else {
            logf_(c, true, "ignored a frame that is not a msgpack map (%zu bytes)", zmq_msg_size(&frame));
        }
        msgpack_unpacked_destroy(&unpacked);
        zmq_msg_close(&frame);
        if (c->done) return;
    }
}

int client_run(const options_t *options) {
    client_t c = {0};
    c.opt = options;
    c.heartbeat_ms = 5000; /* until welcome says otherwise */
    c.liveness = 3;
    if (options->token) {
        snprintf(c.token, sizeof c.token, "%s", options->token);
        c.seated_by_token = true;
        entropy_init(&c.entropy);
    }
    client_handle_signals();

    c.ctx = zmq_ctx_new();
    open_socket(&c);
    while (!c.done) {
        if (stop_requested) {
            logf_(&c, true, "stopped by a signal");
            finish(&c, 0);
            break;
        }
        int64_t now = now_ms();
        int64_t silent_limit = c.heartbeat_ms * c.liveness;
        int64_t wait = c.last_sent + c.heartbeat_ms - now;
        if (c.last_recv + silent_limit - now < wait) wait = c.last_recv + silent_limit - now;
        if (wait < 0) wait = 0;
        zmq_pollitem_t item = {c.sock, 0, ZMQ_POLLIN, 0};
        int n = zmq_poll(&item, 1, (long)wait);
        if (n < 0 && errno != EINTR) {
            logf_(&c, true, "poll failed: %s", zmq_strerror(errno));
            c.status = 1;
            break;
        }
        if (n > 0) receive_all(&c);
        if (c.done) break;
        now = now_ms();
        if (now - c.last_sent >= c.heartbeat_ms) send_simple(&c, "heartbeat");
        if (now - c.last_recv >= silent_limit) {
            /* The referee has been silent for `liveness` beats: a new connection, same token. */
            if (c.lost_since == 0) c.lost_since = now;
            if (now - c.lost_since >= options->give_up_ms) {
                logf_(&c, true, "referee silent for %lld ms: giving up", (long long)(now - c.lost_since));
                c.status = 1;
                break;
            }
            logf_(&c, true, "referee silent for %lld ms: reconnecting with the session token", (long long)silent_limit);
            open_socket(&c);
        }
    }
    if (c.sock) zmq_close(c.sock);
    zmq_ctx_term(c.ctx);
    memset(c.curve_secret, 0, sizeof c.curve_secret);
    return c.status;
}
