/*
 * zmtp: just enough ZMTP 3.x (RFC 23, NULL mechanism) for a DEALER client on a
 * non-blocking TCP (or ipc) socket, driven from the caller's own epoll loop.
 *
 * Why: libzmq gives every context an I/O thread and every socket a mailbox; for the
 * 400 clients of bench/referee.py's figure (d) that machinery cost about 30% of a core
 * on top of the driver's own loop, taken from the referee's cores. Here the one driver
 * thread reads and writes the TCP sockets itself: no second thread, no mailbox signals.
 *
 * One connection: we send our whole greeting (signature, version 3.0, mechanism NULL,
 * as-server 0, filler) and our READY (Socket-Type DEALER, empty Identity) at once, as
 * soon as the TCP connect completes. Messages wait for the peer's READY, as libzmq's own
 * sockets do: libzmq 4.3 hands every frame that arrives before it has sent its own READY
 * to the handshake, so a message pipelined behind our READY makes it drop the connection
 * (seen against the referee). We read the peer's greeting (major >= 3, mechanism NULL) and its READY (a Socket-Type
 * a DEALER may talk to); after that every message frame is handed to the callback, a
 * PING is answered with a PONG, other commands are ignored, and an ERROR command ends
 * the connection with its reason. Each message is exactly one frame (the referee's
 * protocol): a MORE flag is refused. Anything else the peer sends that is not ZMTP is a
 * protocol violation, reported as a sentence in `err` (the caller then exits).
 *
 * Writes go straight to the socket while its send queue is empty; what would block is
 * kept in the connection's out buffer and flushed on EPOLLOUT (level-triggered: EPOLLOUT
 * is only asked for while the buffer holds something).
 */
#ifndef LOADDRIVER_ZMTP_H
#define LOADDRIVER_ZMTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum { ZMTP_CONNECTING, ZMTP_GREETING, ZMTP_READY, ZMTP_OPEN } zmtp_state_t;

typedef struct {
    int fd, epfd;
    uint64_t tag;  /* epoll data.u64 and the callback's first argument */
    zmtp_state_t state;
    bool connected; /* the TCP connect has completed (writes allowed) */
    bool want_out;  /* EPOLLOUT is registered */
    unsigned char *in;
    size_t in_len, in_cap;
    unsigned char *out;
    size_t out_off, out_len, out_cap;
    unsigned char *held; /* messages (framed) sent before the peer's READY */
    size_t held_len, held_cap;
    char err[256];
} zmtp_conn_t;

/* One message body, valid only during the call. */
typedef void (*zmtp_message_fn)(uint64_t tag, const unsigned char *body, size_t size);

/* Open a non-blocking connection to "tcp://HOST:PORT" (HOST numeric or localhost,
 * "[::1]" for IPv6) or "ipc://PATH", register it with epfd under `tag` and queue the
 * greeting and READY. 0, or -1 with a sentence in c->err. */
int zmtp_connect(zmtp_conn_t *c, const char *endpoint, int epfd, uint64_t tag);

/* Queue one message (one frame) and write what the socket takes now. 0 or -1 (c->err). */
int zmtp_send(zmtp_conn_t *c, const void *body, size_t size);

/* Handle what epoll reported for this connection: flush pending output, read and
 * parse everything available, calling `fn` for each message. 0 or -1 (c->err). */
int zmtp_on_event(zmtp_conn_t *c, uint32_t events, zmtp_message_fn fn);

void zmtp_close(zmtp_conn_t *c);

#endif
