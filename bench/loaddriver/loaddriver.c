/*
 * loaddriver: the compiled client side of bench/referee.py's figure (d).
 *
 * Why it exists: (d) puts 200 tables (400 clients) on one referee with zero think time
 * and measures the decision latency each client sees (act sent -> that table's next
 * prompt received). Driven from one Python process, the 400 clients cost about 0.8 of a
 * core on a 2-core machine, so the harness, not the referee, was much of what (d)
 * measured. This program plays exactly the same clients (same hello, same join, same
 * minimal choice echoed back as received, same rematch, same counters and percentiles as
 * drive() in bench/referee.py) at a fraction of the CPU.
 *
 *   loaddriver --endpoint tcp://127.0.0.1:PORT [--tables 200] [--seconds 15]
 *              [--warmup 0.5] [--mode events|lean|batched] [--think-ms 0]
 *              [--transport zmtp|zmq]
 *   loaddriver --endpoint tcp://127.0.0.1:ARENA_PORT --arena-bots FILE
 *              [--seconds 15] [--warmup 0.5] [--think-ms 0]
 *
 * Arena mode (--arena-bots, for bench/arena.py, issue 26 item 8): connected bots at an
 * `okgin arena` (protocol.md 19) instead of plain referee tables. FILE holds one
 * "account key" line per bot and must be mode 0600 (a key on the command line would be
 * visible to every local user through ps). Each bot says hello with account and key
 * (limit_reached retried after 1-3 s), seeks, follows game_ready to its shard on a new
 * connection with the seat token, plays as below with --think-ms on a timer heap, and
 * seeks again after the arena's game_over; it measures what bench/arena.py's Python driver measures
 * (games: game_end at seat 0; latency: act sent -> that move's event for the same seat;
 * waits: seek sent -> game_ready) and prints that driver's JSON line (the raw samples, so
 * that bench/arena.py computes the percentiles for both). zmtp transport only. Details at
 * "arena mode" below. The window opens after --warmup, and not before every bot has been
 * welcomed (at most SIGNIN_WAIT_S more: then it opens anyway and says how many were): a
 * sign-in costs the front a scrypt, and sign-ins inside the window were its p99 latency.
 * "loaddriver: measuring" on stderr marks the window's start (bench/arena.py reads the
 * arena's CPU there).
 *
 * Transport: zmtp (the default) speaks ZMTP 3.0 itself over non-blocking TCP from this
 * one thread (zmtp.c: no libzmq, so no I/O thread and no mailbox signalling competing
 * with the referee for the machine's cores); zmq uses libzmq DEALER sockets. Everything
 * above the frames (msgpack, choices, counters, output) is the same code for both.
 *
 * Protocol (protocol.md): each table b{i} is two DEALER clients (LINGER 0) that send
 * hello (protocol 1, minor 3 if batched else 1, role player, events false in lean mode,
 * batch_events true in batched mode), wait for welcome, then join the named table "b{i}"
 * (the first join creates it with the referee's defaults; the second fills it, so the
 * game starts). Every prompt is answered at once (or --think-ms later, the latency then
 * counted from the act's send) with: knock or big_gin if legal, else pass/draw_stock,
 * else the first legal action. game_end is answered with rematch. hand_end on the
 * table's first socket counts a hand. A referee `error` or `shutdown`, a missing welcome
 * or a failed send ends the run with a message on stderr and exit status 1.
 *
 * Polling: one epoll. zmtp: over the TCP sockets themselves, level-triggered, EPOLLOUT
 * only while a connection has output queued; the welcomes (and the joins they release)
 * are read on that loop too. zmq: over the sockets' ZMQ_FD descriptors (zmq_poll would
 * walk all 400 sockets on every call); ZMQ_FD only signals that the socket's state may
 * have changed (edge-like), so every ready socket is drained until EAGAIN, and the drain
 * goes on after each send on it (a send can consume the descriptor's edge).
 *
 * Output on stderr: "loaddriver: ready" once every client is welcomed and has sent its
 * join, "loaddriver: measuring" when the warmup ends (the parent reads the referee's CPU
 * there). Then, after the measured seconds, exactly one JSON line on stdout (printed
 * before any socket is closed): decisions, decisions_per_s, hands_per_s, games, p50_ms,
 * p99_ms, mean_us, median_us (the keys drive() returns) and driver_cpu_s (this process's
 * user + system CPU over the measured seconds, all threads, libzmq's I/O thread
 * included on the zmq path), so that CPU per decision and CPU share divide like by like,
 * driver_main_thread_cpu_s (this loop's thread alone: with zmq the rest is libzmq's I/O
 * thread; with zmtp the two are equal), p90_ms, p999_ms, max_ms and transport.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <msgpack.h>
#include <zmq.h>

#include "zmtp.h"

#define MAX_TABLES 5000
#define SETUP_TIMEOUT_MS 20000 /* welcome wait and blocking sends: an upper bound for failures */
#define MAX_EVENTS 256

typedef struct {
    void *sock[2];    /* --transport zmq */
    zmtp_conn_t zc[2]; /* --transport zmtp */
    bool welcomed[2];  /* zmtp: the welcome arrives on the event loop */
    int64_t sent_at; /* ns of the last act's send, -1 when no decision is open */
    int64_t last_send[2];
    long decisions, hands, games;
    char name[16];
} table_t;

typedef struct { /* one paced act waiting for its think time */
    int64_t due;
    int table, seat;
    char *data;
    size_t size;
} due_t;

static table_t *tables;
static int n_tables;
static bool zmtp; /* --transport zmtp: our own ZMTP over TCP, no libzmq */
static const char *endpoint;
static int tables_welcomed;
static int64_t heartbeat_ns = (int64_t)5000 * 1000000;
static double think_s;
static int64_t measure_from = INT64_MAX, end_at; /* nothing counts before the warmup ends */

/* How long an event loop may sleep in epoll_wait, in ms (rounded up): until the next timer
 * is due (next_due, INT64_MAX for none), the window opens or closes, and at most 200 ms (the
 * heartbeat checks). One rule for both loops (the referee tables' and the arena bots'). */
static int wait_ms(int64_t now, int64_t next_due, bool measuring) {
    int64_t wait = 200000000; /* ns */
    if (next_due - now < wait) wait = next_due - now;
    if (end_at - now < wait) wait = end_at - now;
    if (!measuring && measure_from - now < wait) wait = measure_from - now;
    if (wait < 0) wait = 0;
    return (int)((wait + 999999) / 1000000);
}
static int64_t *lat; /* latencies in ns, after the warmup only */
static size_t n_lat, cap_lat;
static due_t *fifo; /* think time is constant, so acts fall due in the order they were queued */
static size_t fifo_cap, fifo_head, fifo_len;
static msgpack_sbuffer sbuf;
static msgpack_packer pk;
static int arena_epfd = -1; /* arena mode's epoll */

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static double cpu_seconds(int who) {
    struct rusage ru;
    getrusage(who, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

static void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("loaddriver: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static void *xmalloc(size_t n) {
    void *p = malloc(n);
    if (!p) die("out of memory");
    return p;
}

/* ---------------------------------------------------------------- msgpack helpers */
static bool str_eq(const msgpack_object *o, const char *s) {
    size_t n = strlen(s);
    return o->type == MSGPACK_OBJECT_STR && o->via.str.size == n && memcmp(o->via.str.ptr, s, n) == 0;
}

static const msgpack_object *map_get(const msgpack_object *m, const char *key) {
    if (m->type != MSGPACK_OBJECT_MAP) return NULL;
    for (uint32_t i = 0; i < m->via.map.size; i++)
        if (str_eq(&m->via.map.ptr[i].key, key)) return &m->via.map.ptr[i].val;
    return NULL;
}

static void pack_str(const char *s) {
    size_t n = strlen(s);
    msgpack_pack_str(&pk, n);
    msgpack_pack_str_body(&pk, s, n);
}

/* A string field for an error message: at most 300 bytes of it, or "?". */
static void field_text(const msgpack_object *m, const char *key, char *out, size_t cap) {
    const msgpack_object *v = map_get(m, key);
    if (!v || v->type != MSGPACK_OBJECT_STR) {
        snprintf(out, cap, "?");
        return;
    }
    size_t n = v->via.str.size < cap - 1 ? v->via.str.size : cap - 1;
    memcpy(out, v->via.str.ptr, n);
    out[n] = '\0';
}

/* bench/referee.py's minimal_choice: knock/big_gin, else pass/draw_stock, else the first. */
static const msgpack_object *minimal_choice(const msgpack_object *legal) {
    if (!legal || legal->type != MSGPACK_OBJECT_ARRAY || legal->via.array.size == 0) return NULL;
    const msgpack_object *a = legal->via.array.ptr;
    uint32_t n = legal->via.array.size;
    for (uint32_t i = 0; i < n; i++) {
        const msgpack_object *k = map_get(&a[i], "kind");
        if (k && (str_eq(k, "knock") || str_eq(k, "big_gin"))) return &a[i];
    }
    for (uint32_t i = 0; i < n; i++) {
        const msgpack_object *k = map_get(&a[i], "kind");
        if (k && (str_eq(k, "pass") || str_eq(k, "draw_stock"))) return &a[i];
    }
    return &a[0];
}

/* ---------------------------------------------------------------- sockets */
static void send_buf(int ti, int seat, const char *data, size_t size) {
    table_t *t = &tables[ti];
    if (zmtp) {
        if (zmtp_send(&t->zc[seat], data, size) != 0) die("table %s socket %d: %s", t->name, seat, t->zc[seat].err);
    } else if (zmq_send(t->sock[seat], data, size, 0) < 0) {
        die("table %s seat socket %d: send failed: %s", t->name, seat, zmq_strerror(errno));
    }
    t->last_send[seat] = now_ns();
}

static void handle(int ti, int seat, const msgpack_object *m);

/* Read every waiting message of one socket (until EAGAIN), handling each. */
static void drain(int ti, int seat) {
    if (zmtp) return; /* level-triggered epoll on the TCP socket: nothing is lost by waiting for it */
    void *s = tables[ti].sock[seat];
    for (;;) {
        zmq_msg_t frame;
        zmq_msg_init(&frame);
        if (zmq_msg_recv(&frame, s, ZMQ_DONTWAIT) < 0) {
            int e = errno;
            zmq_msg_close(&frame);
            if (e == EAGAIN) return;
            if (e == EINTR) continue;
            die("table %s: receive failed: %s", tables[ti].name, zmq_strerror(e));
        }
        msgpack_unpacked up;
        msgpack_unpacked_init(&up);
        size_t off = 0;
        if (msgpack_unpack_next(&up, zmq_msg_data(&frame), zmq_msg_size(&frame), &off) != MSGPACK_UNPACK_SUCCESS ||
            up.data.type != MSGPACK_OBJECT_MAP)
            die("table %s: a frame that is not a msgpack map (%zu bytes)", tables[ti].name, zmq_msg_size(&frame));
        handle(ti, seat, &up.data);
        msgpack_unpacked_destroy(&up);
        zmq_msg_close(&frame);
    }
}

static void send_act(int ti, int seat, const char *data, size_t size) {
    tables[ti].sent_at = now_ns();
    send_buf(ti, seat, data, size);
}

static void handle(int ti, int seat, const msgpack_object *m) {
    table_t *t = &tables[ti];
    const msgpack_object *ty = map_get(m, "type");
    if (!ty) die("table %s: a message without a type", t->name);
    if (str_eq(ty, "prompt")) {
        int64_t now = now_ns();
        if (t->sent_at >= 0 && now >= measure_from) {
            if (n_lat == cap_lat) {
                cap_lat = cap_lat ? cap_lat * 2 : 65536;
                lat = realloc(lat, cap_lat * sizeof *lat);
                if (!lat) die("out of memory");
            }
            lat[n_lat++] = now - t->sent_at;
            t->decisions++;
        }
        const msgpack_object *table = map_get(m, "table"), *seq = map_get(m, "seq");
        const msgpack_object *a = minimal_choice(map_get(m, "legal"));
        if (!table || !seq || !a) die("table %s: a prompt without table, seq or legal actions", t->name);
        msgpack_sbuffer_clear(&sbuf);
        msgpack_pack_map(&pk, 4);
        pack_str("type");
        pack_str("act");
        pack_str("table");
        msgpack_pack_object(&pk, *table);
        pack_str("seq");
        msgpack_pack_object(&pk, *seq);
        pack_str("action");
        msgpack_pack_object(&pk, *a); /* the legal action map exactly as received */
        if (think_s > 0) {
            t->sent_at = -1;
            if (fifo_len == fifo_cap) die("more paced acts waiting than tables: a protocol surprise");
            due_t *d = &fifo[(fifo_head + fifo_len++) % fifo_cap];
            d->due = now + (int64_t)(think_s * 1e9);
            d->table = ti;
            d->seat = seat;
            d->size = sbuf.size;
            d->data = xmalloc(sbuf.size);
            memcpy(d->data, sbuf.data, sbuf.size);
        } else {
            send_act(ti, seat, sbuf.data, sbuf.size);
        }
    } else if (str_eq(ty, "hand_end")) {
        if (seat == 0 && now_ns() >= measure_from) t->hands++;
    } else if (str_eq(ty, "game_end")) {
        t->sent_at = -1;
        if (seat == 0) t->games++;
        const msgpack_object *table = map_get(m, "table");
        if (!table) die("table %s: a game_end without table", t->name);
        msgpack_sbuffer_clear(&sbuf);
        msgpack_pack_map(&pk, 2);
        pack_str("type");
        pack_str("rematch");
        pack_str("table");
        msgpack_pack_object(&pk, *table);
        send_buf(ti, seat, sbuf.data, sbuf.size);
    } else if (str_eq(ty, "error") || str_eq(ty, "shutdown")) {
        char name[64], msg[320], req[64];
        field_text(m, str_eq(ty, "error") ? "name" : "reason", name, sizeof name);
        field_text(m, "message", msg, sizeof msg);
        field_text(m, "request", req, sizeof req);
        die("table %s socket %d: referee %.*s %s (request %s): %s", t->name, seat, (int)ty->via.str.size,
            ty->via.str.ptr, name, req, msg);
    }
    /* seated, game_start, event, rematch_status, ok, heartbeat...: nothing to do */
}

/* ---------------------------------------------------------------- set-up */
static void send_hello(int ti, int seat, bool lean, bool batched) {
    char name[40];
    snprintf(name, sizeof name, "%s-%d", tables[ti].name, seat);
    msgpack_sbuffer_clear(&sbuf);
    msgpack_pack_map(&pk, batched ? 7 : 6);
    pack_str("type");
    pack_str("hello");
    pack_str("protocol");
    msgpack_pack_int(&pk, 1);
    pack_str("minor");
    msgpack_pack_int(&pk, batched ? 3 : 1);
    pack_str("role");
    pack_str("player");
    pack_str("name");
    pack_str(name);
    pack_str("events");
    if (lean) msgpack_pack_false(&pk);
    else msgpack_pack_true(&pk);
    if (batched) {
        pack_str("batch_events");
        msgpack_pack_true(&pk);
    }
    send_buf(ti, seat, sbuf.data, sbuf.size);
}

/* The answer to hello must be welcome (its heartbeat interval is kept); an error or
 * shutdown dies in handle() with its message, anything else here. */
static void take_welcome(int ti, int seat, const msgpack_object *m) {
    const msgpack_object *ty = map_get(m, "type");
    if (!ty || !str_eq(ty, "welcome")) {
        if (ty) handle(ti, seat, m);
        die("%s-%d: the answer to hello is not welcome", tables[ti].name, seat);
    }
    const msgpack_object *hb = map_get(m, "heartbeat_ms");
    if (hb && hb->type == MSGPACK_OBJECT_POSITIVE_INTEGER && hb->via.u64 > 0)
        heartbeat_ns = (int64_t)hb->via.u64 * 1000000;
}

/* Both seats welcomed: the first join creates the named table, the second fills it. */
static void send_joins(int ti) {
    for (int j = 0; j < 2; j++) {
        msgpack_sbuffer_clear(&sbuf);
        msgpack_pack_map(&pk, 2);
        pack_str("type");
        pack_str("join");
        pack_str("table");
        pack_str(tables[ti].name);
        send_buf(ti, j, sbuf.data, sbuf.size);
    }
}

/* --transport zmtp: one message from a connection (tag = table * 2 + seat). Until its
 * welcome it is an answer to hello; then it is played exactly as the zmq path plays it. */
static void on_zmtp_message(uint64_t tag, const unsigned char *body, size_t size) {
    int ti = (int)(tag / 2), seat = (int)(tag % 2);
    table_t *t = &tables[ti];
    msgpack_unpacked up;
    msgpack_unpacked_init(&up);
    size_t off = 0;
    if (msgpack_unpack_next(&up, (const char *)body, size, &off) != MSGPACK_UNPACK_SUCCESS ||
        up.data.type != MSGPACK_OBJECT_MAP)
        die("table %s: a frame that is not a msgpack map (%zu bytes)", t->name, size);
    if (t->welcomed[seat]) {
        handle(ti, seat, &up.data);
    } else {
        take_welcome(ti, seat, &up.data);
        t->welcomed[seat] = true;
        if (t->welcomed[1 - seat]) {
            send_joins(ti);
            tables_welcomed++;
        }
    }
    msgpack_unpacked_destroy(&up);
}

static void on_event(const struct epoll_event *ev) {
    int ti = (int)(ev->data.u64 / 2), seat = (int)(ev->data.u64 % 2);
    if (!zmtp) {
        drain(ti, seat);
        return;
    }
    zmtp_conn_t *c = &tables[ti].zc[seat];
    if (zmtp_on_event(c, ev->events, on_zmtp_message) != 0)
        die("table %s socket %d (%s): %s", tables[ti].name, seat, endpoint, c->err);
}

/* ---------------------------------------------------------------- main */
static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static bool loopback(const char *ep) {
    static const char *ok[] = {"tcp://127.", "tcp://[::1]:", "tcp://localhost:", "ipc://"};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
        if (strncmp(ep, ok[i], strlen(ok[i])) == 0) return true;
    return false;
}

static void usage(void) {
    fputs("usage: loaddriver --endpoint tcp://127.0.0.1:PORT [--tables 200] [--seconds 15] [--warmup 0.5]\n"
          "                  [--mode events|lean|batched] [--think-ms 0] [--transport zmtp|zmq]\n"
          "       loaddriver --endpoint tcp://127.0.0.1:ARENA_PORT --arena-bots FILE [--seconds 15] [--warmup 0.5]\n"
          "                  [--think-ms 0]\n",
          stderr);
    exit(2);
}

static double parse_num(const char *s, const char *what, double lo, double hi) {
    char *e;
    errno = 0;
    double v = strtod(s, &e);
    if (errno || e == s || *e || !(v >= lo && v <= hi)) {
        fprintf(stderr, "loaddriver: %s must be a number in [%g, %g], not %s\n", what, lo, hi, s);
        exit(2);
    }
    return v;
}

/* ---------------------------------------------------------------- arena mode
 * --arena-bots FILE: connected bots at an `okgin arena` (protocol.md 19), the client side
 * of bench/arena.py. The same bots as that file's Python driver (one_bot/play): hello
 * with account and key (limit_reached retried after 1-3 s), seek, game_ready -> a new
 * connection to the shard with the seat token, every prompt answered after --think-ms
 * with minimal_choice, game_end -> close the shard connection, the arena's game_over (or 10 s)
 * -> seek again (a seek at game_end is refused busy until the front filed the game). The same
 * measurements: games (game_end of seat 0), latency (act sent -> that move's event for
 * the same seat), waits (seek sent -> game_ready), counted only inside the window. The
 * raw samples go out in the JSON line and bench/arena.py computes the percentiles, so the
 * two drivers share that code. Timers (think time, retries) are a binary heap on the one
 * epoll loop. zmtp transport only. */
enum { B_HELLO, B_SEEKING, B_PLAYING, B_OVER }; /* B_OVER: game_end seen, waiting for the arena's game_over */
enum { T_HELLO, T_SEEK, T_ACT, T_OVER }; /* T_OVER: no game_over came: seek anyway */

typedef struct {
    char name[64], key[160];
    zmtp_conn_t a, s; /* the arena connection, the current game's shard connection */
    bool s_open, s_done; /* s_done: game_end seen, close the shard connection after this event */
    uint32_t gen; /* shard connection generation: stale epoll events and timers are ignored */
    int state, seat;
    int64_t t_seek, sent_at, last_a, last_s;
    char *pending; /* the act waiting for its think time */
    size_t pending_size;
    long rid;
} bot_t;

typedef struct {
    int64_t due;
    int bot, kind;
    uint32_t gen;
} timer_t_;

static bot_t *bots;
static int n_bots;
static timer_t_ *heap;
static size_t heap_len, heap_cap;
static double *a_lat, *a_wait; /* seconds, like the Python driver's lists */
static size_t n_alat, cap_alat, n_await, cap_await;
static long a_games;
static int a_welcomed; /* bots whose hello was answered welcome */
#define SIGNIN_WAIT_S 600 /* how long after --warmup the window waits for the last sign-ins */
static struct { char name[40]; long n; } errs[32];
static int n_errs;

static void heap_push(int64_t due, int bot, int kind, uint32_t gen) {
    if (heap_len == heap_cap) {
        heap_cap = heap_cap ? heap_cap * 2 : 1024;
        heap = realloc(heap, heap_cap * sizeof *heap);
        if (!heap) die("out of memory");
    }
    size_t i = heap_len++;
    while (i > 0 && heap[(i - 1) / 2].due > due) {
        heap[i] = heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    heap[i] = (timer_t_){due, bot, kind, gen};
}

static timer_t_ heap_pop(void) {
    timer_t_ top = heap[0], last = heap[--heap_len];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= heap_len) break;
        if (c + 1 < heap_len && heap[c + 1].due < heap[c].due) c++;
        if (heap[c].due >= last.due) break;
        heap[i] = heap[c];
        i = c;
    }
    if (heap_len) heap[i] = last;
    return top;
}

static void push_sample(double **xs, size_t *n, size_t *cap, double v) {
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 65536;
        *xs = realloc(*xs, *cap * sizeof **xs);
        if (!*xs) die("out of memory");
    }
    (*xs)[(*n)++] = v;
}

/* Count a referee/arena error by name (a JSON-safe copy); say the first of each name on stderr. */
static void count_error(const bot_t *b, const char *where, const msgpack_object *m) {
    char name[40], msg[320];
    field_text(m, "name", name, sizeof name);
    for (char *p = name; *p; p++)
        if (!(*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9'))) *p = '?';
    for (int i = 0; i < n_errs; i++)
        if (strcmp(errs[i].name, name) == 0) {
            errs[i].n++;
            return;
        }
    field_text(m, "message", msg, sizeof msg);
    fprintf(stderr, "loaddriver: bot %s (%s): error %s: %s\n", b->name, where, name, msg);
    if (n_errs < (int)(sizeof errs / sizeof *errs)) {
        snprintf(errs[n_errs].name, sizeof errs[n_errs].name, "%s", name);
        errs[n_errs++].n = 1;
    }
}

static void bot_send(bot_t *b, bool shard, const char *data, size_t size) {
    zmtp_conn_t *c = shard ? &b->s : &b->a;
    if (zmtp_send(c, data, size) != 0) die("bot %s (%s): %s", b->name, shard ? "shard" : "arena", c->err);
    if (shard) b->last_s = now_ns();
    else b->last_a = now_ns();
}

static void arena_hello(bot_t *b) {
    msgpack_sbuffer_clear(&sbuf);
    msgpack_pack_map(&pk, 8);
    pack_str("type"), pack_str("hello");
    pack_str("id"), msgpack_pack_long(&pk, ++b->rid);
    pack_str("protocol"), msgpack_pack_int(&pk, 1);
    pack_str("minor"), msgpack_pack_int(&pk, 6);
    pack_str("role"), pack_str("player");
    pack_str("name"), pack_str(b->name);
    pack_str("account"), pack_str(b->name);
    pack_str("key"), pack_str(b->key);
    bot_send(b, false, sbuf.data, sbuf.size);
}

static void arena_seek(bot_t *b) {
    msgpack_sbuffer_clear(&sbuf);
    msgpack_pack_map(&pk, 3);
    pack_str("type"), pack_str("seek");
    pack_str("id"), msgpack_pack_long(&pk, ++b->rid);
    pack_str("variant"), pack_str("oklahoma");
    bot_send(b, false, sbuf.data, sbuf.size);
}

static void on_arena_message(bot_t *b, const msgpack_object *m) {
    const msgpack_object *ty = map_get(m, "type");
    if (!ty) die("bot %s: an arena message without a type", b->name);
    int64_t now = now_ns();
    if (str_eq(ty, "welcome") && b->state == B_HELLO) {
        const msgpack_object *hb = map_get(m, "heartbeat_ms");
        if (hb && hb->type == MSGPACK_OBJECT_POSITIVE_INTEGER && hb->via.u64 > 0 &&
            (int64_t)hb->via.u64 * 1000000 < heartbeat_ns)
            heartbeat_ns = (int64_t)hb->via.u64 * 1000000;
        b->state = B_SEEKING;
        b->t_seek = now;
        a_welcomed++;
        arena_seek(b);
    } else if (str_eq(ty, "error")) {
        char name[40];
        field_text(m, "name", name, sizeof name);
        bool retry = strcmp(name, "limit_reached") == 0 || strcmp(name, "busy") == 0 || strcmp(name, "rate_limited") == 0;
        if (b->state == B_HELLO && strcmp(name, "limit_reached") != 0) {
            char msg[320];
            field_text(m, "message", msg, sizeof msg);
            die("bot %s: the arena refuses its hello: %s: %s", b->name, name, msg);
        }
        count_error(b, "arena", m);
        if (b->state == B_HELLO) /* the key checks queue up: back off, spread out */
            heap_push(now + (int64_t)((1.0 + 2.0 * ((double)random() / RAND_MAX)) * 1e9), (int)(b - bots), T_HELLO, 0);
        else if (b->state == B_SEEKING && retry)
            heap_push(now + 300000000, (int)(b - bots), T_SEEK, b->gen);
    } else if (str_eq(ty, "game_ready") && b->state == B_SEEKING) {
        const msgpack_object *ep = map_get(m, "endpoint"), *tok = map_get(m, "token"), *seat = map_get(m, "seat");
        if (!ep || ep->type != MSGPACK_OBJECT_STR || ep->via.str.size >= 200 || !tok || tok->type != MSGPACK_OBJECT_STR ||
            !seat || seat->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
            die("bot %s: a game_ready without endpoint, token or seat", b->name);
        if (now >= measure_from && now < end_at) push_sample(&a_wait, &n_await, &cap_await, (double)(now - b->t_seek) / 1e9);
        char endpoint_s[200];
        memcpy(endpoint_s, ep->via.str.ptr, ep->via.str.size);
        endpoint_s[ep->via.str.size] = '\0';
        if (!loopback(endpoint_s)) die("bot %s: game_ready names a shard that is not on loopback: %s", b->name, endpoint_s);
        b->gen++;
        b->seat = (int)seat->via.u64;
        b->sent_at = -1;
        b->s_done = false;
        if (zmtp_connect(&b->s, endpoint_s, arena_epfd, ((uint64_t)b->gen << 32) | ((uint64_t)(b - bots) * 2 + 1)) != 0)
            die("bot %s (shard %s): %s", b->name, endpoint_s, b->s.err);
        b->s_open = true;
        b->state = B_PLAYING;
        msgpack_sbuffer_clear(&sbuf);
        msgpack_pack_map(&pk, 7);
        pack_str("type"), pack_str("hello");
        pack_str("id"), msgpack_pack_int(&pk, 1);
        pack_str("protocol"), msgpack_pack_int(&pk, 1);
        pack_str("minor"), msgpack_pack_int(&pk, 6);
        pack_str("role"), pack_str("player");
        pack_str("name"), pack_str(b->name);
        pack_str("token"), msgpack_pack_object(&pk, *tok);
        bot_send(b, true, sbuf.data, sbuf.size);
    } else if (str_eq(ty, "game_over") && b->state == B_OVER) {
        b->state = B_SEEKING;
        b->t_seek = now;
        arena_seek(b);
    } else if (str_eq(ty, "shutdown")) {
        char reason[64];
        field_text(m, "reason", reason, sizeof reason);
        die("bot %s: the arena shuts down (%s)", b->name, reason);
    }
    /* sought, a game_over while seeking, ok, heartbeat...: nothing to do */
}

static void on_shard_message(bot_t *b, const msgpack_object *m) {
    if (b->s_done) return; /* after game_end: the connection closes after this event */
    const msgpack_object *ty = map_get(m, "type");
    if (!ty) die("bot %s: a shard message without a type", b->name);
    int64_t now = now_ns();
    bool window = now >= measure_from && now < end_at;
    if (str_eq(ty, "prompt")) {
        const msgpack_object *table = map_get(m, "table"), *seq = map_get(m, "seq");
        const msgpack_object *a = minimal_choice(map_get(m, "legal"));
        if (!table || !seq || !a) die("bot %s: a prompt without table, seq or legal actions", b->name);
        msgpack_sbuffer_clear(&sbuf);
        msgpack_pack_map(&pk, 4);
        pack_str("type"), pack_str("act");
        pack_str("table"), msgpack_pack_object(&pk, *table);
        pack_str("seq"), msgpack_pack_object(&pk, *seq);
        pack_str("action"), msgpack_pack_object(&pk, *a);
        if (think_s > 0) {
            free(b->pending);
            b->pending = xmalloc(sbuf.size);
            memcpy(b->pending, sbuf.data, sbuf.size);
            b->pending_size = sbuf.size;
            heap_push(now + (int64_t)(think_s * 1e9), (int)(b - bots), T_ACT, b->gen);
        } else {
            bot_send(b, true, sbuf.data, sbuf.size);
            b->sent_at = now_ns();
        }
    } else if (str_eq(ty, "event")) {
        const msgpack_object *mv = map_get(m, "move"), *seat = mv ? map_get(mv, "seat") : NULL;
        if (b->sent_at >= 0 && seat && seat->type == MSGPACK_OBJECT_POSITIVE_INTEGER && (int)seat->via.u64 == b->seat) {
            if (window) push_sample(&a_lat, &n_alat, &cap_alat, (double)(now - b->sent_at) / 1e9);
            b->sent_at = -1;
        }
    } else if (str_eq(ty, "game_end")) {
        if (window && b->seat == 0) a_games++;
        b->s_done = true;
        free(b->pending);
        b->pending = NULL;
        /* Seek again at the arena's game_over (the front has filed the game; a seek before it
         * is refused busy), or after 10 s if that never comes. */
        b->state = B_OVER;
        heap_push(now + 10000000000LL, (int)(b - bots), T_OVER, b->gen);
    } else if (str_eq(ty, "error")) {
        char name[40];
        field_text(m, "name", name, sizeof name);
        if (strcmp(name, "stale_seq") != 0) count_error(b, "shard", m);
    } else if (str_eq(ty, "shutdown")) {
        char reason[64];
        field_text(m, "reason", reason, sizeof reason);
        die("bot %s: its shard shuts down (%s)", b->name, reason);
    }
}

static void on_arena_zmtp(uint64_t tag, const unsigned char *body, size_t size) {
    bot_t *b = &bots[(tag & 0xffffffffu) / 2];
    bool shard = tag & 1;
    if (shard && (uint32_t)(tag >> 32) != b->gen) return;
    msgpack_unpacked up;
    msgpack_unpacked_init(&up);
    size_t off = 0;
    if (msgpack_unpack_next(&up, (const char *)body, size, &off) != MSGPACK_UNPACK_SUCCESS ||
        up.data.type != MSGPACK_OBJECT_MAP)
        die("bot %s: a frame that is not a msgpack map (%zu bytes)", b->name, size);
    if (shard) on_shard_message(b, &up.data);
    else on_arena_message(b, &up.data);
    msgpack_unpacked_destroy(&up);
}

static void on_arena_event(const struct epoll_event *ev) {
    uint64_t tag = ev->data.u64;
    bot_t *b = &bots[(tag & 0xffffffffu) / 2];
    bool shard = tag & 1;
    if (shard && (!b->s_open || (uint32_t)(tag >> 32) != b->gen)) return; /* a closed game's connection */
    zmtp_conn_t *c = shard ? &b->s : &b->a;
    if (zmtp_on_event(c, ev->events, on_arena_zmtp) != 0 && !(shard && b->s_done))
        die("bot %s (%s): %s", b->name, shard ? "shard" : "arena", c->err);
    if (shard && b->s_done) { /* closed here, not in the callback: zmtp is still parsing its buffer there */
        zmtp_close(&b->s);
        b->s_open = false;
    }
}

static void read_bots(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) die("cannot open %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) || (st.st_mode & 077))
        die("%s: the bots' keys must be in a regular file of mode 0600 (no access for group or others)", path);
    int cap = 0;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        char name[64], key[160], extra;
        if (line[0] == '\n' || line[0] == '#') continue;
        if (sscanf(line, "%63s %159s %c", name, key, &extra) != 2) die("%s: a line is not `name key`", path);
        if (n_bots == 2 * MAX_TABLES) die("%s: more than %d bots", path, 2 * MAX_TABLES);
        if (n_bots == cap) {
            cap = cap ? cap * 2 : 256;
            bots = realloc(bots, (size_t)cap * sizeof *bots);
            if (!bots) die("out of memory");
        }
        bot_t *b = &bots[n_bots++];
        memset(b, 0, sizeof *b);
        snprintf(b->name, sizeof b->name, "%s", name);
        snprintf(b->key, sizeof b->key, "%s", key);
        b->sent_at = -1;
        b->a.fd = b->s.fd = -1;
    }
    fclose(f);
    if (n_bots == 0) die("%s: no bots", path);
}

static int run_arena(const char *path, double warmup, double seconds) {
    read_bots(path);
    srandom((unsigned)(getpid() ^ now_ns()));
    arena_epfd = epoll_create1(0);
    if (arena_epfd < 0) die("epoll_create1: %s", strerror(errno));
    for (int i = 0; i < n_bots; i++) {
        if (zmtp_connect(&bots[i].a, endpoint, arena_epfd, (uint64_t)i * 2) != 0)
            die("bot %s (arena %s): %s", bots[i].name, endpoint, bots[i].a.err);
        arena_hello(&bots[i]);
    }
    fputs("loaddriver: started\n", stderr);
    fflush(stderr);
    struct epoll_event evs[MAX_EVENTS];
    int64_t start = now_ns();
    measure_from = start + (int64_t)(warmup * 1e9);
    end_at = INT64_MAX; /* set when the window opens */
    int64_t signin_deadline = measure_from + (int64_t)SIGNIN_WAIT_S * 1000000000;
    int64_t next_beat_check = start + 1000000000;
    double cpu0 = 0;
    bool measuring = false;
    for (;;) {
        int64_t now = now_ns();
        if (now >= end_at) break;
        if (!measuring && now >= measure_from) {
            if (a_welcomed < n_bots && now < signin_deadline) {
                measure_from = now + 100000000; /* sign-ins still running: look again in 100 ms */
            } else {
                if (a_welcomed < n_bots)
                    fprintf(stderr, "loaddriver: only %d of %d bots signed in; measuring anyway\n", a_welcomed, n_bots);
                measuring = true;
                measure_from = now;
                end_at = now + (int64_t)(seconds * 1e9);
                cpu0 = cpu_seconds(RUSAGE_SELF);
                fputs("loaddriver: measuring\n", stderr);
                fflush(stderr);
            }
        }
        while (heap_len && heap[0].due <= now) {
            timer_t_ t = heap_pop();
            bot_t *b = &bots[t.bot];
            if (t.kind == T_HELLO && b->state == B_HELLO) {
                arena_hello(b);
            } else if (t.kind == T_SEEK && b->state == B_SEEKING) {
                arena_seek(b); /* a refused seek again; the wait still counts from the first */
            } else if (t.kind == T_OVER && b->state == B_OVER && t.gen == b->gen) {
                b->state = B_SEEKING; /* no game_over within 10 s: seek anyway */
                b->t_seek = now;
                arena_seek(b);
            } else if (t.kind == T_ACT && b->state == B_PLAYING && t.gen == b->gen && b->pending) {
                bot_send(b, true, b->pending, b->pending_size);
                b->sent_at = now_ns();
                free(b->pending);
                b->pending = NULL;
            }
        }
        if (now >= next_beat_check) { /* protocol 10: say something at least every heartbeat_ms */
            static const char beat[] = "\x81\xa4type\xa9heartbeat";
            next_beat_check = now + 1000000000;
            for (int i = 0; i < n_bots; i++) {
                bot_t *b = &bots[i];
                /* not before the welcome: a session's first message must be hello (hello_first) */
                if (b->state != B_HELLO && now - b->last_a > heartbeat_ns / 2) bot_send(b, false, beat, sizeof beat - 1);
                if (b->s_open && now - b->last_s > heartbeat_ns / 2) bot_send(b, true, beat, sizeof beat - 1);
            }
        }
        now = now_ns();
        int n = epoll_wait(arena_epfd, evs, MAX_EVENTS,
                           wait_ms(now, heap_len ? heap[0].due : INT64_MAX, measuring));
        if (n < 0) {
            if (errno == EINTR) continue;
            die("epoll_wait: %s", strerror(errno));
        }
        for (int k = 0; k < n; k++) on_arena_event(&evs[k]);
    }
    double cpu = measuring ? cpu_seconds(RUSAGE_SELF) - cpu0 : 0;
    /* bench/arena.py's driver line: games, seconds, latency and waits (seconds), errors. */
    printf("{\"games\": %ld, \"seconds\": %.6f, \"latency\": [", a_games, (double)(now_ns() - measure_from) / 1e9);
    for (size_t i = 0; i < n_alat; i++) printf(i ? ", %.6f" : "%.6f", a_lat[i]);
    fputs("], \"waits\": [", stdout);
    for (size_t i = 0; i < n_await; i++) printf(i ? ", %.6f" : "%.6f", a_wait[i]);
    fputs("], \"errors\": {", stdout);
    for (int i = 0; i < n_errs; i++) printf("%s\"%s\": %ld", i ? ", " : "", errs[i].name, errs[i].n);
    printf("}, \"driver_cpu_s\": %.4f, \"bots\": %d, \"driver\": \"c\"}\n", cpu, n_bots);
    fflush(stdout);
    for (int i = 0; i < n_bots; i++) {
        zmtp_close(&bots[i].a);
        if (bots[i].s_open) zmtp_close(&bots[i].s);
        free(bots[i].pending);
    }
    close(arena_epfd);
    free(bots);
    free(heap);
    free(a_lat);
    free(a_wait);
    return 0;
}

int main(int argc, char **argv) {
    const char *mode = "events", *transport = "zmtp", *arena_bots = NULL;
    double seconds = 15, warmup = 0.5, think_ms = 0;
    n_tables = 200;
    static const struct option opts[] = {
        {"endpoint", required_argument, 0, 'e'}, {"tables", required_argument, 0, 't'},
        {"seconds", required_argument, 0, 's'},  {"warmup", required_argument, 0, 'w'},
        {"mode", required_argument, 0, 'm'},     {"think-ms", required_argument, 0, 'k'},
        {"transport", required_argument, 0, 'T'}, {"arena-bots", required_argument, 0, 'A'},
        {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    for (int c; (c = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
        switch (c) {
        case 'e': endpoint = optarg; break;
        case 't': n_tables = (int)parse_num(optarg, "--tables", 1, MAX_TABLES); break;
        case 's': seconds = parse_num(optarg, "--seconds", 0.01, 3600); break;
        case 'w': warmup = parse_num(optarg, "--warmup", 0, 3600); break;
        case 'm': mode = optarg; break;
        case 'k': think_ms = parse_num(optarg, "--think-ms", 0, 60000); break;
        case 'T': transport = optarg; break;
        case 'A': arena_bots = optarg; break;
        default: usage();
        }
    }
    if (optind != argc || !endpoint) usage();
    bool lean = strcmp(mode, "lean") == 0, batched = strcmp(mode, "batched") == 0;
    if (!lean && !batched && strcmp(mode, "events") != 0) {
        fprintf(stderr, "loaddriver: --mode must be events, lean or batched, not %s\n", mode);
        return 2;
    }
    zmtp = strcmp(transport, "zmtp") == 0;
    if (!zmtp && strcmp(transport, "zmq") != 0) {
        fprintf(stderr, "loaddriver: --transport must be zmtp or zmq, not %s\n", transport);
        return 2;
    }
    if (!loopback(endpoint)) {
        fprintf(stderr, "loaddriver: loopback endpoints only (tcp://127.x, tcp://[::1], ipc://), not %s\n", endpoint);
        return 2;
    }
    think_s = think_ms / 1000;
    if (arena_bots) {
        if (!zmtp) {
            fprintf(stderr, "loaddriver: --arena-bots speaks --transport zmtp only\n");
            return 2;
        }
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
            rl.rlim_cur = rl.rlim_max;
            setrlimit(RLIMIT_NOFILE, &rl);
        }
        msgpack_sbuffer_init(&sbuf);
        msgpack_packer_init(&pk, &sbuf, msgpack_sbuffer_write);
        int rc = run_arena(arena_bots, warmup, seconds);
        msgpack_sbuffer_destroy(&sbuf);
        return rc;
    }

    /* 400 clients need ~800 descriptors (a TCP socket and a mailbox each) and more than
     * libzmq's default socket limit once --tables grows. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    tables = calloc((size_t)n_tables, sizeof *tables);
    fifo_cap = 2 * (size_t)n_tables + 8;
    fifo = calloc(fifo_cap, sizeof *fifo);
    if (!tables || !fifo) die("out of memory");
    msgpack_sbuffer_init(&sbuf);
    msgpack_packer_init(&pk, &sbuf, msgpack_sbuffer_write);
    for (int i = 0; i < n_tables; i++) {
        snprintf(tables[i].name, sizeof tables[i].name, "b%d", i);
        tables[i].sent_at = -1;
    }
    int ep = epoll_create1(0);
    if (ep < 0) die("epoll_create1: %s", strerror(errno));
    void *ctx = NULL; /* no libzmq context (and so no I/O thread) on the zmtp path */
    struct epoll_event evs[MAX_EVENTS];

    if (zmtp) {
        /* Connect everything, greeting + READY + hello queued on each; the welcomes and
         * the joins they release happen on the event loop. */
        for (int i = 0; i < n_tables; i++) {
            for (int j = 0; j < 2; j++) {
                zmtp_conn_t *c = &tables[i].zc[j];
                if (zmtp_connect(c, endpoint, ep, (uint64_t)i * 2 + (uint64_t)j) != 0)
                    die("table %s socket %d: %s", tables[i].name, j, c->err);
                send_hello(i, j, lean, batched);
            }
        }
        int64_t deadline = now_ns() + (int64_t)SETUP_TIMEOUT_MS * 1000000;
        while (tables_welcomed < n_tables) {
            int64_t left = deadline - now_ns();
            if (left <= 0) {
                int clients = 0;
                for (int i = 0; i < n_tables; i++) clients += tables[i].welcomed[0] + tables[i].welcomed[1];
                die("no welcome from %s for %d of %d clients within %d ms", endpoint, 2 * n_tables - clients,
                    2 * n_tables, SETUP_TIMEOUT_MS);
            }
            int n = epoll_wait(ep, evs, MAX_EVENTS, (int)((left + 999999) / 1000000));
            if (n < 0) {
                if (errno == EINTR) continue;
                die("epoll_wait: %s", strerror(errno));
            }
            for (int k = 0; k < n; k++) on_event(&evs[k]);
        }
    } else {
        ctx = zmq_ctx_new();
        if (!ctx) die("zmq_ctx_new failed: %s", zmq_strerror(errno));
        zmq_ctx_set(ctx, ZMQ_MAX_SOCKETS, 2 * n_tables + 16);
        int linger = 0, tmo = SETUP_TIMEOUT_MS;
        for (int i = 0; i < n_tables; i++) {
            for (int j = 0; j < 2; j++) {
                void *s = zmq_socket(ctx, ZMQ_DEALER);
                if (!s) die("cannot open socket %d: %s", 2 * i + j, zmq_strerror(errno));
                zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
                zmq_setsockopt(s, ZMQ_SNDTIMEO, &tmo, sizeof tmo);
                zmq_setsockopt(s, ZMQ_RCVTIMEO, &tmo, sizeof tmo);
                if (zmq_connect(s, endpoint) != 0) die("cannot connect to %s: %s", endpoint, zmq_strerror(errno));
                tables[i].sock[j] = s;
                send_hello(i, j, lean, batched);
            }
        }
        for (int i = 0; i < n_tables; i++) {
            for (int j = 0; j < 2; j++) {
                zmq_msg_t frame;
                zmq_msg_init(&frame);
                if (zmq_msg_recv(&frame, tables[i].sock[j], 0) < 0)
                    die("no welcome from %s for %s-%d within %d ms: %s", endpoint, tables[i].name, j,
                        SETUP_TIMEOUT_MS, zmq_strerror(errno));
                msgpack_unpacked up;
                msgpack_unpacked_init(&up);
                size_t off = 0;
                if (msgpack_unpack_next(&up, zmq_msg_data(&frame), zmq_msg_size(&frame), &off) !=
                    MSGPACK_UNPACK_SUCCESS)
                    die("%s-%d: the first answer is not msgpack", tables[i].name, j);
                take_welcome(i, j, &up.data);
                msgpack_unpacked_destroy(&up);
                zmq_msg_close(&frame);
            }
            send_joins(i);
        }
        for (int i = 0; i < n_tables; i++) {
            for (int j = 0; j < 2; j++) {
                int fd;
                size_t sz = sizeof fd;
                if (zmq_getsockopt(tables[i].sock[j], ZMQ_FD, &fd, &sz) != 0) die("ZMQ_FD: %s", zmq_strerror(errno));
                struct epoll_event ev = {.events = EPOLLIN, .data.u64 = (uint64_t)i * 2 + (uint64_t)j};
                if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0) die("epoll_ctl: %s", strerror(errno));
            }
        }
    }
    fputs("loaddriver: ready\n", stderr);
    fflush(stderr);

    double cpu0 = 0, main0 = 0;
    bool measuring = false;
    int64_t start = now_ns();
    measure_from = start + (int64_t)(warmup * 1e9);
    end_at = measure_from + (int64_t)(seconds * 1e9);
    int64_t next_beat_check = start + 1000000000;
    for (int i = 0; i < n_tables; i++) /* drain everything once at the start */
        for (int j = 0; j < 2; j++) drain(i, j);
    for (;;) {
        int64_t now = now_ns();
        if (now >= end_at) break;
        if (!measuring && now >= measure_from) {
            /* The measured window starts: CPU is counted from here, like the decisions
             * (the parent reads the referee's CPU on this line). */
            measuring = true;
            cpu0 = cpu_seconds(RUSAGE_SELF);
            main0 = cpu_seconds(RUSAGE_THREAD);
            fputs("loaddriver: measuring\n", stderr);
            fflush(stderr);
        }
        while (fifo_len && fifo[fifo_head].due <= now) {
            due_t d = fifo[fifo_head];
            fifo_head = (fifo_head + 1) % fifo_cap;
            fifo_len--;
            send_act(d.table, d.seat, d.data, d.size);
            free(d.data);
            drain(d.table, d.seat); /* a send may consume the descriptor's edge */
        }
        if (now >= next_beat_check) { /* protocol §10: say something at least every heartbeat_ms */
            next_beat_check = now + 1000000000;
            for (int i = 0; i < n_tables; i++)
                for (int j = 0; j < 2; j++)
                    if (now - tables[i].last_send[j] > heartbeat_ns / 2) {
                        static const char beat[] = "\x81\xa4type\xa9heartbeat";
                        send_buf(i, j, beat, sizeof beat - 1);
                        drain(i, j);
                    }
        }
        now = now_ns();
        int n = epoll_wait(ep, evs, MAX_EVENTS, wait_ms(now, fifo_len ? fifo[fifo_head].due : INT64_MAX, measuring));
        if (n < 0) {
            if (errno == EINTR) continue;
            die("epoll_wait: %s", strerror(errno));
        }
        for (int k = 0; k < n; k++) on_event(&evs[k]);
    }
    double cpu = measuring ? cpu_seconds(RUSAGE_SELF) - cpu0 : 0;
    double cpu_main = measuring ? cpu_seconds(RUSAGE_THREAD) - main0 : 0;

    long hands = 0, games = 0;
    for (int i = 0; i < n_tables; i++) {
        hands += tables[i].hands;
        games += tables[i].games;
    }
    printf("{\"decisions\": %zu, \"decisions_per_s\": %.3f, \"hands_per_s\": %.3f, \"games\": %ld, ", n_lat,
           (double)n_lat / seconds, (double)hands / seconds, games);
    if (n_lat) {
        qsort(lat, n_lat, sizeof *lat, cmp_i64);
        double sum = 0;
        for (size_t i = 0; i < n_lat; i++) sum += (double)lat[i];
        size_t i99 = (size_t)((double)n_lat * 0.99);
        if (i99 > n_lat - 1) i99 = n_lat - 1;
        double median = n_lat % 2 ? (double)lat[n_lat / 2] : ((double)lat[n_lat / 2 - 1] + (double)lat[n_lat / 2]) / 2;
        size_t i90 = (size_t)((double)n_lat * 0.90), i999 = (size_t)((double)n_lat * 0.999);
        if (i999 > n_lat - 1) i999 = n_lat - 1;
        printf("\"p50_ms\": %.4f, \"p99_ms\": %.4f, \"mean_us\": %.3f, \"median_us\": %.3f, ",
               (double)lat[n_lat / 2] / 1e6, (double)lat[i99] / 1e6, sum / (double)n_lat / 1e3, median / 1e3);
        printf("\"p90_ms\": %.4f, \"p999_ms\": %.4f, \"max_ms\": %.4f, ", (double)lat[i90] / 1e6,
               (double)lat[i999] / 1e6, (double)lat[n_lat - 1] / 1e6);
    } else {
        fputs("\"p50_ms\": null, \"p99_ms\": null, \"mean_us\": null, \"median_us\": null, "
              "\"p90_ms\": null, \"p999_ms\": null, \"max_ms\": null, ", stdout);
    }
    printf("\"driver_cpu_s\": %.4f, \"driver_main_thread_cpu_s\": %.4f, \"tables\": %d, \"mode\": \"%s\", "
           "\"think_ms\": %g, \"seconds\": %g, \"transport\": \"%s\"}\n",
           cpu, cpu_main, n_tables, mode, think_ms, seconds, zmtp ? "zmtp" : "zmq");
    fflush(stdout);

    for (size_t k = 0; k < fifo_len; k++) free(fifo[(fifo_head + k) % fifo_cap].data);
    for (int i = 0; i < n_tables; i++)
        for (int j = 0; j < 2; j++) {
            if (zmtp) zmtp_close(&tables[i].zc[j]);
            else zmq_close(tables[i].sock[j]);
        }
    if (ctx) zmq_ctx_term(ctx);
    close(ep);
    msgpack_sbuffer_destroy(&sbuf);
    free(tables);
    free(fifo);
    free(lat);
    return 0;
}
