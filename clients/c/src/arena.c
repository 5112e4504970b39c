#include "arena.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <zmq.h>

#include "client.h"
#include "wire.h"

#define ARENA_MINOR 6      /* hello.account and hello.key are protocol 1.6 */
#define WELCOME_WAIT_MS 30000 /* an arena that says nothing this long after hello is unreachable */
#define BUSY_PATIENCE_MS 10000 /* how long `busy` is retried after a game (the arena files it first) */
#define BUSY_RETRY_MS 250
#define OVERS 4 /* game_over messages kept until asked for (one game at a time: a few is plenty) */

/* The session: its thread owns the socket; the rest is shared under `mu`. */
struct arena_session {
    arena_options_t o;
    void *ctx;
    void *sock;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool welcomed;
    int failed;            /* the session is over with this exit status (0: it goes on) */
    bool closing;          /* arena_close asked the thread to say bye */
    bool want_seek;        /* arena_next_game asked for a seek */
    bool seeking;          /* a seek is open and no game_ready came yet */
    int64_t busy_until;    /* `busy` answers to the seek are retried until then */
    int64_t seek_again_at; /* 0, or when to send the seek again after `busy` */
    bool has_ready;
    arena_game_t ready;
    arena_over_t overs[OVERS];
    int next_over;
    int64_t heartbeat_ms, liveness;
};

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int arena_read_key(const char *path, char *key, size_t size) {
    struct stat st;
    if (path == NULL || *path == '\0') {
        fprintf(stderr, "okgin-bot: OKGIN_ARENA needs OKGIN_KEY_FILE (a file holding the account's key, mode 0600)\n");
        return 2;
    }
    if (stat(path, &st) != 0) {
        fprintf(stderr, "okgin-bot: cannot read the key file %s: %s\n", path, strerror(errno));
        return 2;
    }
    if (st.st_mode & (S_IRWXG | S_IRWXO)) {
        fprintf(stderr, "okgin-bot: the key file %s is readable by others (mode %o): chmod 600 %s\n", path,
                (unsigned)(st.st_mode & 07777), path);
        return 2;
    }
    FILE *f = fopen(path, "r");
    if (f == NULL || fgets(key, (int)size, f) == NULL) {
        if (f) fclose(f);
        fprintf(stderr, "okgin-bot: the key file %s is empty or unreadable\n", path);
        return 2;
    }
    fclose(f);
    key[strcspn(key, "\r\n")] = '\0';
    if (*key == '\0') {
        fprintf(stderr, "okgin-bot: the key file %s is empty\n", path);
        return 2;
    }
    return 0;
}

static void send_map(void *sock, msgpack_sbuffer *sb) {
    zmq_send(sock, sb->data, sb->size, ZMQ_DONTWAIT); /* a full queue: the arena is unreachable, the wait says so */
    msgpack_sbuffer_destroy(sb);
}

static void begin(msgpack_packer *pk, msgpack_sbuffer *sb, const char *type, size_t nfields) {
    msgpack_sbuffer_init(sb);
    msgpack_packer_init(pk, sb, msgpack_sbuffer_write);
    msgpack_pack_map(pk, 1 + nfields);
    wire_put_str(pk, "type", type);
}

static void send_simple(void *sock, const char *type) {
    msgpack_sbuffer sb;
    msgpack_packer pk;
    begin(&pk, &sb, type, 0);
    send_map(sock, &sb);
}

static void send_hello(void *sock, const arena_options_t *o) {
    msgpack_sbuffer sb;
    msgpack_packer pk;
    begin(&pk, &sb, "hello", 6);
    wire_put_int(&pk, "protocol", 1);
    wire_put_int(&pk, "minor", ARENA_MINOR);
    wire_put_str(&pk, "role", "player");
    wire_put_str(&pk, "name", o->account);
    wire_put_str(&pk, "account", o->account);
    wire_put_str(&pk, "key", o->key);
    send_map(sock, &sb);
}

static void send_seek(void *sock, const arena_options_t *o) {
    msgpack_sbuffer sb;
    msgpack_packer pk;
    begin(&pk, &sb, "seek", o->clock ? 3 : 2);
    wire_put_int(&pk, "id", 2);
    wire_put_str(&pk, "variant", o->variant);
    if (o->clock) wire_put_str(&pk, "clock", o->clock);
    send_map(sock, &sb);
}

/* The session cannot go on: say why (once) and wake the main thread. Called with `mu` held. */
static void fail(arena_session_t *s, int status, const char *line) {
    if (s->failed == 0) {
        s->failed = status;
        if (line != NULL) fprintf(stderr, "okgin-bot: %s\n", line);
    }
    pthread_cond_broadcast(&s->cv);
}

static void on_over(arena_session_t *s, const msgpack_object *msg) {
    arena_over_t *r = &s->overs[s->next_over];
    s->next_over = (s->next_over + 1) % OVERS;
    memset(r, 0, sizeof *r);
    wire_strcpy(msg, "game", r->game, sizeof r->game);
    wire_strcpy(msg, "result", r->result, sizeof r->result);
    wire_strcpy(msg, "termination", r->termination, sizeof r->termination);
    const msgpack_object *rating = wire_get(msg, "rating");
    if (rating != NULL && rating->type == MSGPACK_OBJECT_MAP) {
        r->rated = true;
        r->before = wire_int(rating, "before", 0);
        r->after = wire_int(rating, "after", 0);
        r->deviation = wire_int(rating, "deviation", 0);
        r->provisional = wire_bool(rating, "provisional", false);
    }
}

/* One message from the arena, with `mu` held: false when the session is over. */
static bool on_message(arena_session_t *s, const msgpack_object *msg) {
    const arena_options_t *o = &s->o;
    char line[512];
    if (wire_str_is(msg, "type", "welcome")) {
        s->welcomed = true;
        s->heartbeat_ms = wire_int(msg, "heartbeat_ms", s->heartbeat_ms);
        s->liveness = wire_int(msg, "liveness", s->liveness);
        if (s->heartbeat_ms < 10) s->heartbeat_ms = 10;
        if (s->liveness < 1) s->liveness = 1;
        if (o->verbose) fprintf(stderr, "okgin-bot[c %s] signed in to the arena as %s\n", o->name, o->account);
        pthread_cond_broadcast(&s->cv);
    } else if (wire_str_is(msg, "type", "game_ready")) {
        arena_game_t *g = &s->ready;
        memset(g, 0, sizeof *g);
        wire_strcpy(msg, "game", g->game, sizeof g->game);
        wire_strcpy(msg, "endpoint", g->endpoint, sizeof g->endpoint);
        wire_strcpy(msg, "token", g->token, sizeof g->token);
        const msgpack_object *key = wire_get(msg, "server_key");
        if (key != NULL && key->type == MSGPACK_OBJECT_STR) {
            if (key->via.str.size != 40) {
                fail(s, 1, "a game_ready whose server_key is not a CURVE public key (40 Z85 characters)");
                return false;
            }
            wire_strcpy(msg, "server_key", g->server_key, sizeof g->server_key);
        }
        if (g->endpoint[0] == '\0' || g->token[0] == '\0') {
            fail(s, 1, "a game_ready without an endpoint or a token");
            return false;
        }
        if (o->verbose)
            fprintf(stderr, "okgin-bot[c %s] arena game %s at %s%s\n", o->name, g->game, g->endpoint,
                    g->server_key[0] ? " (CURVE)" : "");
        s->seeking = false;
        s->seek_again_at = 0;
        s->has_ready = true;
        pthread_cond_broadcast(&s->cv);
    } else if (wire_str_is(msg, "type", "game_over")) {
        on_over(s, msg);
        pthread_cond_broadcast(&s->cv);
    } else if (wire_str_is(msg, "type", "error")) {
        char name[64], message[256];
        wire_strcpy(msg, "name", name, sizeof name);
        wire_strcpy(msg, "message", message, sizeof message);
        if (strcmp(name, "busy") == 0 && s->seeking && now_ms() < s->busy_until) {
            s->seek_again_at = now_ms() + BUSY_RETRY_MS; /* the arena is still filing our last game */
            return true;
        }
        int64_t retry = wire_int(msg, "retry_ms", -1);
        if (retry >= 0)
            snprintf(line, sizeof line, "the arena refused: %s: %s (try again in %lld s)", name, message,
                     (long long)((retry + 999) / 1000));
        else
            snprintf(line, sizeof line, "the arena refused: %s: %s", name, message);
        fail(s, 1, line);
        return false;
    } else if (wire_str_is(msg, "type", "shutdown")) {
        char reason[256];
        snprintf(line, sizeof line, "the arena is shutting down: %s", wire_strcpy(msg, "reason", reason, sizeof reason));
        fail(s, 1, line);
        return false;
    }
    /* heartbeat, sought, ok, challenge_offer (not answered: it expires), challenge_closed: nothing to do */
    return true;
}

/* The session's thread: the only one that touches the socket. */
static void *session_main(void *arg) {
    arena_session_t *s = arg;
    const arena_options_t *o = &s->o;
    char line[512];
    send_hello(s->sock, o);
    int64_t start = now_ms(), last_sent = start, last_recv = start;
    bool bye = false;
    for (;;) {
        int64_t now = now_ms();
        pthread_mutex_lock(&s->mu);
        if (s->closing) {
            bye = true;
            pthread_mutex_unlock(&s->mu);
            break;
        }
        if (!s->welcomed && now - start >= WELCOME_WAIT_MS) {
            snprintf(line, sizeof line, "no arena answered at %s within %d s (is it running, and is this its endpoint?)",
                     o->endpoint, WELCOME_WAIT_MS / 1000);
            fail(s, 1, line);
        } else if (s->welcomed && now - last_recv >= s->heartbeat_ms * s->liveness) {
            snprintf(line, sizeof line, "the arena at %s went silent", o->endpoint);
            fail(s, 1, line);
        }
        if (s->failed) {
            pthread_mutex_unlock(&s->mu);
            break;
        }
        bool seek = s->welcomed && (s->want_seek || (s->seek_again_at != 0 && now >= s->seek_again_at));
        if (seek) {
            s->want_seek = false;
            s->seek_again_at = 0;
            s->seeking = true;
        }
        int64_t heartbeat_ms = s->heartbeat_ms;
        bool welcomed = s->welcomed;
        pthread_mutex_unlock(&s->mu);
        if (seek) {
            if (o->verbose) fprintf(stderr, "okgin-bot[c %s] seeking %s\n", o->name, o->variant);
            send_seek(s->sock, o);
            last_sent = now;
        }
        if (welcomed && now - last_sent >= heartbeat_ms) {
            send_simple(s->sock, "heartbeat");
            last_sent = now;
        }
        zmq_pollitem_t item = {s->sock, 0, ZMQ_POLLIN, 0};
        long wait = welcomed ? (long)(last_sent + heartbeat_ms - now) : 100;
        if (wait < 0) wait = 0;
        if (wait > 100) wait = 100; /* look at the main thread's asks at least this often */
        if (zmq_poll(&item, 1, wait) <= 0) continue;
        bool go_on = true;
        for (;;) {
            zmq_msg_t frame;
            zmq_msg_init(&frame);
            if (zmq_msg_recv(&frame, s->sock, ZMQ_DONTWAIT) < 0) {
                zmq_msg_close(&frame);
                break;
            }
            last_recv = now_ms();
            msgpack_unpacked unpacked;
            msgpack_unpacked_init(&unpacked);
            size_t offset = 0;
            if (msgpack_unpack_next(&unpacked, zmq_msg_data(&frame), zmq_msg_size(&frame), &offset) ==
                    MSGPACK_UNPACK_SUCCESS &&
                unpacked.data.type == MSGPACK_OBJECT_MAP) {
                pthread_mutex_lock(&s->mu);
                go_on = on_message(s, &unpacked.data);
                pthread_mutex_unlock(&s->mu);
            }
            msgpack_unpacked_destroy(&unpacked);
            zmq_msg_close(&frame);
            if (!go_on) break;
        }
        if (!go_on) {
            bye = true;
            break;
        }
    }
    if (bye) send_simple(s->sock, "bye");
    int linger = 500; /* let the bye go out */
    zmq_setsockopt(s->sock, ZMQ_LINGER, &linger, sizeof linger);
    zmq_close(s->sock);
    s->sock = NULL;
    return NULL;
}

/* Wait (with `mu` held) until `done(s, arg)`, the session failed, a signal asked to stop
 * or `deadline` (0: none) passed. Returns 0 when done, else the reason's exit status. */
static int wait_until(arena_session_t *s, bool (*done)(arena_session_t *, const void *), const void *arg,
                      int64_t deadline) {
    for (;;) {
        if (done(s, arg)) return 0;
        if (s->failed) return s->failed;
        if (client_stop_requested()) return 130;
        if (deadline != 0 && now_ms() >= deadline) return -1;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 100 * 1000000L; /* look at a signal at least this often */
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&s->cv, &s->mu, &ts);
    }
}

static bool is_welcomed(arena_session_t *s, const void *arg) {
    (void)arg;
    return s->welcomed;
}

static bool has_ready(arena_session_t *s, const void *arg) {
    (void)arg;
    return s->has_ready;
}

static const arena_over_t *find_over(arena_session_t *s, const char *game) {
    for (int i = 0; i < OVERS; i++)
        if (s->overs[i].game[0] != '\0' && strcmp(s->overs[i].game, game) == 0) return &s->overs[i];
    return NULL;
}

static bool has_over(arena_session_t *s, const void *arg) { return find_over(s, arg) != NULL; }

int arena_open(const arena_options_t *o, arena_session_t **out) {
    *out = NULL;
    arena_session_t *s = calloc(1, sizeof *s);
    if (s == NULL) {
        fprintf(stderr, "okgin-bot: out of memory\n");
        return 2;
    }
    s->o = *o;
    s->heartbeat_ms = 5000;
    s->liveness = 3;
    s->ctx = zmq_ctx_new();
    s->sock = zmq_socket(s->ctx, ZMQ_DEALER);
    int linger = 0;
    zmq_setsockopt(s->sock, ZMQ_LINGER, &linger, sizeof linger);
    if (zmq_connect(s->sock, o->endpoint) != 0) {
        fprintf(stderr, "okgin-bot: cannot connect to the arena %s: %s\n", o->endpoint, zmq_strerror(errno));
        zmq_close(s->sock);
        zmq_ctx_term(s->ctx);
        free(s);
        return 2;
    }
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    /* The signals go to the main thread (whose poll they interrupt), never to the session's. */
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    int err = pthread_create(&s->thread, NULL, session_main, s);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (err != 0) {
        fprintf(stderr, "okgin-bot: cannot start the arena session's thread: %s\n", strerror(err));
        zmq_close(s->sock);
        zmq_ctx_term(s->ctx);
        free(s);
        return 2;
    }
    *out = s;
    pthread_mutex_lock(&s->mu);
    int status = wait_until(s, is_welcomed, NULL, 0);
    pthread_mutex_unlock(&s->mu);
    return status;
}

int arena_next_game(arena_session_t *s, arena_game_t *out) {
    pthread_mutex_lock(&s->mu);
    s->has_ready = false;
    s->want_seek = true;
    s->busy_until = now_ms() + BUSY_PATIENCE_MS;
    int status = wait_until(s, has_ready, NULL, 0);
    if (status == 0) {
        *out = s->ready;
        memset(s->ready.token, 0, sizeof s->ready.token);
        s->has_ready = false;
    }
    pthread_mutex_unlock(&s->mu);
    return status;
}

bool arena_game_over(arena_session_t *s, const char *game, int64_t wait_ms, arena_over_t *out) {
    pthread_mutex_lock(&s->mu);
    int status = wait_until(s, has_over, game, now_ms() + wait_ms);
    if (status == 0) *out = *find_over(s, game);
    pthread_mutex_unlock(&s->mu);
    return status == 0;
}

void arena_close(arena_session_t *s) {
    if (s == NULL) return;
    pthread_mutex_lock(&s->mu);
    s->closing = true;
    pthread_mutex_unlock(&s->mu);
    pthread_join(s->thread, NULL);
    zmq_ctx_term(s->ctx);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    free(s);
}
