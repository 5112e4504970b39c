/* zmtp: a ZMTP 3.x DEALER connection on a non-blocking socket (see zmtp.h for why). */
#include "zmtp.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#define F_MORE 0x01
#define F_LONG 0x02
#define F_COMMAND 0x04
#define GREETING_LEN 64
#define MAX_FRAME ((uint64_t)64 << 20) /* far above any referee message; a bound on garbage */
#define IN_START 16384

static int fail(zmtp_conn_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(zmtp_conn_t *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, sizeof c->err, fmt, ap);
    va_end(ap);
    return -1;
}

/* A name or reason from the wire, made printable for an error message. */
static const char *printable(const unsigned char *s, size_t n, char *buf, size_t cap) {
    size_t k = 0;
    for (size_t i = 0; i < n && k + 5 < cap; i++) {
        if (s[i] >= 0x20 && s[i] < 0x7f) buf[k++] = (char)s[i];
        else k += (size_t)snprintf(buf + k, cap - k, "\\x%02x", s[i]);
    }
    buf[k] = '\0';
    return buf;
}

static int set_out_interest(zmtp_conn_t *c, bool want) {
    if (want == c->want_out) return 0;
    struct epoll_event ev = {.events = EPOLLIN | (want ? EPOLLOUT : 0), .data.u64 = c->tag};
    if (epoll_ctl(c->epfd, EPOLL_CTL_MOD, c->fd, &ev) != 0) return fail(c, "epoll_ctl: %s", strerror(errno));
    c->want_out = want;
    return 0;
}

static int reserve(unsigned char **buf, size_t *cap, size_t need) {
    if (need <= *cap) return 0;
    size_t n = *cap ? *cap : 4096;
    while (n < need) n *= 2;
    unsigned char *p = realloc(*buf, n);
    if (!p) return -1;
    *buf = p;
    *cap = n;
    return 0;
}

static int grow_append(unsigned char **buf, size_t *len, size_t *cap, const void *data, size_t size) {
    if (reserve(buf, cap, *len + size) != 0) return -1;
    if (size) memcpy(*buf + *len, data, size);
    *len += size;
    return 0;
}

/* Append bytes to the out buffer (they go out on the next flush). */
static int append(zmtp_conn_t *c, const void *data, size_t size) {
    if (c->out_off && c->out_len + size > c->out_cap) { /* reuse the space already written */
        memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
        c->out_len -= c->out_off;
        c->out_off = 0;
    }
    if (grow_append(&c->out, &c->out_len, &c->out_cap, data, size) != 0) return fail(c, "out of memory");
    return 0;
}

/* Write what the socket takes; ask for EPOLLOUT while something is left. */
static int flush(zmtp_conn_t *c) {
    while (c->out_off < c->out_len) {
        ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) break;
            return fail(c, "send failed: %s", strerror(errno));
        }
        c->out_off += (size_t)n;
    }
    if (c->out_off == c->out_len) c->out_off = c->out_len = 0;
    return set_out_interest(c, c->out_len > 0);
}

/* One frame (flags, size, then the body in up to two parts): written at once when
 * nothing is queued before it, else (and for whatever the socket does not take) queued.
 * A message before the peer's READY is held back until it comes (see zmtp.h). */
static int send_frame(zmtp_conn_t *c, unsigned flags, const void *a, size_t na, const void *b, size_t nb) {
    unsigned char head[9];
    size_t nh, size = na + nb;
    if (size > 255) {
        head[0] = (unsigned char)(flags | F_LONG);
        for (int i = 0; i < 8; i++) head[1 + i] = (unsigned char)((uint64_t)size >> (56 - 8 * i));
        nh = 9;
    } else {
        head[0] = (unsigned char)flags;
        head[1] = (unsigned char)size;
        nh = 2;
    }
    struct iovec iov[3] = {{head, nh}, {(void *)a, na}, {(void *)b, nb}};
    if (!(flags & F_COMMAND) && c->state != ZMTP_OPEN) {
        for (int i = 0; i < 3; i++)
            if (grow_append(&c->held, &c->held_len, &c->held_cap, iov[i].iov_base, iov[i].iov_len) != 0)
                return fail(c, "out of memory");
        return 0;
    }
    size_t total = nh + size, done = 0;
    if (c->connected && c->out_off == c->out_len) {
        struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 3};
        for (;;) {
            ssize_t n = sendmsg(c->fd, &mh, MSG_NOSIGNAL);
            if (n < 0) {
                if (errno == EINTR) continue;
                if (errno == EAGAIN || errno == EWOULDBLOCK) break;
                return fail(c, "send failed: %s", strerror(errno));
            }
            done = (size_t)n;
            break;
        }
        if (done == total) return 0;
    }
    for (int i = 0; i < 3; i++) { /* queue the part not written */
        if (done >= iov[i].iov_len) {
            done -= iov[i].iov_len;
            continue;
        }
        if (append(c, (const unsigned char *)iov[i].iov_base + done, iov[i].iov_len - done) != 0) return -1;
        done = 0;
    }
    return c->connected ? set_out_interest(c, true) : 0;
}

int zmtp_send(zmtp_conn_t *c, const void *body, size_t size) { return send_frame(c, 0, body, size, NULL, 0); }

static int open_socket(zmtp_conn_t *c, const char *endpoint, struct sockaddr_storage *sa, socklen_t *len) {
    memset(sa, 0, sizeof *sa);
    if (strncmp(endpoint, "ipc://", 6) == 0) {
        struct sockaddr_un *un = (struct sockaddr_un *)sa;
        const char *path = endpoint + 6;
        size_t n = strlen(path);
        if (n == 0 || n >= sizeof un->sun_path) return fail(c, "bad ipc path in %s", endpoint);
        un->sun_family = AF_UNIX;
        memcpy(un->sun_path, path, n);
        if (path[0] == '@') un->sun_path[0] = '\0'; /* libzmq's abstract namespace */
        *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (path[0] == '@' ? 0 : 1));
        return socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    }
    if (strncmp(endpoint, "tcp://", 6) != 0) return fail(c, "not a tcp:// or ipc:// endpoint: %s", endpoint);
    const char *hp = endpoint + 6, *colon = strrchr(hp, ':');
    if (!colon || colon == hp || !colon[1]) return fail(c, "no host:port in %s", endpoint);
    char host[256];
    size_t hn = (size_t)(colon - hp);
    bool v6 = hp[0] == '[';
    if (v6) {
        if (hn < 3 || hp[hn - 1] != ']') return fail(c, "bad IPv6 host in %s", endpoint);
        hp++;
        hn -= 2;
    }
    if (hn >= sizeof host) return fail(c, "host too long in %s", endpoint);
    memcpy(host, hp, hn);
    host[hn] = '\0';
    /* libzmq resolves a name to IPv4 unless ZMQ_IPV6 is set; so do we ("localhost"). */
    struct addrinfo hints = {.ai_family = v6 ? AF_INET6 : AF_INET, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICSERV};
    struct addrinfo *res = NULL;
    int rc = getaddrinfo(host, colon + 1, &hints, &res);
    if (rc != 0 || !res) return fail(c, "cannot resolve %s: %s", endpoint, gai_strerror(rc));
    memcpy(sa, res->ai_addr, res->ai_addrlen);
    *len = res->ai_addrlen;
    int family = res->ai_family;
    freeaddrinfo(res);
    int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd >= 0) { /* as libzmq does: a small message must not wait for the last one's ACK */
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    return fd;
}

int zmtp_connect(zmtp_conn_t *c, const char *endpoint, int epfd, uint64_t tag) {
    memset(c, 0, sizeof *c);
    c->fd = -1;
    c->epfd = epfd;
    c->tag = tag;
    c->state = ZMTP_CONNECTING;
    struct sockaddr_storage sa;
    socklen_t len = 0;
    c->err[0] = '\0';
    int fd = open_socket(c, endpoint, &sa, &len);
    if (fd < 0) return c->err[0] ? -1 : fail(c, "socket: %s", strerror(errno));
    c->fd = fd;
    if (connect(fd, (struct sockaddr *)&sa, len) == 0) c->connected = true;
    else if (errno != EINPROGRESS) return fail(c, "cannot connect to %s: %s", endpoint, strerror(errno));
    if (reserve(&c->in, &c->in_cap, IN_START) != 0) return fail(c, "out of memory");
    /* Registered before anything is queued (queueing may change the registration). Until
     * the connect completes, EPOLLOUT tells us when it did; after, that we may write. */
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.u64 = tag};
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) != 0) return fail(c, "epoll_ctl: %s", strerror(errno));
    c->want_out = true;

    unsigned char g[GREETING_LEN] = {0xFF, 0, 0, 0, 0, 0, 0, 0, 0, 0x7F, 3, 0, 'N', 'U', 'L', 'L'};
    /* g[32] as-server = 0, g[33..63] filler = 0 */
    static const unsigned char ready[] = "\x05READY"
                                         "\x0bSocket-Type\x00\x00\x00\x06"
                                         "DEALER"
                                         "\x08Identity\x00\x00\x00\x00";
    if (append(c, g, sizeof g) != 0) return -1;
    c->state = ZMTP_GREETING;
    if (send_frame(c, F_COMMAND, ready, sizeof ready - 1, NULL, 0) != 0) return -1;
    return c->connected ? flush(c) : 0;
}

static bool name_is(const unsigned char *name, size_t n, const char *s) {
    return n == strlen(s) && memcmp(name, s, n) == 0;
}

/* The peer's READY: its properties must name a socket type a DEALER may talk to (the
 * same check libzmq makes: ROUTER, DEALER or REP). */
static int on_ready(zmtp_conn_t *c, const unsigned char *p, size_t n) {
    const unsigned char *type = NULL;
    uint32_t type_len = 0;
    char buf[160];
    for (size_t off = 0; off < n;) {
        size_t nl = p[off++];
        if (off + nl + 4 > n) return fail(c, "ZMTP violation: a READY property runs past its command");
        const unsigned char *name = p + off;
        off += nl;
        uint32_t vl = (uint32_t)p[off] << 24 | (uint32_t)p[off + 1] << 16 | (uint32_t)p[off + 2] << 8 | p[off + 3];
        off += 4;
        if (vl > n - off) return fail(c, "ZMTP violation: a READY property value runs past its command");
        if (nl == 11 && strncasecmp((const char *)name, "Socket-Type", 11) == 0) {
            type = p + off;
            type_len = vl;
        }
        off += vl;
    }
    if (!type) return fail(c, "ZMTP violation: the peer's READY names no Socket-Type");
    if (!name_is(type, type_len, "ROUTER") && !name_is(type, type_len, "DEALER") && !name_is(type, type_len, "REP"))
        return fail(c, "the peer is a %s socket: a DEALER talks to ROUTER, DEALER or REP",
                    printable(type, type_len, buf, sizeof buf));
    c->state = ZMTP_OPEN;
    if (c->held_len) { /* the messages sent so far go out now, in order */
        if (append(c, c->held, c->held_len) != 0) return -1;
        free(c->held);
        c->held = NULL;
        c->held_len = c->held_cap = 0;
        return flush(c);
    }
    return 0;
}

static int on_command(zmtp_conn_t *c, const unsigned char *body, size_t size) {
    char buf[160];
    if (size < 1 || (size_t)body[0] + 1 > size) return fail(c, "ZMTP violation: a command whose name runs past its frame");
    size_t nl = body[0];
    const unsigned char *name = body + 1, *data = body + 1 + nl;
    size_t dl = size - 1 - nl;
    if (name_is(name, nl, "ERROR")) {
        size_t rl = dl ? data[0] : 0;
        if (rl + 1 > dl) rl = dl ? dl - 1 : 0;
        return fail(c, "the peer sent ZMTP ERROR: %s", printable(data + 1, rl, buf, sizeof buf));
    }
    if (c->state == ZMTP_READY) {
        if (!name_is(name, nl, "READY"))
            return fail(c, "ZMTP violation: expected READY, got the command %s", printable(name, nl, buf, sizeof buf));
        return on_ready(c, data, dl);
    }
    if (name_is(name, nl, "READY")) return fail(c, "ZMTP violation: a second READY");
    if (name_is(name, nl, "PING")) { /* TTL (2 bytes), then a context of up to 16 bytes, echoed */
        if (dl < 2 || dl > 2 + 16) return fail(c, "ZMTP violation: a PING of %zu bytes after its name", dl);
        static const unsigned char pong[] = "\x04PONG";
        return send_frame(c, F_COMMAND, pong, sizeof pong - 1, data + 2, dl - 2);
    }
    return 0; /* other commands (ZMTP 3.1 SUBSCRIBE, CANCEL, PONG...): nothing for a DEALER */
}

/* Everything complete in the in buffer: the greeting, then frames. */
static int parse(zmtp_conn_t *c, zmtp_message_fn fn) {
    size_t pos = 0, need = 0;
    char buf[160];
    while (pos < c->in_len) {
        const unsigned char *p = c->in + pos;
        size_t avail = c->in_len - pos;
        if (c->state == ZMTP_GREETING) {
            if (p[0] != 0xFF || (avail >= 10 && !(p[9] & 0x01)))
                return fail(c, "ZMTP violation: not a ZMTP 3 greeting: %s", printable(p, avail < 16 ? avail : 16, buf, sizeof buf));
            if (avail >= 11 && p[10] < 3)
                return fail(c, "the peer speaks ZMTP revision %u (2.0 or older): this client speaks 3.x only", p[10]);
            if (avail < GREETING_LEN) {
                need = GREETING_LEN;
                break;
            }
            static const unsigned char null_mech[20] = "NULL";
            if (memcmp(p + 12, null_mech, 20) != 0)
                return fail(c, "the peer wants the ZMTP mechanism %s: this client speaks NULL only",
                            printable(p + 12, strnlen((const char *)p + 12, 20), buf, sizeof buf));
            pos += GREETING_LEN;
            c->state = ZMTP_READY;
            continue;
        }
        unsigned flags = p[0];
        if (flags & ~(unsigned)(F_MORE | F_LONG | F_COMMAND))
            return fail(c, "ZMTP violation: frame flags 0x%02x (reserved bits set)", flags);
        size_t head = flags & F_LONG ? 9 : 2;
        if (avail < head) {
            need = head;
            break;
        }
        uint64_t size = p[1];
        if (flags & F_LONG) {
            size = 0;
            for (int i = 1; i < 9; i++) size = size << 8 | p[i];
            if (size > MAX_FRAME)
                return fail(c, "ZMTP violation: a frame of %llu bytes (this client takes up to %llu)",
                            (unsigned long long)size, (unsigned long long)MAX_FRAME);
        }
        if (avail - head < size) {
            need = head + (size_t)size;
            break;
        }
        const unsigned char *body = p + head;
        pos += head + (size_t)size;
        if (flags & F_COMMAND) {
            if (flags & F_MORE) return fail(c, "ZMTP violation: a command frame with the MORE flag");
            if (on_command(c, body, (size_t)size) != 0) return -1;
        } else {
            if (c->state != ZMTP_OPEN) return fail(c, "ZMTP violation: a message frame before the peer's READY");
            if (flags & F_MORE)
                return fail(c, "a multipart message (MORE flag): the referee sends each message as one frame");
            fn(c->tag, body, (size_t)size);
        }
    }
    if (pos) {
        memmove(c->in, c->in + pos, c->in_len - pos);
        c->in_len -= pos;
    }
    if (reserve(&c->in, &c->in_cap, need) != 0) return fail(c, "out of memory");
    return 0;
}

int zmtp_on_event(zmtp_conn_t *c, uint32_t events, zmtp_message_fn fn) {
    if (!c->connected) {
        if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) return 0;
        int e = 0;
        socklen_t el = sizeof e;
        if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &e, &el) != 0) e = errno;
        if (e) return fail(c, "cannot connect: %s", strerror(e));
        c->connected = true;
        if (flush(c) != 0) return -1;
    } else if (events & EPOLLOUT) {
        if (flush(c) != 0) return -1;
    }
    if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR))) return 0;
    for (;;) {
        if (c->in_len == c->in_cap && reserve(&c->in, &c->in_cap, c->in_cap * 2) != 0) return fail(c, "out of memory");
        size_t room = c->in_cap - c->in_len;
        ssize_t n = recv(c->fd, c->in + c->in_len, room, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
            return fail(c, "receive failed: %s", strerror(errno));
        }
        if (n == 0) return fail(c, "the peer closed the connection");
        c->in_len += (size_t)n;
        if (parse(c, fn) != 0) return -1;
        if ((size_t)n < room) return 0; /* read all there was */
    }
}

void zmtp_close(zmtp_conn_t *c) {
    if (c->fd >= 0) close(c->fd);
    c->fd = -1;
    free(c->in);
    free(c->out);
    free(c->held);
    c->in = c->out = c->held = NULL;
    c->held_len = c->held_cap = 0;
    c->in_len = c->in_cap = c->out_off = c->out_len = c->out_cap = 0;
}
