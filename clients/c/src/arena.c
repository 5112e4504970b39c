#include "arena.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <zmq.h>

#include "client.h"
#include "wire.h"

#define ARENA_MINOR 6      /* hello.account and hello.key are protocol 1.6 */
#define WELCOME_WAIT_MS 30000 /* an arena that says nothing this long after hello is unreachable */

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

/* One message from the arena: 1 = game_ready read (done), -1 = refused (done), 0 = go on. */
static int on_message(void *sock, const arena_options_t *o, const msgpack_object *msg, arena_game_t *out, bool *welcomed,
                      int64_t *heartbeat_ms, int64_t *liveness) {
    if (wire_str_is(msg, "type", "welcome")) {
        *welcomed = true;
        *heartbeat_ms = wire_int(msg, "heartbeat_ms", *heartbeat_ms);
        *liveness = wire_int(msg, "liveness", *liveness);
        if (*heartbeat_ms < 10) *heartbeat_ms = 10;
        if (*liveness < 1) *liveness = 1;
        if (o->verbose) fprintf(stderr, "okgin-bot[c %s] signed in to the arena as %s; seeking %s\n", o->name, o->account, o->variant);
        send_seek(sock, o);
    } else if (wire_str_is(msg, "type", "game_ready")) {
        const msgpack_object *key = wire_get(msg, "server_key");
        if (key != NULL && key->type == MSGPACK_OBJECT_STR) {
            fprintf(stderr, "okgin-bot: the arena's shard requires CURVE, which this example bot does not speak\n");
            return -1;
        }
        wire_strcpy(msg, "game", out->game, sizeof out->game);
        wire_strcpy(msg, "endpoint", out->endpoint, sizeof out->endpoint);
        wire_strcpy(msg, "token", out->token, sizeof out->token);
        if (out->endpoint[0] == '\0' || out->token[0] == '\0') {
            fprintf(stderr, "okgin-bot: a game_ready without an endpoint or a token\n");
            return -1;
        }
        if (o->verbose) fprintf(stderr, "okgin-bot[c %s] arena game %s at %s\n", o->name, out->game, out->endpoint);
        return 1;
    } else if (wire_str_is(msg, "type", "error")) {
        char name[64], message[256];
        wire_strcpy(msg, "name", name, sizeof name);
        wire_strcpy(msg, "message", message, sizeof message);
        int64_t retry = wire_int(msg, "retry_ms", -1);
        if (retry >= 0)
            fprintf(stderr, "okgin-bot: the arena refused: %s: %s (try again in %lld s)\n", name, message,
                    (long long)((retry + 999) / 1000));
        else
            fprintf(stderr, "okgin-bot: the arena refused: %s: %s\n", name, message);
        return -1;
    }
    /* heartbeat, sought, challenge_offer (not answered: it expires), game_over of an earlier game: nothing to do */
    return 0;
}

int arena_find_game(const arena_options_t *o, arena_game_t *out) {
    void *ctx = zmq_ctx_new();
    void *sock = zmq_socket(ctx, ZMQ_DEALER);
    int linger = 0;
    zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
    int status = 1;
    if (zmq_connect(sock, o->endpoint) != 0) {
        fprintf(stderr, "okgin-bot: cannot connect to the arena %s: %s\n", o->endpoint, zmq_strerror(errno));
        zmq_close(sock);
        zmq_ctx_term(ctx);
        return 2;
    }
    send_hello(sock, o);
    bool welcomed = false;
    int64_t heartbeat_ms = 5000, liveness = 3;
    int64_t start = now_ms(), last_sent = start, last_recv = start;
    for (;;) {
        if (client_stop_requested()) {
            send_simple(sock, "bye");
            status = 130;
            break;
        }
        int64_t now = now_ms();
        if (!welcomed && now - start >= WELCOME_WAIT_MS) {
            fprintf(stderr, "okgin-bot: no arena answered at %s within %d s (is it running, and is this its endpoint?)\n",
                    o->endpoint, WELCOME_WAIT_MS / 1000);
            break;
        }
        if (welcomed && now - last_recv >= heartbeat_ms * liveness) {
            fprintf(stderr, "okgin-bot: the arena at %s went silent\n", o->endpoint);
            break;
        }
        if (welcomed && now - last_sent >= heartbeat_ms) {
            send_simple(sock, "heartbeat");
            last_sent = now;
        }
        zmq_pollitem_t item = {sock, 0, ZMQ_POLLIN, 0};
        long wait = welcomed ? (long)(last_sent + heartbeat_ms - now) : 200;
        if (wait < 0) wait = 0;
        if (wait > 200) wait = 200; /* look at a signal at least this often */
        if (zmq_poll(&item, 1, wait) <= 0) continue;
        zmq_msg_t frame;
        zmq_msg_init(&frame);
        if (zmq_msg_recv(&frame, sock, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close(&frame);
            continue;
        }
        last_recv = now_ms();
        msgpack_unpacked unpacked;
        msgpack_unpacked_init(&unpacked);
        size_t offset = 0;
        int got = 0;
        if (msgpack_unpack_next(&unpacked, zmq_msg_data(&frame), zmq_msg_size(&frame), &offset) == MSGPACK_UNPACK_SUCCESS &&
            unpacked.data.type == MSGPACK_OBJECT_MAP) {
            got = on_message(sock, o, &unpacked.data, out, &welcomed, &heartbeat_ms, &liveness);
        }
        msgpack_unpacked_destroy(&unpacked);
        zmq_msg_close(&frame);
        if (got != 0) {
            /* Leave the arena: the game is at the shard now, and a bot that is done seeking has
             * nothing more to say here (protocol.md 19: its games are unaffected). */
            send_simple(sock, "bye");
            status = got > 0 ? 0 : 1;
            break;
        }
    }
    linger = 500; /* let the bye go out */
    zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
    zmq_close(sock);
    zmq_ctx_term(ctx);
    return status;
}
